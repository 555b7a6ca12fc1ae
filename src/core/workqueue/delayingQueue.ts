import type { Clock, TimerHandle } from '../clock.ts';
import { BinaryHeap } from './heap.ts';
import { FifoWorkQueue, type WorkQueue, type WorkQueueOptions } from './queue.ts';

/**
 * A work queue that can add an item later (client-go `DelayingInterface`).
 *
 * Rules:
 * - `addAfter(x, ms)` with `ms <= 0` is `add(x)`; while shutting down it is ignored;
 * - an item has at most one pending wait, and its ready time only ever moves
 *   **earlier**: a later `addAfter` never postpones it;
 * - when the ready time passes the item is `add`ed, so the dirty/processing
 *   rules of {@link WorkQueue} apply (a pending wait is not cancelled by a
 *   plain `add` or by processing, as in client-go);
 * - shutting down drops every pending wait and its timer.
 *
 * Extensions for the debugger (not in client-go): inspecting and cancelling waits.
 */
export interface DelayingQueue<T> extends WorkQueue<T> {
  addAfter(item: T, delayMs: number): void;
  /** When the pending wait of `item` ends (clock ms), or undefined when it has none. */
  waitingUntil(item: T): number | undefined;
  /** The wait that ends first. */
  nextWaiting(): { item: T; readyAt: number } | undefined;
  /** Every pending wait, soonest first. */
  waitingItems(): Array<{ item: T; readyAt: number }>;
  /** Number of pending waits. */
  waitingLen(): number;
  /** Drops the pending wait of `item` (it is not added). Returns whether there was one. */
  cancelWait(item: T): boolean;
}

export interface DelayingQueueOptions extends WorkQueueOptions {
  clock: Clock;
}

interface WaitEntry<T> {
  readonly item: T;
  readyAt: number;
  /** Insertion order: equal ready times are added in the order they were scheduled. */
  readonly seq: number;
  index: number;
}

/** Longest single timer (setTimeout's limit); longer waits re-arm on expiry. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Exported for the rate-limiting layer; consumers use {@link createDelayingQueue}. */
export class HeapDelayingQueue<T> extends FifoWorkQueue<T> implements DelayingQueue<T> {
  protected readonly clock: Clock;
  private readonly waiting = new Map<T, WaitEntry<T>>();
  private readonly heap = new BinaryHeap<WaitEntry<T>>(
    (a, b) => a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq),
    (e, i) => { e.index = i; },
  );
  private seq = 0;
  private timer: TimerHandle | undefined;
  private timerAt = 0;

  constructor(options: DelayingQueueOptions) {
    super(options);
    this.clock = options.clock;
  }

  addAfter(item: T, delayMs: number): void {
    if (this.shuttingDown()) return;
    if (!(delayMs > 0)) {
      this.add(item);
      return;
    }
    const readyAt = this.clock.now() + delayMs;
    const existing = this.waiting.get(item);
    if (existing) {
      if (readyAt >= existing.readyAt) return;
      existing.readyAt = readyAt;
      this.heap.fix(existing.index);
    } else {
      const entry: WaitEntry<T> = { item, readyAt, seq: this.seq++, index: -1 };
      this.waiting.set(item, entry);
      this.heap.push(entry);
    }
    if (this.emitter.hasListeners) this.emitter.fire({ type: 'wait', item, readyAt });
    this.arm();
  }

  waitingUntil(item: T): number | undefined {
    return this.waiting.get(item)?.readyAt;
  }

  nextWaiting(): { item: T; readyAt: number } | undefined {
    const top = this.heap.peek();
    return top && { item: top.item, readyAt: top.readyAt };
  }

  waitingItems(): Array<{ item: T; readyAt: number }> {
    return [...this.waiting.values()]
      .sort((a, b) => a.readyAt - b.readyAt || a.seq - b.seq)
      .map((e) => ({ item: e.item, readyAt: e.readyAt }));
  }

  waitingLen(): number {
    return this.waiting.size;
  }

  cancelWait(item: T): boolean {
    const entry = this.waiting.get(item);
    if (!entry) return false;
    this.waiting.delete(item);
    this.heap.removeAt(entry.index);
    if (this.emitter.hasListeners) this.emitter.fire({ type: 'cancelWait', item });
    this.arm();
    return true;
  }

  override shutDown(): void {
    super.shutDown();
    this.dropWaits();
  }

  override shutDownWithDrain(): Promise<void> {
    const p = super.shutDownWithDrain();
    this.dropWaits();
    return p;
  }

  private dropWaits(): void {
    this.heap.clear();
    this.waiting.clear();
    this.disarm();
  }

  /** Keeps exactly one timer, due when the earliest wait ends. */
  private arm(): void {
    const top = this.heap.peek();
    if (!top) {
      this.disarm();
      return;
    }
    if (this.timer !== undefined && this.timerAt === top.readyAt) return;
    this.disarm();
    this.timerAt = top.readyAt;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, top.readyAt - this.clock.now()));
    this.timer = this.clock.setTimeout(() => this.onTimer(), delay);
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private onTimer(): void {
    this.timer = undefined;
    const now = this.clock.now();
    for (let top = this.heap.peek(); top && top.readyAt <= now; top = this.heap.peek()) {
      this.heap.pop();
      this.waiting.delete(top.item);
      if (this.emitter.hasListeners) this.emitter.fire({ type: 'ready', item: top.item });
      this.add(top.item);
    }
    this.arm();
  }
}

/** A new delaying queue whose waits run on `options.clock`. Dispose it to cancel its timer. */
export function createDelayingQueue<T>(options: DelayingQueueOptions): DelayingQueue<T> {
  return new HeapDelayingQueue<T>(options);
}
