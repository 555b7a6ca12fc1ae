import { test } from 'node:test';
import assert from 'node:assert/strict';
import { revertPatch } from '../../../src/core/checks/revert.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';

/** RFC 7386, as the API server applies a merge patch (the test's own oracle for what the patch does). */
function applyMerge(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = typeof target === 'object' && target !== null && !Array.isArray(target) ? structuredClone(target as Record<string, unknown>) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMerge(out[k], v);
  }
  return out;
}

function widget(spec: Record<string, unknown>, meta: Record<string, unknown> = {}, status?: Record<string, unknown>): KubeObject {
  return { apiVersion: 'lab.reconcile.dev/v1alpha1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns', finalizers: ['lab.reconcile.dev/cleanup'], ...meta }, spec, ...(status ? { status } : {}) } as KubeObject;
}

/** Applies the transitions, then the revert patch, and returns both the patch and the object it gives. */
function roundTrip(before: KubeObject, transitions: unknown[], controllerWrites: (o: KubeObject) => KubeObject = (o) => o) {
  let current: unknown = before;
  for (const t of transitions) current = applyMerge(current, t);
  current = controllerWrites(current as KubeObject);
  const patch = revertPatch(transitions, before, current as KubeObject);
  return { patch, reverted: patch ? (applyMerge(current, patch) as KubeObject) : (current as KubeObject), current: current as KubeObject };
}

test('a changed scalar is set back; a key the transition added is removed with null', () => {
  const before = widget({ data: { color: 'blue' }, replicas: 1 });
  const { patch, reverted } = roundTrip(before, [{ spec: { data: { color: 'blue-changed', extra: 'on' }, replicas: 2 } }]);
  assert.deepEqual(patch, { spec: { data: { color: 'blue', extra: null }, replicas: 1 } });
  assert.deepEqual(reverted.spec, before.spec);
});

test('a key the transition removed (null) comes back with its old value; a boolean turned on is turned off again', () => {
  const before = widget({ data: { color: 'blue', size: 'L' }, expose: false });
  const { patch, reverted } = roundTrip(before, [{ spec: { data: { size: null }, expose: true } }]);
  assert.deepEqual(patch, { spec: { data: { size: 'L' }, expose: false } });
  assert.deepEqual(reverted.spec, before.spec);
});

test('a field the object did not set is removed again, an object in its place too', () => {
  const before = widget({ data: { color: 'blue' } });
  const { patch, reverted } = roundTrip(before, [{ spec: { tls: { enabled: true, secretName: 'certs' }, replicas: 3 } }]);
  assert.deepEqual(patch, { spec: { tls: null, replicas: null } });
  assert.deepEqual(reverted.spec, before.spec);
});

test('several transitions: the union of what they touched, back to the values before the first one', () => {
  const before = widget({ data: { color: 'blue' }, ports: [80] });
  const { patch, reverted } = roundTrip(before, [{ spec: { data: { color: 'red' } } }, { spec: { data: { color: 'green', mode: 'x' }, ports: [80, 443] } }, { spec: { data: { mode: null } } }]);
  assert.deepEqual(patch, { spec: { data: { color: 'blue' }, ports: [80] } });
  assert.deepEqual(reverted.spec, before.spec);
});

test('a key that is a scalar in one transition and an object in another is compared whole: keys it gained are removed', () => {
  const before = widget({ data: { color: 'blue' } });
  const { reverted } = roundTrip(before, [{ spec: { data: 'flat' } }, { spec: { data: { color: 'red', more: 'yes' } } }]);
  assert.deepEqual(reverted.spec, before.spec);
});

test('only what the transitions touched: a field the controller wrote elsewhere, status, finalizers and ownerReferences are left alone', () => {
  const before = widget({ data: { color: 'blue' } }, { labels: { team: 'a' } }, { phase: 'Ready' });
  const { patch, reverted } = roundTrip(before, [{ metadata: { labels: { tier: 'gold' }, finalizers: [] }, spec: { data: { color: 'red' } }, status: { phase: 'X' } }], (o) => ({
    ...o, spec: { ...(o.spec as object), defaulted: 'by-controller' }, status: { phase: 'Updating' }, metadata: { ...o.metadata, finalizers: ['lab.reconcile.dev/cleanup', 'other'] },
  }) as KubeObject);
  assert.deepEqual(patch, { metadata: { labels: { tier: null } }, spec: { data: { color: 'blue' } } });
  assert.equal((reverted.spec as Record<string, unknown>).defaulted, 'by-controller');
  assert.deepEqual(reverted.status, { phase: 'Updating' });
  assert.deepEqual(reverted.metadata.finalizers, ['lab.reconcile.dev/cleanup', 'other']);
  assert.deepEqual(reverted.metadata.labels, { team: 'a' });
});

test('nothing to undo (the transitions set what was already there, or touched only status) gives undefined', () => {
  const before = widget({ data: { color: 'blue' } });
  assert.equal(revertPatch([{ spec: { data: { color: 'blue' } } }], before, before), undefined);
  assert.equal(revertPatch([{ status: { phase: 'x' } }, 'not an object', null], before, widget({ data: { color: 'blue' } }, {}, { phase: 'x' })), undefined);
});

test('the patch shares nothing with its inputs', () => {
  const before = widget({ tls: { hosts: ['a'] } });
  const current = widget({ tls: 'off' });
  const patch = revertPatch([{ spec: { tls: 'off' } }], before, current)!;
  (patch.spec as Record<string, { hosts: string[] }>).tls!.hosts.push('b');
  assert.deepEqual((before.spec as { tls: { hosts: string[] } }).tls.hosts, ['a']);
});
