import { type Clock, realClock, type TimerHandle } from '../clock.ts';
import { Emitter, type Event } from '../event.ts';
import { nullLogger, type Logger } from '../log.ts';
import { keyOf, type ObjectKey } from '../k8s/keys.ts';
import { gvrToString, type KubeList, type KubeObject, type ResourceInfo } from '../k8s/objects.ts';
import type {
  DeletedFinalStateUnknown,
  HandlerRegistration,
  IndexerReader,
  IndexFunc,
  ListerWatcher,
  ReflectorState,
  ResourceEventHandler,
  SharedIndexInformer as SharedIndexInformerContract,
  WatchEvent,
} from './interfaces.ts';
import { INITIAL_EVENTS_END_ANNOTATION } from './interfaces.ts';
import { Indexer } from './indexer.ts';
import { ObjectCompactor } from './compact.ts';
import { ManagedFieldsByBytes } from '../k8s/managedFieldsBytes.ts';
import { type Notification, ProcessorListener } from './processorListener.ts';
import { DeliveryBudget } from './deliveryBudget.ts';
import { Reflector, type ReflectorStore } from './reflector.ts';

/**
 * Turns an object as received from the server into what the cache keeps.
 * Runs once per received object, before anything else sees it; it may
 * mutate its argument (which the informer owns) and must not throw. It is
 * not applied to tombstones or resyncs.
 */
export type TransformFunc<T extends KubeObject = KubeObject> = (obj: KubeObject) => T;

/**
 * The opt-in transform `dropManagedFields` selects (the default keeps objects
 * as received, as controller-runtime does): drops `metadata.managedFields`
 * (often a third of an object's size). It replaces `obj.metadata` with a copy that lacks the field
 * rather than deleting it: `delete` turns the object into a slow dictionary
 * whose extra size cancels the saving (measured in bench/informer.ts).
 */
export function stripManagedFields<T extends KubeObject = KubeObject>(obj: KubeObject): T {
  const md = obj.metadata;
  if (md && md.managedFields !== undefined) {
    const copy: Record<string, unknown> = {};
    for (const k in md) if (k !== 'managedFields') copy[k] = (md as Record<string, unknown>)[k];
    obj.metadata = copy as KubeObject['metadata'];
  }
  return obj as T;
}

export interface SharedIndexInformerOptions<T extends KubeObject = KubeObject> {
  /** The network seam, bound to this resource (and namespace / selectors). */
  listerWatcher: ListerWatcher<KubeObject>;
  resource: ResourceInfo;
  /** Default: the real clock. */
  clock?: Clock;
  /** Default: discards everything. */
  logger?: Logger;
  /**
   * Applied to every object received (list items, watch events, deletes), never
   * to tombstones or resyncs. Default (or `null`): none, objects are kept exactly
   * as received (controller-runtime's default). {@link stripManagedFields} drops
   * `managedFields`.
   */
  transform?: TransformFunc<T> | null;
  /** Index functions besides the always-present "namespace" index. */
  indexers?: Record<string, IndexFunc<T>>;
  /** Resync period for handlers that do not ask for their own (0 = none, the default; at least 1 s otherwise). */
  resyncPeriodMs?: number;
  /** Uniform [0, 1) source for watch timeouts and backoff jitter; default Math.random. */
  random?: () => number;
  /** List page size; default: the reflector's rules (500, paging only where client-go pages). */
  pageSize?: number;
  /**
   * Stream the initial state (WatchList: a watch with `sendInitialEvents`)
   * instead of LISTing it; default on, as client-go ≥ 1.35. Falls back to
   * LIST + WATCH when the server refuses. What handlers see is the same
   * either way: one replace at the end of the initial events.
   */
  watchList?: boolean;
  /**
   * Default true: cached objects share repeated values (strings such as apiVersion, namespace, owner UIDs and
   * timestamps; identical `managedFields[].fieldsV1` trees, deeply frozen) instead of holding a copy each.
   * Values read are unchanged; see {@link ObjectCompactor}. False keeps every object exactly as transformed.
   */
  shareRepeatedValues?: boolean;
  /**
   * The time event handlers may take per task of the event loop before their delivery continues in a later task
   * ({@link DeliveryBudget}; an InformerFactory shares one among its informers). Default: the informer's own, of
   * 10 ms. Order and `hasSynced` do not depend on it.
   */
  deliveryBudget?: DeliveryBudget;
}

/** A handler threw or rejected; the informer went on delivering. */
export interface HandlerErrorEvent {
  readonly error: unknown;
  readonly notification: Notification['kind'];
  readonly key: ObjectKey;
}

/** client-go minimumResyncPeriod. */
export const MINIMUM_RESYNC_PERIOD_MS = 1000;

interface ListenerEntry<T extends KubeObject> {
  listener: ProcessorListener<T>;
  /**
   * Whether same-RV updates (resyncs, unchanged objects of a relist) reach it (client-go `sharedProcessor.listeners`
   * value): true from its registration until the first resync tick, then whether that tick found it due.
   */
  syncing: boolean;
  /** When it is next due for a resync: its registration, then each resync it got, plus its period (clock ms). */
  nextResyncAt: number;
}

function tombstoneKeyOf(obj: KubeObject | DeletedFinalStateUnknown): ObjectKey {
  return (obj as DeletedFinalStateUnknown).kind === 'DeletedFinalStateUnknown' ? (obj as DeletedFinalStateUnknown).key : keyOf(obj as KubeObject);
}

/**
 * A shared informer with an indexed cache (client-go sharedIndexInformer,
 * with in-order delivery as in current client-go's RealFIFO).
 *
 * Guarantees:
 * - A handler is told about a change only after the cache and its indexes
 *   hold it. Per handler, notifications arrive in order, one at a time; a slow,
 *   throwing or rejecting handler delays only itself (errors go to the logger
 *   and {@link onDidHandlerError}).
 * - Handlers see cache transitions, not every server event: a delete plus
 *   re-create missed during a disconnect can arrive as one update (compare
 *   UIDs). `onUpdate(old, new)` always gets both states.
 * - A watch DELETED event is delivered even for an object the cache never
 *   held (client-go RealFIFO), with the event's object.
 * - A relist delivers, in this order: deletes (as {@link DeletedFinalStateUnknown}
 *   tombstones holding the last cached state) for cached objects the list
 *   lacks, then an update or add for every listed object, in list order.
 *   A listed object whose resourceVersion did not change arrives as an update
 *   with equal RVs, like a resync.
 * - `isInInitialList` is true for adds from the first list and for the
 *   synthetic adds a handler added later receives for every cached object.
 * - A resync replays the *cache* (never the server) to the handlers due for
 *   it as `onUpdate(obj, obj)`. As in client-go, due is checked on the
 *   informer's resync check-period ticks (the smallest period, see below),
 *   which run only while a watch is up (not during a relist or the backoff
 *   before one): a handler resyncs at the first tick at or after its last
 *   resync plus its period. An update whose old and new RV are equal — a
 *   resync, or an unchanged object of a relist — goes only to the handlers
 *   the last tick found due (to all of them until the first tick, so with no
 *   resync at all, to every handler).
 * - Stopping (dispose) is final: a stopped informer never restarts and
 *   refuses new handlers and indexers.
 *
 * Resync periods follow client-go: at least 1 s; before `run`, a handler
 * asking for less than the informer's check period lowers it; after `run` it
 * is raised to the check period. (Unlike client-go, a handler's period asked
 * before `run` is honoured even when the informer itself was built without
 * resync: it sets the check period. After `run`, as in client-go, an informer
 * without resync ignores it.)
 */
export class SharedIndexInformer<T extends KubeObject = KubeObject> implements SharedIndexInformerContract<T> {
  readonly resource: ResourceInfo;
  readonly onDidChangeState: Event<ReflectorState>;
  readonly onDidHandlerError: Event<HandlerErrorEvent>;

  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly transform: TransformFunc<T>;
  private readonly compactor: ObjectCompactor | undefined;
  /**
   * With sharing on and no transform (or {@link stripManagedFields}): lets the LIST parser put the compactor's shared
   * managedFields values in place of bytes it saw before instead of parsing them. (Any other transform would then
   * receive frozen shared values where it gets fresh ones without it, so it turns this off.) Its tables serve one
   * list, all its pages, and are emptied when the list ends; a WatchList's initial events likewise.
   */
  private readonly managedFieldsBytes: ManagedFieldsByBytes | undefined;
  /**
   * List items already made what the cache keeps, in the order they were prepared (see {@link preparingLists}):
   * started over when a list (or a WatchList stream) starts or fails, emptied by onReplace. When a page's items, and
   * then the list replaced, are exactly these objects in this order (what a streamed list gives), they are known
   * prepared by a comparison of references, without a lookup per object.
   */
  private preparedOrder: KubeObject[] = [];
  private readonly indexer: Indexer<T>;
  private readonly reflector: Reflector<KubeObject>;
  private readonly listeners = new Set<ListenerEntry<T>>();
  private readonly handlerErrors: Emitter<HandlerErrorEvent>;
  private readonly defaultResyncMs: number;
  private readonly budget: DeliveryBudget;
  private readonly ownsBudget: boolean;
  private resyncCheckPeriodMs: number;
  private synced = false;
  private started = false;
  private stopped = false;

  constructor(options: SharedIndexInformerOptions<T>) {
    this.resource = options.resource;
    this.clock = options.clock ?? realClock;
    this.log = (options.logger ?? nullLogger).child({ informer: gvrToString(options.resource) });
    this.transform = options.transform ?? ((o) => o as T);
    this.compactor = options.shareRepeatedValues === false ? undefined : new ObjectCompactor();
    this.managedFieldsBytes =
      this.compactor && (!options.transform || options.transform === stripManagedFields) ? new ManagedFieldsByBytes(this.compactor) : undefined;
    this.defaultResyncMs = clampResync(options.resyncPeriodMs ?? 0);
    this.ownsBudget = !options.deliveryBudget;
    this.budget = options.deliveryBudget ?? new DeliveryBudget(this.clock);
    // client-go: the check period is the informer's resync period as given; only handler periods are raised to the
    // 1 s minimum (a default below it applies clamped to every handler that takes it).
    this.resyncCheckPeriodMs = options.resyncPeriodMs !== undefined && options.resyncPeriodMs > 0 ? options.resyncPeriodMs : 0;
    this.indexer = new Indexer<T>(options.indexers ?? {}, (name, key, error) =>
      this.log.error('index function threw; object not indexed under it', { index: name, key, error: String(error) }),
    );
    this.handlerErrors = new Emitter<HandlerErrorEvent>((e) => this.log.error('handler-error listener threw', { error: String(e) }));
    this.onDidHandlerError = this.handlerErrors.event;
    const store: ReflectorStore<KubeObject> = {
      add: (o) => this.onAddOrUpdate(o),
      update: (o) => this.onAddOrUpdate(o),
      delete: (o) => this.onDelete(o),
      replace: (list, rv) => this.onReplace(list, rv),
      resync: () => this.resync(),
    };
    this.reflector = new Reflector<KubeObject>({
      listerWatcher: this.preparingLists(options.listerWatcher),
      store,
      clock: this.clock,
      logger: this.log,
      random: options.random,
      name: gvrToString(options.resource),
      pageSize: options.pageSize,
      watchList: options.watchList,
      resyncPeriodMs: () => this.resyncCheckPeriodMs,
      shouldResync: () => this.shouldResync(),
    });
    this.onDidChangeState = this.reflector.onDidChangeState;
  }

  get state(): ReflectorState {
    return this.reflector.state;
  }

  /** The last list/watch failure message, if any. */
  get lastError(): string | undefined {
    return this.reflector.lastError;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  get isStarted(): boolean {
    return this.started;
  }

  run(): void {
    if (this.stopped) {
      this.log.warn('run() on a stopped informer is ignored: a stopped informer never restarts');
      return;
    }
    if (this.started) return;
    this.started = true;
    this.reflector.run();
  }

  /** Resolves once the list/watch loop has ended after dispose. */
  whenStopped(): Promise<void> {
    return this.reflector.whenStopped();
  }

  dispose(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const entry of [...this.listeners]) entry.listener.dispose();
    this.listeners.clear();
    this.reflector.dispose();
    this.handlerErrors.dispose();
    if (this.ownsBudget) this.budget.dispose();
  }

  hasSynced(): boolean {
    return this.synced;
  }

  lastSyncResourceVersion(): string {
    return this.reflector.lastSyncResourceVersion();
  }

  getIndexer(): IndexerReader<T> {
    return this.indexer;
  }

  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    if (this.stopped) throw new Error('indexers cannot be added to a stopped informer');
    this.indexer.addIndexers(indexers);
  }

  addEventHandler(handler: ResourceEventHandler<T>, options: { resyncPeriodMs?: number } = {}): HandlerRegistration {
    if (this.stopped) throw new Error(`handler cannot be added to the stopped informer for ${gvrToString(this.resource)}`);
    let period = options.resyncPeriodMs === undefined ? this.defaultResyncMs : clampResync(options.resyncPeriodMs);
    if (period > 0 && period < this.resyncCheckPeriodMs) {
      if (this.started) {
        this.log.warn('resync period is smaller than the informer\'s check period and the informer has started; using the check period', {
          requestedMs: period,
          checkMs: this.resyncCheckPeriodMs,
        });
        period = this.resyncCheckPeriodMs;
      } else {
        this.resyncCheckPeriodMs = period;
      }
    } else if (period > 0 && this.resyncCheckPeriodMs === 0) {
      if (this.started) {
        this.log.warn('the informer started without resync: this handler\'s resync period is not applied', { requestedMs: period });
        period = 0;
      } else {
        this.resyncCheckPeriodMs = period;
      }
    }
    const entry: ListenerEntry<T> = { listener: undefined as unknown as ProcessorListener<T>, syncing: true, nextResyncAt: this.clock.now() + period };
    entry.listener = new ProcessorListener<T>({
      handler,
      resyncPeriodMs: period,
      budget: this.budget,
      upstreamHasSynced: () => this.synced,
      onHandlerError: (error, n) => this.reportHandlerError(error, n),
      onDispose: () => {
        this.listeners.delete(entry);
      },
    });
    this.listeners.add(entry);
    // A late handler first hears about everything already cached, before any later change
    // (JS runs this to completion, so no event can interleave: client-go's blockDeltas).
    for (const obj of this.indexer.entries()) entry.listener.add({ kind: 'add', obj: obj[1], isInInitialList: true });
    return entry.listener;
  }

  private reportHandlerError(error: unknown, n: Notification<T>): void {
    let key = '';
    try {
      key = tombstoneKeyOf(n.obj);
    } catch {
      // keep ''
    }
    this.log.error('event handler failed', { notification: n.kind, key, error: error instanceof Error ? error.message : String(error) });
    this.handlerErrors.fire({ error, notification: n.kind, key });
  }

  /**
   * A resync tick (client-go `sharedProcessor.shouldResync`): marks each handler due now as syncing and schedules its
   * next resync, every other as not syncing; true when one is due.
   */
  private shouldResync(): boolean {
    const now = this.clock.now();
    let due = false;
    for (const entry of this.listeners) {
      const period = entry.listener.resyncPeriodMs;
      entry.syncing = period > 0 && now >= entry.nextResyncAt;
      if (!entry.syncing) continue;
      due = true;
      entry.nextResyncAt = now + period;
    }
    return due;
  }

  /**
   * Replays the cache as same-RV updates, which {@link distribute} gives to the handlers the tick found due (client-go
   * `Resync` puts a Sync delta of the cached object for every key; this informer has no queued deltas to skip).
   */
  private resync(): void {
    if (this.stopped || !this.synced) return;
    for (const [, obj] of this.indexer.entries()) this.distribute({ kind: 'update', oldObj: obj, obj });
  }

  /** To every handler; an update with equal old and new RVs only to the syncing ones (client-go `distribute`). */
  private distribute(n: Notification<T>): void {
    const sync = n.kind === 'update' && (n.oldObj.metadata.resourceVersion ?? '') === (n.obj.metadata.resourceVersion ?? '');
    for (const entry of this.listeners) if (!sync || entry.syncing) entry.listener.add(n);
  }

  private applyTransform(raw: KubeObject): T {
    try {
      return this.transform(raw);
    } catch (e) {
      this.log.error('transform threw; keeping the object as received', { error: String(e) });
      return raw as T;
    }
  }

  /** What the cache keeps of a received object: transformed, then its repeated values shared ({@link ObjectCompactor}). */
  private toCached(raw: KubeObject): T {
    const obj = this.applyTransform(raw);
    if (!this.compactor) return obj;
    try {
      return this.compactor.compact(obj);
    } catch (e) {
      this.log.error('compaction threw; keeping the object as transformed', { error: String(e) });
      return obj;
    }
  }

  /**
   * The lister-watcher the reflector uses: each LIST item is made what the cache keeps ({@link toCached}) as
   * soon as it is parsed, while the rest of the answer streams in (KubeListerWatcher calls the `onItem` hook),
   * or, from a lister-watcher that ignores the hook, as the page arrives; either way this work overlaps the
   * transfer instead of running for the whole list after the last page. onReplace takes such items as they
   * are: the transform still runs once per object.
   */
  private preparingLists(lw: ListerWatcher<KubeObject>): ListerWatcher<KubeObject> {
    // Prepared items are also staged into the indexer, in list order, so that the replace at the end of the
    // list swaps in a store indexed while the list streamed instead of indexing everything then (Indexer.stage).
    const prepare = (raw: KubeObject): KubeObject => {
      if (this.stopped) return raw;
      const obj = this.toCached(raw);
      this.preparedOrder.push(obj);
      this.indexer.stage(obj);
      return obj;
    };
    return {
      get watchListSemanticsUnsupported() {
        return lw.watchListSemanticsUnsupported;
      },
      list: async (options, signal) => {
        if (!options.continue) {
          // A list starts (over).
          this.indexer.discardStaged();
          this.preparedOrder = [];
        }
        const from = this.preparedOrder.length;
        let page: KubeList<KubeObject>;
        try {
          page = await lw.list(options, signal, prepare, this.managedFieldsBytes);
        } catch (e) {
          this.indexer.discardStaged();
          this.preparedOrder = [];
          this.managedFieldsBytes?.clear();
          throw e;
        }
        if (!page.metadata?.continue) this.managedFieldsBytes?.clear(); // the list's last page
        const items = page.items;
        if (Array.isArray(items) && !this.stopped && !sameObjectsFrom(this.preparedOrder, from, items)) {
          // A lister-watcher that ignored the hook (or handed over only some items): prepare the others now.
          const done = new Set(this.preparedOrder.slice(from));
          for (let i = 0; i < items.length; i++) if (!done.has(items[i]!)) items[i] = prepare(items[i]!);
        }
        return page;
      },
      watch: (options, signal) =>
        options.sendInitialEvents ? this.preparingInitialEvents(lw.watch(options, signal, this.managedFieldsBytes), prepare) : lw.watch(options, signal),
    };
  }

  /**
   * A WatchList stream whose initial events' objects are made what the cache keeps as they arrive (the reflector
   * collects them and replaces the cache at the initial-events-end bookmark; onReplace then takes them as they
   * are), so that this work is spread over the stream instead of running for all of them in one go. Events after
   * the bookmark pass through unchanged: the informer prepares those when it stores them.
   */
  private async *preparingInitialEvents(
    events: AsyncIterable<WatchEvent<KubeObject>>,
    prepare: (raw: KubeObject) => KubeObject,
  ): AsyncGenerator<WatchEvent<KubeObject>> {
    let initial = true;
    this.indexer.discardStaged(); // a stream starts (over): nothing staged by an earlier attempt belongs to it
    this.preparedOrder = [];
    try {
      for await (const ev of events) {
        if (initial) {
          if ((ev.type === 'ADDED' || ev.type === 'MODIFIED') && ev.object && typeof ev.object === 'object' && ev.object.metadata?.name) {
            yield { ...ev, object: prepare(ev.object) };
            continue;
          }
          if (ev.type === 'BOOKMARK' && ev.object?.metadata?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true') {
            initial = false;
            this.managedFieldsBytes?.clear(); // its tables served the initial events (as a list's serve the list)
          }
        }
        yield ev;
      }
    } finally {
      if (initial) this.managedFieldsBytes?.clear();
    }
  }

  private onAddOrUpdate(raw: KubeObject): void {
    const obj = this.toCached(raw);
    const key = keyOf(obj);
    const old = this.indexer.getByKey(key);
    this.indexer.update(obj);
    if (old !== undefined) this.distribute({ kind: 'update', oldObj: old, obj });
    else this.distribute({ kind: 'add', obj, isInInitialList: !this.synced });
    this.synced = true;
  }

  private onDelete(raw: KubeObject): void {
    const obj = this.applyTransform(raw);
    // Delivered even when the cache never held the object, as client-go's RealFIFO (the default
    // since 1.33) does; only the old DeltaFIFO dropped such deletes as duplicate reports.
    this.indexer.deleteByKey(keyOf(obj));
    this.distribute({ kind: 'delete', obj });
    this.synced = true;
  }

  private onReplace(list: KubeObject[], rv: string): void {
    // Storing a whole list is work done in this task for the handlers: it counts against their slice, so that their
    // delivery starts in a later task rather than adding its slice to this one.
    const start = this.budget.now();
    try {
      this.replaceAll(list, rv);
    } finally {
      this.budget.charge(this.budget.now() - start);
    }
  }

  private replaceAll(list: KubeObject[], rv: string): void {
    const prepared = this.preparedOrder;
    this.preparedOrder = [];
    let items: T[];
    if (sameObjectsFrom(prepared, 0, list)) items = list as T[];
    else {
      const done = new Set(prepared);
      items = list.map((o) => (done.has(o) ? (o as T) : this.toCached(o)));
    }
    const previous = this.indexer.replace(items, rv);
    for (const [key, old] of previous) {
      if (this.indexer.getByKey(key) === undefined) {
        const tombstone: DeletedFinalStateUnknown<T> = { kind: 'DeletedFinalStateUnknown', key, obj: old };
        this.distribute({ kind: 'delete', obj: tombstone });
      }
    }
    const initial = !this.synced;
    const hadItems = previous.size > 0;
    for (const obj of items) {
      const old = hadItems ? previous.get(keyOf(obj)) : undefined;
      if (old !== undefined) this.distribute({ kind: 'update', oldObj: old, obj });
      else this.distribute({ kind: 'add', obj, isInInitialList: initial });
    }
    this.synced = true;
  }
}

/** Whether `list` holds exactly `prepared[from..]`, the same objects in the same order. */
function sameObjectsFrom(prepared: readonly KubeObject[], from: number, list: readonly KubeObject[]): boolean {
  if (prepared.length - from !== list.length) return false;
  for (let i = 0; i < list.length; i++) if (prepared[from + i] !== list[i]) return false;
  return true;
}

function clampResync(ms: number): number {
  if (!(ms > 0)) return 0;
  return Math.max(MINIMUM_RESYNC_PERIOD_MS, ms);
}
