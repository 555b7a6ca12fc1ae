/**
 * `npm run bench:check`: wall time of a full robustness check (all five checks) of one key on the local control
 * plane, with its parts. The reconciler is the built-in lab reconciler: its first reconcile of a Widget makes three
 * writes (finalizer patch, child ConfigMap create, status update), so the crash check has two crash points.
 *
 * Uses RECONCILE_LAB_KUBECONFIG when set (a running control plane), else starts one (not counted).
 * Run it with `nice -n 10` on a shared machine; the numbers are wall time, so load shows in them.
 */
import { performance } from 'node:perf_hooks';
import { getTestCluster, createNamespace } from '../test/integration/support/cluster.ts';
import { client as makeClient, installLabCrd, sampleWidgets } from '../test/integration/reconcilers.support.ts';
import { runChecks } from '../src/core/checks/runChecks.ts';
import { createLabReconciler } from '../src/core/reconcilers/labReconciler.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const cluster = await getTestCluster();
const c = makeClient(cluster.transport);
const crd = await installLabCrd(cluster.transport);
const ns = await createNamespace(cluster.transport, 'bench-check');
for (const w of sampleWidgets(crd, ns)) await c.create(crd.gvr, w);

// The core's timers are unref'd and a frozen watch holds no socket: keep the process alive.
const keepAlive = setInterval(() => {}, 1 << 30);
const totals: number[] = [];
const parts = new Map<string, number[]>();
for (let i = 0; i < ROUNDS; i++) {
  const t0 = performance.now();
  const r = await runChecks({
    transport: cluster.transport,
    client: c,
    cluster: { name: 'bench', local: true },
    primary: { ...crd.gvr, kind: 'Widget', namespaced: true },
    createReconciler: () => createLabReconciler(),
    reconcilerSpec: { kind: 'lab' },
    keys: [`${ns}/widget-ready`],
  }, undefined, undefined);
  const ms = performance.now() - t0;
  if (r.findings.length || r.totals.errors) throw new Error(`unexpected findings/errors: ${JSON.stringify(r.results.map((x) => [x.check, x.status, x.message]))}`);
  totals.push(ms);
  for (const p of r.parts) parts.set(p.part, [...(parts.get(p.part) ?? []), p.ms]);
  console.log(`round ${i + 1}: ${(ms / 1000).toFixed(1)} s (${r.results.map((x) => `${x.check} ${x.status}`).join(', ')})`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`\nfull check of one key (lab reconciler, 3 writes), median of ${ROUNDS}: ${(median(totals) / 1000).toFixed(1)} s`);
for (const [part, xs] of parts) console.log(`  ${part.padEnd(46)} ${(median(xs) / 1000).toFixed(2)} s`);
clearInterval(keepAlive);
await cluster.controlPlane?.stop();
process.exit(0);
