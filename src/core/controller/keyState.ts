import { Emitter, type Event } from '../event.ts';
import type { Disposable } from '../lifecycle.ts';
import type { ObjectKey } from '../k8s/keys.ts';
import type { QueueEvent } from '../workqueue/queue.ts';

/**
 * Per-key state of a controller, readable at any moment (for the queue view):
 * where the key is in the queue, its retry count, how its last reconcile went
 * and **why it is queued**.
 */

/** What a key is waiting for when it sits in the delaying queue. */
export type WaitKind = 'backoff' | 'requeueAfter';

/**
 * - `idle`: nothing pending;
 * - `queued`: waiting for a worker (or a step, while paused);
 * - `processing`: being reconciled (`dirtyWhileProcessing` tells whether it runs again after);
 * - `backoff`: waiting for its error retry (`waiting.dueAt`);
 * - `requeueAfter`: waiting for a delayed requeue the reconciler asked for (`waiting.dueAt`).
 */
export type KeyPhase = 'idle' | 'queued' | 'processing' | WaitKind;

type EventName = 'add' | 'update' | 'delete' | 'resync';

/**
 * One reason a key was enqueued. `at` is clock time (epoch ms). Whose write produced an event's resourceVersion is
 * not part of the reason: it is looked up when the reason is shown (see WriteIndex in core/journal/writeIndex.ts).
 */
export type EnqueueReason =
  /**
   * An informer event of the primary object itself. `deletionRequested` (informer, owned, watch): an update that set
   * metadata.deletionTimestamp, i.e. a delete of an object with finalizers (the object stays until they are removed).
   */
  | { kind: 'informer'; event: EventName; resource: string; objectKey: ObjectKey; resourceVersion?: string; initial?: boolean; deletionRequested?: true; at: number }
  /** An event of an owned child whose controller ownerReference points at the key. */
  | { kind: 'owned'; event: EventName; resource: string; child: ObjectKey; childKind?: string; resourceVersion?: string; initial?: boolean; deletionRequested?: true; at: number }
  /** An event of a watched object mapped to the key by a map function. */
  | { kind: 'watch'; event: EventName; resource: string; objectKey: ObjectKey; objectKind?: string; resourceVersion?: string; initial?: boolean; deletionRequested?: true; at: number }
  /**
   * A delayed requeue the reconciler asked for; `at` is when it is due (a Go controller reports it when the wait
   * begins: a reconcile another reason started earlier ran before it was due).
   */
  | { kind: 'requeueAfter'; afterMs: number; reason?: string; at: number }
  /** The error retry after backoff (`attempt` is the failure count that set the delay); `at`: as for requeueAfter. */
  | { kind: 'backoff'; attempt: number; delayMs: number; error?: string; at: number }
  /** A person or tool asked for it (reconcile now, step, enqueue, reset backoff). */
  | { kind: 'manual'; action: 'enqueue' | 'reconcileNow' | 'step' | 'resetBackoff'; note?: string; at: number };

/**
 * The reason that started a reconcile, of the `triggers` it was handed out with at `startedAt`: the newest one,
 * except a delayed requeue or backoff retry not due by then (a Go controller reports a wait when it begins, so a
 * reconcile an event started early carries the wait too, often last: the reconciler's own RequeueAfter, recorded
 * after the events its writes caused). Undefined for no triggers; the newest when every one is such a wait.
 */
export function startingTrigger(triggers: readonly EnqueueReason[], startedAt: number): EnqueueReason | undefined {
  for (let i = triggers.length - 1; i >= 0; i--) {
    const t = triggers[i]!;
    if (!((t.kind === 'requeueAfter' || t.kind === 'backoff') && t.at > startedAt)) return t;
  }
  return triggers[triggers.length - 1];
}

/** How one reconcile ended, after the result switch applied its queue action. */
export type ReconcileOutcome =
  | { kind: 'success' }
  | { kind: 'requeueAfter'; afterMs: number; reason?: string }
  /**
   * Retried with backoff; `retryAt` is when the key is queued again; `failures` is the rate limiter's
   * consecutive-failure count of the key after this one (its NumRequeues, not the reconcile counter);
   * `retryDelayMs`, when known (a Go controller reports it), is the delay its rate limiter gave. `ignored`: what
   * the reconciler asked for beside the error, which the error discards (a Go controller's `RequeueAfter 30 s`).
   */
  | { kind: 'error'; message: string; timedOut?: boolean; retryAt?: number; failures?: number; retryDelayMs?: number; ignored?: string }
  /** The deprecated `Result.requeue`: re-added rate-limited like an error (the failure count grows), at `retryAt`. */
  | { kind: 'requeue'; reason?: string; retryAt?: number }
  /** A TerminalError: forgotten, not retried until a new event. `ignored`: as for an error. */
  | { kind: 'terminal'; message: string; ignored?: string }
  /** The controller stopped while the reconcile ran; no queue action. */
  | { kind: 'cancelled'; message: string };

export interface KeyState {
  readonly key: ObjectKey;
  readonly phase: KeyPhase;
  /** A pending delayed add of the key (also while it is queued or processing for another reason). */
  readonly waiting?: { readonly kind: WaitKind; readonly dueAt: number };
  /**
   * Priority queue only: the priority of the key's pending entry (queued or waiting), or while it is
   * processing with nothing pending, the priority it was handed out with. Higher runs first; -100 is the
   * initial list and resyncs.
   */
  readonly priority?: number;
  /** Added again while processing: it is queued again when the current reconcile ends. */
  readonly dirtyWhileProcessing: boolean;
  /** Consecutive failures the rate limiter remembers (reset by success, requeueAfter and reset backoff; a TerminalError keeps them, as controller-runtime does not Forget it). */
  readonly requeues: number;
  /** Reconciles of this key since the controller was created. */
  readonly reconciles: number;
  readonly lastOutcome?: ReconcileOutcome;
  /** Message of the last failed reconcile (kept after later successes, with `lastErrorAt`). */
  readonly lastError?: string;
  readonly lastErrorAt?: number;
  readonly lastStartedAt?: number;
  readonly lastDurationMs?: number;
  /** Why it is queued: the reasons since it last started running, oldest first. */
  readonly reasons: readonly EnqueueReason[];
  /** Reasons not kept because more than the limit arrived. */
  readonly droppedReasons: number;
  /** What triggered the reconcile running now or last run. */
  readonly lastTriggers: readonly EnqueueReason[];
  /** The latest warning about this key (e.g. a hot loop). */
  readonly warning?: string;
  /** Set on the last change event of a key that was forgotten (its object is gone and nothing is pending). */
  readonly removed?: true;
}

/**
 * What lists of every key need from a key (the Work Queue view's filter, order and counts), without the rest of its
 * state: listing {@link KeyState}s of 10,000 keys costs a frozen object with copied arrays each, a brief does not.
 */
export interface KeyBrief {
  readonly key: ObjectKey;
  readonly phase: KeyPhase;
  /** Due time of a pending wait (backoff / requeue-after). */
  readonly dueAt?: number;
  /** The last reconcile failed (an error or a TerminalError). */
  readonly failed: boolean;
  /** The key has a warning (e.g. a hot loop). */
  readonly warned: boolean;
}

interface KeyRecord {
  key: ObjectKey;
  queued: boolean;
  processing: boolean;
  dirtyWhileProcessing: boolean;
  waiting?: { kind: WaitKind; dueAt: number; attempt?: number; afterMs?: number; reason?: string; error?: string };
  priority?: number;
  /** Set by the controller just before addAfter/addRateLimited so the resulting wait gets the right kind. */
  expected?: { kind: WaitKind; attempt?: number; afterMs?: number; reason?: string; error?: string };
  reasons: EnqueueReason[];
  droppedReasons: number;
  lastTriggers: EnqueueReason[];
  reconciles: number;
  lastOutcome?: ReconcileOutcome;
  lastError?: string;
  lastErrorAt?: number;
  lastStartedAt?: number;
  lastDurationMs?: number;
  warning?: string;
  /** A change not yet published (see addReason). */
  unpublished?: boolean;
  /** The phase this record is counted under in the table's {@link KeyCounts} (kept in step by `changed`). */
  counted: KeyPhase;
  /** Whether the record is in the table's listed set (see {@link KeyStateTable.listedBriefs}). */
  listed: boolean;
}

/** How many keys are in each non-idle phase. */
export interface KeyCounts {
  readonly queued: number;
  readonly processing: number;
  readonly backoff: number;
  readonly requeueAfter: number;
}

/** A key is listed (Work Queue view) while it is not idle, or its last reconcile failed, or it has a warning. */
function isListed(r: KeyRecord): boolean {
  return r.counted !== 'idle' || r.lastOutcome?.kind === 'error' || r.lastOutcome?.kind === 'terminal' || r.warning !== undefined;
}

export interface KeyStateTableOptions {
  now: () => number;
  /** The limiter's failure count for a key (0 when no queue exists). */
  numRequeues: (key: ObjectKey) => number;
  /** Reasons kept per key; older ones are counted in `droppedReasons`. Default 16. */
  maxReasons?: number;
}

/**
 * Tracks the state of every key a controller has seen. Fed by the work
 * queue's transitions ({@link KeyStateTable.onQueueEvent}) and by the
 * controller (reasons, reconcile start/end); fires `onDidChange` with a fresh
 * immutable {@link KeyState} after every change of a key.
 */
export class KeyStateTable implements Disposable {
  private readonly records = new Map<ObjectKey, KeyRecord>();
  /** Keys per non-idle phase, updated on every transition (invariant: equal to counting `phaseOf` over all records). */
  private readonly phaseCounts = { queued: 0, processing: 0, backoff: 0, requeueAfter: 0 };
  /** The records {@link isListed} holds for, updated on every change (invariant: exactly those). */
  private readonly listed = new Set<KeyRecord>();
  private readonly opts: Required<KeyStateTableOptions>;
  private readonly emitter = new Emitter<KeyState>();
  readonly onDidChange: Event<KeyState> = this.emitter.event;
  private readonly keyEmitter = new Emitter<ObjectKey>();
  /**
   * Fires the key after every change of its state, at the same moments as {@link onDidChange}, without building the
   * state: for listeners that only need to know which key changed (a view marking rows), so that a burst of
   * thousands of changes does not build a frozen {@link KeyState} for each.
   */
  readonly onDidChangeKey: Event<ObjectKey> = this.keyEmitter.event;

  constructor(options: KeyStateTableOptions) {
    this.opts = { maxReasons: 16, ...options };
  }

  get(key: ObjectKey): KeyState | undefined {
    const r = this.records.get(key);
    return r && this.toState(r);
  }

  /** Every key's state, sorted by key. */
  all(): KeyState[] {
    return [...this.records.keys()].sort().map((k) => this.toState(this.records.get(k)!));
  }

  /** Every key's {@link KeyBrief}, in no particular order (cheap: no {@link KeyState} is built). */
  briefs(): KeyBrief[] {
    const out: KeyBrief[] = [];
    for (const r of this.records.values()) out.push(briefOf(r));
    return out;
  }

  /** How many keys are queued, processing, in backoff, waiting to requeue: kept up to date on every change (O(1)). */
  counts(): KeyCounts {
    return { ...this.phaseCounts };
  }

  /**
   * The {@link KeyBrief}s of the keys a work-queue listing shows (not idle, or failed, or warned), in no particular
   * order: the listed set is kept up to date on every change, so this costs the listed keys, not all keys.
   * `withoutQueued`: leaves out the keys in the `queued` phase (a listing takes those from the queue, in its order,
   * and their number from {@link counts}): 10,000 keys of an initial list are not copied for it.
   */
  listedBriefs(withoutQueued = false): KeyBrief[] {
    const out: KeyBrief[] = [];
    for (const r of this.listed) if (!withoutQueued || r.counted !== 'queued') out.push(briefOf(r));
    return out;
  }

  /**
   * Records why `key` is being enqueued. With `publish: false` the change is
   * published by the queue transition that follows, or by {@link KeyStateTable.publishPending}
   * when the add caused none (the key was already queued): one event per enqueue.
   */
  addReason(key: ObjectKey, reason: EnqueueReason, publish = true): void {
    const r = this.record(key);
    this.pushReason(r, reason);
    if (publish) this.changed(r);
    else r.unpublished = true;
  }

  /** Publishes a change held back by `addReason(…, false)` if no other change published it meanwhile. */
  publishPending(key: ObjectKey): void {
    const r = this.records.get(key);
    if (r?.unpublished) this.changed(r);
  }

  /** The next wait of `key` is of this kind (call right before addAfter / addRateLimited). */
  expectWait(key: ObjectKey, expected: NonNullable<KeyRecord['expected']>): void {
    this.record(key).expected = expected;
  }

  /** Drops an expectation that produced no wait (the delay was 0 or an earlier wait was kept). */
  clearExpectation(key: ObjectKey): void {
    const r = this.records.get(key);
    if (r) r.expected = undefined;
  }

  onQueueEvent(e: QueueEvent<ObjectKey>): void {
    if (e.type === 'shutdown') return;
    const r = this.record(e.item);
    if ((e.type === 'add' || e.type === 'get' || e.type === 'wait' || e.type === 'priority') && e.priority !== undefined) r.priority = e.priority;
    switch (e.type) {
      case 'add':
        if (e.queued) r.queued = true;
        else r.dirtyWhileProcessing = true;
        if (r.expected) {
          // A zero-delay retry or requeue was added directly.
          this.pushReason(r, this.waitReason({ ...r.expected, dueAt: this.opts.now() }));
          r.expected = undefined;
        }
        break;
      case 'get':
        r.queued = false;
        r.processing = true;
        break;
      case 'done':
        r.processing = false;
        r.dirtyWhileProcessing = false;
        r.queued = e.requeued;
        break;
      case 'wait': {
        const exp = r.expected ?? (r.waiting ? { ...r.waiting } : { kind: 'requeueAfter' as const });
        r.waiting = { ...exp, dueAt: e.readyAt, afterMs: r.expected?.afterMs ?? Math.max(0, e.readyAt - this.opts.now()) };
        r.expected = undefined;
        break;
      }
      case 'ready':
        if (r.waiting) this.pushReason(r, this.waitReason(r.waiting));
        r.waiting = undefined;
        break;
      case 'cancelWait':
        r.waiting = undefined;
        break;
      case 'priority':
        break;
    }
    if (!r.queued && !r.processing && !r.waiting && !r.dirtyWhileProcessing) r.priority = undefined;
    this.changed(r);
  }

  /**
   * A reconcile of `key` starts: its reasons become `lastTriggers` (or `triggers`, when the caller knows them
   * better, e.g. a remote queue that reports them with the start). Returns them.
   */
  begin(key: ObjectKey, at: number, triggers?: EnqueueReason[]): EnqueueReason[] {
    const r = this.record(key);
    r.lastTriggers = triggers ?? r.reasons;
    r.reasons = [];
    r.droppedReasons = 0;
    r.reconciles++;
    r.lastStartedAt = at;
    this.changed(r);
    return r.lastTriggers;
  }

  end(key: ObjectKey, outcome: ReconcileOutcome, durationMs: number, at: number): void {
    const r = this.record(key);
    r.lastOutcome = outcome;
    r.lastDurationMs = durationMs;
    if (outcome.kind === 'error' || outcome.kind === 'terminal') {
      r.lastError = outcome.message;
      r.lastErrorAt = at;
    }
    this.changed(r);
  }

  setWarning(key: ObjectKey, warning: string | undefined): void {
    const r = this.record(key);
    r.warning = warning;
    this.changed(r);
  }

  /** The queue went away (controller stopped): every key is idle, keeping its history. */
  resetQueueState(): void {
    for (const r of this.records.values()) {
      if (!r.queued && !r.processing && !r.waiting && !r.dirtyWhileProcessing && !r.expected) continue;
      r.queued = r.processing = r.dirtyWhileProcessing = false;
      r.waiting = r.expected = r.priority = undefined;
      this.changed(r);
    }
  }

  /** Forgets an idle key with no pending reasons (e.g. its object is gone); fires a last change with `removed`. Returns whether it did. */
  delete(key: ObjectKey): boolean {
    const r = this.records.get(key);
    if (!r || phaseOf(r) !== 'idle' || r.dirtyWhileProcessing || r.reasons.length > 0) return false;
    this.records.delete(key);
    this.recount(r);
    this.listed.delete(r);
    if (this.emitter.hasListeners) this.emitter.fire(Object.freeze({ ...this.toState(r), removed: true as const }));
    if (this.keyEmitter.hasListeners) this.keyEmitter.fire(key);
    return true;
  }

  /** Refires the state of `key` (e.g. after its requeue count changed outside the queue events). */
  touch(key: ObjectKey): void {
    const r = this.records.get(key);
    if (r) this.changed(r);
  }

  dispose(): void {
    this.emitter.dispose();
    this.keyEmitter.dispose();
  }

  private record(key: ObjectKey): KeyRecord {
    let r = this.records.get(key);
    if (!r) {
      r = { key, queued: false, processing: false, dirtyWhileProcessing: false, reasons: [], droppedReasons: 0, lastTriggers: [], reconciles: 0, counted: 'idle', listed: false };
      this.records.set(key, r);
    }
    return r;
  }

  private pushReason(r: KeyRecord, reason: EnqueueReason): void {
    r.reasons.push(reason);
    if (r.reasons.length > this.opts.maxReasons) {
      r.reasons.shift();
      r.droppedReasons++;
    }
  }

  private waitReason(w: NonNullable<KeyRecord['waiting']>): EnqueueReason {
    const at = this.opts.now();
    if (w.kind === 'backoff') {
      return { kind: 'backoff', attempt: w.attempt ?? 0, delayMs: w.afterMs ?? 0, ...(w.error !== undefined ? { error: w.error } : {}), at };
    }
    return { kind: 'requeueAfter', afterMs: w.afterMs ?? 0, ...(w.reason !== undefined ? { reason: w.reason } : {}), at };
  }

  /** Moves `r` to the count of its current phase (or out of every count once it left the table). */
  private recount(r: KeyRecord): void {
    const phase = this.records.get(r.key) === r ? phaseOf(r) : 'idle';
    if (phase === r.counted) return;
    if (r.counted !== 'idle') this.phaseCounts[r.counted]--;
    if (phase !== 'idle') this.phaseCounts[phase]++;
    r.counted = phase;
  }

  private changed(r: KeyRecord): void {
    this.recount(r);
    const listed = isListed(r);
    if (listed !== r.listed) {
      r.listed = listed;
      if (listed) this.listed.add(r);
      else this.listed.delete(r);
    }
    r.unpublished = false;
    if (this.emitter.hasListeners) this.emitter.fire(this.toState(r));
    if (this.keyEmitter.hasListeners) this.keyEmitter.fire(r.key);
  }

  private toState(r: KeyRecord): KeyState {
    return Object.freeze({
      key: r.key,
      phase: phaseOf(r),
      ...(r.waiting ? { waiting: Object.freeze({ kind: r.waiting.kind, dueAt: r.waiting.dueAt }) } : {}),
      ...(r.priority !== undefined ? { priority: r.priority } : {}),
      dirtyWhileProcessing: r.dirtyWhileProcessing,
      requeues: this.opts.numRequeues(r.key),
      reconciles: r.reconciles,
      ...(r.lastOutcome ? { lastOutcome: r.lastOutcome } : {}),
      ...(r.lastError !== undefined ? { lastError: r.lastError, lastErrorAt: r.lastErrorAt } : {}),
      ...(r.lastStartedAt !== undefined ? { lastStartedAt: r.lastStartedAt } : {}),
      ...(r.lastDurationMs !== undefined ? { lastDurationMs: r.lastDurationMs } : {}),
      reasons: Object.freeze(r.reasons.slice()),
      droppedReasons: r.droppedReasons,
      lastTriggers: Object.freeze(r.lastTriggers.slice()),
      ...(r.warning !== undefined ? { warning: r.warning } : {}),
    });
  }
}

function briefOf(r: KeyRecord): KeyBrief {
  const failed = r.lastOutcome?.kind === 'error' || r.lastOutcome?.kind === 'terminal';
  return r.waiting ? { key: r.key, phase: phaseOf(r), dueAt: r.waiting.dueAt, failed, warned: r.warning !== undefined } : { key: r.key, phase: phaseOf(r), failed, warned: r.warning !== undefined };
}

function phaseOf(r: KeyRecord): KeyPhase {
  if (r.processing) return 'processing';
  if (r.queued) return 'queued';
  if (r.waiting) return r.waiting.kind;
  return 'idle';
}
