/**
 * The timeline's model: one lane per key of one controller, built from timeline entries (the host's compact form of
 * journal entries) as they arrive. Two controllers with the same key (a Backup and a BackupPolicy both `g-ops/x`, or
 * the built-in loop beside a Go controller) get two lanes, each labelled with its controller once lanes of more than
 * one controller are held ({@link TimelineModel.label}); an entry of no controller (a person's action, a write made
 * on their behalf) goes on the lane of its key that a controller's entry last went to.
 *
 * - marks (points): informer events, writes, a person's actions, warnings;
 * - spans (intervals): queue waits (queued → a worker took it), backoff and
 *   requeue-after waits (waiting → due or ended early), reconciles (start →
 *   end, coloured by outcome; open while running).
 *
 * Invariants: in every lane `marks` and `spans` are ordered by time (entries
 * arrive in journal order and journal times never go back; a late entry is
 * inserted in place); at most one queue wait, one delayed wait and one
 * reconcile are open per lane; `size` counts marks + spans of all lanes and is
 * kept at or below `capacity` by dropping the oldest items. Pure: no DOM, no
 * clock ("now" is passed in), unit-tested with plain numbers.
 */
import type { TimelineEntryView } from '../../shared/protocol.ts';

export type MarkKind = 'event' | 'write' | 'action' | 'warning';
export type SpanKind = 'queue' | 'backoff' | 'requeueAfter' | 'reconcile';

export interface Mark {
  readonly kind: MarkKind;
  readonly time: number;
  readonly seq: number;
  readonly label: string;
  readonly dryRun?: boolean;
  readonly error?: boolean;
}

export interface Span {
  readonly kind: SpanKind;
  readonly start: number;
  /** undefined while open (a running reconcile, a queue wait): drawn up to "now". */
  end: number | undefined;
  /** The entry that started it, and the one that ended it. */
  readonly seq: number;
  endSeq?: number;
  label: string;
  /** For reconciles: the outcome kind once ended. */
  outcome?: string;
}

export interface Lane {
  /**
   * The lane's identity (the view's keyboard cursor and focus hold it): unique among the model's lanes, fixed when
   * the lane is made (a lane adopted by a controller keeps it), the same for the same entries added again.
   */
  readonly id: string;
  readonly key: string;
  readonly marks: Mark[];
  readonly spans: Span[];
  /** The longest closed span so far (bounds the search for spans that reach into a window). */
  maxSpanMs: number;
  openQueue?: Span;
  openWait?: Span;
  openReconcile?: Span;
  /**
   * The controller whose key the lane is (a `stopped` entry of it ends the open intervals). Undefined for a lane
   * made by an entry of no controller before any controller's entry of its key: the first controller entry of the
   * key then adopts it (sets this once).
   */
  controller?: string;
}

/**
 * What the timeline was opened on (Show Timeline on a key): the key and, when the caller knew it (a Work Queue row,
 * an Event Log entry, a Resources row of the controller the views show), the controller whose lane of it is meant.
 */
export interface LaneFocus {
  readonly key: string;
  readonly controller?: string;
}

/**
 * Whether `lane` is one of `focus`'s lanes (highlighted, scrolled to, where the keyboard cursor starts). With a
 * controller: the key's lane of that controller, or the key's lane of no controller (held only until a controller's
 * first entry of the key adopts it); another controller's lane of the key never. Without one: every lane of the key.
 * Lanes made after the focus was set match the same way.
 */
export function isFocusLane(lane: Lane, focus: LaneFocus): boolean {
  if (lane.key !== focus.key) return false;
  return focus.controller === undefined || lane.controller === undefined || lane.controller === focus.controller;
}

/**
 * Whether the key filter `filter` (the text in the key box, matched against lane labels) may stay when the timeline
 * is focused on `focus`: it is blank, the focused key contains it (so the focused lane's label does), or it shows a
 * lane of the focus among `shown` (one naming the controller: `[backup]`). Otherwise the filter hides the focused
 * lane and is cleared; it is never replaced by a lane's label, so the box keeps saying what the person typed.
 */
export function filterKeepsFocus(filter: string, focus: LaneFocus, shown: readonly Lane[]): boolean {
  const f = filter.trim();
  return f === '' || focus.key.includes(f) || shown.some((l) => isFocusLane(l, focus));
}

/** Lane order: by key, then by controller (a key's lanes of several controllers sit together). */
function laneBefore(a: { key: string; controller?: string | undefined }, b: { key: string; controller?: string | undefined }): boolean {
  if (a.key !== b.key) return a.key < b.key;
  return (a.controller ?? '') < (b.controller ?? '');
}

/** What a click or hover hits. */
export interface Hit {
  readonly seq: number;
  readonly label: string;
  readonly kind: MarkKind | SpanKind;
}

/** First index in `arr` whose `at(i)` is ≥ t (arr ordered by it). */
function lowerBound<T>(arr: readonly T[], t: number, at: (x: T) => number): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (at(arr[mid]!) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const markTime = (m: Mark) => m.time;
const spanStart = (s: Span) => s.start;

export class TimelineModel {
  /** The lanes of each key (one per controller). */
  private readonly byKey = new Map<string, Lane[]>();
  /** The lane of each key a controller's entry last went to (where an entry of no controller goes). */
  private readonly lastOfKey = new Map<string, Lane>();
  /** The controllers that have lanes. */
  private controllers = new Set<string>();
  /** Lanes ordered by key, then controller. */
  private ordered: Lane[] = [];
  private count = 0;
  private first = Number.POSITIVE_INFINITY;
  private last = Number.NEGATIVE_INFINITY;
  private readonly cap: number;
  /** History before the oldest item held is incomplete: the snapshot said so, or a trim dropped items. */
  private olderDropped = false;

  constructor(capacity = 100_000) {
    this.cap = Math.max(100, Math.floor(capacity));
  }

  get lanes(): readonly Lane[] {
    return this.ordered;
  }

  /** Marks + spans held. */
  get size(): number {
    return this.count;
  }

  /** Earliest and latest entry time seen (undefined before the first entry). */
  get range(): { from: number; to: number } | undefined {
    return this.count === 0 ? undefined : { from: this.first, to: this.last };
  }

  /**
   * The time before which the timeline is incomplete (the journal or the model's own capacity dropped older
   * entries): the earliest time held. Undefined while nothing was dropped.
   */
  get incompleteBefore(): number | undefined {
    return this.olderDropped && this.count > 0 ? this.first : undefined;
  }

  /**
   * What the lane's label says: its key, and, while lanes of more than one controller are held, its controller first
   * (`[backup] g-ops/x`, as the Event Log names a row's controller). Plain text: drawn on a canvas or set as
   * textContent, never markup.
   */
  label(lane: Lane): string {
    return this.controllers.size > 1 && lane.controller !== undefined ? `[${lane.controller}] ${lane.key}` : lane.key;
  }

  /** Empties the model; `olderDropped`: the entries about to be added are not the whole history (see incompleteBefore). */
  clear(olderDropped = false): void {
    this.olderDropped = olderDropped;
    this.byKey.clear();
    this.lastOfKey.clear();
    this.controllers = new Set();
    this.ordered = [];
    this.count = 0;
    this.first = Number.POSITIVE_INFINITY;
    this.last = Number.NEGATIVE_INFINITY;
  }

  /** Adds entries (in journal order). */
  add(entries: readonly TimelineEntryView[]): void {
    for (const e of entries) this.addOne(e);
    if (this.count > this.cap) this.trim();
  }

  /**
   * The lane of `e`: its controller's lane of its key (made, or adopted from the key's lane of no controller, when
   * missing); for an entry of no controller, the key's lane a controller's entry last went to, else any of the key's
   * lanes, else a new lane of no controller.
   */
  private laneOf(e: TimelineEntryView): Lane {
    const c = e.controller;
    const lanes = this.byKey.get(e.key);
    if (c === undefined) return this.lastOfKey.get(e.key) ?? lanes?.[0] ?? this.makeLane(e.key, undefined);
    let lane = lanes?.find((l) => l.controller === c);
    if (!lane) {
      const free = lanes?.find((l) => l.controller === undefined);
      if (free) {
        this.ordered.splice(this.ordered.indexOf(free), 1);
        free.controller = c;
        this.insertOrdered(free);
        this.controllers.add(c);
        lane = free;
      } else {
        lane = this.makeLane(e.key, c);
      }
    }
    this.lastOfKey.set(e.key, lane);
    return lane;
  }

  private makeLane(key: string, controller: string | undefined): Lane {
    const lane: Lane = { id: controller === undefined ? `\u0000${key}` : `${controller}\u0000${key}`, key, marks: [], spans: [], maxSpanMs: 0, ...(controller !== undefined ? { controller } : {}) };
    const lanes = this.byKey.get(key);
    if (lanes) lanes.push(lane);
    else this.byKey.set(key, [lane]);
    if (controller !== undefined) this.controllers.add(controller);
    this.insertOrdered(lane);
    return lane;
  }

  /** Inserts `lane` in `ordered` at its place (binary search). */
  private insertOrdered(lane: Lane): void {
    let lo = 0;
    let hi = this.ordered.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (laneBefore(this.ordered[mid]!, lane)) lo = mid + 1;
      else hi = mid;
    }
    this.ordered.splice(lo, 0, lane);
  }

  private mark(lane: Lane, m: Mark): void {
    const arr = lane.marks;
    if (arr.length === 0 || arr[arr.length - 1]!.time <= m.time) arr.push(m);
    else arr.splice(lowerBound(arr, m.time + 1e-9, markTime), 0, m);
    this.count++;
  }

  private open(lane: Lane, s: Span): Span {
    const arr = lane.spans;
    if (arr.length === 0 || arr[arr.length - 1]!.start <= s.start) arr.push(s);
    else arr.splice(lowerBound(arr, s.start + 1e-9, spanStart), 0, s);
    this.count++;
    if (s.end !== undefined) lane.maxSpanMs = Math.max(lane.maxSpanMs, s.end - s.start);
    return s;
  }

  private close(lane: Lane, s: Span, end: number, seq: number): void {
    s.end = Math.max(s.start, end);
    s.endSeq = seq;
    lane.maxSpanMs = Math.max(lane.maxSpanMs, s.end - s.start);
  }

  private addOne(e: TimelineEntryView): void {
    this.first = Math.min(this.first, e.time);
    this.last = Math.max(this.last, e.time, e.dueAt ?? e.time);
    if (e.type === 'stopped') {
      // No lane of its own: the controller's queue is gone, so are its keys' waits and running reconciles.
      for (const l of this.ordered) {
        if (l.controller !== e.controller) continue;
        if (l.openQueue) this.close(l, l.openQueue, e.time, e.seq);
        if (l.openWait) this.close(l, l.openWait, Math.min(e.time, l.openWait.end ?? e.time), e.seq);
        if (l.openReconcile) this.close(l, l.openReconcile, e.time, e.seq);
        l.openQueue = l.openWait = l.openReconcile = undefined;
      }
      return;
    }
    const lane = this.laneOf(e);
    switch (e.type) {
      case 'event':
      case 'write':
      case 'action':
      case 'warning':
        this.mark(lane, { kind: e.type, time: e.time, seq: e.seq, label: e.label, ...(e.dryRun ? { dryRun: true } : {}), ...(e.error ? { error: true } : {}) });
        return;
      case 'queued':
        if (!lane.openQueue) lane.openQueue = this.open(lane, { kind: 'queue', start: e.time, end: undefined, seq: e.seq, label: e.label });
        return;
      case 'processing':
        if (lane.openQueue) this.close(lane, lane.openQueue, e.time, e.seq);
        lane.openQueue = undefined;
        return;
      case 'waiting': {
        if (lane.openWait) this.close(lane, lane.openWait, Math.min(e.time, lane.openWait.end ?? e.time), e.seq);
        const dueAt = e.dueAt ?? e.time;
        const s = this.open(lane, { kind: e.wait === 'requeueAfter' ? 'requeueAfter' : 'backoff', start: e.time, end: dueAt, seq: e.seq, label: e.label });
        lane.openWait = s;
        return;
      }
      case 'waitEnd':
        if (lane.openWait) this.close(lane, lane.openWait, e.time, e.seq);
        lane.openWait = undefined;
        return;
      case 'reconcileStart':
        if (lane.openQueue) {
          this.close(lane, lane.openQueue, e.time, e.seq);
          lane.openQueue = undefined;
        }
        if (lane.openReconcile) this.close(lane, lane.openReconcile, e.time, e.seq);
        lane.openReconcile = this.open(lane, { kind: 'reconcile', start: e.time, end: undefined, seq: e.seq, label: e.label });
        return;
      case 'reconcileEnd': {
        const s = lane.openReconcile ?? this.open(lane, { kind: 'reconcile', start: e.time, end: undefined, seq: e.seq, label: e.label });
        this.close(lane, s, e.time, e.seq);
        s.outcome = e.outcome ?? 'success';
        s.label = `${s.label} → ${e.label}`;
        lane.openReconcile = undefined;
        return;
      }
    }
  }

  /** Drops the oldest items so that about three quarters of the capacity stay (open spans always stay). */
  private trim(): void {
    const starts: number[] = [];
    for (const l of this.ordered) {
      for (const m of l.marks) starts.push(m.time);
      for (const s of l.spans) starts.push(s.start);
    }
    starts.sort((a, b) => a - b);
    const cutoff = starts[Math.max(0, starts.length - Math.floor((this.cap * 3) / 4))] ?? Number.NEGATIVE_INFINITY;
    let count = 0;
    const keep: Lane[] = [];
    for (const l of this.ordered) {
      const mi = lowerBound(l.marks, cutoff, markTime);
      l.marks.splice(0, mi);
      const kept = l.spans.filter((s) => s.start >= cutoff || s === l.openQueue || s === l.openWait || s === l.openReconcile);
      l.spans.splice(0, l.spans.length, ...kept);
      count += l.marks.length + l.spans.length;
      if (l.marks.length + l.spans.length > 0) keep.push(l);
      else this.forget(l);
    }
    this.ordered = keep;
    this.controllers = new Set(keep.flatMap((l) => (l.controller !== undefined ? [l.controller] : [])));
    this.count = count;
    this.first = cutoff;
    this.olderDropped = true;
  }

  /** Drops `lane` from the key's lanes (a trim emptied it). */
  private forget(lane: Lane): void {
    const rest = (this.byKey.get(lane.key) ?? []).filter((l) => l !== lane);
    if (rest.length > 0) this.byKey.set(lane.key, rest);
    else this.byKey.delete(lane.key);
    if (this.lastOfKey.get(lane.key) === lane) this.lastOfKey.delete(lane.key);
  }

  /** Indices [from, to) of the lane's marks within [t0, t1]. */
  marksIn(lane: Lane, t0: number, t1: number): { from: number; to: number } {
    return { from: lowerBound(lane.marks, t0, markTime), to: lowerBound(lane.marks, t1 + 1e-9, markTime) };
  }

  /**
   * Indices [from, to) of the lane's spans that may intersect [t0, t1]: every span starting in the window,
   * plus the earlier ones that could still reach into it (start ≥ t0 − longest span). Open spans are not
   * bounded by that and are checked by the caller through `openQueue` / `openWait` / `openReconcile`.
   */
  spansIn(lane: Lane, t0: number, t1: number): { from: number; to: number } {
    return { from: lowerBound(lane.spans, t0 - lane.maxSpanMs, spanStart), to: lowerBound(lane.spans, t1 + 1e-9, spanStart) };
  }

  /**
   * What lies at time `t` in `lane`: the nearest mark within `tolMs`, else the innermost span (the reconcile
   * over a wait) that contains `t` (open spans reach up to `now`).
   */
  hitTest(lane: Lane, t: number, tolMs: number, now: number): Hit | undefined {
    const { from, to } = this.marksIn(lane, t - tolMs, t + tolMs);
    let best: Mark | undefined;
    for (let i = from; i < to; i++) {
      const m = lane.marks[i]!;
      if (!best || Math.abs(m.time - t) < Math.abs(best.time - t)) best = m;
    }
    if (best) return { seq: best.seq, label: best.label, kind: best.kind };
    const order: Record<SpanKind, number> = { reconcile: 0, backoff: 1, requeueAfter: 1, queue: 2 };
    let hit: Span | undefined;
    const consider = (s: Span | undefined) => {
      if (!s) return;
      const end = s.end ?? now;
      if (t >= s.start - tolMs && t <= end + tolMs && (!hit || order[s.kind] < order[hit.kind])) hit = s;
    };
    const r = this.spansIn(lane, t - tolMs, t + tolMs);
    for (let i = r.from; i < r.to; i++) consider(lane.spans[i]);
    consider(lane.openQueue);
    consider(lane.openReconcile);
    return hit ? { seq: hit.seq, label: hit.label, kind: hit.kind } : undefined;
  }
}

/**
 * `text` cut in the middle to fit `max` (in the units of `measure`, e.g. canvas pixels): the start and the end stay,
 * joined by "…", about a third of the kept characters from the start and two thirds from the end. A lane key
 * "team-alpha/a-very-long-name-…-x" keeps its namespace's start and its name's end; cutting only the start lost the
 * namespace (and a long name lost everything but its last characters). Unchanged when it fits.
 */
export function fitMiddle(text: string, max: number, measure: (s: string) => number): string {
  if (measure(text) <= max) return text;
  for (let n = text.length - 1; n > 0; n--) {
    const head = Math.ceil(n / 3);
    const s = `${text.slice(0, head)}…${text.slice(text.length - (n - head))}`;
    if (measure(s) <= max) return s;
  }
  return '…';
}
