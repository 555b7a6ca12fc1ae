import type { Clock } from '../clock.ts';
import type { Disposable } from '../lifecycle.ts';

/** Default slice: the event-handler work one task of the event loop may do before delivery yields. */
export const DEFAULT_SLICE_MS = 10;

/**
 * How much event-handler work may run in one task of the event loop. The delivery loops sharing a budget
 * ({@link ProcessorListener}s of one informer, or of every informer of a factory) together run for at most
 * `sliceMs` per task (measured on the injected clock), plus the one notification each that was running when the
 * slice ran out; then they continue in a later task ({@link defer}: `setImmediate`, so the event loop first polls
 * I/O and runs due timers). An initial list of 10,000 objects or a burst of thousands of watch events thus never
 * holds the event loop for long, and the order of delivery does not change.
 *
 * A window opens at the first {@link spent} call of a task and closes at the next check phase of the event loop
 * (an immediate queued when it opened). No time passes in between unless the clock says so, so with a fake clock a
 * window is spent only when the test moves time forward.
 *
 * Owned by whoever creates it; `dispose` cancels every deferred continuation and the window's marker.
 */
export class DeliveryBudget implements Disposable {
  readonly sliceMs: number;
  private readonly clock: Clock;
  private windowStart: number | undefined;
  private boundary: ReturnType<typeof setImmediate> | undefined;
  private readonly deferred = new Set<ReturnType<typeof setImmediate>>();
  private disposed = false;
  /** Windows opened so far (tests and benchmarks). */
  windows = 0;

  constructor(clock: Clock, sliceMs: number = DEFAULT_SLICE_MS) {
    this.clock = clock;
    this.sliceMs = Math.max(0, sliceMs);
  }

  /** True when this task's window has used up the slice; the first call of a task opens the window. */
  spent(): boolean {
    const now = this.clock.now();
    if (this.windowStart === undefined) {
      if (this.disposed) return false;
      this.windowStart = now;
      this.windows++;
      this.boundary = setImmediate(() => {
        this.boundary = undefined;
        this.windowStart = undefined;
      });
      return false;
    }
    return now - this.windowStart >= this.sliceMs;
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
    this.windowStart = undefined;
  }
}
