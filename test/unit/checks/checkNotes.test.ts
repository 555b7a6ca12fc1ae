import { test } from 'node:test';
import assert from 'node:assert/strict';
import { droppedFieldsNote, foreignWriterNote, generateNameAfterCrashNote } from '../../../src/core/checks/runChecks.ts';
import type { WriteRecord } from '../../../src/core/k8s/dynamicClient.ts';

const ORDERS = { group: 'shop.example.io', version: 'v1', resource: 'orders' };
const copy = { key: 'shop/o1', scratchKey: 'rl-check-1/o1', namespace: 'rl-check-1', scratchNamespace: 'rl-check-1', name: 'o1', createdResourceVersion: '100', references: [], redirected: [] };
const raw = (rv: string) => ({ namespace: 'rl-check-1', objects: [{ resource: 'orders.shop.example.io', object: { metadata: { name: 'o1', namespace: 'rl-check-1', resourceVersion: rv } } }] });
const status = (after: string): WriteRecord => ({ verb: 'update', subresource: 'status', gvr: ORDERS, namespace: 'rl-check-1', name: 'o1', key: 'rl-check-1/o1', dryRun: false, resourceVersionBefore: '100', resourceVersionAfter: after, outcome: 'ok', startedAt: 0, durationMs: 1 });

test('a scratch copy whose resourceVersion no journaled write made is noted as changed by another writer (another instance of the controller)', () => {
  assert.match(foreignWriterNote({ raw: raw('107'), copy, writes: [status('103')] }, 'shop/o1', ORDERS) ?? '', /^The scratch copy of shop\/o1 was changed by a writer the checks did not run \(it was seen at resourceVersion 107, which none of the writes of the reconciler under check made\): another instance of this controller/);
  // Another writer before the reconciler's last write: its write found a version it did not make.
  assert.match(foreignWriterNote({ raw: raw('105'), copy, writes: [{ ...status('105'), resourceVersionBefore: '102' }] }, 'shop/o1', ORDERS) ?? '', /seen at resourceVersion 102,/);
  // A write made from a stale cache found an older version of its own: not another writer.
  assert.equal(foreignWriterNote({ raw: raw('105'), copy, writes: [status('103'), { ...status('105'), resourceVersionBefore: '100' }] }, 'shop/o1', ORDERS), undefined);
  assert.equal(foreignWriterNote({ raw: raw('103'), copy, writes: [status('103')] }, 'shop/o1', ORDERS), undefined, 'its own last write');
  assert.equal(foreignWriterNote({ raw: raw('100'), copy, writes: [] }, 'shop/o1', ORDERS), undefined, 'never written since it was copied');
  // kube-controller-manager writes some built-in kinds (a Deployment's status): not judged.
  assert.equal(foreignWriterNote({ raw: { objects: [{ resource: 'deployments.apps', object: { metadata: { name: 'o1', resourceVersion: '107' } } }] }, copy, writes: [] }, 'shop/o1', { group: 'apps', version: 'v1', resource: 'deployments' }), undefined);
});

test("a no-op write whose fields the server dropped (unknown field) is explained by the schema, not by a missing comparison", () => {
  const w = { ...status('103'), resourceVersionAfter: '100', warnings: ['unknown field "status.phase"'] };
  assert.match(droppedFieldsNote(w) ?? '', /^The second reconcile sent update orders\.shop\.example\.io rl-check-1\/o1 \(status\) and the server changed nothing, because it dropped "status\.phase": that field is not in the resource's schema .*make manifests/);
  assert.equal(droppedFieldsNote({ ...w, warnings: ['v1 Foo is deprecated'] }), undefined);
  assert.equal(droppedFieldsNote(status('103')), undefined);
});

test('crash after write: a create with the generateName of one made before the crash is named, with the fix', () => {
  const SAS = { group: '', version: 'v1', resource: 'serviceaccounts' };
  const create = (name: string, generateName?: string): WriteRecord => ({ verb: 'create', gvr: SAS, namespace: 'rl-check-1', name, key: `rl-check-1/${name}`, dryRun: false, outcome: 'ok', startedAt: 0, durationMs: 1, after: { metadata: { name, namespace: 'rl-check-1', ...(generateName ? { generateName } : {}) } } });
  const note = generateNameAfterCrashNote([create('tenant-acme-vskkd', 'tenant-acme-')], [create('tenant-acme-fdgpz', 'tenant-acme-'), status('104')]);
  assert.equal(note, ' The restarted controller created serviceaccounts tenant-acme-fdgpz with generateName "tenant-acme-", though the stopped one had already created tenant-acme-vskkd: the name the server chooses is known only to the process that sent the create (and to wherever it wrote it afterwards, such as status), so a crash in between leaves the first one behind and the next reconcile makes another. Give the child a name derived from the owner (a second create then gets AlreadyExists), or find the earlier one by label and ownerReference before creating.');
  // A fixed name created again, or a generateName create the stopped controller had not made: no such note.
  assert.equal(generateNameAfterCrashNote([create('tenant-acme')], [create('tenant-acme')]), undefined);
  assert.equal(generateNameAfterCrashNote([create('other-x1', 'other-')], [create('tenant-acme-fdgpz', 'tenant-acme-')]), undefined);
});
