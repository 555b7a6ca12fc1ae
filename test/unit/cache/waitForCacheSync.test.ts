import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitForCacheSync } from '../../../src/core/cache/waitForCacheSync.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { settle } from './helpers.ts';

test('polls every 100 ms until every syncable has synced', async () => {
  const clock = new FakeClock();
  let a = false;
  let b = false;
  let result: boolean | undefined;
  void waitForCacheSync(clock, [{ hasSynced: () => a }, { hasSynced: () => b }]).then((v) => (result = v));
  await settle();
  a = true;
  clock.step(100);
  await settle();
  assert.equal(result, undefined);
  b = true;
  clock.step(99);
  await settle();
  assert.equal(result, undefined, 'checked on the 100 ms tick only');
  clock.step(1);
  await settle();
  assert.equal(result, true);
});

test('resolves at once when already synced, false on abort (never rejects)', async () => {
  const clock = new FakeClock();
  assert.equal(await waitForCacheSync(clock, [{ hasSynced: () => true }]), true);
  assert.equal(await waitForCacheSync(clock, []), true);
  const ac = new AbortController();
  const p = waitForCacheSync(clock, [{ hasSynced: () => false }], { signal: ac.signal });
  ac.abort(new Error('bye'));
  assert.equal(await p, false);
  assert.equal(clock.pendingTimers, 0);
});
