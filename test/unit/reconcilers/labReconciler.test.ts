import { test } from 'node:test';
import assert from 'node:assert/strict';
import { childDrift, childNameOf, createLabReconciler, desiredChildOf, isControlledBy, isLabWidgetResource, LAB_FINALIZER, labResourceProblem, managedViewOf, removeFinalizerOps } from '../../../src/core/reconcilers/labReconciler.ts';
import { ApiError, type JsonPatchOp, type KubeClient } from '../../../src/core/k8s/client.ts';
import { isTerminal } from '../../../src/core/controller/reconcile.ts';
import type { ReconcileContext } from '../../../src/core/controller/reconcile.ts';
import { setCondition, rfc3339 } from '../../../src/core/reconcilers/conditions.ts';
import { jsonEqual } from '../../../src/core/reconcilers/jsonEqual.ts';
import { testContext, widget } from './helpers.ts';

test('desired child: name, labels, controller ownerReference and data from spec', () => {
  const w = widget('w1', { spec: { data: { a: '1', b: '2' } } });
  const d = desiredChildOf(w);
  assert.equal(d.metadata.name, childNameOf('w1'));
  assert.equal(d.metadata.name, 'w1-config');
  assert.equal(d.metadata.namespace, 'ns1');
  assert.deepEqual(d.data, { a: '1', b: '2' });
  assert.deepEqual(d.metadata.ownerReferences, [{ apiVersion: 'lab.reconcile.dev/v1alpha1', kind: 'Widget', name: 'w1', uid: 'uid-w1', controller: true, blockOwnerDeletion: true }]);
  assert.deepEqual(desiredChildOf(widget('w2', { spec: {} })).data, {}, 'no data → empty ConfigMap');
  assert.ok(isControlledBy(d, w));
});

test('drift detection compares only the managed fields', () => {
  const w = widget('w1');
  const desired = desiredChildOf(w);
  const observed = {
    ...structuredClone(desired),
    metadata: { ...structuredClone(desired.metadata), resourceVersion: '77', uid: 'cm-uid', labels: { ...desired.metadata.labels, extra: 'kept' }, annotations: { note: 'x' } },
  };
  assert.deepEqual(childDrift(observed, desired), [], 'extra labels/annotations and server fields are not drift');
  assert.deepEqual(managedViewOf(observed, desired).metadata.labels, desired.metadata.labels);
  assert.deepEqual(childDrift({ ...observed, data: { a: '2' } }, desired), ['data']);
  assert.deepEqual(childDrift({ ...observed, data: undefined }, { ...desired, data: {} }), [], 'absent data equals empty data');
  assert.deepEqual(childDrift({ ...observed, metadata: { ...observed.metadata, labels: {} } }, desired), ['labels']);
  assert.deepEqual(childDrift({ ...observed, metadata: { ...observed.metadata, ownerReferences: [] } }, desired), ['ownerReference']);
});

test('setCondition keeps lastTransitionTime unless the status flips, and never mutates', () => {
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  const a = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'DependencyMissing' }, t0);
  assert.deepEqual(a, [{ type: 'Ready', status: 'False', reason: 'DependencyMissing', lastTransitionTime: '2026-01-01T00:00:00Z' }]);
  const b = setCondition(a, { type: 'Ready', status: 'False', reason: 'StillMissing', message: 'm' }, t0 + 60_000);
  assert.equal(b[0]!.lastTransitionTime, '2026-01-01T00:00:00Z');
  assert.equal(b[0]!.reason, 'StillMissing');
  const c = setCondition([{ type: 'Other', status: 'True' }, ...b], { type: 'Ready', status: 'True', reason: 'Reconciled' }, t0 + 120_000);
  assert.deepEqual(c.map((x) => x.type), ['Other', 'Ready'], 'order kept');
  assert.equal(c[1]!.lastTransitionTime, '2026-01-01T00:02:00Z');
  assert.equal(a[0]!.reason, 'DependencyMissing', 'input untouched');
  assert.equal(rfc3339(t0 + 1234), '2026-01-01T00:00:01Z');
});

test('jsonEqual ignores key order and undefined properties, not array order', () => {
  assert.ok(jsonEqual({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }));
  assert.ok(jsonEqual({ a: 1, b: undefined }, { a: 1 }));
  assert.ok(!jsonEqual([1, 2], [2, 1]));
  assert.ok(!jsonEqual({ a: 1 }, { a: '1' }));
  assert.ok(!jsonEqual(null, {}));
  assert.ok(!jsonEqual([], {}));
  assert.ok(jsonEqual(undefined, undefined));
});

test('the lab reconciler reconciles only its Widget resource (lab.reconcile.dev and its subgroups)', async () => {
  assert.ok(isLabWidgetResource({ group: 'lab.reconcile.dev', resource: 'widgets' }));
  assert.ok(isLabWidgetResource({ group: 'ext-1234.lab.reconcile.dev', resource: 'widgets' }));
  for (const r of [{ group: '', resource: 'configmaps' }, { group: 'apps', resource: 'deployments' }, { group: 'evil-lab.reconcile.dev', resource: 'widgets' }, { group: 'lab.reconcile.dev.evil.com', resource: 'widgets' }, { group: 'lab.reconcile.dev', resource: 'gadgets' }]) {
    assert.equal(isLabWidgetResource(r), false, JSON.stringify(r));
    assert.match(labResourceProblem(r) ?? '', /only reconciles its own Widget resource/);
  }
  // Called on another resource anyway, it refuses before any read or write.
  const calls: string[] = [];
  const client = new Proxy({}, { get: (_t, verb) => (...args: unknown[]) => { calls.push(String(verb)); void args; throw new Error('no call expected'); } });
  const ctx = { primary: { group: '', version: 'v1', resource: 'configmaps' }, client, cache: { get: () => undefined }, signal: new AbortController().signal } as unknown as ReconcileContext;
  const r = createLabReconciler();
  await assert.rejects(r.reconcile({ key: 'ns/app', namespace: 'ns', name: 'app' }, ctx), (e: unknown) => isTerminal(e) && /only reconciles its own Widget/.test((e as Error).message));
  assert.deepEqual(calls, []);
});

test('finalize removes every occurrence of the lab finalizer, keeping the others in order (controllerutil.RemoveFinalizer)', async () => {
  // The API server accepts duplicate finalizers. Removing only the first would leave the Widget Terminating, and the
  // update that removal makes changes no generation: behind a generation-changed predicate nothing would retry it.
  const deleting = widget('w1', {
    metadata: { ...widget('w1').metadata, deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: [LAB_FINALIZER, 'other.example/keep', LAB_FINALIZER] },
  });
  let stored = structuredClone(deleting);
  const patches: JsonPatchOp[][] = [];
  const client = {
    async get(gvr: { resource: string }) {
      if (gvr.resource === 'widgets') return structuredClone(stored);
      throw new ApiError(404, 'NotFound', 'not found');
    },
    async patch(_gvr: unknown, _ns: unknown, _name: unknown, type: string, ops: JsonPatchOp[]) {
      assert.equal(type, 'json');
      patches.push(ops);
      // Applies the ops in order as the server does (RFC 6902 test/remove on the paths this patch uses).
      const next = structuredClone(stored);
      for (const op of ops) {
        const [, , field, index] = op.path.split('/');
        if (op.op === 'test' && field === 'resourceVersion') assert.equal(next.metadata.resourceVersion, op.value);
        else if (op.op === 'test') assert.equal(next.metadata.finalizers![Number(index)], op.value);
        else if (op.op === 'remove') next.metadata.finalizers!.splice(Number(index), 1);
        else assert.fail(`unexpected op ${op.op}`);
      }
      stored = next;
      return structuredClone(stored);
    },
  } as unknown as KubeClient;
  const { ctx } = testContext(client, { objects: [deleting] });
  assert.deepEqual(await createLabReconciler().reconcile({ key: 'ns1/w1', namespace: 'ns1', name: 'w1' }, ctx), {});
  assert.equal(patches.length, 1, 'one guarded patch');
  assert.deepEqual(stored.metadata.finalizers, ['other.example/keep']);
  assert.deepEqual(removeFinalizerOps(widget('w2'), LAB_FINALIZER), [], 'nothing to remove: no patch');
});
