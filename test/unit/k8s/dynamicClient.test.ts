import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recordingClient, ResourceNotServedError, type WriteRecord } from '../../../src/core/k8s/dynamicClient.ts';
import { ApiError, isNotFound, type KubeClient, type WriteOptions } from '../../../src/core/k8s/client.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };

/** An inner client that records the options each write received and answers from a tiny store. */
function innerClient() {
  const calls: Array<{ verb: string; options?: WriteOptions & { subresource?: string; fieldManager?: string; preconditions?: unknown } }> = [];
  const store = new Map<string, KubeObject>([['ns/a', { metadata: { name: 'a', namespace: 'ns', resourceVersion: '5' }, data: { x: '1' } }]]);
  const answer = (o: KubeObject, rv = '6') => ({ ...o, metadata: { ...o.metadata, resourceVersion: rv } });
  const client: KubeClient = {
    async get(_g, ns, name) {
      const o = store.get(`${ns}/${name}`);
      if (!o) throw new ApiError(404, 'NotFound', 'nope');
      return o;
    },
    list: async () => ({ metadata: {}, items: [...store.values()] }),
    discover: async () => [],
    async create(_g, obj, o) {
      calls.push({ verb: 'create', options: o });
      if (store.has(`${obj.metadata.namespace}/${obj.metadata.name}`)) throw new ApiError(409, 'AlreadyExists', 'exists');
      return answer(obj, '1');
    },
    async update(_g, obj, o) {
      calls.push({ verb: 'update', options: o });
      return answer(obj);
    },
    async updateStatus(_g, obj, o) {
      calls.push({ verb: 'updateStatus', options: o });
      return answer(obj);
    },
    async patch(_g, ns, name, _t, _p, o) {
      calls.push({ verb: 'patch', options: o });
      return answer(store.get(`${ns}/${name}`)!);
    },
    async patchStatus(_g, ns, name, _t, _p, o) {
      calls.push({ verb: 'patchStatus', options: o });
      return answer(store.get(`${ns}/${name}`)!);
    },
    async apply(_g, obj, o) {
      calls.push({ verb: 'apply', options: o });
      return answer(obj);
    },
    async delete(_g, ns, name, o) {
      calls.push({ verb: 'delete', options: o });
      return undefined;
    },
  };
  return { client, calls };
}

test('dry-run mode forces dryRun on every write, whatever the caller passed', async () => {
  const { client, calls } = innerClient();
  const rc = recordingClient(client, { dryRun: true });
  const a: KubeObject = { metadata: { name: 'a', namespace: 'ns', resourceVersion: '5' } };
  await rc.create(CM, { metadata: { name: 'b', namespace: 'ns' } });
  await rc.update(CM, a, { dryRun: false });
  await rc.updateStatus(CM, a);
  await rc.patch(CM, 'ns', 'a', 'merge', {}, { subresource: 'scale' });
  await rc.patchStatus(CM, 'ns', 'a', 'merge', {});
  await rc.apply(CM, a, { fieldManager: 'm', force: true });
  await rc.delete(CM, 'ns', 'a', { preconditions: { uid: 'u' } });
  assert.deepEqual(calls.map((c) => c.verb), ['create', 'update', 'updateStatus', 'patch', 'patchStatus', 'apply', 'delete']);
  assert.ok(calls.every((c) => c.options?.dryRun === true));
  assert.equal(calls[3]!.options?.subresource, 'scale', 'other options kept');
  assert.equal(calls[5]!.options?.fieldManager, 'm');
  assert.deepEqual(calls[6]!.options?.preconditions, { uid: 'u' });
});

test('live mode passes options through unchanged', async () => {
  const { client, calls } = innerClient();
  const rc = recordingClient(client, { dryRun: false });
  await rc.update(CM, { metadata: { name: 'a', namespace: 'ns' } });
  await rc.update(CM, { metadata: { name: 'a', namespace: 'ns' } }, { dryRun: true });
  assert.deepEqual(calls.map((c) => c.options?.dryRun), [undefined, true]);
});

test('each write is reported once with verb, key, RVs, before/after, outcome and duration; reads are not', async () => {
  const { client } = innerClient();
  const clock = new FakeClock(1000);
  const records: WriteRecord[] = [];
  const rc = recordingClient(client, { dryRun: false, clock, onWrite: (r) => records.push(r) });
  await rc.get(CM, 'ns', 'a');
  await rc.list(CM, 'ns');
  await rc.patch(CM, 'ns', 'a', 'json', [{ op: 'add', path: '/data/y', value: '2' }]);
  await assert.rejects(rc.create(CM, { metadata: { name: 'a', namespace: 'ns' } }), (e: unknown) => (e as ApiError).code === 409);
  assert.equal(records.length, 2);
  const [p, c] = records;
  assert.equal(p!.verb, 'patch');
  assert.equal(p!.key, 'ns/a');
  assert.equal(p!.patchType, 'json');
  assert.deepEqual(p!.patch, [{ op: 'add', path: '/data/y', value: '2' }]);
  assert.equal(p!.resourceVersionBefore, '5');
  assert.equal(p!.resourceVersionAfter, '6');
  assert.deepEqual(p!.before?.data, { x: '1' });
  assert.equal(p!.outcome, 'ok');
  assert.equal(p!.startedAt, 1000);
  assert.equal(c!.verb, 'create');
  assert.equal(c!.before, undefined);
  assert.equal(c!.outcome, 'error');
  assert.deepEqual(c!.error, { code: 409, reason: 'AlreadyExists', message: 'exists' });
});

test('each write records the resourceVersion precondition it carried (update object, merge patch, JSON patch test), none for an unconditional one', async () => {
  const { client } = innerClient();
  const records: WriteRecord[] = [];
  const rc = recordingClient(client, { dryRun: false, onWrite: (r) => records.push(r) });
  await rc.update(CM, { metadata: { name: 'a', namespace: 'ns', resourceVersion: '5' }, data: { x: '2' } });
  await rc.update(CM, { metadata: { name: 'a', namespace: 'ns' }, data: { x: '3' } });
  await rc.updateStatus(CM, { metadata: { name: 'a', namespace: 'ns', resourceVersion: '4' } });
  await rc.patch(CM, 'ns', 'a', 'merge', { metadata: { resourceVersion: '5' }, data: { x: '4' } });
  await rc.patch(CM, 'ns', 'a', 'merge', { data: { x: '5' } });
  await rc.patch(CM, 'ns', 'a', 'json', [{ op: 'test', path: '/metadata/resourceVersion', value: '5' }, { op: 'replace', path: '/data/x', value: '6' }]);
  await rc.patchStatus(CM, 'ns', 'a', 'json', [{ op: 'replace', path: '/data/x', value: '7' }]);
  assert.deepEqual(records.map((r) => r.sentResourceVersion), ['5', undefined, '4', '5', undefined, '5', undefined]);
});

test('a throwing listener never breaks the write', async () => {
  const { client } = innerClient();
  const errors: string[] = [];
  const { createLogger } = await import('../../../src/core/log.ts');
  const rc = recordingClient(client, { dryRun: false, onWrite: () => { throw new Error('listener bug'); }, log: createLogger((l, m, f) => errors.push(`${l} ${m} ${JSON.stringify(f)}`)) });
  const out = await rc.update(CM, { metadata: { name: 'a', namespace: 'ns' } });
  assert.equal(out.metadata.resourceVersion, '6');
  assert.ok(errors.some((e) => e.startsWith('error a write listener threw') && e.includes('listener bug')));
});

test('captureBefore: false skips the extra GET; updateSubresource needs an inner client that has it', async () => {
  const { client } = innerClient();
  let gets = 0;
  const counting: KubeClient = { ...client, get: (...a) => { gets++; return client.get(...a); } };
  const records: WriteRecord[] = [];
  const rc = recordingClient(counting, { dryRun: false, captureBefore: false, onWrite: (r) => records.push(r) });
  await rc.update(CM, { metadata: { name: 'a', namespace: 'ns' } });
  assert.equal(gets, 0);
  assert.equal(records[0]!.before, undefined);
  await assert.rejects(rc.updateSubresource(CM, { metadata: { name: 'a', namespace: 'ns' } }, 'finalize'), /cannot write subresources/);
});

test('a write whose signal aborts before the server answers is recorded as cancelled (its outcome unknown), not as error code 0', async () => {
  const records: WriteRecord[] = [];
  const hanging: KubeClient = {
    ...innerClient().client,
    // As the transport does: a request whose signal aborts rejects with the signal's reason.
    update: (_g, _obj, o) =>
      new Promise((_res, rej) => {
        if (o?.signal?.aborted) return rej(o.signal.reason);
        o?.signal?.addEventListener('abort', () => rej(o.signal!.reason), { once: true });
      }),
    patch: async () => {
      throw new TypeError('boom');
    },
  };
  const rc = recordingClient(hanging, { dryRun: false, captureBefore: false, onWrite: (r) => records.push(r) });
  const ac = new AbortController();
  const write = rc.update(CM, { metadata: { name: 'a', namespace: 'ns', resourceVersion: '5' } }, { signal: ac.signal });
  ac.abort(new Error('controller widgets stopped'));
  await assert.rejects(write, /controller widgets stopped/);
  assert.deepEqual(records[0]!.error, { code: 0, reason: 'Cancelled', message: 'cancelled before the server answered (controller widgets stopped): it may or may not have been applied' });
  // Any other failure without an HTTP answer keeps its own message.
  await assert.rejects(rc.patch(CM, 'ns', 'a', 'merge', {}, { signal: new AbortController().signal }), /boom/);
  assert.deepEqual(records[1]!.error, { code: 0, reason: 'Error', message: 'boom' });
  // …and the journal's text of it has no "0 " code.
  const { journalWriteOf } = await import('../../../src/core/actions/controllerContext.ts');
  assert.equal(journalWriteOf(records[0]!, 'widgets', 'ns/a').error, 'Cancelled: cancelled before the server answered (controller widgets stopped): it may or may not have been applied');
  assert.equal(journalWriteOf({ ...records[0]!, error: { code: 409, reason: 'Conflict', message: 'changed' } }, 'widgets', 'ns/a').error, '409 Conflict: changed');
});

test("the server's warnings about a write land in its record, and the caller's own onWarnings still gets them", async () => {
  const records: WriteRecord[] = [];
  const warning: KubeClient = {
    ...innerClient().client,
    // As createDynamicClient does with the answer's Warning headers.
    async update(_g, obj, o) {
      o?.onWarnings?.(['unknown field "spec.replicsa"']);
      return obj;
    },
  };
  const seen: (readonly string[])[] = [];
  const rc = recordingClient(warning, { dryRun: true, captureBefore: false, onWrite: (r) => records.push(r) });
  await rc.update(CM, { metadata: { name: 'a', namespace: 'ns' } }, { onWarnings: (ws) => seen.push(ws) });
  await rc.create(CM, { metadata: { name: 'b', namespace: 'ns' } });
  assert.deepEqual(records[0]!.warnings, ['unknown field "spec.replicsa"']);
  assert.deepEqual(seen, [['unknown field "spec.replicsa"']]);
  assert.equal(records[1]!.warnings, undefined, 'a write without warnings has none');
  const { journalWriteOf } = await import('../../../src/core/actions/controllerContext.ts');
  assert.deepEqual(journalWriteOf(records[0]!, 'widgets', 'ns/a').warnings, ['unknown field "spec.replicsa"']);
  const { plannedActions } = await import('../../../src/core/actions/dryRun.ts');
  assert.deepEqual(plannedActions(records).map((a) => a.warnings), [['unknown field "spec.replicsa"'], undefined], 'a dry-run plan shows them too');
});

test('a call on a resource the cluster does not serve (a typo in the resource, its group or version) is a ResourceNotServedError naming what is served, never a 404 a reconciler would take for "gone"', async () => {
  const served = [
    { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true },
    { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true },
    { group: 'shop.example.org', version: 'v1', resource: 'orders', kind: 'Order', namespaced: true },
  ];
  const servedKeys = new Set(served.map((r) => `${r.group}/${r.version}/${r.resource}`));
  const records: WriteRecord[] = [];
  // As kube-apiserver answers: an unknown path's 404 names no object; a missing object's names it in details.
  const notFound = (g: { group: string; version: string; resource: string }, name: string) =>
    servedKeys.has(`${g.group}/${g.version}/${g.resource}`)
      ? new ApiError(404, 'NotFound', `${g.resource} "${name}" not found`, { name, kind: g.resource })
      : new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
  const inner: KubeClient = {
    get: async (g, _ns, name) => { throw notFound(g, name); },
    list: async (g) => { throw notFound(g, ''); },
    discover: async () => served,
    create: async (g, obj) => { throw notFound(g, obj.metadata.name ?? ''); },
    update: async (g, obj) => { throw notFound(g, obj.metadata.name ?? ''); },
    updateStatus: async (g, obj) => { throw notFound(g, obj.metadata.name ?? ''); },
    patch: async (g, _ns, name) => { throw notFound(g, name); },
    patchStatus: async (g, _ns, name) => { throw notFound(g, name); },
    apply: async (g, obj) => { throw notFound(g, obj.metadata.name ?? ''); },
    delete: async (g, _ns, name) => { throw notFound(g, name); },
  };
  const c = recordingClient(inner, { dryRun: false, onWrite: (w) => records.push(w) });
  const notServed = (message: string) => (e: unknown) =>
    (e instanceof ResourceNotServedError && !isNotFound(e) && (e as { code?: unknown }).code === undefined && e.message === message) || assert.fail((e as Error).message);
  // The singular (or the kind) for the plural: the served resource is named.
  await assert.rejects(c.get({ group: '', version: 'v1', resource: 'secret' }, 'shop', 'alice-payment'),
    notServed("ctx.client.get: the cluster does not serve { group: '', version: 'v1', resource: 'secret' } (did you mean { group: '', version: 'v1', resource: 'secrets' }? resource is the lower-case plural, as kubectl api-resources lists it)"));
  await assert.rejects(c.list({ group: 'shop.example.org', version: 'v1', resource: 'Order' }, 'shop'),
    notServed("ctx.client.list: the cluster does not serve { group: 'shop.example.org', version: 'v1', resource: 'Order' } (did you mean { group: 'shop.example.org', version: 'v1', resource: 'orders' }? resource is the lower-case plural, as kubectl api-resources lists it)"));
  // Another version; another group; a group nobody serves.
  await assert.rejects(c.get({ group: 'shop.example.org', version: 'v1beta1', resource: 'orders' }, 'shop', 'o1'),
    notServed("ctx.client.get: the cluster does not serve { group: 'shop.example.org', version: 'v1beta1', resource: 'orders' }: API group shop.example.org serves orders in v1 (did you mean { group: 'shop.example.org', version: 'v1', resource: 'orders' }?)"));
  await assert.rejects(c.get({ group: 'shop.example.com', version: 'v1', resource: 'orders' }, 'shop', 'o1'),
    notServed("ctx.client.get: the cluster does not serve { group: 'shop.example.com', version: 'v1', resource: 'orders' } (did you mean { group: 'shop.example.org', version: 'v1', resource: 'orders' }?)"));
  await assert.rejects(c.get({ group: 'billing.example.org', version: 'v1', resource: 'invoices' }, 'shop', 'i1'),
    notServed("ctx.client.get: the cluster does not serve { group: 'billing.example.org', version: 'v1', resource: 'invoices' }: no API group billing.example.org is served. Install its CustomResourceDefinition (kubectl apply -f <your CRD>.yaml), or check the group with kubectl api-resources"));
  // A write: the journal's record carries the same message.
  await assert.rejects(c.create({ group: '', version: 'v1', resource: 'configmap' }, { metadata: { name: 'o1-receipt', namespace: 'shop' } }), ResourceNotServedError);
  assert.equal(records.at(-1)?.outcome, 'error');
  assert.equal(records.at(-1)?.error?.reason, 'NotServed');
  assert.match(records.at(-1)?.error?.message ?? '', /^ctx\.client\.create: the cluster does not serve \{ group: '', version: 'v1', resource: 'configmap' \} \(did you mean \{ group: '', version: 'v1', resource: 'configmaps' \}\?/);
  // A missing object of a served resource stays the server's 404 (the reconciler's "gone").
  await assert.rejects(c.get({ group: '', version: 'v1', resource: 'secrets' }, 'shop', 'bob-payment'), (e: unknown) => isNotFound(e) && !(e instanceof ResourceNotServedError));
  await assert.rejects(c.delete({ group: '', version: 'v1', resource: 'configmaps' }, 'shop', 'gone'), (e: unknown) => isNotFound(e));
  // A client whose discovery lists nothing gives no grounds: the 404 as it is.
  const blind = recordingClient({ ...inner, discover: async () => [] }, { dryRun: false });
  await assert.rejects(blind.get({ group: '', version: 'v1', resource: 'secret' }, 'shop', 'x'), (e: unknown) => isNotFound(e));
});
