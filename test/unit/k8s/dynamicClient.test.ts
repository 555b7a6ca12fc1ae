import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recordingClient, type WriteRecord } from '../../../src/core/k8s/dynamicClient.ts';
import { ApiError, type KubeClient, type WriteOptions } from '../../../src/core/k8s/client.ts';
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
