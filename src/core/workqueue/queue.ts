import { Emitter, type Event } from '../event.ts';
import type { Disposable } from '../lifecycle.ts';

/**
 * The work queue (client-go `util/workqueue` `Interface`), with its package
 * promises:
 * - **fair**: items are handed out in the order they were added (FIFO);
 * - **stingy**: an item is never handed out while it is being processed, and
 *   N adds of an item before a `get` produce one processing;
 * - an item added again while it is being processed is queued again (once)
 *   when its processing ends with `done`;
 * - any number of producers and consumers; `shutDown` wakes every consumer.
 *
 * Obligation: every item obtained from `get`, `tryGet` or `take` MUST be
 * passed to `done` exactly once when its processing ends (typically in a
 * `finally`), or it is never handed out again and `shutDownWithDrain` never
 * resolves.
 *
 * Items are compared by identity (`Set` semantics): use strings (object keys);
 * `undefined` is not a valid item.
 */
export interface WorkQueue<T> extends Disposable {
  /** Marks `item` as needing processing. Ignored while shutting down; a no-op when already queued. */
  add(item: T): void;
  /**
   * Waits for the next item. Resolves `{shutdown: true}` only when the queue
   * is shutting down AND empty, so consumers drain what was queued. Rejects
   * with the signal's reason when `signal` aborts first, without taking an item.
   */
  get(signal?: AbortSignal): Promise<QueueGetResult<T>>;
  /** The next item at once, or undefined when none is queued. Same obligation as `get`. */
  tryGet(): T | undefined;
  /**
   * Hands out one specific queued item out of FIFO order (the debugger's
   * "step this key"). Returns false, taking nothing, unless `item` is queued
   * (dirty and not being processed). Same obligation as `get`.
   */
  take(item: T): boolean;
  /** Ends the processing of `item`; if it was added again meanwhile, it is queued again. */
  done(item: T): void;
  /** Number of items waiting to be handed out (excludes items being processed). Informational only. */
  len(): number;
  /** The waiting items, in the order they will be handed out (only the first `limit` of them, when given). */
  queuedItems(limit?: number): T[];
  /** True while `item` is handed out and not yet `done`. */
  isProcessing(item: T): boolean;
  /** True when `item` needs processing: queued, or added again while processing. */
  isDirty(item: T): boolean;
  /** Stops accepting items and wakes every waiting consumer. Idempotent. */
  shutDown(): void;
  /**
   * Like `shutDown`, then resolves once no item is being processed. A later
   * `shutDown()` call ends the wait early.
   */
  shutDownWithDrain(): Promise<void>;
  shuttingDown(): boolean;
  /** Every state transition, synchronously, in order (for the per-key state view and the journal). */
  readonly onDidChange: Event<QueueEvent<T>>;
}

export type QueueGetResult<T> = { item: T; shutdown: false } | { shutdown: true };

/**
 * A transition of one item:
 * - `add`: the item became dirty; `queued` is false when it is being processed and waits for `done`;
 *   `priority` (priority queue only) is the priority of its entry;
 * - `get`: handed out for processing (with its `priority`, priority queue only);
 * - `done`: processing ended; `requeued` when it was added meanwhile and is queued again;
 * - `wait`: (delaying queue) scheduled to be added at `readyAt` (new, or moved earlier);
 * - `ready`: (delaying queue) its wait elapsed; an `add` follows;
 * - `cancelWait`: (delaying queue) its pending wait was cancelled (the priority queue also
 *   drops a wait this way when the item is added for now);
 * - `priority`: (priority queue) the pending entry was raised to a higher priority;
 * - `shutdown`: the queue stopped accepting items.
 */
export type QueueEvent<T> =
  | { type: 'add'; item: T; queued: boolean; priority?: number }
  | { type: 'get'; item: T; priority?: number }
  | { type: 'done'; item: T; requeued: boolean }
  | { type: 'wait'; item: T; readyAt: number; priority?: number }
  | { type: 'priority'; item: T; priority: number }
  | { type: 'ready'; item: T }
  | { type: 'cancelWait'; item: T }
  | { type: 'shutdown' };

export interface WorkQueueOptions {
  /** Shown in logs and the UI. */
  name?: string;
}

interface Waiter {
  wake(): void;
}

const SHUTDOWN: QueueGetResult<never> = Object.freeze({ shutdown: true });

/**
 * The dirty + processing implementation. Exported for the layers built on it
 * (delaying, rate limiting); consumers use {@link createWorkQueue}.
 */
export class FifoWorkQueue<T> implements WorkQueue<T> {
  readonly name: string;
  /** Waiting items from index `head` on. Every one is in `dirty` and not in `processing`. */
  private fifo: T[] = [];
  private head = 0;
  /** Items that need processing: every queued item, plus items added again while processing. */
  private readonly dirty = new Set<T>();
  /** Items handed out and not yet `done`. Disjoint from the queued items. */
  private readonly processing = new Set<T>();
  /** Consumers blocked in `get`. Non-empty only while the FIFO is empty (transiently: a woken waiter not yet run). */
  private waiters: Waiter[] = [];
  private drainWaiters: Array<() => void> = [];
  private shutting = false;
  protected readonly emitter = new Emitter<QueueEvent<T>>();
  readonly onDidChange: Event<QueueEvent<T>> = this.emitter.event;

  constructor(options: WorkQueueOptions = {}) {
    this.name = options.name ?? 'queue';
  }

  add(item: T): void {
    if (this.shutting) return;
    if (this.dirty.has(item)) return;
    this.dirty.add(item);
    if (this.processing.has(item)) {
      if (this.emitter.hasListeners) this.emitter.fire({ type: 'add', item, queued: false });
      return;
    }
    this.fifo.push(item);
    if (this.emitter.hasListeners) this.emitter.fire({ type: 'add', item, queued: true });
    this.wakeOne();
  }

  get(signal?: AbortSignal): Promise<QueueGetResult<T>> {
    // Fast path without an async frame: an item is ready.
    if (this.len() > 0 && !signal?.aborted) return Promise.resolve({ item: this.tryGet() as T, shutdown: false });
    return this.getSlow(signal);
  }

  private async getSlow(signal: AbortSignal | undefined): Promise<QueueGetResult<T>> {
    for (;;) {
      if (signal?.aborted) {
        // We may have been woken for an item we will not take: pass the wake-up on.
        if (this.len() > 0) this.wakeOne();
        throw signal.reason;
      }
      if (this.len() > 0) return { item: this.tryGet() as T, shutdown: false };
      if (this.shutting) return SHUTDOWN;
      await this.waitForWork(signal);
    }
  }

  tryGet(): T | undefined {
    if (this.head >= this.fifo.length) return undefined;
    const item = this.fifo[this.head]!;
    this.fifo[this.head] = undefined as T;
    this.head++;
    if (this.head >= 1024 && this.head * 2 >= this.fifo.length) {
      this.fifo = this.fifo.slice(this.head);
      this.head = 0;
    }
    this.handOut(item);
    return item;
  }

  take(item: T): boolean {
    if (!this.dirty.has(item) || this.processing.has(item)) return false;
    const i = this.fifo.indexOf(item, this.head);
    if (i < 0) return false;
    this.fifo.splice(i, 1);
    this.handOut(item);
    return true;
  }

  done(item: T): void {
    if (!this.processing.delete(item)) return;
    const requeued = this.dirty.has(item);
    if (requeued) this.fifo.push(item);
    if (this.emitter.hasListeners) this.emitter.fire({ type: 'done', item, requeued });
    if (requeued) this.wakeOne();
    if (this.processing.size === 0) this.releaseDrainWaiters();
  }

  len(): number {
    return this.fifo.length - this.head;
  }

  queuedItems(limit?: number): T[] {
    return limit === undefined ? this.fifo.slice(this.head) : this.fifo.slice(this.head, this.head + Math.max(0, limit));
  }

  isProcessing(item: T): boolean {
    return this.processing.has(item);
  }

  isDirty(item: T): boolean {
    return this.dirty.has(item);
  }

  shutDown(): void {
    this.beginShutdown();
    this.releaseDrainWaiters();
  }

  shutDownWithDrain(): Promise<void> {
    this.beginShutdown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  shuttingDown(): boolean {
    return this.shutting;
  }

  dispose(): void {
    this.shutDown();
    this.emitter.dispose();
  }

  private beginShutdown(): void {
    if (this.shutting) return;
    this.shutting = true;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.wake();
    if (this.emitter.hasListeners) this.emitter.fire({ type: 'shutdown' });
  }

  private handOut(item: T): void {
    this.processing.add(item);
    this.dirty.delete(item);
    if (this.emitter.hasListeners) this.emitter.fire({ type: 'get', item });
  }

  private wakeOne(): void {
    const w = this.waiters.shift();
    w?.wake();
  }

  private releaseDrainWaiters(): void {
    const ws = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of ws) w();
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

/** A new work queue. Dispose it (or shut it down) when its consumers stop. */
export function createWorkQueue<T>(options: WorkQueueOptions = {}): WorkQueue<T> {
  return new FifoWorkQueue<T>(options);
}
