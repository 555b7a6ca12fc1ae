import type { Clock } from '../clock.ts';
import { createPriorityQueue, type AddOptions, type PriorityAddQueue, type WorkQueueKind, WORK_QUEUE_KINDS } from './priorityQueue.ts';
import { LimitedQueue } from './rateLimitingQueue.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './rateLimiters.ts';

/**
 * client-go's rate-limited queue seen through the priority interface, as
 * controller-runtime's `priorityQueueWrapper` does when the priority queue is
 * off: `addWithOpts` becomes `addRateLimited` (rateLimited), `addAfter`
 * (afterMs > 0) or `add`; priorities are ignored.
 */
class ClientGoControllerQueue<T> extends LimitedQueue<T> implements PriorityAddQueue<T> {
  readonly kind: WorkQueueKind = 'client-go';

  addWithOpts(options: AddOptions, ...items: T[]): void {
    for (const item of items) {
      if (options.rateLimited) this.addRateLimited(item);
      else if (options.afterMs !== undefined && options.afterMs > 0) this.addAfter(item, options.afterMs);
      else this.add(item);
    }
  }

  priorityOf(): number | undefined {
    return undefined;
  }

  processingPriority(): number {
    return 0;
  }
}

export interface ControllerQueueOptions<T> {
  clock: Clock;
  name?: string;
  /** Replaces the kind's default rate limiter. */
  rateLimiter?: RateLimiter<T>;
}

/** What each kind is, in words (settings, CLI help, views). */
export const WORK_QUEUE_DESCRIPTIONS: Readonly<Record<WorkQueueKind, string>> = {
  priority: 'controller-runtime priority queue (its default since v0.23): priorities, per-key exponential backoff 5 ms → 1000 s',
  'client-go': 'client-go rate-limited queue with DefaultControllerRateLimiter: max(per-key exponential 5 ms → 1000 s, 10 qps / burst 100 bucket)',
};

/**
 * A new controller work queue of `kind`, each with its upstream default limiter:
 * - `priority`: controller-runtime's priority queue with per-item exponential 5 ms → 1000 s only;
 * - `client-go`: the rate-limited queue with `DefaultControllerRateLimiter`.
 */
export function createControllerQueue<T>(kind: WorkQueueKind, options: ControllerQueueOptions<T>): PriorityAddQueue<T> {
  switch (kind) {
    case 'priority':
      return createPriorityQueue<T>({ clock: options.clock, ...(options.name ? { name: options.name } : {}), ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}) });
    case 'client-go':
      return new ClientGoControllerQueue<T>({ clock: options.clock, ...(options.name ? { name: options.name } : {}), rateLimiter: options.rateLimiter ?? defaultControllerRateLimiter<T>(options.clock) });
    default:
      throw new RangeError(`unknown work queue ${JSON.stringify(kind)} (expected ${WORK_QUEUE_KINDS.join(' or ')})`);
  }
}

export type { AddOptions, PriorityAddQueue, WorkQueueKind };
export { WORK_QUEUE_KINDS };
