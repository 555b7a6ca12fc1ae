/** The rows to render for a scroll position: `[first, end)` indices, already widened by the overscan. */
export interface RowRange {
  readonly first: number;
  readonly end: number;
}

/**
 * Which rows of a fixed-row-height list intersect the viewport, widened by
 * `overscan` rows on each side and clamped to `[0, count)`. Rendering only
 * these rows keeps the DOM size proportional to the window, not to the log.
 */
export function visibleRange(scrollTop: number, viewportHeight: number, rowHeight: number, count: number, overscan = 8): RowRange {
  if (count <= 0 || rowHeight <= 0) return { first: 0, end: 0 };
  const top = Math.max(0, scrollTop);
  const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
  const end = Math.min(count, Math.ceil((top + Math.max(0, viewportHeight)) / rowHeight) + overscan);
  return { first: Math.min(first, end), end };
}

/** True when the scroll position is (within one row) at the bottom: new rows should keep it there. */
export function isAtBottom(scrollTop: number, viewportHeight: number, scrollHeight: number, rowHeight: number): boolean {
  return scrollTop + viewportHeight >= scrollHeight - rowHeight;
}

/**
 * Whether the list follows new entries after a scroll event: scrolling up away from the bottom stops following,
 * scrolling down back to it resumes; a scroll event that moved nothing since the last position the list knows
 * (the list's own jump to the bottom while following, delivered after the person unticked Follow) changes nothing,
 * so it never overrides the person's choice.
 */
export function followAfterScroll(o: { follow: boolean; atBottom: boolean; scrollTop: number; lastScrollTop: number }): boolean {
  if (o.scrollTop < o.lastScrollTop && !o.atBottom) return false;
  if (o.scrollTop > o.lastScrollTop && o.atBottom) return true;
  return o.follow;
}
