import type { Clock } from '../clock.ts';
import { Emitter, type Event } from '../event.ts';
import type { Disposable } from '../lifecycle.ts';
import { keyFor, type ObjectKey } from '../k8s/keys.ts';
import { gvrToString, type GroupVersionResource } from '../k8s/objects.ts';
import type { EnqueueReason, ReconcileOutcome, WaitKind } from '../controller/keyState.ts';

/**
 * The journal: ONE ordered stream of what happened to the objects a
 * controller manages — informer deltas as the controller saw them, work-queue
 * transitions, reconcile starts and ends, every API write a reconciler made,
 * warnings and debugger actions.
 *
 * Invariants: `seq` increases by exactly 1 per appended entry, across
 * `clear()` and `resize()`, so a gap in seq means entries were dropped by the
 * ring buffer; `at` comes from the injected Clock. Entries are frozen: readers
 * MUST NOT mutate them.
 */

/** What an informer delivered to a controller's event handler, and what the controller did with it. */
export interface InformerEntry {
  kind: 'informer';
  /** The resource as "plural.version.group". */
  resource: string;
  /** Which source of the controller: the primary resource, an owned child, or a watched resource. */
  role: 'primary' | 'owned' | 'watched';
  event: 'add' | 'update' | 'delete' | 'resync';
  /** The object the event is about. */
  objectKey: ObjectKey;
  resourceVersion?: string;
  generation?: number;
  /** Part of the initial list (or a synthetic add for a late handler). */
  initial?: boolean;
  /** Keys enqueued because of this event (none when filtered). */
  enqueued: ObjectKey[];
  /** The predicate that dropped the event, when one did. */
  filteredBy?: string;
}

export type QueueTransition = 'queued' | 'deferred' | 'processing' | 'done' | 'requeued' | 'waiting' | 'ready' | 'waitCancelled' | 'reprioritized' | 'shutdown';

/**
 * A transition as the Event Log and the CLI's `-v` lines say it: the words of the three whose names alone do not tell
 * a newcomer what happened (the entry's `transition` keeps the name, for filters, exports and `--json`).
 */
export function queueTransitionText(t: QueueTransition): string {
  switch (t) {
    case 'deferred': return 'added while processing: queued again after this reconcile';
    case 'waitCancelled': return 'wait cancelled: queued now';
    case 'reprioritized': return 'priority changed';
    default: return t;
  }
}

/** A work-queue transition of `key` ("deferred": added while processing, it waits for done). */
export interface QueueEntry {
  kind: 'queue';
  transition: QueueTransition;
  /** For "waiting": when the wait ends, and why it waits. */
  dueAt?: number;
  waitKind?: WaitKind;
  /** Priority queue only: the priority of the entry (added, handed out, waiting or raised). */
  priority?: number;
}

export interface ReconcileStartEntry {
  kind: 'reconcileStart';
  /** Why the key was queued: every reason since it last ran. */
  triggers: EnqueueReason[];
  /** The number of this reconcile of the key (1-based) in this controller's lifetime. */
  attempt: number;
  /** metadata.generation of the cached primary object at start, when present. */
  generation?: number;
  /** Priority queue only: the priority the key was handed out with. */
  priority?: number;
  via: 'worker' | 'step';
}

export interface ReconcileEndEntry {
  kind: 'reconcileEnd';
  outcome: ReconcileOutcome;
  durationMs: number;
}

export type WriteVerb = 'create' | 'update' | 'patch' | 'apply' | 'delete';

/** An API write made by a reconciler (recorded by the client wrapper through {@link Journal.recordWrite}). */
export interface WriteEntry {
  kind: 'write';
  verb: WriteVerb;
  /** The resource as "plural.version.group". */
  resource: string;
  gvr: GroupVersionResource;
  /** The written object ("namespace/name" or "name"). */
  objectKey: ObjectKey;
  subresource?: string;
  resourceVersionBefore?: string;
  resourceVersionAfter?: string;
  /** The write removed the last finalizer of a Terminating object: the server deleted it (dry run: would); see
   * {@link writeResultText}. */
  deleted?: boolean;
  dryRun: boolean;
  /** The failure, when the server refused the write. */
  error?: string;
  /**
   * The server's warnings about this write (HTTP `Warning` headers, as client-go's warning handler logs them), e.g.
   * `unknown field "spec.replicsa"`: a field the server dropped from what the reconciler sent.
   */
  warnings?: string[];
}

/** A write's resourceVersions and whether it deleted the object (a journal write entry, a client write record…). */
export interface WriteResult {
  readonly resourceVersionAfter?: string;
  readonly deleted?: boolean;
}

/**
 * The resourceVersion after a write as every view shows it: `deleted` when the write removed the last finalizer of
 * a Terminating object (the server then answers with the unchanged resourceVersion, which would read as a no-op),
 * else the resourceVersion, or `missing` when there is none.
 */
export function rvAfterText(w: WriteResult, missing: string): string {
  return w.deleted ? 'deleted' : (w.resourceVersionAfter ?? missing);
}

/** The sentence that says a write deleted its object (undefined when it did not), for details and reports. */
export function writeDeletedText(w: WriteResult & { readonly dryRun?: boolean }): string | undefined {
  if (!w.deleted) return undefined;
  return w.dryRun ? 'would remove the last finalizer: the object would be deleted' : 'removed the last finalizer: the object is deleted';
}

export interface WarningEntry {
  kind: 'warning';
  code: 'hotLoop' | 'abandonedReconcile' | 'handlerError' | string;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * A debugger action on the loop, or an action a person took on an object through the editor or the CLI.
 * The last three are always a person's: `stripFinalizers` (the escape hatch), `delete` and `dryRun` (a dry-run
 * reconcile of `key`; its writes follow as write entries with `dryRun: true`).
 */
export interface ControlEntry {
  kind: 'control';
  action: 'start' | 'stop' | 'pause' | 'resume' | 'step' | 'reconcileNow' | 'resetBackoff' | 'enqueue' | 'stripFinalizers' | 'delete' | 'dryRun';
  detail?: string;
  /** Taken by Reconcile Lab on its own (e.g. retrying the keys backing off when the reconciler's file changed), not asked by a person. */
  automatic?: boolean;
}

/** Control actions a person asks for (never taken by the loop on its own). */
export const USER_ACTIONS: ReadonlySet<ControlEntry['action']> = new Set(['step', 'reconcileNow', 'resetBackoff', 'enqueue', 'stripFinalizers', 'delete', 'dryRun']);

export type JournalEntryBody = InformerEntry | QueueEntry | ReconcileStartEntry | ReconcileEndEntry | WriteEntry | WarningEntry | ControlEntry;
export type JournalEntryKind = JournalEntryBody['kind'];

export const JOURNAL_ENTRY_KINDS: readonly JournalEntryKind[] = ['informer', 'queue', 'reconcileStart', 'reconcileEnd', 'write', 'warning', 'control'];

interface EntryHeader {
  /** Monotonic sequence number (never reused). */
  readonly seq: number;
  /** Clock time of the append, epoch ms. */
  readonly at: number;
  /** The controller the entry belongs to. */
  readonly controller?: string;
  /** The reconcile key the entry concerns (for writes: the key being reconciled when the write was made). */
  readonly key?: ObjectKey;
}

export type JournalEntry = EntryHeader & Readonly<JournalEntryBody>;

/** What to append: a body plus the optional controller and key. */
export type JournalInput = JournalEntryBody & { controller?: string; key?: ObjectKey };

/**
 * What a write sent and what the server held before and answered: kept beside the entry (not in it, so exports
 * and the ring buffer stay small) for the newest {@link JournalOptions.detailCapacity} writes only.
 */
export interface WriteDetail {
  /** For patch/apply: the content type ("merge", "json", "strategic-merge", "apply") and the body sent. */
  readonly patchType?: string;
  readonly patch?: unknown;
  /** The object before the write (as read just before it), when known. */
  readonly before?: unknown;
  /** The object the server answered with (for a dry-run write: what it would have stored). */
  readonly after?: unknown;
}

/** Input of {@link Journal.recordWrite}. */
export interface WriteRecord {
  verb: WriteVerb;
  gvr: GroupVersionResource;
  namespace?: string;
  name: string;
  subresource?: string;
  resourceVersionBefore?: string;
  resourceVersionAfter?: string;
  /** The write removed the last finalizer of a Terminating object (the server deleted it). */
  deleted?: boolean;
  dryRun: boolean;
  error?: string;
  /** The server's warnings about the write ({@link WriteEntry.warnings}). */
  warnings?: readonly string[];
  /** Patch body and objects before/after, kept for the newest writes ({@link Journal.writeDetail}). */
  detail?: WriteDetail;
  /** The controller and the key it was reconciling when it wrote (defaults to the written object's key). */
  controller?: string;
  key?: ObjectKey;
}

/** Selects entries. Every field is optional; all given fields must match. */
export interface JournalFilter {
  /** Matches the entry's `key` or the object it is about (`objectKey`). */
  key?: ObjectKey;
  kinds?: readonly JournalEntryKind[];
  controller?: string;
  /** Only entries with `seq > sinceSeq`. */
  sinceSeq?: number;
  /** At most this many entries: the newest ones that match. */
  limit?: number;
}

export interface JournalOptions {
  clock: Clock;
  /** Ring buffer size; the oldest entries are dropped beyond it. Default 10,000. */
  capacity?: number;
  /**
   * When `onDidAppend` fires: "microtask" (default) delivers every entry
   * appended in one synchronous stretch as one batch; "sync" fires one batch
   * per append.
   */
  delivery?: 'microtask' | 'sync';
  /** How many of the newest writes keep their {@link WriteDetail}. Default 1,000. */
  detailCapacity?: number;
}

/** The entries of one reconcile of a key: its start, what happened while it ran, and its end (once it ended). */
export interface ReconcileSpan {
  readonly start: JournalEntry;
  readonly end?: JournalEntry;
  /** Every entry of the same controller and key from start to end, both included, in order. */
  readonly entries: readonly JournalEntry[];
}

/** How far {@link Journal.reconcileOf} looks back and forward from an entry. */
const RECONCILE_SCAN_LIMIT = 20_000;

export const DEFAULT_JOURNAL_CAPACITY = 10_000;

/**
 * Implementation of the journal. Listeners receive batches in append order;
 * every appended entry is in exactly one batch (batches are delivered even if
 * the ring buffer has since dropped some of their entries).
 */
export class Journal implements Disposable {
  private readonly clock: Clock;
  private readonly delivery: 'microtask' | 'sync';
  private buf: Array<JournalEntry | undefined>;
  /** Index in `buf` of the oldest entry. */
  private start = 0;
  private count = 0;
  private droppedCount = 0;
  private nextSeq = 1;
  private pending: JournalEntry[] = [];
  private flushScheduled = false;
  private disposed = false;
  private readonly appendEmitter = new Emitter<readonly JournalEntry[]>();
  private readonly clearEmitter = new Emitter<void>();
  /** Write details by seq, oldest first (Map keeps insertion order, which is seq order). */
  private readonly details = new Map<number, WriteDetail>();
  private readonly detailCapacity: number;
  /** The seq of the newest write whose detail was dropped (beyond {@link detailCapacity}, or by a clear); -1 if none. */
  private detailsDroppedThrough = -1;

  /** Batches of appended entries, oldest first (see {@link JournalOptions.delivery}). */
  readonly onDidAppend: Event<readonly JournalEntry[]> = this.appendEmitter.event;
  /** The buffer was emptied by {@link Journal.clear}. */
  readonly onDidClear: Event<void> = this.clearEmitter.event;

  constructor(options: JournalOptions) {
    this.clock = options.clock;
    this.delivery = options.delivery ?? 'microtask';
    this.buf = new Array(checkCapacity(options.capacity ?? DEFAULT_JOURNAL_CAPACITY));
    this.detailCapacity = Math.max(0, Math.floor(options.detailCapacity ?? 1000));
  }

  get capacity(): number {
    return this.buf.length;
  }

  get size(): number {
    return this.count;
  }

  /** Sequence number of the newest entry (0 before the first). */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /**
   * Entries appended since the last `clear()` (or since creation) that are no longer retained: pushed out by the
   * ring buffer or by a `resize()` to a smaller capacity. 0 while nothing was lost.
   */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Sequence number of the oldest retained entry (lastSeq + 1 when empty). */
  get firstSeq(): number {
    return this.nextSeq - this.count;
  }

  append(input: JournalInput): JournalEntry {
    const entry = Object.freeze({ seq: this.nextSeq++, at: this.clock.now(), ...input }) as JournalEntry;
    if (this.disposed) return entry;
    const cap = this.buf.length;
    if (this.count < cap) {
      this.buf[(this.start + this.count) % cap] = entry;
      this.count++;
    } else {
      this.buf[this.start] = entry;
      this.start = (this.start + 1) % cap;
      this.droppedCount++;
    }
    if (this.appendEmitter.hasListeners) {
      this.pending.push(entry);
      if (this.delivery === 'sync') this.flush();
      else if (!this.flushScheduled) {
        this.flushScheduled = true;
        queueMicrotask(() => this.flush());
      }
    }
    return entry;
  }

  /** Records an API write made by a reconciler. For the client wrapper. */
  recordWrite(w: WriteRecord): JournalEntry {
    const objectKey = keyFor(w.namespace, w.name);
    const body: JournalInput = {
      kind: 'write',
      verb: w.verb,
      resource: gvrToString(w.gvr),
      gvr: { group: w.gvr.group, version: w.gvr.version, resource: w.gvr.resource },
      objectKey,
      dryRun: w.dryRun,
      key: w.key ?? objectKey,
      ...(w.controller !== undefined ? { controller: w.controller } : {}),
      ...(w.subresource !== undefined ? { subresource: w.subresource } : {}),
      ...(w.resourceVersionBefore !== undefined ? { resourceVersionBefore: w.resourceVersionBefore } : {}),
      ...(w.resourceVersionAfter !== undefined ? { resourceVersionAfter: w.resourceVersionAfter } : {}),
      ...(w.deleted ? { deleted: true } : {}),
      ...(w.error !== undefined ? { error: w.error } : {}),
      ...(w.warnings?.length ? { warnings: [...w.warnings] } : {}),
    };
    const entry = this.append(body);
    if (w.detail && this.detailCapacity > 0 && !this.disposed) {
      this.details.set(entry.seq, w.detail);
      if (this.details.size > this.detailCapacity) {
        const oldest = this.details.keys().next().value!;
        this.details.delete(oldest);
        this.detailsDroppedThrough = Math.max(this.detailsDroppedThrough, oldest);
      }
    }
    return entry;
  }

  /** The patch body and objects of the write entry `seq`, while it is among the newest `detailCapacity` writes. */
  writeDetail(seq: number): WriteDetail | undefined {
    return seq >= this.firstSeq ? this.details.get(seq) : undefined;
  }

  /**
   * Whether the write entry `seq` has no {@link writeDetail} because one may have been kept and dropped since (it is
   * not newer than every dropped one); false for a write newer than all dropped details: that one was recorded
   * without a detail (a Go controller's live write carries none but a Patch's body).
   */
  writeDetailMayBeDropped(seq: number): boolean {
    return seq <= this.detailsDroppedThrough;
  }

  /**
   * The reconcile the entry `seq` belongs to: the nearest reconcileStart of the same controller and key at or
   * before it, when no reconcileEnd of that key lies between them (a controller never runs two reconciles of a
   * key at once, so the span is unambiguous). Undefined for entries outside a reconcile, entries without a key,
   * and when the start is no longer retained.
   */
  reconcileOf(seq: number): ReconcileSpan | undefined {
    const e = this.get(seq);
    if (!e || e.key === undefined) return undefined;
    const same = (x: JournalEntry) => x.key === e.key && x.controller === e.controller;
    let start: JournalEntry | undefined;
    for (let s = seq, n = 0; s >= this.firstSeq && n < RECONCILE_SCAN_LIMIT; s--, n++) {
      const x = this.get(s)!;
      if (!same(x)) continue;
      if (x.kind === 'reconcileStart') {
        start = x;
        break;
      }
      if (x.kind === 'reconcileEnd' && s !== seq) return undefined;
    }
    if (!start) return undefined;
    const entries: JournalEntry[] = [];
    let end: JournalEntry | undefined;
    for (let s = start.seq, n = 0; s <= this.lastSeq && n < RECONCILE_SCAN_LIMIT; s++, n++) {
      const x = this.get(s)!;
      if (!same(x)) continue;
      if (x.kind === 'reconcileStart' && x !== start) break;
      entries.push(x);
      if (x.kind === 'reconcileEnd') {
        end = x;
        break;
      }
    }
    return end ? { start, end, entries } : { start, entries };
  }

  /** Delivers pending batched entries now. */
  flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.appendEmitter.fire(batch);
  }

  /** The retained entries that match `filter`, oldest first. */
  entries(filter: JournalFilter = {}): JournalEntry[] {
    const out: JournalEntry[] = [];
    const cap = this.buf.length;
    // Sequence numbers are contiguous in the buffer: skip straight to sinceSeq.
    let from = 0;
    if (filter.sinceSeq !== undefined) from = Math.max(0, filter.sinceSeq + 1 - this.firstSeq);
    const kinds = filter.kinds && filter.kinds.length > 0 ? new Set(filter.kinds) : undefined;
    for (let i = from; i < this.count; i++) {
      const e = this.buf[(this.start + i) % cap]!;
      if (kinds && !kinds.has(e.kind)) continue;
      if (filter.controller !== undefined && e.controller !== filter.controller) continue;
      if (filter.key !== undefined && e.key !== filter.key && (e as { objectKey?: string }).objectKey !== filter.key) continue;
      out.push(e);
    }
    return filter.limit !== undefined && out.length > filter.limit ? out.slice(out.length - filter.limit) : out;
  }

  /** The retained entry with sequence number `seq`, if any. */
  get(seq: number): JournalEntry | undefined {
    const i = seq - this.firstSeq;
    if (!Number.isInteger(i) || i < 0 || i >= this.count) return undefined;
    return this.buf[(this.start + i) % this.buf.length];
  }

  /** The matching entries as JSON Lines (one JSON object per line, each line ending with "\n"). */
  toJsonLines(filter: JournalFilter = {}): string {
    let s = '';
    for (const e of this.entries(filter)) s += JSON.stringify(e) + '\n';
    return s;
  }

  /** Drops every retained entry; sequence numbers keep increasing. */
  clear(): void {
    this.buf = new Array(this.buf.length);
    this.start = 0;
    this.count = 0;
    this.droppedCount = 0;
    for (const seq of this.details.keys()) this.detailsDroppedThrough = Math.max(this.detailsDroppedThrough, seq);
    this.details.clear();
    this.clearEmitter.fire();
  }

  /** Changes the capacity, keeping the newest entries that fit. */
  resize(capacity: number): void {
    const kept = this.entries();
    const cap = checkCapacity(capacity);
    const tail = kept.slice(Math.max(0, kept.length - cap));
    this.buf = new Array(cap);
    for (let i = 0; i < tail.length; i++) this.buf[i] = tail[i];
    this.start = 0;
    this.count = tail.length;
    this.droppedCount += kept.length - tail.length;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.flush();
    this.appendEmitter.dispose();
    this.clearEmitter.dispose();
  }
}

/** A new journal. */
export function createJournal(options: JournalOptions): Journal {
  return new Journal(options);
}

function checkCapacity(n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`journal capacity must be a positive integer (got ${n})`);
  return n;
}
