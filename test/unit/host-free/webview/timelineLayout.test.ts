import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../fakes/fakeClock.ts';
import { createJournal } from '../../../../src/core/journal/journal.ts';
import { toTimeline } from '../../../../src/host/webview/timelineView.ts';
import { TimelineModel } from '../../../../src/webview/timeline/model.ts';
import { layoutSpans, MIN_RECONCILE_PX, reconcileBarShape } from '../../../../src/webview/timeline/layout.ts';
import { fit, MIN_MS_PER_PX, wheelZoomFactor, zoomAt, type Viewport } from '../../../../src/webview/timeline/viewport.ts';

const PRIMARY = 'widgets.lab.reconcile.dev';

/**
 * Ten minutes of one key: an ok reconcile (5 ms, after a 2 ms queue wait) every 2 s, and at 5 min one that fails
 * after 24 ms, 100 ms after an ok one (the same pixel column at Fit zoom); a reconcile started 10 ms before "now" runs.
 */
function tenMinutes() {
  const clock = new FakeClock();
  const t0 = clock.now();
  const j = createJournal({ clock, delivery: 'sync' });
  const reconcile = (durationMs: number, outcome: 'success' | 'error') => {
    j.append({ kind: 'queue', controller: 'c', key: 'ns/a', transition: 'queued' });
    clock.step(2);
    j.append({ kind: 'queue', controller: 'c', key: 'ns/a', transition: 'processing' });
    j.append({ kind: 'reconcileStart', controller: 'c', key: 'ns/a', triggers: [], attempt: 1, via: 'worker' });
    clock.step(durationMs);
    j.append({ kind: 'reconcileEnd', controller: 'c', key: 'ns/a', outcome: outcome === 'success' ? { kind: 'success' } : { kind: 'error', message: 'oven too cold' }, durationMs });
  };
  let errorAt = 0;
  while (clock.now() - t0 < 600_000 - 2_000) {
    reconcile(5, 'success');
    if (errorAt === 0 && clock.now() - t0 >= 300_000) {
      clock.step(100);
      errorAt = clock.now() + 2;
      reconcile(24, 'error');
    }
    clock.step(2_000 - 7);
  }
  j.append({ kind: 'reconcileStart', controller: 'c', key: 'ns/a', triggers: [], attempt: 1, via: 'worker' });
  clock.step(10);
  const m = new TimelineModel();
  m.add(toTimeline(j.entries(), PRIMARY));
  return { m, t0, now: clock.now(), errorAt };
}

function boxes(m: TimelineModel, vp: Viewport, width: number, now: number) {
  const lane = m.lanes[0]!;
  const t1 = vp.start + width * vp.msPerPx;
  const r = m.spansIn(lane, vp.start, t1);
  const spans = lane.spans.slice(r.from, r.to);
  if (lane.openReconcile) spans.push(lane.openReconcile);
  return layoutSpans(spans, vp, width, now);
}

describe('timeline span layout (what the canvas draws)', () => {
  it('a 24 ms failed reconcile in a 10-minute window at Fit zoom is a red bar at least MIN_RECONCILE_PX wide, drawn over its neighbours', () => {
    const { m, t0, now, errorAt } = tenMinutes();
    const width = 1000;
    const vp = fit(t0, now, width);
    assert.ok(vp.msPerPx > 500, `Fit of 10 minutes: ${vp.msPerPx} ms per px (a 24 ms reconcile is ${(24 / vp.msPerPx).toFixed(2)} px)`);
    const out = boxes(m, vp, width, now);
    const errors = out.filter((b) => b.tone === 'error');
    assert.equal(errors.length, 1, 'the failure is drawn');
    const e = errors[0]!;
    assert.equal(e.span.start, errorAt);
    assert.ok(e.w >= MIN_RECONCILE_PX && MIN_RECONCILE_PX >= 3, `at least ${MIN_RECONCILE_PX} px: ${e.w}`);
    // Nothing drawn after it covers it (an ok reconcile 100 ms earlier starts in the same pixel column).
    const after = out.slice(out.indexOf(e) + 1);
    assert.ok(!after.some((b) => b.span.kind === 'reconcile' && b.x < e.x + e.w && b.x + b.w > e.x), 'no reconcile bar is painted over the failure');
    assert.ok(out.some((b) => b.tone === 'ok' && Math.floor(b.x) === Math.floor(e.x)), 'its ok neighbour in the same column is drawn too (under it)');
    // Every reconcile bar, ok and running included, has the minimum width; waits at least 1 px.
    for (const b of out) assert.ok(b.w >= (b.span.kind === 'reconcile' ? MIN_RECONCILE_PX : 1) || b.x + b.w >= width, JSON.stringify({ tone: b.tone, x: b.x, w: b.w }));
    const running = out.find((b) => b.tone === 'running');
    assert.ok(running && running.w >= MIN_RECONCILE_PX, 'the running reconcile (10 ms so far) shows too');
    // Short ok reconciles of one pixel column are drawn once: about one box per column, not one per reconcile.
    assert.ok(out.filter((b) => b.tone === 'ok').length <= width, `${out.length} boxes`);
  });

  it('spans outside the window get no box, and a bar at the right edge is cut there', () => {
    const { m, t0, now } = tenMinutes();
    const vp: Viewport = { start: t0 + 700_000, msPerPx: 100 };
    assert.deepEqual(boxes(m, vp, 500, now), []);
    const edge = boxes(m, { start: now - 10 * 0.5 - 499 * 0.5, msPerPx: 0.5 }, 500, now);
    assert.ok(edge.every((b) => b.x >= 0 && b.x + b.w <= 500 + 1e-9), JSON.stringify(edge.map((b) => [b.x, b.w])));
  });
});

describe('timeline wheel zoom', () => {
  it('zooms by one notch factor per wheel event, however large its delta, and never below the minimum span', () => {
    const notch = wheelZoomFactor(-100, 0, 800);
    assert.ok(notch > 1.1 && notch <= 1.5, `one notch: ${notch}`);
    assert.equal(wheelZoomFactor(-300, 0, 800), notch, 'a 300 px delta is still one notch');
    assert.equal(wheelZoomFactor(-3, 1, 800).toFixed(3), wheelZoomFactor(-99, 0, 800).toFixed(3), 'three lines (Firefox) are a notch');
    assert.ok(Math.abs(wheelZoomFactor(-10, 0, 800) - 1) < 0.05, 'a trackpad\'s small delta zooms a little');
    assert.equal(wheelZoomFactor(100, 0, 800), 1 / notch, 'out by the same factor');
    assert.equal(wheelZoomFactor(Number.NaN, 0, 800), 1);
    // The walk: 25 Ctrl+wheel events of -300 px on a 10-minute Fit view of 1000 px.
    let vp: Viewport = fit(0, 600_000, 1000);
    for (let i = 0; i < 25; i++) vp = zoomAt(vp, wheelZoomFactor(-300, 0, 800), 500);
    assert.ok(vp.msPerPx * 1000 >= 1000, `still ${vp.msPerPx * 1000} ms across, not a few ms`);
    // However far it zooms in, 1000 px span at least 100 ms.
    for (let i = 0; i < 200; i++) vp = zoomAt(vp, wheelZoomFactor(-300, 0, 800), 500);
    assert.equal(vp.msPerPx, MIN_MS_PER_PX);
    assert.ok(MIN_MS_PER_PX * 1000 >= 100);
  });
});

describe('reconcile bar shapes: state is not told by colour alone', () => {
  const LANE_H = 24;
  it('a failed reconcile (error, terminal) is taller than an ok one, and covers it; a running one is pale with an outline', () => {
    const ok = reconcileBarShape('ok', LANE_H);
    for (const tone of ['error', 'terminal'] as const) {
      const failed = reconcileBarShape(tone, LANE_H);
      assert.ok(failed.h > ok.h, `${tone} is taller`);
      assert.ok(failed.dy <= ok.dy && failed.dy + failed.h >= ok.dy + ok.h, `${tone} covers an ok bar's rows`);
      assert.ok(failed.dy >= 0 && failed.dy + failed.h <= LANE_H, `${tone} stays in its lane`);
      assert.equal(failed.style, 'solid');
    }
    assert.equal(ok.style, 'solid');
    assert.equal(reconcileBarShape('running', LANE_H).style, 'pale');
    assert.notDeepEqual(reconcileBarShape('running', LANE_H), ok);
    for (const tone of ['requeue', 'cancelled'] as const) assert.deepEqual(reconcileBarShape(tone, LANE_H), ok);
  });
});
