import { isNotFound, type KubeClient } from '../k8s/client.ts';
import { splitKey, type ObjectKey } from '../k8s/keys.ts';
import type { GroupVersionResource, KubeObject } from '../k8s/objects.ts';
import { jsonEqual } from '../reconcilers/jsonEqual.ts';
import { cleanForDiff, yamlDiff } from './objectDiff.ts';

export type CacheState = 'in-sync' | 'stale' | 'cache-missing' | 'server-missing' | 'both-missing';

export interface InspectResult {
  key: ObjectKey;
  cached?: KubeObject;
  server?: KubeObject;
  state: CacheState;
  /** True when the two differ (managedFields ignored). */
  differs: boolean;
  /** Unified YAML diff cache → server ("" when equal). */
  diff: string;
  cachedResourceVersion?: string;
  serverResourceVersion?: string;
  /**
   * serverRV − cachedRV when both are integers (etcd's are), for orientation only: resourceVersions are
   * opaque and the difference counts writes to the whole cluster, not to this object.
   */
  resourceVersionLag?: number;
}

/**
 * Compares the informer's copy of `key` (given by the caller) with a fresh GET:
 * whether they differ (ignoring managedFields) and by how much the cache lags.
 * Reads only.
 */
export async function inspectKey(o: { client: KubeClient; gvr: GroupVersionResource; key: ObjectKey; cached: KubeObject | undefined; signal?: AbortSignal }): Promise<InspectResult> {
  const { namespace, name } = splitKey(o.key);
  let server: KubeObject | undefined;
  try {
    server = await o.client.get(o.gvr, namespace, name, o.signal);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  const cached = o.cached;
  const differs = !jsonEqual(cleanForDiff(cached), cleanForDiff(server));
  const state: CacheState = !cached && !server ? 'both-missing' : !cached ? 'cache-missing' : !server ? 'server-missing' : differs ? 'stale' : 'in-sync';
  const r: InspectResult = {
    key: o.key,
    state,
    differs,
    diff: differs ? yamlDiff(o.key, cached, server, { beforeName: 'cache', afterName: 'server' }) : '',
  };
  if (cached) {
    r.cached = cached;
    r.cachedResourceVersion = cached.metadata.resourceVersion;
  }
  if (server) {
    r.server = server;
    r.serverResourceVersion = server.metadata.resourceVersion;
  }
  const a = Number(r.cachedResourceVersion);
  const b = Number(r.serverResourceVersion);
  if (r.cachedResourceVersion && r.serverResourceVersion && Number.isSafeInteger(a) && Number.isSafeInteger(b)) r.resourceVersionLag = b - a;
  return r;
}
