import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FieldFightDetector, leafPaths } from '../../../src/core/controller/fieldFight.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';

/** A Widget whose managedFields say who set which fields last (as the server records Update operations). */
function widget(rv: number, owners: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'lab.reconcile.dev/v1alpha1',
    kind: 'Widget',
    metadata: {
      name: 'a',
      namespace: 'ns',
      resourceVersion: String(rv),
      managedFields: Object.entries(owners).map(([manager, fieldsV1]) => ({ manager, operation: 'Update', fieldsType: 'FieldsV1', fieldsV1 })),
    } as KubeObject['metadata'],
  };
}

const spec = (...fields: string[]) => ({ 'f:spec': Object.fromEntries(fields.map((f) => [`f:${f}`, {}])) });

test('leaf paths of a FieldsV1 set: fields, list keys, set values and "." markers', () => {
  assert.deepEqual(
    leafPaths({ 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:ports': { 'k:{"port":80}': { '.': {}, 'f:name': {} } }, 'f:tags': { 'v:"x"': {} } } }).sort(),
    ['.metadata.labels.app', '.spec.ports[port=80]', '.spec.ports[port=80].name', '.spec.tags[x]'],
  );
});

test('ownership of one field flipping between this controller and another manager is a fight, named with the field', () => {
  const d = new FieldFightDetector({ ownManager: 'reconcile-lab', threshold: 4, windowMs: 60_000 });
  const ours = widget(1, { 'reconcile-lab': spec('data', 'size'), other: spec('color') });
  const theirs = (rv: number) => widget(rv, { 'reconcile-lab': spec('size'), other: spec('color', 'data') });
  const back = (rv: number) => widget(rv, { 'reconcile-lab': spec('data', 'size'), other: spec('color') });
  assert.deepEqual(d.observe('ns/a', ours, theirs(2), 1000), []);
  assert.deepEqual(d.observe('ns/a', theirs(2), back(3), 2000), []);
  assert.deepEqual(d.observe('ns/a', back(3), theirs(4), 3000), []);
  const [w, ...rest] = d.observe('ns/a', theirs(4), back(5), 4000);
  assert.equal(rest.length, 0);
  assert.ok(w);
  assert.equal(w.field, '.spec.data');
  assert.deepEqual(w.managers, ['other', 'reconcile-lab']);
  assert.equal(w.flips, 4);
  assert.equal(w.spanMs, 3000);
  assert.equal(w.involvesOwn, true);
  assert.match(w.message, /another controller \(field manager "other"\) is fighting this one over \.spec\.data of ns\/a: the field changed hands 4 times in 3s/);
  // Cooldown: the fight goes on, no second warning right away.
  assert.deepEqual(d.observe('ns/a', back(5), theirs(6), 5000), []);
});

test('no fight: a one-way hand-over, flips spread beyond the window, resyncs, objects without managedFields', () => {
  const d = new FieldFightDetector({ ownManager: 'me', threshold: 2, windowMs: 10_000 });
  // One-way: "old-operator" hands .spec.data to "new-operator" twice (two fields), never back.
  const a = widget(1, { 'old-operator': spec('data'), me: spec('x') });
  const b = widget(2, { 'new-operator': spec('data'), me: spec('x') });
  assert.deepEqual(d.observe('ns/a', a, b, 0), []);
  assert.deepEqual(d.observe('ns/b', a, b, 0), []);
  // Slow: one flip every 20 s never makes two inside a 10 s window.
  const mine = (rv: number) => widget(rv, { me: spec('data'), other: spec('y') });
  const theirs = (rv: number) => widget(rv, { other: spec('data', 'y') });
  for (let i = 0; i < 10; i++) assert.deepEqual(d.observe('ns/c', i % 2 ? theirs(i) : mine(i), i % 2 ? mine(i + 1) : theirs(i + 1), i * 20_000), []);
  // A resync (same resourceVersion) and objects without managedFields.
  assert.deepEqual(d.observe('ns/d', mine(7), theirs(7), 0), []);
  const bare = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', resourceVersion: '1' } };
  assert.deepEqual(d.observe('ns/e', bare, { ...bare, metadata: { ...bare.metadata, resourceVersion: '2' } }, 0), []);
});

test('two other managers fighting are named both; forget() drops a deleted key', () => {
  const d = new FieldFightDetector({ ownManager: 'me', threshold: 2 });
  const x = (rv: number) => widget(rv, { a: spec('replicas'), b: spec('z') });
  const y = (rv: number) => widget(rv, { b: spec('replicas', 'z') });
  assert.deepEqual(d.observe('ns/a', x(1), y(2), 0), []);
  const [w] = d.observe('ns/a', y(2), x(3), 10);
  assert.ok(w);
  assert.equal(w.involvesOwn, false);
  assert.match(w.message, /field managers "a" and "b" are fighting over \.spec\.replicas of ns\/a/);
  d.forget('ns/a');
  assert.deepEqual(d.observe('ns/a', x(3), y(4), 20), []);
});
