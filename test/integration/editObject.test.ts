// Edit as YAML and apply against the real kube-apiserver: the update carries the opened resourceVersion, a change
// made meanwhile is a conflict that writes nothing (the other writer's change survives), Secret values are masked
// and restored, and a rename is refused.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, getTestCluster, installCrd, testCrd, uniqueName, type TestCluster } from './support/cluster.ts';
import { applyEdit, describeApplied, editableYaml, SECRET_MASK, STATUS_NOTE } from '../../src/core/actions/editObject.ts';
import { createDynamicClient, type DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import type { GroupVersionResource } from '../../src/core/k8s/objects.ts';

const CONFIGMAPS: GroupVersionResource = { group: '', version: 'v1', resource: 'configmaps' };
const SECRETS: GroupVersionResource = { group: '', version: 'v1', resource: 'secrets' };

describe('edit as YAML and apply (optimistic concurrency)', () => {
  let c: TestCluster;
  let client: DynamicKubeClient;
  let ns: string;
  before(async () => {
    c = await getTestCluster();
    client = createDynamicClient(c.transport, { fieldManager: 'reconcile-lab' });
    ns = await createNamespace(c.transport, 'edit');
  });

  test('an edit applies with the opened resourceVersion; a concurrent change is a conflict and is not clobbered', async () => {
    const base = await client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: ns }, data: { color: 'blue' } });
    const text = editableYaml(base);
    assert.match(text, new RegExp(`at resourceVersion ${base.metadata.resourceVersion}`));
    assert.doesNotMatch(text, /managedFields/);
    assert.deepEqual(await applyEdit({ client, gvr: CONFIGMAPS, base, text }), { kind: 'unchanged' });

    const applied = await applyEdit({ client, gvr: CONFIGMAPS, base, text: text.replace('color: blue', 'color: green') });
    assert.equal(applied.kind, 'applied');
    assert.ok(applied.kind === 'applied');
    assert.equal(applied.resourceVersionBefore, base.metadata.resourceVersion);
    assert.notEqual(applied.resourceVersionAfter, base.metadata.resourceVersion);
    assert.match(applied.diff, /-\s+color: blue\n\+\s+color: green/);
    const now = await client.get(CONFIGMAPS, ns, 'cfg');
    assert.deepEqual(now.data, { color: 'green' });
    assert.ok((now.metadata.managedFields ?? []).some((m) => m.manager === 'reconcile-lab'), 'written with the extension\'s field manager');

    // Opened at `now`; someone else writes; applying the stale edit is a conflict and writes nothing.
    const opened = now;
    await client.update(CONFIGMAPS, { ...now, data: { color: 'red' } });
    const stale = await applyEdit({ client, gvr: CONFIGMAPS, base: opened, text: editableYaml(opened).replace('color: green', 'color: purple') });
    assert.equal(stale.kind, 'conflict');
    assert.ok(stale.kind === 'conflict');
    assert.match(stale.message, /changed on the server since you opened it \(resourceVersion \d+ → \d+\): nothing was written/);
    assert.deepEqual(stale.server?.data, { color: 'red' });
    assert.match(stale.diff, /-\s+color: red\n\+\s+color: purple/);
    assert.deepEqual((await client.get(CONFIGMAPS, ns, 'cfg')).data, { color: 'red' }, 'the other writer\'s change survives');
    // A resourceVersion typed into the text does not override the opened one.
    const forged = editableYaml(opened).replace('color: green', 'color: purple').replace(`resourceVersion: "${opened.metadata.resourceVersion}"`, 'resourceVersion: "999999999"');
    assert.equal((await applyEdit({ client, gvr: CONFIGMAPS, base: opened, text: forged })).kind, 'conflict');
  });

  test('Secret values are masked in the text and restored on apply; a replaced value is stored', async () => {
    const base = await client.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: ns }, type: 'Opaque', data: { password: Buffer.from('hunter2').toString('base64'), user: Buffer.from('admin').toString('base64') } });
    const text = editableYaml(base);
    assert.doesNotMatch(text, new RegExp(Buffer.from('hunter2').toString('base64')));
    assert.doesNotMatch(text, /hunter2|YWRtaW4=/);
    assert.ok(text.includes(SECRET_MASK));
    const edited = text.replace(`user: ${SECRET_MASK}`, `user: ${Buffer.from('root').toString('base64')}`).replace('type: Opaque', 'type: Opaque\nimmutable: false');
    const r = await applyEdit({ client, gvr: SECRETS, base, text: edited });
    assert.equal(r.kind, 'applied', JSON.stringify(r));
    assert.ok(r.kind === 'applied');
    assert.doesNotMatch(r.diff, /hunter2|aHVudGVyMg==|cm9vdA==/, 'no secret value in the diff');
    const now = await client.get(SECRETS, ns, 'creds');
    assert.equal(Buffer.from(String((now as { data?: Record<string, string> }).data?.password), 'base64').toString(), 'hunter2', 'kept');
    assert.equal(Buffer.from(String((now as { data?: Record<string, string> }).data?.user), 'base64').toString(), 'root', 'replaced');
  });

  test('a status edit is not applied by the update of a custom resource whose CRD has the status subresource, and the result says so', async () => {
    const group = `${uniqueName('editstatus')}.example.org`;
    await installCrd(c.transport, testCrd({ group, kind: 'Gadget', plural: 'gadgets' }));
    const gvr: GroupVersionResource = { group, version: 'v1', resource: 'gadgets' };
    const created = await client.create(gvr, { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'g', namespace: ns }, spec: { color: 'blue' } });
    const base = await client.updateStatus(gvr, { ...created, status: { phase: 'Ready' } });
    const text = editableYaml(base);
    assert.ok(text.split('\n').includes(STATUS_NOTE), 'the editor says up front that status is for reference');

    const r = await applyEdit({ client, gvr, base, text: text.replace('color: blue', 'color: green').replace('phase: Ready', 'phase: Broken') });
    assert.ok(r.kind === 'applied', JSON.stringify(r));
    assert.equal(r.statusNotApplied, true);
    const now = await client.get(gvr, ns, 'g');
    assert.deepEqual(now.spec, { color: 'green' }, 'the spec edit is applied');
    assert.deepEqual(now.status, { phase: 'Ready' }, 'the status edit is dropped by the server');
    const said = describeApplied(r, r.object)!;
    assert.equal(said.level, 'warning');
    assert.match(said.message, new RegExp(`^Applied to Gadget ${ns}/g: now at resourceVersion ${now.metadata.resourceVersion} \\(was ${base.metadata.resourceVersion}\\)\\. Your status edits were not applied: status is a subresource of Gadget, written through /status`));

    // A spec-only edit says nothing about status.
    const spec = await applyEdit({ client, gvr, base: now, text: editableYaml(now).replace('color: green', 'color: teal') });
    assert.ok(spec.kind === 'applied' && spec.statusNotApplied === undefined, JSON.stringify(spec));
    assert.equal(describeApplied(spec, spec.object)!.level, 'info');
  });

  test('text that is not one object, a rename and a server rejection write nothing', async () => {
    const base = await client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fixed', namespace: ns }, data: { a: '1' } });
    const text = editableYaml(base);
    assert.equal((await applyEdit({ client, gvr: CONFIGMAPS, base, text: 'data: [unclosed' })).kind, 'invalid');
    assert.equal((await applyEdit({ client, gvr: CONFIGMAPS, base, text: '- a\n- b\n' })).kind, 'invalid');
    const renamed = await applyEdit({ client, gvr: CONFIGMAPS, base, text: text.replace('name: fixed', 'name: other') });
    assert.ok(renamed.kind === 'invalid' && /metadata\.name cannot change/.test(renamed.message));
    const bad = await applyEdit({ client, gvr: CONFIGMAPS, base, text: text.replace('a: "1"', 'a: {nested: true}') });
    assert.equal(bad.kind, 'rejected', JSON.stringify(bad));
    assert.equal((await client.get(CONFIGMAPS, ns, 'fixed')).metadata.resourceVersion, base.metadata.resourceVersion);
  });
});
