import type { Clock } from '../clock.ts';
import { realClock } from '../clock.ts';
import type { ReconcileOutcome as ControllerOutcome } from '../controller/keyState.ts';
import { isTerminal, type CacheReader, type EventRecorder, type Reconciler, type Request } from '../controller/reconcile.ts';
import type { KubeClient } from '../k8s/client.ts';
import { recordingClient, type WriteRecord } from '../k8s/dynamicClient.ts';
import { splitKey, type ObjectKey } from '../k8s/keys.ts';
import type { GroupVersionResource } from '../k8s/objects.ts';
import type { Logger } from '../log.ts';
import { nullLogger } from '../log.ts';
import { createReconcileContext } from './context.ts';
import { delayText } from '../text/duration.ts';

/** How one reconcile ended, as the controller's requeue switch would see it. */
export type ReconcileOutcome =
  | { kind: 'done' }
  | { kind: 'requeueAfter'; requeueAfterMs: number; reason?: string }
  /** The deprecated `Result.requeue`: a rate-limited re-add. */
  | { kind: 'requeue'; reason?: string }
  | { kind: 'error'; error: string }
  | { kind: 'terminal'; error: string };

export interface RunOnceOptions {
  client: KubeClient;
  reconciler: Reconciler;
  primary: GroupVersionResource;
  key: ObjectKey;
  dryRun: boolean;
  cache?: CacheReader;
  log?: Logger;
  recorder?: EventRecorder;
  clock?: Clock;
  signal?: AbortSignal;
  /** Also receives every write (e.g. the journal). */
  onWrite?: (w: WriteRecord) => void;
}

export interface RunOnceResult {
  request: Request;
  outcome: ReconcileOutcome;
  /** Every write the reconciler sent, in order (dry-run ones included). */
  writes: WriteRecord[];
  durationMs: number;
}

/** Maps a reconcile's resolution to the outcome the controller would act on. */
export function outcomeOf(settled: { result?: { requeueAfterMs?: number; reason?: string; requeue?: boolean }; error?: unknown }): ReconcileOutcome {
  if ('error' in settled && settled.error !== undefined) {
    const message = (settled.error as Error)?.message ?? String(settled.error);
    return isTerminal(settled.error) ? { kind: 'terminal', error: message } : { kind: 'error', error: message };
  }
  const ms = settled.result?.requeueAfterMs;
  if (ms && ms > 0) return { kind: 'requeueAfter', requeueAfterMs: ms, reason: settled.result?.reason };
  if (settled.result?.requeue === true) return { kind: 'requeue', ...(settled.result.reason !== undefined ? { reason: settled.result.reason } : {}) };
  return { kind: 'done' };
}

/**
 * Runs one reconcile of `key` outside any controller, through a
 * {@link recordingClient} (forced dry-run when `dryRun`), and returns what it
 * wrote and how it ended. A throwing reconciler is an outcome, not an exception.
 */
export async function runOnce(o: RunOnceOptions): Promise<RunOnceResult> {
  const clock = o.clock ?? realClock;
  const writes: WriteRecord[] = [];
  const client = recordingClient(o.client, {
    dryRun: o.dryRun,
    clock,
    log: o.log,
    onWrite: (w) => {
      writes.push(w);
      o.onWrite?.(w);
    },
  });
  const { namespace, name } = splitKey(o.key);
  const request: Request = namespace ? { key: o.key, namespace, name } : { key: o.key, name };
  const ctx = createReconcileContext({ client, primary: o.primary, dryRun: o.dryRun, cache: o.cache, log: (o.log ?? nullLogger).child({ key: o.key }), recorder: o.recorder, signal: o.signal });
  const start = clock.now();
  let outcome: ReconcileOutcome;
  try {
    outcome = outcomeOf({ result: await o.reconciler.reconcile(request, ctx) });
  } catch (e) {
    outcome = outcomeOf({ error: e });
  }
  return { request, outcome, writes, durationMs: clock.now() - start };
}

/**
 * The outcome of a dry-run reconcile for a person: what the loop would do with it, never as if it happened (a dry run
 * runs beside the queue: nothing is retried or requeued). "error (a real reconcile is retried with backoff): …".
 */
export function describeDryRunOutcome(o: ReconcileOutcome): string {
  switch (o.kind) {
    case 'error':
    case 'terminal':
      return `${dryRunFailureHead(o)}: ${o.error}`;
    case 'requeueAfter':
      return `requeue after ${delayText(o.requeueAfterMs)}${o.reason ? ` (${o.reason})` : ''} (a real reconcile waits that long, then runs again)`;
    default:
      return describeOutcome(o);
  }
}

/** {@link describeDryRunOutcome} of a failed pass without its error text (which a view may show apart, verbatim). */
export function dryRunFailureHead(o: { kind: 'error' | 'terminal' }): string {
  return o.kind === 'error' ? 'error (a real reconcile is retried with backoff)' : 'terminal error (a real reconcile is not retried)';
}

/**
 * A controller's outcome (the loop's, or a Go controller's reconcile end) in the words of a one-off run: success is
 * `done`; a cancelled reconcile (the controller stopped meanwhile) is an error.
 */
export function outcomeOfController(o: ControllerOutcome): ReconcileOutcome {
  switch (o.kind) {
    case 'success':
      return { kind: 'done' };
    case 'requeueAfter':
      return { kind: 'requeueAfter', requeueAfterMs: o.afterMs, ...(o.reason !== undefined ? { reason: o.reason } : {}) };
    case 'requeue':
      return { kind: 'requeue', ...(o.reason !== undefined ? { reason: o.reason } : {}) };
    case 'terminal':
      return { kind: 'terminal', error: o.message };
    case 'error':
    case 'cancelled':
      return { kind: 'error', error: o.message };
  }
}

/** One line for a person: "done", "requeue after 15 s (reason)", "error: …". */
export function describeOutcome(o: ReconcileOutcome): string {
  switch (o.kind) {
    case 'done':
      return 'done (no requeue)';
    case 'requeueAfter':
      return `requeue after ${delayText(o.requeueAfterMs)}${o.reason ? ` (${o.reason})` : ''}`;
    case 'requeue':
      return `requeue with backoff (the deprecated requeue: true)${o.reason ? ` (${o.reason})` : ''}`;
    case 'error':
      return `error, retried with backoff: ${o.error}`;
    case 'terminal':
      return `terminal error, not retried: ${o.error}`;
  }
}
