/**
 * `npm run bench:queue`: throughput of add → get → done cycles through the
 * work queue with 10,000 distinct keys and 4 async workers, against a minimal
 * baseline queue (a Map + array FIFO with none of the guarantees: no
 * processing set, no re-add-while-processing rule, no drain) in the same run.
 *
 * Each round: 4 workers block in `get`; a producer adds the 10,000 keys in
 * batches of 100 (yielding between batches, so workers interleave); each
 * worker awaits once per item (an async reconcile that does nothing) and
 * calls `done`; once every key was processed the queue shuts down and the
 * workers exit (controller-runtime's priority queue does not drain on shutdown).
 * One cycle = one add + get + done of a distinct key.
 *
 * Both controller queues are measured: client-go's rate-limited queue and
 * controller-runtime's priority queue (plain adds, and adds where one key in
 * ten has priority 10 and the rest the initial list's -100, so the heap orders).
 *
 * client-go's own workqueue (Go, bench/clientgo, client-go at the control plane's Kubernetes version) runs the
 * same loop with goroutine workers: one Go process per trial, interleaved with ours, and the ratios ours ÷
 * client-go are printed next to each side's ratio to its own bare FIFO baseline. BENCH_NO_CLIENT_GO=1 leaves
 * it out.
 */
import { performance } from 'node:perf_hooks';
import { realClock } from '../src/core/clock.ts';
import { createWorkQueue } from '../src/core/workqueue/queue.ts';
import { createControllerQueue } from '../src/core/workqueue/controllerQueue.ts';
import { LOW_PRIORITY, type PriorityAddQueue } from '../src/core/workqueue/priorityQueue.ts';
import { buildClientGo, runClientGoJson } from './clientgo.ts';

const KEYS = 10_000;
const WORKERS = 4;
const BATCH = 100;
const ROUNDS = 10;
const TRIALS = 7;

type GetResult = { item: string; shutdown: false } | { shutdown: true };

interface BenchQueue {
  add(k: string): void;
  get(): Promise<GetResult>;
  done(k: string): void;
  shutDown(): void;
}

/** The baseline: dedupe through a Map, FIFO in an array; no processing set, no guarantees. */
class BaselineQueue implements BenchQueue {
  private readonly pending = new Map<string, true>();
  private items: string[] = [];
  private head = 0;
  private waiters: Array<(r: GetResult) => void> = [];
  private closed = false;

  add(k: string): void {
    if (this.closed || this.pending.has(k)) return;
    const w = this.waiters.shift();
    if (w) {
      w({ item: k, shutdown: false });
      return;
    }
    this.pending.set(k, true);
    this.items.push(k);
  }

  get(): Promise<GetResult> {
    if (this.head < this.items.length) {
      const item = this.items[this.head++]!;
      this.pending.delete(item);
      if (this.head > 4096 && this.head * 2 > this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      return Promise.resolve({ item, shutdown: false });
    }
    if (this.closed) return Promise.resolve({ shutdown: true });
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(): void {}

  shutDown(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w({ shutdown: true });
  }
}

const keys = Array.from({ length: KEYS }, (_, i) => `namespace-${i % 50}/object-${i}`);

async function round(q: BenchQueue): Promise<number> {
  let processed = 0;
  let allDone!: () => void;
  const finished = new Promise<void>((r) => (allDone = r));
  const worker = async () => {
    for (;;) {
      const r = await q.get();
      if (r.shutdown) return;
      await null; // the (empty) async reconcile
      processed++;
      q.done(r.item);
      if (processed === keys.length) allDone();
    }
  };
  const workers = Array.from({ length: WORKERS }, worker);
  for (let i = 0; i < keys.length; i += BATCH) {
    for (let j = i; j < i + BATCH && j < keys.length; j++) q.add(keys[j]!);
    await null;
  }
  await finished;
  q.shutDown();
  await Promise.all(workers);
  return processed;
}

async function trial(make: () => BenchQueue): Promise<{ cycles: number; ms: number }> {
  const t0 = performance.now();
  let cycles = 0;
  for (let r = 0; r < ROUNDS; r++) cycles += await round(make());
  return { cycles, ms: performance.now() - t0 };
}

const impls: Array<{ name: string; make: () => BenchQueue }> = [
  { name: 'baseline (Map + array FIFO, no guarantees)', make: () => new BaselineQueue() },
  { name: 'WorkQueue (dirty + processing sets)', make: () => createWorkQueue<string>() },
  {
    name: 'client-go queue (rate-limited, as the controller uses it)',
    make: () => createControllerQueue<string>('client-go', { clock: realClock }),
  },
  {
    name: 'priority queue (controller-runtime default), priority 0',
    make: () => createControllerQueue<string>('priority', { clock: realClock }),
  },
  {
    name: 'priority queue, mixed priorities (10 / -100)',
    make: () => withPriorities(createControllerQueue<string>('priority', { clock: realClock })),
  },
];

/** Adds one key in ten at priority 10 and the rest at LOW_PRIORITY (an initial list with a few real changes). */
function withPriorities(q: PriorityAddQueue<string>): BenchQueue {
  let i = 0;
  return {
    add: (k) => q.addWithOpts({ priority: i++ % 10 === 0 ? 10 : LOW_PRIORITY }, k),
    get: () => q.get(),
    done: (k) => q.done(k),
    shutDown: () => q.shutDown(),
  };
}

interface GoQueueResult {
  gomaxprocs: number;
  goVersion: string;
  rows: Array<{ name: string; cyclesPerSec: number }>;
}
const goBin = buildClientGo((s) => process.stderr.write(`[bench] ${s}\n`));
const goArgs = ['queue', '--keys', String(KEYS), '--workers', String(WORKERS), '--batch', String(BATCH), '--rounds', String(ROUNDS), '--trials', '1'];
const goSamples = new Map<string, number[]>();
let goInfo: GoQueueResult | undefined;

// Warm up the JIT on every implementation, then interleave trials so drift hits all alike.
for (const impl of impls) await trial(impl.make);
const samples = new Map<string, number[]>(impls.map((i) => [i.name, []]));
for (let t = 0; t < TRIALS; t++) {
  for (const impl of impls) {
    const { cycles, ms } = await trial(impl.make);
    if (cycles !== KEYS * ROUNDS) throw new Error(`${impl.name}: processed ${cycles} of ${KEYS * ROUNDS} keys`);
    samples.get(impl.name)!.push((cycles / ms) * 1000);
  }
  if (goBin) {
    // One fresh Go process per trial (it warms up with one trial of its own first).
    goInfo = runClientGoJson<GoQueueResult>(goBin, goArgs);
    for (const r of goInfo.rows) goSamples.set(r.name, [...(goSamples.get(r.name) ?? []), r.cyclesPerSec]);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const baseline = median(samples.get(impls[0]!.name)!);
const rows = impls.map((i) => {
  const xs = samples.get(i.name)!;
  const m = median(xs);
  return [i.name, Math.round(m).toLocaleString('en-US'), `${Math.round(Math.min(...xs)).toLocaleString('en-US')} – ${Math.round(Math.max(...xs)).toLocaleString('en-US')}`, (m / baseline).toFixed(2)];
});
const header = ['queue', 'cycles/s (median)', 'range', 'ratio vs baseline'];
const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
const line = (cells: string[]) => '| ' + cells.map((x, c) => (c === 0 ? x.padEnd(widths[c]!) : x.padStart(widths[c]!))).join(' | ') + ' |';
console.log(`work queue: add/get/done cycles, ${KEYS.toLocaleString('en-US')} distinct keys, ${WORKERS} async workers, ${ROUNDS} rounds × ${TRIALS} trials (Node ${process.version})`);
console.log(line(header));
console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
for (const r of rows) console.log(line(r));

if (goInfo) {
  const goRows = goInfo.rows.map((r) => r.name);
  const goMedian = (name: string) => median(goSamples.get(name)!);
  const goBaseline = goMedian(goRows[0]!);
  // ours ↔ client-go pairs: the bare baselines, the basic queues, the queues a controller uses by default.
  const pairs: Array<[string, string]> = [
    [impls[0]!.name, goRows[0]!],
    [impls[1]!.name, goRows[1]!],
    [impls[2]!.name, goRows[2]!],
    [impls[3]!.name, goRows[2]!],
  ];
  console.log(`\nclient-go workqueue (Go ${goInfo.goVersion.replace(/^go/, '')}, GOMAXPROCS ${goInfo.gomaxprocs}, ${WORKERS} goroutine workers), the same loop, one process per trial, interleaved with ours:`);
  const goTable = goRows.map((n) => {
    const xs = goSamples.get(n)!;
    return [n, Math.round(goMedian(n)).toLocaleString('en-US'), `${Math.round(Math.min(...xs)).toLocaleString('en-US')} – ${Math.round(Math.max(...xs)).toLocaleString('en-US')}`, (goMedian(n) / goBaseline).toFixed(2)];
  });
  const gw = header.map((h, c) => Math.max(h.length, ...goTable.map((r) => r[c]!.length)));
  const gline = (cells: string[]) => '| ' + cells.map((x, c) => (c === 0 ? x.padEnd(gw[c]!) : x.padStart(gw[c]!))).join(' | ') + ' |';
  console.log(gline(header));
  console.log('|' + gw.map((w) => '-'.repeat(w + 2)).join('|') + '|');
  for (const r of goTable) console.log(gline(r));
  console.log('\nours ÷ client-go (cycles/s; above 1.00 = ours hands out more):');
  for (const [ours, go] of pairs) console.log(`  ${ours}  ÷  ${go}: ${(median(samples.get(ours)!) / goMedian(go)).toFixed(2)}`);
}
