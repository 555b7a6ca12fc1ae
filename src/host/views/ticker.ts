/**
 * The one timer that re-renders relative times ("Terminating 12s", "retry in 3s") in the views. Pure (no
 * `vscode`): the host says when it is wanted (a view is visible and connected) through {@link Ticker.setActive};
 * while inactive no timer exists at all. Unit-tested with a fake clock in test/unit/host-free/views/ticker.test.ts.
 */
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Disposable } from '../../core/lifecycle.ts';

export class Ticker implements Disposable {
  private handle: TimerHandle | undefined;
  private active = false;
  private disposed = false;
  /** Ticks delivered so far (for tests). */
  ticks = 0;

  /**
   * @param clock the clock whose timers are used (a fake clock in tests)
   * @param periodMs time between ticks
   * @param onTick called once per period while active; a throw is swallowed so the ticker keeps going
   */
  private readonly clock: Clock;
  private readonly periodMs: number;
  private readonly onTick: () => void;

  constructor(clock: Clock, periodMs: number, onTick: () => void) {
    this.clock = clock;
    this.periodMs = periodMs;
    this.onTick = onTick;
  }

  /** True while a timer is scheduled. */
  get running(): boolean {
    return this.handle !== undefined;
  }

  /** Starts (one timer) or stops (no timer) ticking. Idempotent. */
  setActive(active: boolean): void {
    if (this.disposed) return;
    this.active = active;
    if (active && this.handle === undefined) this.schedule();
    else if (!active && this.handle !== undefined) {
      this.clock.clearTimeout(this.handle);
      this.handle = undefined;
    }
  }

  private schedule(): void {
    this.handle = this.clock.setTimeout(() => {
      this.handle = undefined;
      if (!this.active || this.disposed) return;
      this.ticks++;
      try {
        this.onTick();
      } catch {
        // A failing refresh must not stop the clock.
      }
      if (this.active && !this.disposed && this.handle === undefined) this.schedule();
    }, this.periodMs);
  }

  dispose(): void {
    this.setActive(false);
    this.disposed = true;
  }
}
