/**
 * The timeline's time axis: which instant sits at the left edge and how many
 * milliseconds one CSS pixel spans. Pure arithmetic (no DOM, no clock), so
 * zoom and pan are unit-tested (test/unit/host-free/webview/timelineModel.test.ts).
 *
 * Invariant: `msPerPx` stays within [{@link MIN_MS_PER_PX}, {@link MAX_MS_PER_PX}].
 */
export interface Viewport {
  /** Epoch ms at x = 0. */
  readonly start: number;
  /** Milliseconds per CSS pixel (larger: zoomed out). */
  readonly msPerPx: number;
}

/**
 * 100 µs per pixel, the deepest zoom: a 1 ms reconcile is 10 px wide and a 1000 px plot spans 100 ms (deeper shows
 * nothing more: journal times are whole milliseconds).
 */
export const MIN_MS_PER_PX = 0.1;
/** 1 hour per pixel. */
export const MAX_MS_PER_PX = 3_600_000;

const clampScale = (m: number): number => Math.min(MAX_MS_PER_PX, Math.max(MIN_MS_PER_PX, m));

export function timeToX(vp: Viewport, t: number): number {
  return (t - vp.start) / vp.msPerPx;
}

export function xToTime(vp: Viewport, x: number): number {
  return vp.start + x * vp.msPerPx;
}

/** Zooms by `factor` (> 1 zooms in) keeping the instant under `anchorX` where it is. */
export function zoomAt(vp: Viewport, factor: number, anchorX: number): Viewport {
  if (!(factor > 0) || !Number.isFinite(factor)) return vp;
  const anchor = xToTime(vp, anchorX);
  const msPerPx = clampScale(vp.msPerPx / factor);
  return { start: anchor - anchorX * msPerPx, msPerPx };
}

/** The zoom factor of one wheel notch (about 100 px of `deltaY`). */
export const WHEEL_NOTCH_FACTOR = 1.25;

/**
 * The zoom factor of one wheel event (> 1 zooms in, for a wheel turned away from the user: negative `deltaY`):
 * {@link WHEEL_NOTCH_FACTOR} per notch, a fraction of it for a trackpad's small deltas, and never more than one
 * notch per event, however large the delta (a fast wheel or a synthetic event reports several notches in one: they
 * must not jump from minutes to milliseconds). `deltaMode` is WheelEvent's: 0 pixels, 1 lines (about 33 px each, so
 * Firefox's 3 lines are a notch), 2 pages (`pagePx` each).
 */
export function wheelZoomFactor(deltaY: number, deltaMode: number, pagePx: number): number {
  const px = deltaMode === 1 ? deltaY * 33 : deltaMode === 2 ? deltaY * pagePx : deltaY;
  if (!Number.isFinite(px)) return 1;
  const notches = Math.max(-1, Math.min(1, -px / 100));
  return WHEEL_NOTCH_FACTOR ** notches;
}

/** Moves the view by `dx` pixels (dragging right by dx shows earlier times: pass the drag's dx). */
export function pan(vp: Viewport, dx: number): Viewport {
  return { start: vp.start - dx * vp.msPerPx, msPerPx: vp.msPerPx };
}

/** The view whose right edge is `now` (following live), keeping the scale; `marginPx` of room on the right. */
export function follow(vp: Viewport, now: number, width: number, marginPx = 24): Viewport {
  return { start: now - (width - marginPx) * vp.msPerPx, msPerPx: vp.msPerPx };
}

/** The view that shows [from, to] across `width` pixels with `marginPx` on each side. */
export function fit(from: number, to: number, width: number, marginPx = 24): Viewport {
  const span = Math.max(1, to - from);
  const msPerPx = clampScale(span / Math.max(1, width - 2 * marginPx));
  return { start: from - marginPx * msPerPx, msPerPx };
}

const STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000];

/**
 * Grid lines for the axis: a step from a 1-2-5 / clock-friendly list so that
 * ticks are at least `minPx` apart, and the tick times (multiples of the step)
 * that fall within [0, width].
 */
export function ticks(vp: Viewport, width: number, minPx = 90): { step: number; times: number[] } {
  const want = vp.msPerPx * minPx;
  const step = STEPS.find((s) => s >= want) ?? Math.ceil(want / 86_400_000) * 86_400_000;
  const times: number[] = [];
  const end = xToTime(vp, width);
  for (let t = Math.ceil(vp.start / step) * step; t <= end && times.length < 1000; t += step) times.push(t);
  return { step, times };
}

/**
 * {@link ticks} whose labels never overlap: at least `minPx` apart and at least as far as the widest label of the
 * chosen step (`labelWidth(step)`, e.g. a canvas' measureText of {@link tickLabel}) plus `gap`. Sub-second steps carry
 * "12:20:37.400" — wider than 90 px in most editor fonts.
 */
export function labeledTicks(vp: Viewport, width: number, labelWidth: (step: number) => number, minPx = 90, gap = 16): { step: number; times: number[] } {
  const tk = ticks(vp, width, minPx);
  const need = labelWidth(tk.step) + gap;
  return need > minPx ? ticks(vp, width, need) : tk;
}

/** A tick label: the clock time with as much precision as the step needs (local time). */
export function tickLabel(t: number, step: number): string {
  const d = new Date(t);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const hm = `${p(d.getHours())}:${p(d.getMinutes())}`;
  if (step >= 60_000) return hm;
  if (step >= 1000) return `${hm}:${p(d.getSeconds())}`;
  return `${hm}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}
