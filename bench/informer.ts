// Informer benchmark: `npm run bench:informer` (node --expose-gc bench/informer.ts).
//
// Against a real local control plane (RECONCILE_LAB_KUBECONFIG, or a private one started here),
// side by side in one run:
//   - initial sync of BENCH_OBJECTS custom resources (~2 KB each) into our SharedIndexInformer with two
//     indexers, vs @kubernetes/client-node's makeInformer, vs the floor (bare paged LIST + JSON.parse);
//   - steady watch throughput: BENCH_UPDATES updates replayed from the server's watch cache (every
//     consumer watches from the same RV taken before the updates, so each is limited by its own speed,
//     not by how fast the server accepts writes), through informer + indexers vs the same baselines; the
//     informers' clocks start once their initial list is handled (the N-th add delivered), the floor's at
//     its watch request;
//   - heap bytes per cached object: the default (objects kept as received, as controller-runtime) and with
//     dropManagedFields (the opt-in stripManagedFields transform; setting reconcileLab.informer.dropManagedFields,
//     CLI --drop-managed-fields).
// Each timing is the median of BENCH_ROUNDS rounds (default 9: with fewer, single runs on 2 cores swing by ±15%); consumers take turns going first, and
// each measurement starts after BENCH_PAUSE_MS (default 1500) of quiet and a full GC.
// BENCH_OBJECTS (default 10000) and BENCH_UPDATES (default min(5000, objects/2)) shrink the run;
// BENCH_PROFILE=1 logs per-request timings.
import { performance } from 'node:perf_hooks';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { makeInformer, CustomObjectsApi, type KubernetesObject, type KubernetesListObject } from '@kubernetes/client-node';
import { startLocalControlPlane, type LocalControlPlane } from '../src/core/controlplane/localControlPlane.ts';
import { loadKubeConfig } from '../src/core/k8s/kubeconfig.ts';
import { KubeTransport } from '../src/core/k8s/transport.ts';
import { KubeListerWatcher, parseWatchStream } from '../src/core/k8s/listerWatcher.ts';
import { resourcePath } from '../src/core/k8s/paths.ts';
import type { KubeList, KubeObject, ResourceInfo } from '../src/core/k8s/objects.ts';
import { SharedIndexInformer, stripManagedFields } from '../src/core/cache/sharedIndexInformer.ts';
import { OWNER_UID_INDEX, ownerUidIndexFunc, labelIndexFunc, labelIndexName } from '../src/core/cache/indexFuncs.ts';
import type { ListerWatcher } from '../src/core/cache/interfaces.ts';
import { realClock } from '../src/core/clock.ts';
import { installCrd, testCrd, createNamespace } from '../test/integration/support/cluster.ts';

const N = Number(process.env.BENCH_OBJECTS ?? 10_000);
const U = Number(process.env.BENCH_UPDATES ?? Math.min(5_000, Math.max(100, Math.floor(N / 2))));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
/** Quiet time before each measurement, so the apiserver (same 2 cores) has finished with the previous consumer. */
const PAUSE_MS = Number(process.env.BENCH_PAUSE_MS ?? 1500);
const IN_FLIGHT = 16;
const group = 'informer-bench.reconcile.dev';
const plural = 'benchwidgets';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  console.error('run with --expose-gc (npm run bench:informer does)');
  process.exit(2);
}
const log = (s: string) => process.stderr.write(`[bench] ${s}\n`);
/** client-node's stop() reports its own abort as an error (a known quirk): not worth a line. */
const logClientNodeError = (err: unknown) => {
  if ((err as Error)?.name !== 'AbortError') log(`client-node informer error: ${(err as Error)?.message ?? err}`);
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function fullGc(): Promise<number> {
  await new Promise((r) => setTimeout(r, PAUSE_MS));
  for (let i = 0; i < 4; i++) {
    gc!();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().heapUsed;
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

function benchObject(i: number, ownerUids: string[]): KubeObject {
  return {
    apiVersion: `${group}/v1`,
    kind: 'BenchWidget',
    metadata: {
      name: `bw-${String(i).padStart(5, '0')}`,
      labels: { app: `app-${i % 20}`, tier: i % 3 === 0 ? 'frontend' : 'backend', shard: String(i % 64) },
      annotations: { 'bench.reconcile.dev/note': `object ${i} of the informer benchmark` },
      ownerReferences: [{ apiVersion: `${group}/v1`, kind: 'BenchOwner', name: `owner-${i % ownerUids.length}`, uid: ownerUids[i % ownerUids.length]! }],
    },
    spec: {
      replicas: i % 5,
      image: `registry.example.com/team-${i % 7}/service-${i}:v1.${i % 100}.0`,
      env: Array.from({ length: 12 }, (_, k) => ({ name: `VAR_${k}`, value: `value-${i}-${k}-${'x'.repeat(70)}` })),
      ports: [{ name: 'http', containerPort: 8080 }, { name: 'metrics', containerPort: 9090 }],
      counter: 0,
    },
  };
}

interface Env {
  transport: KubeTransport;
  kc: ReturnType<typeof loadKubeConfig>;
  res: ResourceInfo;
  ns: string;
  path: string;
}

// ---------- consumers ----------

/** Floor: paged LIST (limit 500 from RV "0", like the reflector's first list) + JSON.parse, nothing kept beyond the items. */
async function floorSync(e: Env): Promise<{ ms: number; items: KubeObject[] }> {
  const t0 = performance.now();
  const items: KubeObject[] = [];
  let cont: string | undefined;
  let rv: string | undefined = '0';
  do {
    const a = performance.now();
    const res = await e.transport.send({ method: 'GET', path: e.path, query: { resourceVersion: rv, limit: 500, continue: cont } });
    const page = JSON.parse(await res.text()) as KubeList;
    if (process.env.BENCH_PROFILE) log(`  floor page → ${page.items.length} items in ${(performance.now() - a).toFixed(0)} ms`);
    for (const it of page.items) items.push(it);
    cont = page.metadata.continue || undefined;
    rv = undefined;
  } while (cont);
  return { ms: performance.now() - t0, items };
}

function ourInformer(e: Env, lw: ListerWatcher<KubeObject>, dropManagedFields = false): SharedIndexInformer {
  return new SharedIndexInformer({
    listerWatcher: lw,
    resource: e.res,
    clock: realClock,
    indexers: { [OWNER_UID_INDEX]: ownerUidIndexFunc, [labelIndexName('app')]: labelIndexFunc('app') },
    watchList: false, // the LIST path (client-node and client-go v0.34 list); WatchList is measured by bench:watchlist
    ...(dropManagedFields ? { transform: stripManagedFields } : {}),
  });
}

async function oursSync(e: Env, dropManagedFields = false): Promise<{ ms: number; informer: SharedIndexInformer }> {
  const t0 = performance.now();
  const real = new KubeListerWatcher({ transport: e.transport, resource: e.res, namespace: e.ns });
  const lw: ListerWatcher<KubeObject> = process.env.BENCH_PROFILE
    ? {
        list: async (o, s) => {
          const a = performance.now();
          const r = await real.list(o, s);
          log(`  list ${JSON.stringify(o)} → ${r.items.length} items in ${(performance.now() - a).toFixed(0)} ms (at +${(performance.now() - t0).toFixed(0)} ms)`);
          return r;
        },
        watch: (o, s) => real.watch(o, s),
      }
    : real;
  const inf = ourInformer(e, lw, dropManagedFields);
  let adds = 0;
  inf.addEventHandler({ onAdd: () => void adds++ });
  const synced = new Promise<void>((resolve) => {
    const d = inf.onDidChangeState(() => {
      if (inf.hasSynced()) {
        d.dispose();
        resolve();
      }
    });
  });
  inf.run();
  await synced;
  if (process.env.BENCH_PROFILE) log(`  synced at +${(performance.now() - t0).toFixed(0)} ms`);
  // Wait for the handler to have received every initial add too (what a consumer needs).
  while (adds < N) await new Promise((r) => setImmediate(r));
  return { ms: performance.now() - t0, informer: inf };
}

type ClientNodeInformer = ReturnType<typeof makeInformer<KubernetesObject>>;

async function clientNodeSync(e: Env): Promise<{ ms: number; informer: ClientNodeInformer }> {
  const api = e.kc.makeApiClient(CustomObjectsApi);
  const t0 = performance.now();
  const listFn = () => api.listNamespacedCustomObject({ group, version: 'v1', namespace: e.ns, plural }) as Promise<KubernetesListObject<KubernetesObject>>;
  const inf = makeInformer<KubernetesObject>(e.kc, e.path, listFn);
  let adds = 0;
  let resolveAll!: () => void;
  const all = new Promise<void>((r) => (resolveAll = r));
  inf.on('add', () => {
    if (++adds === N) resolveAll();
  });
  inf.on('error', (err) => logClientNodeError(err));
  await inf.start();
  await all;
  return { ms: performance.now() - t0, informer: inf };
}

/** Floor for watch: one raw watch from rv0, NDJSON split + JSON.parse, counting MODIFIED events. */
async function floorWatch(e: Env, rv0: string): Promise<number> {
  const ac = new AbortController();
  const t0 = performance.now();
  const res = await e.transport.send({ method: 'GET', path: e.path, query: { watch: 1, resourceVersion: rv0, allowWatchBookmarks: true, timeoutSeconds: 600 }, signal: ac.signal });
  let seen = 0;
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  outer: for (;;) {
    const r = await reader.read();
    if (r.done) throw new Error('floor watch closed early');
    buf += dec.decode(r.value, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const ev = JSON.parse(buf.slice(0, nl)) as { type: string; object: { code?: number } };
      buf = buf.slice(nl + 1);
      if (ev.type === 'ERROR') throw new Error(`floor watch: ERROR ${ev.object.code}`);
      if (ev.type === 'MODIFIED' && ++seen === U) break outer;
    }
  }
  const ms = performance.now() - t0;
  ac.abort();
  await reader.cancel().catch(() => {});
  return ms;
}

/** Our informer synced from a pre-parsed snapshot at rv0 (no network), then watching the real server from rv0. */
async function oursWatch(e: Env, snapshot: KubeList): Promise<number> {
  const real = new KubeListerWatcher({ transport: e.transport, resource: e.res, namespace: e.ns });
  let listed = false;
  const lw: ListerWatcher<KubeObject> = {
    list: async (o, s) => {
      if (listed) throw new Error('unexpected relist (watch cache no longer holds the replayed events?)');
      listed = true;
      return snapshot;
    },
    watch: (o, s) => real.watch(o, s),
  };
  const inf = ourInformer(e, lw);
  let updates = 0;
  let adds = 0;
  let tSynced = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  inf.addEventHandler({
    // The clock starts when the initial list has been handled (the N-th add delivered): from then on only the
    // replayed watch events are measured, the same way for every consumer.
    onAdd: () => {
      if (++adds === N) tSynced = performance.now();
    },
    onUpdate: (a, b) => {
      if (a.metadata.resourceVersion !== b.metadata.resourceVersion && ++updates === U) done();
    },
  });
  inf.run();
  await finished;
  const ms = performance.now() - tSynced;
  inf.dispose();
  await inf.whenStopped();
  return ms;
}

async function clientNodeWatch(e: Env, snapshot: KubeList): Promise<number> {
  const inf = makeInformer<KubernetesObject>(e.kc, e.path, async () => snapshot as KubernetesListObject<KubernetesObject>);
  let updates = 0;
  let adds = 0;
  let tSynced = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  inf.on('add', () => {
    if (++adds === N) tSynced = performance.now();
  });
  inf.on('update', () => {
    if (++updates === U) done();
  });
  inf.on('error', (err) => logClientNodeError(err));
  await inf.start();
  await finished;
  const ms = performance.now() - tSynced;
  await inf.stop();
  return ms;
}


type MemoryConsumer = 'floor' | 'ours' | 'ours-drop-managed-fields' | 'client-node';

/** Runs this file as `--memory <consumer>` in a fresh Node and returns the heap bytes per object it reports. */
function measureInChild(consumer: MemoryConsumer, kubeconfigPath: string, ns: string): number {
  const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--memory', consumer], {
    env: { ...process.env, BENCH_KUBECONFIG: kubeconfigPath, BENCH_NS: ns, BENCH_PAUSE_MS: '200' },
    encoding: 'utf8',
  });
  const m = /HEAP_PER_OBJECT (\S+)/.exec(r.stdout ?? '');
  if (r.status !== 0 || !m) throw new Error(`memory child ${consumer} failed (${r.status}): ${r.stderr}`);
  return Number(m[1]);
}

/** Child mode: sync one consumer on a clean heap and print its heap growth per cached object. */
async function memoryChild(consumer: MemoryConsumer): Promise<void> {
  const kc = loadKubeConfig({ path: process.env.BENCH_KUBECONFIG! });
  const transport = new KubeTransport(kc);
  const ns = process.env.BENCH_NS!;
  const res: ResourceInfo = { group, version: 'v1', resource: plural, kind: 'BenchWidget', namespaced: true };
  const e: Env = { transport, kc, res, ns, path: resourcePath(res, ns) };
  // Warm up the HTTP/TLS machinery so that its one-time allocations are not counted.
  await (await transport.send({ method: 'GET', path: e.path, query: { limit: 1 } })).text();
  const base = await fullGc();
  let perObject: number;
  if (consumer === 'floor') {
    const f = await floorSync(e);
    perObject = ((await fullGc()) - base) / f.items.length;
  } else if (consumer === 'client-node') {
    const c = await clientNodeSync(e);
    perObject = ((await fullGc()) - base) / c.informer.list().length;
    await c.informer.stop();
  } else {
    const o = await oursSync(e, consumer === 'ours-drop-managed-fields');
    perObject = ((await fullGc()) - base) / o.informer.getIndexer().listKeys().length;
    o.informer.dispose();
  }
  console.log(`HEAP_PER_OBJECT ${perObject}`);
  process.exit(0);
}

// ---------- main ----------

async function main(): Promise<void> {
  let cp: LocalControlPlane | undefined;
  let kubeconfigPath = process.env.RECONCILE_LAB_KUBECONFIG;
  if (!kubeconfigPath) {
    log('starting a private control plane (etcd + kube-apiserver)…');
    cp = await startLocalControlPlane({ controllerManager: false, log: (l) => log(l) });
    kubeconfigPath = cp.kubeconfigPath;
  }
  const kc = loadKubeConfig({ path: kubeconfigPath });
  const transport = new KubeTransport(kc);
  let ns = '';
  try {
    await installCrd(transport, testCrd({ group, kind: 'BenchWidget', plural }));
    ns = await createNamespace(transport, 'bench');
    const res: ResourceInfo = { group, version: 'v1', resource: plural, kind: 'BenchWidget', namespaced: true };
    const e: Env = { transport, kc, res, ns, path: resourcePath(res, ns) };

    log(`creating ${N} objects, ${IN_FLIGHT} in flight…`);
    const ownerUids = Array.from({ length: Math.max(1, Math.ceil(N / 10)) }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const tc = performance.now();
    let sample: KubeObject | undefined;
    await pool(Array.from({ length: N }, (_, i) => i), IN_FLIGHT, async (i) => {
      const o = await transport.json<KubeObject>({ method: 'POST', path: e.path, body: benchObject(i, ownerUids), query: { fieldManager: 'bench' } });
      sample ??= o;
    });
    log(`created in ${((performance.now() - tc) / 1000).toFixed(1)} s`);
    const withMf = JSON.stringify(sample).length;
    const { managedFields: _mf, ...metaNoMf } = sample!.metadata;
    const withoutMf = JSON.stringify({ ...sample, metadata: metaNoMf }).length;

    const mem = { floor: [] as number[], ours: [] as number[], oursDrop: [] as number[], cn: [] as number[] };
    // ---- memory: heap growth per cached object, each measurement in a fresh process ----
    // (in one process, what the previous consumer left behind, e.g. client-node's watch keeps its cache
    // reachable for up to 30 s after stop(), distorts the next heap delta)
    log('memory (one child process per measurement)');
    for (let r = 0; r < 3; r++) {
      for (const [consumer, into] of [['floor', mem.floor], ['ours', mem.ours], ['ours-drop-managed-fields', mem.oursDrop], ['client-node', mem.cn]] as const) {
        into.push(measureInChild(consumer, kubeconfigPath!, ns));
      }
    }

    // ---- initial sync ----
    const sync = { floor: [] as number[], ours: [] as number[], cn: [] as number[] };
    // The three consumers take turns going first (round r starts with consumer r mod 3), so that
    // warm-up and the garbage of the previous consumer do not favour one of them.
    const syncSteps: Array<() => Promise<void>> = [
      async () => {
        await fullGc();
        const f = await floorSync(e);
        sync.floor.push(f.ms);
        f.items.length = 0;
      },
      async () => {
        await fullGc();
        const o = await oursSync(e);
        sync.ours.push(o.ms);
        o.informer.dispose();
        await o.informer.whenStopped();
      },
      async () => {
        await fullGc();
        const c = await clientNodeSync(e);
        sync.cn.push(c.ms);
        await c.informer.stop();
      },
    ];
    for (let r = 0; r < ROUNDS; r++) {
      log(`initial sync round ${r + 1}/${ROUNDS}`);
      for (let k = 0; k < 3; k++) await syncSteps[(r + k) % 3]!();
    }
    // ---- watch throughput ----
    log(`snapshot at rv0, then ${U} updates, ${IN_FLIGHT} in flight…`);
    const snapshotText = await (await transport.send({ method: 'GET', path: e.path })).text();
    const rv0 = (JSON.parse(snapshotText) as KubeList).metadata.resourceVersion!;
    const names = Array.from({ length: U }, (_, i) => `bw-${String(i % N).padStart(5, '0')}`);
    const tu = performance.now();
    let k = 0;
    await pool(names, IN_FLIGHT, async (name) => {
      await transport.json({
        method: 'PATCH',
        path: `${e.path}/${name}`,
        body: { spec: { counter: ++k } },
        contentType: 'application/merge-patch+json',
        query: { fieldManager: 'bench' },
      });
    });
    const writeMs = performance.now() - tu;
    log(`updates written in ${(writeMs / 1000).toFixed(1)} s (${Math.round((U / writeMs) * 1000)}/s: the server's write rate, not measured below)`);
    const watch = { floor: [] as number[], ours: [] as number[], cn: [] as number[] };
    const watchSteps: Array<() => Promise<void>> = [
      async () => void watch.floor.push(await floorWatch(e, rv0)),
      async () => void watch.ours.push(await oursWatch(e, JSON.parse(snapshotText) as KubeList)),
      async () => void watch.cn.push(await clientNodeWatch(e, JSON.parse(snapshotText) as KubeList)),
    ];
    for (let r = 0; r < ROUNDS; r++) {
      log(`watch replay round ${r + 1}/${ROUNDS}`);
      for (let k = 0; k < 3; k++) {
        await fullGc();
        await watchSteps[(r + k) % 3]!();
      }
    }

    // ---- report ----
    const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
    const rows: string[][] = [];
    const sOurs = median(sync.ours), sCn = median(sync.cn), sFloor = median(sync.floor);
    rows.push([`initial sync, ${fmt(N)} objects (ms, lower is better)`, fmt(sOurs), fmt(sCn), fmt(sFloor), ratio(sOurs, sCn), ratio(sOurs, sFloor)]);
    const wOurs = median(watch.ours), wCn = median(watch.cn), wFloor = median(watch.floor);
    const eps = (ms: number) => (U / ms) * 1000;
    rows.push([`watch, ${fmt(U)} updates replayed (events/s, higher is better)`, fmt(eps(wOurs)), fmt(eps(wCn)), fmt(eps(wFloor)), ratio(eps(wOurs), eps(wCn)), ratio(eps(wOurs), eps(wFloor))]);
    rows.push([`  same, time (ms, lower is better)`, fmt(wOurs), fmt(wCn), fmt(wFloor), ratio(wOurs, wCn), ratio(wOurs, wFloor)]);
    const mOurs = median(mem.ours), mDrop = median(mem.oursDrop), mCn = median(mem.cn), mFloor = median(mem.floor);
    rows.push([`heap bytes per cached object (default: as received)`, fmt(mOurs), fmt(mCn), fmt(mFloor), ratio(mOurs, mCn), ratio(mOurs, mFloor)]);
    rows.push([`heap bytes per cached object (dropManagedFields)`, fmt(mDrop), fmt(mCn), fmt(mFloor), ratio(mDrop, mCn), ratio(mDrop, mFloor)]);
    const head = ['', 'ours (2 indexers)', 'client-node makeInformer', 'floor (LIST/WATCH + JSON.parse)', 'ours vs client-node', 'ours vs floor'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
    console.log(`\nInformer benchmark: ${fmt(N)} objects of ~${fmt(withoutMf / 1024, 1)} KB JSON (${fmt(withMf / 1024, 1)} KB with managedFields), ${fmt(U)} updates, median of ${ROUNDS}, Node ${process.version}`);
    console.log(line(head));
    console.log(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const r of rows) console.log(line(r));
    console.log('Ratios are ours ÷ other in the unit of the row: below 1.00× is better for ms and bytes, above 1.00× for events/s.');
    console.log('Floor memory = the parsed LIST items alone (managedFields included, no cache, no index).');
  } finally {
    if (cp) await cp.stop();
    else if (ns) await transport.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  }
}

if (process.argv[2] === '--memory') await memoryChild(process.argv[3] as MemoryConsumer);
else await main();
