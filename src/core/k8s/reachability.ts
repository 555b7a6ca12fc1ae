import type { Clock } from '../clock.ts';
import type { Event } from '../event.ts';
import type { Disposable } from '../lifecycle.ts';
import type { Reachability } from './transport.ts';

/** One line for a person when the API server went away or came back ({@link watchServerOutages}). */
export interface OutageNote {
  readonly kind: 'away' | 'back';
  readonly text: string;
  /** `back`: how long the server could not be reached. */
  readonly awayMs?: number;
}

/** Seconds for people: `0.8 s`, `18 s`, `3 min 5 s`. */
function duration(ms: number): string {
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return s < 120 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/**
 * Says once that the API server cannot be reached and once that it answers again, instead of a log line per retry:
 * what the informers and the loop do meanwhile (client-go's behaviour: informers retry with a jittered backoff
 * from 0.8 s doubling up to 30 s, then watch on from their last resourceVersion or relist; the work queue keeps its
 * keys and their backoff counters; a reconcile whose API calls fail backs off as any failed reconcile). The texts
 * carry the transport's error, which names the server and the cause, never a credential.
 */
export function watchServerOutages(source: { readonly onDidChangeReachability: Event<Reachability> }, clock: Clock, say: (note: OutageNote) => void): Disposable {
  let awaySince: number | undefined;
  return source.onDidChangeReachability((r) => {
    if (!r.reachable) {
      awaySince = clock.now();
      say({
        kind: 'away',
        text: `${r.error} The informers retry with backoff (0.8 s, doubling up to 30 s, as client-go); queued keys and their backoffs are kept, and a reconcile whose API calls fail meanwhile backs off like any failure.`,
      });
      return;
    }
    const awayMs = awaySince === undefined ? 0 : clock.now() - awaySince;
    awaySince = undefined;
    say({
      kind: 'back',
      awayMs,
      text: `The API server answers again (its first answer came ${duration(awayMs)} after the first failed connection). The informers resume after their current backoff (up to 30 s, as client-go): each watches on from its last resourceVersion, or relists when the server no longer keeps it; what changed meanwhile queues its keys.`,
    });
  });
}
