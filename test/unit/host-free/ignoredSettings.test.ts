import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ignoredRestrictedSettings, ignoredSettingsNotice, parseJsonc } from '../../../src/host/ignoredSettings.ts';

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
