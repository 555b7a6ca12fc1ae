import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectCompactor } from '../../../src/core/cache/compact.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';

function received(i: number, ownerUid = 'u-1'): KubeObject {
  return JSON.parse(
    JSON.stringify({
      apiVersion: 'lab.reconcile.dev/v1',
      kind: 'Widget',
      metadata: {
        name: `w${i}`,
        namespace: 'team-a',
        creationTimestamp: '2026-12-01T21:00:00Z',
        labels: { app: 'shop', tier: i % 2 ? 'web' : 'db' },
        ownerReferences: [{ apiVersion: 'lab.reconcile.dev/v1', kind: 'Owner', name: 'o', uid: ownerUid }],
        managedFields: [
          { apiVersion: 'lab.reconcile.dev/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:size': {} } }, manager: 'kubectl', operation: 'Update', time: '2026-12-01T21:00:00Z' },
        ],
      },
      spec: { size: i, items: [{ name: 'a' }] },
    }),
  ) as KubeObject;
}

test('compaction changes no value, no key order and no type', () => {
  const c = new ObjectCompactor();
  for (let i = 0; i < 5; i++) {
    const before = received(i);
    const text = JSON.stringify(before);
    const after = c.compact(structuredClone(before));
    assert.deepStrictEqual(after, before);
    assert.equal(JSON.stringify(after), text, 'same JSON, key order included');
  }
});

test('identical fieldsV1 trees are one shared, frozen tree; different ones stay apart', () => {
  const c = new ObjectCompactor();
  const a = c.compact(received(1));
  const b = c.compact(received(2));
  const other = received(3);
  (other.metadata.managedFields![0]!.fieldsV1 as Record<string, unknown>)['f:status'] = {};
  const d = c.compact(other);
  const tree = (o: KubeObject) => o.metadata.managedFields![0]!.fieldsV1 as Record<string, Record<string, unknown>>;
  assert.equal(tree(a), tree(b));
  assert.notEqual(tree(a), tree(d));
  assert.ok(Object.isFrozen(tree(a)) && Object.isFrozen(tree(a)['f:metadata']));
  // A write into the shared tree fails (strict mode) instead of changing every object that shares it.
  assert.throws(() => {
    tree(a)['f:spec']!['f:color'] = {};
  }, TypeError);
  assert.equal('f:color' in tree(b)['f:spec']!, false);
  // The rest of the object stays writable: only the shared tree is frozen.
  a.metadata.labels!.app = 'changed';
  assert.equal(b.metadata.labels!.app, 'shop');
});

test('equal managedFields arrays are one shared, frozen array; an array that differs (a later time) stays its own', () => {
  const c = new ObjectCompactor();
  const a = c.compact(received(1));
  const b = c.compact(received(2));
  const later = received(3);
  later.metadata.managedFields![0]!.time = '2026-12-01T21:00:07Z';
  const d = c.compact(later);
  assert.equal(a.metadata.managedFields, b.metadata.managedFields);
  assert.notEqual(a.metadata.managedFields, d.metadata.managedFields);
  assert.equal(a.metadata.managedFields![0]!.fieldsV1, d.metadata.managedFields![0]!.fieldsV1, 'the fieldsV1 tree is still shared');
  assert.equal(d.metadata.managedFields![0]!.time, '2026-12-01T21:00:07Z');
  for (const o of [a, d]) assert.ok(Object.isFrozen(o.metadata.managedFields) && Object.isFrozen(o.metadata.managedFields![0]));
  assert.throws(() => a.metadata.managedFields!.push({ manager: 'x' }), TypeError);
  assert.throws(() => {
    a.metadata.managedFields![0]!.manager = 'changed';
  }, TypeError);
  assert.equal(b.metadata.managedFields![0]!.manager, 'kubectl');
  // Replacing the field itself stays possible (the metadata object is the object's own).
  a.metadata.managedFields = undefined;
  assert.equal(b.metadata.managedFields!.length, 1);
});

test('tables are bounded (they start over when full) and compaction stays correct', () => {
  const c = new ObjectCompactor(4);
  for (let i = 0; i < 50; i++) {
    const before = received(i, `uid-${i}`);
    assert.deepStrictEqual(c.compact(structuredClone(before)), before);
  }
});

test('odd shapes are left alone, never thrown on', () => {
  const c = new ObjectCompactor();
  const odd = [
    { metadata: { name: 'x', labels: null, ownerReferences: [null, 5], managedFields: [null, { fieldsV1: 'text' }] } },
    { metadata: { name: 'y', managedFields: 'nope', ownerReferences: {} } },
    { kind: 7, metadata: { name: 'z' } },
  ] as unknown as KubeObject[];
  for (const o of odd) {
    const before = structuredClone(o);
    assert.deepStrictEqual(c.compact(o), before);
  }
});
