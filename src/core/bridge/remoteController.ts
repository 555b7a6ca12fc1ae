import { parseFieldSelector } from '../cache/fieldSelector.ts';
import { parseLabelSelector } from '../cache/labelSelector.ts';
import type { Clock } from '../clock.ts';
import { Emitter, type Event } from '../event.ts';
import { JOURNALED_FIELD, type Logger } from '../log.ts';
import type { Disposable } from '../lifecycle.ts';
import type { Journal, QueueTransition } from '../journal/journal.ts';
import { splitKey, type ObjectKey } from '../k8s/keys.ts';
import type { GroupVersionResource, KubeObject } from '../k8s/objects.ts';
import type { Controller, ControllerSnapshot, ControllerStatus, StepOptions, StepResult } from '../controller/controller.ts';
import { HotLoopDetector } from '../controller/hotLoop.ts';
import { KeyStateTable, type EnqueueReason, type KeyBrief, type KeyCounts, type KeyState, type ReconcileOutcome, type WaitKind } from '../controller/keyState.ts';
import { bridgeResourceName, outcomeOfEnd, reasonOfCause, writeRecordOf, writeTarget } from './causes.ts';
import type { Cause, ControllerMessage, QueueMessage, ReconcileEndMessage, ReconcileStartMessage, ReplyMessage, WireWrite, WriteMessage } from './protocol.ts';
import type { CommandOp } from './protocol.ts';
import { isRecord } from '../record.ts';

/** The Go queue's reply to a step or dry-run that its shutdown ended (bridge/queue.go). */
const QUEUE_SHUT_DOWN = /the controller's queue shut down/;

/** How many deleted objects' keys a controller remembers as deleted (see RemoteController.deletedObjects). */
const MAX_DELETED_MARKS = 10_000;

/** Events of another resource on the keys' own names, before any of the announced one, that mean Wrap got the wrong kind. */
const FOR_MISMATCH_EVENTS = 3;

/** What a RemoteController needs from its process: sending commands and knowing whether it is there. */
export interface RemoteEndpoint {
  /**
   * Sends a command; rejects when not connected, on timeout (not responding) or when the connection closes.
   * `onReply`, when the endpoint supports it, runs synchronously as the reply is read, before any message after it.
   */
  request(cmd: { op: CommandOp; controller: string; key?: string; force?: boolean; resource?: string }, options?: { timeoutMs?: number; onReply?: (r: ReplyMessage) => void }): Promise<ReplyMessage>;
  /** The socket is open (the process may still be silent at a breakpoint). */
  readonly connected: boolean;
  /** Shown in messages: "go process 1234 (./cmd)". */
  readonly description: string;
  /** The resources the process's cache has informers for ("plural.version.group"), when it said. */
  readonly cachedResources?: readonly string[];
  /** Fires when {@link cachedResources} changes. */
  readonly onDidChangeCachedResources?: Event<void>;
}

/** A dry-run step's result: the reconcile and the writes it would have made (each sent as DryRunAll). */
export interface RemoteDryRun {
  readonly key: ObjectKey;
  readonly outcome: ReconcileOutcome;
  readonly durationMs: number;
  readonly writes: readonly WireWrite[];
}

export interface RemoteControllerOptions {
  announce: ControllerMessage;
  endpoint: RemoteEndpoint;
  journal: Journal;
  clock: Clock;
  log: Logger;
  /** Reply timeout of quick commands (pause, resume, reset backoff, reconcile now). Default 5 s. */
  commandTimeoutMs?: number;
  maxReasonsPerKey?: number;
}

/** How a Go controller turns on the generation-changed predicate (completes the hot-loop advice). */
export const GO_PREDICATE_ADVICE = 'add builder.WithPredicates(predicate.GenerationChangedPredicate{}) to the For(&YourKind{}, …) of its SetupWithManager (a status write then queues nothing)';

/**
 * A controller that runs in a Go process (controller-runtime, through the
 * bridge), seen through the same {@link Controller} interface as the built-in
 * loop: its key states and journal entries are rebuilt from the queue and
 * reconcile messages the process sends, and the debugger controls are sent to
 * it as commands.
 *
 * Contracts beyond {@link Controller}:
 * - state is `running` while the process's socket is open (also while it is
 *   silent at a breakpoint) and `stopped` once it closed;
 * - `stop()` cannot stop a remote queue: it pauses it (stop the process to end it);
 * - `step()` waits for the reconcile however long it takes (a breakpoint may
 *   hold it); it rejects only when the process disconnects or refuses;
 * - pause/resume/reconcileNow/resetBackoff/enqueue return at once; a refusal or
 *   a missing reply is logged and journaled as a warning.
 */
export class RemoteController implements Controller {
  readonly name: string;
  readonly journal: Journal;
  private info: ControllerMessage;
  private readonly endpoint: RemoteEndpoint;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly commandTimeoutMs: number;
  private readonly keys: KeyStateTable;
  private readonly failures = new Map<ObjectKey, number>();
  /** Queued keys with their priority, in insertion order. */
  private readonly queued = new Map<ObjectKey, number>();
  private readonly processing = new Set<ObjectKey>();
  /** Keys handed out whose reconcile has not been reported yet (a done without one: no bridge.Wrap under this name). */
  private readonly unreported = new Set<ObjectKey>();
  /** The "not wrapped" warning was given (once per controller). */
  private warnedNotWrapped = false;
  /** Whether the controller's resource is namespaced, once {@link setResourceNamespaced} said (from discovery). */
  private resourceNamespaced: boolean | undefined;
  /** The namespaced-key-of-a-cluster-scoped-resource warning was given (once per controller). */
  private warnedNamespacedKey = false;
  /** The first key with a namespace queued before the resource's scope was known, with its causes. */
  private readonly earlyNamespacedKeys = new Map<ObjectKey, readonly Cause[] | undefined>();
  /** The wiring hints said already ({@link noteHints}). */
  private readonly toldHints = new Set<string>();
  /** See {@link noteForObject}: events of other resources on the keys' own names, until decided (`done`). */
  private readonly forMismatch = { done: false, other: new Map<string, number>() };
  private readonly dirty = new Set<ObjectKey>();
  private readonly waiting = new Map<ObjectKey, { dueAt: number; kind: WaitKind }>();
  /** The key handed out last (names the key of a keyless step whose reply carries no reconcile). */
  private lastProcessed: ObjectKey | undefined;
  private readonly stepping = new Set<ObjectKey>();
  /**
   * A step without a key (Step on the head of the queue) in flight: the first reconcile that starts meanwhile is its
   * own (the queue is paused, so no worker hands out another), journaled as a step like a step of a named key.
   */
  private keylessStep: { claimed: boolean } | undefined;
  /**
   * The end of a reconcile that failed (or asked for the deprecated rate-limited requeue), not journaled yet:
   * controller-runtime schedules the retry after Reconcile returned (the priority queue even after the key's
   * done: it buffers adds), so the end is journaled when the key's backoff transition comes, with the retry's
   * time and failure count as the built-in loop's end entry carries them (as it is when the key is handed out
   * again, another end comes, or the queue goes away first).
   */
  private readonly pendingEnds = new Map<ObjectKey, { outcome: ReconcileOutcome; durationMs: number; at: number }>();
  /**
   * Hot loops of the Go controller, told as the built-in loop's are: a key reconciled again and again by events while
   * its generation stays the same (a status written on every pass re-triggers the watch).
   */
  private readonly hotLoop = new HotLoopDetector({ predicateAdvice: GO_PREDICATE_ADVICE });
  /**
   * Keys whose object's latest own event (an informer cause naming the key itself) was its delete: once such a key's
   * reconcile succeeds and it goes idle, it is forgotten ({@link pruneIfGone}), as the built-in loop forgets a key
   * whose object is gone. A later add or update of the object takes the key off.
   */
  private readonly deletedObjects = new Set<ObjectKey>();
  /** The key's object's generation from its latest informer cause (null: seen, a kind without generation). */
  private readonly generations = new Map<ObjectKey, number | null>();
  /**
   * Successful writes of the key's reconcile (the latest started) to its own object: the next one's selfWrites, and
   * of them those to the object itself (no subresource: metadata or spec), the next one's selfObjectWrites.
   */
  private readonly ownWrites = new Map<ObjectKey, { all: number; object: number }>();
  /** The hot-loop warning the key carries, cleared at a reconcile once the key no longer loops. */
  private readonly hotLoopWarnings = new Map<ObjectKey, string>();
  /** This controller's recent writes that changed their object: `objectKey@resourceVersionAfter` → the reconciled key. */
  private pausedValue: boolean;
  private shutdown = false;
  private labelsOf: ((key: ObjectKey) => Readonly<Record<string, string>> | undefined) | undefined;
  private readonly statusEmitter = new Emitter<ControllerStatus>();
  readonly onDidChangeStatus: Event<ControllerStatus> = this.statusEmitter.event;
  readonly onDidChangeKeyState: Event<KeyState>;
  readonly onDidChangeKey: Event<ObjectKey>;

  constructor(o: RemoteControllerOptions) {
    this.name = o.announce.name;
    this.info = o.announce;
    this.endpoint = o.endpoint;
    this.journal = o.journal;
    this.clock = o.clock;
    this.log = o.log.child({ controller: o.announce.name });
    this.commandTimeoutMs = o.commandTimeoutMs ?? 5000;
    this.pausedValue = o.announce.paused;
    this.keys = new KeyStateTable({
      now: () => this.clock.now(),
      numRequeues: (k) => this.failures.get(k) ?? 0,
      ...(o.maxReasonsPerKey !== undefined ? { maxReasons: o.maxReasonsPerKey } : {}),
    });
    this.onDidChangeKeyState = this.keys.onDidChange;
    this.onDidChangeKey = this.keys.onDidChangeKey;
    this.journal.append({ kind: 'control', action: 'start', controller: this.name, detail: `${this.endpoint.description}${this.info.paused ? ', paused' : ''}` });
    this.noteScopeUnknown(undefined);
    this.noteHints();
    if (this.info.noSetup) {
      this.warn(
        'noSetup',
        `${this.name}: the program's manager client and cache are not the bridge's (bridge.Setup(&options) is not called before ctrl.NewManager): its writes are not journaled, why-queued cannot name the event that queued a key (it reads "added outside an informer event"), and dry-run is refused. Call bridge.Setup(&options) on the manager options before ctrl.NewManager`,
        undefined,
      );
    }
  }

  /**
   * Says each of the announcement's wiring hints once (in the log and the journal, as a warning: the CLI shows it
   * without -v, the editor in the Event Log), however often the controller is announced again.
   */
  private noteHints(): void {
    for (const hint of this.info.hints ?? []) {
      if (this.toldHints.has(hint)) continue;
      this.toldHints.add(hint);
      this.warn('wiring', `${this.name}: ${hint}`, undefined);
    }
  }

  /** Says once per reason (in the log and the journal) that the process cannot tell its cache's scope. */
  private noteScopeUnknown(before: string | undefined): void {
    const why = this.info.cacheScopeUnknown;
    if (why && why !== before) {
      this.warn('cacheScopeUnknown', `${this.name}: Reconcile Lab cannot tell which objects its manager's cache holds (${why}); no object is marked or refused as outside its cache`, undefined);
    }
  }

  /** What the process announced: resource, priority queue, leader election, reconciliation timeout. */
  get announcement(): ControllerMessage {
    return this.info;
  }

  /**
   * Why this controller never reconciles `key`: its manager's cache (cache.Options) watches its kind only in other
   * namespaces (the process then refuses to step the key too), or lists it in the key's namespace with a label
   * selector the object's `labels` do not match (given: the object's labels as the editor sees them), or with a
   * field selector on metadata.name / metadata.namespace the key does not match. controller-runtime never queues
   * such a key. Undefined when the key is inside, the process announced no scope (every object) or said its scope
   * is unknown, or the only selector that could leave it out names other fields (not known here).
   */
  outsideCache(key: string, labels?: Readonly<Record<string, string>>): string | undefined {
    const o = this.scopeCheck(key, labels);
    if (!o) return undefined;
    if (o.kind === 'namespace') return `outside ${this.name}'s cache (namespaces ${o.selector})`;
    return `outside ${this.name}'s cache (${o.kind} selector ${o.selector}${o.namespace !== undefined ? ` in ${o.namespace}` : ''})`;
  }

  /**
   * Where the editor finds the labels of the object of a key of this controller's kind (its own informer, or the
   * object the CLI read): step of a key not in the queue, reconcile now, enqueue and dry-run refuse an object the
   * cache's label selector leaves out. Without it (or when it returns undefined) nothing is refused on labels.
   * Disposing the result removes `labelsOf` only while it is still the one set (a later caller's stays): a view
   * that closes takes its informer's labels away, and the controller keeps no reference to it.
   */
  setObjectLabels(labelsOf: ((key: ObjectKey) => Readonly<Record<string, string>> | undefined) | undefined): Disposable {
    this.labelsOf = labelsOf;
    return {
      dispose: () => {
        if (this.labelsOf === labelsOf) this.labelsOf = undefined;
      },
    };
  }

  /**
   * The refusal of a command that adds `key` by hand when a selector of the cache leaves its object out (the
   * process refuses keys outside the cache's namespaces itself, in the same words); undefined otherwise.
   */
  selectorRefusal(key: ObjectKey): string | undefined {
    const labels = this.labelsOf?.(key);
    const o = this.scopeCheck(key, labels);
    if (!o || o.kind === 'namespace') return undefined;
    const kind = this.info.kind ? `${this.info.kind} objects` : 'objects';
    const where = o.namespace !== undefined ? ` in namespace ${o.namespace}` : '';
    const why =
      o.kind === 'label'
        ? `which its labels (${Object.entries(labels ?? {}).map(([k, v]) => `${k}=${v}`).join(', ') || 'none'}) do not match`
        : 'which it does not match';
    const also = o.uncheckedField ? ` (field selector ${o.uncheckedField} applies too; the editor does not check it)` : '';
    return `key ${key} is outside the cache of controller "${this.name}": its manager's cache (cache.Options) lists ${kind}${where} only with ${o.kind} selector ${o.selector}, ${why}${also}, so controller-runtime never queues it and its reconciler's Get through the cache finds nothing`;
  }

  /** What leaves `key` out of the cache (see {@link outsideCache}). */
  private scopeCheck(
    key: string,
    labels: Readonly<Record<string, string>> | undefined,
  ): { kind: 'namespace' | 'label' | 'field'; selector: string; namespace?: string; uncheckedField?: string } | undefined {
    const info = this.info;
    // A custom request type's key is a text, not an object key: the process refuses texts none of its items had.
    if (info.cacheScopeUnknown || info.requestType) return undefined;
    const slash = key.indexOf('/');
    const ns = slash >= 0 ? key.slice(0, slash) : '';
    const name = slash >= 0 ? key.slice(slash + 1) : key;
    const namespaces = info.cacheNamespaces;
    if (namespaces && ns && !namespaces.includes(ns)) return { kind: 'namespace', selector: namespaces.join(', ') };
    // The namespace's own entry, else cache.AllNamespaces' (""); cluster-scoped keys and no per-namespace config:
    // the kind-wide selectors.
    let label = info.cacheLabelSelector;
    let field = info.cacheFieldSelector;
    let where: string | undefined;
    if (ns && info.cacheSelectors) {
      const e = info.cacheSelectors.find((x) => x.namespace === ns) ?? info.cacheSelectors.find((x) => x.namespace === '');
      label = e?.label;
      field = e?.field;
      where = ns;
    }
    let fieldMatch: boolean | undefined;
    if (field) {
      try {
        fieldMatch = parseFieldSelector(field).matchesKey(ns, name);
      } catch {
        // A selector this side cannot parse claims nothing.
      }
    }
    if (fieldMatch === false) return { kind: 'field', selector: field!, ...(where !== undefined ? { namespace: where } : {}) };
    if (label && labels !== undefined) {
      let matches = true;
      try {
        matches = parseLabelSelector(label).matches(labels);
      } catch {
        // A selector this side cannot parse claims nothing.
      }
      if (!matches) return { kind: 'label', selector: label, ...(where !== undefined ? { namespace: where } : {}), ...(field && fieldMatch === undefined ? { uncheckedField: field } : {}) };
    }
    return undefined;
  }

  /**
   * Tells the controller whether its resource is namespaced (the caller read it from the cluster's discovery). A key
   * with a namespace queued for a cluster-scoped resource (before or after this call) is then said once per
   * controller as a warning ({@link noteNamespacedKey}).
   */
  setResourceNamespaced(namespaced: boolean): void {
    this.resourceNamespaced = namespaced;
    for (const [key, causes] of this.earlyNamespacedKeys) this.noteNamespacedKey(key, causes);
    this.earlyNamespacedKeys.clear();
  }

  /**
   * Says once when `key` has a namespace but the controller's resource is cluster-scoped: the request was built
   * with a Namespace (typically by a mapping function copying the namespace of the watched object). controller-runtime
   * queues it apart from the key without one, so the same object is reconciled under two keys, possibly at once, and
   * the views find no object for it. Keys of a custom request type are texts and are left alone. Until the scope is
   * known, the first such key is kept to be judged then.
   */
  private noteNamespacedKey(key: ObjectKey, causes: readonly Cause[] | undefined): void {
    if (this.warnedNamespacedKey || this.info.requestType || !key.includes('/')) return;
    if (this.resourceNamespaced === undefined) {
      if (this.earlyNamespacedKeys.size === 0) this.earlyNamespacedKeys.set(key, causes);
      return;
    }
    if (this.resourceNamespaced) return;
    this.warnedNamespacedKey = true;
    const slash = key.indexOf('/');
    const ns = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const by = causes?.find((c) => c.kind === 'watch' && c.objectKey);
    const how = by ? ` (queued by the ${by.event ?? 'event'} of ${by.objectKind ?? by.resource ?? 'object'} ${by.objectKey} through a mapped watch)` : '';
    const kind = this.info.kind ?? this.resourceId ?? 'its resource';
    this.warn(
      'namespacedKeyOfClusterScoped',
      `controller ${this.name} queued ${key}, a key with a namespace, but ${kind} (${this.resourceId}) is cluster-scoped${how}: the reconcile.Request was built with Namespace "${ns}". controller-runtime queues it apart from ${name}, so the same object is reconciled under two keys (and may be reconciled twice at once), and the views find no object for ${key}. Build requests for a cluster-scoped kind without a namespace: types.NamespacedName{Name: ${JSON.stringify(name)}}`,
      key,
    );
  }

  /** The reconciled resource as "plural.group" ("configmaps" for the core group), when announced. */
  get resourceId(): string | undefined {
    if (!this.info.resource) return undefined;
    return this.info.group ? `${this.info.resource}.${this.info.group}` : this.info.resource;
  }

  // ---- messages from the process ----------------------------------------------------------------------------

  /** The process announced (or re-announced after a reconnect) this controller. */
  announce(m: ControllerMessage): void {
    const before = this.info.cacheScopeUnknown;
    this.info = m;
    this.noteScopeUnknown(before);
    this.noteHints();
    this.shutdown = false;
    this.pausedValue = m.paused;
    this.statusChanged();
  }

  /** The process is gone (or the connection closed): no queue any more; key history is kept. */
  disconnected(): void {
    this.flushEnds();
    this.clearQueueState();
    this.journal.append({ kind: 'control', action: 'stop', controller: this.name, detail: `${this.endpoint.description} disconnected` });
    this.statusChanged();
  }

  onQueue(m: QueueMessage): void {
    const key = m.key;
    if (m.causes) this.noteObjectEvents(key, m.causes);
    switch (m.transition) {
      case 'added':
        if (m.causes) this.noteForObject(key, m.causes);
        this.noteNamespacedKey(key, m.causes);
        for (const c of m.causes ?? []) this.keys.addReason(key, reasonOfCause(c), false);
        this.markQueued(key, m.priority);
        this.keys.publishPending(key);
        break;
      case 'waiting':
      case 'backoff': {
        const kind: WaitKind = m.transition === 'backoff' ? 'backoff' : 'requeueAfter';
        const dueAt = m.dueAt ?? m.at + (m.delayMs ?? 0);
        if (m.failures !== undefined) this.failures.set(key, m.failures);
        const pending = kind === 'backoff' ? this.pendingEnds.get(key) : undefined;
        if (pending?.outcome.kind === 'error') {
          // retryDelayMs: the rate limiter's delay, when it alone set the due time (not an earlier wait kept).
          pending.outcome = { ...pending.outcome, retryAt: dueAt, failures: m.failures ?? this.failures.get(key) ?? 0, ...(m.delayMs !== undefined && dueAt === m.at + m.delayMs ? { retryDelayMs: m.delayMs } : {}) };
        }
        else if (pending?.outcome.kind === 'requeue') pending.outcome = { ...pending.outcome, retryAt: dueAt };
        if (pending) this.flushEnd(key);
        const lastError = this.keys.get(key)?.lastError;
        this.keys.expectWait(
          key,
          kind === 'backoff'
            ? { kind, attempt: m.failures ?? this.failures.get(key) ?? 0, ...(lastError !== undefined ? { error: lastError } : {}) }
            : { kind, afterMs: m.delayMs ?? Math.max(0, dueAt - m.at) },
        );
        for (const c of m.causes ?? []) {
          const r = reasonOfCause(c);
          // A backoff retry's cause names the error that set it, as the built-in loop's does.
          this.keys.addReason(key, r.kind === 'backoff' && r.error === undefined && lastError !== undefined ? { ...r, error: lastError } : r, false);
        }
        this.waiting.set(key, { dueAt, kind });
        this.keys.onQueueEvent({ type: 'wait', item: key, readyAt: dueAt });
        this.journal.append({ kind: 'queue', controller: this.name, key, transition: 'waiting', dueAt, waitKind: kind });
        break;
      }
      case 'ready':
        // The wait ended (its cause was reported when it began) or an add made a waiting key ready now.
        for (const c of m.causes ?? []) this.keys.addReason(key, reasonOfCause(c), false);
        if (this.waiting.delete(key)) {
          this.keys.onQueueEvent({ type: 'cancelWait', item: key });
          this.queueEntry(key, 'ready');
        }
        this.markQueued(key, m.priority);
        this.keys.publishPending(key);
        break;
      case 'processing':
        this.flushEnd(key); // its backoff never came (a lost message): journal the end as it is
        this.queued.delete(key);
        // A waiting key can be handed out with no "ready" before it: the Go queue reports ready from a timer of its
        // own, and a worker that takes the key first (the inner queue made it ready at the same moment) wins. The
        // wait is over either way; kept, it would read "requeue now" / "retry now" after the reconcile ended.
        if (this.waiting.delete(key)) this.keys.onQueueEvent({ type: 'cancelWait', item: key });
        // Handed out: an add seen while it was processing before was consumed by that done. (A snapshot reply can
        // overtake older queue messages; a stale dirty mark would otherwise requeue the key forever here.)
        this.dirty.delete(key);
        this.lastProcessed = key;
        this.processing.add(key);
        this.unreported.add(key);
        this.keys.onQueueEvent({ type: 'get', item: key });
        this.queueEntry(key, 'processing');
        break;
      case 'done': {
        this.processing.delete(key);
        if (this.unreported.delete(key)) this.warnNotWrapped(key);
        const requeued = this.dirty.delete(key);
        if (requeued) this.queued.set(key, m.priority ?? 0);
        this.keys.onQueueEvent({ type: 'done', item: key, requeued });
        this.queueEntry(key, requeued ? 'requeued' : 'done');
        if (!requeued) this.pruneIfGone(key);
        break;
      }
      case 'forgotten':
        this.failures.set(key, 0);
        this.keys.touch(key);
        break;
      case 'shutdown':
        this.flushEnds();
        this.shutdown = true;
        this.clearQueueState();
        this.journal.append({ kind: 'queue', controller: this.name, transition: 'shutdown' });
        break;
      default:
        this.log.debug('bridge: unknown queue transition ignored', { transition: m.transition });
        return;
    }
    this.statusChanged();
  }

  /** Follows whether the key's own object was deleted, from the informer causes of its queue messages (see {@link deletedObjects}). */
  private noteObjectEvents(key: ObjectKey, causes: readonly Cause[]): void {
    for (const c of causes) {
      if (c.kind !== 'informer' || c.objectKey !== key || c.event === undefined || c.event === 'generic') continue;
      this.deletedObjects.delete(key);
      if (c.event !== 'delete') continue;
      this.deletedObjects.add(key);
      // Bounded: the oldest marks (objects deleted long ago) go first.
      if (this.deletedObjects.size > MAX_DELETED_MARKS) this.deletedObjects.delete(this.deletedObjects.values().next().value!);
    }
  }

  /**
   * Forgets `key` (its key state goes with a last `removed` change, so the views drop it) when its object's delete
   * was seen and its reconcile after that ended in success or a terminal error with nothing queued or waiting: a
   * gone object's key has nothing more to show. The Work Queue view and the key pickers otherwise keep every key
   * the program ever queued — among them the copies the robustness checks made in their scratch namespaces, which a
   * controller watching every namespace queues while the checks run, and which are deleted with their namespaces.
   */
  private pruneIfGone(key: ObjectKey): void {
    if (!this.deletedObjects.has(key) || this.queued.has(key) || this.processing.has(key) || this.waiting.has(key) || this.pendingEnds.has(key)) return;
    const outcome = this.keys.get(key)?.lastOutcome?.kind;
    if (outcome !== 'success' && outcome !== 'terminal') return;
    // The mark stays (until the object is added again): a gone key handed out once more with no new event (the
    // program's queue may hand a key out twice for adds it coalesced) is forgotten again after that reconcile.
    if (!this.keys.delete(key)) return;
    this.failures.delete(key);
    this.generations.delete(key);
    this.ownWrites.delete(key);
    this.hotLoopWarnings.delete(key);
    this.hotLoop.forget(key);
  }

  onReconcileStart(m: ReconcileStartMessage): void {
    if (m.dryRun) return; // a dry-run step runs beside the queue: it changes no key state
    this.unreported.delete(m.key);
    this.noteObjectEvents(m.key, m.triggers);
    const triggers: EnqueueReason[] = m.triggers.map((c) => reasonOfCause(c));
    this.keys.begin(m.key, m.at, triggers.length > 0 ? triggers : undefined);
    this.checkHotLoop(m.key, m.at, m.triggers, triggers);
    const st = this.keys.get(m.key);
    this.journal.append({
      kind: 'reconcileStart',
      controller: this.name,
      key: m.key,
      triggers: [...(st?.lastTriggers ?? triggers)],
      attempt: st?.reconciles ?? 1,
      via: this.stepping.has(m.key) || this.claimKeylessStep() ? 'step' : 'worker',
    });
    this.statusChanged();
  }

  /** Whether a reconcile starting now is the one a keyless step in flight asked for (true once per such step). */
  private claimKeylessStep(): boolean {
    if (!this.keylessStep || this.keylessStep.claimed) return false;
    this.keylessStep.claimed = true;
    return true;
  }

  onReconcileEnd(m: ReconcileEndMessage): void {
    if (m.dryRun) return;
    const outcome = outcomeOfEnd(m);
    this.keys.end(m.key, outcome, m.durationMs, m.at);
    if (outcome.kind === 'error' || outcome.kind === 'requeue') {
      this.flushEnd(m.key); // an older one whose done never came (a lost message): journal it as it is
      this.pendingEnds.set(m.key, { outcome, durationMs: m.durationMs, at: m.at });
      return;
    }
    this.journal.append({ kind: 'reconcileEnd', controller: this.name, key: m.key, outcome, durationMs: m.durationMs });
    if (!this.processing.has(m.key)) this.pruneIfGone(m.key); // its done came first
  }

  /** Journals the held end of `key`'s reconcile (see pendingEnds), with its retry when the queue reported one. */
  private flushEnd(key: ObjectKey): void {
    const p = this.pendingEnds.get(key);
    if (!p) return;
    this.pendingEnds.delete(key);
    if (p.outcome.kind === 'error' ? p.outcome.retryAt !== undefined : p.outcome.kind === 'requeue' && p.outcome.retryAt !== undefined) this.keys.end(key, p.outcome, p.durationMs, p.at);
    this.journal.append({ kind: 'reconcileEnd', controller: this.name, key, outcome: p.outcome, durationMs: p.durationMs });
  }

  private flushEnds(): void {
    for (const key of [...this.pendingEnds.keys()]) this.flushEnd(key);
  }

  onWrite(m: WriteMessage): void {
    const w = m.write;
    this.journal.recordWrite(writeRecordOf(w, this.name, m.key));
    // A reconcile's own write to its key's object (what starts a self-triggered loop).
    if (m.key !== undefined && m.controller === this.name && !w.dryRun && !w.error && w.group === (this.info.group ?? '') && w.resource === this.info.resource && writeTarget(w) === m.key && this.ownWrites.has(m.key)) {
      const own = this.ownWrites.get(m.key)!;
      own.all++;
      if (!w.subresource) own.object++;
    }
  }

  /**
   * Feeds one reconcile start to the hot-loop detector: the object's generation is the one its latest informer
   * cause carried (the bridge sends it with the event), the previous reconcile's writes to the object are counted
   * from the write messages. A warning goes on the key and into the journal; it leaves the key at a later reconcile
   * once the key no longer loops (the journal keeps it).
   */
  private checkHotLoop(key: ObjectKey, at: number, causes: readonly Cause[], triggers: readonly EnqueueReason[]): void {
    for (const c of causes) {
      if (c.kind !== 'informer' || c.objectKey !== key) continue;
      if (c.event === 'delete') this.generations.delete(key);
      else this.generations.set(key, c.generation ?? null);
    }
    const seen = this.generations.get(key);
    const own = this.ownWrites.get(key) ?? { all: 0, object: 0 };
    this.ownWrites.set(key, { all: 0, object: 0 });
    const w = this.hotLoop.observe({ key, at, generation: seen ?? undefined, present: seen !== undefined, triggers, selfWrites: own.all, selfObjectWrites: own.object });
    const standing = this.hotLoopWarnings.get(key);
    if (w) {
      this.hotLoopWarnings.set(key, w.message);
      this.keys.setWarning(key, w.message);
      this.warn('hotLoop', w.message, key);
    } else if (standing !== undefined && !this.hotLoop.looping(key, at)) {
      this.hotLoopWarnings.delete(key);
      if (this.keys.get(key)?.warning === standing) this.keys.setWarning(key, undefined);
    }
  }

  /**
   * Rebuilds the queue state from the process's snapshot (after a connect or
   * reconnect, or when messages were dropped). Key history (reconciles,
   * outcomes, errors) is kept; why-queued causes are taken from the snapshot
   * only for keys that have none yet. Resolves false when the process did not
   * answer or sent no usable snapshot (the state then follows the messages).
   */
  async resync(): Promise<boolean> {
    // Applied as the reply is read (onReply): the queue messages the process sent after the snapshot, which may
    // be read in the same chunk before this method resumes, then apply on top of it instead of being wiped by it.
    let applied: boolean | undefined;
    let reply: ReplyMessage;
    try {
      reply = await this.endpoint.request({ op: 'snapshot', controller: this.name }, { timeoutMs: this.commandTimeoutMs, onReply: (r) => (applied = this.applySnapshot(r)) });
    } catch (e) {
      this.log.debug('bridge: no snapshot', { error: (e as Error).message });
      return false;
    }
    return applied ?? this.applySnapshot(reply);
  }

  /**
   * The process's own view of this controller's queue, read without changing the editor's state: whether its workers
   * started (controller-runtime starts them once the controller's watches synced and their handlers saw the initial
   * list) and the keys it holds. So once `workersStarted`, a controller paused from its start holds exactly the keys its
   * watches queued: an object of its resource that is not among them is one its predicates or event handlers leave
   * out. Undefined when the process did not answer or its bridge does not tell whether the workers started (older).
   */
  async queueSnapshot(): Promise<{ workersStarted: boolean; keys: string[] } | undefined> {
    let reply: ReplyMessage;
    try {
      reply = await this.endpoint.request({ op: 'snapshot', controller: this.name }, { timeoutMs: this.commandTimeoutMs });
    } catch (e) {
      this.log.debug('bridge: no snapshot', { error: (e as Error).message });
      return undefined;
    }
    const ctrls = reply.snapshot?.controllers;
    const snap = Array.isArray(ctrls) ? (ctrls as unknown[]).find((c): c is Record<string, unknown> => isRecord(c) && c.name === this.name) : undefined;
    if (!reply.ok || !snap || !Array.isArray(snap.keys) || typeof snap.workersStarted !== 'boolean') return undefined;
    const keys = (snap.keys as unknown[]).flatMap((e) => (isRecord(e) && typeof e.key === 'string' ? [e.key] : []));
    return { workersStarted: snap.workersStarted, keys };
  }

  /** Rebuilds the queue state from a snapshot reply (see {@link resync}); false when it holds no usable snapshot. */
  private applySnapshot(reply: ReplyMessage): boolean {
    const ctrls = reply.snapshot?.controllers;
    const snap = Array.isArray(ctrls) ? (ctrls as unknown[]).find((c): c is Record<string, unknown> => isRecord(c) && c.name === this.name) : undefined;
    if (!reply.ok || !snap || !Array.isArray(snap.keys)) return false;
    // Keys the messages already showed queued or processing (the initial list's adds usually arrive before the
    // reply) were journaled then: the rebuild sets their state again without a second "queued" entry.
    const wasQueued = new Set([...this.queued.keys(), ...this.processing]);
    this.clearQueueState();
    if (typeof snap.paused === 'boolean') this.pausedValue = snap.paused;
    for (const e of snap.keys as unknown[]) {
      if (!isRecord(e) || typeof e.key !== 'string') continue;
      const key = e.key;
      if (typeof e.failures === 'number') this.failures.set(key, e.failures);
      const causes = Array.isArray(e.causes) ? (e.causes as unknown[]).filter((c): c is Cause => isRecord(c) && typeof c.kind === 'string' && typeof c.at === 'number') : [];
      if ((this.keys.get(key)?.reasons.length ?? 0) === 0) for (const c of causes) this.keys.addReason(key, reasonOfCause(c), false);
      const priority = typeof e.priority === 'number' ? e.priority : undefined;
      if (e.state === 'processing') {
        this.markQueued(key, priority, !wasQueued.has(key));
        this.queued.delete(key);
        this.processing.add(key);
        this.keys.onQueueEvent({ type: 'get', item: key });
      } else if (e.state === 'ready') {
        this.markQueued(key, priority, !wasQueued.has(key));
      } else if (e.state === 'waiting' && typeof e.dueAt === 'number') {
        const kind: WaitKind = causes[causes.length - 1]?.kind === 'backoff' ? 'backoff' : 'requeueAfter';
        this.keys.expectWait(key, kind === 'backoff' ? { kind, attempt: this.failures.get(key) ?? 0 } : { kind, afterMs: Math.max(0, e.dueAt - this.clock.now()) });
        this.waiting.set(key, { dueAt: e.dueAt, kind });
        this.keys.onQueueEvent({ type: 'wait', item: key, readyAt: e.dueAt });
      }
      this.keys.publishPending(key);
    }
    this.statusChanged();
    return true;
  }

  // ---- Controller -------------------------------------------------------------------------------------------

  /** Resolves at once while the process is connected; a process that is gone cannot be started from here. */
  start(): Promise<void> {
    if (this.endpoint.connected && !this.shutdown) return Promise.resolve();
    return Promise.reject(new Error(`${this.endpoint.description} is not connected: run it again (Run Controller…, or F5 for a debug session)`));
  }

  /**
   * Pauses the remote queue (a remote controller is stopped by stopping its process). Journaled as the `stop` it
   * was asked for, with what it does, not as a `pause` nobody asked for.
   */
  stop(): Promise<void> {
    this.pauseAs({ kind: 'control', action: 'stop', controller: this.name, detail: 'queue paused: a Go program stops with its process' });
    return Promise.resolve();
  }

  status(): ControllerStatus {
    const running = this.endpoint.connected && !this.shutdown;
    return {
      name: this.name,
      state: running ? 'running' : 'stopped',
      paused: this.pausedValue,
      maxConcurrentReconciles: this.info.maxConcurrentReconciles ?? 1,
      workQueue: this.info.priorityQueue ? 'priority' : 'client-go',
      inFlight: this.processing.size,
      queueLength: this.queued.size,
      waiting: this.waiting.size,
    };
  }

  pause(): void {
    this.pauseAs({ kind: 'control', action: 'pause', controller: this.name });
  }

  /** Pauses the remote queue unless it is paused already, journaling `entry` (the action asked: pause or stop). */
  private pauseAs(entry: Parameters<Journal['append']>[0]): void {
    if (this.pausedValue) return;
    this.pausedValue = true;
    this.journal.append(entry);
    this.statusChanged();
    this.fire('pause');
  }

  resume(): void {
    if (!this.pausedValue) return;
    this.pausedValue = false;
    this.journal.append({ kind: 'control', action: 'resume', controller: this.name });
    this.statusChanged();
    this.fire('resume');
  }

  async step(options: StepOptions = {}): Promise<StepResult> {
    if (!this.endpoint.connected || this.shutdown) return { kind: 'notRunning' };
    const key = options.key;
    if (key !== undefined) {
      this.checkKey(key);
      if (this.processing.has(key)) return { kind: 'busy', key };
      // A step of this key already waits for its reconcile: a second one would queue behind it on the Go side and
      // answer only after it (with the process at a breakpoint, only once the developer continues).
      if (this.stepping.has(key)) return { kind: 'busy', key, stepping: true };
      const w = this.waiting.get(key);
      if (w && !this.queued.has(key) && !options.force) return { kind: 'notReady', key, waiting: w.kind, dueAt: w.dueAt };
    }
    // Like the built-in loop, stepping an idle key reconciles it (the remote queue needs `force` to add it).
    const force = options.force === true || (key !== undefined && !this.queued.has(key) && !this.waiting.has(key));
    // A key the queue holds is handed out as usual (e.g. the delete event of an object whose labels left the
    // cache's selector); one added by hand that the cache leaves out could only fail or find nothing.
    const refusal = key !== undefined && !this.queued.has(key) && !this.waiting.has(key) ? this.selectorRefusal(key) : undefined;
    if (refusal !== undefined) {
      this.warn('commandRefused', `step ${key} refused: ${refusal}`, key);
      throw new Error(`step refused: ${refusal}`);
    }
    if (!this.pausedValue) {
      this.pausedValue = true;
      this.statusChanged();
    }
    // A keyless step is journaled before the process says which key it handed out (its reconcile's rows follow): the
    // row says what was asked rather than showing an empty key.
    this.journal.append({ kind: 'control', action: 'step', controller: this.name, ...(key !== undefined ? { key } : {}), ...(force ? { detail: 'force' } : key === undefined ? { detail: 'the next key in its queue' } : {}) });
    if (key !== undefined) this.stepping.add(key);
    const keyless = key === undefined ? (this.keylessStep = { claimed: false }) : undefined;
    let reply: ReplyMessage;
    try {
      reply = await this.endpoint.request({ op: 'step', controller: this.name, ...(key !== undefined ? { key } : {}), ...(force ? { force: true } : {}) });
    } finally {
      if (key !== undefined) this.stepping.delete(key);
      if (keyless && this.keylessStep === keyless) this.keylessStep = undefined;
    }
    if (reply.ok && !reply.reconcile) {
      // The queue stepped, but the reconciler is not wrapped (bridge.Wrap): what we know comes from the queue.
      const k = key ?? this.lastProcessed;
      if (k !== undefined) this.warnNotWrapped(k);
      const st = k !== undefined ? this.keys.get(k) : undefined;
      if (k !== undefined) return { kind: 'reconciled', key: k, outcome: st?.lastOutcome ?? { kind: 'success' }, durationMs: st?.lastDurationMs ?? 0, triggers: st?.lastTriggers ?? [] };
    }
    if (!reply.ok || !reply.reconcile) {
      const message = reply.error ?? 'the step ran no reconcile';
      // The queue shut down while the step waited (the manager is stopping): not an empty queue.
      if (this.shutdown || !this.endpoint.connected || QUEUE_SHUT_DOWN.test(message)) return { kind: 'notRunning' };
      if (key === undefined && this.queued.size === 0) {
        const next = this.soonestWait();
        return { kind: 'empty', ...(next ? { next } : {}) };
      }
      throw new Error(`step refused by ${this.endpoint.description}: ${message}`);
    }
    const r = reply.reconcile;
    const st = this.keys.get(r.key);
    return { kind: 'reconciled', key: r.key, outcome: outcomeOfEnd(r), durationMs: r.durationMs, triggers: st?.lastTriggers ?? [] };
  }

  /**
   * Runs the real Reconcile of `key` once in the process with every write
   * forced to DryRunAll; resolves with the outcome and the planned writes.
   */
  async dryRun(key: ObjectKey): Promise<RemoteDryRun> {
    this.checkKey(key);
    if (!this.endpoint.connected) throw new Error(`${this.endpoint.description} is not connected`);
    const refusal = this.selectorRefusal(key);
    if (refusal !== undefined) throw new Error(`dry-run refused: ${refusal}`);
    const reply = await this.endpoint.request({ op: 'dryRun', controller: this.name, key });
    if (!reply.ok || !reply.reconcile) throw new Error(`dry-run refused by ${this.endpoint.description}: ${reply.error ?? 'no reconcile ran'}`);
    const end: ReconcileEndMessage = reply.reconcile;
    return { key, outcome: outcomeOfEnd(end), durationMs: end.durationMs, writes: reply.writes ?? [] };
  }

  /**
   * The resources the program's cache has informers for, as "plural.group" ("plural" for the core group): what its
   * controllers watch (For, Owns, Watches) and anything else it asked its cache for. Empty until the program said.
   */
  get cachedResources(): string[] {
    return [...new Set((this.endpoint.cachedResources ?? []).map(withoutVersion))];
  }

  /** Fires when {@link cachedResources} may have changed. */
  get onDidChangeCachedResources(): Event<void> {
    return this.endpoint.onDidChangeCachedResources ?? (() => ({ dispose() {} }));
  }

  /**
   * The object `key` of `resource` (asked as "plural.version.group"; another version the program caches is taken) as the program's
   * own cache holds it now: `{ object }` (apiVersion and kind set; `metadataOnly` when the program caches that resource
   * metadata-only, so `object` has apiVersion, kind and metadata only), `{}` when that cache does not hold it. Rejects
   * when the program watches no such resource (no informer is started for the question), when the key is outside
   * its cache's namespaces, or when it is not connected. Reads only.
   */
  async cachedObject(resource: GroupVersionResource, key: ObjectKey): Promise<{ object?: KubeObject; metadataOnly?: boolean }> {
    if (!this.endpoint.connected) throw new Error(`${this.endpoint.description} is not connected`);
    const reply = await this.endpoint.request({ op: 'cacheGet', controller: this.name, resource: bridgeResourceName(resource), key });
    if (!reply.ok) throw new Error(reply.error ?? `${this.endpoint.description} did not answer with its cached copy`);
    return reply.object ? { object: reply.object as unknown as KubeObject, ...(reply.metadataOnly ? { metadataOnly: true } : {}) } : {};
  }

  reconcileNow(key: ObjectKey): boolean {
    return this.keyCommand('reconcileNow', key);
  }

  resetBackoff(key: ObjectKey): boolean {
    const ok = this.keyCommand('resetBackoff', key);
    if (ok) {
      this.failures.set(key, 0);
      this.keys.touch(key);
    }
    return ok;
  }

  enqueue(key: ObjectKey, note?: string): boolean {
    return this.keyCommand('reconcileNow', key, note);
  }

  keyState(key: ObjectKey): KeyState | undefined {
    return this.keys.get(key);
  }

  queuedKeys(limit?: number): ObjectKey[] {
    const order = [...this.queued.entries()].map(([k, p], i) => ({ k, p, i }));
    order.sort((a, b) => b.p - a.p || a.i - b.i);
    return (limit !== undefined ? order.slice(0, Math.max(0, limit)) : order).map((o) => o.k);
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
    const waiting = [...this.waiting.entries()].map(([key, w]) => ({ key, dueAt: w.dueAt, kind: w.kind })).sort((a, b) => a.dueAt - b.dueAt);
    return { at: this.clock.now(), status: this.status(), queue: this.queuedKeys(), waiting, keys: this.keys.all() };
  }

  dispose(): void {
    this.keys.dispose();
    this.statusEmitter.dispose();
  }

  // ---- internals --------------------------------------------------------------------------------------------

  /**
   * Throws on a key this controller cannot have: an object key ("namespace/name" or "name"), or, for a custom
   * request type (`requestType` announced), any non-empty text (the process knows its items' texts and refuses others).
   */
  private checkKey(key: ObjectKey): void {
    if (this.info.requestType) {
      if (key === '') throw new Error(`a key of ${this.name} (requests of type ${this.info.requestType}) is required`);
      return;
    }
    splitKey(key);
  }

  private keyCommand(op: 'reconcileNow' | 'resetBackoff', key: ObjectKey, note?: string): boolean {
    this.checkKey(key);
    if (!this.endpoint.connected || this.shutdown) return false;
    const refusal = op === 'reconcileNow' && !this.queued.has(key) && !this.waiting.has(key) ? this.selectorRefusal(key) : undefined;
    if (refusal !== undefined) {
      this.warn('commandRefused', `${note !== undefined ? 'enqueue' : 'reconcileNow'} ${key} refused: ${refusal}`, key);
      return false;
    }
    this.journal.append({ kind: 'control', action: op === 'reconcileNow' && note !== undefined ? 'enqueue' : op, controller: this.name, key, ...(note ? { detail: note } : {}) });
    this.fire(op, key);
    return true;
  }

  private fire(op: CommandOp, key?: ObjectKey): void {
    if (!this.endpoint.connected) return;
    this.endpoint.request({ op, controller: this.name, ...(key !== undefined ? { key } : {}) }, { timeoutMs: this.commandTimeoutMs }).then(
      (r) => {
        if (!r.ok) this.warn('commandRefused', `${op}${key ? ` ${key}` : ''} refused by ${this.endpoint.description}: ${r.error ?? 'no reason given'}`, key);
      },
      (e: Error) => this.warn('commandFailed', `${op}${key ? ` ${key}` : ''}: ${e.message}`, key),
    );
  }

  /**
   * Says once per controller that a key went through its queue (handed out, done) without a reconcile being
   * reported: its reconciler is not wrapped with bridge.Wrap under this controller's name, so the views have its
   * queue but no reconciles, outcomes or writes.
   */
  private warnNotWrapped(key: ObjectKey): void {
    if (this.warnedNotWrapped) return;
    this.warnedNotWrapped = true;
    const message = `controller ${this.name} handed out ${key} and finished it without reporting a reconcile: its reconciler is not wrapped with bridge.Wrap under this name. Pass Complete(bridge.Wrap(mgr, "${this.name}", r, &YourKind{})) (the name given to bridge.Options); until then its queue is shown, but not its reconciles, their outcomes or their writes`;
    // The journal's warning is what every view and the CLI show; the log keeps it at info (not said twice).
    this.log.info(message, { key, code: 'notWrapped' });
    this.journal.append({ kind: 'warning', controller: this.name, key, code: 'notWrapped', message });
  }

  /**
   * Says once when the kind bridge.Wrap was given (`&Gadget{}`, the announced resource) is not the controller's For
   * kind: the keys' own objects' events come from another resource (FOR_MISMATCH_EVENTS of them, each with the key's
   * own namespace and name, which the bridge then reports as mapped watches) before any event of the announced one.
   * The views and the commands look every key up as the announced kind, so they would show the wrong objects.
   */
  private noteForObject(key: ObjectKey, causes: readonly Cause[]): void {
    const m = this.forMismatch;
    if (m.done || !this.info.resource) return;
    for (const c of causes) {
      if (c.kind === 'informer') {
        m.done = true; // an event of the announced kind for its own key: Wrap was given the right object
        return;
      }
      if (c.kind !== 'watch' || c.objectKey !== key || !c.resource) continue;
      const [plural = '', , ...group] = c.resource.split('.');
      if (plural === this.info.resource && group.join('.') === (this.info.group ?? '')) continue;
      const id = group.length ? `${plural}.${group.join('.')}` : plural;
      const n = (m.other.get(id) ?? 0) + 1;
      m.other.set(id, n);
      if (n < FOR_MISMATCH_EVENTS) continue;
      m.done = true;
      const given = this.info.kind ?? this.resourceId;
      const theirs = c.objectKind ?? id;
      this.warn(
        'forObjectMismatch',
        `controller ${this.name}: bridge.Wrap was given a ${given} (${this.resourceId}) as its For object, but its keys come from events of ${id} objects with the key's own name (${n} so far) and none from ${this.resourceId}. If the controller's For() is ${theirs}, pass that: bridge.Wrap(mgr, "${this.name}", r, &${theirs}{}). Until then the views and the commands look its keys up as ${this.resourceId}, and the causes of its keys read as mapped watches`,
        key,
      );
      return;
    }
  }

  private warn(code: string, message: string, key: ObjectKey | undefined): void {
    this.log.warn(message, { key, code, [JOURNALED_FIELD]: true });
    this.journal.append({ kind: 'warning', controller: this.name, ...(key !== undefined ? { key } : {}), code, message });
  }

  /**
   * The key is ready in the remote queue (or, while it is processing, will be again after done). Marks a key queued (or, while it is processing, queued again for after it) with the add's priority: the queue
   * order takes the highest priority the key was added with, and on the priority queue its key state carries it too
   * (the views' `low priority (-100)` of an initial-list add). `journal` false: the state is rebuilt for a key whose
   * "queued" entry is already in the journal (a snapshot).
   */
  private markQueued(key: ObjectKey, priority: number | undefined, journal = true): void {
    if (this.processing.has(key)) {
      if (!this.dirty.has(key)) {
        this.dirty.add(key);
        this.keys.onQueueEvent({ type: 'add', item: key, queued: false });
        this.queueEntry(key, 'deferred');
      }
      return;
    }
    const had = this.queued.has(key);
    const p = priority ?? 0;
    const next = had ? Math.max(p, this.queued.get(key)!) : p;
    this.queued.set(key, next);
    const prio = this.info.priorityQueue ? { priority: next } : {};
    if (!had) {
      this.keys.onQueueEvent({ type: 'add', item: key, queued: true, ...prio });
      if (journal) this.queueEntry(key, 'queued');
    } else if (this.info.priorityQueue && this.keys.get(key)?.priority !== next) {
      this.keys.onQueueEvent({ type: 'priority', item: key, priority: next });
    }
  }

  private queueEntry(key: ObjectKey, transition: QueueTransition): void {
    this.journal.append({ kind: 'queue', controller: this.name, key, transition });
  }

  private soonestWait(): { key: ObjectKey; dueAt: number; waiting: WaitKind } | undefined {
    let best: { key: ObjectKey; dueAt: number; waiting: WaitKind } | undefined;
    for (const [key, w] of this.waiting) if (!best || w.dueAt < best.dueAt) best = { key, dueAt: w.dueAt, waiting: w.kind };
    return best;
  }

  private clearQueueState(): void {
    this.queued.clear();
    this.processing.clear();
    this.dirty.clear();
    this.waiting.clear();
    this.keys.resetQueueState();
  }

  private statusChanged(): void {
    if (this.statusEmitter.hasListeners) this.statusEmitter.fire(this.status());
  }
}


/** "plural.version.group" as "plural.group"; "plural.version" (core group) as "plural". */
function withoutVersion(resource: string): string {
  const [plural, , ...group] = resource.split('.');
  return group.length ? `${plural}.${group.join('.')}` : plural!;
}
