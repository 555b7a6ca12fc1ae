// The informer survives kube-apiserver going away under write load: on a PRIVATE control plane
// (the shared one is not disturbed), writers keep creating, updating and deleting objects while
// kube-apiserver is stopped and started again; afterwards the cache must equal the server.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startPrivateCluster, createNamespace, installCrd, testCrd, waitUntil, type TestCluster } from './support/cluster.ts';
import type { LocalControlPlane } from '../../src/core/controlplane/localControlPlane.ts';
import { KubeListerWatcher } from '../../src/core/k8s/listerWatcher.ts';
import { findCrdResource } from '../../src/core/k8s/discovery.ts';
import { SharedIndexInformer } from '../../src/core/cache/sharedIndexInformer.ts';
import { isTombstone, type ListerWatcher, type ListOptions, type WatchOptions } from '../../src/core/cache/interfaces.ts';
import { resourcePath } from '../../src/core/k8s/paths.ts';
import type { KubeList, KubeObject, ResourceInfo } from '../../src/core/k8s/objects.ts';
import { realClock } from '../../src/core/clock.ts';

const group = 'informer-restart-test.reconcile.dev';

describe('informer across a kube-apiserver restart under write load', () => {
  let c: TestCluster & { controlPlane: LocalControlPlane };
  let ns: string;
  let res: ResourceInfo;

  before(async () => {
    c = await startPrivateCluster();
    await installCrd(c.transport, testCrd({ group, kind: 'Widget', plural: 'widgets' }));
    res = await findCrdResource(c.transport, `widgets.${group}`);
    ns = await createNamespace(c.transport, 'restart');
  });
  after(async () => {
    await c?.controlPlane.stop();
  });

  it('ends with the cache equal to the server (same keys, same resourceVersions)', async () => {
    const path = (name = '') => `${resourcePath(res, ns)}${name ? '/' + name : ''}`;
    const inf = new SharedIndexInformer({ listerWatcher: new KubeListerWatcher({ transport: c.transport, resource: res, namespace: ns }), resource: res, clock: realClock });
    const phases: string[] = [];
    inf.onDidChangeState((s) => phases.push(s.phase === 'backoff' ? `backoff:${s.reason}` : s.phase));
    const deletes = { seen: 0, tombstones: 0 };
    inf.addEventHandler({ onDelete: (o) => void (isTombstone(o) ? deletes.tombstones++ : deletes.seen++) });
    inf.run();
    await waitUntil(() => inf.hasSynced(), 'synced');

    // Writers: each owns a set of names and cycles create → update → update → delete, ignoring
    // failures (the server may be down), until told to stop.
    let stop = false;
    let writes = 0;
    let failures = 0;
    const writer = async (w: number) => {
      let i = 0;
      while (!stop) {
        const name = `w${w}-${i % 15}`;
        try {
          const cur = await c.transport.json<KubeObject>({ method: 'GET', path: path(name) }).catch((e) => {
            if ((e as { code?: number }).code === 404) return undefined;
            throw e;
          });
          if (!cur) await c.transport.json({ method: 'POST', path: path(), body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name }, spec: { n: 0 } } });
          else if (((cur.spec as { n: number }).n ?? 0) < 2) await c.transport.json({ method: 'PUT', path: path(name), body: { ...cur, spec: { n: (cur.spec as { n: number }).n + 1 } } });
          else await c.transport.json({ method: 'DELETE', path: path(name) });
          writes++;
        } catch {
          failures++;
          await new Promise((r) => setTimeout(r, 50));
        }
        i++;
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    await waitUntil(() => writes >= 150, 'writes before the outage', 60_000);
    await c.controlPlane.stopApiServer();
    await waitUntil(() => failures > 20, 'writes failing while the server is down');
    await c.controlPlane.startApiServer();
    const writesAfterRestart = writes;
    await waitUntil(() => writes >= writesAfterRestart + 150, 'writes after the restart', 120_000);
    stop = true;
    await Promise.all(writers);
    // The writers' deletes depend on how their writes fell around the outage; one delete after the restart is
    // certain, so the informer's delete delivery (an event or a relist tombstone) is always exercised.
    const before = await c.transport.json<KubeList>({ method: 'GET', path: path() });
    const victim = before.items[0]?.metadata.name;
    if (victim) await c.transport.json({ method: 'DELETE', path: path(victim) });

    const list = await c.transport.json<KubeList>({ method: 'GET', path: path() });
    const server = new Map(list.items.map((o) => [`${ns}/${o.metadata.name}`, o.metadata.resourceVersion]));
    const cache = () => new Map(inf.getIndexer().list().map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o.metadata.resourceVersion]));
    const same = () => JSON.stringify([...cache()].sort()) === JSON.stringify([...server].sort());
    await waitUntil(same, 'cache equals server after the restart', 180_000, 250);
    assert.deepEqual([...cache()].sort(), [...server].sort());
    if (process.env.INFORMER_TEST_VERBOSE) console.log(phases.join(' → '), deletes, { writes, failures });
    assert.ok(server.size > 0, 'the comparison covers objects');
    assert.ok(phases.some((p) => p.startsWith('backoff:')), `the outage was noticed and backed off: ${phases.join(', ')}`);
    assert.equal(inf.state.phase, 'watching');
    assert.ok(deletes.seen + deletes.tombstones > 0);
    inf.dispose();
    await inf.whenStopped();
  });

  it('rides out a 3-second outage (kube-apiserver killed, then started again): retries the watch at the last RV, no relist, converges', async () => {
    const path = (name = '') => `${resourcePath(res, ns)}${name ? '/' + name : ''}`;
    const outageNs = ns;
    const lists: ListOptions[] = [];
    const watches: WatchOptions[] = [];
    const real = new KubeListerWatcher({ transport: c.transport, resource: res, namespace: outageNs });
    const lw: ListerWatcher<KubeObject> = {
      list: (o, s) => (lists.push({ ...o }), real.list(o, s)),
      watch: (o, s) => (watches.push({ ...o }), real.watch(o, s)),
    };
    // LIST + WATCH pinned (the test counts LIST calls); WatchList has informerWatchList.test.ts.
    const inf = new SharedIndexInformer({ listerWatcher: lw, resource: res, clock: realClock, watchList: false });
    const phases: string[] = [];
    inf.onDidChangeState((s) => phases.push(s.phase === 'backoff' ? `backoff:${s.reason}: ${s.lastError}` : s.phase));
    const problems: string[] = [];
    const last = new Map<string, number>();
    const note = (what: string, o: KubeObject) => {
      const rv = Number(o.metadata.resourceVersion);
      const prev = last.get(o.metadata.name!);
      if (prev !== undefined && rv < prev) problems.push(`${what} ${o.metadata.name}@${rv} after @${prev}`);
      last.set(o.metadata.name!, rv);
    };
    inf.addEventHandler({ onAdd: (o) => note('add', o), onUpdate: (_a, o) => note('update', o), onDelete: (o) => void (isTombstone(o) ? problems.push(`tombstone ${o.key}`) : undefined) });
    inf.run();
    try {
      await waitUntil(() => inf.hasSynced(), 'synced');
      const put = async (name: string, n: number) => {
        const cur = await c.transport.json<KubeObject>({ method: 'GET', path: path(name) }).catch(() => undefined);
        if (!cur) return c.transport.json<KubeObject>({ method: 'POST', path: path(), body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name }, spec: { n } } });
        return c.transport.json<KubeObject>({ method: 'PUT', path: path(name), body: { ...cur, spec: { n } } });
      };
      const before = await Promise.all(['o-1', 'o-2', 'o-3'].map((n) => put(n, 1)));
      await waitUntil(() => before.every((o) => inf.getIndexer().getByKey(`${outageNs}/${o.metadata.name}`)?.metadata.resourceVersion === o.metadata.resourceVersion), 'seen before the outage');
      const rvBefore = inf.lastSyncResourceVersion();
      const watchesBefore = watches.length;

      await c.controlPlane.stopApiServer({ graceMs: 0 });
      await assert.rejects(c.transport.json({ method: 'GET', path: '/version' }), (e: { code?: number }) => e.code === 0, 'kube-apiserver is down');
      await new Promise((r) => setTimeout(r, 3000)); // the outage (an integration test of a real server being away)
      await c.controlPlane.startApiServer();

      const after = await Promise.all(['o-1', 'o-4'].map((n) => put(n, 2)));
      await waitUntil(() => after.every((o) => inf.getIndexer().getByKey(`${outageNs}/${o.metadata.name}`)?.metadata.resourceVersion === o.metadata.resourceVersion), 'seen after the outage', 120_000);
      const server = await c.transport.json<KubeList>({ method: 'GET', path: path() });
      assert.deepEqual(
        inf.getIndexer().list().map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort(),
        server.items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort(),
      );
      if (process.env.INFORMER_TEST_VERBOSE) console.log({ phases, lists, watches: watches.map((w) => w.resourceVersion), rvBefore, watchesBefore });
      assert.deepEqual(problems, [], 'no update older than one already delivered, no tombstone');
      // client-go's path through an outage: the stream ends (EOF: a clean close), the re-watch is refused,
      // so it backs off and retries the WATCH at the same RV; while kube-apiserver starts, its 503 +
      // Retry-After is waited out by the transport (client-go's rest client). No failure relists. The
      // restarted server's watch cache begins at the current etcd revision, so a watch from the old RV
      // may be answered 410 "too old resource version": then, and only then, one relist at that RV.
      assert.ok(phases.some((p) => p.startsWith('backoff:connection refused')), `refused while down: ${phases.join(' → ')}`);
      assert.ok(!phases.some((p) => p.startsWith('backoff:watch failed') || p.startsWith('backoff:list/watch failed')), `no failure that relists: ${phases.join(' → ')}`);
      assert.ok(watches.slice(watchesBefore).filter((w) => w.resourceVersion === rvBefore).length >= 2, 'the watch was retried from the last RV');
      const expired = phases.some((p) => p.startsWith('backoff:resource version expired'));
      assert.deepEqual(lists.map((l) => l.resourceVersion), expired ? ['0', rvBefore] : ['0'], `lists: ${JSON.stringify(lists)}; ${phases.join(' → ')}`);
      assert.equal(inf.state.phase, 'watching');
    } finally {
      inf.dispose();
      await inf.whenStopped();
    }
  });
});
