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

test('settingProblems names what the readers replace or clamp silently: a wrong type, a number out of range or not whole, an unknown choice', async () => {
  const { settingProblems } = await import('../../../src/host/settings.ts');
  assert.deepEqual(settingProblems({
    'workQueue.maxConcurrentReconciles': '4',
    'eventLog.size': 50,
    'reconciler.execTimeoutSeconds': 2.5,
    'workQueue.kind': 'client_go',
    'informer.watchList': 'false',
    resources: 'tenants.h5.example.org',
    'workQueue.reconcileTimeoutSeconds': 10,
    'reconciler.predicates': ['generation-changed'],
  }), [
    'reconcileLab.resources is "tenants.h5.example.org", not a list of strings: the default [] applies',
    'reconcileLab.informer.watchList is "false", not a boolean: the default true applies',
    'reconcileLab.workQueue.kind is "client_go", not one of "priority", "client-go": the priority queue applies',
    'reconcileLab.workQueue.maxConcurrentReconciles is "4", not a number: the default 1 applies',
    'reconcileLab.eventLog.size is 50, outside 100–200000: 100 applies',
  ]);
  assert.deepEqual(settingProblems({ 'workQueue.maxConcurrentReconciles': 2.7 }), ['reconcileLab.workQueue.maxConcurrentReconciles is 2.7, not a whole number: 2 applies']);
  // Values as declared (and the defaults) are no problem; a fractional timeout is allowed.
  assert.deepEqual(settingProblems({ ...SettingDefaults, 'reconciler.execTimeoutSeconds': 2.5, 'workQueue.kind': 'client-go' }), []);
});

test('checks.transitions takes a list of JSON objects (merge patches): anything else is named and the default applies; goController.env must be an object, not a list', async () => {
  const { settingProblems, settingTypeOk } = await import('../../../src/host/settings.ts');
  assert.equal(settingTypeOk('checks.transitions', [{ spec: { replicas: 3 } }, { metadata: { labels: { a: 'b' } } }]), true);
  assert.equal(settingTypeOk('checks.transitions', []), true);
  for (const bad of [['{"spec":{}}'], [{ spec: {} }, null], [[{ spec: {} }]], { spec: {} }, '[{"spec":{}}]']) assert.equal(settingTypeOk('checks.transitions', bad), false, JSON.stringify(bad));
  assert.deepEqual(settingProblems({ 'checks.transitions': ['{"spec":{"replicas":3}}'] }), ['reconcileLab.checks.transitions is ["{\\"spec\\":{\\"replicas\\":3}}"], not a list of JSON objects: the default [] applies']);
  assert.deepEqual(settingProblems({ 'checks.transitions': [{ spec: { replicas: 3 } }] }), []);
  // A list of strings stays what the other list settings take; an object setting refuses a list (typeof [] is "object").
  assert.equal(settingTypeOk('reconciler.predicates', [{ x: 1 }]), false);
  assert.equal(settingTypeOk('goController.env', ['A=1']), false);
  assert.equal(settingTypeOk('goController.env', { A: '1' }), true);
});

test('unknownSettingProblems names reconcileLab.* keys that are no setting, with the setting meant; known keys, their own values and the configuration object\'s methods are not named', async () => {
  const { unknownSettingProblems } = await import('../../../src/host/settings.ts');
  // As VS Code merges the section: nested by the dots of the keys, defaults of known keys included.
  const section = {
    resources: ['tenants.platform.example.dev'],
    reconciler: { kind: 'module', modulePath: 'r.ts', predicate: ['generation-changed'], predicates: [] },
    workqueue: { kind: 'client-go' },
    goController: { env: { NOT_A_SETTING: '1' }, args: [] },
    eventlog: 5,
    zzzUnrelated: true,
    get: () => undefined,
    inspect: () => undefined,
  };
  assert.deepEqual(unknownSettingProblems(section), [
    'reconcileLab.reconciler.predicate is not a Reconcile Lab setting (did you mean reconcileLab.reconciler.predicates?): it does nothing',
    'reconcileLab.workqueue.kind is not a Reconcile Lab setting (did you mean reconcileLab.workQueue.kind?): it does nothing',
    'reconcileLab.eventlog is not a Reconcile Lab setting (did you mean reconcileLab.eventLog.size?): it does nothing',
    'reconcileLab.zzzUnrelated is not a Reconcile Lab setting: it does nothing',
  ]);
  assert.deepEqual(unknownSettingProblems({ reconciler: { kind: 'lab' }, 'connection': { context: '' } }), []);
  assert.deepEqual(unknownSettingProblems(undefined), []);
});
