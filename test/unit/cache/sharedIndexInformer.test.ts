import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SharedIndexInformer, stripManagedFields, type TransformFunc } from '../../../src/core/cache/sharedIndexInformer.ts';
import { isTombstone, type DeletedFinalStateUnknown, type ResourceEventHandler } from '../../../src/core/cache/interfaces.ts';
import { FINALIZER_INDEX, finalizerIndexFunc } from '../../../src/core/cache/indexFuncs.ts';
import { NAMESPACE_INDEX } from '../../../src/core/cache/indexer.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { FakeListerWatcher } from '../../fakes/fakeListerWatcher.ts';
import { recordingLogger, settle, widget, widgets } from './helpers.ts';

const rv = (o: KubeObject) => o.metadata.resourceVersion;
const label = (o: KubeObject | DeletedFinalStateUnknown) => (isTombstone(o) ? `tombstone(${o.key}@${rv(o.obj)})` : `${o.metadata.name}@${rv(o)}`);

/** A handler that records what it sees as readable lines. */
function recorder(): { handler: ResourceEventHandler; seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    handler: {
      onAdd: (o, initial) => void seen.push(`add ${label(o)}${initial ? ' initial' : ''}`),
      onUpdate: (a, b) => void seen.push(`${rv(a) === rv(b) ? 'resync' : 'update'} ${label(a)} -> ${label(b)}`),
      onDelete: (o) => void seen.push(`delete ${label(o)}`),
    },
  };
}

function setup(options: { resyncPeriodMs?: number; transform?: TransformFunc | null } = {}) {
  const clock = new FakeClock();
  const lw = new FakeListerWatcher();
  const { logger, entries } = recordingLogger();
  const informer = new SharedIndexInformer({ listerWatcher: lw, resource: widgets, clock, logger, random: () => 0, ...options });
  return { clock, lw, informer, logs: entries };
}

test('initial list: adds with isInInitialList=true, then watch events in order; onUpdate gets old and new', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.lw.add(widget('b'));
  const r = recorder();
  const reg = t.informer.addEventHandler(r.handler);
  assert.equal(t.informer.hasSynced(), false);
  assert.equal(reg.hasSynced(), false);
  t.informer.run();
  await settle();
  assert.equal(t.informer.hasSynced(), true);
  assert.equal(reg.hasSynced(), true);
  t.lw.add(widget('c'));
  t.lw.modify(widget('a', { spec: { size: 9 } }));
  t.lw.delete(widget('b'));
  await settle();
  assert.deepEqual(r.seen, ['add a@1 initial', 'add b@2 initial', 'add c@3', 'update a@1 -> a@4', 'delete b@5']);
  assert.deepEqual(t.informer.getIndexer().listKeys().sort(), ['default/a', 'default/c']);
  assert.equal(t.informer.lastSyncResourceVersion(), '5');
  t.informer.dispose();
});

test('the cache already holds a change when its handler is called', async () => {
  const t = setup();
  const observed: string[] = [];
  const cached = (name: string) => rv(t.informer.getIndexer().getByKey(`default/${name}`) ?? { metadata: {} }) ?? 'absent';
  t.informer.addEventHandler({
    onAdd: (o) => void observed.push(`add ${rv(o)} cache ${cached(o.metadata.name!)}`),
    onUpdate: (_, n) => void observed.push(`update ${rv(n)} cache ${cached(n.metadata.name!)}`),
    onDelete: (o) => void observed.push(`delete cache ${cached((o as KubeObject).metadata.name!)}`),
  });
  t.informer.run();
  await settle();
  t.lw.add(widget('a'));
  await settle();
  t.lw.modify(widget('a', { spec: { size: 2 } }));
  await settle();
  t.lw.delete(widget('a'));
  await settle();
  assert.deepEqual(observed, ['add 1 cache 1', 'update 2 cache 2', 'delete cache absent']);
  t.informer.dispose();
});

test('a relist turns missed deletes into tombstones, missed adds into adds, unchanged objects into same-RV updates', async () => {
  const t = setup();
  t.lw.add(widget('keep'));
  t.lw.add(widget('gone', { labels: { last: 'state' } }));
  t.lw.add(widget('changed'));
  const r = recorder();
  t.informer.addEventHandler(r.handler);
  t.informer.run();
  await settle();
  r.seen.length = 0;
  t.lw.deleteDropWatch(widget('gone'));
  t.lw.addDropWatch(widget('new'));
  t.lw.modifyDropWatch(widget('changed', { spec: { size: 3 } }));
  t.lw.dropWatch(); // a failed watch → backoff → relist
  await settle();
  t.clock.step(800);
  await settle();
  // Deletes first, then the list in its order (the fake lists by key).
  assert.deepEqual(r.seen, ['delete tombstone(default/gone@2)', 'update changed@3 -> changed@6', 'resync keep@1 -> keep@1', 'add new@5']);
  const tomb = t.informer.getIndexer().getByKey('default/gone');
  assert.equal(tomb, undefined);
  t.informer.dispose();
});

test('tombstones carry the key and the last cached state', async () => {
  const t = setup();
  t.lw.add(widget('gone', { labels: { v: '1' } }));
  const deleted: Array<KubeObject | DeletedFinalStateUnknown> = [];
  t.informer.addEventHandler({ onDelete: (o) => void deleted.push(o) });
  t.informer.run();
  await settle();
  t.lw.deleteDropWatch(widget('gone'));
  t.lw.expire();
  await settle();
  t.clock.step(800);
  await settle();
  assert.equal(deleted.length, 1);
  const d = deleted[0]!;
  assert.ok(isTombstone(d));
  if (!isTombstone(d)) return;
  assert.equal(d.key, 'default/gone');
  assert.equal(d.obj.metadata.labels?.v, '1');
  assert.equal(rv(d.obj), '1');
  t.informer.dispose();
});

test('a slow handler blocks neither other handlers nor the cache; it catches up in order', async () => {
  const t = setup();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const slowSeen: string[] = [];
  t.informer.addEventHandler({
    onAdd: async (o) => {
      slowSeen.push(o.metadata.name!);
      if (o.metadata.name === 'a') await gate;
    },
  });
  const fast = recorder();
  t.informer.addEventHandler(fast.handler);
  t.informer.run();
  await settle();
  for (const n of ['a', 'b', 'c']) t.lw.add(widget(n));
  await settle();
  assert.deepEqual(fast.seen, ['add a@1', 'add b@2', 'add c@3']);
  assert.deepEqual(slowSeen, ['a']);
  assert.equal(t.informer.getIndexer().listKeys().length, 3);
  release();
  await settle();
  assert.deepEqual(slowSeen, ['a', 'b', 'c']);
  t.informer.dispose();
});

test('a throwing or rejecting handler is reported (logger + event) and keeps receiving; others are unaffected', async () => {
  const t = setup();
  const errors: string[] = [];
  t.informer.onDidHandlerError((e) => errors.push(`${e.notification} ${e.key}: ${(e.error as Error).message}`));
  const badSeen: string[] = [];
  t.informer.addEventHandler({
    onAdd: (o) => {
      badSeen.push(o.metadata.name!);
      if (o.metadata.name === 'a') throw new Error('sync boom');
    },
    onUpdate: async () => {
      throw new Error('async boom');
    },
  });
  const good = recorder();
  t.informer.addEventHandler(good.handler);
  t.informer.run();
  await settle();
  t.lw.add(widget('a'));
  t.lw.add(widget('b'));
  t.lw.modify(widget('b', { spec: { size: 2 } }));
  await settle();
  assert.deepEqual(badSeen, ['a', 'b']);
  assert.deepEqual(good.seen, ['add a@1', 'add b@2', 'update b@2 -> b@3']);
  assert.deepEqual(errors, ['add default/a: sync boom', 'update default/b: async boom']);
  assert.equal(t.logs.filter((e) => e.level === 'error' && e.msg === 'event handler failed').length, 2);
  assert.equal(t.informer.state.phase, 'watching');
  t.informer.dispose();
});

test('a handler added after sync gets synthetic initial adds for the cache, before any later event', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.lw.add(widget('b'));
  t.informer.run();
  await settle();
  t.lw.add(widget('c'));
  await settle();
  const late = recorder();
  const reg = t.informer.addEventHandler(late.handler);
  assert.equal(reg.hasSynced(), false, 'not synced until its initial adds are handled');
  t.lw.modify(widget('a', { spec: { size: 2 } }));
  await settle();
  assert.equal(reg.hasSynced(), true);
  assert.deepEqual(late.seen, ['add a@1 initial', 'add b@2 initial', 'add c@3 initial', 'update a@1 -> a@4']);
  t.informer.dispose();
});

test('registration hasSynced waits for a slow handler to finish its initial list', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const reg = t.informer.addEventHandler({ onAdd: () => gate });
  const quick = t.informer.addEventHandler({});
  t.informer.run();
  await settle();
  assert.equal(t.informer.hasSynced(), true);
  assert.equal(quick.hasSynced(), true);
  assert.equal(reg.hasSynced(), false);
  release();
  await settle();
  assert.equal(reg.hasSynced(), true);
  t.informer.dispose();
});

test('resync replays the cache to the handler that asked for it, as same-RV updates, every period', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.lw.add(widget('b'));
  const resyncing = recorder();
  const quiet = recorder();
  t.informer.addEventHandler(resyncing.handler, { resyncPeriodMs: 5000 });
  t.informer.addEventHandler(quiet.handler);
  t.informer.run();
  await settle();
  resyncing.seen.length = 0;
  quiet.seen.length = 0;
  t.clock.step(4999);
  await settle();
  assert.deepEqual(resyncing.seen, []);
  t.clock.step(1);
  await settle();
  assert.deepEqual(resyncing.seen, ['resync a@1 -> a@1', 'resync b@2 -> b@2']);
  t.lw.modify(widget('a', { spec: { size: 2 } }));
  await settle();
  t.clock.step(5000);
  await settle();
  assert.deepEqual(resyncing.seen.slice(2), ['update a@1 -> a@3', 'resync a@3 -> a@3', 'resync b@2 -> b@2'], 'resync replays the cache, newest state');
  assert.deepEqual(quiet.seen, ['update a@1 -> a@3']);
  t.informer.dispose();
});

test('an informer resync period below 1 s is its check period as given (client-go); only handler periods are raised to 1 s', async () => {
  const t = setup({ resyncPeriodMs: 500 });
  t.lw.add(widget('a'));
  t.informer.run();
  await settle();
  const h = recorder();
  t.informer.addEventHandler(h.handler, { resyncPeriodMs: 1500 });
  await settle();
  h.seen.length = 0;
  t.clock.step(1000);
  await settle();
  assert.deepEqual(h.seen, []);
  t.clock.step(500);
  await settle();
  assert.deepEqual(h.seen, ['resync a@1 -> a@1'], 'checked every 500 ms, so due at 1.5 s (a 1 s check would find it only at 2 s)');
  const byDefault = recorder();
  t.informer.addEventHandler(byDefault.handler); // the informer default, 500 ms, raised to 1 s for the handler
  await settle();
  byDefault.seen.length = 0;
  t.clock.step(500);
  await settle();
  assert.deepEqual(byDefault.seen, [], 'not every 500 ms');
  t.clock.step(500);
  await settle();
  assert.deepEqual(byDefault.seen, ['resync a@1 -> a@1']);
  t.informer.dispose();
});

test('resync periods: at least 1 s; after start, raised to the informer check period', async () => {
  const t = setup({ resyncPeriodMs: 10_000 });
  t.lw.add(widget('a'));
  const tiny = recorder();
  t.informer.addEventHandler(tiny.handler, { resyncPeriodMs: 10 }); // before start: clamped to 1 s, lowers the check period
  t.informer.run();
  await settle();
  tiny.seen.length = 0;
  t.clock.step(1000);
  await settle();
  assert.deepEqual(tiny.seen, ['resync a@1 -> a@1']);
  const late = recorder();
  t.informer.addEventHandler(late.handler, { resyncPeriodMs: 500 }); // after start: raised to the check period (1 s)
  await settle();
  late.seen.length = 0;
  t.clock.step(999);
  await settle();
  assert.deepEqual(late.seen, []);
  t.clock.step(1);
  await settle();
  assert.deepEqual(late.seen, ['resync a@1 -> a@1']);
  const byDefault = recorder();
  t.informer.addEventHandler(byDefault.handler); // the informer default: 10 s
  await settle();
  byDefault.seen.length = 0;
  t.clock.step(9000);
  await settle();
  assert.deepEqual(byDefault.seen, []);
  t.clock.step(1000);
  await settle();
  assert.deepEqual(byDefault.seen, ['resync a@1 -> a@1']);
  t.informer.dispose();
  await t.informer.whenStopped();
  assert.equal(t.clock.pendingTimers, 0, 'no resync or watch timer survives dispose');
});

test('resync ticks follow client-go: a handler resyncs at the first check-period tick at or after its period, not on a timer of its own', async () => {
  const t = setup({ resyncPeriodMs: 2000 }); // the check period: 2 s
  t.lw.add(widget('a'));
  const every3s = recorder();
  t.informer.addEventHandler(every3s.handler, { resyncPeriodMs: 3000 });
  t.informer.run();
  await settle();
  every3s.seen.length = 0;
  const at: number[] = [];
  for (let s = 1; s <= 8; s++) {
    const before = every3s.seen.length;
    t.clock.step(1000);
    await settle();
    if (every3s.seen.length > before) at.push(s * 1000);
  }
  // Due at 3 s, found due by the 4 s tick; then due at 7 s, found by the 8 s tick (a timer of its own: 3 s and 6 s).
  assert.deepEqual(at, [4000, 8000]);
  assert.deepEqual(every3s.seen, ['resync a@1 -> a@1', 'resync a@1 -> a@1']);
  t.informer.dispose();
});

test('after a resync tick, a relist\'s unchanged objects (same-RV updates) reach only the handlers that tick found due', async () => {
  const t = setup();
  t.lw.add(widget('keep'));
  t.lw.add(widget('changed'));
  const resyncing = recorder();
  const quiet = recorder();
  t.informer.addEventHandler(resyncing.handler, { resyncPeriodMs: 5000 }); // before run: the check period becomes 5 s
  t.informer.addEventHandler(quiet.handler); // no resync of its own
  t.informer.run();
  await settle();
  t.clock.step(5000); // the first tick: resyncing is due, quiet is not
  await settle();
  assert.deepEqual(resyncing.seen.slice(2), ['resync changed@2 -> changed@2', 'resync keep@1 -> keep@1']);
  resyncing.seen.length = 0;
  quiet.seen.length = 0;
  t.lw.modifyDropWatch(widget('changed', { spec: { size: 3 } }));
  t.lw.dropWatch(); // a failed watch: backoff, then relist
  await settle();
  t.clock.step(800);
  await settle();
  assert.deepEqual(quiet.seen, ['update changed@2 -> changed@3'], 'a real change reaches it; the unchanged object does not');
  assert.deepEqual(resyncing.seen, ['update changed@2 -> changed@3', 'resync keep@1 -> keep@1']);
  t.informer.dispose();
});

test('no resync while the informer relists or backs off: the ticks run only while a watch is up', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  const r = recorder();
  t.informer.addEventHandler(r.handler, { resyncPeriodMs: 1000 });
  t.informer.run();
  await settle();
  r.seen.length = 0;
  t.lw.failNextList(new Error('the server is away'), 3);
  t.lw.dropWatch(); // backoff, then three failed lists with growing backoffs in between
  await settle();
  let stepped = 0;
  const phase = (): string => t.informer.state.phase;
  while (phase() !== 'watching' && stepped < 60_000) {
    t.clock.step(100);
    stepped += 100;
    await settle();
    if (phase() !== 'watching') assert.deepEqual(r.seen, [], `no resync ${stepped} ms into the outage`);
  }
  assert.ok(stepped >= 5000, `the outage lasted ${stepped} ms: several resync periods`);
  assert.deepEqual(r.seen, ['resync a@1 -> a@1'], 'the relist that ended it: the unchanged object, once');
  t.clock.step(1000); // the watch is up again: the ticks run
  await settle();
  assert.deepEqual(r.seen, ['resync a@1 -> a@1', 'resync a@1 -> a@1']);
  t.informer.dispose();
});

test('an informer started without resync ignores a resync period asked by a handler added later (client-go), and says so', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.informer.run();
  await settle();
  const late = recorder();
  t.informer.addEventHandler(late.handler, { resyncPeriodMs: 1000 });
  await settle();
  assert.deepEqual(late.seen, ['add a@1 initial']);
  t.clock.step(10_000);
  await settle();
  assert.deepEqual(late.seen, ['add a@1 initial']);
  assert.ok(t.logs.some((e) => /started without resync/.test(e.msg)), JSON.stringify(t.logs));
  t.informer.dispose();
});

test('by default objects are kept as received (managedFields too); stripManagedFields drops them before anyone sees the object', async () => {
  for (const [transform, want] of [[undefined, true], [null, true], [stripManagedFields, false]] as const) {
    const t = setup(transform === undefined ? {} : { transform });
    t.lw.add(widget('a'));
    const seen: KubeObject[] = [];
    t.informer.addEventHandler({ onAdd: (o) => void seen.push(o), onUpdate: (_, n) => void seen.push(n) });
    t.informer.run();
    await settle();
    t.lw.modify(widget('a', { spec: { size: 2 } }));
    await settle();
    assert.equal(seen.length, 2);
    for (const o of [...seen, ...t.informer.getIndexer().list()]) assert.equal('managedFields' in o.metadata, want);
    t.informer.dispose();
  }
  assert.equal(stripManagedFields(widget('x')).metadata.managedFields, undefined);
});

test('the transform is applied to deletes (the object a watch DELETED carries), not to tombstones', async () => {
  const t = setup({ transform: stripManagedFields });
  t.lw.add(widget('a'));
  t.lw.add(widget('b'));
  const deleted: Array<KubeObject | DeletedFinalStateUnknown> = [];
  t.informer.addEventHandler({ onDelete: (o) => void deleted.push(o) });
  t.informer.run();
  await settle();
  t.lw.delete(widget('a'));
  await settle();
  assert.equal(deleted.length, 1);
  const d = deleted[0]!;
  assert.ok(!isTombstone(d));
  assert.equal(d.metadata.name, 'a');
  assert.equal('managedFields' in d.metadata, false, 'the deleted object went through the transform');
  // A relist that misses b: the tombstone holds the cached (already transformed) state, not a new transform.
  t.lw.deleteDropWatch(widget('b'));
  t.lw.dropWatch(); // a failed watch: backoff, then relist
  await settle();
  t.clock.step(2000);
  await settle();
  const tomb = deleted.find((x) => isTombstone(x));
  assert.ok(tomb && isTombstone(tomb));
  assert.equal(tomb.key, 'default/b');
  assert.equal('managedFields' in tomb.obj.metadata, false);
  t.informer.dispose();
});

test('a custom transform shapes what the cache and handlers get', async () => {
  const clock = new FakeClock();
  const lw = new FakeListerWatcher();
  lw.add(widget('a', { spec: { size: 1, big: 'x'.repeat(100) } }));
  const informer = new SharedIndexInformer({
    listerWatcher: lw,
    resource: widgets,
    clock,
    transform: (o) => ({ metadata: { name: o.metadata.name, namespace: o.metadata.namespace, resourceVersion: o.metadata.resourceVersion } }),
  });
  informer.run();
  await settle();
  assert.deepEqual(informer.getIndexer().getByKey('default/a'), { metadata: { name: 'a', namespace: 'default', resourceVersion: '1' } });
  informer.dispose();
});

test('indexers from the constructor and added after start; lookups by index', async () => {
  const clock = new FakeClock();
  const lw = new FakeListerWatcher();
  lw.add(widget('a', { namespace: 'n1', finalizers: ['f/x'], labels: { team: 'red' } }));
  lw.add(widget('b', { namespace: 'n2', labels: { team: 'red' } }));
  const informer = new SharedIndexInformer({ listerWatcher: lw, resource: widgets, clock, indexers: { [FINALIZER_INDEX]: finalizerIndexFunc } });
  informer.run();
  await settle();
  const idx = informer.getIndexer();
  assert.deepEqual(idx.indexKeys(FINALIZER_INDEX, 'f/x'), ['n1/a']);
  assert.deepEqual(idx.indexKeys(NAMESPACE_INDEX, 'n2'), ['n2/b']);
  informer.addIndexers({ team: (o) => (o.metadata.labels?.team ? [o.metadata.labels.team] : []) });
  assert.deepEqual(idx.indexKeys('team', 'red').sort(), ['n1/a', 'n2/b']);
  lw.modify(widget('b', { namespace: 'n2', labels: { team: 'blue' } }));
  await settle();
  assert.deepEqual(idx.indexKeys('team', 'red'), ['n1/a']);
  assert.deepEqual(idx.listIndexFuncValues('team').sort(), ['blue', 'red']);
  assert.throws(() => informer.addIndexers({ team: () => [] }), /conflict/);
  informer.dispose();
  assert.throws(() => informer.addIndexers({ other: () => [] }), /stopped/);
});

test('a delete for an object the cache never had is delivered (client-go RealFIFO, not DeltaFIFO)', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  const r = recorder();
  t.informer.addEventHandler(r.handler);
  t.informer.run();
  await settle();
  t.lw.addDropWatch(widget('ghost'));
  t.lw.delete(widget('ghost'));
  await settle();
  assert.deepEqual(r.seen, ['add a@1 initial', 'delete ghost@3']);
  assert.equal(t.informer.getIndexer().getByKey('default/ghost'), undefined);
  assert.equal(t.informer.lastSyncResourceVersion(), '3');
  t.informer.dispose();
});

test('disposing a registration stops its deliveries only', async () => {
  const t = setup();
  const a = recorder();
  const b = recorder();
  const regA = t.informer.addEventHandler(a.handler);
  t.informer.addEventHandler(b.handler);
  t.informer.run();
  await settle();
  t.lw.add(widget('x'));
  regA.dispose();
  t.lw.add(widget('y'));
  await settle();
  assert.deepEqual(a.seen, []);
  assert.deepEqual(b.seen, ['add x@1', 'add y@2']);
  t.informer.dispose();
});

test('state events follow the reflector; dispose is final', async () => {
  const t = setup();
  const phases: string[] = [];
  t.informer.onDidChangeState((s) => phases.push(s.phase));
  assert.equal(t.informer.state.phase, 'idle');
  const r = recorder();
  t.informer.addEventHandler(r.handler);
  t.informer.run();
  t.informer.run();
  await settle();
  t.informer.dispose();
  await t.informer.whenStopped();
  assert.deepEqual(phases, ['listing', 'watching', 'stopped']);
  assert.equal(t.lw.listCalls.length, 1, 'run() twice started one loop');
  assert.throws(() => t.informer.addEventHandler(recorder().handler), /stopped informer/);
  t.lw.add(widget('late'));
  t.informer.run();
  await settle();
  assert.deepEqual(r.seen, []);
  assert.equal(t.lw.listCalls.length, 1);
  assert.equal(t.lw.openWatches, 0);
});


/**
 * Runs an informer on `listerWatcher` whose transform strips managedFields and counts its calls per object name
 * in `calls`; `seen` gets every added object's name in delivery order.
 */
function runCountingInformer(
  listerWatcher: ConstructorParameters<typeof SharedIndexInformer>[0]['listerWatcher'],
  clock: FakeClock,
  calls: Map<string, number>,
  watchList?: boolean,
): { informer: SharedIndexInformer; seen: string[] } {
  const informer = new SharedIndexInformer({
    listerWatcher,
    resource: widgets,
    clock,
    ...(watchList === undefined ? {} : { watchList }),
    transform: (o) => {
      calls.set(o.metadata.name!, (calls.get(o.metadata.name!) ?? 0) + 1);
      return stripManagedFields(o);
    },
  });
  const seen: string[] = [];
  informer.addEventHandler({ onAdd: (o) => void seen.push(o.metadata.name!) });
  informer.run();
  return { informer, seen };
}
test('LIST pages are made cache objects as each page arrives; the transform runs once per object, on the LIST and the WatchList path alike', async () => {
  for (const watchList of [false, true]) {
    const clock = new FakeClock();
    const lw = new FakeListerWatcher();
    for (let i = 0; i < 1200; i++) lw.add(widget(`w${String(i).padStart(4, '0')}`));
    const calls = new Map<string, number>();
    let pagesSeen = 0;
    const list = lw.list.bind(lw);
    const counted = { ...lw, watchListSemanticsUnsupported: lw.watchListSemanticsUnsupported, list: async (o: Parameters<typeof list>[0], s: AbortSignal) => (pagesSeen++, list(o, s)), watch: lw.watch.bind(lw) };
    const { informer, seen } = runCountingInformer(counted, clock, calls, watchList);
    for (let i = 0; i < 10 && seen.length < 1200; i++) await settle();
    assert.equal(seen.length, 1200, `watchList ${watchList}`);
    assert.deepEqual(seen, [...seen].sort(), 'handlers see the list order');
    assert.ok([...calls.values()].every((n) => n === 1) && calls.size === 1200, 'one transform per object');
    assert.ok(informer.getIndexer().list().every((o) => !('managedFields' in o.metadata)));
    if (!watchList) assert.ok(pagesSeen >= 3, 'the list came in pages');
    // A change after the initial list (on WatchList: an event after the initial-events-end bookmark) is transformed once too.
    lw.modify(widget('w0000', { spec: { size: 2 } }));
    for (let i = 0; i < 10 && calls.get('w0000') === 1; i++) await settle();
    await settle();
    assert.equal(calls.get('w0000'), 2, `watchList ${watchList}: the update transformed once`);
    assert.equal((informer.getIndexer().getByKey('default/w0000')!.spec as { size: number }).size, 2);
    informer.dispose();
  }
});

test('a lister-watcher that hands every item, some items or no item to onItem: each object is transformed once, stored and delivered in list order', async () => {
  for (const mode of ['all', 'some', 'none'] as const) {
    const clock = new FakeClock();
    const lw = new FakeListerWatcher();
    for (let i = 0; i < 1200; i++) lw.add(widget(`w${String(i).padStart(4, '0')}`));
    const list = lw.list.bind(lw);
    let hooked = 0;
    const streaming = {
      ...lw,
      watchListSemanticsUnsupported: true,
      list: async (o: Parameters<typeof list>[0], s: AbortSignal, onItem?: (x: KubeObject) => KubeObject) => {
        const page = await list(o, s);
        if (onItem && mode !== 'none') page.items = page.items.map((x, i) => (mode === 'all' || i % 3 === 0 ? (hooked++, onItem(x)) : x));
        return page;
      },
      watch: lw.watch.bind(lw),
    };
    const calls = new Map<string, number>();
    const { informer, seen } = runCountingInformer(streaming, clock, calls);
    for (let i = 0; i < 10 && seen.length < 1200; i++) await settle();
    assert.equal(seen.length, 1200, mode);
    assert.deepEqual(seen, [...seen].sort(), `${mode}: handlers see the list order`);
    assert.ok(calls.size === 1200 && [...calls.values()].every((n) => n === 1), `${mode}: one transform per object`);
    assert.equal(hooked > 0, mode !== 'none', `${mode}: items went through the hook`);
    assert.equal(informer.getIndexer().listKeys().length, 1200);
    assert.ok(informer.getIndexer().list().every((o) => !('managedFields' in o.metadata)), `${mode}: the cache holds transformed objects`);
    informer.dispose();
  }
});
