import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../fakes/fakeClock.ts';
import { RefreshCoalescer } from '../../../../src/host/views/refreshCoalescer.ts';

function setup(delay = 100) {
  const clock = new FakeClock();
  const flushed: Array<string[] | undefined> = [];
  const c = new RefreshCoalescer<string>(clock, delay, (m) => flushed.push(m ? [...m].sort() : undefined));
  return { clock, flushed, c };
}

describe('RefreshCoalescer', () => {
  it('turns a burst of 10,000 marks into one flush of the distinct keys, delayMs after the first mark', () => {
    const { clock, flushed, c } = setup();
    for (let i = 0; i < 10_000; i++) c.mark(`k${i % 3}`);
    clock.step(99);
    assert.deepEqual(flushed, []);
    clock.step(1);
    assert.deepEqual(flushed, [['k0', 'k1', 'k2']]);
    assert.equal(c.flushes, 1);
  });

  it('starts a new batch after a flush', () => {
    const { clock, flushed, c } = setup();
    c.mark('a');
    clock.step(100);
    c.mark('b');
    clock.step(50);
    c.mark('c');
    clock.step(50);
    assert.deepEqual(flushed, [['a'], ['b', 'c']]);
  });

  it('all() flushes undefined (everything) and absorbs marks', () => {
    const { clock, flushed, c } = setup();
    c.mark('a');
    c.all();
    c.mark('b');
    clock.step(100);
    assert.deepEqual(flushed, [undefined]);
  });

  it('flushNow delivers at once and cancels the timer; nothing is flushed when nothing is marked', () => {
    const { clock, flushed, c } = setup();
    c.flushNow();
    c.mark('x');
    c.flushNow();
    assert.deepEqual(flushed, [['x']]);
    assert.equal(clock.pendingTimers, 0);
    clock.step(1000);
    assert.equal(flushed.length, 1);
  });

  it('hold() keeps timed deliveries back until released (nested, idempotent release); flushNow still delivers', () => {
    const { clock, flushed, c } = setup();
    const outer = c.hold();
    const inner = c.hold();
    c.all();
    clock.step(1000);
    assert.deepEqual(flushed, [], 'nothing while held');
    inner.dispose();
    inner.dispose(); // counts once: the outer hold is still in force
    c.mark('a');
    clock.step(1000);
    assert.deepEqual(flushed, []);
    outer.dispose();
    clock.step(99);
    assert.deepEqual(flushed, [], 'one delay after the release');
    clock.step(1);
    assert.deepEqual(flushed, [undefined], 'the held marks, once');
    const h = c.hold();
    c.mark('b');
    c.flushNow();
    assert.deepEqual(flushed, [undefined, ['b']], 'an explicit flush is not held');
    h.dispose();
    clock.step(1000);
    assert.equal(flushed.length, 2, 'nothing left to deliver after the release');
    assert.equal(clock.pendingTimers, 0);
  });

  it('delivers nothing after dispose and leaves no timer', () => {
    const { clock, flushed, c } = setup();
    c.mark('a');
    c.dispose();
    assert.equal(clock.pendingTimers, 0);
    c.mark('b');
    clock.step(1000);
    assert.deepEqual(flushed, []);
  });
});
