import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../fakes/fakeClock.ts';
import { Ticker } from '../../../../src/host/views/ticker.ts';
import { formatAge } from '../../../../src/host/views/format.ts';
import { presentObject } from '../../../../src/host/views/presentation.ts';

test('the ticker runs one timer only while active, and none while inactive or disposed', () => {
  const clock = new FakeClock();
  let n = 0;
  const t = new Ticker(clock, 1000, () => n++);
  assert.equal(clock.pendingTimers, 0, 'inactive: no timer at all');
  clock.step(5000);
  assert.equal(n, 0);
  t.setActive(true);
  t.setActive(true);
  assert.equal(clock.pendingTimers, 1, 'one timer, however often it is activated');
  clock.step(3000);
  assert.equal(n, 3);
  assert.equal(clock.pendingTimers, 1);
  t.setActive(false);
  assert.equal(clock.pendingTimers, 0, 'hidden views: the timer is gone');
  clock.step(10_000);
  assert.equal(n, 3);
  t.setActive(true);
  clock.step(1000);
  assert.equal(n, 4);
  t.dispose();
  assert.equal(clock.pendingTimers, 0);
  t.setActive(true);
  assert.equal(clock.pendingTimers, 0, 'a disposed ticker never starts again');
});

test('a throwing tick does not stop the ticker', () => {
  const clock = new FakeClock();
  let n = 0;
  const t = new Ticker(clock, 500, () => {
    n++;
    throw new Error('boom');
  });
  t.setActive(true);
  clock.step(1500);
  assert.equal(n, 3);
  t.dispose();
});

test('"Terminating Ns" moves with the clock; row and tooltip agree at one now', () => {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const obj = { kind: 'Widget', metadata: { name: 'w', namespace: 'ns', deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['x.example.com/f'] } };
  const rows: string[] = [];
  const t = new Ticker(clock, 1000, () => {
    const p = presentObject(obj, undefined, clock.now());
    rows.push(p.description);
    const tip = p.tooltip.find((l) => l.label === 'Terminating')!.value;
    assert.ok(tip.startsWith(`deletion requested ${formatAge(clock.now() - Date.parse(obj.metadata.deletionTimestamp))} ago`), tip);
  });
  t.setActive(true);
  clock.step(3000);
  t.dispose();
  assert.deepEqual(rows, ['Terminating 1s (x.example.com/f)', 'Terminating 2s (x.example.com/f)', 'Terminating 3s (x.example.com/f)']);
});
