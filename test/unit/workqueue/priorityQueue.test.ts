import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPriorityQueue, LOW_PRIORITY } from '../../../src/core/workqueue/priorityQueue.ts';
import { createControllerQueue } from '../../../src/core/workqueue/controllerQueue.ts';
import type { QueueEvent } from '../../../src/core/workqueue/queue.ts';
import { FakeClock, flushMicrotasks } from '../../fakes/fakeClock.ts';

function pq() {
  const clock = new FakeClock();
  const q = createPriorityQueue<string>({ clock });
  const events: QueueEvent<string>[] = [];
  q.onDidChange((e) => events.push(e));
  /** Hands out everything ready now, in order, calling done on each. */
  const drain = () => {
    const out: string[] = [];
    for (let k = q.tryGet(); k !== undefined; k = q.tryGet()) {
      out.push(k);
      q.done(k);
    }
    return out;
  };
  return { clock, q, events, drain };
}

test('an add of a waiting item makes it ready at once and drops the wait (no second delivery later)', () => {
  const { clock, q, events, drain } = pq();
  q.addAfter('a', 1000);
  assert.equal(q.len(), 0);
  assert.equal(q.waitingUntil('a'), clock.now() + 1000);
  q.add('a');
  assert.equal(q.len(), 1);
  assert.equal(q.waitingUntil('a'), undefined, 'the wait is gone');
  assert.equal(q.waitingLen(), 0);
  assert.equal(clock.pendingTimers, 0, 'its timer too');
  assert.deepEqual(events.slice(-2), [{ type: 'cancelWait', item: 'a' }, { type: 'add', item: 'a', queued: true, priority: 0 }]);
  assert.deepEqual(drain(), ['a']);
  clock.step(5000);
  assert.deepEqual(drain(), [], 'handed out once: the dropped wait never fires');

  // client-go's delaying queue keeps the wait: the same sequence delivers twice
  const cg = createControllerQueue<string>('client-go', { clock });
  cg.addAfter('a', 1000);
  cg.add('a');
  assert.equal(cg.tryGet(), 'a');
  cg.done('a');
  clock.step(1000);
  assert.equal(cg.tryGet(), 'a', 'client-go: the pending wait still fires');
  cg.done('a');
  cg.dispose();
  q.dispose();
});

test('an add-after of a ready item is a no-op; of a waiting item it keeps the earlier ready time', () => {
  const { clock, q, drain } = pq();
  q.add('a');
  q.addAfter('a', 500);
  assert.equal(q.len(), 1);
  assert.equal(q.waitingUntil('a'), undefined, 'still ready, no wait');
  assert.equal(clock.pendingTimers, 0);
  assert.deepEqual(drain(), ['a']);
  clock.step(500);
  assert.deepEqual(drain(), [], 'no delayed second delivery');

  q.addAfter('b', 300);
  q.addAfter('b', 900);
  assert.equal(q.waitingUntil('b'), clock.now() + 300, 'a later ready time never postpones');
  q.addAfter('b', 100);
  assert.equal(q.waitingUntil('b'), clock.now() + 100, 'an earlier one moves it forward');
  clock.step(99);
  assert.deepEqual(drain(), []);
  clock.step(1);
  assert.deepEqual(drain(), ['b']);
  assert.equal(clock.pendingTimers, 0);
  q.dispose();
});

test('a key being processed is never handed out twice: adds and elapsed waits meanwhile wait for done', () => {
  const { clock, q, events } = pq();
  q.add('a');
  assert.equal(q.tryGet(), 'a');
  assert.equal(q.isProcessing('a'), true);
  q.add('a');
  assert.deepEqual(events.at(-1), { type: 'add', item: 'a', queued: false, priority: 0 }, 'added while processing: not queued yet');
  assert.equal(q.isDirty('a'), true);
  assert.equal(q.len(), 1, "counted, as controller-runtime's Len() counts it (its ready tree holds it)");
  q.addAfter('b', 100);
  assert.equal(q.len(), 1, 'a waiting item is not counted');
  assert.equal(q.tryGet(), undefined, 'not handed out while processing');
  assert.equal(q.take('a'), false);
  q.done('a');
  assert.deepEqual(events.at(-1), { type: 'done', item: 'a', requeued: true });
  assert.equal(q.tryGet(), 'a');
  // a wait that elapses while the key is processing is parked too
  q.addAfter('a', 10);
  clock.step(10);
  assert.equal(q.isDirty('a'), true);
  assert.equal(q.tryGet(), undefined);
  q.done('a');
  assert.equal(q.tryGet(), 'a');
  q.done('a');
  assert.equal(q.tryGet(), undefined);
  q.dispose();
});

test('ready items go by priority, then by when they became ready; re-adds keep the highest priority', () => {
  const { clock, q, drain } = pq();
  q.addWithOpts({ priority: LOW_PRIORITY }, 'initial-1', 'initial-2');
  q.add('changed');
  q.addWithOpts({ priority: 10 }, 'urgent');
  q.addWithOpts({ priority: LOW_PRIORITY }, 'changed');
  assert.equal(q.priorityOf('changed'), 0, 'a lower priority never lowers a pending entry');
  assert.deepEqual(q.queuedItems(), ['urgent', 'changed', 'initial-1', 'initial-2']);
  q.addWithOpts({ priority: 0 }, 'initial-1');
  assert.deepEqual(q.queuedItems(), ['urgent', 'changed', 'initial-1', 'initial-2'], 'raised: to the back of its new priority');
  assert.equal(q.tryGet(), 'urgent');
  assert.equal(q.processingPriority('urgent'), 10, 'handed out with its priority (GetWithPriority)');
  q.done('urgent');
  assert.deepEqual(drain(), ['changed', 'initial-1', 'initial-2']);

  // waiting items become ready in ready-time order and queue behind items already ready at their priority
  q.addAfter('late', 200);
  q.addAfter('early', 100);
  q.addWithOpts({ afterMs: 150, priority: 5 }, 'mid-high');
  clock.step(100);
  q.add('plain');
  clock.step(100);
  assert.deepEqual(q.queuedItems(), ['mid-high', 'early', 'plain', 'late']);
  assert.deepEqual(drain(), ['mid-high', 'early', 'plain', 'late']);
  q.dispose();
});

test('rate-limited adds wait the per-item exponential delay (5 ms → 1000 s); with afterMs the shorter wins; forget resets', () => {
  const { clock, q } = pq();
  const delays: number[] = [];
  for (let i = 0; i < 20; i++) {
    q.addRateLimited('a');
    delays.push(q.waitingUntil('a')! - clock.now());
    q.cancelWait('a');
  }
  assert.deepEqual(delays.slice(0, 4), [5, 10, 20, 40]);
  assert.equal(delays[17], 655_360);
  assert.equal(delays[18], 1_000_000);
  assert.equal(q.numRequeues('a'), 20);
  q.forget('a');
  assert.equal(q.numRequeues('a'), 0);
  q.addWithOpts({ rateLimited: true, afterMs: 2 }, 'b');
  assert.equal(q.waitingUntil('b'), clock.now() + 2, 'afterMs shorter than the limiter');
  q.addWithOpts({ rateLimited: true, afterMs: 60_000 }, 'c');
  assert.equal(q.waitingUntil('c'), clock.now() + 5, 'the limiter shorter than afterMs');
  q.dispose();
});

test('shutDown releases blocked getters and get reports shutdown at once, even with items left (controller-runtime does not drain)', async () => {
  const { q } = pq();
  const blocked = q.get();
  q.shutDown();
  assert.deepEqual(await blocked, { shutdown: true });
  const { q: q2 } = pq();
  q2.add('a');
  q2.shutDown();
  assert.deepEqual(await q2.get(), { shutdown: true });
  q2.add('b');
  assert.equal(q2.len(), 1, 'adds after shutdown are ignored');
  await q2.shutDownWithDrain();
  q.dispose();
  q2.dispose();
});

test('a blocked get wakes for a ready item, and an aborted get takes nothing', async () => {
  const { clock, q } = pq();
  const p = q.get();
  q.addAfter('a', 50);
  clock.step(50);
  await flushMicrotasks();
  assert.deepEqual(await p, { item: 'a', shutdown: false });
  const ac = new AbortController();
  const p2 = q.get(ac.signal);
  ac.abort(new Error('paused'));
  await assert.rejects(p2, /paused/);
  q.add('b');
  assert.equal(q.len(), 1, 'the aborted get took nothing');
  q.done('a');
  q.dispose();
});

test('queuedItems(limit) is the head of queuedItems(): priorities first, FIFO within one', () => {
  const { q } = pq();
  for (let i = 0; i < 300; i++) q.addWithOpts({ priority: i % 3 === 0 ? LOW_PRIORITY : i % 3 === 1 ? 0 : 10 }, `k${i}`);
  const all = q.queuedItems();
  assert.equal(all.length, 300);
  assert.deepEqual(all.slice(0, 3), ['k2', 'k5', 'k8']);
  for (const limit of [0, 1, 50, 150, 299, 300, 1000]) assert.deepEqual(q.queuedItems(limit), all.slice(0, limit), `limit ${limit}`);
  // Handing out the head keeps them in step.
  const head = q.tryGet()!;
  assert.equal(head, 'k2');
  assert.deepEqual(q.queuedItems(5), q.queuedItems().slice(0, 5));
  q.done(head);
});

test('rate-limited add with a negative afterMs is ready now, as controller-runtime (only an unset After defers to the limiter); the failure still counts', () => {
  const { clock, q, drain } = pq();
  q.addRateLimited('warm'); // one failure: the next limiter delay would be 10 ms
  q.cancelWait('warm');
  q.addWithOpts({ rateLimited: true, afterMs: -1 }, 'warm');
  assert.equal(q.waitingUntil('warm'), undefined, 'not waiting for the limiter');
  assert.equal(q.len(), 1);
  assert.equal(q.numRequeues('warm'), 2, 'the limiter was asked (one more failure)');
  assert.deepEqual(drain(), ['warm']);
  // afterMs 0 (unset) still takes the limiter's delay
  q.addWithOpts({ rateLimited: true, afterMs: 0 }, 'warm');
  assert.equal(q.waitingUntil('warm'), clock.now() + 20);
  q.dispose();
});
