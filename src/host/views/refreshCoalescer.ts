import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Disposable } from '../../core/lifecycle.ts';

/**
 * Collects "this changed" marks and delivers them at most once per
 * `delayMs`, so a burst of thousands of informer or queue events becomes one
 * tree refresh. Marks are deduplicated (Set semantics); `all` marks
 * everything (the flush then receives `undefined`).
 *
 * Invariant: every mark made before `dispose()` is delivered by exactly one
 * flush, at most `delayMs` after the first mark of the batch (or after the
 * last {@link hold} on it is released); nothing is delivered after `dispose()`.
 */
export class RefreshCoalescer<K> implements Disposable {
  private readonly clock: Clock;
  private readonly delayMs: number | (() => number);
  private readonly flush: (marks: ReadonlySet<K> | undefined) => void;
  private marks = new Set<K>();
  private everything = false;
  private timer: TimerHandle | undefined;
  private disposed = false;
  /** Holds in force (see {@link hold}). */
  private holds = 0;
  /** Number of flushes so far (for tests and the status tooltip). */
  flushes = 0;

  /** `delayMs` may be a function: read when a batch starts (e.g. longer while a refresh is expensive). */
  constructor(clock: Clock, delayMs: number | (() => number), flush: (marks: ReadonlySet<K> | undefined) => void) {
    this.clock = clock;
    this.delayMs = delayMs;
    this.flush = flush;
  }

  mark(key: K): void {
    if (this.disposed) return;
    if (!this.everything) this.marks.add(key);
    this.schedule();
  }

  all(): void {
    if (this.disposed) return;
    this.everything = true;
    this.marks.clear();
    this.schedule();
  }

  /** Delivers pending marks now (e.g. before a reveal), cancelling the timer. */
  flushNow(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.deliver();
  }

  /**
   * Holds timed deliveries back until the returned disposable is disposed (holds nest; disposing twice counts once):
   * marks made meanwhile are kept and delivered on the last release, one delay later. {@link flushNow} still delivers
   * (an explicit request). For a tree reveal in flight: a whole-tree refresh meanwhile makes VS Code's renderer forget
   * the rows the reveal looks for, and the reveal is silently dropped.
   */
  hold(): Disposable {
    this.holds++;
    let released = false;
    return {
      dispose: () => {
        if (released) return;
        released = true;
        this.holds--;
        if (this.holds === 0 && !this.disposed && (this.everything || this.marks.size > 0)) this.schedule();
      },
    };
  }

  private schedule(): void {
    if (this.timer === undefined) this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      if (this.holds > 0) return; // delivered on release
      this.deliver();
    }, typeof this.delayMs === 'number' ? this.delayMs : this.delayMs());
  }

  private deliver(): void {
    if (this.disposed || (!this.everything && this.marks.size === 0)) return;
    const marks = this.everything ? undefined : this.marks;
    this.marks = new Set();
    this.everything = false;
    this.flushes++;
    this.flush(marks);
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.marks.clear();
  }
}
