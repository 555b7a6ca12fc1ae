import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, getTestCluster, installCrd, testCrd, uniqueName } from './support/cluster.ts';
import { writeStatusIfChanged } from '../../src/core/reconcilers/statusWriter.ts';
import { CONFIGMAPS, installLabCrd, type LabCrd } from './reconcilers.support.ts';
import { createDynamicClient, recordingClient, ResourceNotServedError, type DynamicKubeClient, type WriteRecord } from '../../src/core/k8s/dynamicClient.ts';
import { ApiError, isConflict, isNotFound } from '../../src/core/k8s/client.ts';
import { isTerminal } from '../../src/core/controller/reconcile.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';

describe('dynamic client against a real kube-apiserver', () => {
  let c: DynamicKubeClient;
  let crd: LabCrd;
  let ns: string;
  const cm = (name: string, data: Record<string, string> = { a: '1' }): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data });

  before(async () => {
    const cluster = await getTestCluster();
    c = createDynamicClient(cluster.transport, { fieldManager: 'dyn-test', pageSize: 2 });
    crd = await installLabCrd(cluster.transport);
    ns = await createNamespace(cluster.transport, 'dyn');
  });

  test('discover lists core and custom resources with scope, kind and subresources', async () => {
    const all = await c.discover();
    const widgets = all.find((r) => r.group === crd.group && r.resource === 'widgets');
    assert.deepEqual(widgets && { kind: widgets.kind, namespaced: widgets.namespaced, subresources: widgets.subresources }, { kind: 'Widget', namespaced: true, subresources: ['status'] });
    const namespaces = all.find((r) => r.group === '' && r.resource === 'namespaces');
    assert.equal(namespaces?.namespaced, false);
    assert.ok(namespaces?.subresources?.includes('finalize'));
    assert.ok(!all.some((r) => r.resource.includes('/')), 'subresources are not listed as resources');
  });

  test('create / get / list (paginated) / update, with dryRun=All persisting nothing', async () => {
    const dry = await c.create(CONFIGMAPS, cm('dry'), { dryRun: true });
    assert.equal(dry.metadata.name, 'dry');
    await assert.rejects(c.get(CONFIGMAPS, ns, 'dry'), isNotFound);
    for (const n of ['c1', 'c2', 'c3', 'c4', 'c5']) await c.create(CONFIGMAPS, cm(n));
    const list = await c.list(CONFIGMAPS, ns);
    assert.deepEqual(list.items.map((o) => o.metadata.name).filter((n) => n?.startsWith('c')).sort(), ['c1', 'c2', 'c3', 'c4', 'c5']);
    assert.ok(list.metadata.resourceVersion);
    const got = await c.get(CONFIGMAPS, ns, 'c1');
    const updated = await c.update(CONFIGMAPS, { ...got, data: { a: '2' } });
    assert.notEqual(updated.metadata.resourceVersion, got.metadata.resourceVersion);
    await assert.rejects(c.update(CONFIGMAPS, { ...got, data: { a: '3' } }), (e: unknown) => isConflict(e) && (e as ApiError).reason === 'Conflict');
    assert.equal(updated.metadata.managedFields?.[0]?.manager, 'dyn-test', 'default fieldManager');
  });

  test('patch: json, merge and strategic (strategic is refused for custom resources)', async () => {
    await c.patch(CONFIGMAPS, ns, 'c2', 'json', [{ op: 'add', path: '/data/b', value: 'x' }]);
    await c.patch(CONFIGMAPS, ns, 'c2', 'merge', { data: { c: 'y' } });
    const s = await c.patch(CONFIGMAPS, ns, 'c2', 'strategic', { metadata: { labels: { l: 'z' } } });
    assert.deepEqual(s.data, { a: '1', b: 'x', c: 'y' });
    assert.equal(s.metadata.labels?.l, 'z');
    await c.create(crd.gvr, { apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name: 'w', namespace: ns }, spec: { data: {} } });
    await assert.rejects(c.patch(crd.gvr, ns, 'w', 'strategic', { spec: { data: { a: '1' } } }), (e: unknown) => e instanceof ApiError && e.code === 415);
  });

  test('updateStatus and patchStatus write only status; main-resource writes ignore status', async () => {
    const w = await c.get(crd.gvr, ns, 'w');
    const s1 = await c.updateStatus(crd.gvr, { ...w, spec: { data: { ignored: 'yes' } }, status: { childName: 'one' } });
    assert.deepEqual(s1.status, { childName: 'one' });
    assert.deepEqual(s1.spec, { data: {} }, 'spec sent to /status is ignored');
    const s2 = await c.patchStatus(crd.gvr, ns, 'w', 'merge', { status: { childName: 'two' } });
    assert.deepEqual(s2.status, { childName: 'two' });
    const u = await c.update(crd.gvr, { ...s2, status: { childName: 'ignored' } });
    assert.deepEqual(u.status, { childName: 'two' });
  });

  test('server-side apply with a field manager; a conflicting manager needs force', async () => {
    const applied = await c.apply(CONFIGMAPS, cm('ssa', { k: 'v1' }), { fieldManager: 'owner-a' });
    assert.deepEqual(applied.data, { k: 'v1' });
    await assert.rejects(c.apply(CONFIGMAPS, cm('ssa', { k: 'v2' }), { fieldManager: 'owner-b' }), (e: unknown) => isConflict(e));
    const forced = await c.apply(CONFIGMAPS, cm('ssa', { k: 'v2' }), { fieldManager: 'owner-b', force: true });
    assert.deepEqual(forced.data, { k: 'v2' });
    const again = await c.apply(CONFIGMAPS, cm('ssa', { k: 'v2' }), { fieldManager: 'owner-b' });
    assert.equal(again.metadata.resourceVersion, forced.metadata.resourceVersion, 'a no-op apply stores nothing');
  });

  test('delete with preconditions; the answer is the object while finalizers hold it', async () => {
    const o = await c.get(CONFIGMAPS, ns, 'c3');
    await assert.rejects(c.delete(CONFIGMAPS, ns, 'c3', { preconditions: { uid: 'not-the-uid' } }), (e: unknown) => isConflict(e));
    await assert.rejects(c.delete(CONFIGMAPS, ns, 'c3', { preconditions: { resourceVersion: '1' } }), (e: unknown) => isConflict(e));
    await c.delete(CONFIGMAPS, ns, 'c3', { dryRun: true });
    assert.ok(await c.get(CONFIGMAPS, ns, 'c3'), 'dry-run delete kept it');
    await c.delete(CONFIGMAPS, ns, 'c3', { preconditions: { uid: o.metadata.uid } });
    await assert.rejects(c.get(CONFIGMAPS, ns, 'c3'), isNotFound);
    await c.create(CONFIGMAPS, { ...cm('held'), metadata: { name: 'held', namespace: ns, finalizers: ['example.com/x'] } });
    const held = await c.delete(CONFIGMAPS, ns, 'held');
    assert.ok(held?.metadata.deletionTimestamp);
    await c.patch(CONFIGMAPS, ns, 'held', 'merge', { metadata: { finalizers: null } });
    await assert.rejects(c.get(CONFIGMAPS, ns, 'held'), isNotFound);
  });

  test('recordingClient in dry-run mode forces dryRun=All on every write and reports before/after', async () => {
    const records: WriteRecord[] = [];
    const rc = recordingClient(c, { dryRun: true, onWrite: (w) => records.push(w) });
    const before = await c.get(CONFIGMAPS, ns, 'c4');
    await rc.update(CONFIGMAPS, { ...before, data: { a: 'changed' } }, { dryRun: false });
    await rc.patch(CONFIGMAPS, ns, 'c4', 'merge', { data: { z: '1' } });
    await rc.delete(CONFIGMAPS, ns, 'c4');
    await rc.create(CONFIGMAPS, cm('never'));
    await assert.rejects(rc.create(CONFIGMAPS, cm('c5')), (e: unknown) => (e as ApiError).code === 409);
    const after = await c.get(CONFIGMAPS, ns, 'c4');
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'nothing persisted');
    await assert.rejects(c.get(CONFIGMAPS, ns, 'never'), isNotFound);
    assert.deepEqual(records.map((r) => `${r.verb}:${r.dryRun}:${r.outcome}`), ['update:true:ok', 'patch:true:ok', 'delete:true:ok', 'create:true:ok', 'create:true:error']);
    assert.equal(records[0]!.resourceVersionBefore, before.metadata.resourceVersion);
    assert.deepEqual(records[0]!.after?.data, { a: 'changed' });
    assert.deepEqual(records[0]!.before?.data, { a: '1' });
    assert.equal(records[4]!.error?.reason, 'AlreadyExists');
  });

  test('errors are ApiErrors with code and reason; an unreachable server is code 0', async () => {
    await assert.rejects(c.get(CONFIGMAPS, ns, 'missing'), (e: unknown) => e instanceof ApiError && e.code === 404 && e.reason === 'NotFound');
    const { KubeTransport } = await import('../../src/core/k8s/transport.ts');
    const cluster = await getTestCluster();
    const kc = cluster.kubeConfig;
    const dead = new KubeTransport(kc);
    Object.defineProperty(dead, 'server', { value: 'https://127.0.0.1:1' });
    await assert.rejects(createDynamicClient(dead).get(CONFIGMAPS, ns, 'x'), (e: unknown) => e instanceof ApiError && e.code === 0 && /Cannot reach/.test(e.message));
  });
  test('ctx.client (recordingClient) on a resource the server does not serve: a ResourceNotServedError naming the served one, never the 404 of a missing object', async () => {
    const cluster = await getTestCluster();
    const records: WriteRecord[] = [];
    const rc = recordingClient(c, { dryRun: false, onWrite: (w) => records.push(w) });
    const notServed = (re: RegExp) => (e: unknown) => (e instanceof ResourceNotServedError && !isNotFound(e) && re.test(e.message)) || assert.fail((e as Error).message);
    // The server answers all three with 404 NotFound ("the server could not find the requested resource").
    await assert.rejects(rc.get({ group: '', version: 'v1', resource: 'secret' }, ns, 'payment'), notServed(/^ctx\.client\.get: the cluster does not serve \{ group: '', version: 'v1', resource: 'secret' \} \(did you mean \{ group: '', version: 'v1', resource: 'secrets' \}\?/));
    await assert.rejects(rc.get({ ...crd.gvr, version: 'v9' }, ns, 'w'), notServed(new RegExp(`: API group ${crd.group.replace(/\./g, '\\.')} serves widgets in ${crd.gvr.version} `)));
    await assert.rejects(rc.create({ group: '', version: 'v1', resource: 'configmap' }, cm('typo')), notServed(/resource: 'configmaps' \}\?/));
    assert.deepEqual(records.map((r) => `${r.verb}:${r.outcome}:${r.error?.reason}`), ['create:error:NotServed']);
    // A missing object of a served resource keeps the server's 404, and so does a missing /status subresource.
    await assert.rejects(rc.get(CONFIGMAPS, ns, 'missing'), (e: unknown) => isNotFound(e) && !(e instanceof ResourceNotServedError));
    const group = `${uniqueName('nostatus2')}.example.org`;
    const def = testCrd({ group, kind: 'Voucher', plural: 'vouchers' });
    delete (def.spec as { versions: Array<{ subresources?: unknown }> }).versions[0]!.subresources;
    await installCrd(cluster.transport, def);
    const gvr = { group, version: 'v1', resource: 'vouchers' };
    const obj = await rc.create(gvr, { apiVersion: `${group}/v1`, kind: 'Voucher', metadata: { name: 'v10', namespace: ns }, spec: { percent: 10 } });
    await assert.rejects(rc.updateStatus(gvr, { ...obj, status: { valid: 'yes' } }), (e: unknown) => isNotFound(e) && /has no \/status subresource/.test((e as Error).message));
  });

  test('a CRD without the status subresource: /status writes say so (still 404), and the status writer updates the object', async () => {
    const cluster = await getTestCluster();
    const group = `${uniqueName('nostatus')}.example.org`;
    const def = testCrd({ group, kind: 'DNSEntry', plural: 'dnsentries' });
    delete (def.spec as { versions: Array<{ subresources?: unknown }> }).versions[0]!.subresources;
    await installCrd(cluster.transport, def);
    const gvr = { group, version: 'v1', resource: 'dnsentries' };
    const obj = await c.create(gvr, { apiVersion: `${group}/v1`, kind: 'DNSEntry', metadata: { name: 'api.payments.example.com', namespace: ns }, spec: { target: '10.0.0.1' } });
    await assert.rejects(c.updateStatus(gvr, { ...obj, status: { record: 'x' } }), (e: unknown) => isNotFound(e) && /dnsentries\.[^ ]+ [^ ]+\/api\.payments\.example\.com exists, but .* has no \/status subresource/.test((e as Error).message));
    await assert.rejects(c.patchStatus(gvr, ns, obj.metadata.name!, 'merge', { status: { record: 'x' } }), (e: unknown) => isNotFound(e) && /has no \/status subresource/.test((e as Error).message));
    await assert.rejects(c.updateStatus(gvr, { ...obj, metadata: { ...obj.metadata, name: 'gone' } }), (e: unknown) => isNotFound(e) && !/subresource/.test((e as Error).message), 'a missing object keeps the server\'s 404');
    const signal = new AbortController().signal;
    const r = await writeStatusIfChanged({ client: c, signal }, gvr, obj, () => ({ record: 'api A 10.0.0.1' }));
    assert.equal(r.written, true);
    assert.deepEqual((await c.get(gvr, ns, obj.metadata.name!)).status, { record: 'api A 10.0.0.1' });
    const again = await writeStatusIfChanged({ client: c, signal }, gvr, await c.get(gvr, ns, obj.metadata.name!), () => ({ record: 'api A 10.0.0.1' }));
    assert.equal(again.written, false, 'an unchanged status is not written again');
    // An observedGeneration there could never catch up (the update bumps the generation): refused, nothing written.
    const cur = await c.get(gvr, ns, obj.metadata.name!);
    for (const [status, field] of [
      [{ record: 'x', observedGeneration: cur.metadata.generation }, 'status.observedGeneration'],
      [{ conditions: [{ type: 'Synced', status: 'True' }, { type: 'Ready', status: 'True', observedGeneration: cur.metadata.generation }] }, 'status.conditions\\[1\\].observedGeneration'],
    ] as const) {
      await assert.rejects(writeStatusIfChanged({ client: c, signal }, gvr, cur, () => status), (e: unknown) =>
        isTerminal(e) && new RegExp(`^dnsentries\\.${group.replace(/\./g, '\\.')} ${ns}/api\\.payments\\.example\\.com: dnsentries has no status subresource .* bumps metadata\\.generation: ${field} could never equal it .*Add "subresources: \\{ status: \\{\\} \\}" to the CRD's version .*Nothing was written\\.$`).test((e as Error).message));
    }
    const unchanged = await c.get(gvr, ns, obj.metadata.name!);
    assert.equal(unchanged.metadata.resourceVersion, cur.metadata.resourceVersion, 'nothing was written');
    assert.equal(unchanged.metadata.generation, cur.metadata.generation);
    // Discovery lists the resource with no subresources: the status writer updates the object straight away, so the
    // journal of a reconcile holds no refused /status write.
    const discovered = (await c.discover()).find((r) => r.group === group && r.resource === 'dnsentries');
    assert.deepEqual(discovered?.subresources, [], 'discovery says: no subresources (not "unknown")');
    const records: WriteRecord[] = [];
    const rc = recordingClient(c, { dryRun: false, captureBefore: false, onWrite: (r) => records.push(r) });
    const known = await writeStatusIfChanged({ client: rc, signal }, discovered!, unchanged, () => ({ record: 'api A 10.0.0.2' }));
    assert.equal(known.written, true);
    assert.deepEqual(records.map((r) => `${r.verb} ${r.subresource ?? '-'} ${r.outcome}`), ['update - ok'], JSON.stringify(records));
    assert.deepEqual((await c.get(gvr, ns, obj.metadata.name!)).status, { record: 'api A 10.0.0.2' });
  });

  test('a create with metadata.generateName is recorded under the name the server made (live and dry-run), not the prefix', async () => {
    const records: WriteRecord[] = [];
    const CM = { group: '', version: 'v1', resource: 'configmaps' };
    for (const dryRun of [false, true]) {
      const rc = recordingClient(c, { dryRun, captureBefore: false, onWrite: (r) => records.push(r) });
      const made = await rc.create(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'soil-', namespace: ns } });
      const r = records.at(-1)!;
      assert.match(made.metadata.name ?? '', /^soil-[a-z0-9]{5}$/);
      assert.equal(r.name, made.metadata.name, `dryRun=${dryRun}`);
      assert.equal(r.key, `${ns}/${made.metadata.name}`);
    }
  });

  test("the server's warnings about a write (unknown fields it drops) reach the write's record, for a real and a dry-run write", async () => {
    const records: WriteRecord[] = [];
    const rc = recordingClient(c, { dryRun: false, captureBefore: false, onWrite: (r) => records.push(r) });
    const w = await rc.create(crd.gvr, { apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name: uniqueName('warned'), namespace: ns }, spec: { data: { a: '1' }, replicsa: 3 } } as KubeObject);
    assert.deepEqual(records[0]!.warnings, ['unknown field "spec.replicsa"'], 'kube-apiserver warns about the field it dropped');
    assert.equal((w.spec as Record<string, unknown>).replicsa, undefined, 'and it is not stored');
    const dry = recordingClient(c, { dryRun: true, captureBefore: false, onWrite: (r) => records.push(r) });
    await dry.update(crd.gvr, { ...w, spec: { ...(w.spec as object), colour: 'red' } });
    assert.deepEqual(records[1]!.warnings, ['unknown field "spec.colour"'], 'a dry-run write is warned about too');
    await rc.update(crd.gvr, w);
    assert.equal(records[2]!.warnings, undefined, 'a write the server has nothing to say about has no warnings');
  });
});
