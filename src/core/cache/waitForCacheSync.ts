import { type Clock, sleep } from '../clock.ts';

/** Anything that can tell whether it has synced (an informer or a handler registration). */
export interface Syncable {
  hasSynced(): boolean;
}

/** client-go syncedPollPeriod. */
export const SYNCED_POLL_PERIOD_MS = 100;

/**
 * Waits until every `syncables` has synced (client-go WaitForCacheSync: polls
 * every 100 ms on `clock`). Resolves true when all have synced, false when
 * `signal` aborted first (or `stillWanted` turned false, e.g. its owner stopped).
 * Never rejects.
 */
export async function waitForCacheSync(
  clock: Clock,
  syncables: readonly Syncable[],
  options: { signal?: AbortSignal; stillWanted?: () => boolean } = {},
): Promise<boolean> {
  for (;;) {
    if (options.signal?.aborted) return false;
    if (options.stillWanted && !options.stillWanted()) return false;
    if (syncables.every((s) => s.hasSynced())) return true;
    try {
      await sleep(clock, SYNCED_POLL_PERIOD_MS, options.signal);
    } catch {
      return false;
    }
  }
}
