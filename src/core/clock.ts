/**
 * Time, injected. Core code never touches `Date.now`, `setTimeout` or
 * `performance` directly: it takes a Clock, so tests drive time with
 * `FakeClock.step()` and never sleep.
 */
export interface Clock {
  /** Milliseconds since the epoch (wall clock, used for timestamps shown to people). */
  now(): number;
  /** Schedules `fn` after `ms` (clamped to >= 0). Returns a handle for {@link Clock.clearTimeout}. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a pending timer; a no-op for a fired or unknown handle. */
  clearTimeout(handle: TimerHandle): void;
}

/** Opaque timer handle. */
export type TimerHandle = { readonly __timer: unique symbol } | object;

/** The real clock. Timers are unref'd so a forgotten timer cannot keep a CLI process alive. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref?.();
    return t as unknown as TimerHandle;
  },
  clearTimeout(handle) {
    clearTimeout(handle as unknown as ReturnType<typeof setTimeout>);
  },
};

/**
 * Resolves after `ms` on `clock`, or rejects with the signal's reason when
 * `signal` aborts first. The timer is always cleared.
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
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
