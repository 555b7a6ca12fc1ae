// Offline replay of an initial sync (no server): a captured LIST answer (`BENCH_BODY`, e.g. saved from
// `GET …?resourceVersion=0&limit=500`) is fed in 16 KiB chunks (as TLS delivers them) through the real list path —
// KubeListerWatcher.readList, the streaming ListBodyParser, transform and compaction, staged indexing, the replace,
// every handler add — of a SharedIndexInformer with the bench's two indexers. Prints the CPU and wall time per run
// (the first run in the process, then warm runs) and the heap held by the last informer's cache.
//   node --expose-gc bench/listReplay.ts BODY.json [runs] [variant]
// variant "distinct-times": every item's managedFields `time` is made distinct (same length), so that whole
// managedFields arrays no longer repeat while their fieldsV1 trees still do (as in a cluster whose objects were
// written at different seconds). BENCH_SHARE=0 turns shareRepeatedValues off. BENCH_MODE=parse measures only the
// parse and compaction (ListBodyParser + ObjectCompactor), with and without managedFields reused by their bytes,
// alternated in this process: CPU medians of `runs` each. BENCH_WATCHLIST=1 replays the same items as a WatchList
// stream instead (one ADDED event per item, then the initial-events-end bookmark), through KubeListerWatcher.watch
// and an informer with watchList on; BENCH_MODE=parse then compares the watch event splitter with and without
// managedFields reused by their bytes. BENCH_REUSE=0 turns that reuse off in the informer runs.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Response, type BodyInit } from 'undici';
import { KubeListerWatcher, WatchEventSplitter } from '../src/core/k8s/listerWatcher.ts';
import type { KubeTransport, TransportRequest } from '../src/core/k8s/transport.ts';
import type { KubeObject, ResourceInfo } from '../src/core/k8s/objects.ts';
import { SharedIndexInformer } from '../src/core/cache/sharedIndexInformer.ts';
import { OWNER_UID_INDEX, ownerUidIndexFunc, labelIndexFunc, labelIndexName } from '../src/core/cache/indexFuncs.ts';
import { realClock } from '../src/core/clock.ts';
import { ListBodyParser } from '../src/core/k8s/listStream.ts';
import { ManagedFieldsByBytes } from '../src/core/k8s/managedFieldsBytes.ts';
import { ObjectCompactor } from '../src/core/cache/compact.ts';

const [bodyPath, runsArg, variant] = process.argv.slice(2);
if (!bodyPath) throw new Error('usage: listReplay.ts BODY.json [runs] [distinct-times]');
const runs = Number(runsArg ?? 9);
const CHUNK = 16 << 10;
let body: Uint8Array = readFileSync(bodyPath);
if (variant === 'distinct-times') {
  // "time":"2026-12-02T09:34:10Z" → a distinct second per occurrence (same byte length).
  const text = Buffer.from(body).toString('latin1');
  let n = 0;
  body = Buffer.from(
    text.replace(/"time":"(\d{4}-\d\d-\d\d)T\d\d:\d\d:\d\dZ"/g, (_m, day: string) => {
      const s = n++;
      const hh = String(Math.floor(s / 3600) % 24).padStart(2, '0');
      const mm = String(Math.floor(s / 60) % 60).padStart(2, '0');
      const ss = String(s % 60).padStart(2, '0');
      return `"time":"${day}T${hh}:${mm}:${ss}Z"`;
    }),
    'latin1',
  );
}
const listed = JSON.parse(Buffer.from(body).toString()) as { items: KubeObject[]; metadata: { resourceVersion?: string } };
const count = listed.items.length;
const WATCHLIST = process.env.BENCH_WATCHLIST === '1';
/** The WatchList stream of the same items: ADDED events, then the bookmark that ends the initial events. */
const events: Uint8Array = Buffer.from(
  listed.items.map((o) => `${JSON.stringify({ type: 'ADDED', object: o })}\n`).join('') +
    `${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'BenchWidget', apiVersion: 'informer-bench.reconcile.dev/v1', metadata: { resourceVersion: listed.metadata.resourceVersion ?? '1', annotations: { 'k8s.io/initial-events-end': 'true' } } } })}\n`,
);

/** A transport that answers every LIST with the captured body and every WATCH with a stream that stays open. */
function replayTransport(): KubeTransport {
  const t = {
    isDisposed: false,
    async send(req: TransportRequest): Promise<Response> {
      if (req.query?.watch && req.query.sendInitialEvents) {
        let at = 0;
        const stream = new ReadableStream<Uint8Array>({
          start(c) {
            req.signal?.addEventListener('abort', () => c.error(req.signal!.reason), { once: true });
          },
          pull(c) {
            if (at >= events.length) return new Promise<void>(() => {}); // stays open after the initial events
            c.enqueue(events.slice(at, at + CHUNK));
            at += CHUNK;
          },
        });
        return new Response(stream as unknown as BodyInit, { status: 200 });
      }
      if (req.query?.watch) {
        const stream = new ReadableStream<Uint8Array>({
          start(c) {
            req.signal?.addEventListener('abort', () => c.error(req.signal!.reason), { once: true });
          },
        });
        return new Response(stream as unknown as BodyInit, { status: 200 });
      }
      let at = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          if (at >= body.length) return c.close();
          c.enqueue(body.slice(at, at + CHUNK));
          at += CHUNK;
        },
      });
      return new Response(stream as unknown as BodyInit, { status: 200, headers: { 'content-type': 'application/json' } });
    },
  };
  return t as unknown as KubeTransport;
}

const res: ResourceInfo = { group: 'informer-bench.reconcile.dev', version: 'v1', resource: 'benchwidgets', kind: 'BenchWidget', namespaced: true };

async function once(): Promise<{ cpu: number; ms: number; informer: SharedIndexInformer }> {
  const lw = new KubeListerWatcher({ transport: replayTransport(), resource: res, namespace: 'fv' });
  const inf = new SharedIndexInformer<KubeObject>({
    listerWatcher: lw,
    resource: res,
    clock: realClock,
    indexers: { [OWNER_UID_INDEX]: ownerUidIndexFunc, [labelIndexName('app')]: labelIndexFunc('app') },
    watchList: WATCHLIST,
    shareRepeatedValues: process.env.BENCH_SHARE !== '0',
    // BENCH_REUSE=0: a transform that changes nothing, which turns managedFields reuse by bytes off (sharing stays on).
    ...(process.env.BENCH_REUSE === '0' ? { transform: (o: KubeObject) => o } : {}),
  });
  let adds = 0;
  inf.addEventHandler({ onAdd: () => void adds++ });
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  inf.run();
  while (!inf.hasSynced() || adds < count) await new Promise((r) => setImmediate(r));
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1000, ms, informer: inf };
}

const gc = (globalThis as { gc?: () => void }).gc!;
const cpuMs = (f: () => void): number => {
  const c0 = process.cpuUsage();
  f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

if (process.env.BENCH_MODE === 'parse') {
  const parse = WATCHLIST ? parseWatchList : (reuse: boolean) => {
    const c = new ObjectCompactor();
    const p = new ListBodyParser<KubeObject>({ onItem: (o) => c.compact(o), managedFieldsBytes: reuse ? new ManagedFieldsByBytes(c) : undefined });
    for (let at = 0; at < body.length; at += CHUNK) p.push(body.subarray(at, at + CHUNK));
    return p.end();
  };
  const without: number[] = [];
  const withReuse: number[] = [];
  for (let r = 0; r < runs; r++) {
    gc();
    withReuse.push(cpuMs(() => parse(true)));
    gc();
    without.push(cpuMs(() => parse(false)));
  }
  console.log(`parse + compaction of ${count} items, CPU median (min) of ${runs}: without reuse ${median(without).toFixed(0)} (${Math.min(...without).toFixed(0)}) ms, with ${median(withReuse).toFixed(0)} (${Math.min(...withReuse).toFixed(0)}) ms`);
  process.exit(0);
}
/** The WatchList stream split and parsed, each object compacted (what the informer does before staging it). */
function parseWatchList(reuse: boolean): unknown[] {
  const c = new ObjectCompactor();
  const sp = new WatchEventSplitter<KubeObject>(reuse ? new ManagedFieldsByBytes(c) : undefined);
  const out: unknown[] = [];
  for (let at = 0; at < events.length; at += CHUNK) {
    sp.write(events.subarray(at, at + CHUNK));
    for (let ev = sp.next(); ev !== undefined; ev = sp.next()) out.push(ev.type === 'ADDED' ? c.compact(ev.object) : ev);
  }
  return out;
}

const cpus: number[] = [];
let last: SharedIndexInformer | undefined;
for (let r = 0; r < runs; r++) {
  last?.dispose();
  last = undefined;
  gc();
  const { cpu, ms, informer } = await once();
  last = informer;
  cpus.push(cpu);
  console.log(`run ${r + 1}: ${cpu.toFixed(0)} ms CPU, ${ms.toFixed(0)} ms wall${r === 0 ? ' (first in process)' : ''}`);
}
const warm = cpus.slice(1).sort((a, b) => a - b);
console.log(`${count} items of ${Math.round(body.length / count)} B: first ${cpus[0]!.toFixed(0)} ms CPU, warm median ${warm[Math.floor(warm.length / 2)]?.toFixed(0)} ms CPU`);
last?.dispose();
