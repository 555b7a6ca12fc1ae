import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Indexer } from '../../../src/core/cache/indexer.ts';
import { Lister } from '../../../src/core/cache/lister.ts';
import { parseLabelSelector } from '../../../src/core/cache/labelSelector.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { widget } from './helpers.ts';

const names = (objs: KubeObject[]) => objs.map((o) => o.metadata.name!).sort();

function fixture(): Lister {
  const idx = new Indexer();
  idx.add(widget('a', { namespace: 'ns1', labels: { app: 'web', env: 'prod' } }));
  idx.add(widget('b', { namespace: 'ns1', labels: { app: 'db' } }));
  idx.add(widget('c', { namespace: 'ns2', labels: { app: 'web', env: 'dev' } }));
  idx.add(widget('d', { namespace: 'ns2' }));
  return new Lister(idx);
}

test('list across namespaces, with and without a selector', () => {
  const l = fixture();
  assert.deepEqual(names(l.list()), ['a', 'b', 'c', 'd']);
  assert.deepEqual(names(l.list('app=web')), ['a', 'c']);
  assert.deepEqual(names(l.list('app=web,env!=prod')), ['c']);
  assert.deepEqual(names(l.list('!app')), ['d']);
  assert.deepEqual(names(l.list('env in (prod,dev)')), ['a', 'c']);
  assert.deepEqual(names(l.list('app notin (web)')), ['b', 'd']);
  assert.deepEqual(names(l.list(parseLabelSelector('app'))), ['a', 'b', 'c']);
});

test('get by namespace/name and namespace-scoped reads', () => {
  const l = fixture();
  assert.equal(l.get('ns1', 'a')?.metadata.labels?.app, 'web');
  assert.equal(l.get('ns2', 'a'), undefined);
  assert.equal(l.namespace('ns2').get('c')?.metadata.name, 'c');
  assert.deepEqual(names(l.namespace('ns2').list()), ['c', 'd']);
  assert.deepEqual(names(l.namespace('ns2').list('app=web')), ['c']);
  assert.deepEqual(l.namespace('none').list(), []);
});

test('cluster-scoped objects are read without a namespace', () => {
  const idx = new Indexer();
  idx.add({ metadata: { name: 'n1', labels: { role: 'x' } } });
  const l = new Lister(idx);
  assert.equal(l.get(undefined, 'n1')?.metadata.name, 'n1');
  assert.deepEqual(names(l.list('role=x')), ['n1']);
});

test('a malformed selector string throws', () => {
  assert.throws(() => fixture().list('a in (b'), /unbalanced/);
});
