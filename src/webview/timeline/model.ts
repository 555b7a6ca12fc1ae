/**
 * The timeline's model: one lane per key, built from timeline entries (the
 * host's compact form of journal entries) as they arrive.
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
  readonly key: string;
  readonly marks: Mark[];
  readonly spans: Span[];
  /** The longest closed span so far (bounds the search for spans that reach into a window). */
  maxSpanMs: number;
  openQueue?: Span;
  openWait?: Span;
  openReconcile?: Span;
  /** The controller of the key's last queue or reconcile entry (a `stopped` entry of it ends the open intervals). */
  controller?: string;
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
  private readonly byKey = new Map<string, Lane>();
  /** Lanes ordered by key. */
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

  laneIndex(key: string): number {
    const lane = this.byKey.get(key);
    return lane ? this.ordered.indexOf(lane) : -1;
  }

  /** Empties the model; `olderDropped`: the entries about to be added are not the whole history (see incompleteBefore). */
  clear(olderDropped = false): void {
    this.olderDropped = olderDropped;
    this.byKey.clear();
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

  private lane(key: string): Lane {
    let lane = this.byKey.get(key);
    if (!lane) {
      lane = { key, marks: [], spans: [], maxSpanMs: 0 };
      this.byKey.set(key, lane);
      // Keep lanes sorted by key (binary search on the key string).
      let lo = 0;
      let hi = this.ordered.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.ordered[mid]!.key < key) lo = mid + 1;
        else hi = mid;
      }
      this.ordered.splice(lo, 0, lane);
    }
    return lane;
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
    const lane = this.lane(e.key);
    if (e.controller !== undefined) lane.controller = e.controller;
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
      else this.byKey.delete(l.key);
    }
    this.ordered = keep;
    this.count = count;
    this.first = cutoff;
    this.olderDropped = true;
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
