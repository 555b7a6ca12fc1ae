import type { Logger } from '../log.ts';
import type { ObjectKey } from '../k8s/keys.ts';
import type { GroupVersionResource, KubeObject } from '../k8s/objects.ts';
import type { IndexerReader } from '../cache/interfaces.ts';
import type { KubeClient } from '../k8s/client.ts';

/**
 * Reconcile requests carry a key only. Reconciliation is level-based: the
 * reconciler re-reads the latest state (cache or server) and never receives
 * the event that enqueued it.
 */
export interface Request {
  readonly key: ObjectKey;
  readonly namespace?: string;
  readonly name: string;
}

/**
 * What to do after a successful reconcile. `requeueAfterMs > 0` means "not
 * ready yet, look again later" (the backoff counter is reset, not grown);
 * anything else means done until the next event.
 */
export interface Result {
  requeueAfterMs?: number;
  /** Why a delayed requeue was asked for (shown in the queue view and journal). */
  reason?: string;
  /**
   * The priority of the key's next enqueue by this result (a retry, a requeue-after or `requeue`); default:
   * the priority it was handed out with. Higher runs first; only the priority queue uses it
   * (controller-runtime `Result.Priority`, v0.23+).
   */
  priority?: number;
  /**
   * @deprecated as in controller-runtime (since v0.21): use `requeueAfterMs`, or throw. `true` (without
   * `requeueAfterMs`) re-adds the key rate-limited: it backs off like an error and its failure count grows.
   */
  requeue?: boolean;
}

/**
 * An error that must not be retried (controller-runtime TerminalError): the
 * key is not requeued until a new event arrives. It is not forgotten either
 * (as upstream, no `Forget` after a terminal error): its failure count stays
 * until a later reconcile succeeds, so a retry after a new event still backs off.
 */
export class TerminalError extends Error {
  readonly terminal = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

/**
 * True when `e`, or any error it wraps, is terminal, as Go's `errors.Is(err, reconcile.TerminalError(nil))` walks
 * the whole tree: the `cause` chain, and every member of an `AggregateError`'s `errors` (Go's `errors.Join`, whose
 * `Unwrap() []error` errors.Is also searches). Bounded: cycles and very deep or wide trees end the walk.
 */
export function isTerminal(e: unknown): boolean {
  const seen = new Set<object>();
  const stack: Array<{ err: unknown; depth: number }> = [{ err: e, depth: 0 }];
  while (stack.length > 0 && seen.size < 256) {
    const { err, depth } = stack.pop()!;
    if (typeof err !== 'object' || err === null || depth >= 16 || seen.has(err)) continue;
    seen.add(err);
    if (err instanceof TerminalError || (err as { terminal?: unknown }).terminal === true) return true;
    const members = err instanceof AggregateError ? (err as AggregateError).errors : undefined;
    if (Array.isArray(members)) for (let i = members.length - 1; i >= 0; i--) stack.push({ err: members[i], depth: depth + 1 });
    stack.push({ err: (err as { cause?: unknown }).cause, depth: depth + 1 });
  }
  return false;
}

/** Records Kubernetes Events against objects (what `kubectl describe` shows). */
export interface EventRecorder {
  event(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

/** Cache reads, by resource. Callers MUST NOT mutate returned objects. */
export interface CacheReader {
  /** The informer cache of `gvr`, if the controller watches it. */
  indexer(gvr: GroupVersionResource): IndexerReader | undefined;
  /** Shorthand: the cached object of `gvr` at `key`. */
  get(gvr: GroupVersionResource, key: ObjectKey): KubeObject | undefined;
}

/**
 * Everything a reconciler may use. `client` talks to the server (reads are
 * fresh, writes are recorded in the journal and honour dry-run); `cache` reads
 * the informers' local stores (possibly stale, never a network call).
 */
export interface ReconcileContext {
  readonly client: KubeClient;
  readonly cache: CacheReader;
  readonly log: Logger;
  readonly recorder: EventRecorder;
  /**
   * The primary resource being reconciled, with the subresources discovery listed for it (`subresources`; absent
   * when not known): writeStatusIfChanged writes the status with the object when "status" is not among them.
   */
  readonly primary: GroupVersionResource & { readonly subresources?: readonly string[] };
  /** True when every write is sent with dryRun=All (nothing persists). */
  readonly dryRun: boolean;
  /** Aborted when the reconcile times out or the controller stops; pass it to client calls. */
  readonly signal: AbortSignal;
}

/**
 * The reconciler contract (controller-runtime `Reconcile`):
 * - resolve with a {@link Result}: success (`requeueAfterMs` for a delayed look);
 * - throw: the key is requeued with per-key exponential backoff;
 * - throw a {@link TerminalError}: the key is not requeued.
 * Must be idempotent: called again with nothing changed, it writes nothing.
 */
export interface Reconciler {
  readonly name: string;
  reconcile(request: Request, ctx: ReconcileContext): Promise<Result>;
}
