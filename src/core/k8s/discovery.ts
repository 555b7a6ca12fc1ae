import type { Logger } from '../log.ts';
import { closestNames } from '../text/closest.ts';
import type { KubeObject, ResourceInfo } from './objects.ts';
import type { KubeTransport } from './transport.ts';

/** metav1.APIResourceList as served by `/api/v1` and `/apis/<group>/<version>`. */
export interface ApiResourceList {
  groupVersion: string;
  resources: Array<{ name: string; kind: string; namespaced: boolean; verbs?: string[]; singularName?: string; shortNames?: string[] }>;
}

/** metav1.APIGroupList as served by `/apis`. */
export interface ApiGroupList {
  groups: Array<{ name: string; versions: Array<{ groupVersion: string; version: string }>; preferredVersion?: { groupVersion: string; version: string } }>;
}

/** A resource from discovery, with the verbs the server allows on it. */
export interface DiscoveredResource extends ResourceInfo {
  verbs: string[];
  shortNames?: string[];
  /** True for the group's preferred version. */
  preferred: boolean;
}

/**
 * Turns one APIResourceList into resources: subresources ("widgets/status")
 * are folded into their parent's `subresources`.
 */
export function resourcesFromList(list: ApiResourceList, preferred: boolean): DiscoveredResource[] {
  const slash = list.groupVersion.indexOf('/');
  const group = slash < 0 ? '' : list.groupVersion.slice(0, slash);
  const version = slash < 0 ? list.groupVersion : list.groupVersion.slice(slash + 1);
  const byName = new Map<string, DiscoveredResource>();
  for (const r of list.resources ?? []) {
    if (r.name.includes('/')) continue;
    byName.set(r.name, {
      group,
      version,
      resource: r.name,
      kind: r.kind,
      namespaced: r.namespaced,
      subresources: [],
      verbs: r.verbs ?? [],
      ...(r.shortNames ? { shortNames: r.shortNames } : {}),
      preferred,
    });
  }
  for (const r of list.resources ?? []) {
    const i = r.name.indexOf('/');
    if (i < 0) continue;
    const parent = byName.get(r.name.slice(0, i));
    if (parent) parent.subresources!.push(r.name.slice(i + 1));
  }
  return [...byName.values()];
}

/**
 * Every resource the server serves, from `/api` and `/apis`: for each group,
 * the preferred version first. A group version that fails to answer (a
 * broken aggregated API, say) is skipped and reported to `logger`; a failure
 * of `/api` or `/apis` itself throws.
 */
export async function discoverResources(transport: KubeTransport, options: { signal?: AbortSignal; logger?: Logger } = {}): Promise<DiscoveredResource[]> {
  const { signal, logger } = options;
  const [core, groups] = await Promise.all([
    transport.json<{ versions: string[] }>({ method: 'GET', path: '/api', signal }),
    transport.json<ApiGroupList>({ method: 'GET', path: '/apis', signal }),
  ]);
  const targets: Array<{ path: string; groupVersion: string; preferred: boolean }> = (core.versions ?? []).map((v, i) => ({
    path: `/api/${v}`,
    groupVersion: v,
    preferred: i === 0,
  }));
  for (const g of groups.groups ?? []) {
    const pref = g.preferredVersion?.groupVersion ?? g.versions[0]?.groupVersion;
    const ordered = [...g.versions].sort((a, b) => (a.groupVersion === pref ? -1 : b.groupVersion === pref ? 1 : 0));
    for (const v of ordered) targets.push({ path: `/apis/${v.groupVersion}`, groupVersion: v.groupVersion, preferred: v.groupVersion === pref });
  }
  const lists = await Promise.all(
    targets.map(async (t) => {
      try {
        return resourcesFromList(await transport.json<ApiResourceList>({ method: 'GET', path: t.path, signal }), t.preferred);
      } catch (e) {
        if (signal?.aborted) throw e;
        logger?.warn('discovery of a group version failed; skipping it', { groupVersion: t.groupVersion, error: (e as Error).message });
        return [];
      }
    }),
  );
  return lists.flat();
}

/** API groups of Kubernetes itself outside `*.k8s.io` (the core group is ""). */
const BUILT_IN_GROUPS = new Set(['', 'apps', 'batch', 'autoscaling', 'policy', 'extensions']);

/**
 * Whether `group` is one of Kubernetes' own API groups: the core group, `apps`, `batch`, `autoscaling`, `policy`,
 * `extensions` and every `*.k8s.io` group (`rbac.authorization.k8s.io`, `metrics.k8s.io`…). Anything else is served
 * by a CustomResourceDefinition or an extension API server: what a user who may not list CRDs can still recognise
 * as a custom resource from discovery, which every authenticated user may read.
 */
export function isBuiltInGroup(group: string): boolean {
  return BUILT_IN_GROUPS.has(group) || group === 'k8s.io' || group.endsWith('.k8s.io');
}

/**
 * Finds a resource in discovery results by group and plural, kind or short
 * name (case-insensitive), preferring `version` when given, else the group's
 * preferred version.
 */
export function findResource(resources: readonly DiscoveredResource[], query: { group: string; version?: string; name: string }): DiscoveredResource | undefined {
  const name = query.name.toLowerCase();
  const matches = resources.filter(
    (r) =>
      r.group === query.group &&
      (r.resource === name || r.kind.toLowerCase() === name || (r.shortNames ?? []).includes(name)) &&
      (query.version === undefined || r.version === query.version),
  );
  return oneVersionPerResource(matches)[0];
}

/**
 * One entry per resource (group and plural) among `resources`, in their order: the version the server prefers for
 * its group when the resource is served there, else the resource's highest-priority served version
 * ({@link compareKubeVersions}). A group's preferred version is one for the whole group, so a resource served only
 * in another version of it — two CRDs of one group at different versions, `octopi` in `v1beta2` while `cacti` makes
 * `v1` the preferred one — is still found, as kubectl finds it. `accept` narrows the candidates first (verbs).
 */
export function oneVersionPerResource(resources: readonly DiscoveredResource[], accept: (r: DiscoveredResource) => boolean = () => true): DiscoveredResource[] {
  const best = new Map<string, DiscoveredResource>();
  for (const r of resources) {
    if (!accept(r)) continue;
    const id = `${r.group}/${r.resource}`;
    const had = best.get(id);
    if (!had || (!had.preferred && (r.preferred || compareKubeVersions(r.version, had.version) < 0))) best.set(id, r);
  }
  const chosen = new Set(best.values());
  return resources.filter((r) => chosen.has(r));
}

/** What a CustomResourceDefinition says about its resource. */
export interface CrdResourceInfo extends ResourceInfo {
  /** Served versions, highest priority first (Kubernetes version ordering). */
  servedVersions: string[];
  storageVersion: string;
}

/**
 * Kubernetes version priority (as discovery orders CRD versions): GA before
 * beta before alpha, higher numbers first; versions that do not look like
 * "v1", "v2beta3" sort after them, alphabetically.
 */
export function compareKubeVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = v.match(/^v(\d+)(?:(alpha|beta)(\d+))?$/);
    if (!m) return undefined;
    return { major: Number(m[1]), stage: m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0, minor: m[3] === undefined ? 0 : Number(m[3]) };
  };
  const pa = parse(a);
  const pb = parse(b);
  if (pa && pb) return pb.stage - pa.stage || pb.major - pa.major || pb.minor - pa.minor;
  if (pa) return -1;
  if (pb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

interface CrdSpec {
  group: string;
  names: { plural: string; kind: string };
  scope: 'Namespaced' | 'Cluster';
  versions: Array<{ name: string; served: boolean; storage: boolean; subresources?: Record<string, unknown> }>;
}

/**
 * The GVR of a CRD's resource: plural, kind, scope, and the subresources of
 * the chosen version (`version` if given and served, else the
 * highest-priority served version). Throws when no such version is served.
 */
export function resourceInfoFromCrd(crd: KubeObject, version?: string): CrdResourceInfo {
  const spec = crd.spec as CrdSpec | undefined;
  if (!spec?.group || !spec.names?.plural || !Array.isArray(spec.versions)) {
    throw new Error(`${crd.metadata.name ?? 'object'} is not a CustomResourceDefinition`);
  }
  const served = spec.versions.filter((v) => v.served).map((v) => v.name).sort(compareKubeVersions);
  const chosen = version ?? served[0];
  const entry = spec.versions.find((v) => v.name === chosen && v.served);
  if (!chosen || !entry) throw new Error(`CRD ${crd.metadata.name}: version ${chosen ?? '(none)'} is not served (served: ${served.join(', ') || 'none'})`);
  return {
    group: spec.group,
    version: chosen,
    resource: spec.names.plural,
    kind: spec.names.kind,
    namespaced: spec.scope !== 'Cluster',
    subresources: Object.keys(entry.subresources ?? {}),
    servedVersions: served,
    storageVersion: spec.versions.find((v) => v.storage)?.name ?? chosen,
  };
}

/**
 * Reads CustomResourceDefinition `crdName` ("<plural>.<group>") from the
 * server and returns its resource (see {@link resourceInfoFromCrd}).
 * Throws the server's ApiError (404 when there is no such CRD).
 */
export async function findCrdResource(transport: KubeTransport, crdName: string, options: { version?: string; signal?: AbortSignal } = {}): Promise<CrdResourceInfo> {
  const crd = await transport.json<KubeObject>({
    method: 'GET',
    path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(crdName)}`,
    signal: options.signal,
  });
  return resourceInfoFromCrd(crd, options.version);
}

/**
 * The served resource ids (`plural.group`, or a core `plural`) that a resource setting's value (`given`), which names
 * none of `resources` as it is, most likely meant: the same resource written as kubectl takes it or with its version
 * (`orders`, `Order`, `order.shop.example.org`, `orders.shop.example.org/v1`, `orders.v1.shop.example.org`), else a
 * close spelling of an id. At most three, sorted; [] when nothing is close. For the editor's messages about
 * `reconcileLab.resources` and `reconcileLab.reconciler.resource`, which take the exact id.
 */
export function meantResourceIds(given: string, resources: readonly ResourceInfo[]): string[] {
  const id = (r: ResourceInfo) => (r.group ? `${r.resource}.${r.group}` : r.resource);
  const ids = [...new Set(resources.filter((r) => !r.resource.includes('/')).map(id))];
  const g = given.trim().toLowerCase().replace(/\/v\d+(?:(?:alpha|beta)\d+)?$/, '');
  const dot = g.indexOf('.');
  const name = dot < 0 ? g : g.slice(0, dot);
  let group = dot < 0 ? undefined : g.slice(dot + 1);
  // "orders.v1.shop.example.org" (with its version, as client-go prints a GVR).
  if (group !== undefined && /^v\d+(?:(?:alpha|beta)\d+)?(\.|$)/.test(group)) group = group.replace(/^v\d+(?:(?:alpha|beta)\d+)?\.?/, '');
  const sameName = resources.filter((r) => !r.resource.includes('/') && (r.resource === name || r.kind.toLowerCase() === name));
  const inGroup = group === undefined ? sameName : sameName.filter((r) => r.group === group);
  const exact = [...new Set((inGroup.length ? inGroup : sameName).map(id))].filter((x) => x !== given.trim()).sort();
  if (exact.length) return exact.slice(0, 3);
  return closestNames(g, ids).sort();
}

/** `given` followed by what it most likely meant ({@link meantResourceIds}): `orders (did you mean orders.shop.example.org?)`; `given` alone when nothing is close. */
export function withMeantResource(given: string, resources: readonly ResourceInfo[]): string {
  const meant = meantResourceIds(given, resources);
  return meant.length ? `${given} (did you mean ${meant.join(' or ')}?)` : given;
}
