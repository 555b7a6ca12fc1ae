import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeStatusIfChanged } from '../../../src/core/reconcilers/statusWriter.ts';
import { ApiError, type KubeClient } from '../../../src/core/k8s/client.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { isTerminal } from '../../../src/core/controller/reconcile.ts';

const gvr = { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets' };
const obj = (generation: number, rv: string, status?: unknown): KubeObject => ({ metadata: { name: 'w', namespace: 'ns', generation, resourceVersion: rv }, spec: { g: generation }, status });
const conflict = () => new ApiError(409, 'Conflict', 'the object has been modified');

/** A client whose updateStatus fails with 409 `conflicts` times, and whose get returns `fresh`. */
function client(conflicts: number, fresh: KubeObject) {
  const writes: KubeObject[] = [];
  let left = conflicts;
  const c = {
    updateStatus: async (_g: unknown, o: KubeObject) => {
      writes.push(o);
      if (left-- > 0) throw conflict();
      return { ...o, metadata: { ...o.metadata, resourceVersion: String(Number(o.metadata.resourceVersion) + 1) } };
    },
    get: async () => fresh,
  } as unknown as KubeClient;
  return { c, writes };
}

const signal = new AbortController().signal;
const compute = (cur: KubeObject) => ({ observedGeneration: cur.metadata.generation, ready: true });

describe('writeStatusIfChanged', () => {
  it('writes nothing when the status is already as desired', async () => {
    const { c, writes } = client(0, obj(1, '5'));
    const r = await writeStatusIfChanged({ client: c, signal }, gvr, obj(1, '5', { observedGeneration: 1, ready: true }), compute);
    assert.equal(r.written, false);
    assert.equal(writes.length, 0);
  });

  it('retries a 409 after re-reading when only metadata or status changed', async () => {
    const { c, writes } = client(1, obj(1, '7'));
    const r = await writeStatusIfChanged({ client: c, signal }, gvr, obj(1, '5'), compute);
    assert.equal(r.written, true);
    assert.equal(r.conflicts, 1);
    assert.deepEqual(writes.map((w) => w.metadata.resourceVersion), ['5', '7'], 'second write carries the fresh resourceVersion');
  });

  it('does not carry a status across a spec change: the conflict is thrown for a full re-reconcile', async () => {
    const { c, writes } = client(1, obj(2, '8'));
    await assert.rejects(writeStatusIfChanged({ client: c, signal }, gvr, obj(1, '5'), compute), (e: unknown) => e instanceof ApiError && e.code === 409);
    assert.equal(writes.length, 1, 'no second write claiming generation 2');
  });

  it('gives up after maxAttempts writes and throws the conflict', async () => {
    const { c, writes } = client(5, obj(1, '9'));
    await assert.rejects(writeStatusIfChanged({ client: c, signal }, gvr, obj(1, '5'), compute, { maxAttempts: 3 }), /modified/);
    assert.equal(writes.length, 3);
  });
  it('writes the status with an update of the object when /status answers 404 but the object exists (no status subresource)', async () => {
    const stored = obj(1, '5');
    const calls: string[] = [];
    const c = {
      updateStatus: async () => {
        calls.push('updateStatus');
        throw new ApiError(404, 'NotFound', 'dnsentries.net.acme-corp.io "w" not found');
      },
      update: async (_g: unknown, o: KubeObject) => {
        calls.push(`update rv ${o.metadata.resourceVersion}`);
        return { ...o, metadata: { ...o.metadata, resourceVersion: '6' } };
      },
      get: async () => stored,
    } as unknown as KubeClient;
    const r = await writeStatusIfChanged({ client: c, signal }, gvr, obj(1, '5'), () => ({ ready: true }));
    assert.deepEqual(calls, ['updateStatus', 'update rv 5']);
    assert.equal(r.written, true);
    assert.deepEqual(r.status, { ready: true });
    assert.equal(r.object?.metadata.resourceVersion, '6');
  });

  it('without a status subresource, refuses (terminal, nothing written) a status with an observedGeneration: it could never catch up', async () => {
    for (const [status, field] of [
      [{ observedGeneration: 1, ready: true }, 'status.observedGeneration'],
      [{ conditions: [{ type: 'Ready', status: 'True', observedGeneration: 1 }] }, 'status.conditions[0].observedGeneration'],
    ] as const) {
      const c = {
        updateStatus: async () => {
          throw new ApiError(404, 'NotFound', 'widgets "w" not found');
        },
        update: async () => assert.fail('nothing is written'),
        get: async () => obj(1, '5'),
      } as unknown as KubeClient;
      await assert.rejects(writeStatusIfChanged({ client: c, signal }, gvr, obj(1, '5'), () => status), (e: unknown) =>
        isTerminal(e) && (e as Error).message.startsWith('widgets.lab.reconcile.dev ns/w: widgets has no status subresource') && (e as Error).message.includes(`${field} could never equal it`));
    }
  });

  it('discovery lists no status subresource: the status is written with the object at once (no /status write that can only be refused), an observedGeneration refused before any write', async () => {
    const calls: string[] = [];
    const c = {
      updateStatus: async () => assert.fail('no /status write when discovery says there is none'),
      update: async (_g: unknown, o: KubeObject) => {
        calls.push(`update rv ${o.metadata.resourceVersion}`);
        return { ...o, metadata: { ...o.metadata, resourceVersion: '6' } };
      },
      get: async () => assert.fail('nothing to re-read'),
    } as unknown as KubeClient;
    const noStatus = { ...gvr, subresources: [] };
    const r = await writeStatusIfChanged({ client: c, signal }, noStatus, obj(1, '5'), () => ({ ready: true }));
    assert.deepEqual(calls, ['update rv 5']);
    assert.equal(r.written, true);
    await assert.rejects(writeStatusIfChanged({ client: c, signal }, noStatus, obj(1, '5'), compute), (e: unknown) => isTerminal(e) && /widgets has no status subresource .*status\.observedGeneration could never equal it/.test((e as Error).message));
    assert.deepEqual(calls, ['update rv 5'], 'nothing written for the refused status');
    // With "status" listed (or nothing known), /status is written as before.
    const viaStatus = client(0, obj(1, '5'));
    await writeStatusIfChanged({ client: viaStatus.c, signal }, { ...gvr, subresources: ['status'] }, obj(1, '5'), compute);
    assert.equal(viaStatus.writes.length, 1);
  });

  it('throws the 404 when the object is gone', async () => {
    const c = {
      updateStatus: async () => {
        throw new ApiError(404, 'NotFound', 'widgets "w" not found');
      },
      update: async () => assert.fail('no update of a deleted object'),
      get: async () => {
        throw new ApiError(404, 'NotFound', 'widgets "w" not found');
      },
    } as unknown as KubeClient;
    await assert.rejects(writeStatusIfChanged({ client: c, signal }, gvr, obj(1, '5'), compute), (e: unknown) => e instanceof ApiError && e.code === 404);
  });
});
