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

/** The request {@link probeServer} sends: kube-apiserver's liveness endpoint (readable by every authenticated user). */
export const PROBE_PATH = '/livez';

/**
 * Asks the server `GET /livez` every `everyMs` (default 5 s) so that {@link KubeTransport.onDidChangeReachability}
 * fires while this process makes no request of its own (a Go program run through the bridge talks to the server
 * itself; without a probe its outage would go unsaid). The answer is ignored: only whether one came matters. The
 * next probe is scheduled when the previous one has settled (never two at once). Dispose to stop (aborts a probe in
 * flight).
 */
export function probeServer(transport: { json(req: { method: 'GET'; path: string; signal?: AbortSignal }): Promise<unknown> }, clock: Clock, everyMs = 5_000): Disposable {
  const abort = new AbortController();
  let timer: ReturnType<Clock['setTimeout']> | undefined;
  const tick = () => {
    timer = undefined;
    void transport
      .json({ method: 'GET', path: PROBE_PATH, signal: abort.signal })
      .catch(() => {})
      .finally(() => {
        if (!abort.signal.aborted) timer = clock.setTimeout(tick, everyMs);
      });
  };
  timer = clock.setTimeout(tick, everyMs);
  return {
    dispose() {
      abort.abort(new Error('probe stopped'));
      if (timer !== undefined) clock.clearTimeout(timer);
    },
  };
}
