import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createdChildKinds, desiredField, staleCachePassed, staleFreezes, staleNotBackText, staleOverwriteText, transitionAdvice } from '../../../src/core/checks/runChecks.ts';
import type { WriteRecord } from '../../../src/core/k8s/dynamicClient.ts';
import { freezes } from '../../../src/core/checks/harness.ts';

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
  assert.equal(one, '0 write(s) from one stale view after spec.crate, spec.fruit changed as the schema allows, none destroyed or overwrote newer state or left an extra object, and each settled back where it was; one change behind: 0 write(s) from the stale view, converged');
  assert.match(staleCachePassed({ ...base, views: 2 }), /^0 write\(s\) from two stale views after/);
  const meta = staleCachePassed({ ...base, views: 2, changed: '2 change(s)', metadataOnly: 'the given transitions change metadata only' });
  assert.match(meta, /; only metadata changed \(the given transitions change metadata only\), so no decision your reconciler makes from spec was taken from a stale view: give a spec change with --transition '\{"spec":…\}'/);
  assert.doesNotMatch(one, /only metadata/);
});

test('a ConfigMap or Secret controller is told to give a data change (they have no spec), once; other kinds a spec change', () => {
  const base = { staleWrites: 1, views: 2, changed: '2 change(s)', also: '', behind: 'one change behind: 0 write(s) from the stale view, converged', metadataOnly: 'configmaps is a built-in resource' };
  const cm = staleCachePassed({ ...base, primary: { group: '', resource: 'configmaps' } });
  assert.match(cm, /; only metadata changed \(configmaps is a built-in resource\), so no decision your reconciler makes from data was taken from a stale view: give a data change with --transition '\{"data":\{"key":"new value"\}\}' \(a module: checkTransitions\)$/);
  assert.equal(cm.match(/--transition/g)?.length, 1, 'the advice is given once');
  assert.doesNotMatch(cm, /"spec"/);
  assert.equal(transitionAdvice({ group: '', resource: 'secrets' }), `--transition '{"stringData":{"key":"new value"}}' (a module: checkTransitions)`);
  assert.equal(transitionAdvice({ group: 'apps', resource: 'deployments' }), `--transition '{"spec":…}' (a module: checkTransitions)`);
  assert.equal(desiredField({ group: '', resource: 'services' }), 'spec');
  assert.equal(desiredField({ group: 'example.org', resource: 'configmaps' }), 'spec', 'a custom kind that is also called configmaps has a spec');
});

const TENANTS = { group: 'infra.example.dev', version: 'v1alpha1', resource: 'tenants' };
const RQ = { group: '', version: 'v1', resource: 'resourcequotas' };
const SA = { group: '', version: 'v1', resource: 'serviceaccounts' };
const DEPLOY = { group: 'apps', version: 'v1', resource: 'deployments' };

test('staleFreezes: one more view per child kind, only that kind frozen before the controller created it', () => {
  const v = staleFreezes('120', '100', change, [RQ, DEPLOY]);
  assert.deepEqual(v.map((x) => [x.rv, x.only?.resource]), [['120', undefined], ['100', undefined], ['100', 'resourcequotas'], ['100', 'deployments']]);
  assert.equal(new Set(v.map((x) => x.view)).size, 4);
  assert.match(v[3]!.view, /only deployments\.apps lagged/);
  assert.match(v[2]!.desc, /cache of resourcequotas alone was frozen at resourceVersion 100[^]*the rest of its cache \(the copy, its other children\) was current/);
  // The same view for a controller that wrote nothing at all: no created resourceVersion, no child views.
  assert.deepEqual(staleFreezes('120', '', change, [RQ]).map((x) => x.only), [undefined]);
  // At most three child kinds.
  assert.equal(staleFreezes('120', '100', change, [RQ, SA, DEPLOY, { ...DEPLOY, resource: 'statefulsets' }]).filter((x) => x.only).length, 3);
});

test('createdChildKinds: the kinds of persisted creates in the scratch namespace, first creation first, not the primary, once each', () => {
  const w = (gvr: typeof RQ, over: Partial<WriteRecord> = {}): WriteRecord => ({ verb: 'create', gvr, namespace: 'rl-check-1', name: 'x', key: 'rl-check-1/x', dryRun: false, outcome: 'ok', startedAt: 0, durationMs: 1, ...over });
  const writes = [
    w(TENANTS, { verb: 'update' }), w(SA), w(RQ), w(SA), w(TENANTS), w(DEPLOY, { outcome: 'error' }), w(DEPLOY, { dryRun: true }), w(DEPLOY, { namespace: 'elsewhere' }), w(DEPLOY, { verb: 'patch' }),
  ];
  assert.deepEqual(createdChildKinds(writes, 'rl-check-1', TENANTS).map((g) => g.resource), ['serviceaccounts', 'resourcequotas']);
  // A server-side apply that made its object (nothing before it) is a create; one to an object that was there is not.
  const SVC = { ...SA, resource: 'services' };
  const applies = [w(DEPLOY, { verb: 'apply', resourceVersionBefore: '7' }), w(SVC, { verb: 'apply' }), w(SA)];
  assert.deepEqual(createdChildKinds(applies, 'rl-check-1', TENANTS).map((g) => g.resource), ['services', 'serviceaccounts']);
});

test('staleNotBackText: names the stale view, the lagging kind, the difference, the writes; an AlreadyExists is explained as the cache lagging', () => {
  const t = staleNotBackText({
    view: 'in which only resourcequotas lagged (frozen before the controller created them)', only: 'resourcequotas',
    diffs: ['tenants.infra.example.dev/acme: status.conditions[0].reason: "Provisioned" in the reference, "QuotaTaken" after the perturbation'],
    writes: ['patch tenants.infra.example.dev ns/acme (status)'], failed: ['create resourcequotas ns/tenant-acme: resourcequotas "tenant-acme" already exists'],
  });
  assert.equal(t.title, 'Did not come back to the settled state after a reconcile from a stale view in which only resourcequotas lagged (frozen before the controller created them): tenants.infra.example.dev/acme: status.conditions[0].reason: "Provisioned" in the reference, "QuotaTaken" after the perturbation');
  assert.match(t.explanation, /^The controller reconciled the copy once while its cache held every object but the resourcequotas it had created[^]*From the stale view it sent patch tenants\.infra\.example\.dev ns\/acme \(status\)\. Failed: create resourcequotas ns\/tenant-acme: [^]*an AlreadyExists answer to its create means exactly that, not that someone else owns the name/);
  const whole = staleNotBackText({ view: "frozen before the controller's own writes", diffs: ['x'], writes: [], failed: [] });
  assert.match(whole.explanation, /^The controller reconciled the copy once from a cache that lagged behind the server \(frozen before the controller's own writes\)/);
  assert.doesNotMatch(whole.explanation, /AlreadyExists|Failed:|From the stale view|nothing queued the key/);
  // No reconcile after the catch-up: an event filter kept what the stale reconcile did.
  assert.match(staleNotBackText({ view: 'frozen where the controller had settled', reconcilesAfter: 0, diffs: ['x'], writes: [], failed: [] }).explanation, /nothing queued the key again[^]*GenerationChangedPredicate in Go, or the generation-changed predicate of a module, exec program or the lab reconciler/);
});

test('freezes: without freezeOnly every informer of a frozen run, with it only those resources; nothing without a freeze', () => {
  assert.equal(freezes({}, RQ), false);
  assert.equal(freezes({ freezeAt: '100' }, TENANTS), true);
  assert.equal(freezes({ freezeAt: '100', freezeOnly: [RQ] }, RQ), true);
  assert.equal(freezes({ freezeAt: '100', freezeOnly: [RQ] }, TENANTS), false);
  assert.equal(freezes({ freezeAt: '100', freezeOnly: [RQ] }, { ...RQ, group: 'other.dev' }), false);
  assert.equal(freezes({ freezeOnly: [RQ] }, RQ), false);
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
