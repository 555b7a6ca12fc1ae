/**
 * Throttles the text of a tree view's `message`. VS Code's extension host sends a view's message and its tree
 * refreshes through ONE debounced event (200 ms, restarted by every change), so a message assigned more often than
 * every 200 ms — the Work Queue's counts, rewritten on every queue transition of a busy controller — holds back both
 * the message and every refresh of the view for as long as the changes keep coming: the view freezes on its last
 * state (seen with 3,000 keys: "Paused: …" and the same rows for minutes after Resume while the status bar moved on).
 *
 * Contract: {@link set} with the text already delivered (and nothing pending) does nothing; otherwise the text is
 * delivered at once when the previous delivery is at least `minIntervalMs` old, else once, `minIntervalMs` after the
 * previous delivery, with the latest text set meanwhile. Deliveries are therefore at least `minIntervalMs` apart and
 * the last text set is always delivered. Pure (no `vscode`): tested with a fake clock in
 * test/unit/host-free/views/messageThrottle.test.ts.
 */
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Disposable } from '../../core/lifecycle.ts';

/** Longer than VS Code's 200 ms merge window, so that a change is followed by a quiet gap in which it is delivered. */
export const VIEW_MESSAGE_INTERVAL_MS = 500;

export class MessageThrottle implements Disposable {
  private readonly clock: Clock;
  private readonly minIntervalMs: number;
  private readonly deliver: (text: string | undefined) => void;
  private delivered: string | undefined;
  private lastAt = Number.NEGATIVE_INFINITY;
  private pending: { text: string | undefined } | undefined;
  private timer: TimerHandle | undefined;
  private disposed = false;
  /** Deliveries so far (for tests). */
  deliveries = 0;

  constructor(clock: Clock, minIntervalMs: number, deliver: (text: string | undefined) => void) {
    this.clock = clock;
    this.minIntervalMs = minIntervalMs;
    this.deliver = deliver;
  }

  set(text: string | undefined): void {
    if (this.disposed) return;
    if (this.timer === undefined && text === this.delivered) return;
    const now = this.clock.now();
    if (this.timer === undefined && now - this.lastAt >= this.minIntervalMs) {
      this.send(text, now);
      return;
    }
    this.pending = { text };
    if (this.timer === undefined) {
      this.timer = this.clock.setTimeout(() => {
        this.timer = undefined;
        const p = this.pending;
        this.pending = undefined;
        if (p && !this.disposed && p.text !== this.delivered) this.send(p.text, this.clock.now());
      }, Math.max(0, this.lastAt + this.minIntervalMs - now));
    }
  }

  /** Delivers `text` at once, dropping a pending one (e.g. clearing the message on disconnect). */
  setNow(text: string | undefined): void {
    if (this.disposed) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
    if (text !== this.delivered) this.send(text, this.clock.now());
  }

  private send(text: string | undefined, now: number): void {
    this.delivered = text;
    this.lastAt = now;
    this.deliveries++;
    this.deliver(text);
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
  }
}
