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
