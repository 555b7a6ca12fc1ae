import { test } from 'node:test';
import assert from 'node:assert/strict';
import { staleCachePassed, staleFreezes, staleOverwriteText } from '../../../src/core/checks/runChecks.ts';
import type { WriteRecord } from '../../../src/core/k8s/dynamicClient.ts';

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

test('staleOverwriteText: a write without a resourceVersion precondition is told to send one; one that carried the latest resourceVersion (read fresh) is told the stale values came from memory or another cached object', () => {
  const cm = (rv: string, edits: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', name: 'margherita-order', resourceVersion: rv }, data: { edits } });
  const base: WriteRecord = {
    verb: 'update', gvr: { group: '', version: 'v1', resource: 'configmaps' }, namespace: 'ns', name: 'margherita-order', key: 'ns/margherita-order', dryRun: false,
    before: cm('14', '1'), after: cm('15', '0'), resourceVersionBefore: '14', resourceVersionAfter: '15', outcome: 'ok', startedAt: 0, durationMs: 0,
  };
  const unguarded = staleOverwriteText(base, ['data.edits'], 'frozen where the controller had settled');
  assert.match(unguarded.title, /^update configmaps ns\/margherita-order overwrote newer state with stale values from a view frozen where the controller had settled \(data\.edits\)$/);
  assert.match(unguarded.explanation, /without a resourceVersion precondition: data\.edits went back/);
  const fresh = staleOverwriteText({ ...base, sentResourceVersion: '14' }, ['data.edits'], 'frozen where the controller had settled');
  assert.equal(fresh.title, unguarded.title);
  assert.doesNotMatch(fresh.explanation, /without a resourceVersion precondition|Send the resourceVersion/);
  assert.match(fresh.explanation, /with the latest resourceVersion \(14\) as its precondition[^]*data\.edits went back[^]*state kept in memory between reconciles[^]*a new controller[^]*starts without; or another object read from the stale cache/);
  const stalePrecondition = staleOverwriteText({ ...base, sentResourceVersion: '9' }, ['data.edits'], 'v');
  assert.match(stalePrecondition.explanation, /without a resourceVersion precondition/, 'a precondition other than the latest is no proof of a fresh read');
});
