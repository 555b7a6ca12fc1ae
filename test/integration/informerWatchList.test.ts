// WatchList (streaming initial list) against the real kube-apiserver 1.34 (its WatchList feature is on):
// the default informer syncs without a LIST, through one stream that goes on as the watch; a 410 cut into
// the middle of the initial events restarts the stream from RV "" with nothing of the cut stream delivered;
// a WatchList request the server refuses (422) falls back to LIST + WATCH.
// The server is always real; where a failure cannot be provoked on demand (a 410 in the middle of the
// initial events), a thin ListerWatcher wrapper passes the real stream through and cuts it with the ERROR
// event kube-apiserver sends for an expired resourceVersion.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { getTestCluster, createNamespace, installCrd, testCrd, waitUntil, type TestCluster } from './support/cluster.ts';
import { KubeListerWatcher } from '../../src/core/k8s/listerWatcher.ts';
import { findCrdResource } from '../../src/core/k8s/discovery.ts';
import { SharedIndexInformer } from '../../src/core/cache/sharedIndexInformer.ts';
import { isTombstone, type ListerWatcher, type ListOptions, type WatchEvent, type WatchOptions } from '../../src/core/cache/interfaces.ts';
import { resourcePath } from '../../src/core/k8s/paths.ts';
import type { KubeList, KubeObject, ResourceInfo } from '../../src/core/k8s/objects.ts';
import { realClock } from '../../src/core/clock.ts';

const group = 'informer-watchlist-test.reconcile.dev';

type Cut = { afterAdded: number };

const EXPIRED: WatchEvent<KubeObject> = {
  type: 'ERROR',
  object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version' },
};

/**
 * Records the reflector's calls to the real server and can cut its streams with the 410 ERROR event
 * kube-apiserver sends for an expired resourceVersion: `cutNextWatchList` ends the next WatchList stream
 * after that many real ADDED events; `expireCurrent()` ends the open stream now. `holdWatchLists` delays
 * WatchList requests until it resolves. `mangle` edits WatchList options before they reach the server.
 */
class RecordingListerWatcher implements ListerWatcher<KubeObject> {
  readonly lists: ListOptions[] = [];
  readonly watches: WatchOptions[] = [];
  cutNextWatchList: number | undefined;
  holdWatchLists: Promise<void> | undefined;
  mangle: ((o: WatchOptions) => WatchOptions) | undefined;
  private kick: (() => void) | undefined;
  private readonly inner: ListerWatcher<KubeObject>;
  constructor(inner: ListerWatcher<KubeObject>) {
    this.inner = inner;
  }
  list(options: ListOptions, signal: AbortSignal): Promise<KubeList<KubeObject>> {
    this.lists.push({ ...options });
    return this.inner.list(options, signal);
  }
  /** Ends the open stream with a 410 ERROR event; false when none is open. */
  expireCurrent(): boolean {
    const k = this.kick;
    this.kick = undefined;
    k?.();
    return k !== undefined;
  }
  watch(options: WatchOptions, signal: AbortSignal): AsyncIterable<WatchEvent<KubeObject>> {
    const sent = options.sendInitialEvents && this.mangle ? this.mangle(options) : options;
    this.watches.push({ ...sent });
    let cutAfter: number | undefined;
    if (options.sendInitialEvents) {
      cutAfter = this.cutNextWatchList;
      this.cutNextWatchList = undefined;
    }
    const self = this;
    return {
      async *[Symbol.asyncIterator]() {
        if (options.sendInitialEvents && self.holdWatchLists) await self.holdWatchLists;
        const it = self.inner.watch(sent, signal)[Symbol.asyncIterator]();
        let kicked!: Promise<'kicked'>;
        kicked = new Promise((resolve) => (self.kick = () => resolve('kicked')));
        let added = 0;
        try {
          for (;;) {
            const r = await Promise.race([it.next(), kicked]);
            if (r === 'kicked') {
              yield EXPIRED;
              return;
            }
            if (r.done) return;
            yield r.value;
            if (cutAfter !== undefined && r.value.type === 'ADDED' && ++added >= cutAfter) {
              yield EXPIRED;
              return;
            }
          }
        } finally {
          await it.return?.();
        }
      },
    };
  }
}

describe('informer with WatchList (real kube-apiserver)', () => {
  let c: TestCluster;
  let res: ResourceInfo;
  let ns: string;
  const path = (name = '') => `${resourcePath(res, ns)}${name ? '/' + name : ''}`;
  const create = (name: string, n = 0) =>
    c.transport.json<KubeObject>({ method: 'POST', path: path(), body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name }, spec: { n } } });
  const serverRVs = async () => {
    const l = await c.transport.json<KubeList>({ method: 'GET', path: path() });
    return new Map(l.items.map((o) => [`${ns}/${o.metadata.name}`, o.metadata.resourceVersion!]));
  };
  const cacheRVs = (inf: SharedIndexInformer) => new Map(inf.getIndexer().list().map((o) => [`${ns}/${o.metadata.name}`, o.metadata.resourceVersion!]));
  const sorted = (m: Map<string, string>) => JSON.stringify([...m.entries()].sort());

  before(async () => {
    c = await getTestCluster();
    await installCrd(c.transport, testCrd({ group, kind: 'Widget', plural: 'widgets' }));
    res = await findCrdResource(c.transport, `widgets.${group}`);
    ns = await createNamespace(c.transport, 'watchlist');
    for (let i = 0; i < 30; i++) await create(`w-${String(i).padStart(2, '0')}`);
  });
  after(async () => {
    await c.transport.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  });

  const start = (lw: RecordingListerWatcher) => {
    const inf = new SharedIndexInformer({ listerWatcher: lw, resource: res, clock: realClock });
    const seen: string[] = [];
    const phases: string[] = [];
    inf.onDidChangeState((s) =>
      phases.push(s.phase === 'backoff' ? `backoff:${s.reason}` : s.phase === 'listing' ? `${s.watchList ? 'stream' : 'list'}@${s.resourceVersion || '""'}` : s.phase),
    );
    inf.addEventHandler({
      onAdd: (o, initial) => void seen.push(`add ${o.metadata.name}${initial ? ' initial' : ''}`),
      onUpdate: (a, b) => void seen.push(`update ${b.metadata.name}${a.metadata.resourceVersion === b.metadata.resourceVersion ? ' same-rv' : ''}`),
      onDelete: (o) => void seen.push(isTombstone(o) ? `tombstone ${o.key}` : `delete ${o.metadata.name}`),
    });
    inf.run();
    return { inf, seen, phases };
  };

  it('syncs by default through one stream, without a LIST, and the same stream then carries the changes', async () => {
    const lw = new RecordingListerWatcher(new KubeListerWatcher({ transport: c.transport, resource: res, namespace: ns }));
    const { inf, seen } = start(lw);
    try {
      await waitUntil(() => inf.hasSynced(), 'synced');
      assert.deepEqual(lw.lists, [], 'no LIST');
      assert.equal(lw.watches.length, 1);
      const w = lw.watches[0]!;
      assert.deepEqual([w.resourceVersion, w.sendInitialEvents, w.resourceVersionMatch, w.allowWatchBookmarks], ['', true, 'NotOlderThan', true]);
      assert.equal(seen.length, 30);
      assert.ok(seen.every((s) => s.endsWith(' initial')), 'every object arrives as an initial add');
      assert.equal(sorted(cacheRVs(inf)), sorted(await serverRVs()));
      const rvAtSync = Number(inf.lastSyncResourceVersion());
      assert.ok(rvAtSync > 0, 'the RV of the initial-events-end bookmark');

      const made = await create('after-sync', 1);
      await waitUntil(() => inf.getIndexer().getByKey(`${ns}/after-sync`)?.metadata.resourceVersion === made.metadata.resourceVersion, 'the create seen');
      await c.transport.json({ method: 'DELETE', path: path('w-00') });
      await waitUntil(() => inf.getIndexer().getByKey(`${ns}/w-00`) === undefined, 'the delete seen');
      assert.equal(lw.watches.length, 1, 'still the first stream');
      assert.deepEqual(seen.slice(30), ['add after-sync', 'delete w-00']);
      assert.equal(inf.state.phase, 'watching');
    } finally {
      inf.dispose();
      await inf.whenStopped();
    }
  });

  it('a 410 in the middle of the initial events: streams again at once from RV "", nothing of the cut stream delivered; a relist is a replace', async () => {
    const lw = new RecordingListerWatcher(new KubeListerWatcher({ transport: c.transport, resource: res, namespace: ns }));
    lw.cutNextWatchList = 7; // the very first stream (RV "") is cut after 7 real objects
    const { inf, seen, phases } = start(lw);
    try {
      await waitUntil(() => inf.hasSynced(), 'synced');
      const server = await serverRVs();
      assert.deepEqual(lw.watches.map((w) => [w.resourceVersion, !!w.sendInitialEvents]), [['', true], ['', true]]);
      assert.equal(seen.length, server.size, 'each object delivered once: nothing of the cut stream reached the handlers');
      assert.ok(seen.every((x) => x.endsWith(' initial')));
      assert.equal(sorted(cacheRVs(inf)), sorted(server));
      const rvAtSync = inf.lastSyncResourceVersion();

      // A later cycle, cut the same way while it streams "not older than" the last RV. Meanwhile the server
      // changes: one object goes, one comes; the watch is not open to see it, only the relist can.
      let release!: () => void;
      lw.holdWatchLists = new Promise((r) => (release = r));
      lw.cutNextWatchList = 5;
      seen.length = 0;
      assert.ok(lw.expireCurrent(), 'the carried stream was open');
      await waitUntil(() => phases.some((p) => p.startsWith('backoff:')), `the expired watch ends the cycle (${phases.join(' → ')}; ${JSON.stringify(lw.watches)})`);
      await c.transport.json({ method: 'DELETE', path: path('w-01') });
      const made = await create('during-cut', 2);
      release();
      await waitUntil(() => inf.getIndexer().getByKey(`${ns}/during-cut`) !== undefined, 'the relist brought the new object');
      assert.deepEqual(lw.lists, [], 'never a LIST');
      assert.deepEqual(
        lw.watches.slice(2).map((w) => [w.resourceVersion, !!w.sendInitialEvents]),
        [[rvAtSync, true], ['', true]],
        'streamed from the last RV, cut by 410, then at once from RV ""',
      );
      const after = await serverRVs();
      assert.equal(sorted(cacheRVs(inf)), sorted(after));
      assert.equal(inf.getIndexer().getByKey(`${ns}/during-cut`)?.metadata.resourceVersion, made.metadata.resourceVersion);
      // One replace: a tombstone for what vanished, then every listed object once (same-RV updates, one add).
      assert.equal(seen[0], `tombstone ${ns}/w-01`);
      assert.ok(seen.includes('add during-cut'), seen.join(', '));
      assert.equal(seen.length, 1 + after.size, `each object once: ${seen.join(', ')}`);
      assert.equal(seen.filter((x) => x.endsWith(' same-rv')).length, after.size - 1);
      assert.deepEqual(
        phases.filter((p) => p.startsWith('stream') || p.startsWith('list') || p.startsWith('backoff')),
        ['stream@""', 'stream@""', 'backoff:resource version expired', `stream@${rvAtSync}`, 'stream@""'],
      );
    } finally {
      inf.dispose();
      await inf.whenStopped();
    }
  });

  it('a WatchList request the server refuses (422) falls back to LIST + WATCH; the next cycle tries WatchList again', async () => {
    const lw = new RecordingListerWatcher(new KubeListerWatcher({ transport: c.transport, resource: res, namespace: ns }));
    // kube-apiserver refuses sendInitialEvents without resourceVersionMatch=NotOlderThan (and any
    // sendInitialEvents when its WatchList feature gate is off) with 422 Invalid.
    lw.mangle = (o) => ({ ...o, resourceVersionMatch: undefined });
    const { inf, seen, phases } = start(lw);
    try {
      await waitUntil(() => inf.hasSynced(), 'synced');
      assert.deepEqual(lw.lists.map((l) => [l.resourceVersion, l.limit]), [['0', 500]]);
      assert.deepEqual(lw.watches.map((w) => !!w.sendInitialEvents), [true, false]);
      assert.equal(sorted(cacheRVs(inf)), sorted(await serverRVs()));
      assert.equal(seen.length, (await serverRVs()).size);
      assert.deepEqual(phases, ['stream@""', 'list@0', 'watching'], 'no backoff before the fallback');
    } finally {
      inf.dispose();
      await inf.whenStopped();
    }
  });
});
