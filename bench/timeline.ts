// Benchmark (not part of `npm test`): the Timeline webview in headless Chromium with 10,000 journal entries, panned
// and zoomed with real mouse input the way a person does, measuring frame intervals, long tasks and redraw time.
//   npm run bench:timeline            (builds, then runs)   BENCH_ENTRIES=10000 BENCH_KEYS=200 BENCH_SECONDS=6
// Loads the production page (src/host/webview/html.ts renderTimelineHtml: CSP, nonce'd dist/webview/timeline.js,
// media/timeline.css) from file:// with a stub acquireVsCodeApi, posts a `timelineInit` like the host's snapshot
// (built from a real Journal through the host's own mapping, src/host/webview/timelineView.ts), then:
//   1. pan: drags across the stage back and forth for BENCH_SECONDS (every pointermove pans and redraws);
//   2. zoom: Ctrl+wheel in and out around the pointer;
//   3. live: appends 1,000 entries/s (batched every 50 ms as the host does) while following.
// The same is measured for the Event Log's list (eventLogRender.bench.ts) in its own script.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { renderTimelineHtml } from '../src/host/webview/html.ts';
import { createJournal } from '../src/core/journal/journal.ts';
import { toTimeline } from '../src/host/webview/timelineView.ts';
import type { TimelineEntryView } from '../src/shared/protocol.ts';

const root = resolve(import.meta.dirname, '..');
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 10_000);
const KEYS = Number(process.env.BENCH_KEYS ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);

/** A journal like a busy loop's: per key, event → queued → reconcile (some fail → backoff) → write, over ~10 min. */
function snapshot(): { entries: TimelineEntryView[]; now: number } {
  let t = Date.now() - 600_000;
  const clock = { now: () => t, setTimeout: () => 0, clearTimeout: () => {} } as never;
  const j = createJournal({ clock, capacity: ENTRIES + 100 });
  const gvr = { group: '', version: 'v1', resource: 'configmaps' };
  let i = 0;
  while (j.size < ENTRIES) {
    const k = i % KEYS;
    const key = `ns-${k % 7}/widget-${String(k).padStart(4, '0')}`;
    const fails = i % 5 === 0;
    j.append({ kind: 'informer', controller: 'widgets', key, resource: 'widgets.v1.lab.reconcile.dev', role: 'primary', event: 'update', objectKey: key, enqueued: [key] });
    j.append({ kind: 'queue', controller: 'widgets', key, transition: 'queued' });
    t += 3;
    j.append({ kind: 'queue', controller: 'widgets', key, transition: 'processing' });
    j.append({ kind: 'reconcileStart', controller: 'widgets', key, triggers: [], attempt: 1, via: 'worker' });
    t += 7;
    j.recordWrite({ verb: 'update', gvr, namespace: key.split('/')[0], name: `${key.split('/')[1]}-config`, dryRun: false, controller: 'widgets', key });
    t += 5;
    j.append({ kind: 'reconcileEnd', controller: 'widgets', key, outcome: fails ? { kind: 'error', message: 'conflict' } : { kind: 'success' }, durationMs: 12 });
    if (fails) j.append({ kind: 'queue', controller: 'widgets', key, transition: 'waiting', dueAt: t + 40, waitKind: 'backoff' });
    t += 45;
    i++;
  }
  return { entries: toTimeline(j.entries(), 'widgets.lab.reconcile.dev'), now: t };
}

const dir = mkdtempSync(join(tmpdir(), 'rl-timeline-bench-'));
const uri = (p: string) => ({ toString: () => pathToFileURL(join(root, p)).href });
const webview = { cspSource: 'file:' } as unknown as Parameters<typeof renderTimelineHtml>[0];
writeFileSync(join(dir, 'index.html'), renderTimelineHtml(webview, 'benchnonce', uri('dist/webview/timeline.js') as never, uri('media/timeline.css') as never));

const { entries, now } = snapshot();
const browser = await chromium.launch({ executablePath: process.env.RECONCILE_LAB_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--allow-file-access-from-files'] });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.addInitScript(() => {
    const w = window as unknown as { acquireVsCodeApi: unknown; __posted: unknown[] };
    w.__posted = [];
    w.acquireVsCodeApi = () => ({ postMessage: (m: unknown) => w.__posted.push(m), getState: () => undefined, setState: () => {} });
  });
  await page.goto(pathToFileURL(join(dir, 'index.html')).href);
  await page.evaluate(({ entries, now }) => {
    window.dispatchEvent(new MessageEvent('message', { data: { type: 'timelineInit', version: 1, entries, connection: 'bench', now } }));
  }, { entries, now });
  await page.waitForTimeout(300);
  if (process.env.BENCH_SCREENSHOT) await page.screenshot({ path: process.env.BENCH_SCREENSHOT });

  /** Starts frame/long-task recording in the page; `stop` returns the stats. */
  const startRecording = () =>
    page.evaluate(() => {
      const w = window as unknown as { __rec: { frames: number[]; long: number[]; running: boolean; renders0: number }; __timelineRenders: () => number };
      const rec = (w.__rec = { frames: [] as number[], long: [] as number[], running: true, renders0: w.__timelineRenders() });
      new PerformanceObserver((l) => l.getEntries().forEach((e) => rec.long.push(e.duration))).observe({ entryTypes: ['longtask'] });
      let last = performance.now();
      const raf = () => {
        const t = performance.now();
        rec.frames.push(t - last);
        last = t;
        if (rec.running) requestAnimationFrame(raf);
      };
      requestAnimationFrame(raf);
    });
  const stopRecording = () =>
    page.evaluate(() => {
      const w = window as unknown as { __rec: { frames: number[]; long: number[]; running: boolean; renders0: number }; __timelineRenders: () => number };
      const rec = w.__rec;
      rec.running = false;
      const f = rec.frames.slice(1).sort((a, b) => a - b);
      const q = (p: number) => Math.round((f[Math.min(f.length - 1, Math.floor(f.length * p))] ?? 0) * 10) / 10;
      return { frames: f.length, p50: q(0.5), p95: q(0.95), p99: q(0.99), max: q(1), longTasks: rec.long.length, longestTaskMs: Math.round(Math.max(0, ...rec.long)), redraws: w.__timelineRenders() - rec.renders0 };
    });

  const box = (await page.locator('#stage').boundingBox())!;
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;

  // 1. Pan: drag left and right across 600 px, 10 px per move.
  await startRecording();
  const end = Date.now() + SECONDS * 1000;
  let dir_ = 1;
  while (Date.now() < end) {
    await page.mouse.move(cx - 300 * dir_, cy);
    await page.mouse.down();
    for (let x = -300; x <= 300; x += 10) await page.mouse.move(cx + x * dir_, cy + (x % 40));
    await page.mouse.up();
    dir_ = -dir_;
  }
  const panStats = await stopRecording();

  // 2. Zoom: Ctrl+wheel in then out around the pointer.
  await page.mouse.move(cx, cy);
  await startRecording();
  await page.keyboard.down('Control');
  for (let k = 0; k < 40; k++) {
    await page.mouse.wheel(0, k < 20 ? -120 : 120);
    await page.waitForTimeout(16);
  }
  await page.keyboard.up('Control');
  const zoomStats = await stopRecording();

  // 3. Live: follow on, 1,000 entries/s appended in 50 ms batches for SECONDS.
  await page.locator('#follow').check();
  await startRecording();
  await page.evaluate(async ({ seconds, start }) => {
    let seq = 10_000_000;
    let t = start;
    for (let b = 0; b < seconds * 20; b++) {
      const batch = [];
      for (let i = 0; i < 50; i++) {
        seq++;
        t += 1;
        batch.push({ seq, time: t, key: `ns-live/widget-${seq % 50}`, type: i % 3 === 0 ? 'event' : i % 3 === 1 ? 'reconcileStart' : 'reconcileEnd', outcome: 'success', label: 'live' });
      }
      window.dispatchEvent(new MessageEvent('message', { data: { type: 'timelineAppend', entries: batch, now: t } }));
      await new Promise((r) => setTimeout(r, 50));
    }
  }, { seconds: SECONDS, start: now });
  const liveStats = await stopRecording();
  const status = await page.locator('#status').textContent();
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  console.log(`timeline webview, ${entries.length.toLocaleString('en-US')} timeline entries from ${ENTRIES.toLocaleString('en-US')} journal entries, ${KEYS} keys (1280×800, headless Chromium, software rendering)`);
  console.log('frame intervals in ms (60 Hz display: 16.7)');
  console.log(`pan  (drag, ${SECONDS} s):        ${JSON.stringify(panStats)}`);
  console.log(`zoom (ctrl+wheel ×40):     ${JSON.stringify(zoomStats)}`);
  console.log(`live (1,000 entries/s, ${SECONDS} s): ${JSON.stringify(liveStats)}`);
  console.log(`status: ${status}`);
} finally {
  await browser.close();
  rmSync(dir, { recursive: true, force: true });
}
