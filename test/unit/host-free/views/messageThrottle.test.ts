import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../fakes/fakeClock.ts';
import { MessageThrottle, VIEW_MESSAGE_INTERVAL_MS } from '../../../../src/host/views/messageThrottle.ts';

/**
 * VS Code's extension host merges a tree view's message and refreshes in Event.debounce(…, 200, leading): the first
 * change of a quiet period goes at once, the rest only after 200 ms without any change. Returns how many times it
 * delivers for changes made at `times` (ms), up to `end`.
 */
function vscodeDebounceDeliveries(times: readonly number[], end: number): number {
  let deliveries = 0;
  let timerDue: number | undefined;
  let pendingSince = false;
  for (const t of times) {
    if (timerDue !== undefined && timerDue <= t) {
      if (pendingSince) deliveries++;
      timerDue = undefined;
      pendingSince = false;
    }
    if (timerDue === undefined) deliveries++; // leading edge
    else pendingSince = true;
    timerDue = t + 200;
  }
  if (timerDue !== undefined && timerDue <= end && pendingSince) deliveries++;
  return deliveries;
}

test('a message changing every 20 ms reaches the view at most every 500 ms, and VS Code then shows each delivery', () => {
  const clock = new FakeClock();
  const at: number[] = [];
  const texts: (string | undefined)[] = [];
  const m = new MessageThrottle(clock, VIEW_MESSAGE_INTERVAL_MS, (t) => {
    at.push(clock.now());
    texts.push(t);
  });
  const start = clock.now();
  const sets: number[] = [];
  for (let i = 0; i < 500; i++) {
    m.set(`Running: ${3000 - i} queued`);
    sets.push(clock.now() - start);
    clock.step(20);
  }
  clock.step(VIEW_MESSAGE_INTERVAL_MS);
  assert.equal(texts.at(-1), 'Running: 2501 queued', 'the last text set is delivered');
  assert.ok(at.length >= 10 && at.length <= 22, `deliveries over 10 s: ${at.length}`);
  for (let i = 1; i < at.length; i++) assert.ok(at[i]! - at[i - 1]! >= VIEW_MESSAGE_INTERVAL_MS, `deliveries ${i - 1} and ${i} are ${at[i]! - at[i - 1]!} ms apart`);
  const end = clock.now() - start;
  // What VS Code makes of it: every delivery is followed by a quiet gap, so each one is shown ...
  assert.equal(vscodeDebounceDeliveries(at.map((t) => t - start), end), at.length);
  // ... where assigning the message on every change (the old code) was shown once, then never while changes kept coming.
  assert.equal(vscodeDebounceDeliveries(sets, sets.at(-1)!), 1);
});

test('the same text again does nothing; a changed text after a quiet period goes at once; setNow and dispose cancel the pending one', () => {
  const clock = new FakeClock();
  const got: (string | undefined)[] = [];
  const m = new MessageThrottle(clock, 500, (t) => got.push(t));
  m.set('Paused');
  assert.deepEqual(got, ['Paused'], 'first text: at once');
  for (let i = 0; i < 100; i++) m.set('Paused');
  clock.step(10_000);
  assert.deepEqual(got, ['Paused'], 'unchanged text: nothing sent, no timer left');
  assert.equal(clock.pendingTimers, 0);
  m.set('Running: 3 queued');
  assert.deepEqual(got, ['Paused', 'Running: 3 queued'], 'after a quiet period: at once');
  m.set('Running: 2 queued');
  m.set('Running: 3 queued');
  clock.step(500);
  assert.deepEqual(got, ['Paused', 'Running: 3 queued'], 'changed and changed back within the interval: nothing new to send');
  m.set('Running: 1 queued'); // 500 ms after the last delivery: at once
  m.set('Running: 0 queued'); // pending
  m.setNow(undefined);
  assert.deepEqual(got.slice(2), ['Running: 1 queued', undefined], 'setNow (disconnect) goes at once and drops the pending text');
  clock.step(1000);
  assert.equal(got.length, 4);
  m.set('again');
  m.set('again 2');
  m.dispose();
  clock.step(1000);
  assert.deepEqual(got.slice(4), ['again'], 'nothing after dispose');
  assert.equal(clock.pendingTimers, 0);
});
