/**
 * Where a lane's spans go on the canvas: one box per span to draw, in x (CSS pixels from the plot's left edge) and
 * in draw order. Pure (no DOM, no canvas): main.ts fills the boxes, tests and the bench check them.
 *
 * Contracts:
 * - a reconcile bar (ok, error, requeue, running, …) is never narrower than {@link MIN_RECONCILE_PX}, at any zoom: the
 *   legend promises a colour per outcome, and a 24 ms failure in a 10-minute window (well under a pixel) must still
 *   show red. It starts where the reconcile started and grows to the right (cut at the plot's right edge);
 * - waits (queue, backoff, requeue-after) are at least 1 px wide;
 * - a failed reconcile (error, terminal) is drawn after every other reconcile of the lane, so a neighbour's minimum
 *   width never paints over it; a running one is drawn after the finished ones;
 * - boxes of the same layer and colour that start in the same pixel column and are no wider than the minimum are
 *   drawn once (thousands of short reconciles in one column cost one box).
 */
import type { Span } from './model.ts';
import { timeToX, type Viewport } from './viewport.ts';

/** The narrowest reconcile bar, in CSS pixels. */
export const MIN_RECONCILE_PX = 3;
/** The narrowest wait bar (queue, backoff, requeue-after), in CSS pixels. */
export const MIN_WAIT_PX = 1;

/** The colour class of a span: what the legend names. */
export type SpanTone = 'queue' | 'backoff' | 'requeueAfter' | 'ok' | 'error' | 'terminal' | 'requeue' | 'running' | 'cancelled';

export interface SpanBox {
  readonly span: Span;
  readonly tone: SpanTone;
  /** Left edge, CSS px from the plot's left edge (≥ 0). */
  readonly x: number;
  /** Width in CSS px (≥ the tone's minimum, unless cut by the plot's right edge). */
  readonly w: number;
}

/** The legend's colour class of a span. */
export function toneOf(s: Span): SpanTone {
  if (s.kind !== 'reconcile') return s.kind;
  switch (s.outcome) {
    case undefined:
      return 'running';
    case 'success':
      return 'ok';
    case 'error':
      return 'error';
    case 'terminal':
      return 'terminal';
    case 'requeue':
    case 'requeueAfter':
      return 'requeue';
    default:
      return 'cancelled';
  }
}

/** Draw order: waits first, then finished reconciles, running ones, failed ones last (on top). */
function layerOf(tone: SpanTone): number {
  switch (tone) {
    case 'queue':
    case 'backoff':
    case 'requeueAfter':
      return 0;
    case 'ok':
    case 'requeue':
    case 'cancelled':
      return 1;
    case 'running':
      return 2;
    case 'error':
    case 'terminal':
      return 3;
  }
}

/**
 * The boxes of `spans` (a lane's spans that may reach into the window, in time order) on a plot `width` px wide at
 * viewport `vp`, in draw order (see the module contracts). Open spans end at `tNow`. Spans wholly outside the window
 * get no box.
 */
export function layoutSpans(spans: Iterable<Span>, vp: Viewport, width: number, tNow: number): SpanBox[] {
  const t0 = vp.start;
  const t1 = vp.start + width * vp.msPerPx;
  const layers: SpanBox[][] = [[], [], [], []];
  const lastColumn = new Map<SpanTone, number>();
  for (const s of spans) {
    const end = s.end ?? tNow;
    if (end < t0 || s.start > t1) continue;
    const tone = toneOf(s);
    const min = s.kind === 'reconcile' ? MIN_RECONCILE_PX : MIN_WAIT_PX;
    const a = Math.max(0, timeToX(vp, s.start));
    const w = Math.min(width - a, Math.max(min, timeToX(vp, end) - a));
    if (!(w > 0)) continue;
    // Many short spans of one tone starting in one pixel column draw once.
    const column = Math.floor(a);
    if (w <= min && lastColumn.get(tone) === column) continue;
    lastColumn.set(tone, column);
    layers[layerOf(tone)]!.push({ span: s, tone, x: a, w });
  }
  return layers.flat();
}

/** How a reconcile bar is drawn in its lane: `dy` and `h` in CSS px from the lane's top; `style` its fill. */
export interface BarShape {
  readonly dy: number;
  readonly h: number;
  /** solid: filled; pale: filled faintly with a solid outline. */
  readonly style: 'solid' | 'pale';
}

/**
 * The shape of a reconcile bar of `tone` in a lane `laneH` px tall, so that state is not told by colour alone (the
 * legend draws the same): a failed reconcile (error, terminal) is taller than a finished one, a running one is pale
 * with an outline; ok, requeue and cancelled bars are the plain shape (their colours and the tooltip tell them apart).
 */
export function reconcileBarShape(tone: SpanTone, laneH: number): BarShape {
  switch (tone) {
    case 'error':
    case 'terminal':
      return { dy: 2, h: laneH - 6, style: 'solid' };
    case 'running':
      return { dy: 5, h: laneH - 12, style: 'pale' };
    default:
      return { dy: 5, h: laneH - 12, style: 'solid' };
  }
}
