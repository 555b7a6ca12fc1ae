import type { IndexFunc, SharedIndexInformer } from '../cache/interfaces.ts';
import { NAMESPACE_INDEX } from '../cache/indexer.ts';
import { FINALIZER_INDEX, OWNER_UID_INDEX, TERMINATING_INDEX } from '../cache/indexFuncs.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { resourceIdOfGvr } from '../k8s/objects.ts';
import { unknownFieldsMessage } from '../text/closest.ts';

/**
 * A module reconciler's own cache indexes (controller-runtime's `FieldIndexer.IndexField`):
 *
 * ```ts
 * export const indexes = [
 *   { resource: 'configmaps', name: 'widget', index: (cm) => [cm.metadata.labels?.['example.com/widget'] ?? ''].filter(Boolean) },
 * ];
 * // in reconcile: ctx.cache.indexer({ group: '', version: 'v1', resource: 'configmaps' })?.byIndex('widget', request.name)
 * ```
 *
 * Contract: the loop watches every resource an index names (as a child: its changes queue their controller owner),
 * and adds the index to that resource's informer before it starts, so `byIndex` never misses an object the cache
 * holds. The index function runs in the informer on every add and update of that resource's objects: it must be
 * quick, must not mutate the object, and returns the values the object is filed under (an array of strings,
 * possibly empty). A throw, or anything but an array of strings, files the object under no value of that index and
 * is logged with the index's name and the object's key; the informer goes on. Indexes are read when the loop is
 * built (an edit of the module takes effect on the next connect or CLI start, like its predicates).
 */
export interface ModuleIndex {
  /** The indexed resource as `resourceIdOfGvr` spells it: "configmaps", "deployments.apps". */
  readonly resourceId: string;
  /** The index's name, for `byIndex(name, value)`. */
  readonly name: string;
  /** The module's function, wrapped so that a result that is not an array of strings throws (and is logged). */
  readonly index: IndexFunc;
}

/** Index names every informer of a loop already has (or may get from Reconcile Lab): a module cannot reuse them. */
export const BUILT_IN_INDEX_NAMES: readonly string[] = [NAMESPACE_INDEX, OWNER_UID_INDEX, FINALIZER_INDEX, TERMINATING_INDEX];

const ENTRY_FIELDS = ['resource', 'name', 'index'];
const RESOURCE_ID = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Reads a module's `indexes` export: an array of `{ resource, name, index }`, where `resource` is a resource name as
 * the CLI's --owns takes it ("configmaps", "deployments.apps") or an object `{ group, version?, resource }` as
 * `ctx.client` takes. Throws an Error whose message names the module (`path`), the entry and what is wrong; returns
 * [] when nothing is exported.
 */
export function moduleIndexesFromExport(raw: unknown, path: string): ModuleIndex[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new Error(`${path}: "indexes" must be an array of { resource, name, index } (got ${typeof raw})`);
  const out: ModuleIndex[] = [];
  raw.forEach((entry: unknown, i) => {
    const at = `${path}: indexes[${i}]`;
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw new Error(`${at} must be an object { resource, name, index }`);
    const e = entry as Record<string, unknown>;
    const unknown = unknownFieldsMessage(Object.keys(e), ENTRY_FIELDS, 'an index has');
    if (unknown) throw new Error(`${at} has ${unknown}`);
    const resourceId = resourceIdOf(e.resource);
    if (!resourceId) {
      throw new Error(`${at}.resource must name a resource: "configmaps", "deployments.apps", or { group: 'apps', version: 'v1', resource: 'deployments' } (got ${JSON.stringify(e.resource)})`);
    }
    if (typeof e.name !== 'string' || !e.name.trim()) throw new Error(`${at}.name must be a non-empty string (got ${JSON.stringify(e.name)})`);
    if (BUILT_IN_INDEX_NAMES.includes(e.name)) throw new Error(`${at}.name "${e.name}" is one of the indexes every informer has (${BUILT_IN_INDEX_NAMES.join(', ')}): use it as it is, or give yours another name`);
    if (out.some((o) => o.resourceId === resourceId && o.name === e.name)) throw new Error(`${at}: ${resourceId} has two indexes named "${e.name}"`);
    if (typeof e.index !== 'function') throw new Error(`${at}.index must be a function (object) => string[] (got ${typeof e.index})`);
    const fn = e.index as (obj: KubeObject) => unknown;
    const name = e.name;
    out.push({
      resourceId,
      name,
      index: (obj) => {
        const values = fn(obj);
        if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) {
          throw new Error(`the index "${name}" of ${path} returned ${Array.isArray(values) ? 'an array holding a non-string' : JSON.stringify(values) ?? String(values)}: an index function returns an array of strings ([] for none)`);
        }
        return values as string[];
      },
    });
  });
  return out;
}

function resourceIdOf(r: unknown): string | undefined {
  if (typeof r === 'string') return RESOURCE_ID.test(r) ? r : undefined;
  if (!r || typeof r !== 'object') return undefined;
  const o = r as Record<string, unknown>;
  if (typeof o.group !== 'string' || typeof o.resource !== 'string' || !o.resource) return undefined;
  if (o.version !== undefined && typeof o.version !== 'string') return undefined;
  const id = resourceIdOfGvr({ group: o.group, resource: o.resource });
  return RESOURCE_ID.test(id) ? id : undefined;
}

/**
 * Adds each index to the informer of its resource among `informers` (matched by group and resource, any version).
 * Call before the informers start. Throws when an index's resource has no informer there (the caller watches every
 * resource {@link moduleIndexesFromExport} named) or when the informer already has an index of that name.
 */
export function addModuleIndexes(indexes: readonly ModuleIndex[], informers: readonly SharedIndexInformer[]): void {
  for (const x of indexes) {
    const informer = informers.find((i) => resourceIdOfGvr(i.resource) === x.resourceId);
    if (!informer) throw new Error(`the index "${x.name}" is on ${x.resourceId}, which this loop does not watch`);
    informer.addIndexers({ [x.name]: x.index });
  }
}
