import type { Disposable } from '../lifecycle.ts';
import type { Event } from '../event.ts';
import type { KubeList, KubeObject, ResourceInfo } from '../k8s/objects.ts';
import type { ObjectKey } from '../k8s/keys.ts';
import type { ManagedFieldsByBytes } from '../k8s/managedFieldsBytes.ts';

/**
 * The informer's contracts, shared by the cache (which implements them), the
 * controller (which consumes them) and the extension host (which shows them).
 * Semantics follow client-go `tools/cache`; see shared/reference/client-go-semantics.md.
 */

/**
 * A delete that the informer did not observe directly (the object vanished
 * between a watch drop and the relist). `obj` is the last state the cache had
 * and may be stale. Named after client-go's DeletedFinalStateUnknown.
 */
export interface DeletedFinalStateUnknown<T extends KubeObject = KubeObject> {
  readonly kind: 'DeletedFinalStateUnknown';
  readonly key: ObjectKey;
  readonly obj: T;
}

export function isTombstone<T extends KubeObject>(x: T | DeletedFinalStateUnknown<T>): x is DeletedFinalStateUnknown<T> {
  return (x as DeletedFinalStateUnknown<T>).kind === 'DeletedFinalStateUnknown' && 'key' in x && 'obj' in x;
}

/**
 * Receives notifications from a shared informer. Handlers see *cache* events,
 * not cluster events: several server changes may collapse into one update.
 *
 * Handlers MUST NOT mutate the objects they receive (they are the cache's).
 * Each handler is called serially, in order, for its own registration; a slow
 * or throwing handler delays only itself.
 */
export interface ResourceEventHandler<T extends KubeObject = KubeObject> {
  /** `isInInitialList` is true for objects delivered as part of the initial list (or synthetic adds for late handlers). */
  onAdd?(obj: T, isInInitialList: boolean): void | Promise<void>;
  /** Always receives both states. A resync delivers `oldObj === newObj`-equivalent states with the same resourceVersion. */
  onUpdate?(oldObj: T, newObj: T): void | Promise<void>;
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void | Promise<void>;
}

export interface HandlerRegistration extends Disposable {
  /** True once every object of the initial list has been delivered to this handler. */
  hasSynced(): boolean;
}

/** Read access to the indexed local cache. Callers MUST NOT mutate returned objects. */
export interface IndexerReader<T extends KubeObject = KubeObject> {
  getByKey(key: ObjectKey): T | undefined;
  list(): T[];
  listKeys(): ObjectKey[];
  byIndex(indexName: string, indexedValue: string): T[];
  indexKeys(indexName: string, indexedValue: string): ObjectKey[];
  listIndexFuncValues(indexName: string): string[];
}

/** Maps an object to the index values it is filed under (many-to-many). */
export type IndexFunc<T extends KubeObject = KubeObject> = (obj: T) => string[];

/** Reflector state, for the UI and logs. */
export type ReflectorState =
  | { phase: 'idle' }
  /**
   * `watchList`: the initial state streams in as watch events (WatchList) instead of a LIST.
   * `stalled`: a WatchList stream that sent nothing for `sinceMs` (its initial events never began), with the error a
   * one-item LIST of the same resource gave (a diagnosis only: the informer keeps waiting for the stream, as
   * client-go does; e.g. a conversion webhook that is down fails the LIST with its reason, the stream in silence).
   */
  | { phase: 'listing'; resourceVersion: string; watchList?: boolean; stalled?: { sinceMs: number; listError: string } }
  | { phase: 'watching'; resourceVersion: string }
  /** `code`: the HTTP status of the failure behind the backoff (0: the server was not reached), when it had one. */
  | { phase: 'backoff'; reason: string; retryInMs: number; lastError: string; code?: number; resourceVersion: string }
  | { phase: 'stopped' };

/** The subset of a SharedIndexInformer that consumers (controller, UI) use. */
export interface SharedIndexInformer<T extends KubeObject = KubeObject> extends Disposable {
  readonly resource: ResourceInfo;
  /**
   * Adds a handler. Late handlers first receive a synthetic add (isInInitialList=true) for every cached object.
   * `resyncPeriodMs` (>= 1000, 0 = none) replays the cache to this handler as same-RV updates, on the informer's
   * resync check-period ticks (client-go; see SharedIndexInformer).
   */
  addEventHandler(handler: ResourceEventHandler<T>, options?: { resyncPeriodMs?: number }): HandlerRegistration;
  /** Adds index functions; allowed after start (existing objects are indexed at once). */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void;
  getIndexer(): IndexerReader<T>;
  hasSynced(): boolean;
  /** The resourceVersion last seen from the server (list, watch event or bookmark). */
  lastSyncResourceVersion(): string;
  readonly onDidChangeState: Event<ReflectorState>;
  readonly state: ReflectorState;
  /** Starts list+watch; idempotent. Resolves at once (does not wait for sync). */
  run(): void;
}

/** Options for one list or watch call. */
export interface ListOptions {
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  limit?: number;
  continue?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface WatchOptions {
  resourceVersion: string;
  allowWatchBookmarks?: boolean;
  /**
   * WatchList (streaming list): the server first sends the current state as
   * ADDED events, then a BOOKMARK annotated {@link INITIAL_EVENTS_END_ANNOTATION},
   * then the changes. Requires `resourceVersionMatch: 'NotOlderThan'`.
   */
  sendInitialEvents?: boolean;
  /** Only with `sendInitialEvents` (the server refuses it otherwise). */
  resourceVersionMatch?: 'NotOlderThan';
  timeoutSeconds?: number;
  labelSelector?: string;
  fieldSelector?: string;
}

export type WatchEvent<T extends KubeObject = KubeObject> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }
  | { type: 'BOOKMARK'; object: KubeObject }
  | { type: 'ERROR'; object: ApiStatus };

/**
 * Whether informers stream their initial list (WatchList) unless told
 * otherwise: client-go's `WatchListClient` feature gate default since 1.35
 * (Beta, on; off from 1.30 to 1.34).
 */
export const DEFAULT_WATCH_LIST = true;

/** The annotation of the BOOKMARK that ends a WatchList's initial events (metav1.InitialEventsAnnotationKey). */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** metav1.Status, as carried by watch ERROR events and failed requests. */
export interface ApiStatus {
  kind?: 'Status';
  apiVersion?: string;
  status?: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  code?: number;
  details?: unknown;
}

/**
 * The network seam of the informer (client-go ListerWatcher). One instance is
 * bound to one resource (and namespace / selectors). `watch` yields events
 * until the server closes the stream (the iterator ends) or `signal` aborts;
 * failures are thrown as errors carrying `code` (HTTP status) where known.
 * A stream that breaks mid-way with a probable EOF (reset, EOF, GOAWAY,
 * timeout) ends the iterator like a server close, as client-go's
 * StreamWatcher does: the reflector then re-watches from the last RV.
 */
export interface ListerWatcher<T extends KubeObject = KubeObject> {
  /**
   * True when `watch` cannot honour `sendInitialEvents` (client-go
   * watchlist.DoesClientNotSupportWatchListSemantics): the reflector then never tries WatchList
   * and lists instead. Absent or false: WatchList is attempted when enabled.
   */
  readonly watchListSemanticsUnsupported?: boolean;
  /**
   * One LIST call. `onItem`, when given, may be called by the implementation for each item as soon as that item is
   * parsed (while the answer is still arriving), exactly once per item and in list order; the returned list then
   * holds what `onItem` returned in that item's place. An implementation that parses the answer whole may ignore
   * it: the caller tells the items it prepared from those it did not (the informer marks what it prepared).
   * `managedFieldsBytes`, when given, lets an implementation that parses bytes skip managedFields values it has
   * seen before (items then hold shared, deeply frozen values of equal content; see ManagedFieldsByBytes); it may
   * be ignored.
   */
  list(options: ListOptions, signal: AbortSignal, onItem?: (item: T) => T, managedFieldsBytes?: ManagedFieldsByBytes): Promise<KubeList<T>>;
  /**
   * One WATCH. `managedFieldsBytes`, when given with `sendInitialEvents`, may be used as by `list` for the initial
   * events (up to the bookmark that ends them); it may be ignored.
   */
  watch(options: WatchOptions, signal: AbortSignal, managedFieldsBytes?: ManagedFieldsByBytes): AsyncIterable<WatchEvent<T>>;
}
