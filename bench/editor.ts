// The editor under load: `npm run bench:editor` (builds, then runs this). Not part of `npm test`.
//
// A private control plane with BENCH_OBJECTS (default 10,000) Widgets in one namespace (written straight into its
// etcd: bench/etcdSeed.ts), then code-server (scripts/code-server.mjs) with the extension loaded as under its test
// suite (extensionDevelopmentPath + extensionTestsPath = the bundle of bench/editorHost.ts, so the extension is in
// ExtensionMode.Test and hands out its API), driven by Chromium through playwright-core. The host half connects and
// measures inside the extension host; this half does what a person and the cluster do:
//   expand    collapses, then expands the namespace node in the Resources view with a real click and measures, in the
//             page, from the pointer going down to the first object row being in the DOM;
//   burst     writes BENCH_BURST (default 2,000) updates into etcd at once: one burst of watch events;
//   eventLog  measures frame intervals and long tasks (PerformanceObserver 'longtask') inside the Event Log webview
//             while the host feeds the journal 5,000 entries/s.
// Extension-host long tasks come from the host's own event-loop instrumentation (bench/editorHost.ts LongTasks: a
// 10 ms timer's lateness, and perf_hooks.monitorEventLoopDelay's maximum).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { parseAllDocuments } from 'yaml';
import * as esbuild from 'esbuild';
import { chromium } from 'playwright-core';
import { startLocalControlPlane, type LocalControlPlane } from '../src/core/controlplane/localControlPlane.ts';
import { loadKubeConfig } from '../src/core/k8s/kubeconfig.ts';
import { KubeTransport } from '../src/core/k8s/transport.ts';
import type { KubeList, KubeObject } from '../src/core/k8s/objects.ts';
import { installCrd } from '../test/integration/support/cluster.ts';
import { EtcdSeeder } from './etcdSeed.ts';
// @ts-expect-error: plain .mjs without types
import { QUIET_SETTINGS, ensureCodeServer, startCodeServer } from '../scripts/code-server.mjs';

const root = resolve(import.meta.dirname, '..');
const N = Number(process.env.BENCH_OBJECTS ?? 10_000);
const BURST = Math.min(N, Number(process.env.BENCH_BURST ?? 2_000));
const GROUP = 'lab.reconcile.dev';
const VERSION = 'v1alpha1';
const RESOURCE = `widgets.${GROUP}`;
const NS = 'bench-editor';
const CHROMIUM = process.env.RECONCILE_LAB_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--disable-default-apps'];
const log = (s: string) => process.stderr.write(`[bench:editor] ${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const name = (i: number) => `w-${String(i).padStart(5, '0')}`;

function widget(i: number): KubeObject {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Widget',
    metadata: { name: name(i), namespace: NS, labels: { app: `app-${i % 20}`, tier: i % 3 ? 'backend' : 'frontend' } },
    spec: { data: { color: ['blue', 'green', 'red'][i % 3]!, owner: `team-${i % 7}`, note: `widget ${i} of the editor benchmark ${'x'.repeat(200)}` } },
  };
}

/** Creates the Widgets: the first through the API, the rest into etcd in the form kube-apiserver stored the first. */
async function seed(cp: LocalControlPlane, t: KubeTransport, seeder: EtcdSeeder): Promise<Map<number, KubeObject>> {
  const path = `/apis/${GROUP}/${VERSION}/namespaces/${NS}/widgets`;
  await t.json({ method: 'POST', path, body: widget(0), query: { fieldManager: 'bench' } });
  const key = (i: number) => `/registry/${GROUP}/widgets/${NS}/${name(i)}`;
  const stored = await seeder.get(key(0));
  if (!stored?.startsWith('{')) throw new Error(`etcd holds no JSON at ${key(0)}`);
  const template = JSON.parse(stored) as KubeObject;
  const objects = new Map<number, KubeObject>([[0, template]]);
  const t0 = performance.now();
  await seeder.putAll(
    (function* () {
      for (let i = 1; i < N; i++) {
        const w = widget(i);
        const o = { ...template, metadata: { ...template.metadata, ...w.metadata, uid: randomUUID() }, spec: w.spec };
        objects.set(i, o);
        yield [key(i), JSON.stringify(o)] as [string, string];
      }
    })(),
  );
  for (;;) {
    const page = await t.json<KubeList>({ method: 'GET', path, query: { limit: 1 } });
    if (page.items.length + Number(page.metadata.remainingItemCount ?? 0) >= N) break;
    await sleep(500);
  }
  log(`${N} Widgets in ${NS} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  void cp;
  return objects;
}

type Page = import('playwright-core').Page;

/** The Resources view's PAGE_SIZE (src/host/views/resourcesTree.ts): a longer list is shown in ranges of this many. */
const PAGE_SIZE = 100;
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Collapses, then expands the row labelled `label` with real clicks (3 rounds); the time from pointerdown to the
 * row `firstChild` being in the DOM.
 */
async function expandRow(page: Page, label: string, firstChild: string): Promise<Record<string, unknown>> {
  const view = page.locator('[id="workbench.view.extension.reconcileLab"]');
  await view.waitFor({ state: 'visible', timeout: 120_000 });
  const row = view.getByRole('treeitem').filter({ has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRe(label)}\\s*$`) }) }).first();
  await row.waitFor({ state: 'visible', timeout: 120_000 });
  const results: number[] = [];
  for (let round = 0; round < 3; round++) {
    if ((await row.getAttribute('aria-expanded')) === 'true') {
      await row.locator('.monaco-tl-twistie').click();
      await page.waitForFunction((l) => !Array.from(document.querySelectorAll('[role="treeitem"][aria-expanded="true"] .label-name')).some((e) => e.textContent?.trim() === l), label);
      await sleep(1500);
    }
    await page.evaluate((first) => {
      const w = window as unknown as { __down?: number; __shown?: number };
      w.__down = undefined;
      w.__shown = undefined;
      addEventListener('pointerdown', () => (w.__down ??= performance.now()), { capture: true, once: true });
      const mo = new MutationObserver((records) => {
        for (const r of records) {
          for (const n of Array.from(r.addedNodes)) {
            if (n instanceof Element && Array.from(n.querySelectorAll('.label-name')).concat(n.matches('.label-name') ? [n] : []).some((e) => e.textContent?.trim() === first)) {
              w.__shown = performance.now();
              mo.disconnect();
              return;
            }
          }
        }
      });
      mo.observe(document.body, { childList: true, subtree: true });
    }, firstChild);
    await row.locator('.monaco-tl-twistie').click();
    await page.waitForFunction(() => (window as unknown as { __shown?: number }).__shown !== undefined, null, { timeout: 120_000 });
    results.push(await page.evaluate(() => {
      const w = window as unknown as { __down: number; __shown: number };
      return w.__shown - w.__down;
    }));
    await sleep(1500);
  }
  const sorted = [...results].sort((a, b) => a - b);
  return { rounds: results.map((x) => Math.round(x)), medianMs: Math.round(sorted[1]!) };
}

/** Frame intervals and long tasks inside the Event Log webview for `seconds`. */
async function measureEventLog(page: Page, seconds: number): Promise<Record<string, unknown>> {
  for (let attempt = 0; attempt < 100; attempt++) {
    for (const f of page.frames()) {
      const has = await f.evaluate(() => !!document.getElementById('list') && !!document.getElementById('filter-text')).catch(() => false);
      if (!has) continue;
      return f.evaluate(async (seconds) => {
        const longTasks: number[] = [];
        // Where each long task ran, as the Long Tasks API attributes it: "self" (this webview's own script) or
        // another frame of the same event loop (code-server serves webviews from the workbench's origin, so the
        // workbench's own long tasks show up here too, as "same-origin-ancestor" or "multiple-contexts").
        const sources: Record<string, number> = {};
        const po = new PerformanceObserver((l) =>
          l.getEntries().forEach((e) => {
            longTasks.push(e.duration);
            sources[e.name] = (sources[e.name] ?? 0) + 1;
          }),
        );
        po.observe({ entryTypes: ['longtask'] });
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
        await new Promise((r) => setTimeout(r, seconds * 1000));
        running = false;
        po.disconnect();
        frames.sort((a, b) => a - b);
        const q = (p: number) => Math.round(frames[Math.min(frames.length - 1, Math.floor(frames.length * p))]! * 10) / 10;
        return { frames: frames.length, frameP50: q(0.5), frameP95: q(0.95), frameP99: q(0.99), frameMax: q(1), longTasks: longTasks.length, longestTaskMs: Math.round(Math.max(0, ...longTasks)), longTaskSources: sources, rows: document.querySelectorAll('#list .row').length };
      }, seconds);
    }
    await sleep(200);
  }
  return { error: 'the Event Log webview was not found' };
}

/** Set by SIGINT / SIGTERM: the run stops at its next wait and cleans up (servers, browser, control plane, temp dir). */
let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => (interrupted = true));

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rl-bench-editor-'));
  let cp: LocalControlPlane | undefined;
  let server: { url: string; host: string; stop(): Promise<void>; exited: Promise<{ code: number; signal: string }> } | undefined;
  let browser: import('playwright-core').Browser | undefined;
  let seeder: EtcdSeeder | undefined;
  try {
    // The host half, bundled like the extension-host suite (CommonJS, vscode external).
    await esbuild.build({ entryPoints: [join(root, 'bench/editorHost.ts')], outfile: join(dir, 'editorHost.js'), bundle: true, platform: 'node', format: 'cjs', target: 'node22', external: ['vscode'], logLevel: 'warning', absWorkingDir: root });
    log('starting a private control plane…');
    cp = await startLocalControlPlane({ controllerManager: false, log: (l) => log(l) });
    const t = new KubeTransport(loadKubeConfig({ path: cp.kubeconfigPath }));
    const crd = parseAllDocuments(readFileSync(join(root, 'samples/crd.yaml'), 'utf8')).map((d) => d.toJSON() as KubeObject).find((o) => o?.kind === 'CustomResourceDefinition')!;
    await installCrd(t, crd);
    await t.json({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
    seeder = new EtcdSeeder({ url: cp.etcdUrl, ...cp.etcdClientTls });
    const objects = await seed(cp, t, seeder);

    const cs = await ensureCodeServer({ log: (l: string) => log(`[install] ${l}`) });
    const workspace = join(dir, 'workspace');
    mkdirSync(workspace, { recursive: true });
    server = await startCodeServer({
      ...cs, userDataDir: join(dir, 'user-data'), extensionsDir: join(dir, 'extensions'),
      disableWorkspaceTrust: true, smokeTestDriver: true, resolveShellEnv: false,
      // VS Code's own port finder (it spawns a process scan in the extension host every few seconds, 0.1–0.3 s each
      // on a loaded machine) is not the extension's work: off, so that the host's long tasks are the extension's.
      // code-server registers a tunnel provider, which keeps the scan on unless its source is 'output' as well.
      settings: { ...QUIET_SETTINGS, 'remote.autoForwardPorts': false, 'remote.autoForwardPortsSource': 'output' },
      env: {
        RECONCILE_LAB_BENCH_DIR: dir, RECONCILE_LAB_BENCH_KUBECONFIG: cp.kubeconfigPath, RECONCILE_LAB_BENCH_RESOURCE: RESOURCE,
        RECONCILE_LAB_BENCH_NAMESPACE: NS, RECONCILE_LAB_BENCH_OBJECTS: String(N), RECONCILE_LAB_BENCH_BURST: String(BURST),
        ...(process.env.BENCH_EVENT_LOG_RATE ? { BENCH_EVENT_LOG_RATE: process.env.BENCH_EVENT_LOG_RATE } : {}),
        ...(process.env.BENCH_EVENT_LOG_SECONDS ? { BENCH_EVENT_LOG_SECONDS: process.env.BENCH_EVENT_LOG_SECONDS } : {}),
        ...(process.env.BENCH_CPU_PROFILE ? { BENCH_CPU_PROFILE: resolve(process.env.BENCH_CPU_PROFILE) } : {}),
      },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    let exit!: (code: number) => void;
    const exited = new Promise<number>((r) => (exit = r));
    await page.exposeFunction('codeAutomationLog', (_type: string, args: unknown) => {
      const text = Array.isArray(args) ? args.map(String).join(' ') : String(args);
      if (text.includes('[bench:editor host]')) log(text.trim());
    });
    await page.exposeFunction('codeAutomationExit', (code: number) => exit(code));
    const remote = (p: string) => `vscode-remote://${server!.host}${p}`;
    const payload = [['extensionDevelopmentPath', remote(root)], ['extensionTestsPath', remote(join(dir, 'editorHost.js'))], ['skipWelcome', 'true']];
    log('opening the workbench…');
    await page.goto(`${server!.url}?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`, { waitUntil: 'domcontentloaded', timeout: 600_000 });

    const phases: Record<string, () => Promise<unknown>> = {
      expand: async () => {
        // A namespace of more than PAGE_SIZE objects opens on ranges; a range on its objects.
        const firstRange = N > PAGE_SIZE ? `${name(0)} … ${name(Math.min(N, PAGE_SIZE) - 1)}` : undefined;
        const namespace = await expandRow(page, NS, firstRange ?? name(0));
        const range = firstRange ? await expandRow(page, firstRange, name(0)) : undefined;
        return { ...namespace, ...(range ? { range } : {}) };
      },
      burst: async () => {
        const marker = (JSON.parse(readFileSync(join(dir, 'burst.ready'), 'utf8')) as { marker: string }).marker;
        const t0 = performance.now();
        await seeder!.putAll(
          (function* () {
            for (let i = 0; i < BURST; i++) {
              const o = objects.get(i)!;
              const spec = o.spec as { data: Record<string, string> };
              yield [`/registry/${GROUP}/widgets/${NS}/${name(i)}`, JSON.stringify({ ...o, spec: { ...spec, data: { ...spec.data, burst: marker } } })] as [string, string];
            }
          })(),
          16,
          1, // one revision per update, as kube-apiserver writes them (see putAll)
        );
        return { writeMs: Math.round(performance.now() - t0) };
      },
      eventLog: async () => {
        const { seconds } = JSON.parse(readFileSync(join(dir, 'eventLog.ready'), 'utf8')) as { seconds: number };
        return measureEventLog(page, seconds);
      },
    };
    const handled = new Set<string>();
    let code: number | undefined;
    void exited.then((c) => (code = c));
    const deadline = Date.now() + Number(process.env.BENCH_TIMEOUT_MS ?? 1_200_000);
    while (code === undefined && !existsSync(join(dir, 'results.json'))) {
      if (Date.now() > deadline) throw new Error('the benchmark did not finish in time');
      if (interrupted) throw new Error('interrupted');
      for (const [phase, fn] of Object.entries(phases)) {
        if (handled.has(phase) || !existsSync(join(dir, `${phase}.ready`))) continue;
        handled.add(phase);
        log(`phase ${phase}…`);
        let out: unknown;
        try {
          out = await fn();
        } catch (e) {
          out = { error: String((e as Error)?.message ?? e) };
        }
        writeFileSync(join(dir, `${phase}.done`), JSON.stringify(out));
      }
      await sleep(100);
    }
    await Promise.race([exited, sleep(10_000)]);
    const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as Record<string, never>;
    report(results);
  } finally {
    seeder?.dispose();
    await browser?.close().catch(() => {});
    await server?.stop();
    await cp?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(r: Record<string, any>): void {
  console.log(JSON.stringify(r, null, 2));
  if (r.error) {
    console.log(`\nhost failed: ${r.error}`);
    process.exitCode = 1;
    return;
  }
  const lt = (x: { count: number; longestMs: number }) => `${x.count}${x.count ? ` (longest ${x.longestMs} ms)` : ''}`;
  console.log(`\nThe editor with ${N.toLocaleString('en-US')} watched Widgets (code-server ${'+'} Chromium, Node ${process.version}); extension-host long tasks ≥ 100 ms by its own event-loop timer`);
  const rows: string[][] = [
    ['connect → all objects in the tree model', `${r.connect.ms} ms`, `heap +${r.connect.heapPerObject} B/object (${r.connect.heapBeforeMB.toFixed(0)} → ${r.connect.heapAfterMB.toFixed(0)} MB), RSS ${r.connect.rssMB.toFixed(0)} MB`, lt(r.connect.longTasks)],
    ['expand the namespace node (pointerdown → first row)', `${r.expand.medianMs} ms (median of ${r.expand.rounds.join(', ')})${r.expand.range ? `; a range of ${PAGE_SIZE}: ${r.expand.range.medianMs} ms (${r.expand.range.rounds.join(', ')})` : ''}`, `provider: getChildren ${r.expand.getChildrenMs} ms / ${r.expand.getChildrenCalls} calls, getTreeItem ${r.expand.getTreeItemMs} ms / ${r.expand.getTreeItemCalls} calls`, lt(r.expand.longTasks)],
    [`burst of ${r.burst.updates} updates (written at once into etcd)`, `${r.burst.allInModelMs} ms until all in the model`, `${r.burst.refreshes} tree refreshes (${r.burst.targetedRefreshes ?? 0} of changed rows only; Work Queue: ${r.burst.queueRefreshes ?? 0}, ${r.burst.queueTargetedRefreshes ?? 0} targeted), etcd writes ${r.burst.writeMs ?? '?'} ms, provider ${r.burst.providerMsPerRefresh} ms per refresh (getTreeItem ×${r.burst.getTreeItemCalls}), host CPU ${r.burst.cpuMs} ms`, lt(r.burst.longTasks)],
    [`Event Log, ${r.eventLog.entriesPerSecond} entries/s`, `${r.eventLog.entries} entries`, `webview frames p50 ${r.eventLog.webview.frameP50} / p95 ${r.eventLog.webview.frameP95} / p99 ${r.eventLog.webview.frameP99} ms, webview long tasks ${r.eventLog.webview.longTasks} (longest ${r.eventLog.webview.longestTaskMs} ms), host CPU ${r.eventLog.cpuMs} ms; opening the panel: host long tasks ${r.eventLog.openLongTasks ? lt(r.eventLog.openLongTasks) : '?'}`, lt(r.eventLog.longTasks)],
  ];
  for (const row of rows) console.log(`- ${row[0]}: ${row[1]}; ${row[2]}; host long tasks: ${row[3]}`);
  console.log(`Max event-loop delay in the extension host over the run: ${r.maxEventLoopDelayMs.toFixed(0)} ms; heap at the end ${r.heapEndMB.toFixed(0)} MB.`);
}

await main();
