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
 * The diff editor's title: "Gadget shop/g: cache ↔ server (in-sync, rv 485)", "… (stale, rv 480 → 485)" — one
 * resourceVersion when both copies have the same, an arrow only when the server's moved on.
 */
export function inspectTitle(kind: string, cacheName: string, r: Pick<InspectResult, 'key' | 'state' | 'cachedResourceVersion' | 'serverResourceVersion' | 'resourceVersionLag'>): string {
  const rv = r.resourceVersionLag === undefined ? '' : r.cachedResourceVersion === r.serverResourceVersion ? `, rv ${r.cachedResourceVersion}` : `, rv ${r.cachedResourceVersion} → ${r.serverResourceVersion}`;
  return `${kind} ${r.key}: ${cacheName} ↔ server (${r.state}${rv})`;
}

/**
 * Compares a cached copy of `key` (given by the caller: an informer's, or a Go program's) with a fresh GET:
 * whether they differ (ignoring managedFields) and by how much the cache lags.
 * - The GET asks for the cached copy's version (its apiVersion) when that is another served version of the
 *   resource than `gvr`'s, so a program caching v1alpha1 is compared with v1alpha1.
 * - With `metadataOnly` (the cache holds PartialObjectMetadata) only apiVersion, kind and metadata of the server's
 *   object are compared and shown.
 * - A field the cached copy has as `{}` or null where the server has none (a Go struct's serialization of an
 *   empty `status`) is not a difference and is left out of the cached copy.
 * Reads only.
 */
export async function inspectKey(o: { client: KubeClient; gvr: GroupVersionResource; key: ObjectKey; cached: KubeObject | undefined; metadataOnly?: boolean; signal?: AbortSignal }): Promise<InspectResult> {
  const { namespace, name } = splitKey(o.key);
  const version = versionOf(o.cached?.apiVersion, o.gvr.group) ?? o.gvr.version;
  let server: KubeObject | undefined;
  try {
    server = await o.client.get({ ...o.gvr, version }, namespace, name, o.signal);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  if (server && o.metadataOnly) server = { apiVersion: server.apiVersion, kind: server.kind, metadata: server.metadata } as KubeObject;
  const cached = o.cached && server ? (withoutEmptyExtras(o.cached, server) as KubeObject) : o.cached;
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

/** The version of `apiVersion` ("group/version", "v1") when it is of `group`; undefined otherwise. */
function versionOf(apiVersion: string | undefined, group: string): string | undefined {
  if (!apiVersion) return undefined;
  const slash = apiVersion.indexOf('/');
  const g = slash < 0 ? '' : apiVersion.slice(0, slash);
  return g === group ? apiVersion.slice(slash + 1) : undefined;
}

/** `value` without the fields that are `{}` or null in it and absent from `other` at the same place (recursively). */
function withoutEmptyExtras(value: unknown, other: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const o = other && typeof other === 'object' && !Array.isArray(other) ? (other as Record<string, unknown>) : undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const empty = v === null || (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0);
    if (empty && !(o && k in o)) continue;
    out[k] = withoutEmptyExtras(v, o?.[k]);
  }
  return out;
}
