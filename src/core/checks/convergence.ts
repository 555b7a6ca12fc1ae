import type { Clock, TimerHandle } from '../clock.ts';
import { Emitter, type Event } from '../event.ts';
import type { Disposable } from '../lifecycle.ts';
import type { ObjectKey } from '../k8s/keys.ts';
import type { KubeObject } from '../k8s/objects.ts';
import type { JournalEntry } from '../journal/journal.ts';
import type { KeyState } from '../controller/keyState.ts';
import { secondsText } from '../text/duration.ts';
import { isIdleApply } from '../journal/writeText.ts';

/**
 * Live convergence of the keys of a running loop (Anvil's "eventually stable reconciliation", watched rather than
 * proved): once a key's desired state (its spec) stops changing, the controller's writes must stop and the objects
 * it manages must stay put.
 *
 * Each key of the reconciled resource is, at any moment, in one of these states:
 *
 * - `converged`: a reconcile that started after the last spec change ended without an error, and neither the
 *   controller's writes nor the objects of the key (the primary object and the children it controls) changed for
 *   the quiet window ({@link ConvergenceOptions.quietMs});
 * - `changing`: not yet there: the spec changed and no reconcile finished since, the last reconcile failed, or a
 *   write or an object change happened within the quiet window;
 * - `flapping`: an object of the key went back to a state it had already had since the last spec change (A → B → A),
 *   at least {@link ConvergenceOptions.flapReturns} times within {@link ConvergenceOptions.flapWindowMs}: writes that
 *   undo each other, or a status condition toggling. A flapping key stays flapping until the flap window passed
 *   without a return, even if it is quiet meanwhile (a slow toggle is still a toggle).
 *
 * The tracker is fed, never asks: {@link ConvergenceTracker.observePrimary} / {@link ConvergenceTracker.observeOwned}
 * with the objects an informer delivers, and {@link ConvergenceTracker.observeJournal} with the controller's journal
 * (writes, reconcile starts and ends). Time comes from the injected Clock only; the one timer it owns re-evaluates
 * keys whose state changes by the passing of time alone (quiet window over, flap window over) and is cleared on
 * dispose. A spec change (a new `metadata.generation`, or a new spec where the resource has no generation) starts
 * the key's history over. States are computed when read, so {@link ConvergenceTracker.get} is always current;
 * {@link ConvergenceTracker.onDidChange} fires with the keys whose state or reason changed.
 */

export type ConvergenceState = 'changing' | 'converged' | 'flapping';

export const CONVERGENCE_STATES: readonly ConvergenceState[] = ['converged', 'changing', 'flapping'];

/** One key's convergence, as of {@link KeyConvergence.at}. Plain data. */
export interface KeyConvergence {
  readonly key: ObjectKey;
  readonly state: ConvergenceState;
  /** One sentence for people: why the key is in this state. */
  readonly reason: string;
  /** When this was computed (clock ms). */
  readonly at: number;
  /** The primary object's generation when last seen, if it has one. */
  readonly generation?: number;
  /** When the spec last changed (or was first seen). */
  readonly specChangedAt: number;
  /** When the last write or object change of the key happened (or the spec change, if later). */
  readonly lastChangeAt: number;
  /** Writes that changed something (resourceVersion moved, or a delete) since the spec changed. */
  readonly writes: number;
  /** Successful writes that changed nothing (resourceVersion unchanged) since the spec changed. */
  readonly noOpWrites: number;
  /** Returns to an earlier state within the flap window. */
  readonly returns: number;
  /** The object that went back to an earlier state last ("ConfigMap ns/name" or "the object itself"). */
  readonly flappingObject?: string;
  /** When the key became converged (set only in the converged state). */
  readonly convergedAt?: number;
}

export interface ConvergenceOptions {
  clock: Clock;
  /** No writes and no object changes for this long after a reconcile: converged. Default 5 s. */
  quietMs?: number;
  /** Returns to an earlier state are counted over this window. Default 60 s. */
  flapWindowMs?: number;
  /** Returns within the window that make a key flapping. Default 2 (A → B → A → B → A, or two toggles back). */
  flapReturns?: number;
  /** The controller's state of a key (last outcome), read when a key is classified. */
  keyState?: (key: ObjectKey) => KeyState | undefined;
  /** Only journal entries of this controller are read (default: every controller's). */
  controller?: () => string | undefined;
}

/** Fingerprints kept per object since the last spec change (older ones are forgotten). */
const HISTORY = 32;
const ABSENT = '∅';
const SELF = 'the object itself';

interface ObjectTrack {
  /** Fingerprints seen since the spec change, oldest first, the current one last. */
  history: string[];
}

interface Record {
  key: ObjectKey;
  generation?: number;
  specFingerprint?: string;
  specChangedAt: number;
  lastChangeAt: number;
  /** When the last reconcile of the key started (journal time). */
  lastStartAt?: number;
  /** A reconcile that started at or after the spec change ended without an error. */
  reconciledAfterSpec: boolean;
  lastFailure?: string;
  writes: number;
  noOpWrites: number;
  returns: Array<{ at: number; object: string }>;
  objects: Map<string, ObjectTrack>;
  /** What was last published (state + reason), to fire onDidChange only on a change. */
  published?: string;
}

/**
 * A stable fingerprint of what a controller manages in an object: everything but the bookkeeping the server
 * changes on every write (resourceVersion, managedFields, timestamps, uid, generation) and the times inside status
 * conditions, so that a condition that goes True → False → True fingerprints the same both times it is True.
 * `undefined` (the object does not exist) has its own fingerprint.
 */
export function stateFingerprint(obj: KubeObject | undefined): string {
  if (!obj) return ABSENT;
  const m = obj.metadata ?? {};
  const rest: { [k: string]: unknown } = {};
  for (const [k, v] of Object.entries(obj)) if (k !== 'metadata' && k !== 'status') rest[k] = v;
  return stableJson({
    labels: m.labels,
    annotations: m.annotations,
    finalizers: m.finalizers,
    ownerReferences: m.ownerReferences?.map((r) => ({ apiVersion: r.apiVersion, kind: r.kind, name: r.name, controller: r.controller })),
    deleting: m.deletionTimestamp !== undefined,
    rest,
    status: withoutConditionTimes(obj.status),
  });
}

function withoutConditionTimes(status: unknown): unknown {
  if (!status || typeof status !== 'object' || Array.isArray(status)) return status;
  const s = { ...(status as { [k: string]: unknown }) };
  if (Array.isArray(s.conditions)) {
    s.conditions = (s.conditions as unknown[]).map((c) => {
      if (!c || typeof c !== 'object') return c;
      const { lastTransitionTime: _t, lastHeartbeatTime: _h, lastUpdateTime: _u, lastProbeTime: _p, ...keep } = c as { [k: string]: unknown };
      return keep;
    });
  }
  return s;
}

/**
 * JSON with object keys sorted and undefined members left out, without filter/map chains per level (per update of
 * every object: cheap matters). Built with join, not `+=`: the fingerprints are kept in each key's history, and a
 * string concatenated piece by piece stays a tree of its pieces in V8 (about a kilobyte more per key).
 */
function stableJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return v === undefined ? 'null' : JSON.stringify(v);
  if (Array.isArray(v)) {
    const parts = new Array<string>(v.length);
    for (let i = 0; i < v.length; i++) parts[i] = stableJson(v[i]);
    return `[${parts.join(',')}]`;
  }
  const o = v as { [k: string]: unknown };
  const keys = Object.keys(o).sort();
  const parts: string[] = [];
  for (const k of keys) {
    const x = o[k];
    if (x !== undefined) parts.push(`${JSON.stringify(k)}:${stableJson(x)}`);
  }
  return `{${parts.join(',')}}`;
}



/** See the module comment. */
export class ConvergenceTracker implements Disposable {
  private readonly clock: Clock;
  private readonly quietMs: number;
  private readonly flapWindowMs: number;
  private readonly flapReturns: number;
  private keyStateOf: ((key: ObjectKey) => KeyState | undefined) | undefined;
  private readonly controller: (() => string | undefined) | undefined;
  private readonly records = new Map<ObjectKey, Record>();
  private readonly emitter = new Emitter<readonly ObjectKey[]>();
  private timer: TimerHandle | undefined;
  private timerDue = Infinity;
  private disposed = false;

  /** Keys whose state or reason changed (by an observation, or by time passing). */
  readonly onDidChange: Event<readonly ObjectKey[]> = this.emitter.event;

  constructor(options: ConvergenceOptions) {
    this.clock = options.clock;
    this.quietMs = Math.max(0, options.quietMs ?? 5_000);
    this.flapWindowMs = Math.max(1, options.flapWindowMs ?? 60_000);
    this.flapReturns = Math.max(1, Math.floor(options.flapReturns ?? 2));
    this.keyStateOf = options.keyState;
    this.controller = options.controller;
  }

  /** Where the controller's per-key state comes from (the controller shown can change). */
  setKeyStateSource(fn: ((key: ObjectKey) => KeyState | undefined) | undefined): void {
    this.keyStateOf = fn;
  }

  /** The primary object of `key` as an informer delivered it; `undefined`: it was deleted (the key is forgotten). */
  observePrimary(key: ObjectKey, obj: KubeObject | undefined): void {
    if (this.disposed) return;
    if (!obj) {
      if (this.records.delete(key)) this.emitter.fire([key]);
      return;
    }
    const now = this.clock.now();
    const generation = typeof obj.metadata.generation === 'number' ? obj.metadata.generation : undefined;
    const specFingerprint = generation === undefined ? stableJson(obj.spec) : undefined;
    let r = this.records.get(key);
    if (!r) {
      r = { key, specChangedAt: now, lastChangeAt: now, reconciledAfterSpec: false, writes: 0, noOpWrites: 0, returns: [], objects: new Map() };
      if (generation !== undefined) r.generation = generation;
      if (specFingerprint !== undefined) r.specFingerprint = specFingerprint;
      this.records.set(key, r);
    } else if (generation !== undefined ? generation !== r.generation : specFingerprint !== r.specFingerprint) {
      // The desired state changed: a new history starts.
      r.generation = generation;
      r.specFingerprint = specFingerprint;
      r.specChangedAt = now;
      r.lastChangeAt = now;
      r.reconciledAfterSpec = false;
      r.writes = 0;
      r.noOpWrites = 0;
      r.returns = [];
      for (const t of r.objects.values()) t.history = t.history.slice(-1);
    }
    this.track(r, SELF, stateFingerprint(obj), now);
    this.update(r);
  }

  /**
   * An object the controller of `ownerKey` controls (a child with its controller ownerReference), as an informer
   * delivered it; `undefined`: it was deleted. `ref` names it for people ("ConfigMap ns/name").
   */
  observeOwned(ownerKey: ObjectKey, ref: string, obj: KubeObject | undefined): void {
    if (this.disposed) return;
    const r = this.records.get(ownerKey);
    if (!r) return;
    this.track(r, ref, stateFingerprint(obj), this.clock.now());
    this.update(r);
  }

  /** Journal entries (any order of batches, as delivered): writes and reconcile starts/ends of known keys. */
  observeJournal(entries: readonly JournalEntry[]): void {
    if (this.disposed) return;
    const only = this.controller?.();
    const touched = new Set<Record>();
    for (const e of entries) {
      if (e.key === undefined) continue;
      if (only !== undefined && e.controller !== undefined && e.controller !== only) continue;
      const r = this.records.get(e.key);
      if (!r) continue;
      switch (e.kind) {
        case 'reconcileStart':
          r.lastStartAt = e.at;
          break;
        case 'reconcileEnd': {
          const o = e.outcome;
          if (o.kind === 'error' || o.kind === 'terminal') r.lastFailure = o.message;
          else if (o.kind !== 'cancelled') {
            r.lastFailure = undefined;
            if (r.lastStartAt !== undefined && r.lastStartAt >= r.specChangedAt) r.reconciledAfterSpec = true;
          }
          break;
        }
        case 'write': {
          if (e.dryRun || e.error !== undefined) break;
          // A write that removed the last finalizer answers with the unchanged resourceVersion, yet deleted the object.
          const noOp = e.verb !== 'delete' && !e.deleted && e.resourceVersionBefore !== undefined && e.resourceVersionBefore === e.resourceVersionAfter;
          // An idle server-side apply (the whole intent sent on every pass) is neither a change nor a wasted write.
          if (noOp) {
            if (!isIdleApply(e)) r.noOpWrites++;
          }
          else {
            r.writes++;
            if (e.at > r.lastChangeAt) r.lastChangeAt = e.at;
          }
          break;
        }
        default:
          continue;
      }
      touched.add(r);
    }
    for (const r of touched) this.update(r);
  }

  /** The key's convergence now, or undefined for a key whose primary object was never seen (or is gone). */
  get(key: ObjectKey): KeyConvergence | undefined {
    const r = this.records.get(key);
    return r && this.classify(r, this.clock.now());
  }

  /** Every tracked key, sorted by key. */
  all(): KeyConvergence[] {
    const now = this.clock.now();
    return [...this.records.keys()].sort().map((k) => this.classify(this.records.get(k)!, now));
  }

  /** The keys in `state` now, sorted (for a tree filter). */
  keysIn(state: ConvergenceState): ObjectKey[] {
    return this.all()
      .filter((c) => c.state === state)
      .map((c) => c.key);
  }

  /**
   * The keys flapping now, unordered. Only keys with enough returns recorded at all are classified (a handful),
   * so this is cheap beside classifying every tracked key.
   */
  flappingKeys(): ObjectKey[] {
    const now = this.clock.now();
    const out: ObjectKey[] = [];
    for (const r of this.records.values()) {
      if (r.returns.length < this.flapReturns) continue;
      let inWindow = 0;
      for (const x of r.returns) if (x.at > now - this.flapWindowMs) inWindow++;
      if (inWindow >= this.flapReturns) out.push(r.key);
    }
    return out;
  }

  /** How many keys are in each state now. */
  counts(): { [S in ConvergenceState]: number } {
    const c = { converged: 0, changing: 0, flapping: 0 };
    for (const k of this.all()) c[k.state]++;
    return c;
  }

  /** Forgets every key (a new controller is shown: its history starts now). */
  reset(): void {
    const keys = [...this.records.keys()];
    this.records.clear();
    if (keys.length) this.emitter.fire(keys);
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.records.clear();
    this.emitter.dispose();
  }

  private track(r: Record, ref: string, fp: string, now: number): void {
    let t = r.objects.get(ref);
    if (!t) {
      // First sight of an object; a child that appears is a change of the key.
      r.objects.set(ref, { history: [fp] });
      if (ref !== SELF && fp !== ABSENT && now > r.lastChangeAt) r.lastChangeAt = now;
      return;
    }
    const current = t.history[t.history.length - 1];
    if (current === fp) return;
    if (t.history.slice(0, -1).includes(fp)) r.returns.push({ at: now, object: ref });
    t.history.push(fp);
    if (t.history.length > HISTORY) t.history.shift();
    if (now > r.lastChangeAt) r.lastChangeAt = now;
  }

  private classify(r: Record, now: number): KeyConvergence {
    const returns = r.returns.filter((x) => x.at > now - this.flapWindowMs);
    const base = {
      key: r.key,
      at: now,
      ...(r.generation !== undefined ? { generation: r.generation } : {}),
      specChangedAt: r.specChangedAt,
      lastChangeAt: r.lastChangeAt,
      writes: r.writes,
      noOpWrites: r.noOpWrites,
      returns: returns.length,
      ...(returns.length ? { flappingObject: returns[returns.length - 1]!.object } : {}),
    };
    const gen = r.generation !== undefined ? `generation ${r.generation}` : 'the spec';
    if (returns.length >= this.flapReturns) {
      const span = now - returns[0]!.at;
      return {
        ...base,
        state: 'flapping',
        reason: `${returns[returns.length - 1]!.object} went back to an earlier state ${returns.length} time(s) in the last ${secondsText(Math.max(span, 0))} while ${gen} stayed the same: writes undo each other or a status toggles.`,
      };
    }
    const failure = r.lastFailure ?? failureOf(this.keyStateOf?.(r.key));
    if (failure !== undefined) return { ...base, state: 'changing', reason: `The last reconcile failed (${failure}): not converged until one succeeds.` };
    if (!r.reconciledAfterSpec) {
      return { ...base, state: 'changing', reason: `${gen === 'the spec' ? 'The spec' : `Generation ${r.generation}`} was seen ${secondsText(now - r.specChangedAt)} ago and no reconcile has finished since.` };
    }
    const quietFor = now - r.lastChangeAt;
    const writes = r.writes ? ` ${r.writes} write(s) since ${gen} was seen` : '';
    if (quietFor < this.quietMs) {
      return { ...base, state: 'changing', reason: `Last change ${secondsText(quietFor)} ago:${writes || ' an object of the key changed'}; converged after ${secondsText(this.quietMs)} without changes.` };
    }
    const noOps = r.noOpWrites ? ` (${r.noOpWrites} write(s) that changed nothing)` : '';
    return {
      ...base,
      state: 'converged',
      convergedAt: r.lastChangeAt + this.quietMs,
      reason: `No writes or changes for ${secondsText(quietFor)} since ${gen} was reconciled${noOps}.`,
    };
  }

  /** Fires onDidChange when the key's state changed, and schedules the next time-driven re-evaluation. */
  private update(r: Record): void {
    const now = this.clock.now();
    const c = this.classify(r, now);
    const sig = `${c.state}|${c.state === 'changing' ? c.reason.replace(/[\d.]+ s/g, '') : ''}`;
    if (sig !== r.published) {
      r.published = sig;
      this.emitter.fire([r.key]);
    }
    this.schedule(this.dueOf(r, now));
  }

  /** When the key's state may next change by time alone (Infinity: only by an observation). */
  private dueOf(r: Record, now: number): number {
    let due = Infinity;
    const live = r.returns.filter((x) => x.at > now - this.flapWindowMs);
    if (live.length) due = Math.min(due, live[0]!.at + this.flapWindowMs);
    if (r.reconciledAfterSpec && now - r.lastChangeAt < this.quietMs) due = Math.min(due, r.lastChangeAt + this.quietMs);
    return due;
  }

  private schedule(due: number): void {
    if (this.disposed || due === Infinity || due >= this.timerDue) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = this.clock.setTimeout(() => this.onTimer(), Math.max(0, due - this.clock.now()));
  }

  private onTimer(): void {
    this.timer = undefined;
    this.timerDue = Infinity;
    if (this.disposed) return;
    const now = this.clock.now();
    const changed: ObjectKey[] = [];
    let next = Infinity;
    for (const r of this.records.values()) {
      const c = this.classify(r, now);
      const sig = `${c.state}|${c.state === 'changing' ? c.reason.replace(/[\d.]+ s/g, '') : ''}`;
      if (sig !== r.published) {
        r.published = sig;
        changed.push(r.key);
      }
      next = Math.min(next, this.dueOf(r, now));
    }
    if (changed.length) this.emitter.fire(changed);
    this.schedule(next);
  }
}

function failureOf(s: KeyState | undefined): string | undefined {
  const o = s?.lastOutcome;
  return o && (o.kind === 'error' || o.kind === 'terminal') ? o.message : undefined;
}
