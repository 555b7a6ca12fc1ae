import { test } from 'node:test';
import assert from 'node:assert/strict';
import { controllerOwnerKeys, enqueueForObject, enqueueForOwner, enqueueMapped } from '../../../src/core/controller/handler.ts';
import type { KubeObject, OwnerReference } from '../../../src/core/k8s/objects.ts';

const owner = { group: 'lab.reconcile.dev', kind: 'Widget', namespaced: true };
const ref = (r: Partial<OwnerReference>): OwnerReference => ({ apiVersion: 'lab.reconcile.dev/v1', kind: 'Widget', name: 'w1', uid: 'u1', controller: true, ...r });
const child = (refs: OwnerReference[], namespace: string | null = 'ns'): KubeObject => ({
  kind: 'ConfigMap',
  metadata: { name: 'cm', ...(namespace ? { namespace } : {}), ownerReferences: refs },
});

test('enqueueForObject: the newest object key', () => {
  const m = enqueueForObject();
  assert.deepEqual(m([{ metadata: { name: 'a', namespace: 'ns' } }]), ['ns/a']);
  assert.deepEqual(m([{ metadata: { name: 'old', namespace: 'ns' } }, { metadata: { name: 'new' } }]), ['new']);
  assert.deepEqual(m([{ metadata: {} }]), []);
});

test('controller owner: only controller=true refs of the owner kind and group, any version, in the child namespace', () => {
  assert.deepEqual(controllerOwnerKeys(child([ref({})]), owner), ['ns/w1']);
  assert.deepEqual(controllerOwnerKeys(child([ref({ apiVersion: 'lab.reconcile.dev/v2' })]), owner), ['ns/w1'], 'version ignored');
  assert.deepEqual(controllerOwnerKeys(child([ref({ controller: false })]), owner), []);
  assert.deepEqual(controllerOwnerKeys(child([ref({ controller: undefined })]), owner), []);
  assert.deepEqual(controllerOwnerKeys(child([ref({ kind: 'Gadget' })]), owner), []);
  assert.deepEqual(controllerOwnerKeys(child([ref({ apiVersion: 'other.dev/v1' })]), owner), []);
  assert.deepEqual(controllerOwnerKeys(child([ref({ apiVersion: 'v1', kind: 'Widget' })]), owner), [], 'core group is a different group');
  assert.deepEqual(controllerOwnerKeys(child([ref({})], null), owner), [], 'a cluster-scoped child cannot have a namespaced owner');
  assert.deepEqual(controllerOwnerKeys(child([ref({ name: 'node-owner' })], null), { ...owner, namespaced: false }), ['node-owner']);
  assert.deepEqual(controllerOwnerKeys(child([ref({ apiVersion: 'v1', kind: 'Node', name: 'n1' })]), { group: '', kind: 'Node', namespaced: false }), ['n1']);
});

test('enqueueForOwner maps old and new objects of an update (an owner losing its child hears it), deduplicated', () => {
  const m = enqueueForOwner(owner);
  assert.deepEqual(m([child([ref({ name: 'a' })]), child([ref({ name: 'b' })])]), ['ns/a', 'ns/b']);
  assert.deepEqual(m([child([ref({ name: 'a' })]), child([ref({ name: 'a' })])]), ['ns/a']);
});

test('enqueueMapped maps both objects and deduplicates', () => {
  const m = enqueueMapped((o) => [`ns/${o.metadata.labels?.['owner'] ?? 'none'}`, 'ns/always']);
  assert.deepEqual(m([{ metadata: { name: 'x', labels: { owner: 'a' } } }, { metadata: { name: 'x', labels: { owner: 'b' } } }]), ['ns/a', 'ns/always', 'ns/b']);
});
