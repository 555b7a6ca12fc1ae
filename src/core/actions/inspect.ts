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
 * - With `goTyped` (the cached copy is a Go program's typed object, encoded again by its Go types), a field the
 *   server's object has as a zero value (`false`, `0`, `""`, null, `[]`, `{}`) where the cached copy has none is one
 *   the Go type omits (`omitempty`): the program reads it as that zero value either way, so it is not a difference
 *   (the server's copy in the result still has it). A field the Go type lacks altogether is still a difference.
 * - The cached copy in the result has its fields in the server's object's order (fields only it has after them), so
 *   that the two copies rendered as YAML differ in the lines that differ only, whatever order each was encoded in.
 * Reads only.
 */
export async function inspectKey(o: { client: KubeClient; gvr: GroupVersionResource; key: ObjectKey; cached: KubeObject | undefined; metadataOnly?: boolean; goTyped?: boolean; signal?: AbortSignal }): Promise<InspectResult> {
  const { namespace, name } = splitKey(o.key);
  const version = versionOf(o.cached?.apiVersion, o.gvr.group) ?? o.gvr.version;
  let server: KubeObject | undefined;
  try {
    server = await o.client.get({ ...o.gvr, version }, namespace, name, o.signal);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  if (server && o.metadataOnly) server = { apiVersion: server.apiVersion, kind: server.kind, metadata: server.metadata } as KubeObject;
  // In the server's key order: a Go program's copy is encoded from a map (keys sorted), the server's built-in kinds in
  // their Go struct's field order; shown as they come, two equal copies would read as a diff of moved lines.
  const cached = o.cached && server ? (inKeyOrderOf(withoutEmptyExtras(o.cached, server), server) as KubeObject) : o.cached;
  const compared = o.goTyped && cached && server ? (withoutOmittedZeros(server, cached) as KubeObject) : server;
  const differs = !jsonEqual(cleanForDiff(cached), cleanForDiff(compared));
  const state: CacheState = !cached && !server ? 'both-missing' : !cached ? 'cache-missing' : !server ? 'server-missing' : differs ? 'stale' : 'in-sync';
  const r: InspectResult = {
    key: o.key,
    state,
    differs,
    diff: differs ? yamlDiff(o.key, cached, compared, { beforeName: 'cache', afterName: 'server' }) : '',
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

/**
 * `value` with the keys of each of its maps in the order `reference` has them at the same place (recursively, into
 * lists item by item), the keys `reference` lacks after those in their own order. Values are not changed.
 */
function inKeyOrderOf(value: unknown, reference: unknown): unknown {
  if (Array.isArray(value)) return Array.isArray(reference) ? value.map((v, i) => inKeyOrderOf(v, reference[i])) : value;
  if (!value || typeof value !== 'object') return value;
  if (!reference || typeof reference !== 'object' || Array.isArray(reference)) return value;
  const v = value as Record<string, unknown>;
  const r = reference as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(r)) if (Object.hasOwn(v, k)) out[k] = inKeyOrderOf(v[k], r[k]);
  for (const k of Object.keys(v)) if (!Object.hasOwn(r, k)) out[k] = v[k];
  return out;
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

/**
 * `value` (the server's object) without the fields that hold a zero value of Go's `omitempty` in it and are absent
 * from `typed` (a Go program's encoding of the same object) at the same place; recursively, into lists of the same
 * length item by item.
 */
function withoutOmittedZeros(value: unknown, typed: unknown): unknown {
  if (Array.isArray(value)) {
    return Array.isArray(typed) && typed.length === value.length ? value.map((v, i) => withoutOmittedZeros(v, typed[i])) : value;
  }
  if (!value || typeof value !== 'object') return value;
  const t = typed && typeof typed === 'object' && !Array.isArray(typed) ? (typed as Record<string, unknown>) : undefined;
  if (!t) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (!(k in t) && isGoZero(v)) continue;
    out[k] = withoutOmittedZeros(v, t[k]);
  }
  return out;
}

/** Whether `v` is a value Go's `omitempty` leaves out: false, 0, "", null, an empty list or map. */
function isGoZero(v: unknown): boolean {
  if (v === null || v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v as object).length === 0;
}
