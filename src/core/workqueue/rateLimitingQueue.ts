import { HeapDelayingQueue, type DelayingQueue, type DelayingQueueOptions } from './delayingQueue.ts';
import type { RateLimiter } from './rateLimiters.ts';

/**
 * A delaying queue with a rate limiter (client-go `RateLimitingInterface`).
 *
 * - `addRateLimited(x)` is `addAfter(x, limiter.when(x))` (and counts a failure);
 * - `forget(x)` clears only the limiter's memory of `x` (its backoff); it does
 *   not remove `x` from the queue, and `done(x)` must still be called;
 * - `numRequeues(x)` is the limiter's failure count for `x`.
 *
 * Remember to call `forget` when an item succeeds: otherwise its failures are
 * tracked forever and its next failure backs off from where it left off.
 */
export interface RateLimitingQueue<T> extends DelayingQueue<T> {
  addRateLimited(item: T): void;
  forget(item: T): void;
  numRequeues(item: T): number;
}

export interface RateLimitingQueueOptions<T> extends DelayingQueueOptions {
  rateLimiter: RateLimiter<T>;
}

/** Exported for the controller queue wrapper; consumers use {@link createRateLimitingQueue}. */
export class LimitedQueue<T> extends HeapDelayingQueue<T> implements RateLimitingQueue<T> {
  private readonly limiter: RateLimiter<T>;

  constructor(options: RateLimitingQueueOptions<T>) {
    super(options);
    this.limiter = options.rateLimiter;
  }

  addRateLimited(item: T): void {
    this.addAfter(item, this.limiter.when(item));
  }

  forget(item: T): void {
    this.limiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.limiter.numRequeues(item);
  }
}

/**
 * A new rate-limiting queue. Queues own a timer: create them when their
 * consumers start (not at construction of a longer-lived object) and dispose
 * them when the consumers stop.
 */
export function createRateLimitingQueue<T>(options: RateLimitingQueueOptions<T>): RateLimitingQueue<T> {
  return new LimitedQueue<T>(options);
}
