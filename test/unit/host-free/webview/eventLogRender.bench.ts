// Benchmark (not part of `npm test`): the Event Log webview in headless Chromium, fed like the host feeds it.
//   npm run build && node test/unit/host-free/webview/eventLogRender.bench.ts [entriesPerSecond=1000] [seconds=10]
// Loads the production page (src/host/webview/html.ts: CSP, nonce'd dist/webview/eventLog.js, media/eventLog.css)
// from file:// with a stub acquireVsCodeApi, posts `append` batches every 50 ms (the host's flush period) at the
// given rate, then applies a text filter, and reports frame intervals, long tasks and the number of DOM rows.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { renderEventLogHtml } from '../../../../src/host/webview/html.ts';

const root = resolve(import.meta.dirname, '../../../..');
const rate = Number(process.argv[2] ?? 1000);
const seconds = Number(process.argv[3] ?? 10);
const dir = mkdtempSync(join(tmpdir(), 'rl-eventlog-bench-'));
const uri = (p: string) => ({ toString: () => pathToFileURL(join(root, p)).href });
const webview = { cspSource: 'file:' } as unknown as Parameters<typeof renderEventLogHtml>[0];
const html = renderEventLogHtml(webview, 'benchnonce', uri('dist/webview/eventLog.js') as never, uri('media/eventLog.css') as never);
writeFileSync(join(dir, 'index.html'), html);

const browser = await chromium.launch({ executablePath: process.env.RECONCILE_LAB_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--allow-file-access-from-files'] });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.addInitScript(() => {
    (window as unknown as { acquireVsCodeApi: unknown }).acquireVsCodeApi = () => ({ postMessage: () => {}, getState: () => undefined, setState: () => {} });
  });
  await page.goto(pathToFileURL(join(dir, 'index.html')).href);
  const r = await page.evaluate(
    async ({ rate, seconds }) => {
      const post = (data: unknown) => window.dispatchEvent(new MessageEvent('message', { data }));
      post({ type: 'init', version: 1, capacity: 10_000, entries: [], older: 0, kinds: ['informer', 'queue', 'reconcileStart', 'reconcileEnd', 'write'], connection: 'bench' });
      const kinds = ['informer', 'queue', 'reconcileStart', 'reconcileEnd', 'write'];
      const longTasks: number[] = [];
      new PerformanceObserver((l) => l.getEntries().forEach((e) => longTasks.push(e.duration))).observe({ entryTypes: ['longtask'] });
      const frames: number[] = [];
      let last = performance.now();
      let running = true;
      const raf = () => {
        const t = performance.now();
        frames.push(t - last);
        last = t;
        if (running) requestAnimationFrame(raf);
      };
      requestAnimationFrame(raf);
      const perBatch = Math.max(1, Math.round(rate / 20));
      let seq = 0;
      for (let b = 0; b < seconds * 20; b++) {
        const entries = [];
        for (let i = 0; i < perBatch; i++) {
          seq++;
          entries.push({ seq, time: Date.now(), kind: kinds[seq % 5], level: seq % 97 === 0 ? 'error' : 'info', key: `ns-${seq % 7}/obj-${seq % 300}`, resource: 'widgets.lab.reconcile.dev', summary: `update widgets.lab.reconcile.dev ns-${seq % 7}/obj-${seq % 300} rv ${seq} → enqueued` });
        }
        post({ type: 'append', entries, dropped: 0 });
        await new Promise((res) => setTimeout(res, 50));
      }
      const input = document.getElementById('filter-text') as HTMLInputElement;
      input.value = 'obj-12';
      input.dispatchEvent(new Event('input'));
      await new Promise((res) => setTimeout(res, 400));
      running = false;
      frames.sort((a, b) => a - b);
      return {
        entries: seq,
        frames: frames.length,
        frameP50: frames[Math.floor(frames.length * 0.5)],
        frameP99: frames[Math.floor(frames.length * 0.99)],
        frameMax: frames[frames.length - 1],
        longTasks: longTasks.length,
        longestTaskMs: Math.max(0, ...longTasks),
        domRows: document.querySelectorAll('#list .row:not([hidden])').length,
        status: document.getElementById('status')!.textContent,
      };
    },
    { rate, seconds },
  );
  console.log(`event log webview, ${rate} entries/s for ${seconds} s:`, JSON.stringify(r));
} finally {
  await browser.close();
  rmSync(dir, { recursive: true, force: true });
}
