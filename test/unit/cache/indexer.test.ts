import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Indexer, NAMESPACE_INDEX } from '../../../src/core/cache/indexer.ts';
import { finalizerIndexFunc, FINALIZER_INDEX } from '../../../src/core/cache/indexFuncs.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { widget } from './helpers.ts';

const sorted = (xs: string[]) => [...xs].sort();
const names = (objs: KubeObject[]) => objs.map((o) => o.metadata.name!).sort();

test('add, get, list and keys; the namespace index is always there', () => {
  const idx = new Indexer();
  idx.add(widget('a', { namespace: 'ns1' }));
  idx.add(widget('b', { namespace: 'ns2' }));
  idx.add({ metadata: { name: 'node-1' } });
  assert.equal(idx.getByKey('ns1/a')?.metadata.name, 'a');
  assert.equal(idx.getByKey('node-1')?.metadata.name, 'node-1');
  assert.equal(idx.getByKey('ns1/b'), undefined);
  assert.deepEqual(sorted(idx.listKeys()), ['node-1', 'ns1/a', 'ns2/b']);
  assert.equal(idx.list().length, 3);
  assert.deepEqual(names(idx.byIndex(NAMESPACE_INDEX, 'ns1')), ['a']);
  assert.deepEqual(idx.indexKeys(NAMESPACE_INDEX, ''), ['node-1']);
  assert.deepEqual(sorted(idx.listIndexFuncValues(NAMESPACE_INDEX)), ['', 'ns1', 'ns2']);
});

test('update moves the key between index values and drops values left empty', () => {
  const idx = new Indexer({ [FINALIZER_INDEX]: finalizerIndexFunc });
  idx.add(widget('a', { finalizers: ['x', 'y'] }));
  idx.add(widget('b', { finalizers: ['y'] }));
  assert.deepEqual(sorted(idx.listIndexFuncValues(FINALIZER_INDEX)), ['x', 'y']);
  assert.deepEqual(sorted(idx.indexKeys(FINALIZER_INDEX, 'y')), ['default/a', 'default/b']);
  idx.update(widget('a', { finalizers: ['z'] }));
  assert.deepEqual(sorted(idx.listIndexFuncValues(FINALIZER_INDEX)), ['y', 'z']);
  assert.deepEqual(idx.indexKeys(FINALIZER_INDEX, 'y'), ['default/b']);
  assert.deepEqual(idx.indexKeys(FINALIZER_INDEX, 'x'), []);
  idx.delete(widget('b'));
  assert.deepEqual(idx.listIndexFuncValues(FINALIZER_INDEX), ['z']);
  idx.deleteByKey('default/a');
  assert.deepEqual(idx.listIndexFuncValues(FINALIZER_INDEX), []);
  assert.equal(idx.size, 0);
});

test('a value shared by several keys survives removing all but one, in any order', () => {
  const idx = new Indexer({ team: (o) => [o.metadata.labels?.team ?? ''] });
  for (const n of ['a', 'b', 'c']) idx.add(widget(n, { labels: { team: 'red' } }));
  idx.update(widget('b', { labels: { team: 'blue' } }));
  assert.deepEqual(sorted(idx.indexKeys('team', 'red')), ['default/a', 'default/c']);
  idx.deleteByKey('default/a');
  assert.deepEqual(idx.indexKeys('team', 'red'), ['default/c']);
  idx.add(widget('d', { labels: { team: 'red' } }));
  assert.deepEqual(sorted(idx.indexKeys('team', 'red')), ['default/c', 'default/d']);
  idx.deleteByKey('default/c');
  idx.deleteByKey('default/d');
  assert.deepEqual(idx.listIndexFuncValues('team'), ['blue']);
});

test('index() returns the union of objects sharing any value, each once', () => {
  const idx = new Indexer({ [FINALIZER_INDEX]: finalizerIndexFunc });
  idx.add(widget('a', { finalizers: ['x', 'y'] }));
  idx.add(widget('b', { finalizers: ['y', 'z'] }));
  idx.add(widget('c', { finalizers: ['q'] }));
  assert.deepEqual(names(idx.index(FINALIZER_INDEX, widget('probe', { finalizers: ['x', 'z'] }))), ['a', 'b']);
});

test('addIndexers after objects exist indexes them at once; a name conflict adds nothing', () => {
  const idx = new Indexer();
  idx.add(widget('a', { finalizers: ['x'] }));
  idx.addIndexers({ [FINALIZER_INDEX]: finalizerIndexFunc });
  assert.deepEqual(idx.indexKeys(FINALIZER_INDEX, 'x'), ['default/a']);
  assert.throws(() => idx.addIndexers({ other: finalizerIndexFunc, [FINALIZER_INDEX]: finalizerIndexFunc }), /indexer conflict: finalizer/);
  assert.deepEqual(sorted(idx.indexNames()), [FINALIZER_INDEX, NAMESPACE_INDEX]);
});

test('unknown index names: byIndex/indexKeys throw, listIndexFuncValues is empty', () => {
  const idx = new Indexer();
  assert.throws(() => idx.byIndex('nope', 'x'), /Index with name nope does not exist/);
  assert.throws(() => idx.indexKeys('nope', 'x'), /Index with name nope does not exist/);
  assert.throws(() => idx.index('nope', widget('a')), /does not exist/);
  assert.deepEqual(idx.listIndexFuncValues('nope'), []);
});

test('replace rebuilds content and indexes and hands back the previous content', () => {
  const idx = new Indexer({ [FINALIZER_INDEX]: finalizerIndexFunc });
  idx.add(widget('a', { finalizers: ['x'] }));
  idx.add(widget('b', { finalizers: ['x'] }));
  const previous = idx.replace([widget('b', { finalizers: ['y'] }), widget('c')], '42');
  assert.deepEqual(sorted([...previous.keys()]), ['default/a', 'default/b']);
  assert.deepEqual(sorted(idx.listKeys()), ['default/b', 'default/c']);
  assert.deepEqual(idx.listIndexFuncValues(FINALIZER_INDEX), ['y']);
  assert.deepEqual(sorted(idx.indexKeys(NAMESPACE_INDEX, 'default')), ['default/b', 'default/c']);
});

test('a throwing index function is reported and files the object under no value', () => {
  const errors: string[] = [];
  const idx = new Indexer(
    {
      fragile: (o) => {
        if (o.metadata.name === 'bad') throw new Error('boom');
        return ['ok'];
      },
    },
    (name, key, e) => errors.push(`${name}:${key}:${(e as Error).message}`),
  );
  idx.add(widget('bad'));
  idx.add(widget('good'));
  assert.deepEqual(errors, ['fragile:default/bad:boom']);
  assert.deepEqual(idx.indexKeys('fragile', 'ok'), ['default/good']);
  assert.equal(idx.getByKey('default/bad')?.metadata.name, 'bad');
});
