import type { Clock } from '../clock.ts';
import type { Disposable } from '../lifecycle.ts';

/** Default slice: the event-handler work one task of the event loop may do before delivery yields. */
export const DEFAULT_SLICE_MS = 10;

/**
 * How much event-handler work may run in one task of the event loop. The delivery loops sharing a budget
 * ({@link ProcessorListener}s of one informer, or of every informer of a factory) together spend at most `sliceMs`
 * per task (measured on the injected clock), plus the one notification each that was running when the slice ran out;
 * then they continue in a later task ({@link defer}: `setImmediate`, so the event loop first polls I/O and runs due
 * timers). An initial list of 10,000 objects or a burst of thousands of watch events thus never holds the event loop
 * for long, and the order of delivery does not change.
 *
 * What counts is the time charged ({@link charge}): the handlers' own time, and work the informer does for them in
 * the same task (storing a whole list); time that passes between them (another part of the program, or a test
 * moving a fake clock) does not. A task's window opens at the first call of a task and closes at the next check
 * phase of the event loop (an immediate queued when it opened).
 *
 * Owned by whoever creates it; `dispose` cancels every deferred continuation and the window's marker.
 */
export class DeliveryBudget implements Disposable {
  readonly sliceMs: number;
  private readonly clock: Clock;
  private open = false;
  private used = 0;
  private boundary: ReturnType<typeof setImmediate> | undefined;
  private readonly deferred = new Set<ReturnType<typeof setImmediate>>();
  private disposed = false;
  /** Windows opened so far (tests and benchmarks). */
  windows = 0;

  constructor(clock: Clock, sliceMs: number = DEFAULT_SLICE_MS) {
    this.clock = clock;
    this.sliceMs = Math.max(0, sliceMs);
  }

  /** The injected clock's time, for measuring what to {@link charge}. */
  now(): number {
    return this.clock.now();
  }

  /** Counts `ms` of work against this task's window (opening it when no one did yet). */
  charge(ms: number): void {
    this.openWindow();
    if (ms > 0) this.used += ms;
  }

  /** True when the work charged in this task has used up the slice; opens the task's window when no one did yet. */
  spent(): boolean {
    this.openWindow();
    return this.used >= this.sliceMs;
  }

  /** Runs `fn` in a later task of the event loop. The returned function cancels it; nothing runs after dispose. */
  defer(fn: () => void): () => void {
    const handle = setImmediate(() => {
      this.deferred.delete(handle);
      if (!this.disposed) fn();
    });
    this.deferred.add(handle);
    return () => {
      clearImmediate(handle);
      this.deferred.delete(handle);
    };
  }

  /** Continuations waiting for a later task. */
  get pending(): number {
    return this.deferred.size;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const h of this.deferred) clearImmediate(h);
    this.deferred.clear();
    if (this.boundary !== undefined) clearImmediate(this.boundary);
    this.boundary = undefined;
    this.open = false;
    this.used = 0;
  }

  private openWindow(): void {
    if (this.open || this.disposed) return;
    this.open = true;
    this.used = 0;
    this.windows++;
    this.boundary = setImmediate(() => {
      this.boundary = undefined;
      this.open = false;
      this.used = 0;
    });
  }
}
