import type { KubeObject, ManagedFieldsEntry } from '../k8s/objects.ts';

/**
 * Shares what repeats between cached objects, so that the cache holds each
 * repeated value once instead of once per object. What anyone reads is
 * unchanged: every field keeps its value, type and key order.
 *
 * - Strings that repeat across objects of a resource (apiVersion, kind,
 *   namespace, timestamps, owner references, field managers, label values) are
 *   replaced by one shared instance of the same string (strings are immutable,
 *   so this is invisible).
 * - `managedFields[].fieldsV1` trees (a set of field paths, usually the same
 *   for every object one manager writes) are replaced by one shared, deeply
 *   frozen tree with the same content; a whole `managedFields` array equal to
 *   one seen before (same managers, operations, times and fields) is replaced
 *   by that one, shared and deeply frozen (every cached `managedFields` array
 *   is frozen). The cache's objects are read-only by contract (see
 *   {@link Indexer}); the freeze makes a write into a shared value fail
 *   instead of changing other objects.
 *
 * Why: a JSON-parsed `{}` costs 28–56 bytes of heap for 2 bytes of JSON, and
 * a fieldsV1 tree has dozens of them; a repeated string costs a 16-byte header
 * plus its characters each time. Measured with bench/informer.ts (heap per
 * object ÷ JSON size).
 *
 * Memory is bounded: each table holds at most `maxEntries` values and starts
 * over when full (values already shared stay shared).
 */
export class ObjectCompactor {
  private strings = new Map<string, string>();
  private trees = new Map<string, unknown>();
  private fieldLists = new Map<string, unknown>();
  private readonly maxEntries: number;
  private readonly maxListEntries: number;

  constructor(maxEntries = 16_384) {
    this.maxEntries = maxEntries;
    this.maxListEntries = Math.max(1, Math.min(maxEntries, 1024));
  }

  /** Rewrites `obj` in place (the informer owns it) and returns it. Never throws on odd shapes: it leaves them as they are. */
  compact<T extends KubeObject>(obj: T): T {
    if (typeof obj.apiVersion === 'string') obj.apiVersion = this.str(obj.apiVersion);
    if (typeof obj.kind === 'string') obj.kind = this.str(obj.kind);
    const md = obj.metadata;
    if (!md || typeof md !== 'object') return obj;
    if (typeof md.namespace === 'string') md.namespace = this.str(md.namespace);
    if (typeof md.creationTimestamp === 'string') md.creationTimestamp = this.str(md.creationTimestamp);
    if (typeof md.generateName === 'string') md.generateName = this.str(md.generateName);
    this.values(md.labels);
    const refs = md.ownerReferences;
    if (Array.isArray(refs)) {
      for (const r of refs) {
        if (!r || typeof r !== 'object') continue;
        if (typeof r.apiVersion === 'string') r.apiVersion = this.str(r.apiVersion);
        if (typeof r.kind === 'string') r.kind = this.str(r.kind);
        if (typeof r.name === 'string') r.name = this.str(r.name);
        if (typeof r.uid === 'string') r.uid = this.str(r.uid);
      }
    }
    const mf = md.managedFields;
    if (Array.isArray(mf) && !Object.isFrozen(mf)) md.managedFields = this.managedFields(mf);
    return obj;
  }

  /**
   * One shared, deeply frozen array for equal `managedFields` (objects written by the same managers at the same
   * second carry equal ones): the array, its entries and their strings are then held once, not once per object.
   * An array seen for the first time has its strings and fieldsV1 tree shared, then becomes the shared one.
   */
  shareManagedFields(mf: ManagedFieldsEntry[]): ManagedFieldsEntry[] {
    return Object.isFrozen(mf) ? mf : this.managedFields(mf);
  }

  /**
   * The shared, deeply frozen fieldsV1 tree with the content of `tree` (a value the caller owns, e.g. just parsed):
   * the one seen before, or `tree` itself, frozen and kept. A frozen `tree` is returned as it is (already shared).
   */
  shareFieldsV1<V extends object>(tree: V): V {
    if (Object.isFrozen(tree)) return tree;
    const text = JSON.stringify(tree);
    let shared = this.trees.get(text);
    if (shared === undefined) {
      if (this.trees.size >= this.maxEntries) this.trees = new Map();
      shared = deepFreeze(tree);
      this.trees.set(text, shared);
    }
    return shared as V;
  }

  private managedFields(mf: ManagedFieldsEntry[]): ManagedFieldsEntry[] {
    const text = JSON.stringify(mf);
    const shared = this.fieldLists.get(text);
    if (shared !== undefined) return shared as ManagedFieldsEntry[];
    for (const m of mf) if (m && typeof m === 'object') this.managedFieldsEntry(m);
    // The keys are whole managedFields texts (hundreds of bytes): this table is kept smaller than the others.
    if (this.fieldLists.size >= this.maxListEntries) this.fieldLists = new Map();
    this.fieldLists.set(text, deepFreeze(mf));
    return mf;
  }

  private managedFieldsEntry(m: ManagedFieldsEntry): void {
    const e = m as unknown as Record<string, unknown>;
    for (const k of ['apiVersion', 'manager', 'operation', 'fieldsType', 'time', 'subresource']) {
      const v = e[k];
      if (typeof v === 'string') e[k] = this.str(v);
    }
    const tree = e.fieldsV1;
    if (tree && typeof tree === 'object' && !Object.isFrozen(tree)) e.fieldsV1 = this.shareFieldsV1(tree);
  }

  private values(map: Record<string, string> | undefined): void {
    if (!map || typeof map !== 'object') return;
    for (const k in map) {
      const v = map[k];
      if (typeof v === 'string') map[k] = this.str(v);
    }
  }

  private str(s: string): string {
    const shared = this.strings.get(s);
    if (shared !== undefined) return shared;
    if (this.strings.size >= this.maxEntries) this.strings = new Map();
    this.strings.set(s, s);
    return s;
  }
}

function deepFreeze<T>(x: T): T {
  if (x && typeof x === 'object' && !Object.isFrozen(x)) {
    Object.freeze(x);
    for (const k in x) deepFreeze((x as Record<string, unknown>)[k]);
  }
  return x;
}
