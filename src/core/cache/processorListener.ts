import type { KubeObject } from '../k8s/objects.ts';
import type { DeliveryBudget } from './deliveryBudget.ts';
import type { DeletedFinalStateUnknown, HandlerRegistration, ResourceEventHandler } from './interfaces.ts';

/** One notification for one handler. `update` with `oldObj === newObj` (same RV) is a resync. */
export type Notification<T extends KubeObject = KubeObject> =
  | { readonly kind: 'add'; readonly obj: T; readonly isInInitialList: boolean }
  | { readonly kind: 'update'; readonly oldObj: T; readonly obj: T }
  | { readonly kind: 'delete'; readonly obj: T | DeletedFinalStateUnknown<T> };

export interface ProcessorListenerOptions<T extends KubeObject> {
  handler: ResourceEventHandler<T>;
  /** The informer's own HasSynced: the registration is synced only after it. */
  upstreamHasSynced: () => boolean;
  /** Receives every exception or rejection of the handler; delivery goes on with the next notification. */
  onHandlerError: (error: unknown, notification: Notification<T>) => void;
  /** Called once when the registration is disposed (the informer forgets the listener). */
  onDispose: () => void;
  /** The resync period this handler asked for, after clamping (0 = none). */
  resyncPeriodMs: number;
  /**
   * The time delivery may take per task of the event loop, shared with the informer's other listeners: once it is
   * spent, delivery goes on in a later task. Owned by the informer (or its factory).
   */
  budget: DeliveryBudget;
}

const COMPACT_AT = 1024;

/**
 * One handler's delivery line (client-go processorListener): an unbounded
 * FIFO buffer drained by its own asynchronous loop.
 *
 * Invariants:
 * - notifications reach the handler one at a time, in the order they were
 *   added; a handler returning a promise is awaited before the next call;
 * - `add` never calls the handler synchronously, so neither the reflector
 *   nor other handlers wait for this one; a slow handler only grows its own
 *   buffer;
 * - delivery runs in slices: once the task's {@link DeliveryBudget} is
 *   spent (the handler's time is charged to it), the listener continues
 *   with the next notification in a later task, so
 *   thousands of buffered notifications (an initial list, a burst) never hold
 *   the event loop for long; the order is unchanged and `hasSynced` stays
 *   false until the last initial-list add has been handled;
 * - a throwing or rejecting handler is reported and the next notification
 *   is delivered;
 * - after `dispose` nothing more is delivered, the buffer is dropped and a
 *   scheduled slice is cancelled.
 */
export class ProcessorListener<T extends KubeObject = KubeObject> implements HandlerRegistration {
  readonly resyncPeriodMs: number;
  private readonly handler: ResourceEventHandler<T>;
  private readonly upstreamHasSynced: () => boolean;
  private readonly onHandlerError: (error: unknown, notification: Notification<T>) => void;
  private readonly onDispose: () => void;
  private readonly budget: DeliveryBudget;
  /** Cancels the next slice, while delivery waits for it. */
  private cancelNextSlice: (() => void) | undefined;
  private buffer: Array<Notification<T> | undefined> = [];
  private head = 0;
  private draining = false;
  private disposed = false;
  /** Initial-list adds added but not yet handled (client-go SingleFileTracker count). */
  private pendingInitial = 0;
  private delivered = 0;

  constructor(options: ProcessorListenerOptions<T>) {
    this.handler = options.handler;
    this.upstreamHasSynced = options.upstreamHasSynced;
    this.onHandlerError = options.onHandlerError;
    this.onDispose = options.onDispose;
    this.resyncPeriodMs = options.resyncPeriodMs;
    this.budget = options.budget;
  }

  /** True once the informer has synced and this handler has handled every initial-list add it was given. */
  hasSynced(): boolean {
    return this.upstreamHasSynced() && this.pendingInitial === 0;
  }

  /** Notifications waiting for the handler (for views and tests). */
  get pending(): number {
    return this.buffer.length - this.head;
  }

  /** Slices delivery has been cut into so far (tests and benchmarks: one per task that handled notifications). */
  slices = 0;

  /** Notifications handled so far (including ones that threw). */
  get deliveredCount(): number {
    return this.delivered;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Queues a notification; the handler sees it later, after everything queued before it. */
  add(n: Notification<T>): void {
    if (this.disposed) return;
    if (n.kind === 'add' && n.isInInitialList) this.pendingInitial++;
    this.buffer.push(n);
    if (!this.draining) {
      this.draining = true;
      queueMicrotask(() => void this.drain());
    }
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.buffer = [];
    this.head = 0;
    this.cancelNextSlice?.();
    this.cancelNextSlice = undefined;
    this.onDispose();
  }

  /**
   * Delivers buffered notifications until the buffer is empty or the budget of this task is spent; in the latter
   * case the rest is left for the next slice (a later task), with `draining` still set so that `add` does not start
   * a second loop beside it. Every deferred slice handles at least one notification (it may start in a task whose
   * budget other listeners spent), so that every listener makes progress.
   */
  private async drain(continued = false): Promise<void> {
    let yielded = false;
    try {
      // A loop started by `add` in a task whose budget is spent (watch events handled one by one as a chunk of the
      // stream is read) waits for a later task; a deferred slice handles at least one notification: progress.
      if (!continued && this.budget.spent()) {
        yielded = true;
        this.deferSlice();
        return;
      }
      this.slices++;
      let last = this.budget.now();
      while (!this.disposed && this.head < this.buffer.length) {
        const n = this.buffer[this.head]!;
        this.buffer[this.head++] = undefined;
        try {
          const r = this.call(n);
          if (r !== undefined && typeof (r as Promise<void>).then === 'function') await r;
        } catch (e) {
          if (!this.disposed) this.onHandlerError(e, n);
        } finally {
          this.delivered++;
          if (n.kind === 'add' && n.isInInitialList) this.pendingInitial--;
        }
        if (this.head >= COMPACT_AT && this.head * 2 >= this.buffer.length) {
          this.buffer = this.buffer.slice(this.head);
          this.head = 0;
        }
        const now = this.budget.now();
        this.budget.charge(now - last);
        last = now;
        if (!this.disposed && this.head < this.buffer.length && this.budget.spent()) {
          yielded = true;
          this.deferSlice();
          return;
        }
      }
      if (this.head === this.buffer.length) {
        this.buffer.length = 0;
        this.head = 0;
      }
    } finally {
      if (!yielded) this.draining = false;
    }
  }

  private deferSlice(): void {
    this.cancelNextSlice = this.budget.defer(() => {
      this.cancelNextSlice = undefined;
      if (this.disposed) {
        this.draining = false;
        return;
      }
      void this.drain(true);
    });
  }

  private call(n: Notification<T>): void | Promise<void> {
    const h = this.handler;
    switch (n.kind) {
      case 'add':
        return h.onAdd?.(n.obj, n.isInInitialList);
      case 'update':
        return h.onUpdate?.(n.oldObj, n.obj);
      case 'delete':
        return h.onDelete?.(n.obj);
    }
  }
}
