import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loopProblemActions } from '../../../src/host/session/loopProblemActions.ts';

test('the loop-not-available warning offers, for a workspace without the Widget CRD, both ways to reconcile one\'s own resource', () => {
  // A new user with a CRD of their own and default settings: their Go controller, or an exec program / JS-TS module.
  assert.deepEqual(loopProblemActions({ reason: 'noPrimary' }, true), ['Run Controller…', 'Choose Reconciler…']);
  // Both run workspace code: nothing is offered in an untrusted workspace but trust itself.
  assert.deepEqual(loopProblemActions({ reason: 'noPrimary' }, false), []);
  assert.deepEqual(loopProblemActions({ reason: 'untrusted' }, false), ['Manage Workspace Trust']);
  // A wrong setting: that setting.
  assert.deepEqual(loopProblemActions({ reason: 'config', setting: 'reconciler.modulePath' }, true), ['Open Settings']);
  assert.deepEqual(loopProblemActions({ reason: 'noPrimary', setting: 'reconciler.resource' }, true), ['Open Settings']);
  assert.deepEqual(loopProblemActions({ reason: 'config' }, true), []);
});
