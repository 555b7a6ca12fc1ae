// A watch stream that breaks mid-way (the TCP connection is reset under it) is an ordinary end of watch,
// as in client-go (StreamWatcher turns IsProbableEOF errors into a clean close): the informer re-watches
// at once from the last resourceVersion, with no backoff and no relist, so no handler sees an object twice.
// Proven against the real kube-apiserver through a loopback TCP proxy that resets the connections.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { getTestCluster, createNamespace, installCrd, testCrd, waitUntil, type TestCluster } from './support/cluster.ts';
import { TcpProxy, kubeconfigThrough } from './support/tcpProxy.ts';
import { loadKubeConfig } from '../../src/core/k8s/kubeconfig.ts';
import { KubeTransport } from '../../src/core/k8s/transport.ts';
import { KubeListerWatcher } from '../../src/core/k8s/listerWatcher.ts';
import { findCrdResource } from '../../src/core/k8s/discovery.ts';
import { SharedIndexInformer } from '../../src/core/cache/sharedIndexInformer.ts';
import type { ListerWatcher, ListOptions, WatchEvent, WatchOptions } from '../../src/core/cache/interfaces.ts';
import { resourcePath } from '../../src/core/k8s/paths.ts';
import type { KubeList, KubeObject, ResourceInfo } from '../../src/core/k8s/objects.ts';
import { realClock } from '../../src/core/clock.ts';

const group = 'informer-reset-test.reconcile.dev';

/** Records the calls the reflector makes (the server behind is real). */
class RecordingListerWatcher implements ListerWatcher<KubeObject> {
  readonly lists: ListOptions[] = [];
  readonly watches: WatchOptions[] = [];
  /** Events received by the current watch (reset at each watch). */
  eventsThisWatch = 0;
  private readonly inner: ListerWatcher<KubeObject>;
  constructor(inner: ListerWatcher<KubeObject>) {
    this.inner = inner;
  }
  list(options: ListOptions, signal: AbortSignal): Promise<KubeList<KubeObject>> {
    this.lists.push({ ...options });
    return this.inner.list(options, signal);
  }
  watch(options: WatchOptions, signal: AbortSignal): AsyncIterable<WatchEvent<KubeObject>> {
    this.watches.push({ ...options });
    this.eventsThisWatch = 0;
    const inner = this.inner.watch(options, signal);
    const self = this;
    return {
      async *[Symbol.asyncIterator]() {
        for await (const ev of inner) {
          self.eventsThisWatch++;
          yield ev;
        }
      },
    };
  }
}

describe('informer through a connection reset mid-stream (real kube-apiserver behind a TCP proxy)', () => {
  let c: TestCluster;
  let proxy: TcpProxy;
  let proxied: { path: string; dispose(): void };
  let transport: KubeTransport;
  let res: ResourceInfo;
  let ns: string;
  const path = (name = '') => `${resourcePath(res, ns)}${name ? '/' + name : ''}`;

  before(async () => {
    c = await getTestCluster();
    await installCrd(c.transport, testCrd({ group, kind: 'Widget', plural: 'widgets' }));
    res = await findCrdResource(c.transport, `widgets.${group}`);
    ns = await createNamespace(c.transport, 'reset');
    const port = Number(new URL(c.transport.server).port);
    proxy = await TcpProxy.start('127.0.0.1', port);
    proxied = kubeconfigThrough(c.kubeconfigPath, proxy.port);
    transport = new KubeTransport(loadKubeConfig({ path: proxied.path }));
    assert.equal(transport.server, `https://127.0.0.1:${proxy.port}`, 'the informer talks through the proxy');
  });
  after(async () => {
    transport?.dispose();
    await proxy?.close();
    proxied?.dispose();
    await c.transport.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  });

  it('re-watches at once from the last resourceVersion: one LIST in total, no backoff, nothing delivered twice', async () => {
    const put = async (name: string, n: number) => {
      for (;;) {
        const cur = await c.transport.json<KubeObject>({ method: 'GET', path: path(name) });
        try {
          return await c.transport.json<KubeObject>({ method: 'PUT', path: path(name), body: { ...cur, spec: { n } } });
        } catch (e) {
          if ((e as { code?: number }).code !== 409) throw e;
        }
      }
    };
    const names = Array.from({ length: 10 }, (_, i) => `w-${i}`);
    for (const name of names) {
      await c.transport.json({ method: 'POST', path: path(), body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name }, spec: { n: 0 } } });
    }

    const lw = new RecordingListerWatcher(new KubeListerWatcher({ transport, resource: res, namespace: ns }));
    // LIST + WATCH pinned (the test counts LIST calls); WatchList has informerWatchList.test.ts.
    const inf = new SharedIndexInformer({ listerWatcher: lw, resource: res, clock: realClock, watchList: false });
    const phases: string[] = [];
    inf.onDidChangeState((s) => phases.push(s.phase === 'backoff' ? `backoff:${s.reason}` : s.phase));
    const delivered: string[] = [];
    const problems: string[] = [];
    const lastRV = new Map<string, number>();
    const note = (what: string, o: KubeObject) => {
      const key = o.metadata.name!;
      const rv = Number(o.metadata.resourceVersion);
      const prev = lastRV.get(key);
      if (prev !== undefined && rv <= prev) problems.push(`${what} ${key}@${rv} after @${prev}`);
      lastRV.set(key, rv);
      delivered.push(`${what} ${key}@${rv}`);
    };
    inf.addEventHandler({
      onAdd: (o) => note('add', o),
      onUpdate: (_old, o) => note('update', o),
      onDelete: () => void problems.push('unexpected delete'),
    });
    inf.run();
    try {
      await waitUntil(() => inf.hasSynced(), 'synced');
      assert.equal(delivered.filter((d) => d.startsWith('add')).length, names.length);

      // Round 1: the connection is reset while the watch is idle, after it delivered events.
      // Round 2: it is reset while a burst of updates is streaming.
      for (const round of [1, 2]) {
        const watchesBefore = lw.watches.length;
        const first = await put(names[0]!, round * 100);
        await waitUntil(() => inf.getIndexer().getByKey(`${ns}/${names[0]}`)?.metadata.resourceVersion === first.metadata.resourceVersion, 'an event through the watch');
        await waitUntil(() => lw.eventsThisWatch > 0 && inf.state.phase === 'watching', 'the watch has delivered');
        let burst: Promise<unknown> = Promise.resolve();
        if (round === 2) {
          const seen = lw.eventsThisWatch;
          burst = Promise.all(names.map((n, i) => put(n, round * 100 + i)));
          await waitUntil(() => lw.eventsThisWatch >= seen + 3, 'the burst is streaming');
        }
        const rvAtReset = inf.lastSyncResourceVersion();
        const resets = proxy.resetAll();
        assert.ok(resets >= 1, 'a connection was open to reset');
        await burst;
        await waitUntil(() => lw.watches.length > watchesBefore, 'a new watch');
        const rewatch = lw.watches[watchesBefore]!;
        if (round === 1) assert.equal(rewatch.resourceVersion, rvAtReset, 're-watch from the last RV');
        else assert.ok(Number(rewatch.resourceVersion) >= Number(rvAtReset), 're-watch from the last RV seen (events may have arrived after the snapshot)');
        const after = await Promise.all(names.map((n, i) => put(n, round * 1000 + i)));
        await waitUntil(() => after.every((o) => inf.getIndexer().getByKey(`${ns}/${o.metadata.name}`)?.metadata.resourceVersion === o.metadata.resourceVersion), 'writes after the reset seen');
      }

      // The final state matches the server, and nothing was re-delivered.
      const server = await c.transport.json<KubeList>({ method: 'GET', path: path() });
      for (const o of server.items) assert.equal(inf.getIndexer().getByKey(`${ns}/${o.metadata.name}`)?.metadata.resourceVersion, o.metadata.resourceVersion);
      assert.deepEqual(problems, [], 'no update older than or equal to one already delivered (a relist would re-deliver every object)');
      assert.equal(lw.lists.length, 1, `one LIST in total (lists: ${JSON.stringify(lw.lists)})`);
      assert.equal(lw.lists[0]!.resourceVersion, '0');
      assert.ok(lw.watches.length >= 3, `re-watched after each reset (${lw.watches.length} watches)`);
      assert.deepEqual(phases.filter((p) => p.startsWith('backoff')), [], `no backoff: ${phases.join(' → ')}`);
      assert.ok(proxy.connections >= 3, 'the resets really cut connections (new ones were opened)');
    } finally {
      inf.dispose();
      await inf.whenStopped();
    }
  });
});
