import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bucketRateLimiter,
  defaultControllerRateLimiter,
  itemExponentialFailureRateLimiter,
  itemFastSlowRateLimiter,
  maxOfRateLimiter,
  withMaxWaitRateLimiter,
} from '../../../src/core/workqueue/rateLimiters.ts';
import { createControllerQueue } from '../../../src/core/workqueue/controllerQueue.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';

test('exponential: 5, 10, 20 ms … doubling, 18th failure 655.36 s, capped at 1000 s from the 19th', () => {
  const l = itemExponentialFailureRateLimiter<string>(5, 1_000_000);
  const got = Array.from({ length: 22 }, () => l.when('a'));
  const want = Array.from({ length: 22 }, (_, n) => Math.min(5 * 2 ** n, 1_000_000));
  assert.deepEqual(got, want);
  assert.deepEqual(got.slice(0, 4), [5, 10, 20, 40]);
  assert.equal(got[17], 655_360);
  assert.equal(got[18], 1_000_000);
  assert.equal(l.numRequeues('a'), 22);
  const byDefault = itemExponentialFailureRateLimiter<string>();
  assert.deepEqual(Array.from({ length: 22 }, () => byDefault.when('a')), want, 'the defaults are 5 ms and 1000 s');
});

test('exponential is overflow-safe: thousands of failures still give the cap', () => {
  const l = itemExponentialFailureRateLimiter<string>(5, 1_000_000);
  let last = 0;
  for (let i = 0; i < 5000; i++) last = l.when('a');
  assert.equal(last, 1_000_000);
  assert.ok(Number.isFinite(last));
  const zeroBase = itemExponentialFailureRateLimiter<string>(0, 1000);
  for (let i = 0; i < 2000; i++) assert.equal(zeroBase.when('z'), 0);
});

test('exponential counts per item, and forget resets only that item', () => {
  const l = itemExponentialFailureRateLimiter<string>(1, 1000);
  l.when('a');
  l.when('a');
  l.when('b');
  assert.equal(l.numRequeues('a'), 2);
  assert.equal(l.numRequeues('b'), 1);
  l.forget('a');
  assert.equal(l.numRequeues('a'), 0);
  assert.equal(l.when('a'), 1);
  assert.equal(l.when('b'), 2);
  assert.throws(() => itemExponentialFailureRateLimiter(-1, 10), RangeError);
});

test('bucket: burst of 100 immediate, then 100 ms apart at 10/s, refilled by time, shared by all items', () => {
  const clock = new FakeClock();
  const l = bucketRateLimiter<string>(10, 100, clock);
  for (let i = 0; i < 100; i++) assert.equal(l.when(`k${i}`), 0);
  assert.equal(l.when('x'), 100);
  assert.equal(l.when('y'), 200);
  assert.equal(l.numRequeues('x'), 0);
  l.forget('x');
  clock.step(1000); // +10 tokens pays the debt of 2 and leaves 8
  for (let i = 0; i < 8; i++) assert.equal(l.when('z'), 0);
  assert.equal(l.when('z'), 100);
  clock.step(3_600_000);
  for (let i = 0; i < 100; i++) assert.equal(l.when('w'), 0, 'never refills beyond the burst');
  assert.equal(l.when('w'), 100);
  assert.throws(() => bucketRateLimiter(0, 1, clock), RangeError);
});

test('maxOf: the longest delay, every child counts, numRequeues is the maximum, forget forgets in all', () => {
  const a = itemExponentialFailureRateLimiter<string>(1, 1000);
  const b = itemFastSlowRateLimiter<string>(3, 50, 2);
  const m = maxOfRateLimiter(a, b);
  assert.deepEqual([m.when('k'), m.when('k'), m.when('k'), m.when('k')], [3, 3, 50, 50]);
  assert.equal(a.numRequeues('k'), 4);
  assert.equal(b.numRequeues('k'), 4);
  assert.equal(m.numRequeues('k'), 4);
  m.forget('k');
  assert.equal(a.numRequeues('k'), 0);
  assert.equal(b.numRequeues('k'), 0);
  assert.throws(() => maxOfRateLimiter(), RangeError);
});

test('fast/slow and max-wait limiters', () => {
  const fs = itemFastSlowRateLimiter<string>(5, 1000, 3);
  assert.deepEqual([1, 2, 3, 4, 5].map(() => fs.when('a')), [5, 5, 5, 1000, 1000]);
  fs.forget('a');
  assert.equal(fs.when('a'), 5);
  const capped = withMaxWaitRateLimiter(itemExponentialFailureRateLimiter<string>(100, 1_000_000), 250);
  assert.deepEqual([1, 2, 3, 4].map(() => capped.when('a')), [100, 200, 250, 250]);
  assert.equal(capped.numRequeues('a'), 4);
});

test('client-go default = max(exponential 5 ms..1000 s, bucket 10/s burst 100)', () => {
  const clock = new FakeClock();
  const l = defaultControllerRateLimiter<string>(clock);
  for (let i = 0; i < 100; i++) assert.equal(l.when(`k${i}`), 5);
  assert.equal(l.when('k100'), 100, 'the global bucket is exhausted');
  const fresh = defaultControllerRateLimiter<string>(new FakeClock());
  assert.deepEqual([fresh.when('a'), fresh.when('a'), fresh.when('a')], [5, 10, 20]);
});

test('the two controller queues get their upstream limiters: client-go = DefaultControllerRateLimiter, priority = exponential only (no global bucket)', () => {
  const clock = new FakeClock();
  const cg = createControllerQueue<string>('client-go', { clock });
  const pq = createControllerQueue<string>('priority', { clock });
  for (let i = 0; i < 101; i++) {
    cg.addRateLimited(`k${i}`);
    pq.addRateLimited(`k${i}`);
  }
  cg.addRateLimited('another');
  pq.addRateLimited('another');
  assert.equal(cg.waitingUntil('another'), clock.now() + 200, 'the 10 qps bucket is in debt');
  assert.equal(pq.waitingUntil('another'), clock.now() + 5, 'no bucket: 5 ms for a first failure');
  for (let i = 0; i < 40; i++) pq.addRateLimited('slow');
  assert.equal(pq.numRequeues('slow'), 40);
  assert.equal(pq.waitingUntil('slow'), clock.now() + 5, 'an earlier wait is kept');
  pq.cancelWait('slow');
  pq.addRateLimited('slow');
  assert.equal(pq.waitingUntil('slow'), clock.now() + 1_000_000, 'capped at 1000 s');
  assert.throws(() => createControllerQueue('nope' as 'priority', { clock }), /unknown work queue/);
  cg.dispose();
  pq.dispose();
});
