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

/** Everything a reader can see of an indexer, in iteration order. */
function snapshot(idx: Indexer, indexNames: string[]) {
  return {
    keys: idx.listKeys(),
    objects: idx.list(),
    indexes: indexNames.map((n) => idx.listIndexFuncValues(n).map((v) => [v, idx.indexKeys(n, v)])),
  };
}

test('stage: a replace with exactly the staged objects swaps in what was indexed ahead, unseen until then, equal to a rebuild', () => {
  let calls = 0;
  const byFinalizer = (o: KubeObject) => (calls++, finalizerIndexFunc(o));
  const list = ['a', 'b', 'c', 'd'].map((n, i) => widget(n, { namespace: i % 2 ? 'ns2' : 'ns1', finalizers: i % 3 ? ['x'] : ['x', 'y'] }));
  const staged = new Indexer({ [FINALIZER_INDEX]: byFinalizer });
  staged.add(widget('old'));
  calls = 0;
  for (const o of list) staged.stage(o);
  assert.deepEqual(staged.listKeys(), ['default/old'], 'nothing staged is visible before the replace');
  assert.equal(calls, 4, 'indexed while staged');
  const previous = staged.replace(list);
  assert.equal(calls, 4, 'not indexed again by the replace');
  assert.deepEqual([...previous.keys()], ['default/old']);
  const rebuilt = new Indexer({ [FINALIZER_INDEX]: finalizerIndexFunc });
  rebuilt.replace(list);
  assert.deepEqual(snapshot(staged, [NAMESPACE_INDEX, FINALIZER_INDEX]), snapshot(rebuilt, [NAMESPACE_INDEX, FINALIZER_INDEX]));
  // Later changes work on the swapped-in store and its indexes.
  staged.delete(list[0]!);
  assert.deepEqual(staged.indexKeys(FINALIZER_INDEX, 'y'), ['ns2/d']);
});

test('stage: another list, a key staged twice, new indexers or a discard make the replace rebuild (same result as without staging)', () => {
  const mk = () => ['a', 'b', 'c'].map((n) => widget(n, { finalizers: [n] }));
  const cases: Array<[string, (idx: Indexer, list: KubeObject[]) => KubeObject[]]> = [
    ['other objects', (idx, list) => (list.forEach((o) => idx.stage(o)), mk())],
    ['fewer objects', (idx, list) => (list.forEach((o) => idx.stage(o)), list.slice(1))],
    ['other order', (idx, list) => (list.forEach((o) => idx.stage(o)), [list[1]!, list[0]!, list[2]!])],
    ['a key twice', (idx, list) => {
      const again = widget('a', { finalizers: ['z'] });
      for (const o of [...list, again]) idx.stage(o);
      return [...list, again];
    }],
    ['an indexer added', (idx, list) => (list.forEach((o) => idx.stage(o)), idx.addIndexers({ byName: (o) => [o.metadata.name!] }), list)],
    ['discarded', (idx, list) => (list.forEach((o) => idx.stage(o)), idx.discardStaged(), list)],
  ];
  for (const [what, run] of cases) {
    const idx = new Indexer({ [FINALIZER_INDEX]: finalizerIndexFunc });
    const list = mk();
    const final = run(idx, list);
    idx.replace(final);
    const plain = new Indexer({ [FINALIZER_INDEX]: finalizerIndexFunc });
    if (what === 'an indexer added') plain.addIndexers({ byName: (o) => [o.metadata.name!] });
    plain.replace(final);
    const names = what === 'an indexer added' ? [NAMESPACE_INDEX, FINALIZER_INDEX, 'byName'] : [NAMESPACE_INDEX, FINALIZER_INDEX];
    assert.deepEqual(snapshot(idx, names), snapshot(plain, names), what);
  }
});
