import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clampSettings, SettingDefaults, SettingRanges } from '../../../src/host/settings.ts';

test('numeric settings are clamped to their declared ranges (a workspace asking for 50 million workers gets 64)', () => {
  const s = clampSettings({
    ...SettingDefaults,
    'workQueue.maxConcurrentReconciles': 50_000_000,
    'eventLog.size': 1e12,
    'informer.resyncPeriodSeconds': -5,
    'workQueue.reconcileTimeoutSeconds': 1e300,
    'reconciler.execTimeoutSeconds': Number.NaN,
  });
  assert.equal(s['workQueue.maxConcurrentReconciles'], 64);
  assert.equal(s['eventLog.size'], 200_000);
  assert.equal(s['informer.resyncPeriodSeconds'], 0);
  assert.equal(s['workQueue.reconcileTimeoutSeconds'], 86_400);
  assert.equal(s['reconciler.execTimeoutSeconds'], SettingDefaults['reconciler.execTimeoutSeconds']);
  assert.equal(clampSettings({ ...SettingDefaults, 'workQueue.maxConcurrentReconciles': 2.9 })['workQueue.maxConcurrentReconciles'], 2);
  assert.equal(clampSettings({ ...SettingDefaults, 'workQueue.maxConcurrentReconciles': 0 })['workQueue.maxConcurrentReconciles'], 1);
  // Defaults are inside their ranges and survive unchanged.
  assert.deepEqual(clampSettings(SettingDefaults), SettingDefaults);
  for (const [k, r] of Object.entries(SettingRanges)) assert.ok(r.min <= r.max, k);
});
