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

test('resets to 800 ms after 2 min without trouble, not before', () => {
  const clock = new FakeClock();
  const b = new Backoff({ clock, random: () => 0 });
  for (let i = 0; i < 5; i++) clock.step(b.next()); // 800 … 12800
  clock.step(120_000); // exactly 2 min healthy: not more than the reset interval
  assert.equal(b.next(), 25600);
  clock.step(25600 + 120_001);
  assert.equal(b.next(), 800);
  clock.step(800);
  assert.equal(b.next(), 1600);
});

test('reset() starts the sequence over', () => {
  const clock = new FakeClock();
  const b = new Backoff({ clock, random: () => 0 });
  b.next();
  b.next();
  b.reset();
  assert.equal(b.next(), 800);
});
