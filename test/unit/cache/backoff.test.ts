import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff } from '../../../src/core/cache/backoff.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';

test('without jitter draw: 800 ms doubling, capped at 30 s', () => {
  const clock = new FakeClock();
  const b = new Backoff({ clock, random: () => 0 });
  const got: number[] = [];
  for (let i = 0; i < 9; i++) {
    const d = b.next();
    got.push(d);
    clock.step(d); // the retry fails at once
  }
  assert.deepEqual(got, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000]);
});

test('jitter 1.0 stretches each delay d into [d, 2d) using the injected random source', () => {
  const clock = new FakeClock();
  const draws = [0.5, 0.999, 0.25];
  const b = new Backoff({ clock, random: () => draws.shift()! });
  assert.equal(b.next(), 1200);
  assert.ok(Math.abs(b.next() - 1600 * 1.999) < 1e-9);
  assert.equal(b.next(), 4000);
});

test('starts over every 2 min counted from the last reset, even under constant failure (client-go HEAD DelayWithReset)', () => {
  const clock = new FakeClock();
  const b = new Backoff({ clock, random: () => 0 });
  const got: number[] = [];
  for (let i = 0; i < 11; i++) {
    const d = b.next();
    got.push(d);
    clock.step(d); // the retry fails at once
  }
  // 800 … 30000, 30000 reach 110.4 s; the call at 140.4 s is more than 2 min after construction: reset.
  assert.deepEqual(got, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000, 800, 1600]);
});

test('the reset is counted from the last reset, not from the last failure', () => {
  const clock = new FakeClock();
  const b = new Backoff({ clock, random: () => 0 });
  clock.step(b.next()); // 800 at t=0
  clock.step(60_000);
  assert.equal(b.next(), 1600, '60.8 s after the start: no reset');
  clock.step(1600 + 58_000); // t = 120.4 s; healthy for 58 s only
  assert.equal(b.next(), 800, 'more than 2 min since construction: reset, however short the healthy spell');
  clock.step(800 + 110_000); // t = 231.2 s: 110.8 s after that reset, though healthy for 110 s
  assert.equal(b.next(), 1600, 'not 2 min since the last reset yet');
  clock.step(1600 + 10_000);
  assert.equal(b.next(), 800);
});

test('reset() starts the sequence over', () => {
  const clock = new FakeClock();
  const b = new Backoff({ clock, random: () => 0 });
  b.next();
  b.next();
  b.reset();
  assert.equal(b.next(), 800);
});
