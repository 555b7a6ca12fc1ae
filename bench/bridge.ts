/**
 * `npm run bench:bridge`: what the Go bridge costs a controller while the editor is attached and running.
 *
 * Drives the Go benchmarks in bridge/bench_test.go (built once with `go test -c`), one process per measurement,
 * in interleaved rounds: each round runs the stock side and the bridge side of every pair back to back, the order
 * alternating between rounds, so load that drifts over the run hits both sides alike. Medians over the rounds.
 *
 * - queue: distinct keys through Add → Get → Forget → Done per second, controller-runtime's stock queue vs the
 *   bridge's queue around the same inner queue, for the priority queue and client-go's rate-limited queue, with 1
 *   and 4 workers, and for a controller with a custom request type (the priority queue of that type, 1 worker).
 *   Target: the bridge at ≥ 0.8× the stock rate. Each measurement first runs 50,000 untimed cycles on either side
 *   (bridge/bench_test.go benchWarmup): the steady rate is reported, not the first tens of milliseconds after the
 *   editor attaches.
 * - reconcile: one reconcile (a Get and an Update of a ConfigMap on an in-memory client) bare vs wrapped by
 *   bridge.Wrap with the bridge client journaling the write: the latency added per reconcile.
 *
 * Env: BENCH_ROUNDS (default 5), BENCH_QUEUE_OPS (per measurement, default 100000), BENCH_RECONCILES (default
 * 50000). Needs Go (the version bridge/go.mod asks for).
 */
import { spawnSync } from 'node:child_process';
import { cpus, loadavg, tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const BRIDGE = join(ROOT, 'bridge');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const QUEUE_OPS = Number(process.env.BENCH_QUEUE_OPS ?? 100_000);
const RECONCILES = Number(process.env.BENCH_RECONCILES ?? 50_000);

interface Pair {
  label: string;
  base: string; // -test.bench pattern of the stock / bare side
  bridge: string;
  n: number;
}

const pairs: Pair[] = [];
for (const [queue, label] of [['priority', 'priority queue'], ['client-go', 'client-go queue']] as const) {
  for (const workers of [1, 4]) {
    const p = (side: string) => `^BenchmarkQueue$/^${queue}$/^${side}$/^workers=${workers}$`;
    pairs.push({ label: `${label}, ${workers} worker${workers > 1 ? 's' : ''}`, base: p('stock'), bridge: p('bridge'), n: QUEUE_OPS });
  }
}
pairs.push({ label: 'priority queue, custom request type, 1 worker', base: '^BenchmarkTypedQueue$/^stock$', bridge: '^BenchmarkTypedQueue$/^bridge$', n: QUEUE_OPS });
const reconcilePair: Pair = { label: 'reconcile (Get + Update)', base: '^BenchmarkReconcile$/^bare$', bridge: '^BenchmarkReconcile$/^bridge$', n: RECONCILES };

interface Sample {
  nsPerOp: number;
  droppedPerOp: number;
}

function run(bin: string, pattern: string, n: number): Sample {
  const r = spawnSync(bin, ['-test.run', '^$', '-test.bench', pattern, '-test.benchtime', `${n}x`, '-test.benchmem'], {
    cwd: BRIDGE, encoding: 'utf8', maxBuffer: 16 << 20,
  });
  if (r.status !== 0) throw new Error(`${pattern}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  const line = r.stdout.split('\n').find((l) => /^Benchmark\S+\s+\d+\s+[\d.]+ ns\/op/.test(l));
  if (!line) throw new Error(`${pattern}: no benchmark line in\n${r.stdout}`);
  const ns = Number(line.match(/([\d.]+) ns\/op/)![1]);
  const dropped = Number(line.match(/([\d.]+) dropped\/op/)?.[1] ?? 0);
  return { nsPerOp: ns, droppedPerOp: dropped };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const fmtRate = (opsPerSec: number) => (opsPerSec >= 1e6 ? `${(opsPerSec / 1e6).toFixed(2)} M/s` : `${Math.round(opsPerSec / 1e3).toLocaleString('en-US')} k/s`);
const fmtUs = (ns: number) => `${(ns / 1e3).toFixed(1)} µs`;

const go = spawnSync('go', ['version'], { encoding: 'utf8' });
if (go.status !== 0) {
  console.error('bench:bridge needs Go (see bridge/go.mod for the version).');
  process.exit(1);
}
const dir = mkdtempSync(join(tmpdir(), 'rl-bench-bridge-'));
try {
  const bin = join(dir, 'bridge.test');
  const built = spawnSync('go', ['test', '-c', '-o', bin, '.'], { cwd: BRIDGE, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('go test -c failed');

  const load0 = loadavg()[0]!;
  const all = [...pairs, reconcilePair];
  const samples = new Map<Pair, { base: Sample[]; bridge: Sample[] }>(all.map((p) => [p, { base: [], bridge: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const p of all) {
      const s = samples.get(p)!;
      const order = round % 2 === 0 ? (['base', 'bridge'] as const) : (['bridge', 'base'] as const);
      for (const side of order) s[side].push(run(bin, side === 'base' ? p.base : p.bridge, p.n));
    }
    process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
  }
  const load1 = loadavg()[0]!;

  console.log(`bridge cost with the editor attached and running: ${ROUNDS} interleaved rounds, medians; ${cpus().length} CPUs (${cpus()[0]?.model.trim()}), ${go.stdout.trim()}, load average ${load0.toFixed(1)} → ${load1.toFixed(1)}`);
  console.log('');
  console.log(`| queue, ${QUEUE_OPS.toLocaleString('en-US')} cycles Add → Get → Forget → Done (batches of 1,000 distinct keys) | stock | bridge | bridge ÷ stock (rounds: min–max) | dropped msgs/op |`);
  console.log('|---|---|---|---|---|');
  let worst = Infinity;
  for (const p of pairs) {
    const s = samples.get(p)!;
    const ratios = s.base.map((b, i) => b.nsPerOp / s.bridge[i]!.nsPerOp);
    const base = median(s.base.map((x) => x.nsPerOp));
    const br = median(s.bridge.map((x) => x.nsPerOp));
    const ratio = base / br;
    worst = Math.min(worst, ratio);
    console.log(`| ${p.label} | ${fmtRate(1e9 / base)} | ${fmtRate(1e9 / br)} | ${ratio.toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}) | ${median(s.bridge.map((x) => x.droppedPerOp)).toFixed(2)} |`);
  }
  const rs = samples.get(reconcilePair)!;
  const bare = median(rs.base.map((x) => x.nsPerOp));
  const wrapped = median(rs.bridge.map((x) => x.nsPerOp));
  const added = rs.base.map((b, i) => rs.bridge[i]!.nsPerOp - b.nsPerOp);
  console.log('');
  console.log('| reconcile (Get + Update on an in-memory client) | bare | bridge.Wrap + journaling client | added per reconcile (rounds: min–max) |');
  console.log('|---|---|---|---|');
  console.log(`| ${RECONCILES.toLocaleString('en-US')} reconciles | ${fmtUs(bare)} | ${fmtUs(wrapped)} | ${fmtUs(wrapped - bare)} (${fmtUs(Math.min(...added))}–${fmtUs(Math.max(...added))}) |`);
  console.log('');
  console.log(`target: bridge ≥ 0.8× stock queue rate — ${worst >= 0.8 ? 'met' : 'NOT met'} (worst pair ${worst.toFixed(2)}×)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
