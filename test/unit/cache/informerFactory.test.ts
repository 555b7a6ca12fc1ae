import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InformerFactory, type InformerScope } from '../../../src/core/cache/informerFactory.ts';
import type { ResourceInfo } from '../../../src/core/k8s/objects.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { FakeListerWatcher } from '../../fakes/fakeListerWatcher.ts';
import { settle, widget, widgets } from './helpers.ts';

const gadgets: ResourceInfo = { group: 'lab.reconcile.dev', version: 'v1', resource: 'gadgets', kind: 'Gadget', namespaced: false };

function setup() {
  const clock = new FakeClock();
  const made: Array<{ resource: string; scope: InformerScope; lw: FakeListerWatcher }> = [];
  const factory = new InformerFactory({
    clock,
    random: () => 0,
    listerWatcherFactory: (resource, scope) => {
      const lw = new FakeListerWatcher();
      made.push({ resource: resource.resource, scope, lw });
      return lw;
    },
  });
  return { clock, factory, made };
}

test('the same resource, namespace and selectors give the same informer; any difference gives another', () => {
  const t = setup();
  const a = t.factory.informerFor(widgets);
  assert.equal(t.factory.informerFor(widgets), a);
  assert.equal(t.factory.informerFor({ ...widgets }), a, 'compared by value, not identity');
  const inNs = t.factory.informerFor(widgets, { namespace: 'n1' });
  assert.notEqual(inNs, a);
  assert.equal(t.factory.informerFor(widgets, { namespace: 'n1' }), inNs);
  assert.notEqual(t.factory.informerFor(widgets, { labelSelector: 'app=x' }), a);
  assert.notEqual(t.factory.informerFor(widgets, { fieldSelector: 'metadata.name=x' }), a);
  assert.notEqual(t.factory.informerFor(gadgets), a);
  assert.equal(t.factory.list().length, 5);
  assert.deepEqual(t.made[1]!.scope, { namespace: 'n1', labelSelector: undefined, fieldSelector: undefined });
  assert.throws(() => t.factory.informerFor(gadgets, { namespace: 'n1' }), /cluster-scoped/);
  t.factory.dispose();
});

test('start runs every informer, later ones at once; waitForCacheSync resolves when all synced', async () => {
  const t = setup();
  const a = t.factory.informerFor(widgets);
  t.made[0]!.lw.add(widget('x'));
  assert.equal(a.isStarted, false);
  t.factory.start();
  const b = t.factory.informerFor(gadgets);
  assert.equal(a.isStarted, true);
  assert.equal(b.isStarted, true);
  let synced: boolean | undefined;
  void t.factory.waitForCacheSync().then((v) => (synced = v));
  await settle();
  t.clock.step(100);
  await settle();
  assert.equal(synced, true);
  assert.equal(a.getIndexer().listKeys().length, 1);
  t.factory.dispose();
});

test('waitForCacheSync resolves false when its signal aborts or the factory stops', async () => {
  const t = setup();
  t.factory.informerFor(widgets);
  t.made[0]!.lw.failNextList(new Error('down'), 100);
  t.factory.start();
  const ac = new AbortController();
  let first: boolean | undefined;
  let second: boolean | undefined;
  void t.factory.waitForCacheSync(ac.signal).then((v) => (first = v));
  void t.factory.waitForCacheSync().then((v) => (second = v));
  await settle();
  t.clock.step(1000);
  await settle();
  assert.equal(first, undefined);
  ac.abort();
  await settle();
  assert.equal(first, false);
  t.factory.dispose();
  t.clock.step(100);
  await settle();
  assert.equal(second, false);
});

test('dispose stops every informer and refuses new requests', async () => {
  const t = setup();
  const a = t.factory.informerFor(widgets);
  t.factory.start();
  await settle();
  assert.equal(t.made[0]!.lw.openWatches, 1);
  t.factory.dispose();
  await a.whenStopped();
  assert.equal(a.isStopped, true);
  assert.equal(t.made[0]!.lw.openWatches, 0);
  assert.throws(() => t.factory.informerFor(widgets), /stopped/);
});

test('a factory needs a transport or a lister-watcher factory', () => {
  assert.throws(() => new InformerFactory({}), /transport or a listerWatcherFactory/);
});
