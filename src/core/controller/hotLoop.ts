import type { ObjectKey } from '../k8s/keys.ts';
import type { EnqueueReason } from './keyState.ts';

/**
 * Hot-loop detection: a key reconciled again and again, each time because of
 * an event, while its spec did not change (`metadata.generation` stayed the
 * same). The classic cause is a reconciler that writes status on every pass:
 * the write is an update event, the update enqueues the key, the reconcile
 * writes status again.
 *
 * Only event-triggered reconciles count: runs triggered only by the initial
 * list, a resync, a requeue-after, a backoff retry or a manual request are
 * intentional and ignored. A generation change starts the count over, except
 * one the reconciler made itself: a run triggered only by updates of the
 * object, after the previous run wrote to it, continues the count (cause
 * `generationBump`): a reconciler that rewrites the spec on every pass, or the
 * status of a CRD without the status subresource (written with the object, it
 * bumps the generation), loops while the generation keeps moving.
 *
 * Kinds without `metadata.generation` (ConfigMaps, Secrets, …) have no spec
 * version to compare, so a different rule applies (cause `objectWrite`): a run
 * counts only when it was triggered by nothing but updates of the object and
 * the previous run of the key wrote to the object — the reconciler's own write
 * started it. Any other event-triggered run (someone else's update, a child's
 * event) starts the count over; intentional runs neither count nor break it.
 *
 * One kind of requeue-after is counted (cause `tightRequeue`, any kind of object): runs started only by a
 * requeue-after shorter than {@link TIGHT_REQUEUE_MS} that the previous reconcile asked for. Repeated, that is a loop
 * as hot as any, and nearly always a unit mistake (an exec program's `requeueAfterMs: 5` meant as seconds, a Go
 * `RequeueAfter: 5` that is 5 ns). A run started by anything else starts that count over.
 */

/** A requeue-after shorter than this (ms), asked for again and again, is counted as a hot loop (`tightRequeue`). */
export const TIGHT_REQUEUE_MS = 100;
export interface HotLoopOptions {
  /** The window the reconciles must fall in. Default 10 s. */
  windowMs?: number;
  /** Reconciles within the window that make a hot loop. Default 10. */
  threshold?: number;
  /** No second warning for a key within this time (unless its generation changes). Default 60 s. */
  cooldownMs?: number;
  /**
   * How the person can turn on the generation-changed predicate from where they run the loop, completing
   * "Turn on the generation-changed predicate …": e.g. "run with --predicate generation-changed" (CLI), "add
   * \"generation-changed\" to the setting reconcileLab.reconciler.predicates" (extension). Default: the library call.
   */
  predicateAdvice?: string;
}

/** The default {@link HotLoopOptions.predicateAdvice}: for code that builds its controller itself. */
export const LIBRARY_PREDICATE_ADVICE = 'pass predicates: [generationChanged()] for the primary resource (controllerBuilder(…).for(informer, { predicates: [generationChanged()] }))';

export type HotLoopCause = 'statusWrite' | 'generationBump' | 'objectWrite' | 'ownedChild' | 'watched' | 'tightRequeue' | 'unknown';

export interface HotLoopObservation {
  key: ObjectKey;
  at: number;
  /** Generation of the primary object when the reconcile started (undefined: not in cache, or a kind without generation). */
  generation: number | undefined;
  /**
   * Whether the primary object is in the cache. Tells a kind without `metadata.generation` (present, generation
   * undefined) from an object that is gone. Default: `generation !== undefined`.
   */
  present?: boolean;
  triggers: readonly EnqueueReason[];
  /** Writes by the previous reconcile of this key to its own primary object (status or main resource). */
  selfWrites: number;
  /**
   * Of {@link selfWrites}, those to the object itself rather than a subresource (its metadata or spec: a finalizer,
   * a label, an annotation). Default 0: every self write counted as a status write.
   */
  selfObjectWrites?: number;
}

export interface HotLoopWarning {
  key: ObjectKey;
  count: number;
  spanMs: number;
  /** The generation the loop ran at (the latest); undefined for a kind without generation (cause `objectWrite`). */
  generation: number | undefined;
  cause: HotLoopCause;
  message: string;
}

interface Track {
  generation: number;
  /** The generation the count started at (below `generation` after bumps by the reconciler's own writes). */
  firstGeneration: number;
  /** Generation changes that followed the reconciler's own writes to the object, while counting. */
  bumps: number;
  times: number[];
  causes: Record<'self' | 'owned' | 'watched', number>;
  /** Owned children whose add event started a counted run (a new child each pass: generateName), at most a few kept. */
  addedChildren: Set<string>;
  ownedAdds: number;
  selfWrites: number;
  /** Of `selfWrites`, those to the object itself, not its status ({@link HotLoopObservation.selfObjectWrites}). */
  selfObjectWrites: number;
  lastWarnAt?: number;
}

/** The count for a key whose object has no generation: consecutive runs started by the reconciler's own writes. */
interface SelfWriteTrack {
  times: number[];
  /** Writes to the object by the runs that started the counted ones. */
  selfWrites: number;
  lastWarnAt?: number;
}

export class HotLoopDetector {
  private readonly windowMs: number;
  private readonly threshold: number;
  private readonly cooldownMs: number;
  private readonly predicateAdvice: string;
  private readonly tracks = new Map<ObjectKey, Track>();
  private readonly ungenerated = new Map<ObjectKey, SelfWriteTrack>();
  /** Keys whose latest runs were started only by a tight requeue-after: their times, and the last delay asked for. */
  private readonly tight = new Map<ObjectKey, { times: number[]; afterMs: number; lastWarnAt?: number }>();

  constructor(options: HotLoopOptions = {}) {
    this.windowMs = options.windowMs ?? 10_000;
    this.threshold = Math.max(2, options.threshold ?? 10);
    this.cooldownMs = options.cooldownMs ?? 60_000;
    this.predicateAdvice = options.predicateAdvice ?? LIBRARY_PREDICATE_ADVICE;
  }

  /** Feeds one reconcile start; returns a warning when the key is in a hot loop. */
  observe(o: HotLoopObservation): HotLoopWarning | undefined {
    const tight = o.triggers.length > 0 && o.triggers.every((r) => r.kind === 'requeueAfter' && r.afterMs < TIGHT_REQUEUE_MS);
    if (tight) return this.observeTightRequeue(o);
    this.tight.delete(o.key);
    if (o.generation === undefined) {
      this.tracks.delete(o.key);
      if (o.present) return this.observeUngenerated(o);
      this.ungenerated.delete(o.key);
      return undefined;
    }
    this.ungenerated.delete(o.key);
    const kinds = eventKinds(o.triggers);
    if (!kinds) return undefined;
    let t = this.tracks.get(o.key);
    if (t && t.generation !== o.generation && o.selfWrites > 0 && kinds.every((k) => k === 'self')) {
      // The previous run wrote to the object and its update (alone) started this one: the reconciler moved the
      // generation itself. The same loop, not a spec change by someone else.
      t.generation = o.generation;
      t.bumps++;
    } else if (!t || t.generation !== o.generation) {
      t = { generation: o.generation, firstGeneration: o.generation, bumps: 0, times: [], causes: { self: 0, owned: 0, watched: 0 }, addedChildren: new Set(), ownedAdds: 0, selfWrites: 0, selfObjectWrites: 0 };
      this.tracks.set(o.key, t);
    }
    t.times.push(o.at);
    for (const k of kinds) t.causes[k]++;
    for (const r of o.triggers) {
      if (r.kind !== 'owned' || r.event !== 'add') continue;
      t.ownedAdds++;
      if (t.addedChildren.size < 100) t.addedChildren.add(r.child);
    }
    t.selfWrites += o.selfWrites;
    t.selfObjectWrites += Math.min(o.selfObjectWrites ?? 0, o.selfWrites);
    return this.due(t, o.at) ? this.warning(o.key, t, o.at) : undefined;
  }

  /**
   * Counts a run at `at` in `t` (its times already hold it) over the window: true when the window holds at least the
   * threshold of runs and the key was not warned about within the cooldown, in which case the warning is due now
   * (`lastWarnAt` is set). Drops the times that fell out of the window.
   */
  private due(t: { times: number[]; lastWarnAt?: number }, at: number): boolean {
    while (t.times.length > 0 && t.times[0]! < at - this.windowMs) t.times.shift();
    if (t.times.length < this.threshold) return false;
    if (t.lastWarnAt !== undefined && at - t.lastWarnAt < this.cooldownMs) return false;
    t.lastWarnAt = at;
    return true;
  }

  forget(key: ObjectKey): void {
    this.tracks.delete(key);
    this.ungenerated.delete(key);
    this.tight.delete(key);
  }

  /** {@link observe} for a run started only by a requeue-after under {@link TIGHT_REQUEUE_MS} (cause `tightRequeue`). */
  private observeTightRequeue(o: HotLoopObservation): HotLoopWarning | undefined {
    const afterMs = Math.max(...o.triggers.map((r) => (r.kind === 'requeueAfter' ? r.afterMs : 0)));
    let t = this.tight.get(o.key);
    if (!t) {
      t = { times: [], afterMs };
      this.tight.set(o.key, t);
    }
    t.times.push(o.at);
    t.afterMs = afterMs;
    if (!this.due(t, o.at)) return undefined;
    const count = t.times.length;
    const spanMs = o.at - t.times[0]!;
    // A Go RequeueAfter of 5 (ns) arrives as 0.000005 ms: said in ns.
    const delay = afterMs >= 1 || afterMs === 0 ? `${Number(afterMs.toFixed(3))} ms` : `${Number((afterMs * 1e6).toFixed(0))} ns`;
    const message =
      `Hot loop: ${o.key} was reconciled ${count} times in ${(spanMs / 1000).toFixed(1)} s, each time by the requeue-after of ${delay} that its previous reconcile asked for. ` +
      'A requeue-after is a duration: an exec program\'s or a module\'s requeueAfterMs is in milliseconds (5000 is 5 s), and a Go RequeueAfter written as a bare number is in nanoseconds (write 5 * time.Second). ' +
      'Ask to look again only as often as what you wait for can change, or watch it instead (an owned or watched resource queues the key when it changes).';
    return { key: o.key, count, spanMs, generation: o.generation, cause: 'tightRequeue', message };
  }

  /** The window reconciles are counted over (ms). */
  get window(): number {
    return this.windowMs;
  }

  /**
   * Whether `key` still loops at `now`: at least half the threshold of its counted reconciles fall within the window
   * before `now`. A loop that was fixed (or stopped) stops feeding reconciles and so stops looping one window later.
   */
  looping(key: ObjectKey, now: number): boolean {
    const times = this.tracks.get(key)?.times ?? this.ungenerated.get(key)?.times ?? this.tight.get(key)?.times ?? [];
    let recent = 0;
    for (const t of times) if (t >= now - this.windowMs) recent++;
    return recent >= Math.ceil(this.threshold / 2);
  }

  /** {@link observe} for an object without generation: see {@link HotLoopOptions} (cause `objectWrite`). */
  private observeUngenerated(o: HotLoopObservation): HotLoopWarning | undefined {
    const kinds = eventKinds(o.triggers);
    if (!kinds) return undefined;
    if (o.selfWrites === 0 || !kinds.every((k) => k === 'self')) {
      // Another cause than the reconciler's own write: not (or no longer) the self-triggered loop.
      this.ungenerated.delete(o.key);
      return undefined;
    }
    let t = this.ungenerated.get(o.key);
    if (!t) {
      t = { times: [], selfWrites: 0 };
      this.ungenerated.set(o.key, t);
    }
    t.times.push(o.at);
    t.selfWrites += o.selfWrites;
    if (!this.due(t, o.at)) return undefined;
    const count = t.times.length;
    const spanMs = o.at - t.times[0]!;
    const message =
      `Hot loop: ${o.key} was reconciled ${count} times in ${(spanMs / 1000).toFixed(1)} s, each time triggered only by the update that the previous pass wrote to the object (${t.selfWrites} write(s)). ` +
      'The reconciler writes the object on every pass, and its own write triggers the next reconcile. ' +
      'Compare with the stored object before writing and write only when something differs (this kind has no metadata.generation, so a generation-changed predicate would drop every update of it, not just these).';
    return { key: o.key, count, spanMs, generation: undefined, cause: 'objectWrite', message };
  }

  private warning(key: ObjectKey, t: Track, at: number): HotLoopWarning {
    const count = t.times.length;
    const spanMs = at - t.times[0]!;
    const { self, owned, watched } = t.causes;
    const cause: HotLoopCause =
      t.bumps > 0 ? 'generationBump' : self >= owned && self >= watched && self > 0 ? 'statusWrite' : owned >= watched && owned > 0 ? 'ownedChild' : watched > 0 ? 'watched' : 'unknown';
    const span = `${count} times in ${(spanMs / 1000).toFixed(1)} s`;
    const head =
      cause === 'generationBump'
        ? `Hot loop: ${key} was reconciled ${span}, and its generation went from ${t.firstGeneration} to ${t.generation} through the reconciler's own writes to it (${t.selfWrites} write(s)).`
        : `Hot loop: ${key} was reconciled ${span} while its generation stayed ${t.generation} (no spec change).`;
    let advice: string;
    switch (cause) {
      case 'generationBump':
        advice =
          'Each pass changes what counts as the spec — the spec itself (a field rewritten every time: a timestamp, a default, a re-ordered list), or the status of a CRD without the status subresource, which is written with the object and bumps the generation — and that update starts the next pass. ' +
          'Compare with the stored object and write only what differs; for a status, add "subresources: { status: {} }" to the CRD (a generation-changed predicate does not help here: the generation changes each time).';
        break;
      case 'statusWrite':
        advice =
          t.selfObjectWrites * 2 > t.selfWrites
            ? `Each run was triggered by an update of the object itself, and the reconciler wrote to the object ${t.selfObjectWrites} time(s), not to its status: it changes the object's metadata on every pass (a finalizer, a label or an annotation written again, or appended to: the generation does not move), and that update starts the next pass. ` +
              'Compare with the stored object and write only what differs (add a finalizer only when metadata.finalizers lacks it); a generation-changed predicate would hide the loop, not stop the write each reconcile makes.'
            : `Each run was triggered by an update of the object itself${t.selfWrites > 0 ? `, and the reconciler wrote to it ${t.selfWrites} time(s)` : ''}. ` +
              `Likely cause: the status write re-triggers the watch. Write status only when it actually changed, or turn on the generation-changed predicate: ${this.predicateAdvice}.`;
        break;
      case 'ownedChild': {
        // Most runs started by a child that was just created, each a different one: a new child every pass.
        const fresh = t.addedChildren.size >= 2 && t.ownedAdds * 2 >= owned;
        const some = [...t.addedChildren].slice(-2).join(', ');
        advice = fresh
          ? `Each run was triggered by a new owned child appearing (${t.addedChildren.size >= 100 ? '100 or more' : t.addedChildren.size} different ones, e.g. ${some}). Likely cause: the reconciler creates another child on every pass (with metadata.generateName, or a name that changes each time) instead of finding the one it made; each create starts the next pass and leaves one more object behind. Look the child up first (a fixed name, or a list by label and owner) and create it only when it is missing.`
          : 'Each run was triggered by an owned child changing. Likely cause: the reconciler rewrites the child on every pass (a field that changes each time, such as a timestamp) or another controller keeps updating it. Compare the child with what you want before writing it.';
        break;
      }
      case 'watched':
        advice = 'Each run was triggered by a watched object changing. Check that the reconciler does not write to the objects it watches on every pass.';
        break;
      default:
        advice = 'Check which writes the reconciler makes on every pass.';
    }
    return { key, count, spanMs, generation: t.generation, cause, message: `${head} ${advice}` };
  }
}

/** The event kinds that triggered a run, or undefined if the run was (also) intentional. */
function eventKinds(triggers: readonly EnqueueReason[]): Array<'self' | 'owned' | 'watched'> | undefined {
  if (triggers.length === 0) return undefined;
  const out: Array<'self' | 'owned' | 'watched'> = [];
  for (const r of triggers) {
    if (r.kind === 'informer' && r.event === 'update') out.push('self');
    else if (r.kind === 'owned' && r.event !== 'resync') out.push('owned');
    else if (r.kind === 'watch' && r.event !== 'resync') out.push('watched');
    else return undefined;
  }
  return out;
}
