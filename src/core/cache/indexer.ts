import type { KubeObject } from '../k8s/objects.ts';
import { keyOf, type ObjectKey } from '../k8s/keys.ts';
import type { IndexerReader, IndexFunc } from './interfaces.ts';

/** The index every informer has: objects by namespace ("" for cluster-scoped). */
export const NAMESPACE_INDEX = 'namespace';

/** client-go MetaNamespaceIndexFunc: `[namespace]`, or `[""]` for a cluster-scoped object. */
export function namespaceIndexFunc(obj: KubeObject): string[] {
  return [obj.metadata.namespace ?? ''];
}

/** Called when an index function throws; the object is then filed under no value of that index. */
export type IndexErrorSink = (indexName: string, key: ObjectKey, error: unknown) => void;

/**
 * One index: value → the keys filed under it. A value held by a single key is
 * stored as that key (no Set), which keeps unique-valued indexes such as an
 * owner-UID index cheap.
 */
type IndexMap = Map<string, ObjectKey | Set<ObjectKey>>;

/**
 * The informer's local store with secondary indexes (client-go's
 * threadSafeMap + storeIndex, for one JS thread).
 *
 * Invariants:
 * - every stored key appears, for every index, exactly under the values its
 *   index function returns for the stored object, and nowhere else;
 * - a value whose key set becomes empty is removed from the index
 *   (kubernetes/kubernetes#84959), so `listIndexFuncValues` never lists a value
 *   without objects.
 *
 * Ownership: the store takes ownership of the objects it is given (`add`,
 * `update`, `replace`); callers MUST NOT mutate them afterwards, nor mutate
 * anything a read returns.
 */
export class Indexer<T extends KubeObject = KubeObject> implements IndexerReader<T> {
  private items = new Map<ObjectKey, T>();
  private readonly indexFuncs = new Map<string, IndexFunc<T>>();
  private indices = new Map<string, IndexMap>();
  private readonly onIndexError: IndexErrorSink;
  /** Content built ahead for the next {@link replace} (see {@link stage}); `undefined` when none. */
  private staged:
    | {
        order: T[];
        items: Map<ObjectKey, T>;
        indices: Map<string, IndexMap>;
        /** Each index function with its staged index, so that staging an object looks nothing up by name. */
        filers: Array<{ name: string; fn: IndexFunc<T>; index: IndexMap }>;
        usable: boolean;
      }
    | undefined;

  /**
   * `indexers` are added to the namespace index, which is always present.
   * `onIndexError` receives exceptions from index functions (default: ignored).
   */
  constructor(indexers: Record<string, IndexFunc<T>> = {}, onIndexError?: IndexErrorSink) {
    this.onIndexError = onIndexError ?? (() => {});
    this.indexFuncs.set(NAMESPACE_INDEX, namespaceIndexFunc);
    this.indices.set(NAMESPACE_INDEX, new Map());
    this.addIndexers(indexers);
  }

  get size(): number {
    return this.items.size;
  }

  /**
   * Adds index functions and indexes the stored objects under them at once.
   * Throws "indexer conflict" if a name is already registered (nothing is added then).
   */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    const names = Object.keys(indexers);
    const conflicts = names.filter((n) => this.indexFuncs.has(n));
    if (conflicts.length > 0) throw new Error(`indexer conflict: ${conflicts.join(', ')}`);
    this.staged = undefined; // staged without the new indexes
    for (const name of names) {
      const fn = indexers[name]!;
      const index: IndexMap = new Map();
      this.indexFuncs.set(name, fn);
      this.indices.set(name, index);
      for (const [key, obj] of this.items) this.fileUnder(index, this.valuesOf(name, fn, key, obj), key);
    }
  }

  /** Names of the registered indexes (including "namespace"). */
  indexNames(): string[] {
    return [...this.indexFuncs.keys()];
  }

  /** Inserts or replaces the object at its key and updates every index. */
  add(obj: T): void {
    this.put(keyOf(obj), obj);
  }

  /** Same as {@link add}: the store does not distinguish insert from update. */
  update(obj: T): void {
    this.put(keyOf(obj), obj);
  }

  /** Removes the object stored at `obj`'s key (a no-op when absent). Returns the removed object. */
  delete(obj: T): T | undefined {
    return this.deleteByKey(keyOf(obj));
  }

  deleteByKey(key: ObjectKey): T | undefined {
    const old = this.items.get(key);
    if (old === undefined) return undefined;
    for (const [name, fn] of this.indexFuncs) this.unfile(this.indices.get(name)!, this.valuesOf(name, fn, key, old), key);
    this.items.delete(key);
    return old;
  }

  /**
   * Replaces the whole content with `list` and rebuilds every index from
   * scratch. `resourceVersion` is the list's RV (kept for client-go parity;
   * the store does not interpret it). Returns the previous content, which
   * the store no longer references (the caller owns it).
   */
  replace(list: readonly T[], _resourceVersion?: string): Map<ObjectKey, T> {
    const previous = this.items;
    const staged = this.staged;
    this.staged = undefined;
    if (staged && staged.usable && sameObjects(staged.order, list)) {
      // Built while the list streamed in (see stage): the same content a rebuild gives, swapped in at once.
      this.items = staged.items;
      this.indices = staged.indices;
      return previous;
    }
    this.items = new Map();
    for (const obj of list) this.items.set(keyOf(obj), obj);
    for (const [name, fn] of this.indexFuncs) {
      const index: IndexMap = new Map();
      this.indices.set(name, index);
      for (const [key, obj] of this.items) this.fileUnder(index, this.valuesOf(name, fn, key, obj), key);
    }
    return previous;
  }

  /**
   * Builds, ahead of time, the content of the next {@link replace}: `obj` is keyed and indexed at once into a
   * staged store that no read sees. When `replace` is then called with exactly the staged objects, in the order
   * staged, it swaps the staged store in instead of rebuilding (what readers see is the same: one atomic
   * replace); any other list, an {@link addIndexers} meanwhile, or a key staged twice makes `replace` rebuild as
   * usual. Lets an informer index a LIST while it streams in. Index function errors are reported as they happen.
   */
  stage(obj: T): void {
    let st = this.staged;
    if (!st) {
      const indices = new Map<string, IndexMap>();
      const filers: Array<{ name: string; fn: IndexFunc<T>; index: IndexMap }> = [];
      for (const [name, fn] of this.indexFuncs) {
        const index: IndexMap = new Map();
        indices.set(name, index);
        filers.push({ name, fn, index });
      }
      st = this.staged = { order: [], items: new Map(), indices, filers, usable: true };
    }
    if (!st.usable) return;
    const key = keyOf(obj);
    const size = st.items.size;
    st.items.set(key, obj);
    if (st.items.size === size) {
      // A key listed twice: the rebuild (last one wins, indexes from the winners) is left to replace.
      st.usable = false;
      st.order = [];
      return;
    }
    st.order.push(obj);
    const filers = st.filers;
    for (let i = 0; i < filers.length; i++) {
      const f = filers[i]!;
      this.fileUnder(f.index, this.valuesOf(f.name, f.fn, key, obj), key);
    }
  }

  /** Drops what {@link stage} built (a list that failed or starts over). */
  discardStaged(): void {
    this.staged = undefined;
  }

  getByKey(key: ObjectKey): T | undefined {
    return this.items.get(key);
  }

  /** The stored object with `obj`'s key, if any. */
  get(obj: KubeObject): T | undefined {
    return this.items.get(keyOf(obj));
  }

  list(): T[] {
    return [...this.items.values()];
  }

  listKeys(): ObjectKey[] {
    return [...this.items.keys()];
  }

  /** Iterates the stored entries without copying (do not mutate the store while iterating). */
  entries(): IterableIterator<[ObjectKey, T]> {
    return this.items.entries();
  }

  /** Objects filed under `indexedValue` in `indexName`. Throws for an unknown index. */
  byIndex(indexName: string, indexedValue: string): T[] {
    const keys = this.indexOf(indexName).get(indexedValue);
    if (keys === undefined) return [];
    if (typeof keys === 'string') return [this.items.get(keys)!];
    const out: T[] = [];
    for (const k of keys) out.push(this.items.get(k)!);
    return out;
  }

  /** Keys filed under `indexedValue` in `indexName`. Throws for an unknown index. */
  indexKeys(indexName: string, indexedValue: string): ObjectKey[] {
    const keys = this.indexOf(indexName).get(indexedValue);
    if (keys === undefined) return [];
    return typeof keys === 'string' ? [keys] : [...keys];
  }

  /**
   * Objects sharing at least one `indexName` value with `obj` (client-go
   * `Index`), each once. Throws for an unknown index.
   */
  index(indexName: string, obj: T): T[] {
    const fn = this.indexFuncs.get(indexName);
    if (!fn) throw new Error(`Index with name ${indexName} does not exist`);
    const index = this.indices.get(indexName)!;
    const seen = new Set<ObjectKey>();
    for (const v of this.valuesOf(indexName, fn, keyOfSafe(obj), obj)) {
      const keys = index.get(v);
      if (keys === undefined) continue;
      if (typeof keys === 'string') seen.add(keys);
      else for (const k of keys) seen.add(k);
    }
    return [...seen].map((k) => this.items.get(k)!);
  }

  /** Every value currently present in `indexName` (empty for an unknown index). */
  listIndexFuncValues(indexName: string): string[] {
    const index = this.indices.get(indexName);
    return index ? [...index.keys()] : [];
  }

  private indexOf(indexName: string): IndexMap {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`Index with name ${indexName} does not exist`);
    return index;
  }

  private put(key: ObjectKey, obj: T): void {
    const old = this.items.get(key);
    this.items.set(key, obj);
    for (const [name, fn] of this.indexFuncs) {
      const index = this.indices.get(name)!;
      const newValues = this.valuesOf(name, fn, key, obj);
      if (old === undefined) {
        this.fileUnder(index, newValues, key);
        continue;
      }
      const oldValues = this.valuesOf(name, fn, key, old);
      // Fast path (client-go does the same): a single unchanged value needs no work.
      if (oldValues.length === 1 && newValues.length === 1 && oldValues[0] === newValues[0]) continue;
      this.unfile(index, oldValues, key);
      this.fileUnder(index, newValues, key);
    }
  }

  private valuesOf(name: string, fn: IndexFunc<T>, key: ObjectKey, obj: T): string[] {
    try {
      return fn(obj);
    } catch (e) {
      this.onIndexError(name, key, e);
      return [];
    }
  }

  private fileUnder(index: IndexMap, values: readonly string[], key: ObjectKey): void {
    for (const v of values) {
      const cur = index.get(v);
      if (cur === undefined) index.set(v, key);
      else if (typeof cur === 'string') {
        if (cur !== key) index.set(v, new Set([cur, key]));
      } else cur.add(key);
    }
  }

  private unfile(index: IndexMap, values: readonly string[], key: ObjectKey): void {
    for (const v of values) {
      const cur = index.get(v);
      if (cur === undefined) continue;
      if (typeof cur === 'string') {
        if (cur === key) index.delete(v);
        continue;
      }
      cur.delete(key);
      if (cur.size === 1) index.set(v, cur.values().next().value!);
      else if (cur.size === 0) index.delete(v);
    }
  }
}

function sameObjects<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function keyOfSafe(obj: KubeObject): ObjectKey {
  try {
    return keyOf(obj);
  } catch {
    return '';
  }
}
