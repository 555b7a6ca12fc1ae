import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRateLimitingQueue } from '../../../src/core/workqueue/rateLimitingQueue.ts';
import { itemExponentialFailureRateLimiter } from '../../../src/core/workqueue/rateLimiters.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';

function setup() {
  const clock = new FakeClock();
  const q = createRateLimitingQueue<string>({ clock, rateLimiter: itemExponentialFailureRateLimiter(5, 1_000_000) });
  return { clock, q };
}

test('addRateLimited waits 5, 10, 20 ms for consecutive failures', () => {
  const { clock, q } = setup();
  const delays: number[] = [];
  for (let i = 0; i < 3; i++) {
    q.addRateLimited('a');
    delays.push(q.waitingUntil('a')! - clock.now());
    clock.step(delays[i]! - 1);
    assert.equal(q.len(), 0, 'not before the delay');
    clock.step(1);
    assert.equal(q.tryGet(), 'a');
    q.done('a');
  }
  assert.deepEqual(delays, [5, 10, 20]);
  assert.equal(q.numRequeues('a'), 3);
});

test('forget resets only the failure count: a pending wait stays, and the next failure starts over at 5 ms', () => {
  const { clock, q } = setup();
  q.addRateLimited('a');
  q.addRateLimited('a');
  assert.equal(q.numRequeues('a'), 2);
  const pending = q.waitingUntil('a');
  q.forget('a');
  assert.equal(q.numRequeues('a'), 0);
  assert.equal(q.waitingUntil('a'), pending, 'forget does not touch the queue');
  clock.step(5);
  assert.deepEqual(q.queuedItems(), ['a']);
  assert.equal(q.tryGet(), 'a');
  q.done('a');
  q.addRateLimited('a');
  assert.equal(q.waitingUntil('a')! - clock.now(), 5);
});

test('the failure count survives processing; done does not forget', () => {
  const { clock, q } = setup();
  q.addRateLimited('a');
  clock.step(5);
  q.tryGet();
  q.done('a');
  assert.equal(q.numRequeues('a'), 1);
  q.addRateLimited('a');
  assert.equal(q.waitingUntil('a')! - clock.now(), 10);
});

test('addRateLimited after shutdown is ignored', () => {
  const { clock, q } = setup();
  q.shutDown();
  q.addRateLimited('a');
  assert.equal(clock.pendingTimers, 0);
  assert.equal(q.waitingUntil('a'), undefined);
});
