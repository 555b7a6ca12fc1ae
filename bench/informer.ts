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
// BENCH_PROFILE=1 logs per-request timings. BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the sync (from the first
// request to the last add handled, nothing before or after) of every "ours" child process there (the sampling adds to
// their CPU time, and the profiler's memory to their heap per object: measure those without it). Each contender's CPU time during its sync (process.cpuUsage in the child) and
// kube-apiserver's CPU time while the child ran (/proc, when the control plane runs on this machine) are printed next
// to the times: on a 2-core machine, CPU we use is CPU the server does not get to encode the answer.
// Contenders "ours-watchlist" and "transport-watchlist" are the same two over a WatchList stream (the editor's
// default): our informer with watchList on, and the stream's bytes read until the initial-events-end bookmark.
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
import { buildClientGo, runClientGoJson } from './clientgo.ts';
import { installCrd, testCrd, createNamespace } from '../test/integration/support/cluster.ts';
import { EtcdSeeder, type EtcdAccess } from './etcdSeed.ts';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { findApiServerPid, cpuSeconds } from './procStats.ts';

const N = Number(process.env.BENCH_OBJECTS ?? 10_000);
const U = Number(process.env.BENCH_UPDATES ?? Math.min(5_000, Math.max(100, Math.floor(N / 2))));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
/** Quiet time before each measurement, so the apiserver (same 2 cores) has finished with the previous consumer. */
const PAUSE_MS = Number(process.env.BENCH_PAUSE_MS ?? 1500);
const IN_FLIGHT = 16;
/** Writes in flight while creating the objects (a fast path for 100,000). */
const CREATE_IN_FLIGHT = Number(process.env.BENCH_CREATE_IN_FLIGHT ?? 48);
/** Entries of ~90 bytes in each object's spec.env: 12 makes ~2 KB objects (the default), 2 ~1 KB. */
const ENV_VARS = Number(process.env.BENCH_ENV_VARS ?? 12);
/** Initial-sync contenders, each run in a fresh process per round (BENCH_CONTENDERS narrows them). */
const SYNC_CONTENDERS = ['ours', 'client-go', 'client-node', 'floor', 'transport', 'ours-watchlist', 'transport-watchlist'] as const;
type SyncContender = (typeof SYNC_CONTENDERS)[number];
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

/** BENCH_SHAPE=small: objects of about 0.5 KB (with managedFields): two labels, a short spec, no env, no owner. */
const SMALL = process.env.BENCH_SHAPE === 'small';

function benchObject(i: number, ownerUids: string[]): KubeObject {
  if (SMALL) {
    return {
      apiVersion: `${group}/v1`,
      kind: 'BenchWidget',
      metadata: { name: `bw-${String(i).padStart(5, '0')}`, labels: { app: `app-${i % 20}`, shard: String(i % 64) } },
      spec: { replicas: i % 5, image: `registry.example.com/service-${i}:v1.${i % 100}.0`, counter: 0 },
    };
  }
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
      env: Array.from({ length: ENV_VARS }, (_, k) => ({ name: `VAR_${k}`, value: `value-${i}-${k}-${'x'.repeat(70)}` })),
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

function ourInformer(e: Env, lw: ListerWatcher<KubeObject>, dropManagedFields = false, watchList = false): SharedIndexInformer {
  return new SharedIndexInformer({
    listerWatcher: lw,
    resource: e.res,
    clock: realClock,
    indexers: { [OWNER_UID_INDEX]: ownerUidIndexFunc, [labelIndexName('app')]: labelIndexFunc('app') },
    // The LIST path by default (client-node and client-go v0.34 list); "ours-watchlist" streams (the editor's default).
    watchList,
    ...(dropManagedFields ? { transform: stripManagedFields } : {}),
  });
}

async function oursSync(e: Env, dropManagedFields = false, watchList = false): Promise<{ ms: number; informer: SharedIndexInformer }> {
  const t0 = performance.now();
  const real = new KubeListerWatcher({ transport: e.transport, resource: e.res, namespace: e.ns });
  const lw: ListerWatcher<KubeObject> = process.env.BENCH_PROFILE
    ? {
        list: async (o, s, onItem) => {
          const a = performance.now();
          const r = await real.list(o, s, onItem);
          log(`  list ${JSON.stringify(o)} → ${r.items.length} items in ${(performance.now() - a).toFixed(0)} ms (at +${(performance.now() - t0).toFixed(0)} ms)`);
          return r;
        },
        watch: (o, s) => real.watch(o, s),
      }
    : real;
  const inf = ourInformer(e, lw, dropManagedFields, watchList);
  let adds = 0;
  inf.addEventHandler({ onAdd: () => void adds++ });
  const synced = new Promise<void>((resolve) => {
    const d = inf.onDidChangeState(() => {
      const st = (inf as unknown as { state?: { phase: string; lastError?: string } }).state;
      if (st?.phase === 'backoff') log(`  informer backing off: ${st.lastError}`);
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


/**
 * Transport only: the same paged LIST as the floor, every page's body read and its bytes counted, nothing
 * decoded or parsed except the continue token (looked for in the head and tail bytes of the page, where list
 * metadata sits). What any client has to wait for: the server's answers, one page after the other.
 */
async function transportSync(e: Env): Promise<{ ms: number; bytes: number }> {
  const t0 = performance.now();
  let bytes = 0;
  let cont: string | undefined;
  let rv: string | undefined = '0';
  const tokenIn = (b: Buffer) => /"continue":"([^"\\]*)"/.exec(b.toString('latin1'))?.[1] || undefined;
  do {
    const res = await e.transport.send({ method: 'GET', path: e.path, query: { resourceVersion: rv, limit: 500, continue: cont } });
    if (res.status !== 200) throw new Error(`transport-only LIST: HTTP ${res.status}`);
    let head: Buffer | undefined;
    let tail = Buffer.alloc(0);
    for await (const chunk of res.body!) {
      bytes += chunk.byteLength;
      const b = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      head ??= b.subarray(0, 4096);
      tail = tail.length + b.length > 8192 ? Buffer.concat([tail, b]).subarray(-4096) : Buffer.concat([tail, b]);
    }
    cont = (head && tokenIn(head)) ?? tokenIn(tail);
    rv = undefined;
  } while (cont);
  return { ms: performance.now() - t0, bytes };
}

/**
 * Transport only, over WatchList: a watch with sendInitialEvents=true from RV "" (a consistent read, as the reflector's
 * first WatchList), its bytes read and counted until the bookmark that ends the initial events (found by its annotation
 * in the bytes, nothing parsed).
 */
async function transportWatchListSync(e: Env): Promise<{ ms: number; bytes: number }> {
  const t0 = performance.now();
  const ac = new AbortController();
  const res = await e.transport.send({
    method: 'GET',
    path: e.path,
    query: { watch: 1, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true, timeoutSeconds: 600 },
    signal: ac.signal,
  });
  if (res.status !== 200) throw new Error(`transport-only WatchList: HTTP ${res.status}`);
  const marker = Buffer.from('"k8s.io/initial-events-end":"true"');
  let bytes = 0;
  let tail = Buffer.alloc(0);
  const reader = res.body!.getReader();
  for (;;) {
    const r = await reader.read();
    if (r.done) throw new Error('transport-only WatchList: the stream ended before the initial-events-end bookmark');
    bytes += r.value.byteLength;
    const b = Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
    const look = tail.length ? Buffer.concat([tail, b]) : b;
    if (look.indexOf(marker) >= 0) break;
    tail = Buffer.from(look.subarray(Math.max(0, look.length - marker.length)));
  }
  const ms = performance.now() - t0;
  ac.abort();
  await reader.cancel().catch(() => {});
  return { ms, bytes };
}

type ChildConsumer = 'floor' | 'transport' | 'transport-watchlist' | 'ours' | 'ours-watchlist' | 'ours-drop-managed-fields' | 'client-node';
type MemoryConsumer = Exclude<ChildConsumer, 'transport' | 'transport-watchlist'>;
interface ChildResult {
  ms: number;
  /** Heap growth per cached object after a full GC (NaN for the transport-only consumer, which keeps nothing). */
  heap: number;
  /**
   * Ours only: the heap freed when the informer is dropped, per object (what the cache itself holds, without the
   * code compiled and the one-time allocations of the first sync that `heap` also counts).
   */
  retained?: number;
  /** CPU time (user + system) of the contender's process during its sync, ms. */
  cpu?: number;
  /** CPU time of kube-apiserver while the contender's process ran, ms (when the control plane runs on this machine). */
  apiCpu?: number;
}

/** kube-apiserver's pid, when it runs on this machine (set by main). */
let apiServer: number | undefined;

/** `run()` with kube-apiserver's CPU time during it added to its result. */
function withApiCpu(run: () => ChildResult): ChildResult {
  const before = apiServer !== undefined ? cpuSeconds(apiServer) : NaN;
  const r = run();
  return apiServer !== undefined ? { ...r, apiCpu: (cpuSeconds(apiServer) - before) * 1000 } : r;
}

/** Runs this file as `--memory <consumer>` in a fresh Node: its initial sync time and heap bytes per object. */
function runChild(consumer: ChildConsumer, kubeconfigPath: string, ns: string, objects = N): ChildResult {
  return withApiCpu(() => runChildOnce(consumer, kubeconfigPath, ns, objects));
}

let profiles = 0;

function runChildOnce(consumer: ChildConsumer, kubeconfigPath: string, ns: string, objects: number): ChildResult {
  const prof = process.env.BENCH_CPU_PROF && consumer.startsWith('ours') ? `${process.env.BENCH_CPU_PROF}/${consumer}-${++profiles}.cpuprofile` : '';
  const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--memory', consumer], {
    env: { ...process.env, BENCH_KUBECONFIG: kubeconfigPath, BENCH_NS: ns, BENCH_PAUSE_MS: '200', BENCH_OBJECTS: String(objects), BENCH_CHILD_PROFILE: prof },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    stdio: ['ignore', 'pipe', process.env.BENCH_PROFILE ? 'inherit' : 'pipe'],
  });
  const m = /HEAP_PER_OBJECT (\S+)/.exec(r.stdout ?? '');
  const t = /SYNC_MS (\S+)/.exec(r.stdout ?? '');
  if (r.status !== 0 || !m || !t) throw new Error(`child ${consumer} failed (${r.status}): ${r.stderr}`);
  const kept = /HEAP_RETAINED_PER_OBJECT (\S+)/.exec(r.stdout ?? '');
  const cpu = /SYNC_CPU_MS (\S+)/.exec(r.stdout ?? '');
  return { ms: Number(t[1]), heap: Number(m[1]), ...(kept ? { retained: Number(kept[1]) } : {}), ...(cpu ? { cpu: Number(cpu[1]) } : {}) };
}

/** The heap bytes per object of `consumer`, measured in a fresh process. */
function measureInChild(consumer: MemoryConsumer, kubeconfigPath: string, ns: string): number {
  return runChild(consumer, kubeconfigPath, ns).heap;
}

/** Child mode: sync one consumer on a clean heap; print its sync time and heap growth per cached object. */
async function memoryChild(consumer: ChildConsumer): Promise<void> {
  // The informer's retry timers are unref'd (src/core/clock.ts): while it backs off after a failed LIST nothing else
  // keeps this process alive, and it would exit without a result. This interval keeps it waiting.
  const keepAlive = setInterval(() => {}, 1000);
  void keepAlive;
  const kc = loadKubeConfig({ path: process.env.BENCH_KUBECONFIG! });
  const transport = new KubeTransport(kc);
  const ns = process.env.BENCH_NS!;
  const res: ResourceInfo = { group, version: 'v1', resource: plural, kind: 'BenchWidget', namespaced: true };
  const e: Env = { transport, kc, res, ns, path: resourcePath(res, ns) };
  // Warm up the HTTP/TLS machinery so that its one-time allocations are not counted.
  await (await transport.send({ method: 'GET', path: e.path, query: { limit: 1 } })).text();
  const base = await fullGc();
  if (process.env.BENCH_HEAP_SNAPSHOT) {
    const { writeHeapSnapshot } = await import('node:v8');
    log(`heap snapshot before the sync: ${writeHeapSnapshot(`${process.env.BENCH_HEAP_SNAPSHOT}.base`)}`);
    await fullGc();
  }
  let perObject: number;
  let ms: number;
  const profile = process.env.BENCH_CHILD_PROFILE ? await startProfile() : undefined;
  const cpu0 = process.cpuUsage();
  let cpuMs = NaN;
  /** The CPU time since cpu0 (taken once the sync is done, before any heap measurement). */
  const syncCpu = async () => {
    const c = process.cpuUsage(cpu0);
    cpuMs = (c.user + c.system) / 1000;
    if (profile) await profile.stop(process.env.BENCH_CHILD_PROFILE!);
  };
  if (consumer === 'transport' || consumer === 'transport-watchlist') {
    const t = consumer === 'transport' ? await transportSync(e) : await transportWatchListSync(e);
    await syncCpu();
    ms = t.ms;
    perObject = NaN;
  } else if (consumer === 'floor') {
    const f = await floorSync(e);
    await syncCpu();
    ms = f.ms;
    perObject = ((await fullGc()) - base) / f.items.length;
  } else if (consumer === 'client-node') {
    const c = await clientNodeSync(e);
    await syncCpu();
    ms = c.ms;
    perObject = ((await fullGc()) - base) / c.informer.list().length;
    await c.informer.stop();
  } else {
    const o = await oursSync(e, consumer === 'ours-drop-managed-fields', consumer === 'ours-watchlist');
    await syncCpu();
    ms = o.ms;
    perObject = ((await fullGc()) - base) / o.informer.getIndexer().listKeys().length;
    if (process.env.BENCH_HEAP_SNAPSHOT) {
      const { writeHeapSnapshot } = await import('node:v8');
      log(`heap snapshot: ${writeHeapSnapshot(process.env.BENCH_HEAP_SNAPSHOT)}`);
    }
    const withCache = await fullGc();
    const n = o.informer.getIndexer().listKeys().length;
    o.informer.dispose();
    await o.informer.whenStopped();
    (o as { informer?: unknown }).informer = undefined;
    const without = await fullGc();
    console.log(`HEAP_RETAINED_PER_OBJECT ${(withCache - without) / n}`);
    if (process.env.BENCH_HEAP_SNAPSHOT) {
      const { writeHeapSnapshot } = await import('node:v8');
      log(`heap snapshot after the informer is dropped: ${writeHeapSnapshot(`${process.env.BENCH_HEAP_SNAPSHOT}.after`)}`);
    }
  }
  console.log(`SYNC_MS ${ms}`);
  console.log(`SYNC_CPU_MS ${cpuMs}`);
  console.log(`HEAP_PER_OBJECT ${perObject}`);
  process.exit(0);
}

/** Starts a V8 CPU profile of this process; `stop` writes it to a file. */
async function startProfile(): Promise<{ stop(file: string): Promise<void> }> {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await session.post('Profiler.stop');
      const { writeFileSync } = await import('node:fs');
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

// ---------- client-go (Go, bench/clientgo) ----------

/** One initial sync of client-go's dynamic shared informer (same indexers, same transform) in a fresh process. */
function runClientGo(bin: string, kubeconfigPath: string, ns: string, objects = N, dropManagedFields = false): ChildResult {
  const args = ['informer', '--kubeconfig', kubeconfigPath, '--namespace', ns, '--group', group, '--version', 'v1', '--resource', plural, '--expect', String(objects)];
  if (dropManagedFields) args.push('--drop-managed-fields');
  // client-go 0.34 lists (WatchListClient is off by default there); said explicitly so the column stays a LIST.
  return withApiCpu(() => {
    const res = runClientGoJson<{ syncMs: number; heapPerObject: number }>(bin, args, { KUBE_FEATURE_WatchListClient: 'false' });
    return { ms: res.syncMs, heap: res.heapPerObject };
  });
}

// ---------- main ----------

/** Set when the benchmark can write into the control plane's etcd (its own control plane, or BENCH_ETCD). */
let seeder: EtcdSeeder | undefined;

/**
 * Creates objects from..to-1. Through the API, CREATE_IN_FLIGHT at a time; with etcd access (a control plane of our
 * own), the first object through the API and the others written into etcd in the form kube-apiserver stored that
 * one (bench/etcdSeed.ts): minutes become seconds for 100,000 objects, and every read still goes through the server.
 */
async function createObjects(e: Env, from: number, to: number, ownerUids: string[]): Promise<KubeObject | undefined> {
  if (seeder && to - from > 1) {
    const first = await createObjects(e, from, from + 1, ownerUids);
    const name = (i: number) => benchObject(i, ownerUids).metadata.name!;
    const etcdKey = (i: number) => `/registry/${group}/${plural}/${e.ns}/${name(i)}`;
    const stored = await seeder.get(etcdKey(from));
    if (stored?.startsWith('{')) {
      const template = JSON.parse(stored) as KubeObject;
      log(`writing objects ${from + 1}–${to - 1} into etcd in the form kube-apiserver stored ${name(from)}…`);
      const tc = performance.now();
      function* entries(): Generator<[string, string]> {
        for (let i = from + 1; i < to; i++) {
          const b = benchObject(i, ownerUids);
          const obj = { ...template, metadata: { ...template.metadata, ...b.metadata, uid: randomUUID() }, spec: b.spec };
          yield [etcdKey(i), JSON.stringify(obj)];
        }
      }
      await seeder.putAll(entries());
      log(`etcd writes took ${((performance.now() - tc) / 1000).toFixed(1)} s; waiting for kube-apiserver to see them…`);
      // kube-apiserver sees them through its watch of etcd: wait until a quorum LIST (from etcd) counts them all, then
      // until its watch cache has caught up with that list's resourceVersion (a one-item LIST served from the cache
      // once it is NotOlderThan it; a full list of 100,000 objects would be too big a probe).
      let rv = '';
      for (;;) {
        const page = await e.transport.json<KubeList>({ method: 'GET', path: e.path, query: { limit: 1 } });
        rv = page.metadata.resourceVersion ?? '';
        if (page.items.length + Number(page.metadata.remainingItemCount ?? 0) >= to) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      for (;;) {
        const res = await e.transport.send({ method: 'GET', path: e.path, query: { limit: 1, resourceVersion: rv, resourceVersionMatch: 'NotOlderThan' } });
        await res.text().catch(() => '');
        if (res.status === 200) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      const sec = (performance.now() - tc) / 1000;
      log(`wrote ${to - from - 1} in ${sec.toFixed(1)} s (${Math.round((to - from - 1) / sec)}/s)`);
      return first;
    }
    log(`etcd holds no JSON at ${etcdKey(from)}: creating the rest through the API`);
    return (await createObjects(e, from + 1, to, ownerUids)) ?? first;
  }
  if (from >= to) return undefined;
  log(`creating objects ${from}–${to - 1}, ${CREATE_IN_FLIGHT} in flight…`);
  const tc = performance.now();
  let sample: KubeObject | undefined;
  await pool(Array.from({ length: to - from }, (_, i) => from + i), CREATE_IN_FLIGHT, async (i) => {
    const res = await e.transport.send({ method: 'POST', path: e.path, body: benchObject(i, ownerUids), query: { fieldManager: 'bench' } });
    const text = await res.text();
    if (res.status === 409) return; // already there (a reused namespace)
    if (res.status !== 201) throw new Error(`creating object ${i}: HTTP ${res.status}: ${text.slice(0, 300)}`);
    sample ??= JSON.parse(text) as KubeObject;
  });
  const s = (performance.now() - tc) / 1000;
  log(`created ${to - from} in ${s.toFixed(1)} s (${Math.round((to - from) / s)}/s)`);
  return sample;
}

const fmt = (x: number, d = 0) => (Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : 'n/a');
const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}×` : 'n/a');

function printTable(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

/** Sizes of an object as JSON, with and without managedFields. */
function jsonSizes(sample: KubeObject): { withMf: number; withoutMf: number } {
  const { managedFields: _mf, ...metaNoMf } = sample.metadata;
  return { withMf: Buffer.byteLength(JSON.stringify(sample)), withoutMf: Buffer.byteLength(JSON.stringify({ ...sample, metadata: metaNoMf })) };
}

/**
 * BENCH_SCALE=10000,30000,100000: one namespace grows to each size in turn (objects created concurrently, nothing
 * kept between runs: a private control plane); at each size, BENCH_ROUNDS (default 3) interleaved rounds of our
 * informer, client-go and the transport-only consumer, each in a fresh process.
 */
async function scale(e: Env, kubeconfigPath: string, steps: number[], clientGo: string | undefined): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const max = Math.max(...steps);
  const ownerUids = Array.from({ length: Math.max(1, Math.ceil(max / 10)) }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
  let sample: KubeObject | undefined;
  const rows: string[][] = [];
  const perStep: Array<{ n: number; ours: number; heap: number }> = [];
  for (const n of [...steps].sort((a, b) => a - b)) {
    sample = (await ensureObjects(e, n, ownerUids)) ?? sample;
    const ours: ChildResult[] = [], tr: ChildResult[] = [], cg: ChildResult[] = [];
    for (let r = 0; r < rounds; r++) {
      log(`scale ${n}: round ${r + 1}/${rounds}`);
      // Each result is logged as it comes (a long run that is stopped early still says what it measured).
      const note = (who: string, x: ChildResult) => log(`  ${who}: ${fmt(x.ms)} ms, heap ${fmt(x.heap)} B/object${x.retained !== undefined ? `, retained ${fmt(x.retained)} B/object` : ''}`);
      const steps: Array<() => void> = [
        () => note('ours', ours[ours.push(runChild('ours', kubeconfigPath, e.ns, n)) - 1]!),
        () => note('transport', tr[tr.push(runChild('transport', kubeconfigPath, e.ns, n)) - 1]!),
        () => void (clientGo && note('client-go', cg[cg.push(runClientGo(clientGo, kubeconfigPath, e.ns, n)) - 1]!)),
      ];
      const pick = process.env.BENCH_CONTENDERS?.split(',');
      const names = ['ours', 'transport', 'client-go'];
      for (let k = 0; k < steps.length; k++) if (!pick || pick.includes(names[(r + k) % steps.length]!)) steps[(r + k) % steps.length]!();
    }
    const mo = median(ours.map((x) => x.ms)), mh = median(ours.map((x) => x.heap)), mt = median(tr.map((x) => x.ms));
    const mr = median(ours.map((x) => x.retained ?? NaN));
    const cgMs = cg.length ? median(cg.map((x) => x.ms)) : NaN, cgHeap = cg.length ? median(cg.map((x) => x.heap)) : NaN;
    perStep.push({ n, ours: mo, heap: mh });
    const first = perStep[0]!;
    rows.push([
      fmt(n), fmt(mo), fmt(mt), fmt(cgMs), ratio(mo, mt), ratio(mo, cgMs), fmt((mo / n) * 1000, 1), `${((mo / n) / (first.ours / first.n)).toFixed(2)}`,
      fmt(mh), fmt(mr), fmt(cgHeap), ratio(mh, jsonSizes(sample!).withMf), ratio(mr, jsonSizes(sample!).withMf), ratio(cgHeap, jsonSizes(sample!).withMf), ratio(mh, cgHeap),
    ]);
    log(`scale ${n}: ours ${fmt(mo)} ms, transport ${fmt(mt)} ms, client-go ${fmt(cgMs)} ms, heap ${fmt(mh)} B/object`);
  }
  const { withMf, withoutMf } = jsonSizes(sample!);
  console.log(`\nScale: objects of ${fmt(withMf)} B JSON (${fmt(withoutMf)} B without managedFields), median of ${rounds} rounds, fresh process each, Node ${process.version}`);
  printTable(
    ['objects', 'ours sync (ms)', 'transport-only (ms)', 'client-go (ms)', 'ours ÷ transport', 'ours ÷ client-go', 'ours µs/object', 'µs/object vs first', 'ours heap B/object', 'ours retained B/object', 'client-go heap B/object', 'ours heap ÷ JSON', 'ours retained ÷ JSON', 'client-go heap ÷ JSON', 'ours heap ÷ client-go'],
    rows,
  );
}

/**
 * BENCH_NAMESPACE: a namespace kept between runs (with RECONCILE_LAB_KUBECONFIG), so that objects are created once
 * and reused; it must hold objects of this run's size (BENCH_ENV_VARS) only.
 */
const reuseNs = process.env.BENCH_NAMESPACE;

async function ensureNamespace(t: KubeTransport, name: string): Promise<string> {
  const res = await t.send({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  await res.text();
  if (res.status !== 201 && res.status !== 409) throw new Error(`namespace ${name}: HTTP ${res.status}`);
  return name;
}

/** How many objects the namespace holds already (bw-00000… made by an earlier run), and one of them. */
async function existing(e: Env): Promise<{ count: number; sample?: KubeObject }> {
  const page = await e.transport.json<KubeList>({ method: 'GET', path: e.path, query: { limit: 1 } });
  return { count: page.items.length + Number(page.metadata.remainingItemCount ?? 0), sample: page.items[0] };
}

/** Creates objects up to `to` (those from an earlier run in a reused namespace are kept) and returns one of them. */
async function ensureObjects(e: Env, to: number, ownerUids: string[]): Promise<KubeObject | undefined> {
  const have = await existing(e);
  if (have.count > to) throw new Error(`namespace ${e.ns} holds ${have.count} objects, more than the ${to} asked for`);
  if (have.count) log(`reusing ${have.count} objects in namespace ${e.ns}`);
  return (await createObjects(e, have.count, to, ownerUids)) ?? have.sample;
}

async function main(): Promise<void> {
  let cp: LocalControlPlane | undefined;
  let kubeconfigPath = process.env.RECONCILE_LAB_KUBECONFIG;
  const clientGo = buildClientGo(log);
  if (!kubeconfigPath) {
    log('starting a private control plane (etcd + kube-apiserver)…');
    cp = await startLocalControlPlane({ controllerManager: false, log: (l) => log(l) });
    kubeconfigPath = cp.kubeconfigPath;
  }
  if (!process.env.BENCH_NO_ETCD_SEED) {
    if (cp) seeder = new EtcdSeeder({ url: cp.etcdUrl, ...cp.etcdClientTls });
    else if (process.env.BENCH_ETCD) seeder = new EtcdSeeder(JSON.parse(readFileSync(process.env.BENCH_ETCD, 'utf8')) as EtcdAccess);
  }
  const kc = loadKubeConfig({ path: kubeconfigPath });
  const transport = new KubeTransport(kc);
  const server = new URL(kc.getCurrentCluster()!.server);
  if (['127.0.0.1', 'localhost', '[::1]'].includes(server.hostname)) apiServer = findApiServerPid(Number(server.port));
  let ns = '';
  try {
    await installCrd(transport, testCrd({ group, kind: 'BenchWidget', plural }));
    ns = reuseNs ? await ensureNamespace(transport, reuseNs) : await createNamespace(transport, 'bench');
    const res: ResourceInfo = { group, version: 'v1', resource: plural, kind: 'BenchWidget', namespaced: true };
    const e: Env = { transport, kc, res, ns, path: resourcePath(res, ns) };

    if (process.env.BENCH_SCALE) {
      await scale(e, kubeconfigPath, process.env.BENCH_SCALE.split(',').map(Number), clientGo);
      return;
    }

    const ownerUids = Array.from({ length: Math.max(1, Math.ceil(N / 10)) }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const sample = await ensureObjects(e, N, ownerUids);
    const { withMf, withoutMf } = jsonSizes(sample!);

    // ---- initial sync and heap per object: every contender in a fresh process, interleaved rounds ----
    // (in one process, what the previous consumer left behind, e.g. client-node's watch keeps its cache
    // reachable for up to 30 s after stop(), distorts the next heap delta, and warm-up favours whoever runs last)
    const only = process.env.BENCH_CONTENDERS?.split(',');
    const contenders = SYNC_CONTENDERS.filter((c) => (!only || only.includes(c)) && (c !== 'client-go' || clientGo));
    const sync = new Map<SyncContender, ChildResult[]>(contenders.map((c) => [c, []]));
    const oursDrop: ChildResult[] = [];
    const cgDrop: ChildResult[] = [];
    const runOne = (c: SyncContender): ChildResult => (c === 'client-go' ? runClientGo(clientGo!, kubeconfigPath!, ns) : runChild(c, kubeconfigPath!, ns));
    for (let r = 0; r < ROUNDS; r++) {
      log(`initial sync round ${r + 1}/${ROUNDS} (${contenders.join(', ')}, starting with ${contenders[r % contenders.length]})`);
      // Contenders take turns going first, so that drift on this shared machine hits all alike.
      for (let k = 0; k < contenders.length; k++) {
        const c = contenders[(r + k) % contenders.length]!;
        sync.get(c)!.push(runOne(c));
      }
      // The opt-in transform, for heap per object (3 rounds are enough: memory barely moves between runs).
      if (r < 3) {
        oursDrop.push(runChild('ours-drop-managed-fields', kubeconfigPath!, ns));
        if (clientGo) cgDrop.push(runClientGo(clientGo, kubeconfigPath!, ns, N, true));
      }
    }
    const med = (c: SyncContender, f: (x: ChildResult) => number) => (sync.get(c)?.length ? median(sync.get(c)!.map(f)) : NaN);

    if (process.env.BENCH_SKIP_WATCH) {
      reportSync();
      return;
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
    reportSync();

    const wOurs = median(watch.ours), wCn = median(watch.cn), wFloor = median(watch.floor);
    const eps = (ms: number) => (U / ms) * 1000;
    console.log(`\nWatch: ${fmt(U)} updates replayed from the watch cache, median of ${ROUNDS} (in one process)`);
    printTable(
      ['', 'ours (2 indexers)', 'client-node makeInformer', 'floor (WATCH + JSON.parse)', 'ours ÷ client-node', 'ours ÷ floor'],
      [
        [`events/s (higher is better)`, fmt(eps(wOurs)), fmt(eps(wCn)), fmt(eps(wFloor)), ratio(eps(wOurs), eps(wCn)), ratio(eps(wOurs), eps(wFloor))],
        [`time (ms, lower is better)`, fmt(wOurs), fmt(wCn), fmt(wFloor), ratio(wOurs, wCn), ratio(wOurs, wFloor)],
      ],
    );

    function reportSync(): void {
      const ms = (c: SyncContender) => med(c, (x) => x.ms);
      const heap = (c: SyncContender) => med(c, (x) => x.heap);
      const ours = ms('ours');
      console.log(
        `\nInitial sync: ${fmt(N)} objects of ${fmt(withMf)} B JSON (${fmt(withoutMf)} B without managedFields), median of ${ROUNDS} interleaved rounds, each contender in a fresh process, Node ${process.version}`,
      );
      const cols: Array<[SyncContender, string]> = [
        ['ours', 'ours (2 indexers)'],
        ['client-go', 'client-go dynamic informer'],
        ['client-node', 'client-node makeInformer'],
        ['floor', 'floor (LIST + JSON.parse)'],
        ['transport', 'transport only (bytes)'],
        ['ours-watchlist', 'ours, WatchList'],
        ['transport-watchlist', 'transport only, WatchList'],
      ];
      const present = cols.filter(([c]) => sync.has(c));
      const others = present.filter(([c]) => c !== 'ours' && c !== 'ours-watchlist' && c !== 'transport-watchlist');
      const cpu = (c: SyncContender) => med(c, (x) => x.cpu ?? NaN);
      const apiCpu = (c: SyncContender) => med(c, (x) => x.apiCpu ?? NaN);
      printTable(
        ['', ...present.map(([, h]) => h), ...others.map(([c]) => `ours ÷ ${c}`)],
        [
          ['initial sync (ms, lower is better)', ...present.map(([c]) => fmt(ms(c))), ...others.map(([c]) => ratio(ours, ms(c)))],
          ['its process CPU during the sync (ms)', ...present.map(([c]) => fmt(cpu(c))), ...others.map(([c]) => ratio(cpu('ours'), cpu(c)))],
          ['kube-apiserver CPU meanwhile (ms)', ...present.map(([c]) => fmt(apiCpu(c))), ...others.map(([c]) => ratio(apiCpu('ours'), apiCpu(c)))],
        ],
      );
      if (sync.has('ours-watchlist') && sync.has('transport-watchlist')) {
        console.log(`WatchList: ours ÷ transport only over WatchList ${ratio(ms('ours-watchlist'), ms('transport-watchlist'))}; ours over WatchList ÷ ours over LIST ${ratio(ms('ours-watchlist'), ours)}; transport only over WatchList ÷ over LIST ${ratio(ms('transport-watchlist'), ms('transport'))}`);
      }
      const dropHeap = oursDrop.length ? median(oursDrop.map((x) => x.heap)) : NaN;
      const cgDropHeap = cgDrop.length ? median(cgDrop.map((x) => x.heap)) : NaN;
      console.log(`\nHeap bytes per cached object (after a full GC, fresh process each; JSON size ${fmt(withMf)} B as received, ${fmt(withoutMf)} B without managedFields)`);
      printTable(
        ['', 'ours', 'client-go', 'client-node', 'floor (parsed items)', 'ours ÷ JSON size', 'ours ÷ client-go', 'ours ÷ client-node', 'ours ÷ floor'],
        [
          ['default: as received', fmt(heap('ours')), fmt(heap('client-go')), fmt(heap('client-node')), fmt(heap('floor')), ratio(heap('ours'), withMf), ratio(heap('ours'), heap('client-go')), ratio(heap('ours'), heap('client-node')), ratio(heap('ours'), heap('floor'))],
          ['dropManagedFields', fmt(dropHeap), fmt(cgDropHeap), '', '', ratio(dropHeap, withoutMf), ratio(dropHeap, cgDropHeap), '', ''],
          ['ours, retained by the cache alone', fmt(med('ours', (x) => x.retained ?? NaN)), '', '', '', ratio(med('ours', (x) => x.retained ?? NaN), withMf), '', '', ''],
        ],
      );
      console.log("Retained by the cache alone: the heap freed when our informer is dropped (heap counts the first sync's code and one-time allocations too).");
      console.log('Ratios are ours ÷ other: below 1.00× is better for ms and bytes, above 1.00× for events/s. Floor memory = the parsed LIST items alone (no cache, no index).');
    }
  } finally {
    seeder?.dispose();
    if (cp) await cp.stop();
    else if (ns && !reuseNs) await transport.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  }
}

if (process.argv[2] === '--memory') await memoryChild(process.argv[3] as ChildConsumer);
else await main();
