// The confinement of a Go check instance (cache and writes limited to its scratch namespace) is told apart from the
// controller's own failures: a refused write or a read the confined cache cannot serve makes a check "could not
// run", never a finding. These are the texts the bridge (bridge/checks.go) and controller-runtime v0.25 produce.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { confinementFailure, confinementMessage, CHECK_WRITE_REFUSAL } from '../../../src/core/checks/confinement.ts';
import type { JournalEntry } from '../../../src/core/journal/journal.ts';

const KEY = 'rl-check-1a2b3c4d/orders';
let seq = 0;
const end = (message: string, key = KEY, kind: 'error' | 'terminal' = 'error'): JournalEntry => ({ seq: ++seq, at: seq, key, kind: 'reconcileEnd', outcome: { kind, message }, durationMs: 1 });
const write = (error: string | undefined, key = KEY): JournalEntry => ({
  seq: ++seq, at: seq, key, kind: 'write', verb: 'delete', resource: 'configmaps.v1', gvr: { group: '', version: 'v1', resource: 'configmaps' },
  objectKey: 'h1-external/rl-check-1a2b3c4d.orders', dryRun: false, ...(error !== undefined ? { error } : {}),
});

test('a write refused by the bridge names the write', () => {
  const refusal = `${CHECK_WRITE_REFUSAL}delete configmaps h1-external/rl-check-1a2b3c4d.orders: a check instance writes only in its scratch namespace rl-check-1a2b3c4d (a write elsewhere would change your real objects)`;
  assert.equal(refusal.startsWith('reconcile lab check: refused '), true, 'the prefix bridge/checks.go writes');
  assert.equal(confinementFailure([write(refusal), end(`deregistering: ${refusal}`)], KEY),
    'the write delete configmaps h1-external/rl-check-1a2b3c4d.orders was refused (a check instance writes only in its scratch namespace)');
});

test('a reconcile error carrying controller-runtime\'s "unknown namespace for the cache" names the read; a wrapped refusal counts too', () => {
  const m = confinementFailure([end('registering h1-external/x.orders: unable to get: h1-external/x.orders because of unknown namespace for the cache')], KEY);
  assert.match(m!, /^a read \(get h1-external\/x\.orders\) outside the scratch namespace failed \(a check instance's cache holds only its scratch namespace\): registering /);
  assert.match(confinementFailure([end('unable to list: h1-external because of unknown namespace for the cache', KEY, 'terminal')], KEY)!, /^a read \(list h1-external\)/);
  assert.match(confinementFailure([end(`wrapped: ${CHECK_WRITE_REFUSAL}create x`)], KEY)!, /^a write outside the scratch namespace was refused: wrapped: /);
});

test('the controller\'s own failures, other keys and failed writes the server refused are not the confinement', () => {
  assert.equal(confinementFailure([end('spec.replicas 99 out of range'), write('configmaps "x" is forbidden'), write(undefined)], KEY), undefined);
  assert.equal(confinementFailure([end('unable to get: a/b because of unknown namespace for the cache', 'rl-check-1a2b3c4d/other')], KEY), undefined, 'another key');
  assert.match(confinementFailure([end('unable to get: a/b because of unknown namespace for the cache', 'rl-check-1a2b3c4d/other')])!, /get a\/b/, 'without a key: any key (a finding\'s journal)');
  assert.equal(confinementFailure([], KEY), undefined);
});

test('the message says it is no finding and why the instance is confined', () => {
  assert.match(confinementMessage('the write x was refused'), /^could not check this key inside a check instance: the write x was refused\. [^]*your real objects are never changed[^]*not from your controller/);
});
