import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDelayingQueue } from '../../../src/core/workqueue/delayingQueue.ts';
import type { QueueEvent } from '../../../src/core/workqueue/queue.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';

function setup() {
  const clock = new FakeClock();
  const q = createDelayingQueue<string>({ clock });
  return { clock, q };
}

test('addAfter adds the item exactly when its delay elapses, not before', () => {
  const { clock, q } = setup();
  const t0 = clock.now();
  q.addAfter('a', 50);
  assert.equal(q.len(), 0);
  assert.equal(q.waitingUntil('a'), t0 + 50);
  clock.step(49);
  assert.equal(q.len(), 0);
  clock.step(1);
  assert.deepEqual(q.queuedItems(), ['a']);
  assert.equal(q.waitingUntil('a'), undefined);
  assert.equal(clock.pendingTimers, 0);
});

test('a delay <= 0 (or NaN) adds at once', () => {
  const { q } = setup();
  q.addAfter('a', 0);
  q.addAfter('b', -5);
  q.addAfter('c', Number.NaN);
  assert.deepEqual(q.queuedItems(), ['a', 'b', 'c']);
});

test('a pending ready time only moves earlier', () => {
  const { clock, q } = setup();
  const t0 = clock.now();
  q.addAfter('a', 100);
  q.addAfter('a', 200);
  assert.equal(q.waitingUntil('a'), t0 + 100, 'a later addAfter does not postpone');
  q.addAfter('a', 30);
  assert.equal(q.waitingUntil('a'), t0 + 30, 'an earlier one moves it');
  clock.step(30);
  assert.deepEqual(q.queuedItems(), ['a']);
  assert.equal(q.tryGet(), 'a');
  q.done('a');
  clock.step(1000);
  assert.equal(q.len(), 0, 'the superseded 100 ms and 200 ms waits do not fire');
  assert.equal(clock.pendingTimers, 0);
});

test('waits end in ready-time order, ties in scheduling order, with one timer armed', () => {
  const { clock, q } = setup();
  q.addAfter('c', 30);
  q.addAfter('a', 10);
  q.addAfter('b', 20);
  q.addAfter('b2', 20);
  assert.equal(clock.pendingTimers, 1);
  assert.deepEqual(q.nextWaiting(), { item: 'a', readyAt: clock.now() + 10 });
  assert.deepEqual(q.waitingItems().map((w) => w.item), ['a', 'b', 'b2', 'c']);
  assert.equal(q.waitingLen(), 4);
  clock.step(25);
  assert.deepEqual(q.queuedItems(), ['a', 'b', 'b2']);
  clock.step(5);
  assert.deepEqual(q.queuedItems(), ['a', 'b', 'b2', 'c']);
  assert.equal(clock.pendingTimers, 0);
});

test('many random waits fire in order at their exact times', () => {
  const { clock, q } = setup();
  const t0 = clock.now();
  let s = 3;
  const rnd = () => (s = (s * 1664525 + 1013904223) >>> 0) % 1000;
  const due = new Map<string, number>();
  for (let i = 0; i < 300; i++) {
    const k = `k${i % 150}`;
    const d = 1 + rnd();
    q.addAfter(k, d);
    due.set(k, Math.min(due.get(k) ?? Infinity, t0 + d));
  }
  const seen: Array<[string, number]> = [];
  q.onDidChange((e) => { if (e.type === 'ready') seen.push([e.item, clock.now()]); });
  clock.step(2000);
  assert.equal(seen.length, 150);
  for (const [k, at] of seen) assert.equal(at, due.get(k), k);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i]![1] >= seen[i - 1]![1]);
});

test('a delayed item that becomes ready while processing waits for done', () => {
  const { clock, q } = setup();
  q.add('a');
  assert.equal(q.tryGet(), 'a');
  q.addAfter('a', 10);
  clock.step(10);
  assert.equal(q.len(), 0);
  assert.equal(q.isDirty('a'), true);
  q.done('a');
  assert.deepEqual(q.queuedItems(), ['a']);
});

test('a plain add does not cancel a pending wait (client-go behaviour)', () => {
  const { clock, q } = setup();
  q.addAfter('a', 10);
  q.add('a');
  assert.equal(q.tryGet(), 'a');
  q.done('a');
  clock.step(10);
  assert.deepEqual(q.queuedItems(), ['a']);
});

test('cancelWait drops a pending wait and its timer', () => {
  const { clock, q } = setup();
  q.addAfter('a', 10);
  q.addAfter('b', 20);
  assert.equal(q.cancelWait('a'), true);
  assert.equal(q.cancelWait('a'), false);
  assert.equal(q.waitingUntil('a'), undefined);
  clock.step(10);
  assert.equal(q.len(), 0);
  clock.step(10);
  assert.deepEqual(q.queuedItems(), ['b']);
  assert.equal(q.cancelWait('b'), false);
  assert.equal(clock.pendingTimers, 0);
});

test('shutting down drops waits and timers; addAfter is then ignored', () => {
  const { clock, q } = setup();
  q.addAfter('a', 10);
  q.dispose();
  assert.equal(clock.pendingTimers, 0);
  q.addAfter('b', 10);
  assert.equal(clock.pendingTimers, 0);
  clock.step(100);
  assert.equal(q.len(), 0);
});

test('waits longer than one timer can hold re-arm until due', () => {
  const { clock, q } = setup();
  const day = 86_400_000;
  q.addAfter('a', 30 * day);
  clock.step(25 * day);
  assert.equal(q.len(), 0);
  assert.equal(clock.pendingTimers, 1);
  clock.step(5 * day);
  assert.deepEqual(q.queuedItems(), ['a']);
});

test('reports wait, ready and cancelWait transitions', () => {
  const { clock, q } = setup();
  const events: QueueEvent<string>[] = [];
  q.onDidChange((e) => events.push(e));
  const t0 = clock.now();
  q.addAfter('a', 10);
  q.addAfter('a', 20);
  q.addAfter('a', 5);
  q.addAfter('b', 5);
  q.cancelWait('b');
  clock.step(5);
  assert.deepEqual(events, [
    { type: 'wait', item: 'a', readyAt: t0 + 10 },
    { type: 'wait', item: 'a', readyAt: t0 + 5 },
    { type: 'wait', item: 'b', readyAt: t0 + 5 },
    { type: 'cancelWait', item: 'b' },
    { type: 'ready', item: 'a' },
    { type: 'add', item: 'a', queued: true },
  ]);
});
