import type { Clock } from '../clock.ts';

/**
 * Decides how long an item waits before it is retried (client-go
 * `TypedRateLimiter`). Durations are milliseconds.
 *
 * Obligation: call `forget(item)` when the item succeeded (or is abandoned),
 * or per-item limiters remember its failures forever and its next failure
 * waits as long as if the success never happened.
 */
export interface RateLimiter<T> {
  /** The delay for the next retry of `item`; counts as one failure. */
  when(item: T): number;
  /** Clears what the limiter remembers about `item` (its failure count). */
  forget(item: T): void;
  /** How many failures of `item` the limiter remembers. */
  numRequeues(item: T): number;
}

/**
 * Per-item exponential backoff: the n-th consecutive failure (n from 0) waits
 * `baseMs * 2^n`, capped at `maxMs`. Overflow-safe: a huge exponent yields
 * `maxMs`, never Infinity or NaN. Defaults: 5 ms doubling up to 1000 s (the
 * per-item part of client-go's default controller limiter).
 * client-go `NewItemExponentialFailureRateLimiter(base, max)`.
 */
export function itemExponentialFailureRateLimiter<T>(baseMs = 5, maxMs = 1_000_000): RateLimiter<T> {
  if (!(baseMs >= 0) || !(maxMs >= 0)) throw new RangeError('base and max delays must be >= 0');
  const failures = new Map<T, number>();
  return {
    when(item) {
      const exp = failures.get(item) ?? 0;
      failures.set(item, exp + 1);
      if (baseMs === 0) return 0;
      const backoff = baseMs * 2 ** exp; // Infinity once 2^exp overflows a double
      if (!Number.isFinite(backoff) || backoff > maxMs) return maxMs;
      return backoff;
    },
    forget(item) {
      failures.delete(item);
    },
    numRequeues(item) {
      return failures.get(item) ?? 0;
    },
  };
}

/**
 * `fastMs` for the first `maxFastAttempts` failures of an item, `slowMs` after.
 * client-go `NewItemFastSlowRateLimiter`.
 */
export function itemFastSlowRateLimiter<T>(fastMs: number, slowMs: number, maxFastAttempts: number): RateLimiter<T> {
  const failures = new Map<T, number>();
  return {
    when(item) {
      const n = (failures.get(item) ?? 0) + 1;
      failures.set(item, n);
      return n <= maxFastAttempts ? fastMs : slowMs;
    },
    forget(item) {
      failures.delete(item);
    },
    numRequeues(item) {
      return failures.get(item) ?? 0;
    },
  };
}

/**
 * One token bucket shared by **all** items (client-go `BucketRateLimiter`
 * over golang.org/x/time/rate `Reserve().Delay()`): the bucket starts full
 * with `burst` tokens and refills at `ratePerSecond`; every `when` takes a
 * token, going into debt when none is left, and returns how long until that
 * token exists. It keeps no per-item memory (`numRequeues` is 0, `forget` a no-op).
 */
export function bucketRateLimiter<T>(ratePerSecond: number, burst: number, clock: Clock): RateLimiter<T> {
  if (!(ratePerSecond > 0) || !(burst >= 1)) throw new RangeError('rate must be > 0 and burst >= 1');
  let tokens = burst;
  let last = clock.now();
  return {
    when() {
      const now = clock.now();
      tokens = Math.min(burst, tokens + (Math.max(0, now - last) / 1000) * ratePerSecond);
      last = now;
      tokens -= 1;
      return tokens >= 0 ? 0 : (-tokens / ratePerSecond) * 1000;
    },
    forget() {},
    numRequeues() {
      return 0;
    },
  };
}

/**
 * The longest delay of several limiters. Every child's `when` is called (so
 * each counts the failure and a bucket spends a token); `numRequeues` is the
 * children's maximum; `forget` forgets in all. client-go `NewMaxOfRateLimiter`.
 */
export function maxOfRateLimiter<T>(...limiters: RateLimiter<T>[]): RateLimiter<T> {
  if (limiters.length === 0) throw new RangeError('maxOfRateLimiter needs at least one limiter');
  return {
    when(item) {
      let max = 0;
      for (const l of limiters) max = Math.max(max, l.when(item));
      return max;
    },
    forget(item) {
      for (const l of limiters) l.forget(item);
    },
    numRequeues(item) {
      let max = 0;
      for (const l of limiters) max = Math.max(max, l.numRequeues(item));
      return max;
    },
  };
}

/** Caps another limiter's delay at `maxMs`. client-go `NewWithMaxWaitRateLimiter`. */
export function withMaxWaitRateLimiter<T>(limiter: RateLimiter<T>, maxMs: number): RateLimiter<T> {
  return {
    when: (item) => Math.min(limiter.when(item), maxMs),
    forget: (item) => limiter.forget(item),
    numRequeues: (item) => limiter.numRequeues(item),
  };
}

/**
 * client-go `DefaultControllerRateLimiter()`: the maximum of per-item
 * exponential backoff (5 ms doubling, capped at 1000 s) and a global token
 * bucket of 10 per second with a burst of 100. controller-runtime used it up
 * to v0.22 (and still does when its priority queue is disabled): the limiter of
 * the `client-go` work queue kind. (The `priority` kind uses
 * {@link itemExponentialFailureRateLimiter} alone, as controller-runtime's priority queue does.)
 */
export function defaultControllerRateLimiter<T>(clock: Clock): RateLimiter<T> {
  return maxOfRateLimiter<T>(itemExponentialFailureRateLimiter<T>(), bucketRateLimiter<T>(10, 100, clock));
}
