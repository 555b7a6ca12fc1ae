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

test('for a cluster-scoped kind the message speaks of its copy and the scratch namespace, not of the object\'s own namespace (it has none)', () => {
  const m = confinementMessage('the write create namespaces tenant-x was refused', true);
  assert.doesNotMatch(m, /object's own namespace|copy in a scratch namespace/);
  assert.match(m, /outside the scratch namespace \(a cluster-scoped object other than the copy, e\.g\. a Namespace per object[^]*copy of the object under a name of its own[^]*your real objects are never changed[^]*not from your controller/);
  assert.match(confinementMessage('x'), /object's own namespace/, 'a namespaced kind keeps its wording');
});

test('confinedClient: the built-in loop of a check writes in its scratch namespace, to the copy and to what it created; a write that would change anything else is refused before the server', async () => {
  const { CheckFootprint, confinedClient } = await import('../../../src/core/checks/confinement.ts');
  const sent: string[] = [];
  const obj = (ns: string | undefined, name: string) => ({ apiVersion: 'v1', kind: 'X', metadata: { name, ...(ns ? { namespace: ns } : {}) } });
  const answer = async (verb: string, ns: string | undefined, name: string) => {
    sent.push(`${verb} ${ns ?? ''}/${name}`);
    return obj(ns, name);
  };
  const inner = {
    get: async () => obj('x', 'x'), list: async () => ({ metadata: {}, items: [] }), discover: async () => [],
    create: async (_g: unknown, o: { metadata: { namespace?: string; name?: string; generateName?: string } }) => answer('create', o.metadata.namespace, o.metadata.name ?? `${o.metadata.generateName}abc12`),
    update: async (_g: unknown, o: { metadata: { namespace?: string; name?: string } }) => answer('update', o.metadata.namespace, o.metadata.name!),
    updateStatus: async (_g: unknown, o: { metadata: { namespace?: string; name?: string } }) => answer('updateStatus', o.metadata.namespace, o.metadata.name!),
    patch: async (_g: unknown, ns: string | undefined, n: string) => answer('patch', ns, n),
    patchStatus: async (_g: unknown, ns: string | undefined, n: string) => answer('patchStatus', ns, n),
    apply: async (_g: unknown, o: { metadata: { namespace?: string; name?: string } }) => answer('apply', o.metadata.namespace, o.metadata.name!),
    delete: async (_g: unknown, ns: string | undefined, n: string) => answer('delete', ns, n),
  } as never;
  const CM = { group: '', version: 'v1', resource: 'configmaps' };
  const NS = { group: '', version: 'v1', resource: 'namespaces' };
  const TENANTS = { group: 'platform.example.dev', version: 'v1', resource: 'tenants' };
  const footprint = new CheckFootprint();
  const c = confinedClient(inner, { namespace: 'rl-check-1', clusterCopy: { gvr: TENANTS, name: 'rl-check-1-acme' }, footprint });
  const refused = (p: Promise<unknown>, what: RegExp) => assert.rejects(p, (e: Error) => e.message.startsWith(CHECK_WRITE_REFUSAL) && what.test(e.message) && /writes only in its scratch namespace rl-check-1/.test(e.message));

  await c.update(CM, obj('rl-check-1', 'child') as never);
  await c.patchStatus(TENANTS, undefined, 'rl-check-1-acme', 'merge', {});
  await refused(c.patch(CM, 'platform', 'registry', 'merge', {}), /^reconcile lab check: refused patch configmaps platform\/registry:/);
  await refused(c.delete(TENANTS, undefined, 'acme'), /refused delete tenants\.platform\.example\.dev acme:/);
  await refused(c.apply(CM, obj('default', 'cfg') as never, { fieldManager: 'm' }), /refused apply configmaps default\/cfg:/);
  // A create cannot change an existing object (the server refuses one that exists): it goes through and is the check's.
  await c.create(NS, obj(undefined, 'tenant-rl-check-1-acme') as never);
  await c.create(CM, obj('tenant-rl-check-1-acme', 'info') as never);
  await c.update(CM, obj('tenant-rl-check-1-acme', 'info') as never);
  await c.patch(NS, undefined, 'tenant-rl-check-1-acme', 'merge', {});
  // ... and it stays the check's for the next run (a restarted controller), which shares the footprint.
  const next = confinedClient(inner, { namespace: 'rl-check-1', footprint });
  await next.delete(CM, 'tenant-rl-check-1-acme', 'info');
  await refused(next.update(CM, obj('platform', 'registry') as never), /refused update configmaps platform\/registry:/);
  // Dry-run writes persist nothing: never refused.
  await c.patch(CM, 'platform', 'registry', 'merge', {}, { dryRun: true });
  assert.deepEqual(sent, [
    'update rl-check-1/child',
    'patchStatus /rl-check-1-acme',
    'create /tenant-rl-check-1-acme',
    'create tenant-rl-check-1-acme/info',
    'update tenant-rl-check-1-acme/info',
    'patch /tenant-rl-check-1-acme',
    'delete tenant-rl-check-1-acme/info',
    'patch platform/registry',
  ], 'a refused write never reached the server');
});
