import { test } from 'node:test';
import assert from 'node:assert/strict';
import { realClock, sleep } from '../../../src/core/clock.ts';

// Node fires a setTimeout longer than 2^31-1 ms (about 24.8 days) after 1 ms, with a TimeoutOverflowWarning: a
// `run --duration 3000000` stopped at once, before its caches synced. The real clock must wait, never fire early.
test('realClock: a wait beyond Node\'s 24.8-day timer limit does not fire early, and can be cleared', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    let fired = 0;
    const h = realClock.setTimeout(() => fired++, 3_000_000_000);
    const h2 = realClock.setTimeout(() => fired++, 2 ** 31);
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(fired, 0, 'a 35-day timer fired after a few milliseconds');
    realClock.clearTimeout(h);
    realClock.clearTimeout(h2);
    assert.deepEqual(warnings.filter((w) => w === 'TimeoutOverflowWarning'), []);
  } finally {
    process.off('warning', onWarning);
  }
});

test('realClock: ordinary timers still fire, and clearing one stops it', async () => {
  let fired = 0;
  const cleared = realClock.setTimeout(() => fired += 10, 5);
  realClock.clearTimeout(cleared);
  await sleep(realClock, 20);
  realClock.setTimeout(() => fired++, 0);
  await sleep(realClock, 20);
  assert.equal(fired, 1);
});
