import { test } from 'node:test';
import assert from 'node:assert/strict';
import { migratedWorkQueueKind, SettingDefaults } from '../../../src/host/settings.ts';

test('one default queue: the priority queue; the deprecated rateLimiter setting still chooses the queue until workQueue.kind is set', () => {
  assert.equal(SettingDefaults['workQueue.kind'], 'priority');
  assert.equal(SettingDefaults['workQueue.rateLimiter'], '', 'the old setting no longer has a value of its own');
  assert.equal(migratedWorkQueueKind(false, ''), undefined, 'nothing set: the default');
  assert.equal(migratedWorkQueueKind(false, 'client-go'), 'client-go', 'the old client-go limiter → the client-go queue it ran on');
  assert.equal(migratedWorkQueueKind(false, 'controller-runtime'), 'priority', "the old controller-runtime limiter → controller-runtime's queue");
  assert.equal(migratedWorkQueueKind(true, 'client-go'), undefined, 'an explicit workQueue.kind wins');
  assert.equal(migratedWorkQueueKind(false, 42), undefined, 'a mistyped value is ignored');
});
