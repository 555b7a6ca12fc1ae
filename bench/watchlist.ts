// WatchList benchmark: `npm run bench:watchlist` (node bench/watchlist.ts).
//
// What WatchList is for: many informers starting at once. BENCH_INFORMERS (default 8) informers start together on
// BENCH_OBJECTS (default 10,000) custom resources of ~2 KB, once with LIST + WATCH (watchList: false) and once with
// WatchList (the default), against a private local control plane. Measured per start:
//   - kube-apiserver's peak RSS: VmHWM from /proc/<pid>/status, reset (clear_refs 5) just before the informers start,
//     cross-checked by sampling VmRSS every 20 ms; reported as the peak and as the growth over the RSS at the start;
//   - kube-apiserver CPU time (utime + stime from /proc/<pid>/stat) spent during the start;
//   - each informer's sync time (run() → hasSynced()), median and slowest of the BENCH_INFORMERS.
// Every measurement starts from a freshly started kube-apiserver (same etcd data, watch cache warmed, a few seconds
// of quiet), so no mode inherits memory the Go runtime kept from the previous one. Modes alternate; BENCH_ROUNDS
// (default 3) rounds; medians are reported. Linux only (/proc).
import { performance } from 'node:perf_hooks';
import { readFileSync, writeFileSync } from 'node:fs';
import { apiServerPid, cpuSeconds } from './procStats.ts';
import { startLocalControlPlane } from '../src/core/controlplane/localControlPlane.ts';
import { loadKubeConfig } from '../src/core/k8s/kubeconfig.ts';
import { KubeTransport } from '../src/core/k8s/transport.ts';
import { KubeListerWatcher } from '../src/core/k8s/listerWatcher.ts';
import { resourcePath } from '../src/core/k8s/paths.ts';
import { findCrdResource } from '../src/core/k8s/discovery.ts';
import type { KubeObject, ResourceInfo } from '../src/core/k8s/objects.ts';
import { SharedIndexInformer } from '../src/core/cache/sharedIndexInformer.ts';
import { realClock } from '../src/core/clock.ts';
import { installCrd, testCrd, createNamespace } from '../test/integration/support/cluster.ts';

const N = Number(process.env.BENCH_OBJECTS ?? 10_000);
const INFORMERS = Number(process.env.BENCH_INFORMERS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const QUIET_MS = Number(process.env.BENCH_PAUSE_MS ?? 4000);
const group = 'watchlist-bench.reconcile.dev';
const plural = 'streamwidgets';

const log = (s: string) => process.stderr.write(`[bench] ${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;

/** A ~2 KB object (like bench:informer's). */
function benchObject(i: number): KubeObject {
  return {
    apiVersion: `${group}/v1`,
    kind: 'StreamWidget',
    metadata: {
      name: `sw-${String(i).padStart(5, '0')}`,
      labels: { app: `app-${i % 20}`, tier: i % 3 === 0 ? 'frontend' : 'backend', shard: String(i % 64) },
      annotations: { 'bench.reconcile.dev/note': `object ${i} of the watchlist benchmark` },
    },
    spec: {
      replicas: i % 5,
      image: `registry.example.com/team-${i % 7}/service-${i}:v1.${i % 100}.0`,
      env: Array.from({ length: 12 }, (_, k) => ({ name: `VAR_${k}`, value: `value-${i}-${k}-${'x'.repeat(70)}` })),
      ports: [{ name: 'http', containerPort: 8080 }, { name: 'metrics', containerPort: 9090 }],
    },
  };
}

async function pool<T>(items: T[], limit: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`${field} missing for pid ${pid}`);
  return Number(m[1]);
}

interface Sample {
  peakKb: number;
  sampledPeakKb: number;
  baseKb: number;
  cpuS: number;
  syncMs: number[];
}

async function measure(mode: 'list' | 'watchlist', kubeconfigPath: string, res: ResourceInfo, ns: string, port: number): Promise<Sample> {
  const pid = apiServerPid(port);
  const transports = Array.from({ length: INFORMERS }, () => new KubeTransport(loadKubeConfig({ path: kubeconfigPath })));
  await sleep(QUIET_MS);
  writeFileSync(`/proc/${pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
  const baseKb = statusKb(pid, 'VmRSS');
  const cpu0 = cpuSeconds(pid);
  let sampledPeakKb = baseKb;
  const sampler = setInterval(() => {
    try {
      sampledPeakKb = Math.max(sampledPeakKb, statusKb(pid, 'VmRSS'));
    } catch {
      // the process is being read while it exits: nothing to sample
    }
  }, 20);
  const informers = transports.map(
    (transport) =>
      new SharedIndexInformer({
        listerWatcher: new KubeListerWatcher({ transport, resource: res, namespace: ns }),
        resource: res,
        clock: realClock,
        watchList: mode === 'watchlist',
      }),
  );
  const t0 = performance.now();
  const syncMs = await Promise.all(
    informers.map(
      (inf) =>
        new Promise<number>((resolve) => {
          const d = inf.onDidChangeState((s) => {
            if (inf.hasSynced()) {
              d.dispose();
              resolve(performance.now() - t0);
            } else if (s.phase === 'backoff') log(`  ${mode}: an informer backs off (${s.reason}): ${s.lastError}`);
          });
          inf.run();
        }),
    ),
  );
  for (const inf of informers) if (inf.getIndexer().listKeys().length !== N) throw new Error(`${mode}: an informer holds ${inf.getIndexer().listKeys().length} objects, not ${N}`);
  await sleep(300); // let the server finish writing and freeing after the last response
  clearInterval(sampler);
  const peakKb = statusKb(pid, 'VmHWM');
  const cpuS = cpuSeconds(pid) - cpu0;
  for (const inf of informers) inf.dispose();
  await Promise.all(informers.map((i) => i.whenStopped()));
  for (const t of transports) t.dispose();
  return { peakKb, sampledPeakKb: Math.max(sampledPeakKb, baseKb), baseKb, cpuS, syncMs };
}

async function main(): Promise<void> {
  if (process.platform !== 'linux') throw new Error('bench:watchlist reads /proc (Linux only)');
  log(`starting a private control plane (kube-apiserver is restarted before every measurement)`);
  // The control plane's processes are unref'd: while stopApiServer() waits for an exit, nothing else may hold the
  // event loop, and Node would end quietly. This timer keeps the process alive until the bench is done.
  const keepAlive = setInterval(() => {}, 60_000);
  const cp = await startLocalControlPlane({ controllerManager: false, log: (l) => log(l) });
  try {
    const port = Number(new URL(cp.server).port);
    const admin = new KubeTransport(loadKubeConfig({ path: cp.kubeconfigPath }));
    await installCrd(admin, testCrd({ group, kind: 'StreamWidget', plural }));
    const res = await findCrdResource(admin, `${plural}.${group}`);
    const ns = await createNamespace(admin, 'wlbench');
    const path = resourcePath(res, ns);
    const t0 = performance.now();
    await pool(Array.from({ length: N }, (_, i) => i), 16, async (i) => {
      await admin.json({ method: 'POST', path, body: benchObject(i) });
    });
    const bytes = JSON.stringify(benchObject(N - 1)).length;
    log(`created ${N} objects (~${bytes} B each before server fields) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    admin.dispose();

    const results: Record<'list' | 'watchlist', Sample[]> = { list: [], watchlist: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order: Array<'list' | 'watchlist'> = round % 2 === 0 ? ['list', 'watchlist'] : ['watchlist', 'list'];
      for (const mode of order) {
        await cp.stopApiServer({ graceMs: 0 });
        await cp.startApiServer();
        // The CRD's REST path and its watch cache come up after /readyz: wait until a list answers.
        const probe = new KubeTransport(loadKubeConfig({ path: cp.kubeconfigPath }));
        for (let i = 0; ; i++) {
          try {
            // RV "0" is served by the watch cache: this answers only once the cache is initialized (before that,
            // kube-apiserver answers 429 "storage is (re)initializing", which informers would back off from).
            await probe.json({ method: 'GET', path, query: { limit: 1, resourceVersion: '0' } });
            break;
          } catch (e) {
            if (i > 300) throw e;
            await sleep(100);
          }
        }
        probe.dispose();
        const s = await measure(mode, cp.kubeconfigPath, res, ns, port);
        results[mode].push(s);
        log(
          `round ${round + 1} ${mode.padEnd(9)}: apiserver peak ${mb(s.peakKb)} (sampled ${mb(s.sampledPeakKb)}, start ${mb(s.baseKb)}, growth ${mb(s.peakKb - s.baseKb)}), ` +
            `cpu ${s.cpuS.toFixed(1)} s, sync median ${median(s.syncMs).toFixed(0)} ms, slowest ${Math.max(...s.syncMs).toFixed(0)} ms`,
        );
      }
    }
    const row = (mode: 'list' | 'watchlist') => {
      const r = results[mode];
      return {
        peak: median(r.map((s) => s.peakKb)),
        growth: median(r.map((s) => s.peakKb - s.baseKb)),
        cpu: median(r.map((s) => s.cpuS)),
        syncMedian: median(r.map((s) => median(s.syncMs))),
        syncMax: median(r.map((s) => Math.max(...s.syncMs))),
      };
    };
    const l = row('list');
    const w = row('watchlist');
    console.log(`\n${INFORMERS} informers starting at once on ${N} objects (~2 KB), ${ROUNDS} rounds (medians), fresh kube-apiserver each time\n`);
    console.log('| | LIST + WATCH | WatchList | WatchList ÷ LIST |');
    console.log('|---|---|---|---|');
    console.log(`| kube-apiserver peak RSS (VmHWM) | ${mb(l.peak)} | ${mb(w.peak)} | ${(w.peak / l.peak).toFixed(2)}× |`);
    console.log(`| kube-apiserver RSS growth during the start | ${mb(l.growth)} | ${mb(w.growth)} | ${(w.growth / l.growth).toFixed(2)}× |`);
    console.log(`| kube-apiserver CPU during the start | ${l.cpu.toFixed(1)} s | ${w.cpu.toFixed(1)} s | ${(w.cpu / l.cpu).toFixed(2)}× |`);
    console.log(`| informer sync time, median of ${INFORMERS} | ${l.syncMedian.toFixed(0)} ms | ${w.syncMedian.toFixed(0)} ms | ${(w.syncMedian / l.syncMedian).toFixed(2)}× |`);
    console.log(`| informer sync time, slowest of ${INFORMERS} | ${l.syncMax.toFixed(0)} ms | ${w.syncMax.toFixed(0)} ms | ${(w.syncMax / l.syncMax).toFixed(2)}× |`);
    const target = w.growth <= l.growth / 2;
    console.log(`\ntarget (streaming peak memory at most half of LIST's, counted as growth over the idle server): ${target ? 'met' : 'missed'}`);
  } finally {
    await cp.stop();
    clearInterval(keepAlive);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
