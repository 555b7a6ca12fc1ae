/**
 * Time, injected. Core code never touches `Date.now`, `setTimeout` or
 * `performance` directly: it takes a Clock, so tests drive time with
 * `FakeClock.step()` and never sleep.
 */
export interface Clock {
  /** Milliseconds since the epoch (wall clock, used for timestamps shown to people). */
  now(): number;
  /** Schedules `fn` after `ms` (clamped to >= 0; any length: never early). Returns a handle for {@link Clock.clearTimeout}. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a pending timer; a no-op for a fired or unknown handle. */
  clearTimeout(handle: TimerHandle): void;
}

/** Opaque timer handle. */
export type TimerHandle = { readonly __timer: unique symbol } | object;

/** Node's longest single timer (a signed 32-bit count of milliseconds): a longer one fires after 1 ms, with a warning. */
const MAX_NODE_TIMER_MS = 2 ** 31 - 1;

/** A {@link realClock} timer longer than Node's limit: re-armed in steps until its time has come. */
class LongTimer {
  current: ReturnType<typeof setTimeout> | undefined;
}

/**
 * The real clock. Timers are unref'd so a forgotten timer cannot keep a CLI process alive. A wait longer than Node's
 * limit (about 24.8 days: `--duration 3000000`, a requeue after 30 days) fires when it is due, never early: Node
 * would fire it after 1 ms.
 */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const wait = Math.max(0, ms);
    if (!(wait > MAX_NODE_TIMER_MS)) {
      const t = setTimeout(fn, wait);
      t.unref?.();
      return t as unknown as TimerHandle;
    }
    const long = new LongTimer();
    const due = Date.now() + wait;
    const arm = () => {
      const left = due - Date.now();
      long.current = left > MAX_NODE_TIMER_MS ? setTimeout(arm, MAX_NODE_TIMER_MS) : setTimeout(fn, Math.max(0, left));
      long.current.unref?.();
    };
    arm();
    return long as unknown as TimerHandle;
  },
  clearTimeout(handle) {
    if (handle instanceof LongTimer) clearTimeout(handle.current);
    else clearTimeout(handle as unknown as ReturnType<typeof setTimeout>);
  },
};

/**
 * Resolves after `ms` on `clock`, or rejects with the signal's reason when
 * `signal` aborts first. The timer is always cleared.
 */
export function sleep(clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(signal!.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
