import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_SLICE_MS, DeliveryBudget } from '../../../src/core/cache/deliveryBudget.ts';
import { InformerFactory } from '../../../src/core/cache/informerFactory.ts';
import { type Notification, ProcessorListener } from '../../../src/core/cache/processorListener.ts';
import { SharedIndexInformer } from '../../../src/core/cache/sharedIndexInformer.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { FakeListerWatcher } from '../../fakes/fakeListerWatcher.ts';
import { settle, widget, widgets } from './helpers.ts';

// Slicing: a handler "takes" fake time by stepping the FakeClock; the budget measures on that clock, and a slice's
// continuation runs in a later task (setImmediate), which `settle()` lets happen. Nothing sleeps.

/** A listener whose handler takes `costMs` of fake time per notification, recording the slice that handled each. */
function costly(options: { costMs: number; sliceMs: number; budget?: DeliveryBudget; clock?: FakeClock }) {
  const clock = options.clock ?? new FakeClock();
  const budget = options.budget ?? new DeliveryBudget(clock, options.sliceMs);
  const seen: Array<{ name: string; slice: number }> = [];
  let disposed = 0;
  const listener: ProcessorListener = new ProcessorListener({
    budget,
    resyncPeriodMs: 0,
    upstreamHasSynced: () => true,
    onHandlerError: (e) => assert.fail(`handler threw: ${String(e)}`),
    onDispose: () => disposed++,
    handler: {
      onAdd: (o) => {
        seen.push({ name: o.metadata.name!, slice: listener.slices });
        clock.step(options.costMs);
      },
    },
  });
  const add = (name: string, initial = true) => listener.add({ kind: 'add', obj: widget(name), isInInitialList: initial } as Notification<KubeObject>);
  return { clock, budget, listener, seen, add, disposedCount: () => disposed };
}

const names = (n: number, prefix = 'w') => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(2, '0')}`);
const perSlice = (seen: Array<{ slice: number }>) => {
  const m = new Map<number, number>();
  for (const s of seen) m.set(s.slice, (m.get(s.slice) ?? 0) + 1);
  return [...m.values()];
};

test('delivery is cut into slices: at most sliceMs per task (plus the notification running when it ran out), order kept', async () => {
  const t = costly({ costMs: 4, sliceMs: 10 });
  for (const n of names(10)) t.add(n);
  await settle();
  // 4, 8, 12 ms: the third notification uses up the slice; the rest waits for a later task.
  assert.deepEqual(t.seen.map((s) => s.name), names(3));
  assert.equal(t.listener.pending, 7);
  assert.equal(t.budget.pending, 1, 'the next slice is deferred');
  for (let i = 0; i < 10 && t.listener.pending > 0; i++) await settle();
  assert.deepEqual(t.seen.map((s) => s.name), names(10), 'every notification, in the order added');
  assert.deepEqual(perSlice(t.seen), [3, 3, 3, 1]);
  assert.equal(t.listener.slices, 4);
  assert.equal(t.budget.pending, 0, 'nothing is deferred once the buffer is empty');
});

test('notifications added while delivery waits for its next slice go after the buffered ones (one loop only)', async () => {
  const t = costly({ costMs: 6, sliceMs: 10 });
  for (const n of names(4, 'a')) t.add(n);
  await settle();
  assert.deepEqual(t.seen.map((s) => s.name), ['a00', 'a01']);
  for (const n of names(2, 'b')) t.add(n);
  for (let i = 0; i < 5; i++) await settle();
  assert.deepEqual(t.seen.map((s) => s.name), ['a00', 'a01', 'a02', 'a03', 'b00', 'b01']);
  assert.deepEqual(perSlice(t.seen), [2, 2, 2], 'the adds joined the waiting loop: no second loop ran beside it');
});

test('listeners sharing a budget share each task\'s slice; a deferred slice always handles at least one', async () => {
  const clock = new FakeClock();
  const budget = new DeliveryBudget(clock, 10);
  const a = costly({ costMs: 4, sliceMs: 10, budget, clock });
  const b = costly({ costMs: 4, sliceMs: 10, budget, clock });
  for (const n of names(6, 'a')) a.add(n);
  for (const n of names(6, 'b')) b.add(n);
  await settle();
  // a: 4, 8, 12 ms → spent; b's loop starts in the spent task and waits for a later one.
  assert.deepEqual([a.seen.length, b.seen.length], [3, 0]);
  await settle();
  // The next task: a's continuation runs first (3 more: 12 ms); b's continuation still handles one.
  assert.deepEqual([a.seen.length, b.seen.length], [6, 1]);
  for (let i = 0; i < 10 && (a.listener.pending || b.listener.pending); i++) await settle();
  assert.deepEqual(a.seen.map((s) => s.name), names(6, 'a'));
  assert.deepEqual(b.seen.map((s) => s.name), names(6, 'b'));
});

test('a loop started in a task whose budget is spent waits for a later task (events arriving one by one); time between handlers is not charged', async () => {
  const t = costly({ costMs: 0, sliceMs: 10 });
  t.budget.charge(10); // e.g. the informer stored a whole list in this task
  t.add('late');
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(t.seen.length, 0, 'not in the spent task');
  await settle();
  assert.deepEqual(t.seen.map((s) => s.name), ['late']);
  // A clock moved between handlers (not by them) charges nothing: a fresh task's loop runs everything.
  t.clock.step(60_000);
  for (const n of names(5)) t.add(n);
  await settle();
  assert.equal(t.seen.length, 6);
});

test('hasSynced stays false until the last initial-list add was handled, however many slices it takes', async () => {
  const t = costly({ costMs: 5, sliceMs: 10 });
  for (const n of names(6)) t.add(n);
  const synced: boolean[] = [];
  await settle();
  synced.push(t.listener.hasSynced());
  while (t.listener.pending > 0) {
    await settle();
    synced.push(t.listener.hasSynced());
  }
  assert.deepEqual(synced, [false, false, true]);
});

test('dispose while delivery waits for its next slice cancels that slice: nothing more is delivered', async () => {
  const t = costly({ costMs: 10, sliceMs: 10 });
  for (const n of names(5)) t.add(n);
  await settle();
  assert.equal(t.seen.length, 1);
  assert.equal(t.budget.pending, 1);
  t.listener.dispose();
  assert.equal(t.budget.pending, 0, 'the deferred slice was cancelled');
  assert.equal(t.disposedCount(), 1);
  for (let i = 0; i < 3; i++) await settle();
  assert.equal(t.seen.length, 1);
  t.add('late');
  await settle();
  assert.equal(t.seen.length, 1, 'a disposed listener takes nothing');
});

test('disposing the budget cancels every deferred slice', async () => {
  const t = costly({ costMs: 10, sliceMs: 10 });
  for (const n of names(3)) t.add(n);
  await settle();
  assert.equal(t.budget.pending, 1);
  t.budget.dispose();
  assert.equal(t.budget.pending, 0);
  for (let i = 0; i < 3; i++) await settle();
  assert.equal(t.seen.length, 1);
});

test('a handler that takes no time on the clock gets everything in one slice', async () => {
  const t = costly({ costMs: 0, sliceMs: DEFAULT_SLICE_MS });
  for (const n of names(50)) t.add(n, false);
  await settle();
  assert.equal(t.seen.length, 50);
  assert.equal(t.listener.slices, 1);
  assert.equal(t.budget.pending, 0);
  assert.ok(DEFAULT_SLICE_MS > 0 && DEFAULT_SLICE_MS <= 20);
});

test('informer: a slow handler gets the initial list in slices; its registration syncs after the last one; order kept', async () => {
  const clock = new FakeClock();
  const lw = new FakeListerWatcher();
  for (const n of names(12)) lw.add(widget(n));
  const budget = new DeliveryBudget(clock, 10);
  const informer = new SharedIndexInformer({ listerWatcher: lw, resource: widgets, clock, random: () => 0, deliveryBudget: budget });
  const slow: string[] = [];
  const fast: string[] = [];
  const slowReg = informer.addEventHandler({
    onAdd: (o) => {
      slow.push(o.metadata.name!);
      clock.step(5);
    },
  });
  const fastReg = informer.addEventHandler({ onAdd: (o) => void fast.push(o.metadata.name!) });
  informer.run();
  await settle();
  assert.equal(informer.hasSynced(), true, 'the informer itself synced when the list was stored');
  assert.deepEqual(slow, names(2));
  assert.equal(slowReg.hasSynced(), false, 'the slow handler has not handled every initial add yet');
  lw.add(widget('later'));
  for (let i = 0; i < 20 && !slowReg.hasSynced(); i++) await settle();
  assert.equal(slowReg.hasSynced(), true);
  for (let i = 0; i < 5; i++) await settle();
  assert.deepEqual(slow, [...names(12), 'later'], 'the watch event after the list, in order');
  assert.deepEqual(fast, [...names(12), 'later']);
  assert.equal(fastReg.hasSynced(), true);
  informer.dispose();
});

test('informer: stopping it while a handler waits for its next slice cancels that slice', async () => {
  const clock = new FakeClock();
  const lw = new FakeListerWatcher();
  for (const n of names(12)) lw.add(widget(n));
  const budget = new DeliveryBudget(clock, 10);
  const informer = new SharedIndexInformer({ listerWatcher: lw, resource: widgets, clock, random: () => 0, deliveryBudget: budget });
  const slow: string[] = [];
  const reg = informer.addEventHandler({
    onAdd: (o) => {
      slow.push(o.metadata.name!);
      clock.step(5);
    },
  });
  informer.run();
  await settle();
  assert.deepEqual(slow, names(2));
  assert.equal(budget.pending, 1, 'a slice is waiting');
  informer.dispose();
  assert.equal(budget.pending, 0, 'stopping the informer cancelled the waiting slice');
  assert.equal((reg as ProcessorListener).isDisposed, true);
  for (let i = 0; i < 5; i++) await settle();
  assert.deepEqual(slow, names(2), 'nothing is delivered after the informer stopped');
});

test('InformerFactory: its informers share one budget, released when the factory stops', async () => {
  const clock = new FakeClock();
  const lws: FakeListerWatcher[] = [];
  const factory = new InformerFactory({
    clock,
    listerWatcherFactory: () => {
      const lw = new FakeListerWatcher();
      for (const n of names(5)) lw.add(widget(n));
      lws.push(lw);
      return lw;
    },
  });
  const seen: string[] = [];
  const a = factory.informerFor(widgets);
  const b = factory.informerFor({ ...widgets, resource: 'gadgets', kind: 'Gadget' });
  for (const [tag, inf] of [['a', a], ['b', b]] as const) {
    inf.addEventHandler({
      onAdd: (o) => {
        seen.push(`${tag}:${o.metadata.name}`);
        clock.step(6);
      },
    });
  }
  factory.start();
  await settle();
  // One task: a's first (6 ms) and second (12 ms ≥ 10: spent); b's loop waits for a later task.
  assert.deepEqual(seen, ['a:w00', 'a:w01']);
  for (let i = 0; i < 20 && seen.length < 10; i++) await settle();
  assert.deepEqual(seen.filter((s) => s.startsWith('a:')), names(5).map((n) => `a:${n}`));
  assert.deepEqual(seen.filter((s) => s.startsWith('b:')), names(5).map((n) => `b:${n}`));
  factory.dispose();
});
