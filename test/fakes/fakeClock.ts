import type { Clock, TimerHandle } from '../../src/core/clock.ts';

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

/**
 * A manual clock (client-go's testingclock analogue). Time moves only by
 * {@link FakeClock.step} / {@link FakeClock.setTime}; due timers fire in order
 * of due time, then of creation, and timers scheduled by a firing timer fire in
 * the same step when they are due within it.
 */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(start = 1_700_000_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { id: ++this.seq, at: this.t + Math.max(0, ms), fn };
    this.timers.push(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t !== handle);
  }

  /** Number of timers not yet fired. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Due time (absolute ms) of the earliest pending timer, if any. */
  nextDue(): number | undefined {
    return this.timers.reduce<number | undefined>((m, t) => (m === undefined || t.at < m ? t.at : m), undefined);
  }

  /** Advances time by `ms`, firing every timer that becomes due, in order. */
  step(ms: number): void {
    this.setTime(this.t + ms);
  }

  setTime(target: number): void {
    for (;;) {
      const due = this.timers
        .filter((x) => x.at <= target)
        .sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((x) => x !== due);
      this.t = Math.max(this.t, due.at);
      due.fn();
    }
    this.t = Math.max(this.t, target);
  }
}

/** Lets pending promise callbacks run (several macrotask-free turns). */
export async function flushMicrotasks(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}
