import { realClock, sleep, type Clock, type TimerHandle } from '../clock.ts';
import { Emitter, type Event } from '../event.ts';
import { DisposableStore, type Disposable } from '../lifecycle.ts';
import { JOURNALED_FIELD, nullLogger, type Logger } from '../log.ts';
import { isTombstone, type HandlerRegistration, type ResourceEventHandler, type SharedIndexInformer } from '../cache/interfaces.ts';
import { keyOf, splitKey, type ObjectKey } from '../k8s/keys.ts';
import { gvrToString, type GroupVersionResource, type KubeObject } from '../k8s/objects.ts';
import { Journal, type QueueTransition } from '../journal/journal.ts';
import { createControllerQueue } from '../workqueue/controllerQueue.ts';
import { LOW_PRIORITY, type PriorityAddQueue, type WorkQueueKind } from '../workqueue/priorityQueue.ts';
import type { RateLimiter } from '../workqueue/rateLimiters.ts';
import type { QueueEvent } from '../workqueue/queue.ts';
import { informerCacheReader } from './cacheReader.ts';
import { enqueueForObject, enqueueForOwner, enqueueMapped, type KeyMapper } from './handler.ts';
import { HotLoopDetector, type HotLoopOptions } from './hotLoop.ts';
import { FieldFightDetector, type FieldFightOptions } from './fieldFight.ts';
import { KeyStateTable, type EnqueueReason, type KeyBrief, type KeyCounts, type KeyState, type ReconcileOutcome, type WaitKind } from './keyState.ts';
import type { Predicate } from './predicate.ts';
import { isTerminal, type CacheReader, type ReconcileContext, type Reconciler, type Request, type Result } from './reconcile.ts';

/**
 * The controller engine (controller-runtime `internal/controller`): informer
 * events → predicates → keys → rate-limited work queue → N async workers →
 * Reconciler, with debugger controls (pause, step, resume, reconcile now,
 * reset backoff), per-key state and a journal.
 *
 * Guarantees:
 * - a key is never reconciled concurrently with itself (the work queue's rule,
 *   kept across timeouts and restarts: `done(key)` is called only once the
 *   reconcile call has settled, and a reconcile abandoned by `stop()` that is
 *   still running delays the next reconcile of its key until it settles);
 * - a reconcile gets only a {@link Request}; it reads current state itself;
 * - the outcome of every reconcile goes through ONE switch
 *   ({@link ReconcileOutcome}): error → rate-limited add; TerminalError →
 *   no requeue (the failure count is kept, as in controller-runtime);
 *   `requeueAfterMs > 0` → `forget` + add after; deprecated `requeue` →
 *   rate-limited add; success → `forget`. Every re-add carries the priority
 *   the key was handed out with, or `Result.priority`;
 * - the work queue is controller-runtime's priority queue by default
 *   (`workQueue: 'priority'`), or client-go's rate-limited queue
 *   (`'client-go'`); informer events of the initial list and resyncs (same
 *   resourceVersion) are added at {@link LOW_PRIORITY}, as controller-runtime's handlers do;
 * - a reconcile that throws or rejects is an error outcome, never a crash;
 *   `done(key)` is always called;
 * - `reconcileTimeoutMs` (off by default, as controller-runtime's
 *   `ReconciliationTimeout`) only aborts the reconcile's `signal` (its
 *   deadline): the worker still waits for the call to settle, and the outcome
 *   is what the call returns (an error then carries `timedOut`);
 * - the queue and its timers exist only between `start()` and `stop()`.
 *
 * The controller never disposes the informers it watches (they are shared);
 * `start()` calls their idempotent `run()`.
 */
export interface Controller extends Disposable {
  readonly name: string;
  readonly journal: Journal;
  /** Registers event handlers, waits for the caches to sync, then starts the workers. Idempotent while running. */
  start(): Promise<void>;
  /** Aborts in-flight reconciles (their signal), waits for them to end, drops the queue. Key history is kept. */
  stop(): Promise<void>;
  status(): ControllerStatus;
  readonly onDidChangeStatus: Event<ControllerStatus>;

  /** Workers take nothing while paused; events keep filling the queue. */
  pause(): void;
  resume(): void;
  /**
   * Runs exactly one reconcile and leaves the controller paused (pausing it
   * first if it was running): the next queued key, or `options.key`. A key
   * waiting for its backoff or requeue-after is reported as `notReady` with
   * its due time unless `force` is set; an idle key is reconciled (a manual
   * request). Resolves with the reconcile's outcome.
   */
  step(options?: StepOptions): Promise<StepResult>;
  /** Queues `key` now, skipping a pending backoff or requeue-after wait. Returns false when not running. */
  reconcileNow(key: ObjectKey): boolean;
  /** Forgets the key's failure count; a pending backoff wait is cancelled and the key queued now. Returns false when not running. */
  resetBackoff(key: ObjectKey): boolean;
  /** Queues `key` (a manual request). Returns false when not running. */
  enqueue(key: ObjectKey, note?: string): boolean;
  /**
   * Queues now every key waiting for a backoff retry, as an event would (`note` says why: e.g. the reconciler's code
   * changed, so the next try may succeed); failure counts are kept, so a key that fails again backs off further.
   * Returns the keys queued (none when not running).
   */
  retryBackoffsNow?(note: string): ObjectKey[];

  keyState(key: ObjectKey): KeyState | undefined;
  /** Every key's state plus queue order and status, at this moment. */
  snapshot(): ControllerSnapshot;
  /**
   * The queued keys in the order workers will take them (the snapshot's `queue`, without building the rest); only
   * the first `limit` when given (the head of a long queue costs about `limit`, not the queue's length).
   */
  queuedKeys(limit?: number): ObjectKey[];
  /** Every key's brief state, unordered (cheap beside {@link snapshot} for views that list or count all keys). */
  keyBriefs(): KeyBrief[];
  /** How many keys are in each non-idle phase: kept up to date on every transition, O(1). */
  keyCounts(): KeyCounts;
  /**
   * The briefs of the keys that are not idle, or failed, or warned (what the Work Queue view lists), unordered;
   * without the `queued` ones when `withoutQueued` (see {@link queuedKeys} and {@link keyCounts} for those).
   */
  listedKeyBriefs(withoutQueued?: boolean): KeyBrief[];
  /** Fires after every change of a key's state (synchronously, possibly often: coalesce in views). */
  readonly onDidChangeKeyState: Event<KeyState>;
  /** Fires the key at the same moments as {@link onDidChangeKeyState}, without building its state (cheap). */
  readonly onDidChangeKey: Event<ObjectKey>;
}

export type ControllerState = 'stopped' | 'starting' | 'running' | 'stopping';

export interface ControllerStatus {
  readonly name: string;
  readonly state: ControllerState;
  readonly paused: boolean;
  readonly maxConcurrentReconciles: number;
  /** Which work queue the controller runs on (undefined: not known). */
  readonly workQueue?: WorkQueueKind;
  /** Reconciles running now (workers and steps). */
  readonly inFlight: number;
  /** Keys waiting for a worker. */
  readonly queueLength: number;
  /** Keys waiting for a backoff or requeue-after. */
  readonly waiting: number;
  /** Why the last start failed (e.g. caches did not sync in time). */
  readonly lastStartError?: string;
}

export interface ControllerSnapshot {
  readonly at: number;
  readonly status: ControllerStatus;
  /** Queued keys in the order workers will take them. */
  readonly queue: readonly ObjectKey[];
  /** Pending waits, soonest first. */
  readonly waiting: ReadonlyArray<{ key: ObjectKey; dueAt: number; kind: WaitKind }>;
  readonly keys: readonly KeyState[];
}

export interface StepOptions {
  key?: ObjectKey;
  /** Step `key` even though its backoff / requeue-after has not expired. */
  force?: boolean;
}

export type StepResult =
  | { kind: 'reconciled'; key: ObjectKey; outcome: ReconcileOutcome; durationMs: number; triggers: readonly EnqueueReason[] }
  /** The key waits for its retry or requeue; call again with `force: true` to run it anyway. */
  | { kind: 'notReady'; key: ObjectKey; waiting: WaitKind; dueAt: number }
  /**
   * The key is being reconciled right now. `stepping`: a step of this key already waits for its reconcile (a Go
   * controller's process may not have reported the reconcile yet, e.g. when it sits at a breakpoint); that step
   * answers when the reconcile ends.
   */
  | { kind: 'busy'; key: ObjectKey; stepping?: true }
  /** Nothing is queued; `next` is the wait that ends first, if any. */
  | { kind: 'empty'; next?: { key: ObjectKey; dueAt: number; waiting: WaitKind } }
  | { kind: 'notRunning' };

/** What the controller gives the context factory for one reconcile. */
export interface ReconcileContextBase {
  readonly controller: string;
  readonly primary: GroupVersionResource;
  /** Aborted on timeout or stop: the context's `signal` MUST be this one (or follow it). */
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Reads the informers this controller watches. */
  readonly cache: CacheReader;
  /** For the client wrapper to record writes (`journal.recordWrite({... controller, key: request.key})`). */
  readonly journal: Journal;
}

/**
 * Builds the {@link ReconcileContext} of one reconcile: the caller supplies the
 * client (journaling, dry-run), the recorder, and may reuse `base.cache`. Called
 * once per reconcile; a throw is an error outcome of that reconcile.
 */
export type ReconcileContextFactory = (request: Request, base: ReconcileContextBase) => ReconcileContext;

export interface ControllerOptions {
  name: string;
  contextFactory: ReconcileContextFactory;
  /** Default: the real clock. */
  clock?: Clock;
  log?: Logger;
  /** Where entries go; default a private journal (disposed with the controller). */
  journal?: Journal;
  /** Workers (default 1). */
  maxConcurrentReconciles?: number;
  /**
   * The deadline of one reconcile (controller-runtime `ReconciliationTimeout`): when it passes, the
   * reconcile's `signal` aborts with a {@link ReconcileTimeoutError}; the worker keeps waiting for the
   * call to settle (the key is never handed out while it runs). Default 0: no deadline, as in controller-runtime.
   */
  reconcileTimeoutMs?: number;
  /**
   * The work queue: `priority` (default: controller-runtime's priority queue, its default since v0.23, with
   * per-key exponential backoff 5 ms → 1000 s) or `client-go` (the rate-limited queue with
   * DefaultControllerRateLimiter, as controller-runtime with its priority queue turned off).
   */
  workQueue?: WorkQueueKind;
  /** Replaces the queue's default rate limiter (a factory, called at each start). */
  rateLimiter?: (clock: Clock) => RateLimiter<ObjectKey>;
  /** How long `start()` waits for the informers' initial lists. Default 2 min. */
  cacheSyncTimeoutMs?: number;
  /** Hot-loop detection thresholds, or false to turn it off. */
  hotLoop?: HotLoopOptions | false;
  /**
   * Field-manager fight detection on the primary resource's updates (another writer keeps undoing this
   * controller's writes, seen in managedFields), or false to turn it off. Pass `ownManager` (the field
   * manager of this controller's client) so the warning can say which side is this one.
   */
  fieldFight?: FieldFightOptions | false;
  /** Start with the workers paused (step through from the first key). */
  startPaused?: boolean;
  /** Enqueue reasons kept per key. Default 16. */
  maxReasonsPerKey?: number;
}

export interface SourceSpec {
  informer: SharedIndexInformer;
  /** Must all pass for an event of this source to enqueue. */
  predicates?: readonly Predicate[];
  /**
   * Default true: `start()` waits for this source's informer to sync (and fails after the cache-sync timeout), as
   * controller-runtime does for every watch. False: the source is registered and its informer run like the others,
   * but the start does not wait for it; its events enqueue keys from whenever its informer delivers them (its
   * initial list once it syncs). For sources the reconciler does not read (resources watched only to map children to
   * owners), so one the server cannot list does not keep the loop from starting. Not allowed for the primary.
   */
  waitForSync?: boolean;
}

export interface WatchSpec extends SourceSpec {
  /** Keys (of the primary resource) to reconcile for an object of the watched resource. */
  map: (obj: KubeObject) => readonly ObjectKey[];
}

export interface ControllerSources {
  /** The reconciled resource (`for`). */
  primary: SourceSpec;
  /** Children whose controller ownerReference points at a primary object (`owns`). */
  owned?: readonly SourceSpec[];
  /** Other resources mapped to primary keys (`watches`). */
  watched?: readonly WatchSpec[];
  /** Predicates applied to every source's events (`withEventFilter`). */
  eventFilters?: readonly Predicate[];
}

/** The error a reconcile gets when it runs past the timeout. */
export class ReconcileTimeoutError extends Error {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`reconcile timed out after ${timeoutMs} ms`);
    this.name = 'ReconcileTimeoutError';
    this.timeoutMs = timeoutMs;
  }
}

/** The abort reason of reconciles running when the controller stops. */
export class ControllerStoppedError extends Error {
  constructor(controller: string) {
    super(`controller ${controller} stopped`);
    this.name = 'ControllerStoppedError';
  }
}

/** True when `e`, or an error in its `cause` chain, is the stop's abort reason ({@link ControllerStoppedError}). */
function causedByStop(e: unknown): boolean {
  for (let cur = e, depth = 0; cur instanceof Error && depth < 16; cur = cur.cause, depth++) if (cur instanceof ControllerStoppedError) return true;
  return false;
}

/** A new (stopped) controller. */
export function createController(options: ControllerOptions, sources: ControllerSources, reconciler: Reconciler): Controller {
  return new ControllerEngine(options, sources, reconciler);
}

type Role = 'primary' | 'owned' | 'watched';

interface Source {
  role: Role;
  /** Whether start() waits for this source to sync (SourceSpec.waitForSync). */
  required: boolean;
  informer: SharedIndexInformer;
  resource: string;
  predicates: readonly Predicate[];
  keys: KeyMapper;
}

interface Run {
  readonly queue: PriorityAddQueue<ObjectKey>;
  readonly abort: AbortController;
  readonly store: DisposableStore;
  readonly workers: Array<Promise<void>>;
  readonly active: Set<Promise<unknown>>;
}

type InvokeResult =
  | { ok: true; result: Result }
  /** `timedOut`: the call failed after its deadline aborted its signal. */
  | { ok: false; error: unknown; timedOut?: boolean };

/** Wraps the abort reason when the reconcile was abandoned while still running. */
class Abandoned {
  readonly reason: unknown;
  constructor(reason: unknown) {
    this.reason = reason;
  }
}

const SYNC_POLL_MS = 100;
/** How long after its deadline a reconcile may take to stop before it counts as ignoring its signal. */
const LATE_GRACE_MS = 1000;

class ControllerEngine implements Controller {
  readonly name: string;
  readonly journal: Journal;
  private readonly ownsJournal: boolean;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly contextFactory: ReconcileContextFactory;
  private readonly reconciler: Reconciler;
  private readonly workers: number;
  private readonly timeoutMs: number;
  private readonly cacheSyncTimeoutMs: number;
  private readonly queueKind: WorkQueueKind;
  private readonly makeLimiter: (() => RateLimiter<ObjectKey>) | undefined;
  private readonly sources: Source[];
  private readonly primary: SharedIndexInformer;
  private readonly primaryResource: string;
  private readonly cache: CacheReader;
  private readonly keys: KeyStateTable;
  private readonly hotLoop: HotLoopDetector | undefined;
  /**
   * Per key with a hot-loop warning: the timer that takes the warning off once the key stops looping, and the
   * latest hot-loop warning (a later one replaces it; another kind of warning set since is left alone).
   */
  private readonly hotLoopClears = new Map<ObjectKey, { timer: TimerHandle; message: string }>();
  private readonly fieldFight: FieldFightDetector | undefined;
  /** Writes the last reconcile of a key made to its own object (hot-loop evidence). */
  private readonly selfWrites = new Map<ObjectKey, { all: number; object: number }>();
  /** Reconciles abandoned by `stop()` that have not settled yet, by key: the next reconcile of the key waits for them. */
  private readonly stragglers = new Map<ObjectKey, Promise<unknown>>();
  private readonly statusEmitter = new Emitter<ControllerStatus>();
  readonly onDidChangeStatus: Event<ControllerStatus> = this.statusEmitter.event;
  readonly onDidChangeKeyState: Event<KeyState>;
  readonly onDidChangeKey: Event<ObjectKey>;

  private state: ControllerState = 'stopped';
  private run: Run | undefined;
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private lastStartError: string | undefined;
  private disposed = false;
  private inFlight = 0;

  private paused: boolean;
  /** Aborted while paused: cancels workers' pending `get`. Replaced on resume. */
  private pauseGate = new AbortController();
  private resumeWaiters: Array<() => void> = [];

  constructor(options: ControllerOptions, sources: ControllerSources, reconciler: Reconciler) {
    if (!options.name) throw new Error('a controller needs a name');
    this.name = options.name;
    this.clock = options.clock ?? realClock;
    this.log = (options.log ?? nullLogger).child({ controller: options.name });
    this.ownsJournal = !options.journal;
    this.journal = options.journal ?? new Journal({ clock: this.clock, capacity: 1000 });
    this.contextFactory = options.contextFactory;
    this.reconciler = reconciler;
    this.workers = options.maxConcurrentReconciles ?? 1;
    if (!Number.isInteger(this.workers) || this.workers < 1) throw new RangeError('maxConcurrentReconciles must be an integer >= 1');
    this.timeoutMs = options.reconcileTimeoutMs ?? 0;
    if (!(this.timeoutMs >= 0)) throw new RangeError('reconcileTimeoutMs must be >= 0');
    this.cacheSyncTimeoutMs = options.cacheSyncTimeoutMs ?? 120_000;
    this.queueKind = options.workQueue ?? 'priority';
    if (this.queueKind !== 'priority' && this.queueKind !== 'client-go') throw new RangeError(`unknown work queue ${JSON.stringify(this.queueKind)} (expected priority or client-go)`);
    const limiter = options.rateLimiter;
    this.makeLimiter = limiter ? () => limiter(this.clock) : undefined;
    this.hotLoop = options.hotLoop === false ? undefined : new HotLoopDetector(options.hotLoop ?? {});
    this.fieldFight = options.fieldFight === false ? undefined : new FieldFightDetector(options.fieldFight ?? {});
    this.paused = options.startPaused ?? false;
    if (this.paused) this.pauseGate.abort();

    const filters = sources.eventFilters ?? [];
    this.primary = sources.primary.informer;
    const p = this.primary.resource;
    this.primaryResource = gvrToString(p);
    const owner = { group: p.group, kind: p.kind, namespaced: p.namespaced };
    this.sources = [
      { role: 'primary', required: true, informer: this.primary, resource: this.primaryResource, predicates: [...(sources.primary.predicates ?? []), ...filters], keys: enqueueForObject() },
      ...(sources.owned ?? []).map((s): Source => ({ role: 'owned', required: s.waitForSync !== false, informer: s.informer, resource: gvrToString(s.informer.resource), predicates: [...(s.predicates ?? []), ...filters], keys: enqueueForOwner(owner) })),
      ...(sources.watched ?? []).map((s): Source => ({ role: 'watched', required: s.waitForSync !== false, informer: s.informer, resource: gvrToString(s.informer.resource), predicates: [...(s.predicates ?? []), ...filters], keys: enqueueMapped(s.map) })),
    ];
    this.cache = informerCacheReader([...new Set(this.sources.map((s) => s.informer))]);
    this.keys = new KeyStateTable({
      now: () => this.clock.now(),
      numRequeues: (k) => this.run?.queue.numRequeues(k) ?? 0,
      ...(options.maxReasonsPerKey !== undefined ? { maxReasons: options.maxReasonsPerKey } : {}),
    });
    this.onDidChangeKeyState = this.keys.onDidChange;
    this.onDidChangeKey = this.keys.onDidChangeKey;
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  start(): Promise<void> {
    if (this.disposed) return Promise.reject(new Error(`controller ${this.name} is disposed`));
    if (this.starting) return this.starting;
    if (this.state === 'running') return Promise.resolve();
    const p = (async () => {
      if (this.stopping) await this.stopping;
      await this.startRun();
    })();
    this.starting = p;
    const clear = () => {
      if (this.starting === p) this.starting = undefined;
    };
    p.then(clear, clear);
    return p;
  }

  private async startRun(): Promise<void> {
    const queue = createControllerQueue<ObjectKey>(this.queueKind, { clock: this.clock, name: this.name, ...(this.makeLimiter ? { rateLimiter: this.makeLimiter() } : {}) });
    const run: Run = { queue, abort: new AbortController(), store: new DisposableStore(), workers: [], active: new Set() };
    run.store.add(queue);
    run.store.add(queue.onDidChange((e) => this.onQueueEvent(e)));
    this.run = run;
    this.lastStartError = undefined;
    this.setState('starting');
    const registrations: HandlerRegistration[] = [];
    for (const src of this.sources) registrations.push(run.store.add(src.informer.addEventHandler(this.handlerFor(run, src))));
    for (const informer of new Set(this.sources.map((s) => s.informer))) informer.run();
    try {
      await this.waitForSync(run, registrations);
    } catch (e) {
      if (this.run === run && !run.abort.signal.aborted) {
        this.lastStartError = errorMessage(e);
        this.log.error('caches did not sync', { error: this.lastStartError });
        await this.stop();
      }
      throw e;
    }
    if (this.run !== run || run.abort.signal.aborted) return;
    for (let i = 0; i < this.workers; i++) {
      run.workers.push(this.worker(run).catch((e) => this.log.error('worker failed', { error: errorMessage(e) })));
    }
    this.setState('running');
    this.journal.append({ kind: 'control', action: 'start', controller: this.name, detail: `${this.workers} worker(s)${this.paused ? ', paused' : ''}` });
  }

  private async waitForSync(run: Run, registrations: HandlerRegistration[]): Promise<void> {
    const deadline = this.clock.now() + this.cacheSyncTimeoutMs;
    // Sources that do not gate the start (SourceSpec.waitForSync false) are left out.
    const pending = () => this.sources.filter((s, i) => s.required && !registrations[i]!.hasSynced());
    while (pending().length > 0) {
      if (run.abort.signal.aborted) throw run.abort.signal.reason;
      if (this.clock.now() >= deadline) {
        const waiting = pending().map((s) => s.resource);
        throw new Error(`controller ${this.name}: caches did not sync within ${this.cacheSyncTimeoutMs} ms (${waiting.join(', ')})`);
      }
      await sleep(this.clock, SYNC_POLL_MS, run.abort.signal);
    }
  }

  stop(): Promise<void> {
    const run = this.run;
    if (!run) return this.stopping ?? Promise.resolve();
    if (this.stopping) return this.stopping;
    const p = (async () => {
      this.setState('stopping');
      run.abort.abort(new ControllerStoppedError(this.name));
      this.wakeResumeWaiters();
      await run.queue.shutDownWithDrain();
      await Promise.allSettled([...run.workers, ...run.active]);
      this.teardown(run);
    })();
    this.stopping = p;
    const clear = () => {
      if (this.stopping === p) this.stopping = undefined;
    };
    p.then(clear, clear);
    return p;
  }

  private teardown(run: Run): void {
    run.store.dispose();
    for (const c of this.hotLoopClears.values()) this.clock.clearTimeout(c.timer);
    this.hotLoopClears.clear();
    if (this.run !== run) return;
    this.run = undefined;
    this.keys.resetQueueState();
    this.setState('stopped');
    this.journal.append({ kind: 'control', action: 'stop', controller: this.name });
  }

  dispose(): void {
    if (this.disposed) return;
    const run = this.run;
    if (run) {
      run.abort.abort(new ControllerStoppedError(this.name));
      this.wakeResumeWaiters();
      run.queue.shutDown();
      this.teardown(run);
    }
    this.disposed = true;
    this.keys.dispose();
    this.statusEmitter.dispose();
    if (this.ownsJournal) this.journal.dispose();
  }

  status(): ControllerStatus {
    const q = this.run?.queue;
    return {
      name: this.name,
      state: this.state,
      paused: this.paused,
      maxConcurrentReconciles: this.workers,
      workQueue: this.queueKind,
      inFlight: this.inFlight,
      queueLength: q?.len() ?? 0,
      waiting: q?.waitingLen() ?? 0,
      ...(this.lastStartError !== undefined ? { lastStartError: this.lastStartError } : {}),
    };
  }

  private setState(state: ControllerState): void {
    this.state = state;
    this.statusChanged();
  }

  private statusChanged(): void {
    if (this.statusEmitter.hasListeners) this.statusEmitter.fire(this.status());
  }

  // ---- events → keys ---------------------------------------------------------------------------

  private handlerFor(run: Run, src: Source): ResourceEventHandler {
    return {
      onAdd: (obj, initial) => this.onInformerEvent(run, src, 'add', [obj], (p) => p.create({ object: obj, isInInitialList: initial }), initial),
      onUpdate: (oldObj, newObj) => {
        const rv = newObj.metadata.resourceVersion;
        const isResync = rv !== undefined && rv === oldObj.metadata.resourceVersion;
        if (!isResync && src.role === 'primary') this.checkFieldFight(oldObj, newObj);
        this.onInformerEvent(run, src, isResync ? 'resync' : 'update', [oldObj, newObj], (p) => p.update({ objectOld: oldObj, objectNew: newObj, isResync }));
      },
      onDelete: (o) => {
        const unknown = isTombstone(o);
        const obj = unknown ? o.obj : o;
        this.onInformerEvent(run, src, 'delete', [obj], (p) => p.delete({ object: obj, deleteStateUnknown: unknown }));
      },
    };
  }

  private onInformerEvent(
    run: Run,
    src: Source,
    event: 'add' | 'update' | 'delete' | 'resync',
    objects: readonly KubeObject[],
    passes: (p: Predicate) => boolean,
    initial?: boolean,
  ): void {
    if (this.run !== run || run.abort.signal.aborted) return;
    const obj = objects[objects.length - 1]!;
    let objectKey: ObjectKey;
    try {
      objectKey = keyOf(obj);
    } catch {
      return; // an object without a name cannot be reconciled
    }
    let filteredBy: string | undefined;
    for (const p of src.predicates) {
      try {
        if (!passes(p)) {
          filteredBy = p.name;
          break;
        }
      } catch (e) {
        filteredBy = `${p.name} (threw: ${errorMessage(e)})`;
        this.warn('handlerError', `predicate ${p.name} threw on ${event} of ${objectKey}: ${errorMessage(e)}`, objectKey);
        break;
      }
    }
    let keys: ObjectKey[] = [];
    if (filteredBy === undefined) {
      try {
        keys = src.keys(objects);
      } catch (e) {
        this.warn('handlerError', `mapping ${event} of ${src.resource} ${objectKey} to keys failed: ${errorMessage(e)}`, objectKey);
      }
    }
    const rv = obj.metadata.resourceVersion;
    const generation = obj.metadata.generation;
    this.journal.append({
      kind: 'informer',
      controller: this.name,
      key: keys.length === 1 ? keys[0]! : src.role === 'primary' ? objectKey : undefined,
      resource: src.resource,
      role: src.role,
      event,
      objectKey,
      ...(rv !== undefined ? { resourceVersion: rv } : {}),
      ...(generation !== undefined ? { generation } : {}),
      ...(initial ? { initial } : {}),
      enqueued: keys,
      ...(filteredBy !== undefined ? { filteredBy } : {}),
    });
    const at = this.clock.now();
    // controller-runtime's handlers: the initial list and resyncs (same resourceVersion) go in at low priority.
    const priority = (event === 'add' && initial) || event === 'resync' ? LOW_PRIORITY : undefined;
    for (const key of keys) {
      let reason: EnqueueReason;
      const rvPart = {
        ...(rv !== undefined ? { resourceVersion: rv } : {}),
        ...(event === 'update' && objects.length === 2 && !objects[0]!.metadata.deletionTimestamp && obj.metadata.deletionTimestamp ? { deletionRequested: true as const } : {}),
      };
      if (src.role === 'primary') reason = { kind: 'informer', event, resource: src.resource, objectKey, ...rvPart, ...(initial ? { initial } : {}), at };
      else if (src.role === 'owned') reason = { kind: 'owned', event, resource: src.resource, child: objectKey, ...(obj.kind ? { childKind: obj.kind } : {}), ...rvPart, ...(initial ? { initial } : {}), at };
      else reason = { kind: 'watch', event, resource: src.resource, objectKey, ...(obj.kind ? { objectKind: obj.kind } : {}), ...rvPart, ...(initial ? { initial } : {}), at };
      this.enqueueFor(run, key, reason, priority);
    }
  }

  /** Adds `key` to the queue (at `priority`, default 0) with its reason, publishing one key-state change. */
  private enqueueFor(run: Run, key: ObjectKey, reason: EnqueueReason, priority?: number): void {
    this.keys.addReason(key, reason, false);
    run.queue.addWithOpts(priority !== undefined ? { priority } : {}, key);
    this.keys.publishPending(key);
  }

  private onQueueEvent(e: QueueEvent<ObjectKey>): void {
    this.keys.onQueueEvent(e);
    let transition: QueueTransition;
    switch (e.type) {
      case 'add': transition = e.queued ? 'queued' : 'deferred'; break;
      case 'get': transition = 'processing'; break;
      case 'done': transition = e.requeued ? 'requeued' : 'done'; break;
      case 'wait': transition = 'waiting'; break;
      case 'ready': transition = 'ready'; break;
      case 'cancelWait': transition = 'waitCancelled'; break;
      case 'priority': transition = 'reprioritized'; break;
      case 'shutdown': transition = 'shutdown'; break;
    }
    if (e.type === 'shutdown') {
      this.journal.append({ kind: 'queue', controller: this.name, transition });
      return;
    }
    const waiting = e.type === 'wait' ? this.keys.get(e.item)?.waiting : undefined;
    this.journal.append({
      kind: 'queue',
      controller: this.name,
      key: e.item,
      transition,
      ...(waiting ? { dueAt: waiting.dueAt, waitKind: waiting.kind } : {}),
      ...('priority' in e && e.priority !== undefined ? { priority: e.priority } : {}),
    });
  }

  // ---- workers ---------------------------------------------------------------------------------

  private async worker(run: Run): Promise<void> {
    for (;;) {
      if (run.abort.signal.aborted) return;
      if (this.paused) {
        await new Promise<void>((resolve) => this.resumeWaiters.push(resolve));
        continue;
      }
      let got;
      try {
        got = await run.queue.get(this.pauseGate.signal);
      } catch (e) {
        if (this.paused || run.abort.signal.aborted) continue;
        throw e;
      }
      if (got.shutdown) return;
      if (run.abort.signal.aborted) {
        run.queue.done(got.item);
        return;
      }
      await this.track(run, this.process(run, got.item, 'worker'));
    }
  }

  private async track<T>(run: Run, p: Promise<T>): Promise<T> {
    run.active.add(p);
    try {
      return await p;
    } finally {
      run.active.delete(p);
    }
  }

  /** One reconcile of a key already handed out by the queue. Always ends with `done(key)`. */
  private async process(run: Run, key: ObjectKey, via: 'worker' | 'step'): Promise<ReconcileOutcome> {
    const startedAt = this.clock.now();
    const priority = run.queue.processingPriority(key);
    const triggers = this.keys.begin(key, startedAt);
    const primaryObject = this.primary.getIndexer().getByKey(key);
    const generation = primaryObject?.metadata.generation;
    const startSeq = this.journal.append({
      kind: 'reconcileStart',
      controller: this.name,
      key,
      triggers,
      attempt: this.keys.get(key)?.reconciles ?? 1,
      ...(generation !== undefined ? { generation } : {}),
      ...(run.queue.kind === 'priority' ? { priority } : {}),
      via,
    }).seq;
    this.checkHotLoop(key, startedAt, primaryObject !== undefined, generation, triggers);
    this.inFlight++;
    this.statusChanged();
    let outcome: ReconcileOutcome = { kind: 'cancelled', message: 'not run' };
    try {
      const res = await this.invoke(run, key);
      outcome = this.applyResult(run, key, res, priority);
    } catch (e) {
      // applyResult itself failed: report, never crash the worker.
      outcome = { kind: 'error', message: `internal: ${errorMessage(e)}` };
      this.log.error('result handling failed', { key, error: errorMessage(e) });
    } finally {
      try {
        const end = this.clock.now();
        this.keys.end(key, outcome, end - startedAt, end);
        this.journal.append({ kind: 'reconcileEnd', controller: this.name, key, outcome, durationMs: end - startedAt });
        this.selfWrites.set(key, this.countSelfWrites(key, startSeq));
      } finally {
        this.inFlight--;
        run.queue.done(key);
        this.statusChanged();
      }
    }
    this.pruneIfGone(key, outcome);
    return outcome;
  }

  private async invoke(run: Run, key: ObjectKey): Promise<InvokeResult> {
    // A reconcile of this key abandoned by an earlier stop() may still run: never run two at once.
    const straggler = this.stragglers.get(key);
    if (straggler) {
      // Say so: otherwise the key reads "processing" with no call running, and with one worker every other key starves.
      this.warn(
        'abandonedReconcile',
        `${key} waits for its reconcile abandoned when the controller stopped, which has not returned yet: the two never run at once, so this reconcile and its worker wait. A reconcile that ignores ctx.signal (aborted on stop) and never settles holds its key for good: pass the signal on; reconnecting starts a new controller without it`,
        key,
      );
      await raceAbort(straggler, run.abort.signal).catch(() => undefined);
    }
    if (run.abort.signal.aborted) return { ok: false, error: run.abort.signal.reason };
    const ac = new AbortController();
    const onStop = () => ac.abort(run.abort.signal.reason);
    if (run.abort.signal.aborted) onStop();
    else run.abort.signal.addEventListener('abort', onStop, { once: true });
    const startedAt = this.clock.now();
    // At the deadline the signal is aborted; a call still running LATE_GRACE_MS later ignores it: say so while it
    // runs (once), not only when (if ever) it returns.
    let lateTimer: TimerHandle | undefined;
    let warnedRunning = false;
    const timer =
      this.timeoutMs > 0
        ? this.clock.setTimeout(() => {
            ac.abort(new ReconcileTimeoutError(this.timeoutMs));
            lateTimer = this.clock.setTimeout(() => {
              lateTimer = undefined;
              warnedRunning = true;
              this.warn('reconcileTimeout', `the reconcile of ${key} has not returned ${LATE_GRACE_MS / 1000} s after its ${this.timeoutMs} ms timeout aborted its signal: it ignores the signal, and the key stays in processing until it returns (pass ctx.signal on to client calls and waits)`, key);
            }, LATE_GRACE_MS + 1);
          }, this.timeoutMs)
        : undefined;
    let pending: Promise<Result> | undefined;
    const timedOut = () => ac.signal.aborted && ac.signal.reason instanceof ReconcileTimeoutError;
    try {
      const request = requestFor(key);
      const ctx = this.contextFactory(request, {
        controller: this.name,
        primary: {
          group: this.primary.resource.group,
          version: this.primary.resource.version,
          resource: this.primary.resource.resource,
          ...(this.primary.resource.subresources ? { subresources: this.primary.resource.subresources } : {}),
        },
        signal: ac.signal,
        log: this.log.child({ key }),
        cache: this.cache,
        journal: this.journal,
      });
      pending = Promise.resolve().then(() => this.reconciler.reconcile(request, ctx));
      // The deadline only aborts the signal; the call is awaited until it settles. Only stop() abandons it.
      const result = await raceAbort(pending, run.abort.signal);
      if (timedOut() && !warnedRunning) this.reportLate(key, startedAt, 'returned a result');
      return { ok: true, result: result ?? {} };
    } catch (e) {
      if (e instanceof Abandoned) {
        if (pending) this.watchAbandoned(key, pending);
        return { ok: false, error: e.reason };
      }
      if (timedOut()) {
        if (!warnedRunning) this.reportLate(key, startedAt, 'failed');
        return { ok: false, error: e, timedOut: true };
      }
      return { ok: false, error: e };
    } finally {
      if (timer !== undefined) this.clock.clearTimeout(timer);
      if (lateTimer !== undefined) this.clock.clearTimeout(lateTimer);
      run.abort.signal.removeEventListener('abort', onStop);
    }
  }

  /**
   * A reconcile settled after its deadline. One that stops within {@link LATE_GRACE_MS} of the abort honoured its
   * signal (its outcome says `timedOut`); one that settles later ignored it and held its key meanwhile: warn (unless
   * the warning given while it still ran said so already).
   */
  private reportLate(key: ObjectKey, startedAt: number, how: string): void {
    const ms = this.clock.now() - startedAt;
    if (ms - this.timeoutMs <= LATE_GRACE_MS) return;
    this.warn('reconcileTimeout', `the reconcile of ${key} ran past its ${this.timeoutMs} ms timeout and ${how} only after ${ms} ms: it did not stop when its signal was aborted at the deadline, and the key stayed in processing until then (pass ctx.signal on to client calls and waits)`, key);
  }

  /**
   * THE result switch (controller-runtime `reconcileHandler`): the only place
   * that decides what happens to a key after a reconcile.
   */
  private applyResult(run: Run, key: ObjectKey, res: InvokeResult, handedOutWith: number): ReconcileOutcome {
    const q = run.queue;
    const verdict = classify(res, run.abort.signal.aborted);
    // controller-runtime: the re-add keeps the priority the key was handed out with, unless Result.priority says
    // otherwise, also for a retry after an error (Go returns both); a thrown error carries it as its `priority`.
    const asked = res.ok ? res.result.priority : priorityOfError(res.error);
    const priority = typeof asked === 'number' && Number.isFinite(asked) ? asked : handedOutWith;
    switch (verdict.kind) {
      case 'cancelled':
        return { kind: 'cancelled', message: verdict.message };
      case 'terminal':
        // Not requeued. Like controller-runtime, the failure count is NOT forgotten: only a later success resets it.
        this.warnIgnoredResult(key, verdict.ignored);
        // controller-runtime logs every non-nil error ("Reconciler error"), a terminal one too.
        this.log.info('Reconciler error', { key, error: verdict.message, terminal: true });
        return { kind: 'terminal', message: verdict.message, ...(verdict.ignored !== undefined ? { ignored: verdict.ignored } : {}) };
      case 'error': {
        this.keys.expectWait(key, { kind: 'backoff', attempt: q.numRequeues(key) + 1, error: verdict.message });
        q.addWithOpts({ rateLimited: true, priority }, key);
        this.keys.clearExpectation(key);
        const retryAt = q.waitingUntil(key) ?? (q.isDirty(key) ? this.clock.now() : undefined);
        const failures = q.numRequeues(key);
        // controller-runtime logs every failed reconcile ("Reconciler error"); so do we, at info (the journal has the entry too).
        this.warnIgnoredResult(key, verdict.ignored);
        this.log.info('Reconciler error', { key, error: verdict.message, failures, ...(retryAt !== undefined ? { retryInMs: Math.max(0, retryAt - this.clock.now()) } : {}) });
        return { kind: 'error', message: verdict.message, ...(verdict.timedOut ? { timedOut: true } : {}), ...(retryAt !== undefined ? { retryAt } : {}), failures, ...(verdict.ignored !== undefined ? { ignored: verdict.ignored } : {}) };
      }
      case 'requeueAfter':
        q.forget(key);
        this.keys.expectWait(key, { kind: 'requeueAfter', afterMs: verdict.afterMs, ...(verdict.reason !== undefined ? { reason: verdict.reason } : {}) });
        q.addWithOpts({ afterMs: verdict.afterMs, priority }, key);
        this.keys.clearExpectation(key);
        return { kind: 'requeueAfter', afterMs: verdict.afterMs, ...(verdict.reason !== undefined ? { reason: verdict.reason } : {}) };
      case 'requeue': {
        // Deprecated Result.requeue: a rate-limited add (the failure count grows), as controller-runtime's reconcileHandler.
        this.keys.expectWait(key, { kind: 'backoff', attempt: q.numRequeues(key) + 1, ...(verdict.reason !== undefined ? { error: `requeue: ${verdict.reason}` } : {}) });
        q.addWithOpts({ rateLimited: true, priority }, key);
        this.keys.clearExpectation(key);
        const retryAt = q.waitingUntil(key) ?? (q.isDirty(key) ? this.clock.now() : undefined);
        return { kind: 'requeue', ...(verdict.reason !== undefined ? { reason: verdict.reason } : {}), ...(retryAt !== undefined ? { retryAt } : {}) };
      }
      case 'success':
        q.forget(key);
        return { kind: 'success' };
    }
  }

  /**
   * controller-runtime's warning when Reconcile returns a result together with an error: the result is dropped (an
   * error retries with backoff; a terminal one is not requeued). `ignored` names what was dropped.
   */
  private warnIgnoredResult(key: ObjectKey, ignored: string | undefined): void {
    if (ignored === undefined) return;
    this.log.info('the reconciler returned both a result and an error: the result is ignored (an error is retried with backoff, a terminal error is not requeued)', { key, ignored });
  }

  /**
   * Tracks a reconcile abandoned by stop() until it settles; the next reconcile of its key waits for it. One that
   * settles by failing with the stop itself (it passed `ctx.signal` on, as it should) is no news; any other ending
   * (it finished, or failed otherwise, after the stop) is a warning.
   */
  private watchAbandoned(key: ObjectKey, pending: Promise<unknown>): void {
    const report = (how: string | undefined) => {
      if (this.stragglers.get(key) === tracked) this.stragglers.delete(key);
      if (how !== undefined && !this.disposed) this.warn('abandonedReconcile', `a reconcile of ${key}, abandoned when the controller stopped, ${how} later`, key);
    };
    const tracked: Promise<unknown> = pending.then(
      () => report('finished'),
      (e) => report(causedByStop(e) ? undefined : `failed (${errorMessage(e)})`),
    );
    this.stragglers.set(key, tracked);
  }

  /** The successful writes since `sinceSeq` to the key's own object, and of those the ones to no subresource. */
  private countSelfWrites(key: ObjectKey, sinceSeq: number): { all: number; object: number } {
    const n = { all: 0, object: 0 };
    for (const e of this.journal.entries({ sinceSeq, kinds: ['write'], key })) {
      if (e.kind === 'write' && e.objectKey === key && e.resource === this.primaryResource && !e.error) {
        n.all++;
        if (!e.subresource) n.object++;
      }
    }
    return n;
  }

  private checkHotLoop(key: ObjectKey, at: number, present: boolean, generation: number | undefined, triggers: readonly EnqueueReason[]): void {
    if (!this.hotLoop) return;
    const self = this.selfWrites.get(key);
    const w = this.hotLoop.observe({ key, at, generation, present, triggers, selfWrites: self?.all ?? 0, selfObjectWrites: self?.object ?? 0 });
    if (!w) return;
    this.keys.setWarning(key, w.message);
    this.clearHotLoopWarningWhenQuiet(key, w.message);
    this.warn('hotLoop', w.message, key, { count: w.count, spanMs: w.spanMs, ...(w.generation !== undefined ? { generation: w.generation } : {}), cause: w.cause });
  }

  /**
   * A hot-loop warning describes a loop going on: once the key stops looping (its code was fixed, a predicate
   * turned on), the warning leaves the key (the journal keeps it). Checked once per hot-loop window while the
   * warning stands; the timer belongs to the controller and is cleared on stop and dispose.
   */
  private clearHotLoopWarningWhenQuiet(key: ObjectKey, message: string): void {
    const detector = this.hotLoop;
    if (!detector) return;
    const pending = this.hotLoopClears.get(key);
    if (pending) {
      pending.message = message;
      return;
    }
    const check = () => {
      const latest = this.hotLoopClears.get(key)?.message;
      this.hotLoopClears.delete(key);
      if (this.disposed || latest === undefined || this.keys.get(key)?.warning !== latest) return;
      if (detector.looping(key, this.clock.now())) {
        this.hotLoopClears.set(key, { timer: this.clock.setTimeout(check, detector.window), message: latest });
        return;
      }
      this.keys.setWarning(key, undefined);
    };
    this.hotLoopClears.set(key, { timer: this.clock.setTimeout(check, detector.window), message });
  }

  private checkFieldFight(oldObj: KubeObject, newObj: KubeObject): void {
    if (!this.fieldFight) return;
    const key = keyOf(newObj);
    for (const w of this.fieldFight.observe(key, oldObj, newObj, this.clock.now())) {
      this.keys.setWarning(key, w.message);
      this.warn('fieldManagerFight', w.message, key, { field: w.field, managers: [...w.managers], flips: w.flips, spanMs: w.spanMs });
    }
  }

  private pruneIfGone(key: ObjectKey, outcome: ReconcileOutcome): void {
    if (outcome.kind !== 'success' && outcome.kind !== 'terminal') return;
    if (this.primary.getIndexer().getByKey(key)) return;
    if (this.run?.queue.waitingUntil(key) !== undefined) return;
    if (this.keys.delete(key)) {
      this.selfWrites.delete(key);
      this.hotLoop?.forget(key);
      this.fieldFight?.forget(key);
    }
  }

  private warn(code: string, message: string, key: ObjectKey | undefined, details?: Record<string, unknown>): void {
    this.log.warn(message, { key, code, [JOURNALED_FIELD]: true });
    this.journal.append({ kind: 'warning', controller: this.name, ...(key !== undefined ? { key } : {}), code, message, ...(details ? { details } : {}) });
  }

  // ---- debugger controls -----------------------------------------------------------------------

  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.pauseGate.abort(new Error('paused'));
    this.journal.append({ kind: 'control', action: 'pause', controller: this.name });
    this.statusChanged();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.pauseGate = new AbortController();
    this.wakeResumeWaiters();
    this.journal.append({ kind: 'control', action: 'resume', controller: this.name });
    this.statusChanged();
  }

  private wakeResumeWaiters(): void {
    const ws = this.resumeWaiters;
    this.resumeWaiters = [];
    for (const w of ws) w();
  }

  async step(options: StepOptions = {}): Promise<StepResult> {
    const run = this.run;
    if (!run || this.state !== 'running') return { kind: 'notRunning' };
    this.pause();
    const q = run.queue;
    let key = options.key;
    if (key !== undefined) {
      requestFor(key); // validates the key
      if (q.isProcessing(key)) return { kind: 'busy', key };
      if (!q.isDirty(key)) {
        const dueAt = q.waitingUntil(key);
        const waiting = this.keys.get(key)?.waiting?.kind ?? 'requeueAfter';
        if (dueAt !== undefined && !options.force) return { kind: 'notReady', key, waiting, dueAt };
        if (dueAt !== undefined) q.cancelWait(key);
        const note = dueAt !== undefined ? `forced before its ${waiting} wait ended` : undefined;
        this.enqueueFor(run, key, { kind: 'manual', action: 'step', ...(note ? { note } : {}), at: this.clock.now() });
      }
      if (!q.take(key)) return { kind: 'notRunning' };
    } else {
      key = q.tryGet();
      if (key === undefined) {
        const n = q.nextWaiting();
        if (!n) return { kind: 'empty' };
        return { kind: 'empty', next: { key: n.item, dueAt: n.readyAt, waiting: this.keys.get(n.item)?.waiting?.kind ?? 'requeueAfter' } };
      }
    }
    this.journal.append({ kind: 'control', action: 'step', controller: this.name, key, ...(options.force ? { detail: 'force' } : {}) });
    const outcome = await this.track(run, this.process(run, key, 'step'));
    const st = this.keys.get(key);
    return { kind: 'reconciled', key, outcome, durationMs: st?.lastDurationMs ?? 0, triggers: st?.lastTriggers ?? [] };
  }

  reconcileNow(key: ObjectKey): boolean {
    const run = this.activeRun();
    if (!run) return false;
    requestFor(key);
    const skipped = run.queue.cancelWait(key);
    this.journal.append({ kind: 'control', action: 'reconcileNow', controller: this.name, key, ...(skipped ? { detail: 'skipped a pending wait' } : {}) });
    this.enqueueFor(run, key, { kind: 'manual', action: 'reconcileNow', at: this.clock.now() });
    return true;
  }

  resetBackoff(key: ObjectKey): boolean {
    const run = this.activeRun();
    if (!run) return false;
    requestFor(key);
    const q = run.queue;
    q.forget(key);
    this.journal.append({ kind: 'control', action: 'resetBackoff', controller: this.name, key });
    if (this.keys.get(key)?.waiting?.kind === 'backoff' && q.cancelWait(key)) {
      this.enqueueFor(run, key, { kind: 'manual', action: 'resetBackoff', at: this.clock.now() });
    } else {
      this.keys.touch(key);
    }
    return true;
  }

  enqueue(key: ObjectKey, note?: string): boolean {
    const run = this.activeRun();
    if (!run) return false;
    requestFor(key);
    this.journal.append({ kind: 'control', action: 'enqueue', controller: this.name, key, ...(note ? { detail: note } : {}) });
    this.enqueueFor(run, key, { kind: 'manual', action: 'enqueue', ...(note ? { note } : {}), at: this.clock.now() });
    return true;
  }

  retryBackoffsNow(note: string): ObjectKey[] {
    const run = this.activeRun();
    if (!run) return [];
    const keys = this.keys.briefs().filter((b) => b.phase === 'backoff').map((b) => b.key);
    for (const key of keys) {
      requestFor(key);
      run.queue.cancelWait(key);
      this.journal.append({ kind: 'control', action: 'enqueue', controller: this.name, key, detail: note, automatic: true });
      this.enqueueFor(run, key, { kind: 'manual', action: 'enqueue', note, at: this.clock.now() });
    }
    return keys;
  }

  private activeRun(): Run | undefined {
    const run = this.run;
    return run && !run.abort.signal.aborted ? run : undefined;
  }

  // ---- state -----------------------------------------------------------------------------------

  keyState(key: ObjectKey): KeyState | undefined {
    return this.keys.get(key);
  }

  queuedKeys(limit?: number): ObjectKey[] {
    return this.run?.queue.queuedItems(limit) ?? [];
  }

  keyBriefs(): KeyBrief[] {
    return this.keys.briefs();
  }

  keyCounts(): KeyCounts {
    return this.keys.counts();
  }

  listedKeyBriefs(withoutQueued?: boolean): KeyBrief[] {
    return this.keys.listedBriefs(withoutQueued);
  }

  snapshot(): ControllerSnapshot {
    const q = this.run?.queue;
    return {
      at: this.clock.now(),
      status: this.status(),
      queue: q?.queuedItems() ?? [],
      waiting: (q?.waitingItems() ?? []).map((w) => ({ key: w.item, dueAt: w.readyAt, kind: this.keys.get(w.item)?.waiting?.kind ?? 'requeueAfter' })),
      keys: this.keys.all(),
    };
  }
}

type Verdict =
  | { kind: 'cancelled'; message: string }
  | { kind: 'terminal'; message: string; ignored?: string }
  | { kind: 'error'; message: string; timedOut: boolean; ignored?: string }
  | { kind: 'requeueAfter'; afterMs: number; reason?: string }
  | { kind: 'requeue'; reason?: string }
  | { kind: 'success' };

/**
 * What a thrown error says was dropped from a result returned with it: its own string `ignoredResult` property (the
 * exec reconciler's `requeueAfterMs` beside `error`; a module may set it too). Undefined when it has none.
 */
function ignoredResultOf(error: unknown): string | undefined {
  const v = error !== null && typeof error === 'object' ? (error as { ignoredResult?: unknown }).ignoredResult : undefined;
  return typeof v === 'string' && v ? v : undefined;
}

/**
 * The priority a thrown error asks its retry to run with: its own `priority` property (a module's
 * `throw Object.assign(new Error('…'), { priority: 10 })`, the exec output's `priority` beside `error`), controller-
 * runtime's `Result.Priority` returned together with an error. Undefined when it has none.
 */
function priorityOfError(e: unknown): unknown {
  return typeof e === 'object' && e !== null && 'priority' in e ? (e as { priority: unknown }).priority : undefined;
}

function classify(res: InvokeResult, stopping: boolean): Verdict {
  if (!res.ok) {
    const message = errorMessage(res.error);
    if (stopping || res.error instanceof ControllerStoppedError) return { kind: 'cancelled', message };
    const ignored = ignoredResultOf(res.error);
    const lost = ignored !== undefined ? { ignored } : {};
    if (isTerminal(res.error)) return { kind: 'terminal', message, ...lost };
    return { kind: 'error', message, timedOut: res.timedOut === true || res.error instanceof ReconcileTimeoutError, ...lost };
  }
  const after = res.result.requeueAfterMs;
  if (typeof after === 'number' && after > 0) return { kind: 'requeueAfter', afterMs: after, ...(res.result.reason !== undefined ? { reason: res.result.reason } : {}) };
  if (res.result.requeue === true) return { kind: 'requeue', ...(res.result.reason !== undefined ? { reason: res.result.reason } : {}) };
  return { kind: 'success' };
}

function requestFor(key: ObjectKey): Request {
  const { namespace, name } = splitKey(key);
  return namespace !== undefined ? { key, namespace, name } : { key, name };
}

/** Settles like `p`, or rejects with {@link Abandoned} as soon as `signal` aborts. */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Abandoned(signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Abandoned(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  if (typeof e === 'string') return e;
  try {
    return JSON.stringify(e) ?? String(e);
  } catch {
    return String(e);
  }
}
