import type { Clock, TimerHandle } from '../clock.ts';
import { Emitter, type Event } from '../event.ts';
import { BinaryHeap } from './heap.ts';
import type { QueueEvent, QueueGetResult, WorkQueueOptions } from './queue.ts';
import type { RateLimitingQueue } from './rateLimitingQueue.ts';
import { itemExponentialFailureRateLimiter, type RateLimiter } from './rateLimiters.ts';

/**
 * The priority of events that change nothing new: the informer's initial list and resyncs (same
 * resourceVersion on both sides). controller-runtime `handler.LowPriority`.
 */
export const LOW_PRIORITY = -100;

/** controller-runtime `priorityqueue.AddOpts`. */
export interface AddOptions {
  /** Ready after this many ms (0 or less: ready now). */
  afterMs?: number;
  /**
   * Ask the rate limiter for a delay (counts one failure); with a positive `afterMs` the shorter of the two wins. With
   * a negative `afterMs` the item is ready now (controller-runtime: only an unset or 0 `After` defers to the limiter).
   */
  rateLimited?: boolean;
  /** Higher is handed out first. Default 0. */
  priority?: number;
}

/**
 * A work queue that can hand out items by priority (controller-runtime
 * `priorityqueue.PriorityQueue`), implemented by both queue kinds: the
 * priority queue honours `priority`; client-go's rate-limited queue maps
 * `addWithOpts` onto `addRateLimited` / `addAfter` / `add` and ignores it (as
 * controller-runtime's `priorityQueueWrapper` does).
 */
export interface PriorityAddQueue<T> extends RateLimitingQueue<T> {
  /** Which implementation this is. */
  readonly kind: WorkQueueKind;
  addWithOpts(options: AddOptions, ...items: T[]): void;
  /** The priority of the pending entry of `item` (ready or waiting); undefined when it has none or the queue has no priorities. */
  priorityOf(item: T): number | undefined;
  /** The priority `item` was handed out with while it is processing (controller-runtime `GetWithPriority`); 0 without priorities. */
  processingPriority(item: T): number;
}

/** The two work queues a controller can run on. */
export type WorkQueueKind = 'priority' | 'client-go';
export const WORK_QUEUE_KINDS: readonly WorkQueueKind[] = ['priority', 'client-go'];

interface Entry<T> {
  readonly key: T;
  priority: number;
  /** FIFO order within a priority: bumped when the entry becomes ready or its priority rises. */
  seq: number;
  /** Set while waiting; undefined once ready. */
  readyAt: number | undefined;
  /** Position in the heap holding it (ready or waiting); -1 when in none (ready but its key is locked). */
  index: number;
}

interface Waiter {
  wake(): void;
}

const SHUTDOWN: QueueGetResult<never> = Object.freeze({ shutdown: true });
/** Longest single timer (setTimeout's limit); longer waits re-arm on expiry. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const lessReady = <T>(a: Entry<T>, b: Entry<T>) => (a.priority !== b.priority ? a.priority > b.priority : a.seq < b.seq);
const lessWaiting = <T>(a: Entry<T>, b: Entry<T>) => (a.readyAt !== b.readyAt ? a.readyAt! < b.readyAt! : lessReady(a, b));

export interface PriorityQueueOptions<T> extends WorkQueueOptions {
  clock: Clock;
  /** Default: per-item exponential 5 ms → 1000 s alone (controller-runtime's default for this queue). */
  rateLimiter?: RateLimiter<T>;
}

/**
 * controller-runtime's priority queue (`pkg/controller/priorityqueue`, the
 * default queue of its controllers since v0.23), on an injected clock.
 *
 * Every item has at most ONE pending entry, either **ready** or **waiting**
 * (until a ready time), plus a priority:
 * - `add` of a new item: ready; of a waiting item: it becomes ready at once and
 *   its wait is dropped; of a ready item: nothing, except that a higher priority is kept;
 * - `addAfter(x, d > 0)`: a new item waits `d`; a waiting item keeps the
 *   earlier of its two ready times; a **ready item stays ready** (a no-op);
 * - re-adding keeps the **highest** priority; an entry raised to a higher
 *   priority goes to the back of that priority's line;
 * - ready items are handed out by priority (higher first), then by their
 *   place in line: the place of the item's first add (kept when a later add
 *   makes a waiting item ready at once), a new place at the back when its
 *   wait elapses or a re-add raises its priority (controller-runtime's
 *   AddedCounter);
 * - `addRateLimited(x)` waits the rate limiter's delay (counting one failure);
 *   with both `afterMs > 0` and `rateLimited`, the shorter delay wins (a negative `afterMs`: ready now);
 * - an item handed out (`get`, `tryGet`, `take`) is **locked** until `done`:
 *   it is never handed out twice at once. Adds meanwhile create a new entry,
 *   which is handed out only after `done` (as client-go's dirty rule);
 * - `len()` counts ready entries, including one re-added while its key is
 *   processing (handed out after `done`), as controller-runtime's `Len()`
 *   (its ready tree holds them too); waiting entries are not counted;
 * - `shutDown()`: `get` resolves `{shutdown: true}` at once, even with items
 *   left (controller-runtime does not drain); `shutDownWithDrain()` is `shutDown()`.
 *
 * Obligation (as {@link WorkQueue}): every item handed out MUST be passed to `done` exactly once.
 */
export class PriorityWorkQueue<T> implements PriorityAddQueue<T> {
  readonly kind: WorkQueueKind = 'priority';
  readonly name: string;
  private readonly clock: Clock;
  private readonly limiter: RateLimiter<T>;
  /** The pending entry of every item that has one. */
  private readonly entries = new Map<T, Entry<T>>();
  /** Ready entries whose key is not locked. */
  private readonly ready = new BinaryHeap<Entry<T>>(lessReady, (e, i) => { e.index = i; });
  private readonly waiting = new BinaryHeap<Entry<T>>(lessWaiting, (e, i) => { e.index = i; });
  /** Items handed out and not yet done, with the priority they were handed out with. */
  private readonly locked = new Map<T, number>();
  private seq = 0;
  private waiters: Waiter[] = [];
  private shutting = false;
  private timer: TimerHandle | undefined;
  private timerAt = 0;
  private readonly emitter = new Emitter<QueueEvent<T>>();
  readonly onDidChange: Event<QueueEvent<T>> = this.emitter.event;

  constructor(options: PriorityQueueOptions<T>) {
    this.name = options.name ?? 'queue';
    this.clock = options.clock;
    this.limiter = options.rateLimiter ?? itemExponentialFailureRateLimiter<T>(5, 1_000_000);
  }

  add(item: T): void {
    this.addWithOpts({}, item);
  }

  addAfter(item: T, delayMs: number): void {
    this.addWithOpts({ afterMs: delayMs }, item);
  }

  addRateLimited(item: T): void {
    this.addWithOpts({ rateLimited: true }, item);
  }

  addWithOpts(options: AddOptions, ...items: T[]): void {
    if (this.shutting) return;
    const priority = options.priority ?? 0;
    let rearm = false;
    for (const key of items) {
      // As controller-runtime: only an unset (0) afterMs defers to the limiter; a negative one stays "now" even when
      // rate-limited (the limiter still counts the failure).
      let after = options.afterMs === undefined || Number.isNaN(options.afterMs) ? 0 : options.afterMs;
      if (options.rateLimited) {
        const rl = this.limiter.when(key);
        if (after === 0 || rl < after) after = rl;
      }
      const readyAt = after > 0 ? this.clock.now() + after : undefined;
      const e = this.entries.get(key);
      if (!e) {
        const entry: Entry<T> = { key, priority, seq: this.seq++, readyAt, index: -1 };
        this.entries.set(key, entry);
        if (readyAt !== undefined) {
          this.waiting.push(entry);
          this.fire({ type: 'wait', item: key, readyAt, priority });
          rearm = true;
        } else {
          this.makeReady(entry);
        }
        continue;
      }
      const raised = priority > e.priority;
      if (raised) {
        e.priority = priority;
        e.seq = this.seq++;
      }
      if (e.readyAt === undefined) {
        // Already ready: stays ready (an addAfter is a no-op); only a higher priority moves it.
        if (raised) {
          if (e.index >= 0) this.ready.fix(e.index);
          this.fire({ type: 'priority', item: key, priority: e.priority });
        }
      } else if (readyAt === undefined) {
        // Waiting, added now: ready at once, the wait dropped.
        this.waiting.removeAt(e.index);
        e.index = -1;
        e.readyAt = undefined;
        this.fire({ type: 'cancelWait', item: key });
        this.makeReady(e);
        rearm = true;
      } else if (readyAt < e.readyAt) {
        e.readyAt = readyAt;
        this.waiting.fix(e.index);
        this.fire({ type: 'wait', item: key, readyAt, priority: e.priority });
        rearm = true;
      } else if (raised) {
        this.waiting.fix(e.index);
        this.fire({ type: 'priority', item: key, priority: e.priority });
      }
    }
    if (rearm) this.arm();
  }

  get(signal?: AbortSignal): Promise<QueueGetResult<T>> {
    if (!this.shutting && this.ready.size > 0 && !signal?.aborted) return Promise.resolve({ item: this.tryGet() as T, shutdown: false });
    return this.getSlow(signal);
  }

  private async getSlow(signal: AbortSignal | undefined): Promise<QueueGetResult<T>> {
    for (;;) {
      if (signal?.aborted) {
        if (this.ready.size > 0) this.wakeOne();
        throw signal.reason;
      }
      if (this.shutting) return SHUTDOWN;
      if (this.ready.size > 0) return { item: this.tryGet() as T, shutdown: false };
      await this.waitForWork(signal);
    }
  }

  tryGet(): T | undefined {
    const e = this.ready.pop();
    if (!e) return undefined;
    this.handOut(e);
    return e.key;
  }

  take(item: T): boolean {
    const e = this.entries.get(item);
    if (!e || e.readyAt !== undefined || this.locked.has(item) || e.index < 0) return false;
    this.ready.removeAt(e.index);
    this.handOut(e);
    return true;
  }

  done(item: T): void {
    if (!this.locked.delete(item)) return;
    const e = this.entries.get(item);
    const requeued = e !== undefined && e.readyAt === undefined;
    if (requeued) this.ready.push(e);
    this.fire({ type: 'done', item, requeued });
    if (requeued) this.wakeOne();
  }

  len(): number {
    // The heap holds the ready entries of unlocked keys; a ready entry of a locked key is parked outside it. Locked
    // keys are at most one per worker, so counting them here is cheap.
    let parked = 0;
    for (const k of this.locked.keys()) {
      const e = this.entries.get(k);
      if (e !== undefined && e.readyAt === undefined) parked++;
    }
    return this.ready.size + parked;
  }

  queuedItems(limit?: number): T[] {
    // The head of a long queue (a view of the first few hundred of 10,000 keys) without sorting all of it.
    if (limit !== undefined && limit < this.ready.size) return this.ready.smallest(limit).map((e) => e.key);
    return this.sorted(this.ready, lessReady).map((e) => e.key);
  }

  isProcessing(item: T): boolean {
    return this.locked.has(item);
  }

  isDirty(item: T): boolean {
    const e = this.entries.get(item);
    return e !== undefined && e.readyAt === undefined;
  }

  priorityOf(item: T): number | undefined {
    return this.entries.get(item)?.priority;
  }

  processingPriority(item: T): number {
    return this.locked.get(item) ?? 0;
  }

  waitingUntil(item: T): number | undefined {
    return this.entries.get(item)?.readyAt;
  }

  nextWaiting(): { item: T; readyAt: number } | undefined {
    const top = this.waiting.peek();
    return top && { item: top.key, readyAt: top.readyAt! };
  }

  waitingItems(): Array<{ item: T; readyAt: number }> {
    return this.sorted(this.waiting, lessWaiting).map((e) => ({ item: e.key, readyAt: e.readyAt! }));
  }

  waitingLen(): number {
    return this.waiting.size;
  }

  cancelWait(item: T): boolean {
    const e = this.entries.get(item);
    if (!e || e.readyAt === undefined) return false;
    this.waiting.removeAt(e.index);
    this.entries.delete(item);
    this.fire({ type: 'cancelWait', item });
    this.arm();
    return true;
  }

  forget(item: T): void {
    this.limiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.limiter.numRequeues(item);
  }

  shutDown(): void {
    if (this.shutting) return;
    this.shutting = true;
    this.disarm();
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.wake();
    this.fire({ type: 'shutdown' });
  }

  /** controller-runtime: the same as `shutDown()` (no drain). */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    return Promise.resolve();
  }

  shuttingDown(): boolean {
    return this.shutting;
  }

  dispose(): void {
    this.shutDown();
    this.emitter.dispose();
  }

  private fire(e: QueueEvent<T>): void {
    if (this.emitter.hasListeners) this.emitter.fire(e);
  }

  /** A ready entry: in the heap, or parked (index -1) while its key is locked. */
  private makeReady(e: Entry<T>): void {
    const locked = this.locked.has(e.key);
    if (!locked) this.ready.push(e);
    this.fire({ type: 'add', item: e.key, queued: !locked, priority: e.priority });
    if (!locked) this.wakeOne();
  }

  private handOut(e: Entry<T>): void {
    e.index = -1;
    this.entries.delete(e.key);
    this.locked.set(e.key, e.priority);
    this.fire({ type: 'get', item: e.key, priority: e.priority });
  }

  private sorted(heap: BinaryHeap<Entry<T>>, less: (a: Entry<T>, b: Entry<T>) => boolean): Entry<T>[] {
    const all: Entry<T>[] = [];
    for (const e of this.entries.values()) if (e.index >= 0 && (heap === this.waiting) === (e.readyAt !== undefined)) all.push(e);
    return all.sort((a, b) => (less(a, b) ? -1 : less(b, a) ? 1 : 0));
  }

  /** Keeps exactly one timer, due when the earliest wait ends. */
  private arm(): void {
    if (this.shutting) return;
    const top = this.waiting.peek();
    if (!top) {
      this.disarm();
      return;
    }
    if (this.timer !== undefined && this.timerAt === top.readyAt) return;
    this.disarm();
    this.timerAt = top.readyAt!;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, top.readyAt! - this.clock.now()));
    this.timer = this.clock.setTimeout(() => this.onTimer(), delay);
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private onTimer(): void {
    this.timer = undefined;
    const now = this.clock.now();
    for (let top = this.waiting.peek(); top && top.readyAt! <= now; top = this.waiting.peek()) {
      this.waiting.pop();
      top.index = -1;
      top.readyAt = undefined;
      // Ordered by when it became ready, not when it was first added (controller-runtime).
      top.seq = this.seq++;
      this.fire({ type: 'ready', item: top.key });
      this.makeReady(top);
    }
    this.arm();
  }

  private wakeOne(): void {
    this.waiters.shift()?.wake();
  }

  private waitForWork(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        wake: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** A new controller-runtime priority queue on `options.clock`. Dispose it to cancel its timer. */
export function createPriorityQueue<T>(options: PriorityQueueOptions<T>): PriorityWorkQueue<T> {
  return new PriorityWorkQueue<T>(options);
}
