// What the server does that our code assumes. These run against the real kube-apiserver + etcd
// (+ kube-controller-manager for garbage collection) started by the test harness.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { getTestCluster, createNamespace, installCrd, testCrd, waitUntil, type TestCluster } from './support/cluster.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { ApiError } from '../../src/core/k8s/client.ts';

const group = 'cp-test.reconcile.dev';
const base = `/apis/${group}/v1`;

describe('local control plane: server behaviour the informer and reconcilers rely on', () => {
  let c: TestCluster;
  let ns: string;
  const path = (name = '') => `${base}/namespaces/${ns}/gadgets${name ? '/' + name : ''}`;
  const create = (name: string, extra: Partial<KubeObject['metadata']> = {}, spec: unknown = { size: 1 }) =>
    c.transport.json<KubeObject>({ method: 'POST', path: path(), body: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name, ...extra }, spec } });
  const get = (name: string) => c.transport.json<KubeObject>({ method: 'GET', path: path(name) });

  before(async () => {
    c = await getTestCluster();
    await installCrd(c.transport, testCrd({ group, kind: 'Gadget', plural: 'gadgets' }));
    ns = await createNamespace(c.transport, 'cp');
  });
  after(async () => {
    await c.transport.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  });

  it('serves /version from the binary built from Go modules', async () => {
    const v = await c.transport.json<{ gitVersion: string; major: string }>({ method: 'GET', path: '/version' });
    assert.match(v.gitVersion, /^v1\.\d+\.\d+/);
    assert.equal(v.major, '1');
  });

  it('a watch receives ADDED, MODIFIED and DELETED in order', async () => {
    const list = await c.transport.json<{ metadata: { resourceVersion: string } }>({ method: 'GET', path: path() });
    const ac = new AbortController();
    const res = await c.transport.send({ method: 'GET', path: path(), query: { watch: 1, resourceVersion: list.metadata.resourceVersion }, signal: ac.signal });
    assert.equal(res.status, 200);
    const seen: string[] = [];
    const body = Readable.fromWeb(res.body! as never);
    body.on('error', () => {}); // the abort below ends the stream with an AbortError: expected
    const lines = createInterface(body);
    const done = (async () => {
      try {
        for await (const line of lines) {
          const ev = JSON.parse(line) as { type: string; object: KubeObject };
          if (ev.object.metadata.name === 'watched') seen.push(ev.type);
          if (ev.type === 'DELETED') break;
        }
      } catch {
        // aborted
      }
    })();
    await create('watched');
    const cur = await get('watched');
    await c.transport.json({ method: 'PUT', path: path('watched'), body: { ...cur, spec: { size: 2 } } });
    await c.transport.json({ method: 'DELETE', path: path('watched') });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise((r) => (timer = setTimeout(r, 20_000)))]);
    clearTimeout(timer);
    body.destroy(); // cancels the HTTP stream

    assert.deepEqual(seen, ['ADDED', 'MODIFIED', 'DELETED']);
  });

  it('a spec change bumps metadata.generation and a /status write does not', async () => {
    const created = await create('gen');
    assert.equal(created.metadata.generation, 1);
    const spec2 = await c.transport.json<KubeObject>({ method: 'PUT', path: path('gen'), body: { ...created, spec: { size: 5 } } });
    assert.equal(spec2.metadata.generation, 2);
    const withStatus = await c.transport.json<KubeObject>({ method: 'PUT', path: path('gen') + '/status', body: { ...spec2, status: { observedGeneration: 2 } } });
    assert.equal(withStatus.metadata.generation, 2, 'status writes leave generation alone');
    assert.notEqual(withStatus.metadata.resourceVersion, spec2.metadata.resourceVersion, 'but they do change resourceVersion');
    // And the main resource ignores status: writing status there changes nothing.
    const ignored = await c.transport.json<KubeObject>({ method: 'PUT', path: path('gen'), body: { ...withStatus, status: { observedGeneration: 99 } } });
    assert.deepEqual(ignored.status, { observedGeneration: 2 });
  });

  it('an update with a stale resourceVersion gets 409 Conflict', async () => {
    const first = await create('stale');
    await c.transport.json({ method: 'PUT', path: path('stale'), body: { ...first, spec: { size: 2 } } });
    await assert.rejects(
      c.transport.json({ method: 'PUT', path: path('stale'), body: { ...first, spec: { size: 3 } } }),
      (e: unknown) => e instanceof ApiError && e.code === 409 && e.reason === 'Conflict',
    );
  });

  it('an object with a finalizer gets deletionTimestamp on delete and goes once the finalizer is removed', async () => {
    await create('fin', { finalizers: ['lab.reconcile.dev/cleanup'] });
    await c.transport.json({ method: 'DELETE', path: path('fin') });
    const terminating = await get('fin');
    assert.ok(terminating.metadata.deletionTimestamp, 'deletionTimestamp is set');
    assert.deepEqual(terminating.metadata.finalizers, ['lab.reconcile.dev/cleanup']);
    await c.transport.json({
      method: 'PATCH', path: path('fin'), contentType: 'application/json-patch+json',
      body: [{ op: 'test', path: '/metadata/resourceVersion', value: terminating.metadata.resourceVersion }, { op: 'remove', path: '/metadata/finalizers' }],
    });
    await assert.rejects(get('fin'), (e: unknown) => e instanceof ApiError && e.code === 404);
  });

  it('owned children are garbage-collected after the owner is gone (kube-controller-manager runs)', async () => {
    const owner = await create('owner');
    const cm = await c.transport.json<KubeObject>({
      method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`,
      body: {
        apiVersion: 'v1', kind: 'ConfigMap',
        metadata: { name: 'owned-child', ownerReferences: [{ apiVersion: `${group}/v1`, kind: 'Gadget', name: 'owner', uid: owner.metadata.uid!, controller: true }] },
        data: { a: 'b' },
      },
    });
    assert.equal(cm.metadata.ownerReferences?.[0]?.uid, owner.metadata.uid);
    await c.transport.json({ method: 'DELETE', path: path('owner') });
    await waitUntil(async () => {
      try {
        await c.transport.json({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps/owned-child` });
        return false;
      } catch (e) {
        return e instanceof ApiError && e.code === 404;
      }
    }, 'the garbage collector to delete the owned ConfigMap', 60_000);
  });
});

describe('local control plane: start-up', () => {
  it('a port taken between picking it and kube-apiserver binding it: the attempt is stopped and the start is tried again on other ports', { timeout: 120_000 }, async () => {
    const { createServer } = await import('node:net');
    const { startLocalControlPlane } = await import('../../src/core/controlplane/localControlPlane.ts');
    const listen = async (port: number) => {
      const s = createServer();
      await new Promise<void>((res, rej) => {
        s.once('error', rej);
        s.listen(port, '127.0.0.1', () => res());
      });
      return s;
    };
    const taken = await listen(0);
    // The first attempt's readiness probe may connect to it: end such connections, or close() waits for them.
    const sockets = new Set<import('node:net').Socket>();
    taken.on('connection', (c) => sockets.add(c));
    const takenPort = (taken.address() as { port: number }).port;
    let picks = 0;
    // The third pick of the first attempt is kube-apiserver's port: hand it the one held here.
    const pickPort = async () => {
      if (++picks === 3) return takenPort;
      const s = await listen(0);
      const port = (s.address() as { port: number }).port;
      await new Promise((res) => s.close(res));
      return port;
    };
    const lines: string[] = [];
    try {
      const cp = await startLocalControlPlane({ controllerManager: false, pickPort, log: (l) => lines.push(l) });
      try {
        assert.ok(lines.some((l) => /starting again on other ports \(attempt 2 of 3\)/.test(l)), lines.join('\n'));
        assert.ok(picks >= 6, `new ports were picked for the second attempt (${picks} picks)`);
        assert.doesNotMatch(cp.server, new RegExp(`:${takenPort}$`));
        // Two kube-apiserver starts: the refused one on the taken port, then the one that answered /readyz (start-up
        // resolves only then) on another.
        const starts = lines.filter((l) => l.startsWith('starting kube-apiserver on '));
        assert.deepEqual(starts.map((l) => l.endsWith(`:${takenPort}`)), [true, false], starts.join('\n'));
        assert.ok(starts[1]!.endsWith(cp.server), starts[1]);
      } finally {
        await cp.stop();
      }
    } finally {
      for (const c of sockets) c.destroy();
      await new Promise((res) => taken.close(res));
    }
  });
});
