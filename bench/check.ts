/**
 * `npm run bench:check`: wall time of a full robustness check (all checks) of one key on the local control
 * plane, with its parts. The reconciler is the built-in lab reconciler: its first reconcile of a Widget makes three
 * writes (finalizer patch, child ConfigMap create, status update), so the crash check has two crash points.
 *
 * `BENCH_CHECK_RECONCILER=go`: the same check of samples/go-controller (the developer's Go controller through the
 * bridge; same three writes): every run is a new process of the compiled sample (build not counted).
 *
 * Uses RECONCILE_LAB_KUBECONFIG when set (a running control plane), else starts one (not counted).
 * Run it with `nice -n 10` on a shared machine; the numbers are wall time, so load shows in them.
 */
import { performance } from 'node:perf_hooks';
import { getTestCluster, createNamespace, installCrd } from '../test/integration/support/cluster.ts';
import { client as makeClient, installLabCrd, sampleDocs, sampleWidgets } from '../test/integration/reconcilers.support.ts';
import { buildGoSample } from '../test/integration/support/goSample.ts';
import type { RunChecksOptions } from '../src/core/checks/types.ts';
import { runChecks } from '../src/core/checks/runChecks.ts';
import { createLabReconciler } from '../src/core/reconcilers/labReconciler.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const cluster = await getTestCluster();
const c = makeClient(cluster.transport);
const GO = process.env.BENCH_CHECK_RECONCILER === 'go';
let primary: RunChecksOptions['primary'];
let reconciler: Pick<RunChecksOptions, 'createReconciler' | 'go' | 'reconcilerSpec'>;
const ns = await createNamespace(cluster.transport, 'bench-check');
if (GO) {
  await installCrd(cluster.transport, sampleDocs('crd.yaml')[0]!).catch((e: unknown) => {
    if (!/AlreadyExists|already exists/.test(String((e as Error).message))) throw e;
  });
  primary = { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets', kind: 'Widget', namespaced: true };
  await c.create(primary, { apiVersion: 'lab.reconcile.dev/v1alpha1', kind: 'Widget', metadata: { name: 'widget-ready', namespace: ns }, spec: { data: { color: 'blue', size: 'medium' } } });
  const bin = buildGoSample();
  reconciler = { go: { command: [bin], env: { KUBECONFIG: cluster.kubeconfigPath } }, reconcilerSpec: { kind: 'go', command: [bin] } };
} else {
  const crd = await installLabCrd(cluster.transport);
  primary = { ...crd.gvr, kind: 'Widget', namespaced: true };
  for (const w of sampleWidgets(crd, ns)) await c.create(crd.gvr, w);
  reconciler = { createReconciler: () => createLabReconciler(), reconcilerSpec: { kind: 'lab' } };
}

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
    primary,
    ...reconciler,
    keys: [`${ns}/widget-ready`],
  }, undefined, undefined);
  const ms = performance.now() - t0;
  if (r.findings.length || r.totals.errors) {
    for (const f of r.findings) console.error(`${f.title}\n${f.explanation}\n${f.journal.slice(-40).map((e) => JSON.stringify(e)).join('\n')}`);
    throw new Error(`unexpected findings/errors: ${JSON.stringify(r.results.map((x) => [x.check, x.status, x.message]))}`);
  }
  totals.push(ms);
  for (const p of r.parts) parts.set(p.part, [...(parts.get(p.part) ?? []), p.ms]);
  console.log(`round ${i + 1}: ${(ms / 1000).toFixed(1)} s (${r.results.map((x) => `${x.check} ${x.status}`).join(', ')})`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`\nfull check of one key (${GO ? 'Go sample controller through the bridge' : 'lab reconciler'}, 3 writes), median of ${ROUNDS}: ${(median(totals) / 1000).toFixed(1)} s`);
for (const [part, xs] of parts) console.log(`  ${part.padEnd(46)} ${(median(xs) / 1000).toFixed(2)} s`);
clearInterval(keepAlive);
await cluster.controlPlane?.stop();
process.exit(0);
