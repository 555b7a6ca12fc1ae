import type { CacheReader, EventRecorder, ReconcileContext } from '../controller/reconcile.ts';
import type { IndexerReader } from '../cache/interfaces.ts';
import type { KubeClient } from '../k8s/client.ts';
import { keyOf, type ObjectKey } from '../k8s/keys.ts';
import type { GroupVersionResource, KubeObject } from '../k8s/objects.ts';
import { gvrToString } from '../k8s/objects.ts';
import type { Logger } from '../log.ts';
import { nullLogger } from '../log.ts';

/** A cache that watches nothing: reconcilers fall back to GETs. */
export const emptyCache: CacheReader = {
  indexer: () => undefined,
  get: () => undefined,
};

/** Drops events (for one-off runs and tests that do not look at Events). */
export const nullRecorder: EventRecorder = { event: () => {} };

/**
 * A read-only cache holding fixed snapshots per resource (for one-off runs,
 * the CLI without an informer, and tests). Objects are kept as given and
 * MUST NOT be mutated by readers. Only `getByKey`, `list` and `listKeys` are
 * meaningful; index lookups return nothing.
 */
export function staticCache(entries: ReadonlyArray<{ gvr: GroupVersionResource; objects: readonly KubeObject[] }>): CacheReader {
  const byGvr = new Map<string, IndexerReader>();
  for (const { gvr, objects } of entries) {
    const map = new Map<ObjectKey, KubeObject>(objects.map((o) => [keyOf(o), o]));
    byGvr.set(gvrToString(gvr), {
      getByKey: (k) => map.get(k),
      list: () => [...map.values()],
      listKeys: () => [...map.keys()],
      byIndex: () => [],
      indexKeys: () => [],
      listIndexFuncValues: () => [],
    });
  }
  return {
    indexer: (gvr) => byGvr.get(gvrToString(gvr)),
    get: (gvr, key) => byGvr.get(gvrToString(gvr))?.getByKey(key),
  };
}

export interface ContextOptions {
  client: KubeClient;
  primary: GroupVersionResource;
  dryRun?: boolean;
  cache?: CacheReader;
  log?: Logger;
  recorder?: EventRecorder;
  signal?: AbortSignal;
}

/** Builds a {@link ReconcileContext} from parts (defaults: empty cache, null logger/recorder, a never-aborted signal). */
export function createReconcileContext(o: ContextOptions): ReconcileContext {
  return {
    client: o.client,
    cache: o.cache ?? emptyCache,
    log: o.log ?? nullLogger,
    recorder: o.recorder ?? nullRecorder,
    primary: o.primary,
    dryRun: o.dryRun ?? false,
    signal: o.signal ?? new AbortController().signal,
  };
}
