import { type LogEntryView, type LogFilter, matchesFilter, normalizeFilter } from '../../shared/protocol.ts';

/**
 * The webview's copy of the journal: at most `capacity` newest entries, plus
 * the subsequence that matches the current filter (what the list shows).
 *
 * Invariants: `entries` is ordered by `seq` and holds at most
 * `capacity + slack` items (trimming is amortised so that an append is O(1)
 * on average); `visible` is exactly the entries of `entries` that match
 * `filter`, in the same order. Callers MUST NOT mutate returned entries.
 */
export class LogBuffer {
  private entries: LogEntryView[] = [];
  private visible: LogEntryView[] = [];
  private filter: LogFilter = {};
  private cap: number;
  /** Entries the snapshot said were already gone, and the entries received since it (or since `clear()`). */
  private olderAtReset = 0;
  private received = 0;

  constructor(capacity: number) {
    this.cap = Math.max(1, Math.floor(capacity));
  }

  get capacity(): number {
    return this.cap;
  }

  /** All buffered entries (after trimming to capacity), matching or not. */
  get total(): number {
    return Math.min(this.entries.length, this.cap);
  }

  /**
   * Entries older than the oldest held that are gone: the ones the last snapshot said were dropped, plus the ones
   * pushed out by capacity since. 0 after `clear()`.
   */
  get dropped(): number {
    return this.olderAtReset + Math.max(0, this.received - this.cap);
  }

  /** Entries that match the filter (bounded by capacity). */
  get visibleCount(): number {
    return this.visible.length;
  }

  /** The i-th matching entry, oldest first. */
  visibleAt(i: number): LogEntryView | undefined {
    return this.visible[i];
  }

  /** The matching entries, oldest first (for export previews and tests). */
  visibleEntries(): readonly LogEntryView[] {
    return this.visible;
  }

  currentFilter(): LogFilter {
    return this.filter;
  }

  setCapacity(capacity: number): void {
    this.cap = Math.max(1, Math.floor(capacity));
    this.trim(true);
  }

  /** Replaces everything with `entries` (a snapshot); `older` entries before them are no longer held anywhere. */
  reset(entries: readonly LogEntryView[], older = 0): void {
    this.olderAtReset = Math.max(0, Math.floor(older));
    this.received = entries.length;
    this.entries = entries.slice(-this.cap);
    this.recompute();
  }

  /** Appends entries newer than the ones held; returns how many of them match the filter. */
  append(entries: readonly LogEntryView[]): number {
    let matched = 0;
    this.received += entries.length;
    for (const e of entries) {
      this.entries.push(e);
      if (matchesFilter(e, this.filter)) {
        this.visible.push(e);
        matched++;
      }
    }
    this.trim(false);
    return matched;
  }

  clear(): void {
    this.entries = [];
    this.visible = [];
    this.olderAtReset = 0;
    this.received = 0;
  }

  /** Sets the filter (normalised) and recomputes the matching subsequence. */
  setFilter(filter: LogFilter): void {
    this.filter = normalizeFilter(filter);
    this.recompute();
  }

  /** The distinct kinds seen in the buffer, sorted. */
  kinds(): string[] {
    return [...new Set(this.entries.map((e) => e.kind))].sort();
  }

  private recompute(): void {
    this.trim(true);
    this.visible = this.entries.filter((e) => matchesFilter(e, this.filter));
  }

  /** Drops the oldest entries beyond capacity; lazily (when the slack is used up) unless `exact`. */
  private trim(exact: boolean): void {
    const slack = exact ? 0 : Math.max(64, this.cap >> 2);
    if (this.entries.length <= this.cap + slack) {
      if (this.visible.length > this.cap) this.visible.splice(0, this.visible.length - this.cap);
      return;
    }
    this.entries.splice(0, this.entries.length - this.cap);
    const firstSeq = this.entries[0]?.seq ?? Number.POSITIVE_INFINITY;
    // `visible` is ordered by seq: find the first entry still held.
    let lo = 0;
    let hi = this.visible.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.visible[mid]!.seq < firstSeq) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) this.visible.splice(0, lo);
  }
}
