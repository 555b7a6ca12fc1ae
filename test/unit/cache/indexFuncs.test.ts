import { test } from 'node:test';
import assert from 'node:assert/strict';
import { finalizerIndexFunc, labelIndexFunc, labelIndexName, ownerUidIndexFunc, terminatingIndexFunc } from '../../../src/core/cache/indexFuncs.ts';
import { namespaceIndexFunc } from '../../../src/core/cache/indexer.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';

const obj = (metadata: KubeObject['metadata']): KubeObject => ({ metadata: { name: 'x', ...metadata } });

test('namespace index: the namespace, or "" for cluster-scoped objects', () => {
  assert.deepEqual(namespaceIndexFunc(obj({ namespace: 'a' })), ['a']);
  assert.deepEqual(namespaceIndexFunc(obj({})), ['']);
});

test('owner UID index: every owner UID once; none without owners', () => {
  const ref = (uid: string) => ({ apiVersion: 'v1', kind: 'K', name: 'n', uid });
  assert.deepEqual(ownerUidIndexFunc(obj({ ownerReferences: [ref('u1'), ref('u2'), ref('u1')] })), ['u1', 'u2']);
  assert.deepEqual(ownerUidIndexFunc(obj({})), []);
  assert.deepEqual(ownerUidIndexFunc(obj({ ownerReferences: [] })), []);
});

test('label index: the value of one label key; absent label → no value', () => {
  const f = labelIndexFunc('app');
  assert.deepEqual(f(obj({ labels: { app: 'web', tier: 'x' } })), ['web']);
  assert.deepEqual(f(obj({ labels: { app: '' } })), ['']);
  assert.deepEqual(f(obj({ labels: { tier: 'x' } })), []);
  assert.deepEqual(f(obj({})), []);
  assert.equal(labelIndexName('app'), 'label:app');
});

test('finalizer index: each finalizer once', () => {
  assert.deepEqual(finalizerIndexFunc(obj({ finalizers: ['a/b', 'c', 'a/b'] })), ['a/b', 'c']);
  assert.deepEqual(finalizerIndexFunc(obj({ finalizers: ['only'] })), ['only']);
  assert.deepEqual(finalizerIndexFunc(obj({})), []);
});

test('terminating index: "true" only while deletionTimestamp is set', () => {
  assert.deepEqual(terminatingIndexFunc(obj({ deletionTimestamp: '2026-01-01T00:00:00Z' })), ['true']);
  assert.deepEqual(terminatingIndexFunc(obj({})), []);
});
