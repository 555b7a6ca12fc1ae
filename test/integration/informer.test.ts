// The informer core against the real kube-apiserver + etcd: ListerWatcher, discovery, and the
// SharedIndexInformer through clean watch cuts, broken streams and a real 410 "too old resource version".
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { getTestCluster, createNamespace, installCrd, testCrd, waitUntil, uniqueName, type TestCluster } from './support/cluster.ts';
import { KubeListerWatcher } from '../../src/core/k8s/listerWatcher.ts';
import { discoverResources, findCrdResource, findResource } from '../../src/core/k8s/discovery.ts';
import { SharedIndexInformer } from '../../src/core/cache/sharedIndexInformer.ts';
import { InformerFactory } from '../../src/core/cache/informerFactory.ts';
import { Lister } from '../../src/core/cache/lister.ts';
import { isTombstone, type ListerWatcher, type ListOptions, type WatchEvent, type WatchOptions } from '../../src/core/cache/interfaces.ts';
import { OWNER_UID_INDEX, ownerUidIndexFunc } from '../../src/core/cache/indexFuncs.ts';
import { resourcePath } from '../../src/core/k8s/paths.ts';
import type { KubeList, KubeObject, ResourceInfo } from '../../src/core/k8s/objects.ts';
import type { KubeTransport } from '../../src/core/k8s/transport.ts';
import { realClock } from '../../src/core/clock.ts';

const group = 'informer-test.reconcile.dev';
const clusterGroup = 'informer-cluster-test.reconcile.dev';

/**
 * Wraps a real ListerWatcher so a test can cut the current watch (cleanly, as a server close, or
 * with a read error that is not an EOF, as a garbled stream), hold new watches, or make the next watch start from an
 * RV the server no longer has (a real 410).
 */
class ControlledListerWatcher implements ListerWatcher<KubeObject> {
  readonly listCalls: ListOptions[] = [];
  readonly watchCalls: WatchOptions[] = [];
  private readonly inner: ListerWatcher<KubeObject>;
  private cutRequest: 'clean' | 'error' | undefined;
  private wake: (() => void) | undefined;
  private held: Promise<void> | undefined;
  private release: (() => void) | undefined;
  private staleNext = false;

  constructor(inner: ListerWatcher<KubeObject>) {
    this.inner = inner;
  }

  list(options: ListOptions, signal: AbortSignal): Promise<KubeList<KubeObject>> {
    this.listCalls.push({ ...options });
    return this.inner.list(options, signal);
  }

  /** Ends the open watch: 'clean' like a server close, 'error' like a read failure that is not an EOF (a reset is a clean close: informerWatchReset.test.ts). */
  cut(how: 'clean' | 'error'): void {
    this.cutRequest = how;
    this.wake?.();
  }

  hold(): void {
    this.held = new Promise((r) => (this.release = r));
  }

  /** Lets held watches go; with `stale`, the next one starts from RV "1", long gone from the watch cache. */
  resume(options: { stale?: boolean } = {}): void {
    this.staleNext = options.stale ?? false;
    this.release?.();
    this.held = undefined;
  }

  watch(options: WatchOptions, signal: AbortSignal): AsyncIterable<WatchEvent<KubeObject>> {
    this.watchCalls.push({ ...options });
    const self = this;
    return {
      async *[Symbol.asyncIterator]() {
        if (self.held) await self.held;
        let opts = options;
        if (self.staleNext) {
          self.staleNext = false;
          opts = { ...options, resourceVersion: '1' };
        }
        self.cutRequest = undefined;
        const ac = new AbortController();
        signal.addEventListener('abort', () => ac.abort(signal.reason), { once: true });
        const it = self.inner.watch(opts, ac.signal)[Symbol.asyncIterator]();
        try {
          for (;;) {
            const cutP = new Promise<'cut'>((r) => (self.wake = () => r('cut')));
            if (self.cutRequest) self.wake?.();
            const r = await Promise.race([it.next(), cutP]);
            if (r === 'cut') {
              const how = self.cutRequest;
              self.cutRequest = undefined;
              ac.abort(new Error('cut by the test'));
              await it.return?.().catch(() => {});
              if (how === 'error') throw Object.assign(new Error('stream garbled by the test'), { code: 0 });
              return;
            }
            if (r.done) return;
            yield r.value;
          }
        } finally {
          self.wake = undefined;
        }
      },
    };
  }
}

function widgetBody(apiVersion: string, name: string, size: number, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return { apiVersion, kind: 'Widget', metadata: { name, ...extra }, spec: { size } };
}

/** The server's objects as key → RV. */
async function serverState(t: KubeTransport, res: ResourceInfo, namespace?: string): Promise<Map<string, string>> {
  const list = await t.json<KubeList>({ method: 'GET', path: resourcePath(res, namespace) });
  return new Map(list.items.map((o) => [o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name!, o.metadata.resourceVersion!]));
}

function cacheState(inf: SharedIndexInformer): Map<string, string> {
  return new Map(inf.getIndexer().list().map((o) => [o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name!, o.metadata.resourceVersion!]));
}

const sortedEntries = (m: Map<string, string>) => [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));

/** Records each object's notifications as RVs and checks they never go backwards or repeat (resyncs excepted). */
function journal() {
  const byKey = new Map<string, string[]>();
  const problems: string[] = [];
  const last = new Map<string, number>();
  const note = (key: string, what: string, rv: number) => {
    const prev = last.get(key);
    // Adds and updates move forward; a delete or tombstone carries the last state (never older than what was seen).
    const ok = prev === undefined || (what === 'add' || what === 'update' ? rv > prev : rv >= prev);
    if (!ok) problems.push(`${key}: ${what}@${rv} after @${prev}`);
    last.set(key, rv);
    (byKey.get(key) ?? byKey.set(key, []).get(key)!).push(`${what}@${rv}`);
  };
  const keyOf = (o: KubeObject) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name!);
  return {
    byKey,
    problems,
    handler: {
      onAdd: (o: KubeObject) => note(keyOf(o), 'add', Number(o.metadata.resourceVersion)),
      onUpdate: (a: KubeObject, b: KubeObject) => {
        if (a.metadata.resourceVersion !== b.metadata.resourceVersion) note(keyOf(b), 'update', Number(b.metadata.resourceVersion));
      },
      onDelete: (o: KubeObject | { kind: 'DeletedFinalStateUnknown'; key: string; obj: KubeObject }) => {
        if (isTombstone(o)) note(o.key, 'tombstone', Number(o.obj.metadata.resourceVersion));
        else note(keyOf(o), 'delete', Number(o.metadata.resourceVersion));
        last.delete(isTombstone(o) ? o.key : keyOf(o));
      },
    },
  };
}

describe('informer core against a real kube-apiserver', () => {
  let c: TestCluster;
  let ns: string;
  let widgets: ResourceInfo;
  let apiVersion: string;
  const path = (name = '') => `${resourcePath(widgets, ns)}${name ? '/' + name : ''}`;
  const create = (name: string, size = 1, extra: Partial<KubeObject['metadata']> = {}) =>
    c.transport.json<KubeObject>({ method: 'POST', path: path(), body: widgetBody(apiVersion, name, size, extra) });
  const update = async (name: string, size: number) => {
    for (;;) {
      const cur = await c.transport.json<KubeObject>({ method: 'GET', path: path(name) });
      try {
        return await c.transport.json<KubeObject>({ method: 'PUT', path: path(name), body: { ...cur, spec: { size } } });
      } catch (e) {
        if ((e as { code?: number }).code !== 409) throw e;
      }
    }
  };
  const remove = (name: string) => c.transport.json({ method: 'DELETE', path: path(name) });
  const informers: SharedIndexInformer[] = [];
  const newInformer = (lw: ListerWatcher<KubeObject>, res = widgets) => {
    // LIST + WATCH pinned here (these tests count LIST calls); WatchList has informerWatchList.test.ts.
    const inf = new SharedIndexInformer({ listerWatcher: lw, resource: res, clock: realClock, watchList: false });
    informers.push(inf);
    return inf;
  };

  before(async () => {
    c = await getTestCluster();
    await installCrd(c.transport, testCrd({ group, kind: 'Widget', plural: 'widgets' }));
    await installCrd(c.transport, testCrd({ group: clusterGroup, kind: 'Gizmo', plural: 'gizmos', scope: 'Cluster' }));
    widgets = await findCrdResource(c.transport, `widgets.${group}`);
    apiVersion = `${group}/${widgets.version}`;
    ns = await createNamespace(c.transport, 'inf');
  });
  after(async () => {
    for (const inf of informers) inf.dispose();
    await c.transport.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  });

  it('discovery finds the CRDs: plural, kind, scope, subresources', async () => {
    assert.deepEqual({ ...widgets }, {
      group,
      version: 'v1',
      resource: 'widgets',
      kind: 'Widget',
      namespaced: true,
      subresources: ['status'],
      servedVersions: ['v1'],
      storageVersion: 'v1',
    });
    const all = await discoverResources(c.transport);
    const found = findResource(all, { group: clusterGroup, name: 'Gizmo' });
    assert.equal(found?.resource, 'gizmos');
    assert.equal(found?.namespaced, false);
    assert.deepEqual(found?.subresources, ['status']);
    assert.ok(found?.verbs.includes('watch'));
    assert.equal(findResource(all, { group: '', name: 'configmaps' })?.namespaced, true);
    await assert.rejects(findCrdResource(c.transport, `nothing.${group}`), (e: { code?: number }) => e.code === 404);
  });

  it('ListerWatcher: paged list, streaming watch in order, abort, and HTTP errors with a code', async () => {
    for (const n of ['lw-a', 'lw-b', 'lw-c']) await create(n);
    const lw = new KubeListerWatcher({ transport: c.transport, resource: widgets, namespace: ns, labelSelector: '' });
    const ac = new AbortController();
    const first = await lw.list({ resourceVersion: '', limit: 2 }, ac.signal);
    assert.equal(first.items.length, 2);
    assert.ok(first.metadata.continue);
    const second = await lw.list({ continue: first.metadata.continue, limit: 2 }, ac.signal);
    assert.deepEqual([...first.items, ...second.items].map((o) => o.metadata.name).sort(), ['lw-a', 'lw-b', 'lw-c']);
    const seen: string[] = [];
    const watching = (async () => {
      for await (const ev of lw.watch({ resourceVersion: first.metadata.resourceVersion!, allowWatchBookmarks: true, timeoutSeconds: 60 }, ac.signal)) {
        if (ev.type === 'BOOKMARK') continue;
        const o = ev.object as KubeObject;
        if (o.metadata.name?.startsWith('lw-')) seen.push(`${ev.type} ${o.metadata.name}`);
        if (ev.type === 'DELETED') break;
      }
    })();
    await update('lw-a', 2);
    await remove('lw-b');
    await watching;
    assert.deepEqual(seen, ['MODIFIED lw-a', 'DELETED lw-b']);
    // Abort ends a watch with the signal's reason.
    const ac2 = new AbortController();
    const it = lw.watch({ resourceVersion: second.metadata.resourceVersion!, timeoutSeconds: 60 }, ac2.signal)[Symbol.asyncIterator]();
    const pending = it.next();
    setTimeout(() => ac2.abort(new Error('test abort')), 50);
    await assert.rejects(async () => {
      for (let r = await pending; !r.done; r = await it.next());
    }, /test abort/);
    // A server close (here: its timeoutSeconds) ends the iteration without an error.
    const closed: string[] = [];
    for await (const ev of lw.watch({ resourceVersion: second.metadata.resourceVersion!, timeoutSeconds: 1 }, ac.signal)) closed.push(ev.type);
    assert.ok(closed.every((t) => t === 'BOOKMARK' || t === 'MODIFIED' || t === 'DELETED' || t === 'ADDED'), closed.join());
    // A watch from an RV the server no longer has: a 410 ERROR event.
    const stale: WatchEvent[] = [];
    for await (const ev of lw.watch({ resourceVersion: '1', timeoutSeconds: 5 }, ac.signal)) {
      stale.push(ev);
      if (ev.type === 'ERROR') break;
    }
    const err = stale.find((e) => e.type === 'ERROR');
    assert.equal(err?.type === 'ERROR' && err.object.code, 410);
    // HTTP errors carry the status code.
    const missing = new KubeListerWatcher({ transport: c.transport, resource: { group, version: 'v1', resource: 'nothings' } });
    await assert.rejects(missing.list({}, ac.signal), (e: { code?: number }) => e.code === 404);
    await assert.rejects(async () => {
      for await (const _ of missing.watch({ resourceVersion: '0' }, ac.signal));
    }, (e: { code?: number }) => e.code === 404);
  });

  it('create, update and delete reach every handler in order, with both states on update', async () => {
    const lw = new KubeListerWatcher({ transport: c.transport, resource: widgets, namespace: ns });
    const inf = newInformer(lw);
    const seen: string[] = [];
    const other: string[] = [];
    inf.addEventHandler({
      onAdd: (o) => void (o.metadata.name === 'order' && seen.push(`add ${(o.spec as { size: number }).size}`)),
      onUpdate: (a, b) => void (b.metadata.name === 'order' && seen.push(`update ${(a.spec as { size: number }).size}->${(b.spec as { size: number }).size}`)),
      onDelete: (o) => void (!isTombstone(o) && o.metadata.name === 'order' && seen.push('delete')),
    });
    let added: KubeObject | undefined;
    inf.addEventHandler({ onAdd: (o) => void (o.metadata.name === 'order' && (other.push('add'), (added = o))), onDelete: () => void other.push('delete') });
    inf.run();
    await waitUntil(() => inf.hasSynced(), 'informer synced');
    await create('order', 1);
    await update('order', 2);
    await update('order', 3);
    await remove('order');
    await waitUntil(() => seen.at(-1) === 'delete', 'delete delivered');
    assert.deepEqual(seen, ['add 1', 'update 1->2', 'update 2->3', 'delete']);
    assert.deepEqual(other, ['add', 'delete']);
    assert.equal(inf.getIndexer().getByKey(`${ns}/order`), undefined);
    assert.ok(Array.isArray(added?.metadata.managedFields), 'objects are cached as received by default (managedFields kept, as controller-runtime)');
  });

  it('a watch cut mid-stream (clean close or a read error) resumes without losing or duplicating any final state', async () => {
    const lw = new ControlledListerWatcher(new KubeListerWatcher({ transport: c.transport, resource: widgets, namespace: ns }));
    const inf = newInformer(lw);
    const j = journal();
    inf.addEventHandler(j.handler);
    inf.run();
    await waitUntil(() => inf.hasSynced(), 'informer synced');
    const names = Array.from({ length: 12 }, (_, i) => `cut-${i}`);
    let round = 0;
    for (const how of ['clean', 'error', 'clean'] as const) {
      round++;
      const written = await Promise.all(names.map((n) => (round === 1 ? create(n, 0) : update(n, round))));
      // Cut mid-stream: after this watch has delivered events (a silent sub-second watch would count as "very short").
      await waitUntil(() => written.every((o) => inf.getIndexer().getByKey(`${ns}/${o.metadata.name}`)?.metadata.resourceVersion === o.metadata.resourceVersion), 'writes seen');
      await waitUntil(() => inf.state.phase === 'watching', 'watching');
      const marker = await update(names[names.length - 1]!, round * 100);
      await waitUntil(() => inf.getIndexer().getByKey(`${ns}/${marker.metadata.name}`)?.metadata.resourceVersion === marker.metadata.resourceVersion, 'marker seen through the watch');
      lw.cut(how);
      await Promise.all(names.map((n) => update(n, round * 10)));
      if (round === 3) await Promise.all(names.slice(0, 4).map(remove));
    }
    const server = await serverState(c.transport, widgets, ns);
    await waitUntil(() => JSON.stringify(sortedEntries(cacheState(inf))) === JSON.stringify(sortedEntries(server)), 'cache equals server', 60_000);
    assert.deepEqual(j.problems, []);
    assert.ok(lw.watchCalls.length >= 4, `re-watched after each cut (${lw.watchCalls.length} watches)`);
    // The read error relisted (at the last RV, not from scratch); the clean closes did not.
    assert.equal(lw.listCalls.length, 2);
    assert.notEqual(lw.listCalls[1]!.resourceVersion, '');
    assert.notEqual(lw.listCalls[1]!.resourceVersion, '0');
    for (const n of names.slice(4)) {
      const events = j.byKey.get(`${ns}/${n}`)!;
      assert.equal(events.at(-1), `update@${server.get(`${ns}/${n}`)}`, `${n}: the final state arrived`);
    }
    for (const n of names.slice(0, 4)) assert.match(j.byKey.get(`${ns}/${n}`)!.at(-1)!, /^delete@/);
  });

  it('a watch answered 410 "too old resource version" relists; a delete missed meanwhile arrives as a tombstone', async () => {
    await create('expire-keep', 1);
    await create('expire-gone', 1);
    const lw = new ControlledListerWatcher(new KubeListerWatcher({ transport: c.transport, resource: widgets, namespace: ns }));
    const inf = newInformer(lw);
    const deleted: string[] = [];
    inf.addEventHandler({ onDelete: (o) => void deleted.push(isTombstone(o) ? `tombstone ${o.key}` : `delete ${o.metadata.name}`) });
    const states: string[] = [];
    inf.onDidChangeState((s) => states.push(s.phase === 'backoff' ? `backoff:${s.reason}` : s.phase));
    inf.run();
    await waitUntil(() => inf.hasSynced() && inf.state.phase === 'watching', 'informer watching');
    const seen = await update('expire-keep', 2);
    await waitUntil(() => inf.getIndexer().getByKey(`${ns}/expire-keep`)?.metadata.resourceVersion === seen.metadata.resourceVersion, 'watch delivered an event');
    lw.hold();
    lw.cut('clean');
    await remove('expire-gone');
    await update('expire-keep', 7);
    lw.resume({ stale: true });
    await waitUntil(() => lw.listCalls.length === 2 && inf.state.phase === 'watching', 'relisted after 410', 60_000);
    assert.ok(states.includes('backoff:resource version expired'), states.join(', '));
    await waitUntil(() => deleted.length > 0, 'tombstone delivered');
    assert.deepEqual(deleted, [`tombstone ${ns}/expire-gone`]);
    assert.equal((inf.getIndexer().getByKey(`${ns}/expire-keep`)?.spec as { size: number }).size, 7);
    const server = await serverState(c.transport, widgets, ns);
    await waitUntil(() => JSON.stringify(sortedEntries(cacheState(inf))) === JSON.stringify(sortedEntries(server)), 'cache equals server');
  });

  it('cluster-scoped CRDs: keys are names; the factory shares informers; listers and indexers work', async () => {
    const gizmos = await findCrdResource(c.transport, `gizmos.${clusterGroup}`);
    assert.equal(gizmos.namespaced, false);
    const factory = new InformerFactory({ transport: c.transport, clock: realClock });
    try {
      const inf = factory.informerFor(gizmos, { indexers: { [OWNER_UID_INDEX]: ownerUidIndexFunc } });
      assert.equal(factory.informerFor(gizmos), inf);
      const mine = uniqueName('gz');
      const j = journal();
      inf.addEventHandler(j.handler);
      factory.start();
      assert.equal(await factory.waitForCacheSync(), true);
      const gpath = (name = '') => `${resourcePath(gizmos)}${name ? '/' + name : ''}`;
      const owner = await c.transport.json<KubeObject>({
        method: 'POST',
        path: gpath(),
        body: { apiVersion: `${clusterGroup}/v1`, kind: 'Gizmo', metadata: { name: `${mine}-owner`, labels: { role: 'owner' } }, spec: {} },
      });
      const child = await c.transport.json<KubeObject>({
        method: 'POST',
        path: gpath(),
        body: {
          apiVersion: `${clusterGroup}/v1`,
          kind: 'Gizmo',
          metadata: { name: `${mine}-child`, labels: { role: 'child' }, ownerReferences: [{ apiVersion: `${clusterGroup}/v1`, kind: 'Gizmo', name: owner.metadata.name!, uid: owner.metadata.uid! }] },
          spec: {},
        },
      });
      await waitUntil(() => inf.getIndexer().getByKey(child.metadata.name!) !== undefined, 'child cached');
      assert.deepEqual(inf.getIndexer().indexKeys(OWNER_UID_INDEX, owner.metadata.uid!), [child.metadata.name]);
      const lister = new Lister(inf.getIndexer());
      assert.equal(lister.get(undefined, `${mine}-owner`)?.metadata.uid, owner.metadata.uid);
      assert.deepEqual(lister.list(`role=child`).map((o) => o.metadata.name).filter((n) => n?.startsWith(mine)), [`${mine}-child`]);
      await c.transport.json({ method: 'DELETE', path: gpath(child.metadata.name) });
      await waitUntil(() => j.byKey.get(child.metadata.name!)?.at(-1)?.startsWith('delete') === true, 'child delete delivered');
      assert.deepEqual(j.byKey.get(child.metadata.name!)?.map((e) => e.split('@')[0]), ['add', 'delete']);
      await c.transport.json({ method: 'DELETE', path: gpath(owner.metadata.name) });
    } finally {
      factory.dispose();
    }
  });
});
