import { test } from 'node:test';
import assert from 'node:assert/strict';
import { staleCachePassed, staleFreezes } from '../../../src/core/checks/runChecks.ts';

const change = [{ spec: { crate: true } }];

test('staleFreezes: two views at different resourceVersions, named apart for titles', () => {
  const v = staleFreezes('120', '100', change);
  assert.deepEqual(v.map((x) => x.rv), ['120', '100']);
  assert.equal(new Set(v.map((x) => x.view)).size, 2);
  assert.match(v[0]!.desc, /\{"spec":\{"crate":true\}\}[^]*frozen at 120/);
  assert.match(v[1]!.view, /before the controller's own writes/);
});

test('staleFreezes: both frozen at the same resourceVersion (the controller wrote nothing) is one view, reconciled from once', () => {
  const v = staleFreezes('100', '100', change);
  assert.equal(v.length, 1);
  assert.equal(v[0]!.rv, '100');
  assert.deepEqual(staleFreezes('', '100', change).map((x) => x.rv), ['100']);
});

test('staleCachePassed: says how many views and what changed; a metadata-only run says so and how to give a spec change', () => {
  const base = { staleWrites: 0, changed: 'spec.crate, spec.fruit changed as the schema allows', also: '', behind: 'one change behind: 0 write(s) from the stale view, converged' };
  const one = staleCachePassed({ ...base, views: 1 });
  assert.equal(one, '0 write(s) from one stale view after spec.crate, spec.fruit changed as the schema allows, none destroyed or overwrote newer state or left an extra object; one change behind: 0 write(s) from the stale view, converged');
  assert.match(staleCachePassed({ ...base, views: 2 }), /^0 write\(s\) from two stale views after/);
  const meta = staleCachePassed({ ...base, views: 2, changed: '2 change(s)', metadataOnly: 'the given transitions change metadata only' });
  assert.match(meta, /; only metadata changed \(the given transitions change metadata only\), so no decision your reconciler makes from spec was taken from a stale view: give a spec change with --transition '\{"spec":…\}'/);
  assert.doesNotMatch(one, /only metadata/);
});
