import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ignoredRestrictedSettings, ignoredSettingsNotice, parseJsonc, reconnectPromptOf } from '../../../src/host/ignoredSettings.ts';

test('parseJsonc reads a VS Code settings file: comments and trailing commas go, strings stay as they are', () => {
  const text = `{
    // the reconciler
    "reconcileLab.reconciler.kind": "module", /* inline */
    "reconcileLab.reconciler.modulePath": "src//tenant.ts",
    "reconcileLab.namespaces": ["h5-shop", "a,]b", ],
    "editor.rulers": [80,],
    "quote": "say \\"hi\\" // not a comment",
  }`;
  assert.deepEqual(parseJsonc(text), {
    'reconcileLab.reconciler.kind': 'module',
    'reconcileLab.reconciler.modulePath': 'src//tenant.ts',
    'reconcileLab.namespaces': ['h5-shop', 'a,]b'],
    'editor.rulers': [80],
    quote: 'say "hi" // not a comment',
  });
  assert.throws(() => parseJsonc('{ "a": }'));
});

test('ignoredRestrictedSettings lists the restricted reconcileLab settings a workspace sets; the notice names them and how to trust', () => {
  const ignored = ignoredRestrictedSettings(`{
    "reconcileLab.reconciler.kind": "module", // runs workspace code
    "reconcileLab.reconciler.modulePath": "tenant.ts",
    "reconcileLab.reconciler.resource": "tenants.h5.example.org",
    "reconcileLab.eventLog.size": 500,
  }`);
  assert.deepEqual(ignored.map((x) => x.key), ['reconciler.modulePath', 'reconciler.kind', 'reconciler.resource'], 'eventLog.size is not restricted');
  const notice = ignoredSettingsNotice(ignored)!;
  assert.match(notice, /^Restricted Mode: this folder's settings reconcileLab\.reconciler\.modulePath = "tenant\.ts", reconcileLab\.reconciler\.kind = "module", reconcileLab\.reconciler\.resource = "tenants\.h5\.example\.org" are ignored until you trust it/);
  assert.match(notice, /the module reconciler runs code from this workspace\), so the loop uses your user settings instead \(the built-in lab reconciler/);
  assert.match(notice, /Trust the folder \(Manage Workspace Trust\) to use them; Reconcile Lab then offers to reconnect\.$/);
  assert.match(ignoredSettingsNotice(ignoredRestrictedSettings('{"reconcileLab.namespaces": ["x"]}'))!, /^Restricted Mode: this folder's settings reconcileLab\.namespaces are ignored .*so your user settings apply instead\./);
  // Nothing restricted, no file content worth reading: no notice.
  assert.equal(ignoredSettingsNotice(ignoredRestrictedSettings('{"reconcileLab.eventLog.size": 5}')), undefined);
  assert.deepEqual(ignoredRestrictedSettings('not json'), []);
  assert.deepEqual(ignoredRestrictedSettings('[1, 2]'), []);
});

test('reconnectPromptOf: trust granted to a folder connected untrusted asks in words about trust, not "settings changed"', () => {
  const connectionScoped = ['reconciler.kind', 'reconciler.modulePath', 'namespaces'] as const;
  const base = { connectedTrusted: false, trustedNow: true, waitingForTrust: true, connectionScoped };
  // The settings change VS Code fires when trust makes the folder's restricted settings apply.
  const bySettings = reconnectPromptOf({ ...base, changed: ['reconciler.kind', 'reconciler.modulePath', 'eventLog.size'] })!;
  assert.equal(bySettings.trust, true);
  assert.equal(bySettings.message, "The workspace is now trusted: this folder's Reconcile Lab settings (reconcileLab.reconciler.kind, reconcileLab.reconciler.modulePath) and its exec or module reconciler apply once you reconnect. Reconnect now?");
  assert.doesNotMatch(bySettings.message, /settings changed/);
  // The trust event itself.
  const byTrust = reconnectPromptOf({ ...base, changed: 'trust' })!;
  assert.equal(byTrust.trust, true);
  assert.match(byTrust.message, /^The workspace is now trusted: this folder's Reconcile Lab settings and its exec or module reconciler apply once you reconnect\./);
  // Trust granted but nothing of the connection waited for it: no prompt from the trust event.
  assert.equal(reconnectPromptOf({ ...base, waitingForTrust: false, changed: 'trust' }), undefined);
  // A connection made trusted: the generic wording, only for settings that need a reconnect.
  const trusted = { ...base, connectedTrusted: true };
  assert.deepEqual(reconnectPromptOf({ ...trusted, changed: ['namespaces'] }), { trust: false, message: 'Reconcile Lab settings changed. Reconnect to apply them?' });
  assert.equal(reconnectPromptOf({ ...trusted, changed: ['eventLog.size'] }), undefined);
  assert.equal(reconnectPromptOf({ ...trusted, changed: 'trust' }), undefined);
  // Still untrusted (a user setting changed): the generic wording.
  assert.equal(reconnectPromptOf({ ...base, trustedNow: false, changed: ['namespaces'] })?.trust, false);
});
