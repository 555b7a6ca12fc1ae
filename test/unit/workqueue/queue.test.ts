import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWorkQueue, type QueueEvent } from '../../../src/core/workqueue/queue.ts';
import { flushMicrotasks } from '../../fakes/fakeClock.ts';

async function getItem<T>(q: { get(): Promise<{ item: T; shutdown: false } | { shutdown: true }> }): Promise<T> {
  const r = await q.get();
  assert.equal(r.shutdown, false);
  return (r as { item: T }).item;
}

test('hands items out in FIFO order', async () => {
  const q = createWorkQueue<string>();
  for (const k of ['a', 'b', 'c']) q.add(k);
  assert.equal(q.len(), 3);
  assert.deepEqual(q.queuedItems(), ['a', 'b', 'c']);
  assert.equal(await getItem(q), 'a');
  assert.equal(await getItem(q), 'b');
  assert.equal(await getItem(q), 'c');
  assert.equal(q.len(), 0);
});

test('N adds before a get give one processing', async () => {
  const q = createWorkQueue<string>();
  q.add('a');
  q.add('b');
  q.add('a');
  q.add('a');
  assert.equal(q.len(), 2);
  assert.equal(await getItem(q), 'a');
  assert.equal(await getItem(q), 'b');
  assert.equal(q.tryGet(), undefined);
});

test('an item re-added while processing waits for done, then is queued once', async () => {
  const q = createWorkQueue<string>();
  q.add('a');
  assert.equal(await getItem(q), 'a');
  q.add('a');
  q.add('a');
  assert.equal(q.len(), 0, 'not queued while processing');
  assert.equal(q.tryGet(), undefined);
  assert.equal(q.isProcessing('a'), true);
  assert.equal(q.isDirty('a'), true);
  q.done('a');
  assert.equal(q.isProcessing('a'), false);
  assert.deepEqual(q.queuedItems(), ['a']);
  assert.equal(await getItem(q), 'a');
  q.done('a');
  assert.equal(q.len(), 0);
  assert.equal(q.isDirty('a'), false);
});

test('done of an item that is not processing is a no-op', () => {
  const q = createWorkQueue<string>();
  q.add('a');
  q.done('a');
  q.done('zzz');
  assert.deepEqual(q.queuedItems(), ['a']);
});

test('get blocks until an item is added and wakes one waiter per item, in order', async () => {
  const q = createWorkQueue<string>();
  const got: string[] = [];
  const w1 = q.get().then((r) => got.push(`w1:${r.shutdown ? 'shutdown' : r.item}`));
  const w2 = q.get().then((r) => got.push(`w2:${r.shutdown ? 'shutdown' : r.item}`));
  await flushMicrotasks();
  assert.deepEqual(got, []);
  q.add('x');
  await flushMicrotasks();
  assert.deepEqual(got, ['w1:x']);
  q.add('y');
  await Promise.all([w1, w2]);
  assert.deepEqual(got, ['w1:x', 'w2:y']);
});

test('shutDown wakes waiters, ignores new adds, and lets consumers drain what was queued', async () => {
  const q = createWorkQueue<string>();
  const waiter = q.get();
  q.shutDown();
  assert.deepEqual(await waiter, { shutdown: true });
  assert.equal(q.shuttingDown(), true);
  q.add('late');
  assert.equal(q.len(), 0);

  const q2 = createWorkQueue<string>();
  q2.add('a');
  q2.add('b');
  q2.shutDown();
  assert.equal(await getItem(q2), 'a');
  assert.equal(await getItem(q2), 'b');
  assert.deepEqual(await q2.get(), { shutdown: true });
});

test('shutDownWithDrain resolves only when in-flight items are done', async () => {
  const q = createWorkQueue<string>();
  q.add('a');
  q.add('b');
  const a = await getItem(q);
  const b = await getItem(q);
  let drained = false;
  const p = q.shutDownWithDrain().then(() => { drained = true; });
  await flushMicrotasks();
  assert.equal(drained, false);
  q.done(a);
  await flushMicrotasks();
  assert.equal(drained, false, 'b is still processing');
  q.done(b);
  await p;
  assert.equal(drained, true);
});

test('shutDownWithDrain resolves at once when nothing is processing, and a later shutDown ends the wait', async () => {
  const q = createWorkQueue<string>();
  await q.shutDownWithDrain();
  const q2 = createWorkQueue<string>();
  q2.add('a');
  await getItem(q2);
  let drained = false;
  const p = q2.shutDownWithDrain().then(() => { drained = true; });
  await flushMicrotasks();
  assert.equal(drained, false);
  q2.shutDown();
  await p;
  assert.equal(drained, true);
});

test('an item re-added during processing is still requeued by done after shutdown, so drain processes it', async () => {
  const q = createWorkQueue<string>();
  q.add('a');
  await getItem(q);
  q.add('a');
  q.shutDown();
  q.done('a');
  assert.equal(await getItem(q), 'a');
  q.done('a');
  assert.deepEqual(await q.get(), { shutdown: true });
});

test('get with an aborted signal rejects without taking an item, and passes its wake-up on', async () => {
  const q = createWorkQueue<string>();
  const ac = new AbortController();
  const aborted = q.get(ac.signal);
  const other = q.get();
  ac.abort(new Error('paused'));
  await assert.rejects(aborted, /paused/);
  q.add('a');
  assert.deepEqual(await other, { item: 'a', shutdown: false });

  // woken, then aborted before running: the item goes to the next waiter
  const q2 = createWorkQueue<string>();
  const ac2 = new AbortController();
  const first = q2.get(ac2.signal);
  const second = q2.get();
  q2.add('b');
  ac2.abort(new Error('late abort'));
  await assert.rejects(first, /late abort/);
  assert.deepEqual(await second, { item: 'b', shutdown: false });
  assert.equal(q2.len(), 0);

  const q3 = createWorkQueue<string>();
  q3.add('c');
  await assert.rejects(q3.get(AbortSignal.abort(new Error('already'))), /already/);
  assert.equal(q3.len(), 1);
});

test('take hands out a chosen queued item out of order, and nothing else', () => {
  const q = createWorkQueue<string>();
  q.add('a');
  q.add('b');
  q.add('c');
  assert.equal(q.take('b'), true);
  assert.equal(q.isProcessing('b'), true);
  assert.deepEqual(q.queuedItems(), ['a', 'c']);
  assert.equal(q.take('b'), false, 'already processing');
  assert.equal(q.take('zzz'), false, 'not queued');
  q.add('b');
  assert.equal(q.take('b'), false, 'dirty while processing is not takeable');
  q.done('b');
  assert.deepEqual(q.queuedItems(), ['a', 'c', 'b']);
});

test('keeps FIFO order across internal compaction of a long queue', async () => {
  const q = createWorkQueue<number>();
  const out: number[] = [];
  for (let i = 0; i < 5000; i++) q.add(i);
  for (let i = 0; i < 3000; i++) {
    const x = q.tryGet()!;
    out.push(x);
    q.done(x);
  }
  for (let i = 5000; i < 6000; i++) q.add(i);
  for (let x = q.tryGet(); x !== undefined; x = q.tryGet()) {
    out.push(x);
    q.done(x);
  }
  assert.deepEqual(out, Array.from({ length: 6000 }, (_, i) => i));
});

test('reports every transition in order', async () => {
  const q = createWorkQueue<string>();
  const events: QueueEvent<string>[] = [];
  q.onDidChange((e) => events.push(e));
  q.add('a');
  q.add('a');
  await getItem(q);
  q.add('a');
  q.done('a');
  await getItem(q);
  q.done('a');
  q.shutDown();
  assert.deepEqual(events, [
    { type: 'add', item: 'a', queued: true },
    { type: 'get', item: 'a' },
    { type: 'add', item: 'a', queued: false },
    { type: 'done', item: 'a', requeued: true },
    { type: 'get', item: 'a' },
    { type: 'done', item: 'a', requeued: false },
    { type: 'shutdown' },
  ]);
});

test('many workers never process an item concurrently with itself, and every add after the last processing start is processed', async () => {
  const q = createWorkQueue<string>();
  let seed = 42;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
  const inFlight = new Set<string>();
  let violations = 0;
  let processed = 0;
  /** per key: the add counter when its latest processing started, and the last add counter */
  const lastAdd = new Map<string, number>();
  const lastStartSeen = new Map<string, number>();
  let addCounter = 0;

  const worker = async () => {
    for (;;) {
      const r = await q.get();
      if (r.shutdown) return;
      if (inFlight.has(r.item)) violations++;
      inFlight.add(r.item);
      lastStartSeen.set(r.item, addCounter);
      processed++;
      await flushMicrotasks(1 + Math.floor(rnd() * 5));
      inFlight.delete(r.item);
      q.done(r.item);
    }
  };
  const workers = Array.from({ length: 8 }, worker);
  for (let i = 0; i < 2000; i++) {
    const k = keys[Math.floor(rnd() * keys.length)]!;
    addCounter++;
    lastAdd.set(k, addCounter);
    q.add(k);
    if (rnd() < 0.3) await flushMicrotasks(1 + Math.floor(rnd() * 3));
  }
  await q.shutDownWithDrain();
  q.shutDown();
  await Promise.all(workers);
  assert.equal(violations, 0);
  assert.ok(processed >= keys.length && processed <= 2000, `processed ${processed}`);
  // stingy but complete: every key's last add happened before (or at) the start of its last processing
  for (const [k, added] of lastAdd) assert.ok(lastStartSeen.get(k)! >= added, `${k} lost its last add`);
});
