import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generationChanged } from '../../../src/core/controller/predicate.ts';
import { TerminalError, type Request } from '../../../src/core/controller/reconcile.ts';
import type { ReconcileContextBase } from '../../../src/core/controller/controller.ts';
import type { KeyState } from '../../../src/core/controller/keyState.ts';
import { itemExponentialFailureRateLimiter } from '../../../src/core/workqueue/rateLimiters.ts';
import { FakeInformer } from './support/fakeInformer.ts';
import { deferred, harness, settle, widget, type Harness } from './support/harness.ts';
import { createLogger } from '../../../src/core/log.ts';

// ---- the result switch -----------------------------------------------------------------------

test('success: the key is forgotten and idle; the initial add is why it ran', async () => {
  const h = harness();
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  assert.equal(h.clock.pendingTimers, 0, 'no queue or timer before start');
  assert.equal(c.enqueue('ns/a'), false, 'nothing to enqueue into before start');
  await c.start();
  await settle();
  assert.deepEqual(h.calls, ['ns/a']);
  const s = c.keyState('ns/a')!;
  assert.equal(s.phase, 'idle');
  assert.equal(s.requeues, 0);
  assert.equal(s.reconciles, 1);
  assert.deepEqual(s.lastOutcome, { kind: 'success' });
  assert.equal(s.lastTriggers.length, 1);
  assert.deepEqual({ ...s.lastTriggers[0], at: 0 }, { kind: 'informer', event: 'add', resource: 'widgets.v1.lab.reconcile.dev', objectKey: 'ns/a', resourceVersion: '101', initial: true, at: 0 });
  assert.equal(h.contexts[0]!.primary.resource, 'widgets');
  assert.equal(h.widgets.runCalls, 1, 'start runs the informer (idempotent)');
  await c.stop();
});

test('error: addRateLimited backs off 5, 10, 20 ms per failure; a success resets the count', async () => {
  const h = harness();
  let n = 0;
  h.setImpl(() => {
    if (++n <= 3) throw new Error(`boom ${n}`);
    return {};
  });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  const expectBackoff = (requeues: number, delay: number, msg: string) => {
    const s = c.keyState('ns/a')!;
    assert.equal(s.phase, 'backoff');
    assert.equal(s.requeues, requeues);
    assert.deepEqual(s.waiting, { kind: 'backoff', dueAt: h.clock.now() + delay });
    assert.equal(s.lastError, msg);
    assert.equal(s.lastOutcome?.kind, 'error');
  };
  expectBackoff(1, 5, 'boom 1');
  h.clock.step(4);
  await settle();
  assert.equal(h.calls.length, 1, 'not before the backoff');
  h.clock.step(1);
  await settle();
  assert.equal(h.calls.length, 2);
  expectBackoff(2, 10, 'boom 2');
  h.clock.step(10);
  await settle();
  expectBackoff(3, 20, 'boom 3');
  h.clock.step(20);
  await settle();
  assert.equal(h.calls.length, 4);
  const s = c.keyState('ns/a')!;
  assert.equal(s.phase, 'idle');
  assert.equal(s.requeues, 0, 'success forgets');
  assert.equal(s.lastOutcome?.kind, 'success');
  assert.equal(s.lastError, 'boom 3', 'the last error is kept for the view');
  assert.deepEqual({ ...s.lastTriggers[0], at: 0 }, { kind: 'backoff', attempt: 3, delayMs: 20, error: 'boom 3', at: 0 });
  assert.equal(h.clock.pendingTimers, 0);
  await c.stop();
});

test('TerminalError: not requeued; the failure count is kept until a later success (controller-runtime)', async () => {
  const h = harness();
  let n = 0;
  h.setImpl(() => {
    n++;
    if (n === 1) throw new Error('transient');
    throw new TerminalError('spec is invalid');
  });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  assert.equal(c.keyState('ns/a')!.requeues, 1);
  h.clock.step(5);
  await settle();
  const s = c.keyState('ns/a')!;
  assert.deepEqual(s.lastOutcome, { kind: 'terminal', message: 'spec is invalid' });
  assert.equal(s.phase, 'idle');
  assert.equal(s.requeues, 1, 'a terminal error does not reset the per-key failure count');
  assert.equal(h.clock.pendingTimers, 0);
  h.clock.step(3_600_000);
  await settle();
  assert.equal(h.calls.length, 2);
  // a new event still reconciles it
  h.widgets.update('ns/a', (o) => ({ ...o, spec: { size: 2 } }));
  await settle();
  assert.equal(h.calls.length, 3);
  assert.equal(c.keyState('ns/a')!.requeues, 1, 'still counted: the third call failed terminally again');
  await c.stop();
});

test('requeueAfter: forget + addAfter; runs again when due, with the reason; 0 or negative is plain success', async () => {
  const h = harness();
  let n = 0;
  h.setImpl(() => {
    n++;
    if (n === 1) throw new Error('first');
    if (n === 2) return { requeueAfterMs: 30_000, reason: 'waiting for the database' };
    if (n === 3) return { requeueAfterMs: 0 };
    return { requeueAfterMs: -5 };
  });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  h.clock.step(5);
  await settle();
  let s = c.keyState('ns/a')!;
  assert.deepEqual(s.lastOutcome, { kind: 'requeueAfter', afterMs: 30_000, reason: 'waiting for the database' });
  assert.equal(s.phase, 'requeueAfter');
  assert.equal(s.requeues, 0, 'forgotten: the backoff does not grow');
  assert.deepEqual(s.waiting, { kind: 'requeueAfter', dueAt: h.clock.now() + 30_000 });
  h.clock.step(29_999);
  await settle();
  assert.equal(h.calls.length, 2);
  h.clock.step(1);
  await settle();
  assert.equal(h.calls.length, 3);
  s = c.keyState('ns/a')!;
  assert.deepEqual({ ...s.lastTriggers[0], at: 0 }, { kind: 'requeueAfter', afterMs: 30_000, reason: 'waiting for the database', at: 0 });
  assert.deepEqual(s.lastOutcome, { kind: 'success' });
  assert.equal(s.phase, 'idle');
  assert.equal(h.clock.pendingTimers, 0);
  c.enqueue('ns/a');
  await settle();
  assert.deepEqual(c.keyState('ns/a')!.lastOutcome, { kind: 'success' });
  await c.stop();
});

test('the reconcile timeout is off by default: a long reconcile is never aborted', async () => {
  const h = harness();
  const hang = deferred<object>();
  h.setImpl(() => hang.promise);
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  h.clock.step(24 * 3_600_000);
  await settle();
  assert.equal(h.contexts[0]!.signal.aborted, false);
  assert.equal(c.keyState('ns/a')!.phase, 'processing');
  assert.equal(h.clock.pendingTimers, 0, 'no deadline timer');
  hang.resolve({});
  await settle();
  assert.deepEqual(c.keyState('ns/a')!.lastOutcome, { kind: 'success' });
  await c.stop();
});

test('past its timeout a reconcile only has its signal aborted: the key stays processing until the call settles, never overlaps, then backs off', async () => {
  const h = harness({ reconcileTimeoutMs: 1000, maxConcurrentReconciles: 2 });
  const hang = deferred<object>();
  let running = 0;
  let overlaps = 0;
  let n = 0;
  h.setImpl(async () => {
    if (++running > 1) overlaps++;
    try {
      if (++n === 1) {
        await hang.promise;
        throw new Error('gave up: deadline exceeded');
      }
      return {};
    } finally {
      running--;
    }
  });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  assert.equal(c.keyState('ns/a')!.phase, 'processing');
  h.clock.step(999);
  await settle();
  assert.equal(h.contexts[0]!.signal.aborted, false);
  h.clock.step(1);
  await settle();
  assert.equal(h.contexts[0]!.signal.aborted, true, 'the deadline aborts the signal');
  assert.equal(c.keyState('ns/a')!.phase, 'processing', 'still processing: done(key) waits for the call');
  assert.equal(c.status().inFlight, 1);
  h.clock.step(1000);
  await settle();
  assert.equal(h.journal.entries({ kinds: ['warning'] }).length, 0, 'within the grace after the deadline: no warning yet');
  h.clock.step(1);
  await settle();
  const stillRunning = h.journal.entries({ kinds: ['warning'] });
  assert.equal(stillRunning.length, 1, 'still running 1 s after the deadline: said while it runs');
  assert.match(stillRunning[0]!.kind === 'warning' ? stillRunning[0]!.message : '', /^the reconcile of ns\/a has not returned 1 s after its 1000 ms timeout aborted its signal: it ignores the signal, and the key stays in processing until it returns \(pass ctx\.signal on/);
  // events for the key while the timed-out call still runs do not start a second reconcile, even with a free worker
  h.widgets.update('ns/a', (o) => ({ ...o, spec: { size: 2 } }));
  h.clock.step(60_000);
  await settle();
  assert.equal(h.calls.length, 1);
  assert.equal(c.keyState('ns/a')!.dirtyWhileProcessing, true);
  hang.resolve({});
  await settle();
  const ended = h.journal.entries({ kinds: ['reconcileEnd'] });
  const first = ended[0]!;
  assert.equal(first.kind === 'reconcileEnd' && first.outcome.kind, 'error');
  assert.equal(first.kind === 'reconcileEnd' && first.outcome.kind === 'error' && first.outcome.timedOut, true);
  assert.equal(first.kind === 'reconcileEnd' && first.durationMs, 62_001);
  assert.equal(h.journal.entries({ kinds: ['warning'] }).length, 1, 'one warning for one late reconcile: none again when it returns');
  // re-added while processing → queued again at once (it went dirty), and the error retry is merged
  await settle();
  h.clock.step(5);
  await settle();
  assert.equal(overlaps, 0);
  assert.equal(c.keyState('ns/a')!.lastOutcome?.kind, 'success');
  assert.equal(h.clock.pendingTimers, 0, 'the deadline timer is cleared');
  await c.stop();
});

test('a reconcile abandoned by stop() that is still running delays the next reconcile of its key after a restart', async () => {
  const h = harness();
  const hang = deferred<object>();
  let running = 0;
  let overlaps = 0;
  let n = 0;
  h.setImpl(async () => {
    if (++running > 1) overlaps++;
    try {
      if (++n === 1) await hang.promise;
      return {};
    } finally {
      running--;
    }
  });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  await c.stop();
  assert.equal(h.contexts[0]!.signal.aborted, true);
  await c.start();
  await settle();
  assert.equal(h.calls.length, 1, 'the restarted controller waits for the abandoned call');
  assert.equal(c.keyState('ns/a')!.phase, 'processing');
  // …and says why the key is processing with no call of its own running.
  assert.match(JSON.stringify(h.journal.entries({ kinds: ['warning'] })), /ns\/a waits for its reconcile abandoned when the controller stopped, which has not returned yet.*pass the signal on; reconnecting starts a new controller/);
  hang.resolve({});
  await settle();
  assert.equal(h.calls.length, 2);
  assert.equal(overlaps, 0);
  assert.match(JSON.stringify(h.journal.entries({ kinds: ['warning'] })), /a reconcile of ns\/a, abandoned when the controller stopped, finished later/);
  await c.stop();
});

test('an abandoned reconcile that fails with the stop itself (it passed ctx.signal on) is no warning; another failure is', async () => {
  const h = harness({ maxConcurrentReconciles: 2 });
  h.setImpl((req, ctx) => new Promise((_resolve, reject) => {
    // "a" honours the signal (as a client call given ctx.signal does); "b" fails on its own after the stop.
    ctx.signal.addEventListener('abort', () => reject(req.name === 'a' ? ctx.signal.reason : new Error('disk full')), { once: true });
  }));
  h.widgets.add(widget('a'));
  h.widgets.add(widget('b'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  assert.equal(h.calls.length, 2);
  await c.stop();
  await settle();
  const warnings = h.journal.entries({ kinds: ['warning'] }).map((w) => (w.kind === 'warning' ? w.message : ''));
  assert.deepEqual(warnings.filter((m) => /abandoned/.test(m)), ['a reconcile of ns/b, abandoned when the controller stopped, failed (disk full) later']);
});

test('a synchronous throw, a non-Error rejection and a throwing context factory are errors, not crashes', async () => {
  const h = harness();
  h.setImpl((req) => {
    if (req.name === 'a') throw new Error('sync throw');
    if (req.name === 'b') return Promise.reject('a plain string');
    return {};
  });
  h.widgets.add(widget('a'));
  h.widgets.add(widget('b'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  assert.equal(c.keyState('ns/a')!.lastError, 'sync throw');
  assert.equal(c.keyState('ns/b')!.lastError, 'a plain string');
  await c.stop();

  const h2 = harness({ contextFactory: () => { throw new Error('no client for you'); } });
  h2.widgets.add(widget('a'));
  const c2 = h2.builder.for(h2.widgets).build(h2.reconciler);
  await c2.start();
  await settle();
  assert.equal(c2.keyState('ns/a')!.lastError, 'no client for you');
  assert.equal(c2.keyState('ns/a')!.phase, 'backoff');
  assert.deepEqual(h2.calls, [], 'the reconciler was not called');
  await c2.stop();
});

// ---- concurrency -------------------------------------------------------------------------------

test('maxConcurrentReconciles bounds parallel work; a key is never reconciled concurrently; an event during its reconcile runs it once more after', async () => {
  const h = harness({ maxConcurrentReconciles: 3 });
  const inFlight = new Set<string>();
  let maxParallel = 0;
  let overlaps = 0;
  const holds: Array<{ key: string; release: () => void }> = [];
  h.setImpl(async (req) => {
    if (inFlight.has(req.key)) overlaps++;
    inFlight.add(req.key);
    maxParallel = Math.max(maxParallel, inFlight.size);
    const d = deferred<void>();
    holds.push({ key: req.key, release: () => d.resolve() });
    await d.promise;
    inFlight.delete(req.key);
    return {};
  });
  for (const n of ['a', 'b', 'c', 'd', 'e', 'f']) h.widgets.add(widget(n));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  assert.equal(c.status().inFlight, 3);
  assert.deepEqual(c.snapshot().queue, ['ns/d', 'ns/e', 'ns/f']);
  // a changes twice while it is being reconciled
  h.widgets.update('ns/a', (o) => ({ ...o, spec: { size: 2 } }));
  h.widgets.update('ns/a', (o) => ({ ...o, spec: { size: 3 } }));
  assert.equal(c.keyState('ns/a')!.dirtyWhileProcessing, true);
  assert.equal(c.keyState('ns/a')!.reasons.length, 2);
  while (holds.length > 0) {
    holds.shift()!.release();
    await settle();
  }
  assert.equal(overlaps, 0);
  assert.equal(maxParallel, 3);
  assert.equal(h.calls.filter((k) => k === 'ns/a').length, 2, 'two updates during processing → one more reconcile');
  assert.equal(h.calls.length, 7);
  assert.equal(c.keyState('ns/a')!.lastTriggers.length, 2);
  await c.stop();
});

// ---- the priority queue (controller-runtime's default) -------------------------------------------

test('priority queue: the initial list and resyncs go in at -100, so a real change runs first; key state and journal show priorities', async () => {
  const h = harness({ startPaused: true });
  for (const n of ['a', 'b', 'c']) h.widgets.add(widget(n));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  assert.deepEqual(c.snapshot().queue, ['ns/a', 'ns/b', 'ns/c']);
  assert.equal(c.keyState('ns/a')!.priority, -100);
  h.widgets.update('ns/c', (o) => ({ ...o, spec: { size: 5 } }));
  assert.equal(c.keyState('ns/c')!.priority, 0, 'a real update raises the pending entry');
  assert.deepEqual(c.snapshot().queue, ['ns/c', 'ns/a', 'ns/b'], 'and moves it ahead of the initial list');
  h.widgets.add(widget('d'));
  assert.deepEqual(c.snapshot().queue, ['ns/c', 'ns/d', 'ns/a', 'ns/b']);
  c.resume();
  await settle();
  assert.deepEqual(h.calls, ['ns/c', 'ns/d', 'ns/a', 'ns/b']);
  const starts = h.journal.entries({ kinds: ['reconcileStart'] }).map((e) => e.kind === 'reconcileStart' && [e.key, e.priority]);
  assert.deepEqual(starts, [['ns/c', 0], ['ns/d', 0], ['ns/a', -100], ['ns/b', -100]]);
  assert.ok(h.journal.entries({ kinds: ['queue'] }).some((e) => e.kind === 'queue' && e.transition === 'reprioritized' && e.key === 'ns/c' && e.priority === 0));
  assert.equal(c.keyState('ns/a')!.priority, undefined, 'idle: no priority');
  // a resync (same resourceVersion) is low priority; a real change of another key overtakes it
  c.pause();
  h.widgets.resync();
  h.widgets.update('ns/b', (o) => ({ ...o, spec: { size: 7 } }));
  assert.deepEqual(c.snapshot().queue, ['ns/b', 'ns/a', 'ns/c', 'ns/d']);
  assert.equal(c.keyState('ns/a')!.priority, -100);
  await c.stop();
});

test('priority queue: an event for a key waiting for its backoff runs it now and drops the wait (client-go would run it twice)', async () => {
  for (const workQueue of ['priority', 'client-go'] as const) {
    const h = harness({ workQueue, rateLimiter: () => itemExponentialFailureRateLimiter(1000, 1000) });
    let n = 0;
    h.setImpl(() => {
      if (++n === 1) throw new Error('first');
      return {};
    });
    h.widgets.add(widget('a'));
    const c = h.builder.for(h.widgets).build(h.reconciler);
    await c.start();
    await settle();
    assert.equal(c.keyState('ns/a')!.phase, 'backoff');
    h.widgets.update('ns/a', (o) => ({ ...o, spec: { size: 2 } }));
    await settle();
    assert.equal(h.calls.length, 2, `${workQueue}: the event runs it at once`);
    h.clock.step(1000);
    await settle();
    assert.equal(h.calls.length, workQueue === 'priority' ? 2 : 3, `${workQueue}: the backoff wait ${workQueue === 'priority' ? 'was dropped' : 'still fires'}`);
    await c.stop();
  }
});

test('Result.priority sets the priority of the next enqueue; a retry keeps the priority the key was handed out with; deprecated requeue is a rate-limited add', async () => {
  const h = harness({ startPaused: true });
  let n = 0;
  h.setImpl((req) => {
    if (req.name !== 'a') return {};
    n++;
    if (n === 1) throw new Error('transient');
    if (n === 2) return { requeueAfterMs: 100, priority: 50 };
    if (n === 3 || n === 4) return { requeue: true, reason: 'poll' };
    return {};
  });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  const r1 = await c.step();
  assert.equal(r1.kind === 'reconciled' && r1.outcome.kind, 'error');
  assert.equal(c.keyState('ns/a')!.priority, -100, 'the retry keeps the initial list\'s priority');
  h.clock.step(5);
  await settle();
  await c.step();
  assert.deepEqual(c.keyState('ns/a')!.lastOutcome, { kind: 'requeueAfter', afterMs: 100 });
  assert.equal(c.keyState('ns/a')!.priority, 50);
  assert.equal(c.keyState('ns/a')!.requeues, 0, 'requeueAfter forgets');
  h.clock.step(100);
  await settle();
  const r3 = await c.step();
  assert.equal(r3.kind === 'reconciled' && r3.outcome.kind, 'requeue');
  assert.equal(c.keyState('ns/a')!.phase, 'backoff');
  assert.equal(c.keyState('ns/a')!.requeues, 1, 'requeue counts like a failure (rate-limited)');
  assert.equal(c.keyState('ns/a')!.priority, 50, 'handed out at 50, re-added at 50');
  assert.equal(c.keyState('ns/a')!.waiting!.dueAt - h.clock.now(), 5);
  h.clock.step(5);
  await settle();
  await c.step();
  assert.equal(c.keyState('ns/a')!.requeues, 2);
  assert.equal(c.keyState('ns/a')!.waiting!.dueAt - h.clock.now(), 10, 'and its delay grows');
  h.clock.step(10);
  await settle();
  await c.step();
  assert.deepEqual(c.keyState('ns/a')!.lastOutcome, { kind: 'success' });
  assert.equal(c.keyState('ns/a')!.requeues, 0);
  await c.stop();
});

test('a thrown error with a numeric priority retries at that priority (Result.Priority returned with an error); any other priority is ignored', async () => {
  const h = harness({ startPaused: true });
  let n = 0;
  h.setImpl((req) => {
    if (req.name !== 'a') return {};
    n++;
    if (n === 1) throw Object.assign(new Error('quota'), { priority: 10 });
    if (n === 2) throw Object.assign(new Error('again'), { priority: 'high' });
    return {};
  });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  const r1 = await c.step();
  assert.equal(r1.kind === 'reconciled' && r1.outcome.kind, 'error');
  assert.equal(c.keyState('ns/a')!.phase, 'backoff');
  assert.equal(c.keyState('ns/a')!.priority, 10, 'the retry runs at the error\'s priority, not the initial list\'s -100');
  h.clock.step(5);
  await settle();
  await c.step();
  assert.equal(c.keyState('ns/a')!.priority, 10, 'a priority that is not a number is ignored: the retry keeps the priority it ran with');
  assert.equal(c.keyState('ns/a')!.requeues, 2);
  await c.stop();
});

test('a thrown error saying what result it dropped (ignoredResult) keeps it on the outcome and logs controller-runtime\'s warning; a terminal error is logged as a Reconciler error too', async () => {
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
  const h = harness({ startPaused: true, log: createLogger((level, msg, fields) => lines.push({ level, msg, fields })) });
  let n = 0;
  h.setImpl((req) => {
    if (req.name !== 'a') return {};
    n++;
    if (n === 1) throw Object.assign(new Error('quota'), { ignoredResult: 'requeueAfterMs 5000' });
    throw Object.assign(new TerminalError('bad spec'), { ignoredResult: 'requeueAfterMs 100' });
  });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  const r1 = await c.step();
  assert.deepEqual(r1.kind === 'reconciled' && { kind: r1.outcome.kind, ignored: (r1.outcome as { ignored?: string }).ignored }, { kind: 'error', ignored: 'requeueAfterMs 5000' });
  assert.equal(c.keyState('ns/a')!.phase, 'backoff', 'the requeue-after was dropped: the error backs off');
  assert.ok(lines.some((l) => /both a result and an error: the result is ignored/.test(l.msg) && l.fields.ignored === 'requeueAfterMs 5000' && l.fields.key === 'ns/a'), JSON.stringify(lines));
  h.clock.step(5);
  await settle();
  const r2 = await c.step();
  assert.deepEqual(r2.kind === 'reconciled' && { kind: r2.outcome.kind, ignored: (r2.outcome as { ignored?: string }).ignored }, { kind: 'terminal', ignored: 'requeueAfterMs 100' });
  assert.ok(lines.some((l) => l.msg === 'Reconciler error' && l.fields.terminal === true && l.fields.error === 'bad spec'), JSON.stringify(lines));
  await c.stop();
});

// ---- sources and predicates ------------------------------------------------------------------

test('generationChanged on the primary drops status writes and resyncs but not spec changes or requeue-after; passResync lets resyncs through', async () => {
  const h = harness();
  let requeue = false;
  h.setImpl(() => (requeue ? { requeueAfterMs: 1000 } : {}));
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets, { predicates: [generationChanged()] }).build(h.reconciler);
  await c.start();
  await settle();
  assert.equal(h.calls.length, 1);
  h.widgets.writeStatus('ns/a', { ready: true });
  await settle();
  assert.equal(h.calls.length, 1, 'a status write does not re-trigger');
  const dropped = h.journal.entries({ kinds: ['informer'] }).at(-1)!;
  assert.equal(dropped.kind === 'informer' && dropped.filteredBy, 'generationChanged');
  assert.deepEqual(dropped.kind === 'informer' && dropped.enqueued, []);
  h.widgets.update('ns/a', (o) => ({ ...o, spec: { size: 5 } }));
  await settle();
  assert.equal(h.calls.length, 2, 'a spec change does');
  h.widgets.resync();
  await settle();
  assert.equal(h.calls.length, 2, 'a periodic resync does not (controller-runtime GenerationChangedPredicate)');
  const droppedResync = h.journal.entries({ kinds: ['informer'] }).at(-1)!;
  assert.equal(droppedResync.kind === 'informer' && droppedResync.event, 'resync');
  assert.equal(droppedResync.kind === 'informer' && droppedResync.filteredBy, 'generationChanged');
  requeue = true;
  h.widgets.update('ns/a', (o) => ({ ...o, spec: { size: 6 } }));
  await settle();
  h.clock.step(1000);
  await settle();
  assert.equal(h.calls.length, 4, 'requeue-after is not subject to predicates');
  await c.stop();

  const h3 = harness();
  h3.widgets.add(widget('a'));
  const c3 = h3.builder.for(h3.widgets, { predicates: [generationChanged({ passResync: true })] }).build(h3.reconciler);
  await c3.start();
  await settle();
  h3.widgets.resync();
  await settle();
  assert.equal(h3.calls.length, 2, 'with passResync a periodic resync does');
  assert.equal(c3.keyState('ns/a')!.lastTriggers[0]!.kind === 'informer' && (c3.keyState('ns/a')!.lastTriggers[0] as { event: string }).event, 'resync');
  await c3.stop();

  const h2 = harness();
  h2.widgets.add(widget('a'));
  const c2 = h2.builder.for(h2.widgets).build(h2.reconciler);
  await c2.start();
  await settle();
  h2.widgets.writeStatus('ns/a', { ready: true });
  await settle();
  assert.equal(h2.calls.length, 2, 'without the predicate a status write re-triggers');
  await c2.stop();
});

test('withEventFilter applies to every source; a throwing predicate drops the event with a warning', async () => {
  const h = harness();
  const cms = new FakeInformer({ kind: 'ConfigMap', resource: 'configmaps', group: '' });
  h.widgets.add(widget('a'));
  const c = h.builder
    .for(h.widgets)
    .owns(cms)
    .withEventFilter({ name: 'noAdds', create: () => false, update: () => true, delete: () => true })
    .build(h.reconciler);
  await c.start();
  await settle();
  assert.equal(h.calls.length, 0, 'the initial add was filtered');
  cms.add({ metadata: { name: 'a-cm', namespace: 'ns', ownerReferences: [{ apiVersion: 'lab.reconcile.dev/v1', kind: 'Widget', name: 'a', uid: 'u', controller: true }] } });
  await settle();
  assert.equal(h.calls.length, 0, 'the child add too');
  cms.update('ns/a-cm', (o) => ({ ...o, data: { x: '1' } }));
  await settle();
  assert.deepEqual(h.calls, ['ns/a']);
  await c.stop();

  const h2 = harness();
  h2.widgets.add(widget('a'));
  const c2 = h2.builder.for(h2.widgets, { predicates: [{ name: 'broken', create: () => { throw new Error('bad predicate'); }, update: () => true, delete: () => true }] }).build(h2.reconciler);
  await c2.start();
  await settle();
  assert.equal(h2.calls.length, 0);
  const w = h2.journal.entries({ kinds: ['warning'] });
  assert.equal(w.length, 1);
  assert.match(w[0]!.kind === 'warning' ? w[0]!.message : '', /predicate broken threw on add of ns\/a: bad predicate/);
  await c2.stop();
});

test('owns: a child event enqueues its controlling owner (matching kind and group); why-queued names the child', async () => {
  const h = harness();
  const cms = new FakeInformer({ kind: 'ConfigMap', resource: 'configmaps', group: '' });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).owns(cms).build(h.reconciler);
  await c.start();
  await settle();
  assert.deepEqual(h.calls, ['ns/a']);
  const ref = { apiVersion: 'lab.reconcile.dev/v1', kind: 'Widget', name: 'a', uid: 'u' };
  cms.add({ metadata: { name: 'a-cm', namespace: 'ns', ownerReferences: [{ ...ref, controller: true }] } });
  cms.add({ metadata: { name: 'not-controller', namespace: 'ns', ownerReferences: [{ ...ref, controller: false }] } });
  cms.add({ metadata: { name: 'other-kind', namespace: 'ns', ownerReferences: [{ ...ref, kind: 'Gadget', controller: true }] } });
  cms.add({ metadata: { name: 'other-group', namespace: 'ns', ownerReferences: [{ ...ref, apiVersion: 'apps/v1', controller: true }] } });
  await settle();
  assert.deepEqual(h.calls, ['ns/a', 'ns/a']);
  const trig = c.keyState('ns/a')!.lastTriggers;
  assert.deepEqual({ ...trig[0], at: 0 }, { kind: 'owned', event: 'add', resource: 'configmaps.v1', child: 'ns/a-cm', childKind: 'ConfigMap', resourceVersion: '101', at: 0 });
  const entries = h.journal.entries({ kinds: ['informer'] }).filter((e) => e.kind === 'informer' && e.role === 'owned');
  assert.deepEqual(entries.map((e) => e.kind === 'informer' && [e.objectKey, e.enqueued]), [
    ['ns/a-cm', ['ns/a']],
    ['ns/not-controller', []],
    ['ns/other-kind', []],
    ['ns/other-group', []],
  ]);
  cms.update('ns/a-cm', (o) => ({ ...o, data: { k: 'v' } }));
  await settle();
  cms.delete('ns/a-cm', { tombstone: true });
  await settle();
  assert.equal(h.calls.length, 4);
  assert.equal((c.keyState('ns/a')!.lastTriggers[0] as { event: string }).event, 'delete');
  assert.deepEqual(h.journal.entries({ key: 'ns/a-cm', kinds: ['informer'] }).map((e) => e.kind === 'informer' && e.event), ['add', 'update', 'delete']);
  await c.stop();
});

test('watches: the map function turns watched objects into keys', async () => {
  const h = harness();
  const secrets = new FakeInformer({ kind: 'Secret', resource: 'secrets', group: '' });
  h.widgets.add(widget('a'));
  h.widgets.add(widget('b'));
  const c = h.builder
    .for(h.widgets)
    .watches(secrets, (o) => (o.metadata.labels?.['widget'] ? [`${o.metadata.namespace}/${o.metadata.labels['widget']}`] : []))
    .build(h.reconciler);
  await c.start();
  await settle();
  h.calls.length = 0;
  secrets.add({ metadata: { name: 's', namespace: 'ns', labels: { widget: 'b' } } });
  secrets.add({ metadata: { name: 'unrelated', namespace: 'ns' } });
  await settle();
  assert.deepEqual(h.calls, ['ns/b']);
  assert.equal(c.keyState('ns/b')!.lastTriggers[0]!.kind, 'watch');
  await c.stop();
});

// ---- debugger controls -----------------------------------------------------------------------

test('paused: workers take nothing while the queue fills; step runs exactly one (FIFO or chosen key) and stays paused; resume drains', async () => {
  const h = harness({ startPaused: true, maxConcurrentReconciles: 2 });
  for (const n of ['a', 'b', 'c', 'd']) h.widgets.add(widget(n));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  assert.deepEqual(h.calls, []);
  assert.equal(c.status().paused, true);
  assert.deepEqual(c.snapshot().queue, ['ns/a', 'ns/b', 'ns/c', 'ns/d']);
  const r1 = await c.step();
  assert.equal(r1.kind, 'reconciled');
  assert.equal(r1.kind === 'reconciled' && r1.key, 'ns/a');
  assert.deepEqual(r1.kind === 'reconciled' && r1.outcome, { kind: 'success' });
  await settle();
  assert.deepEqual(h.calls, ['ns/a'], 'exactly one');
  const r2 = await c.step({ key: 'ns/c' });
  assert.equal(r2.kind === 'reconciled' && r2.key, 'ns/c');
  await settle();
  assert.deepEqual(h.calls, ['ns/a', 'ns/c']);
  assert.deepEqual(c.snapshot().queue, ['ns/b', 'ns/d']);
  h.widgets.add(widget('e'));
  await settle();
  // the queue keeps filling while paused; a new object (priority 0) goes before the initial list's keys (-100)
  assert.deepEqual(c.snapshot().queue, ['ns/e', 'ns/b', 'ns/d'], 'the queue keeps filling while paused');
  assert.equal(h.calls.length, 2);
  c.resume();
  await settle();
  assert.deepEqual(h.calls, ['ns/a', 'ns/c', 'ns/e', 'ns/b', 'ns/d']);
  // pause while running: new work waits
  c.pause();
  h.widgets.update('ns/a', (o) => ({ ...o, spec: { size: 9 } }));
  await settle();
  assert.equal(h.calls.length, 5);
  assert.equal(c.keyState('ns/a')!.phase, 'queued');
  c.resume();
  await settle();
  assert.equal(h.calls.length, 6);
  const journalActions = h.journal.entries({ kinds: ['control'] }).map((e) => e.kind === 'control' && e.action);
  assert.deepEqual(journalActions, ['start', 'step', 'step', 'resume', 'pause', 'resume']);
  await c.stop();
});

test('step reports a key still in backoff with its due time, and runs it with force; empty queue reports the next wait', async () => {
  const h = harness({ startPaused: true });
  h.setImpl((req) => {
    if (req.name === 'b') throw new Error('b fails');
    return {};
  });
  for (const n of ['a', 'b', 'c']) h.widgets.add(widget(n));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await c.step();
  const rb = await c.step();
  assert.equal(rb.kind === 'reconciled' && rb.outcome.kind, 'error');
  const due = h.clock.now() + 5;
  assert.equal(rb.kind === 'reconciled' && rb.outcome.kind === 'error' && rb.outcome.retryAt, due);
  assert.deepEqual(await c.step({ key: 'ns/b' }), { kind: 'notReady', key: 'ns/b', waiting: 'backoff', dueAt: due });
  assert.equal(h.calls.length, 2, 'nothing ran');
  const forced = await c.step({ key: 'ns/b', force: true });
  assert.equal(forced.kind === 'reconciled' && forced.outcome.kind, 'error');
  assert.deepEqual(forced.kind === 'reconciled' && forced.triggers.map((t) => t.kind === 'manual' && t.note), ['forced before its backoff wait ended']);
  assert.equal(c.keyState('ns/b')!.requeues, 2);
  assert.equal(c.keyState('ns/b')!.waiting?.dueAt, h.clock.now() + 10);
  await c.step();
  assert.deepEqual(h.calls, ['ns/a', 'ns/b', 'ns/b', 'ns/c']);
  assert.deepEqual(await c.step(), { kind: 'empty', next: { key: 'ns/b', dueAt: h.clock.now() + 10, waiting: 'backoff' } });
  // an idle key can be stepped: a manual request
  const ra = await c.step({ key: 'ns/a' });
  assert.equal(ra.kind === 'reconciled' && ra.triggers[0]!.kind, 'manual');
  assert.equal(c.status().paused, true);
  // the worker stays paused even when the backoff expires
  h.clock.step(10);
  await settle();
  assert.equal(c.keyState('ns/b')!.phase, 'queued');
  assert.equal(h.calls.length, 5);
  c.resume();
  await settle();
  assert.equal(h.calls.length, 6);
  await c.stop();
});

test('step: busy while the key is being reconciled; a step on a running controller pauses it; notRunning when stopped', async () => {
  const h = harness();
  const hold = deferred<object>();
  h.setImpl((req) => (req.name === 'a' ? hold.promise : {}));
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  assert.deepEqual(await c.step(), { kind: 'notRunning' });
  await c.start();
  await settle();
  assert.equal(c.keyState('ns/a')!.phase, 'processing');
  assert.deepEqual(await c.step({ key: 'ns/a' }), { kind: 'busy', key: 'ns/a' });
  assert.equal(c.status().paused, true, 'stepping pauses');
  h.widgets.add(widget('b'));
  await settle();
  const rb = await c.step();
  assert.equal(rb.kind === 'reconciled' && rb.key, 'ns/b');
  hold.resolve({});
  await settle();
  assert.equal(c.keyState('ns/a')!.lastOutcome?.kind, 'success');
  assert.throws(() => c.enqueue('a/b/c'), /unexpected key format/);
  await c.stop();
  assert.deepEqual(await c.step(), { kind: 'notRunning' });
});

test('reconcile now skips the backoff; reset backoff forgets the count and retries now', async () => {
  const h = harness();
  h.setImpl(() => {
    throw new Error('always');
  });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  h.clock.step(5);
  await settle();
  assert.equal(c.keyState('ns/a')!.requeues, 2);
  assert.equal(c.keyState('ns/a')!.waiting?.dueAt, h.clock.now() + 10);
  assert.equal(c.reconcileNow('ns/a'), true);
  await settle();
  assert.equal(h.calls.length, 3, 'ran without waiting');
  let s = c.keyState('ns/a')!;
  assert.deepEqual(s.lastTriggers.map((t) => t.kind), ['manual']);
  assert.equal(s.requeues, 3, 'reconcile now does not reset the count');
  assert.equal(s.waiting?.dueAt, h.clock.now() + 20);
  assert.equal(c.resetBackoff('ns/a'), true);
  await settle();
  assert.equal(h.calls.length, 4, 'the pending backoff was cancelled and the key ran');
  s = c.keyState('ns/a')!;
  assert.equal(s.requeues, 1, 'the count started over');
  assert.equal(s.waiting?.dueAt, h.clock.now() + 5, 'the next backoff starts at 5 ms again');
  h.clock.step(10_000);
  await settle();
  await c.stop();
  assert.equal(c.reconcileNow('ns/a'), false);
  assert.equal(c.resetBackoff('ns/a'), false);
});

// ---- per-key state, why queued, journal --------------------------------------------------------

test('why queued: every reason since the key last ran, cleared when it starts; state changes are published', async () => {
  const h = harness({ startPaused: true });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  const phases: string[] = [];
  c.onDidChangeKeyState((s: KeyState) => {
    if (s.key === 'ns/a' && phases.at(-1) !== s.phase) phases.push(s.phase);
  });
  await c.start();
  h.widgets.update('ns/a', (o) => ({ ...o, spec: { size: 2 } }));
  c.enqueue('ns/a', 'from the tree view');
  let s = c.keyState('ns/a')!;
  assert.equal(s.phase, 'queued');
  assert.deepEqual(s.reasons.map((r) => `${r.kind}:${'event' in r ? r.event : 'action' in r ? r.action : ''}`), ['informer:add', 'informer:update', 'manual:enqueue']);
  assert.equal((s.reasons[2] as { note?: string }).note, 'from the tree view');
  await c.step();
  s = c.keyState('ns/a')!;
  assert.deepEqual(s.reasons, []);
  assert.equal(s.lastTriggers.length, 3);
  assert.deepEqual(phases, ['queued', 'processing', 'idle']);
  const snap = c.snapshot();
  assert.deepEqual(snap.keys.map((k) => k.key), ['ns/a']);
  assert.equal(snap.status.state, 'running');
  assert.equal(snap.status.paused, true);
  await c.stop();
});

test('reasons are bounded per key, with a count of dropped ones', async () => {
  const h = harness({ startPaused: true, maxReasonsPerKey: 3 });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  for (let i = 0; i < 5; i++) c.enqueue('ns/a', `n${i}`);
  const s = c.keyState('ns/a')!;
  assert.deepEqual(s.reasons.map((r) => (r as { note?: string }).note), ['n2', 'n3', 'n4']);
  assert.equal(s.droppedReasons, 3);
  await c.stop();
});

test('the journal holds one ordered story of a reconcile: informer event, queue transitions, start with triggers, end with outcome', async () => {
  const h = harness();
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  const story = h.journal.entries({ key: 'ns/a' }).map((e) => {
    switch (e.kind) {
      case 'informer': return `informer:${e.event}`;
      case 'queue': return `queue:${e.transition}`;
      case 'reconcileStart': return `start:${e.triggers.length}:attempt${e.attempt}:gen${e.generation}`;
      case 'reconcileEnd': return `end:${e.outcome.kind}`;
      default: return e.kind;
    }
  });
  assert.deepEqual(story, ['informer:add', 'queue:queued', 'queue:processing', 'start:1:attempt1:gen1', 'end:success', 'queue:done']);
  const seqs = h.journal.entries().map((e) => e.seq);
  assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
  await c.stop();
});

test('a deleted object that reconciled successfully is forgotten from the key table', async () => {
  const h = harness();
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  const removed: string[] = [];
  c.onDidChangeKeyState((s) => { if (s.removed) removed.push(s.key); });
  await c.start();
  await settle();
  h.widgets.delete('ns/a');
  await settle();
  assert.equal(h.calls.length, 2);
  assert.equal(c.keyState('ns/a'), undefined);
  assert.deepEqual(removed, ['ns/a']);
  await c.stop();
});

// ---- hot loop ----------------------------------------------------------------------------------

/** A reconciler that writes the key's status on each of its first `passes` passes (10 ms each), then writes nothing. */
function writesStatusEveryPass(h: Harness, passes: number): void {
  h.setImpl((req, _ctx, base) => {
    if (h.calls.length <= passes) {
      const o = h.widgets.writeStatus(req.key, { observed: h.calls.length });
      base.journal.recordWrite({ verb: 'update', gvr: base.primary, namespace: req.namespace, name: req.name, subresource: 'status', resourceVersionAfter: o.metadata.resourceVersion, dryRun: false, controller: base.controller, key: req.key });
    }
    h.clock.step(10);
    return {};
  });
}

test('hot loop: the warning leaves the key within two windows after the loop stopped (the journal keeps it), not while it still loops', async () => {
  const h = harness({ hotLoop: { windowMs: 10_000, threshold: 10 } });
  writesStatusEveryPass(h, 30);
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  for (let i = 0; i < 40; i++) await settle();
  assert.match(c.keyState('ns/a')!.warning ?? '', /Hot loop/, 'warned while looping');
  h.clock.step(9_000);
  await settle();
  assert.match(c.keyState('ns/a')!.warning ?? '', /Hot loop/, 'within the window: kept');
  h.clock.step(11_000);
  await settle();
  assert.equal(c.keyState('ns/a')!.warning, undefined, 'the loop stopped (its writes stopped): the warning is gone from the key');
  assert.equal(h.journal.entries({ kinds: ['warning'] }).filter((e) => e.kind === 'warning' && e.code === 'hotLoop').length, 1, 'the journal keeps it');
  await c.stop();
  assert.equal(h.clock.pendingTimers, 0, 'no timer left');
});

test('hot loop: a reconciler writing status on every pass is flagged with the likely cause; the generation predicate stops the loop', async () => {
  const run = async (withPredicate: boolean) => {
    const h = harness({ hotLoop: { windowMs: 10_000, threshold: 10 } });
    writesStatusEveryPass(h, 30);
    h.widgets.add(widget('a'));
    const c = h.builder.for(h.widgets, { predicates: withPredicate ? [generationChanged()] : [] }).build(h.reconciler);
    await c.start();
    for (let i = 0; i < 40; i++) await settle();
    await c.stop();
    return { h, c };
  };
  const looping = await run(false);
  assert.ok(looping.h.calls.length > 10, `looped ${looping.h.calls.length} times`);
  const warnings = looping.h.journal.entries({ kinds: ['warning'] });
  assert.equal(warnings.length, 1, 'one warning per cooldown');
  const w = warnings[0]!;
  assert.equal(w.kind === 'warning' && w.code, 'hotLoop');
  assert.equal(w.key, 'ns/a');
  assert.match(w.kind === 'warning' ? w.message : '', /status write re-triggers the watch. Write status only when it actually changed, or turn on the generation-changed predicate: pass predicates: \[generationChanged\(\)\]/);
  assert.match(w.kind === 'warning' ? w.message : '', /reconciler wrote to it \d+ time/);
  assert.match(looping.c.keyState('ns/a')!.warning ?? '', /Hot loop/);

  const fixed = await run(true);
  assert.equal(fixed.h.calls.length, 1);
  assert.equal(fixed.h.journal.entries({ kinds: ['warning'] }).length, 0);
});

test('hot loop: a reconciler that appends a finalizer to the object (not its status) on every pass is told so, not to write status less or to hide it with the generation predicate', async () => {
  const h = harness({ hotLoop: { windowMs: 10_000, threshold: 10 } });
  h.setImpl((req, _ctx, base) => {
    if (h.calls.length <= 30) {
      const o = h.widgets.update(req.key, (w) => ({ ...w, metadata: { ...w.metadata, finalizers: [...(w.metadata.finalizers ?? []), 'food.example.dev/oven'] } }));
      base.journal.recordWrite({ verb: 'patch', gvr: base.primary, namespace: req.namespace, name: req.name, resourceVersionAfter: o.metadata.resourceVersion, dryRun: false, controller: base.controller, key: req.key });
    }
    h.clock.step(10);
    return {};
  });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  for (let i = 0; i < 40; i++) await settle();
  await c.stop();
  const warnings = h.journal.entries({ kinds: ['warning'] });
  assert.equal(warnings.length, 1, 'one warning per cooldown');
  const m = warnings[0]!.kind === 'warning' ? warnings[0]!.message : '';
  assert.match(m, /^Hot loop: ns\/a was reconciled \d+ times in [\d.]+ s while its generation stayed \d+ \(no spec change\)\. Each run was triggered by an update of the object itself, and the reconciler wrote to the object \d+ time\(s\), not to its status: it changes the object's metadata on every pass/, m);
  assert.match(m, /add a finalizer only when metadata\.finalizers lacks it\); a generation-changed predicate would hide the loop, not stop the write each reconcile makes\.$/, m);
  assert.doesNotMatch(m, /status write re-triggers|Write status only/, m);
});

test('hot loop: a kind without metadata.generation (a ConfigMap) written on every pass is flagged as re-triggered by its own writes; an update by someone else is not', async () => {
  type Write = (h: Harness, cms: FakeInformer, req: Request, base: ReconcileContextBase) => void;
  const run = async (write: Write) => {
    const h = harness({ hotLoop: { windowMs: 10_000, threshold: 10 } });
    const cms = new FakeInformer({ kind: 'ConfigMap', resource: 'configmaps', group: '', version: 'v1' }, { generation: false });
    h.setImpl((req, _ctx, base) => {
      if (h.calls.length <= 30) write(h, cms, req, base);
      h.clock.step(10);
      return {};
    });
    cms.add({ metadata: { name: 'a', namespace: 'ns' }, data: { n: '0' } });
    assert.equal(cms.get('ns/a')!.metadata.generation, undefined);
    const c = h.builder.for(cms).build(h.reconciler);
    await c.start();
    for (let i = 0; i < 40; i++) await settle();
    await c.stop();
    return { h, c };
  };
  // The reconciler writes the ConfigMap it reconciles on every pass (through the journaled client).
  const looping = await run((h, cms, req, base) => {
    const o = cms.update(req.key, (x) => ({ ...x, data: { n: String(h.calls.length) } }));
    base.journal.recordWrite({ verb: 'update', gvr: base.primary, namespace: req.namespace, name: req.name, resourceVersionAfter: o.metadata.resourceVersion, dryRun: false, controller: base.controller, key: req.key });
  });
  assert.ok(looping.h.calls.length > 10, `looped ${looping.h.calls.length} times`);
  const warnings = looping.h.journal.entries({ kinds: ['warning'] });
  assert.equal(warnings.length, 1, 'one warning per cooldown');
  const w = warnings[0]!;
  assert.ok(w.kind === 'warning');
  assert.equal(w.code, 'hotLoop');
  assert.equal(w.key, 'ns/a');
  assert.equal(w.details?.['cause'], 'objectWrite');
  assert.match(w.message, /^Hot loop: ns\/a was reconciled 10 times in 0\.1 s, each time triggered only by the update that the previous pass wrote to the object \(10 write\(s\)\)\. /);
  assert.match(w.message, /The reconciler writes the object on every pass, and its own write triggers the next reconcile\. Compare with the stored object before writing/);
  assert.doesNotMatch(w.message, /generation stayed|no spec change|[Ww]rite status only/, 'nothing about a spec or a status the ConfigMap does not have');
  assert.match(looping.c.keyState('ns/a')!.warning ?? '', /Hot loop/);

  // Someone else updates the ConfigMap as often, the reconciler writes nothing: not a hot loop of the reconciler's.
  let edits = 0;
  const external = await run((_h, cms, req) => {
    cms.update(req.key, (x) => ({ ...x, data: { n: String(++edits) } }));
  });
  assert.ok(external.h.calls.length > 10);
  assert.equal(external.h.journal.entries({ kinds: ['warning'] }).length, 0);
});

// ---- lifecycle ---------------------------------------------------------------------------------

test('stop aborts in-flight reconciles (cancelled, no requeue), unregisters handlers, drops the queue and its timers; start again works', async () => {
  const h = harness();
  const hold = deferred<object>();
  let n = 0;
  h.setImpl((req) => {
    n++;
    if (req.name === 'a' && n === 1) return hold.promise;
    if (req.name === 'b') throw new Error('b fails');
    return {};
  });
  h.widgets.add(widget('a'));
  h.widgets.add(widget('b'));
  const c = h.builder.withOptions({ maxConcurrentReconciles: 2 }).for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  assert.equal(c.keyState('ns/b')!.phase, 'backoff');
  assert.equal(h.widgets.handlerCount, 1);
  await c.stop();
  assert.equal(h.contexts[0]!.signal.aborted, true);
  assert.equal(c.keyState('ns/a')!.lastOutcome?.kind, 'cancelled');
  assert.equal(c.keyState('ns/a')!.phase, 'idle');
  assert.equal(c.keyState('ns/b')!.phase, 'idle', 'pending waits are dropped');
  assert.equal(h.clock.pendingTimers, 0);
  assert.equal(h.widgets.handlerCount, 0);
  assert.equal(c.status().state, 'stopped');
  h.widgets.update('ns/a', (o) => ({ ...o, spec: { size: 3 } }));
  await settle();
  const before = h.calls.length;
  h.clock.step(10_000);
  await settle();
  assert.equal(h.calls.length, before, 'nothing runs after stop');
  hold.resolve({});
  await c.start();
  await settle();
  assert.ok(h.calls.length >= before + 2, 'the initial list is replayed after a restart');
  assert.equal(c.keyState('ns/a')!.reconciles, 2);
  c.dispose();
  assert.equal(h.clock.pendingTimers, 0);
  await assert.rejects(c.start(), /disposed/);
});

test('start waits for the caches to sync (polling on the clock) and fails clearly when they do not', async () => {
  const h = harness({ cacheSyncTimeoutMs: 1000 });
  const slow = new FakeInformer({ kind: 'Widget', resource: 'widgets' }, { synced: false });
  slow.add(widget('a'));
  const c = h.builder.for(slow).build(h.reconciler);
  let started = false;
  const p = c.start().then(() => { started = true; });
  await settle();
  assert.equal(c.status().state, 'starting');
  h.clock.step(300);
  await settle();
  assert.equal(started, false);
  assert.deepEqual(h.calls, []);
  slow.markSynced();
  h.clock.step(100);
  await p;
  await settle();
  assert.equal(c.status().state, 'running');
  assert.deepEqual(h.calls, ['ns/a']);
  await c.stop();

  const h2 = harness({ cacheSyncTimeoutMs: 1000 });
  const never = new FakeInformer({ kind: 'Widget', resource: 'widgets' }, { synced: false });
  const c2 = h2.builder.for(never).build(h2.reconciler);
  const p2 = c2.start();
  const rejected = assert.rejects(p2, /caches did not sync within 1000 ms \(widgets\.v1\.lab\.reconcile\.dev\)/);
  for (let i = 0; i < 12; i++) {
    h2.clock.step(100);
    await settle();
  }
  await rejected;
  assert.equal(c2.status().state, 'stopped');
  assert.match(c2.status().lastStartError ?? '', /did not sync/);
  assert.equal(h2.clock.pendingTimers, 0);
  assert.equal(never.handlerCount, 0);
});

test('why queued: the update that sets deletionTimestamp (a delete with finalizers) is marked deletion requested; later updates are not', async () => {
  const h = harness();
  h.widgets.add({ ...widget('a'), metadata: { name: 'a', namespace: 'ns', finalizers: ['x/y'] } });
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  h.widgets.update('ns/a', (o) => ({ ...o, metadata: { ...o.metadata, deletionTimestamp: '2026-12-04T10:00:00Z' } }));
  await settle();
  const first = c.keyState('ns/a')!.lastTriggers;
  assert.deepEqual(first.map((r) => ('deletionRequested' in r ? r.deletionRequested : undefined)), [true], JSON.stringify(first));
  h.widgets.update('ns/a', (o) => ({ ...o, metadata: { ...o.metadata, labels: { more: 'x' } } }));
  await settle();
  const second = c.keyState('ns/a')!.lastTriggers;
  assert.equal(second.length, 1);
  assert.equal('deletionRequested' in second[0]! && second[0].deletionRequested, false, 'an update of an object already terminating is a plain update');
  await c.stop();
});

test('a source with waitForSync false does not gate the start: the loop runs, and its objects enqueue owners once it syncs', async () => {
  const h = harness({ cacheSyncTimeoutMs: 1000 });
  const broken = new FakeInformer({ kind: 'Gizmo', resource: 'gizmos' }, { synced: false });
  const needed = new FakeInformer({ kind: 'ConfigMap', resource: 'configmaps', group: '' }, { synced: false });
  h.widgets.add(widget('a'));
  broken.add({ metadata: { name: 'g', namespace: 'ns', ownerReferences: [{ apiVersion: 'lab.reconcile.dev/v1', kind: 'Widget', name: 'a', uid: 'u', controller: true }] } });
  const c = h.builder.for(h.widgets).owns(broken, { waitForSync: false }).owns(needed).build(h.reconciler);
  let started = false;
  const p = c.start().then(() => { started = true; });
  h.clock.step(300);
  await settle();
  assert.equal(started, false, 'a required source (no option) still gates the start');
  needed.markSynced();
  h.clock.step(100);
  await p;
  await settle();
  assert.equal(c.status().state, 'running', 'running while the optional source has not synced');
  assert.equal(broken.runCalls, 1, 'its informer was run like the others');
  assert.deepEqual(h.calls, ['ns/a']);
  broken.markSynced(); // its initial list arrives late: the child maps to its owner
  await settle();
  assert.deepEqual(h.calls, ['ns/a', 'ns/a']);
  await c.stop();

  // Every required source still fails the start after the timeout, naming only those.
  const h2 = harness({ cacheSyncTimeoutMs: 1000 });
  const optional = new FakeInformer({ kind: 'Gizmo', resource: 'gizmos' }, { synced: false });
  const required = new FakeInformer({ kind: 'ConfigMap', resource: 'configmaps', group: '', version: 'v1' }, { synced: false });
  const c2 = h2.builder.for(h2.widgets).owns(optional, { waitForSync: false }).owns(required).build(h2.reconciler);
  const rejected = assert.rejects(c2.start(), (e: Error) => /caches did not sync within 1000 ms \(configmaps\.v1\)$/.test(e.message));
  for (let i = 0; i < 12; i++) {
    h2.clock.step(100);
    await settle();
  }
  await rejected;
});

test('the work queue kind chooses the upstream limiter (client-go: with the 10/s bucket); a limiter factory overrides it and is fresh at each start', async () => {
  let made = 0;
  const h = harness({ rateLimiter: () => { made++; return itemExponentialFailureRateLimiter(100, 1000); } });
  h.setImpl(() => { throw new Error('x'); });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  assert.equal(c.keyState('ns/a')!.waiting?.dueAt, h.clock.now() + 100);
  await c.stop();
  await c.start();
  await settle();
  assert.equal(made, 2);
  assert.equal(c.keyState('ns/a')!.requeues, 1, 'a new queue, a new limiter');
  await c.stop();

  const h2 = harness({ workQueue: 'client-go' });
  h2.setImpl(() => { throw new Error('x'); });
  for (let i = 0; i < 101; i++) h2.widgets.add(widget(`w${i}`));
  const c2 = h2.builder.for(h2.widgets).build(h2.reconciler);
  await c2.start();
  for (let i = 0; i < 200 && h2.calls.length < 101; i++) await settle();
  assert.equal(h2.calls.length, 101);
  assert.equal(c2.keyState('ns/w100')!.waiting!.dueAt - h2.clock.now(), 100, 'the 101st failure waits for the 10/s bucket');
  assert.equal(c2.keyState('ns/w99')!.waiting!.dueAt - h2.clock.now(), 5);
  assert.equal(c2.status().workQueue, 'client-go');
  await c2.stop();

  const h3 = harness();
  h3.setImpl(() => { throw new Error('x'); });
  for (let i = 0; i < 101; i++) h3.widgets.add(widget(`w${i}`));
  const c3 = h3.builder.for(h3.widgets).build(h3.reconciler);
  await c3.start();
  for (let i = 0; i < 200 && h3.calls.length < 101; i++) await settle();
  assert.equal(c3.status().workQueue, 'priority', 'the priority queue is the default');
  assert.equal(c3.keyState('ns/w100')!.waiting!.dueAt - h3.clock.now(), 5, 'no global bucket on the priority queue');
  await c3.stop();
});

test('retryBackoffsNow: every key waiting for a backoff runs now with the note as its reason; failure counts are kept; other keys are left alone', async () => {
  const h = harness();
  let broken = true;
  h.setImpl((req) => {
    if (req.name === 'b') return { requeueAfterMs: 60_000, reason: 'waiting' };
    if (broken) throw new Error('cannot compile');
    return {};
  });
  h.widgets.add(widget('a'));
  h.widgets.add(widget('b'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  for (let i = 0; i < 5; i++) {
    h.clock.step(c.keyState('ns/a')!.waiting!.dueAt! - h.clock.now());
    await settle();
  }
  assert.equal(c.keyState('ns/a')!.phase, 'backoff');
  assert.equal(c.keyState('ns/a')!.requeues, 6);
  assert.equal(c.keyState('ns/b')!.phase, 'requeueAfter');
  const callsBefore = h.calls.length;
  broken = false; // the module was fixed
  assert.deepEqual(c.retryBackoffsNow!('reconciler module tenant.ts changed'), ['ns/a']);
  assert.ok(h.journal.entries({ kinds: ['control'] }).some((e) => e.kind === 'control' && e.action === 'enqueue' && e.automatic === true && e.detail === 'reconciler module tenant.ts changed'), 'journaled as taken on its own, not by a person');
  await settle();
  assert.deepEqual(h.calls.slice(callsBefore), ['ns/a'], 'only the key in backoff ran, without waiting for its retry');
  const s = c.keyState('ns/a')!;
  assert.equal(s.phase, 'idle');
  assert.deepEqual(s.lastOutcome, { kind: 'success' });
  assert.deepEqual(s.lastTriggers.map((t) => t.kind === 'manual' ? t.note : t.kind), ['reconciler module tenant.ts changed']);
  assert.equal(c.keyState('ns/b')!.phase, 'requeueAfter', 'a requeue-after is not a failure: left alone');
  assert.ok(h.journal.entries().some((e) => e.kind === 'control' && e.action === 'enqueue' && e.key === 'ns/a' && e.detail === 'reconciler module tenant.ts changed'));
  await c.stop();
  assert.deepEqual(c.retryBackoffsNow!('x'), []);
});
