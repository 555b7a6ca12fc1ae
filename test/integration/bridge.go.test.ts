// The Go sample controller (samples/go-controller, controller-runtime + the bridge module) driven from the core,
// against the real local control plane: pause with leader election on, step, backoff, why-queued with two causes,
// dry-run, and a Delve breakpoint held while the editor side steps. Everything here is real: the apiserver, the
// compiled Go program, Delve over DAP.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { BridgeHub } from '../../src/core/bridge/bridgeHub.ts';
import type { RunningGoController } from '../../src/core/bridge/runGoController.ts';
import type { RemoteController } from '../../src/core/bridge/remoteController.ts';
import type { GoProcess } from '../../src/core/bridge/goProcess.ts';
import type { Journal, JournalEntry } from '../../src/core/journal/journal.ts';
import { createDynamicClient, type DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import { isNotFound } from '../../src/core/k8s/client.ts';
import type { GroupVersionResource, KubeObject } from '../../src/core/k8s/objects.ts';
import { createNamespace, getTestCluster, installCrd, waitUntil, type TestCluster } from './support/cluster.ts';
import { buildGoSample, haveGo, installDelve, sampleDir } from './support/goSample.ts';
import { GoLaunches } from './support/goLaunch.ts';
import { DapClient } from './support/dap.ts';
import { runCliProcess, runCliUntil } from './support/cli.ts';
import { holdLease } from './support/liveLease.ts';
import { sampleDocs } from './reconcilers.support.ts';

const WIDGETS: GroupVersionResource = { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets' };
const CONFIGMAPS: GroupVersionResource = { group: '', version: 'v1', resource: 'configmaps' };
const LEASES: GroupVersionResource = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };
/** The scenario's pause: 30 s (the lease is 4 s, so Delve would have lost it ~7 times). Shorter only for local runs. */
const PAUSE_MS = Number(process.env.RECONCILE_LAB_BRIDGE_PAUSE_MS ?? 30_000);

/** The sample's Lease (LeaderElectionID in samples/go-controller/cmd/main.go). */
const LEASE = 'widget-sample.lab.reconcile.dev';

/**
 * The sample's flags for one run (no ports: several may run). The sample watches every namespace; each test uses
 * its own namespace and counts only its keys, and every sample but the running test's sits paused.
 */
function sampleArgs(ns: string, o: { leaderElect?: boolean; namespace?: string } = {}): string[] {
  return [
    ...(o.namespace ? [`--namespace=${o.namespace}`] : []),
    '--metrics-bind-address=0',
    '--health-probe-bind-address=0',
    ...(o.leaderElect ? ['--leader-elect=true', `--leader-election-namespace=${ns}`, '--lease-duration=4s', '--renew-deadline=3s', '--retry-period=1s'] : ['--leader-elect=false']),
  ];
}

function widget(ns: string, name: string, data: Record<string, string>): KubeObject {
  return { apiVersion: 'lab.reconcile.dev/v1alpha1', kind: 'Widget', metadata: { name, namespace: ns }, spec: { data } };
}

const starts = (j: Journal, key: string) => j.entries({ kinds: ['reconcileStart'], key }).filter((e) => e.key === key);
const ends = (j: Journal, key: string) => j.entries({ kinds: ['reconcileEnd'], key }).filter((e) => e.key === key);

/** The sample's Reconcile method as Delve names it: "<package>.(*<Type>).Reconcile". */
function reconcileFunction(): string {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.endsWith('.go') && !n.endsWith('_test.go')) files.push(p);
    }
  };
  walk(sampleDir());
  for (const path of files) {
    const text = readFileSync(path, 'utf8');
    const m = /^func \(\w+ (\*?)(\w+)\) Reconcile\(ctx context\.Context/m.exec(text);
    const pkg = /^package (\w+)/m.exec(text)?.[1];
    if (m && pkg) return `${pkg}.(${m[1]}${m[2]}).Reconcile`;
  }
  throw new Error(`no Reconcile method found under ${sampleDir()}`);
}

describe('the Go sample controller through the bridge', { skip: (!haveGo() && 'go is not installed') || (!existsSync(sampleDir()) && 'samples/go-controller is not in this tree') }, () => {
  let cluster: TestCluster;
  let client: DynamicKubeClient;
  let bin: string;
  const launches = new GoLaunches();

  before(async () => {
    cluster = await getTestCluster();
    client = createDynamicClient(cluster.transport, { fieldManager: 'reconcile-lab-test' });
    // The sample's Widget type is compiled in: it needs the real CRD (cluster-wide; other suites use their own groups).
    await installCrd(cluster.transport, sampleDocs('crd.yaml')[0]!).catch((e: unknown) => {
      if (!/AlreadyExists|already exists/.test(String((e as Error).message))) throw e;
    });
    bin = buildGoSample();
  });

  after(() => launches.dispose());

  /** Starts the sample in `ns` on a fresh bridge; resolves once its controller is announced (paused). */
  async function start(ns: string, o: { leaderElect?: boolean; namespace?: string } = {}): Promise<{ hub: BridgeHub; journal: Journal; c: RemoteController; p: GoProcess; r: RunningGoController }> {
    const { hub, journal, r } = await launches.launch({ kubeconfigPath: cluster.kubeconfigPath, command: bin, args: sampleArgs(ns, o) });
    assert.equal(r.controller.status().paused, true, 'the editor welcomes it paused');
    return { hub, journal, c: r.controller, p: r.process, r };
  }

  test(`paused ${PAUSE_MS / 1000} s with leader election on and a 4 s lease: zero reconciles, the lease keeps being renewed`, { timeout: PAUSE_MS + 120_000 }, async () => {
    const ns = await createNamespace(cluster.transport, 'go-pause');
    await client.create(WIDGETS, widget(ns, 'w', { color: 'green' }));
    const { journal, c, p } = await start(ns, { leaderElect: true });
    const key = `${ns}/w`;
    await waitUntil(async () => {
      const l = await client.get(LEASES, ns, LEASE).catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
      return Boolean((l?.spec as { holderIdentity?: string } | undefined)?.holderIdentity);
    }, 'the sample acquires the lease', 60_000);
    await waitUntil(() => c.keyState(key)?.phase === 'queued', 'the widget is queued (its informer add)', 60_000);
    const lease0 = await client.get(LEASES, ns, LEASE);
    const spec0 = lease0.spec as { holderIdentity: string; renewTime: string };

    await new Promise((r) => setTimeout(r, PAUSE_MS)); // the scenario: a long pause, no assertion on time

    assert.equal(starts(journal, key).length, 0, 'no reconcile while paused');
    assert.equal(c.keyState(key)?.phase, 'queued');
    assert.equal(p.liveness, 'connected', 'pinging all along');
    const lease1 = await client.get(LEASES, ns, LEASE);
    const spec1 = lease1.spec as { holderIdentity: string; renewTime: string };
    assert.equal(spec1.holderIdentity, spec0.holderIdentity, 'still the leader');
    assert.ok(Date.parse(spec1.renewTime) > Date.parse(spec0.renewTime), `renewTime advanced (${spec0.renewTime} → ${spec1.renewTime})`);
    assert.ok(Number(lease1.metadata.resourceVersion) > Number(lease0.metadata.resourceVersion));

    const s = await c.step({ key });
    assert.equal(s.kind, 'reconciled');
    assert.equal(starts(journal, key).length, 1, 'the step ran exactly one reconcile');
  });

  test('step → exactly one reconcile; an error path shows backoff 5, 10, 20 ms for that key', { timeout: 180_000 }, async () => {
    const ns = await createNamespace(cluster.transport, 'go-step');
    await client.create(WIDGETS, widget(ns, 'ok', { color: 'blue' }));
    // A child the API server refuses (a ConfigMap key may not contain spaces): every reconcile of "bad" fails.
    await client.create(WIDGETS, widget(ns, 'bad', { 'not a valid key!': 'x' }));
    const { journal, c } = await start(ns);
    const ok = `${ns}/ok`;
    const bad = `${ns}/bad`;
    await waitUntil(() => c.keyState(ok)?.phase === 'queued' && c.keyState(bad)?.phase === 'queued', 'both queued', 60_000);

    const s = await c.step({ key: ok });
    assert.ok(s.kind === 'reconciled', JSON.stringify(s));
    assert.equal(starts(journal, ok).length, 1);
    assert.equal(ends(journal, ok).length, 1);
    assert.equal(starts(journal, bad).length, 0, 'the other key did not run');
    assert.ok(journal.entries({ kinds: ['write'], key: ok }).some((e) => e.kind === 'write' && e.verb === 'create' && e.objectKey === `${ns}/ok-config` && !e.dryRun && e.resourceVersionAfter));

    const delays: number[] = [];
    for (let i = 1; i <= 3; i++) {
      const r = await c.step({ key: bad, force: true });
      assert.ok(r.kind === 'reconciled' && r.outcome.kind === 'error', JSON.stringify(r));
      await waitUntil(() => (c.keyState(bad)?.reasons ?? []).some((x) => x.kind === 'backoff' && x.attempt === i), `backoff cause ${i}`, 10_000);
      const cause = c.keyState(bad)!.reasons.find((x) => x.kind === 'backoff' && x.attempt === i)!;
      assert.ok(cause.kind === 'backoff');
      delays.push(cause.delayMs);
      assert.equal(c.keyState(bad)!.requeues, i, 'failures per key');
    }
    assert.deepEqual(delays, [5, 10, 20]);
    assert.equal(starts(journal, bad).length, 3, 'paused: only the three steps ran');
  });

  test('a spec update and an owned child change before one Get are both causes of the next reconcile', { timeout: 180_000 }, async () => {
    const ns = await createNamespace(cluster.transport, 'go-causes');
    await client.create(WIDGETS, widget(ns, 'w', { color: 'green' }));
    const { journal, c } = await start(ns);
    const key = `${ns}/w`;
    await waitUntil(() => c.keyState(key)?.phase === 'queued', 'queued', 60_000);
    for (let i = 0; i < 4 && !(await client.get(CONFIGMAPS, ns, 'w-config').catch(() => undefined)); i++) await c.step({ key, force: true });
    const cm = await client.get(CONFIGMAPS, ns, 'w-config');
    await waitUntil(() => c.keyState(key)?.phase === 'idle' || c.keyState(key)?.phase === 'queued', 'settled', 10_000);
    const w = await client.get(WIDGETS, ns, 'w');
    await client.update(WIDGETS, { ...w, spec: { data: { color: 'red' } } });
    await client.update(CONFIGMAPS, { ...cm, metadata: { ...cm.metadata, labels: { ...(cm.metadata.labels ?? {}), touched: 'yes' } } });
    await waitUntil(() => {
      const kinds = new Set((c.keyState(key)?.reasons ?? []).map((r) => r.kind));
      return kinds.has('informer') && kinds.has('owned');
    }, 'both causes recorded', 30_000);
    const r = await c.step({ key, force: true });
    assert.equal(r.kind, 'reconciled');
    const last = starts(journal, key).at(-1)!;
    assert.ok(last.kind === 'reconcileStart');
    const informer = last.triggers.find((t) => t.kind === 'informer' && t.event === 'update');
    const owned = last.triggers.find((t) => t.kind === 'owned');
    assert.ok(informer, `a spec update among ${JSON.stringify(last.triggers)}`);
    assert.ok(owned && owned.kind === 'owned' && owned.child === `${ns}/w-config`, `the owned child among ${JSON.stringify(last.triggers)}`);
    // The child's kind, from the Go side's informer (the views read "add of owned ConfigMap …").
    assert.equal(owned.childKind, 'ConfigMap', JSON.stringify(owned));
    // A delete of the Widget (it carries the sample's finalizer, so the server keeps it): the update that set its
    // deletionTimestamp is named as the deletion, as the Go side saw it.
    assert.ok((await client.get(WIDGETS, ns, 'w')).metadata.finalizers?.length, 'the sample put its finalizer on');
    await client.delete(WIDGETS, ns, 'w');
    await waitUntil(() => (c.keyState(key)?.reasons ?? []).some((r) => r.kind === 'informer' && r.event === 'update' && r.deletionRequested === true), 'the deletion named in why-queued', 30_000);
  });

  test('a dry-run step persists nothing: resourceVersions unchanged, no child created', { timeout: 180_000 }, async () => {
    const ns = await createNamespace(cluster.transport, 'go-dry');
    await client.create(WIDGETS, widget(ns, 'w', { color: 'green' }));
    const { journal, c } = await start(ns);
    const key = `${ns}/w`;
    await waitUntil(() => c.keyState(key)?.phase === 'queued', 'queued', 60_000);
    const before = await client.get(WIDGETS, ns, 'w');
    const d = await c.dryRun(key);
    assert.ok(d.writes.length > 0, 'the reconciler planned writes');
    assert.ok(d.writes.every((w) => w.dryRun), 'every write was sent with dryRun=All');
    const planned = d.writes.find((w) => w.verb === 'create' && w.resource === 'configmaps');
    assert.ok(planned && planned.after, `a planned child create among ${JSON.stringify(d.writes.map((w) => `${w.verb} ${w.resource}`))}`);
    const after = await client.get(WIDGETS, ns, 'w');
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'the widget did not change');
    await assert.rejects(client.get(CONFIGMAPS, ns, 'w-config'), (e: unknown) => isNotFound(e), 'no child was created');
    assert.equal(starts(journal, key).length, 0, 'a dry-run does not count as a reconcile of the queue');
    assert.equal(c.keyState(key)?.phase, 'queued', 'the key is still queued');
    assert.ok(journal.entries({ kinds: ['write'] }).every((e) => e.kind !== 'write' || e.dryRun));
  });

  test('CLI run --go with leader election on while another instance holds the Lease: the notice names the Lease and its holder, read from the cluster', { timeout: 180_000 }, async () => {
    const ns = await createNamespace(cluster.transport, 'go-lease');
    // The sample's Lease (LeaderElectionID widget-sample.lab.reconcile.dev) as another running instance holds it
    // (renewing it), for an hour.
    const held = await holdLease(client, { namespace: ns, name: 'widget-sample.lab.reconcile.dev', holder: 'other-laptop_0f3c', durationSeconds: 3600 });
    try {
      const go = [bin, ...sampleArgs(ns, { leaderElect: true, namespace: ns })].join(' ');
      const r = await runCliUntil(['run', '--kubeconfig', cluster.kubeconfigPath, '--go', go], (_, err) => err.includes('waits for leader election'), 'the notice about the lease', { timeoutMs: 120_000 });
      assert.match(r.stderr, new RegExp(`connected \\(pid \\d+\\) but announced no controller yet: it waits for leader election: Lease ${ns}/widget-sample\\.lab\\.reconcile\\.dev is held by other-laptop_0f3c \\(another instance of your program`), r.stderr);
      assert.match(r.stderr, /Stop the other instance, or run with --leader-elect=false \(leader election is not needed/, r.stderr);
      assert.equal(r.stderr.split('waits for leader election').length, 2, `said once:\n${r.stderr}`);
    } finally {
      // A fresh Lease named for the lab's finalizer domain is evidence of a running owner to every later finalizer
      // diagnosis on this control plane (the extension-host suites share it): it must not outlive this test.
      await held.release();
    }
  });

  test('CLI report --go: --dry-run plans every object of the namespace (planned child create as a diff, nothing persisted); live, a key is reconciled with its writes and status', { timeout: 240_000 }, async () => {
    const ns = await createNamespace(cluster.transport, 'go-report');
    await client.create(WIDGETS, widget(ns, 'alpha', { color: 'green' }));
    await client.create(WIDGETS, widget(ns, 'beta', { color: 'blue' }));
    const before = Object.fromEntries(await Promise.all(['alpha', 'beta'].map(async (n) => [n, (await client.get(WIDGETS, ns, n)).metadata.resourceVersion])));
    const go = [bin, ...sampleArgs(ns)].join(' ');
    const dry = await runCliProcess(['report', '--kubeconfig', cluster.kubeconfigPath, '--go', go, '-n', ns, '--dry-run', '--json', '--go-wait', '120']);
    assert.equal(dry.code, 0, dry.stderr);
    const planned = JSON.parse(dry.stdout) as { dryRun: boolean; resource: string; reconciler: string; entries: Array<{ key: string; actions: Array<{ verb: string; resource: string; key: string; dryRun: boolean; diff: string; subresource?: string }>; outcome: { kind: string }; resourceVersionBefore?: string; resourceVersionAfter?: string }>; totals: { objects: number } };
    assert.equal(planned.dryRun, true);
    assert.equal(planned.reconciler, 'Go controller widget');
    assert.deepEqual(planned.entries.map((e) => e.key), [`${ns}/alpha`, `${ns}/beta`], 'every object of the namespace, sorted (none of other namespaces)');
    for (const e of planned.entries) {
      const create = e.actions.find((a) => a.verb === 'create' && a.resource === 'configmaps');
      assert.ok(create, `${e.key}: a planned child create among ${JSON.stringify(e.actions.map((a) => `${a.verb} ${a.resource}`))}`);
      assert.ok(e.actions.every((a) => a.dryRun), 'every write was sent with dryRun=All');
      assert.match(create.diff, /\+\s+color: (green|blue)/, 'the planned ConfigMap is shown as a diff');
      assert.equal(e.resourceVersionAfter, e.resourceVersionBefore, 'nothing persisted');
      // A Go controller does not say what it wants apart from writing it: the object's spec and status are given under
      // their own names, never as desired / observed.
      const named = e as unknown as Record<string, unknown>;
      assert.ok(named.spec !== undefined && !('desired' in named) && !('observed' in named), JSON.stringify(Object.keys(named)));
    }
    for (const n of ['alpha', 'beta']) {
      assert.equal((await client.get(WIDGETS, ns, n)).metadata.resourceVersion, before[n], `${n} did not change`);
      await assert.rejects(client.get(CONFIGMAPS, ns, `${n}-config`), (e: unknown) => isNotFound(e), `no child of ${n} was created`);
    }
    // A planned write's diff reads current → planned, in the CLI's dry-run text as in the editor's.
    const text = await runCliProcess(['dry-run', `${ns}/alpha`, '--kubeconfig', cluster.kubeconfigPath, '--go', go, '--go-wait', '120']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`--- configmaps ${ns}/alpha-config\\tcurrent\\n\\s*\\+\\+\\+ configmaps ${ns}/alpha-config\\tplanned\\n`), text.stdout);
    // Markdown (the default), live, one key: its writes are stored and listed, with the status written.
    const live = await runCliProcess(['report', `${ns}/alpha`, '--kubeconfig', cluster.kubeconfigPath, '--go', go, '--go-wait', '120']);
    assert.equal(live.code, 0, live.stderr);
    assert.match(live.stdout, /^# Reconcile report: widgets\.lab\.reconcile\.dev\n/);
    assert.match(live.stdout, /Reconciler `Go controller widget`, live, .* 1 object\(s\)/);
    assert.match(live.stdout, new RegExp(`create configmaps ${ns}/alpha-config: rv — → \\d+`), live.stdout);
    assert.match(live.stdout, /\*\*Status written:\*\*/, live.stdout);
    assert.ok(await client.get(CONFIGMAPS, ns, 'alpha-config'), 'the live pass created the child');
    await assert.rejects(client.get(CONFIGMAPS, ns, 'beta-config'), (e: unknown) => isNotFound(e), 'beta was not named: not reconciled');
  });

  test('the program\'s own cache: its copy of a Widget and, after a step, of the owned ConfigMap; nothing for a missing key; errors for what it does not watch and outside its namespaces', { timeout: 180_000 }, async () => {
    const ns = await createNamespace(cluster.transport, 'go-cache');
    const created = await client.create(WIDGETS, widget(ns, 'w', { color: 'teal' }));
    const { c } = await start(ns, { namespace: ns });
    const key = `${ns}/w`;
    const widgets = WIDGETS;
    await waitUntil(() => c.keyState(key)?.phase === 'queued', 'queued', 60_000);
    // The program said what it caches (the editor watches those too).
    await waitUntil(() => ['configmaps', 'widgets.lab.reconcile.dev'].every((r) => c.cachedResources.includes(r)), `the cached resources (${c.cachedResources.join(', ')})`, 30_000);
    assert.deepEqual([...c.cachedResources].sort(), ['configmaps', 'widgets.lab.reconcile.dev']);
    const cached = (await c.cachedObject(widgets, key)).object;
    assert.equal(cached?.kind, 'Widget');
    assert.equal(cached?.apiVersion, 'lab.reconcile.dev/v1alpha1');
    assert.equal(cached?.metadata.resourceVersion, created.metadata.resourceVersion, 'the informer\'s copy of the created Widget');
    assert.deepEqual((cached?.spec as { data?: unknown } | undefined)?.data, { color: 'teal' });
    assert.deepEqual(await c.cachedObject(widgets, `${ns}/no-such-widget`), {}, 'not in the cache: no object');

    const s = await c.step({ key });
    assert.ok(s.kind === 'reconciled', JSON.stringify(s));
    const server = await client.get(CONFIGMAPS, ns, 'w-config');
    let child: KubeObject | undefined;
    await waitUntil(async () => (child = (await c.cachedObject(CONFIGMAPS, `${ns}/w-config`)).object) !== undefined, 'the owned ConfigMap in the program\'s cache', 30_000);
    assert.equal(child?.kind, 'ConfigMap');
    assert.equal(child?.metadata.resourceVersion, server.metadata.resourceVersion);

    await assert.rejects(c.cachedObject({ group: '', version: 'v1', resource: 'secrets' }, `${ns}/anything`), /no informer for secrets\.v1: none of its watches asked for it \(it caches [^)]*configmaps\.v1[^)]*widgets\.v1alpha1\.lab\.reconcile\.dev/);
    await assert.rejects(c.cachedObject(widgets, 'kube-system/w'), new RegExp(`kube-system/w is outside the program's cache: it watches widgets\\S* only in namespace\\(s\\) ${ns}`));
  });

  test('Delve: a breakpoint in Reconcile is hit by a step from the editor side; silent, not dead; continue, and the bridge records the outcome', { timeout: 300_000 }, async () => {
    const ns = await createNamespace(cluster.transport, 'go-dlv');
    await client.create(WIDGETS, widget(ns, 'w', { color: 'green' }));
    const dlvPath = installDelve();
    const { hub, journal } = await launches.bridge({ silentAfterMs: 2000 });
    const dap = await DapClient.start(dlvPath);
    try {
      await dap.request('initialize', { adapterID: 'go', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
      // The same (optimised) binary as the other tests: a function breakpoint needs no -N -l build.
      await dap.request('launch', { mode: 'exec', program: bin, args: sampleArgs(ns), env: { KUBECONFIG: cluster.kubeconfigPath, ...hub.env() } });
      await dap.nextEvent('initialized');
      const fn = reconcileFunction();
      const bp = await dap.request<{ breakpoints: Array<{ verified: boolean; line: number }> }>('setFunctionBreakpoints', { breakpoints: [{ name: fn }] });
      assert.ok(bp.breakpoints[0]?.verified, `breakpoint on ${fn} verified: ${JSON.stringify(bp)}`);
      await dap.request('configurationDone');
      const { process: p, controller: c } = await hub.waitForController(() => true, AbortSignal.timeout(120_000));
      const key = `${ns}/w`;
      await waitUntil(() => c.keyState(key)?.phase === 'queued', 'queued', 60_000);

      const stepping = c.step({ key });
      const stopped = await dap.nextEvent('stopped');
      assert.match(String(stopped.reason), /breakpoint/);
      await waitUntil(() => p.liveness === 'notResponding', 'the editor sees silence', 20_000);
      assert.equal(c.status().state, 'running', 'stopped in the debugger is not dead');
      p.setDebuggerStopped(true);
      assert.equal(p.liveness, 'stoppedInDebugger');
      // The wrapper sends "start" before the user's Reconcile runs; whether its writer flushed before Delve stopped
      // every thread is a race, so at most one start may have arrived, never a second one or an end.
      assert.ok(starts(journal, key).length <= 1, 'no more than the one start while the process is stopped');

      await dap.request('continue', { threadId: stopped.threadId });
      p.setDebuggerStopped(false);
      const r = await stepping;
      assert.ok(r.kind === 'reconciled' && r.key === key, JSON.stringify(r));
      await waitUntil(() => p.liveness === 'connected', 'pinging again', 10_000);
      assert.equal(starts(journal, key).length, 1);
      assert.equal(ends(journal, key).length, 1, 'the outcome is recorded');
      const writes = journal.entries({ kinds: ['write'], key }).filter((e): e is JournalEntry & { kind: 'write' } => e.kind === 'write');
      assert.ok(writes.length > 0 && writes.every((w) => !w.dryRun), 'its writes are journaled');
      const snap = await p.request({ op: 'snapshot', controller: c.name }, { timeoutMs: 5000 });
      assert.equal(snap.snapshot?.dropped, 0, 'nothing was dropped while the process sat at the breakpoint');
    } finally {
      await dap.close();
    }
  });
});
