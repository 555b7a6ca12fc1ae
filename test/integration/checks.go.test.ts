// The robustness checks (issue 11) on the developer's own Go controller through the bridge, against the real local
// control plane: samples/go-controller (the correct Widget controller) has zero findings, and
// samples/buggy/go-status-every-reconcile (status written on every pass) is caught by the convergence check only.
// Each run of a check is a new process of the compiled program (a check instance over its scratch namespace).
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { join } from 'node:path';
import { createDynamicClient, type DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import { runChecks } from '../../src/core/checks/runChecks.ts';
import { GoCheckRunner } from '../../src/core/checks/goRun.ts';
import { realClock } from '../../src/core/clock.ts';
import { nullLogger } from '../../src/core/log.ts';
import type { CheckReport, RunChecksOptions } from '../../src/core/checks/types.ts';
import type { KubeObject, ResourceInfo } from '../../src/core/k8s/objects.ts';
import { createNamespace, getTestCluster, installCrd, testCrd, uniqueName, type TestCluster } from './support/cluster.ts';
import { runCliProcess } from './support/cli.ts';
import { buildGoProgram, buildGoSample, harborOperatorDir, haveGo, sampleDir } from './support/goSample.ts';
import { ROOT, sampleDocs } from './reconcilers.support.ts';

const WIDGETS: ResourceInfo = { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets', kind: 'Widget', namespaced: true };
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };

function summary(r: CheckReport): string {
  return [...r.results.map((x) => `${x.check}: ${x.status}${x.message ? ` (${x.message})` : ''}${x.findings.map((f) => `\n    ${f.severity} ${f.title}`).join('')}`), ...r.notes].join('\n');
}

describe('robustness checks on the Go controller through the bridge', { skip: (!haveGo() && 'go is not installed') || (!existsSync(sampleDir()) && 'samples/go-controller is not in this tree') }, () => {
  let cluster: TestCluster;
  let c: DynamicKubeClient;
  let ns: string;
  let bin: string;

  before(async () => {
    cluster = await getTestCluster();
    c = createDynamicClient(cluster.transport, { fieldManager: 'reconcile-lab-test' });
    await installCrd(cluster.transport, sampleDocs('crd.yaml')[0]!).catch((e: unknown) => {
      if (!/AlreadyExists|already exists/.test(String((e as Error).message))) throw e;
    });
    ns = await createNamespace(cluster.transport, 'gochecks');
    await c.create(WIDGETS, { apiVersion: 'lab.reconcile.dev/v1alpha1', kind: 'Widget', metadata: { name: 'widget-ready', namespace: ns }, spec: { data: { color: 'blue', size: 'medium' } } });
    bin = buildGoSample();
  });

  function options(o: Partial<RunChecksOptions> & Pick<RunChecksOptions, 'go' | 'reconcilerSpec'>): RunChecksOptions {
    return {
      transport: cluster.transport,
      client: c,
      cluster: { name: 'test', local: true },
      primary: WIDGETS,
      keys: [`${ns}/widget-ready`],
      convergenceBoundMs: 10_000,
      quietMs: 1_000,
      ...o,
    };
  }

  async function scratchOf(r: CheckReport): Promise<string[]> {
    const live = (await c.list(NAMESPACES, undefined, { labelSelector: 'checks.reconcile-lab.dev/scratch=true' })).items.filter((n) => !n.metadata.deletionTimestamp);
    // Only this report's namespaces: their purpose annotation names the checked key.
    return live.filter((n) => n.metadata.annotations?.['checks.reconcile-lab.dev/purpose']?.endsWith(r.keys[0]!)).map((n) => n.metadata.name!);
  }

  test('samples/go-controller: every check runs on the Go controller and finds nothing; the original is untouched', async () => {
    const original = await c.get(WIDGETS, ns, 'widget-ready');
    const lines: string[] = [];
    const r = await runChecks(options({ go: { command: [bin, '--leader-elect=true'], env: { KUBECONFIG: cluster.kubeconfigPath }, onOutput: (l) => lines.push(l) }, reconcilerSpec: { kind: 'go', command: [bin] } }));
    assert.equal(r.reconcilerKind, 'go');
    assert.equal(r.findings.length, 0, summary(r));
    assert.equal(r.totals.errors, 0, summary(r));
    // Its writes from the cache (a resourceVersion it made, maybe an older one) are no other writer's.
    assert.ok(!r.notes.some((n) => /changed by a writer the checks did not run/.test(n)), r.notes.join('\n'));
    for (const check of ['runTwice', 'crashAfterWrite', 'staleCache', 'unobservedState', 'historyIndependence', 'convergence', 'deletion', 'childDrift']) {
      assert.equal(r.results.find((x) => x.check === check)?.status, 'passed', `${check} ran and passed:\n${summary(r)}`);
    }
    // The sample's first reconcile makes three writes (finalizer, child, status): two crash points, each reached.
    assert.match(r.results.find((x) => x.check === 'crashAfterWrite')!.message!, /^2 crash point\(s\): the end state equals/, summary(r));
    // The withheld update really was withheld inside the Go process (not a pass by default).
    assert.match(r.results.find((x) => x.check === 'unobservedState')!.message!, /[1-9]\d* update event\(s\) withheld/, summary(r));
    // The stale-cache check stepped the key once from the frozen view (its message counts the writes of that step).
    // Three views: the whole cache where it had settled and before its own writes, and its ConfigMaps alone lagging.
    assert.match(r.results.find((x) => x.check === 'staleCache')!.message!, /write\(s\) from 3 stale views[^]*and each settled back where it was/, summary(r));
    assert.ok(r.parts.some((p) => p.part === 'perturbed run (stale cache, configmaps only)'), r.parts.map((p) => p.part).join(', '));
    // History: a spec field changed as the Widget CRD's schema allows, on the Go controller too.
    assert.match(r.results.find((x) => x.check === 'historyIndependence')!.message!, /^spec\.data\.reconcile-lab-added \(added\)(, spec\.data\.[a-z]+)+ changed as the schema allows .*: the same end state as an object created with the final spec, whether each change was reconciled or all of them landed while no controller ran; and reverted, the state before the changes came back$/, summary(r));
    // Deletion: the deleted copy was reconciled by a new Go process, which cleaned up and removed its finalizer.
    assert.match(r.results.find((x) => x.check === 'deletion')!.message!, /^gone \d+ ms after the delete \(the reconciler removed lab\.reconcile\.dev\/cleanup\)/, summary(r));
    // Child drift: the owned ConfigMap, deleted and then edited behind the Go process's back, is put back each time.
    assert.match(r.results.find((x) => x.check === 'childDrift')!.message!, /^1 of 1 child\(ren\) restored within [\d.]+ s of a change behind the controller's back \(deleted configmaps\/widget-ready-config: recreated; changed data\.[^ ]+ of configmaps\/widget-ready-config: put back\)$/, summary(r));
    // --leader-elect=true was ignored by the check instances (else every run but the first would wait for the lease).
    assert.ok(!lines.some((l) => /attempting to acquire leader lease/.test(l)), 'check instances run without leader election');
    assert.deepEqual(await scratchOf(r), [], 'scratch namespaces cleaned up');
    assert.equal((await c.get(WIDGETS, ns, 'widget-ready')).metadata.resourceVersion, original.metadata.resourceVersion, 'the developer\'s object untouched');
  });

  test('a check instance started for a copy that is already gone (another instance of the controller removed it) says so instead of blaming an event filter', async () => {
    const runner = new GoCheckRunner({ command: [bin], env: { KUBECONFIG: cluster.kubeconfigPath } });
    const abort = new AbortController();
    const env = { transport: cluster.transport, client: c, primary: WIDGETS, owned: [], predicates: [], clock: realClock, log: nullLogger, quietMs: 500, signal: abort.signal };
    try {
      await assert.rejects(runner.startRun(env, ns, { key: `${ns}/gone-before-queued` }), (e: Error) => {
        assert.match(e.message, new RegExp(`^the Go controller never queued ${ns}/gone-before-queued: the copy no longer exists, and this check instance never saw it\\. Something else deleted it or removed its last finalizer — most likely another instance of this controller reconciling every namespace`));
        assert.doesNotMatch(e.message, /did not queue|event filter/);
        return true;
      });
    } finally {
      abort.abort();
      runner.dispose();
    }
  });

  test('reconcile-lab check --go: the real CLI process checks the Go controller and prints JSON (without --resource: the one its controller reconciles)', async () => {
    const key = `${ns}/widget-ready`;
    const r = await runCliProcess(['check', key, '--kubeconfig', cluster.kubeconfigPath, '--go', `${bin} --leader-elect=false`, '--check', 'runTwice,crashAfterWrite', '--json']);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const report = JSON.parse(r.stdout) as CheckReport;
    assert.equal(report.resource, 'widgets.lab.reconcile.dev', 'the resource the program\'s controller announced');
    assert.equal(report.reconcilerKind, 'go');
    assert.equal(report.reconciler, `${bin} --leader-elect=false`);
    assert.deepEqual(report.results.map((x) => [x.check, x.status]), [['runTwice', 'passed'], ['crashAfterWrite', 'passed']], summary(report));
    assert.deepEqual(await scratchOf(report), []);
  });

  test('a resource none of the program\'s controllers reconciles: each check says so once the program announced its controllers (not after 5 minutes)', async () => {
    const group = `${uniqueName('gochk')}.example.org`;
    await installCrd(cluster.transport, testCrd({ group, kind: 'Gizmo', plural: 'gizmos' }));
    const gizmos: ResourceInfo = { group, version: 'v1', resource: 'gizmos', kind: 'Gizmo', namespaced: true };
    await c.create(gizmos, { apiVersion: `${group}/v1`, kind: 'Gizmo', metadata: { name: 'g', namespace: ns }, spec: {} });
    const r = await runChecks(options({ primary: gizmos, keys: [`${ns}/g`], checks: ['runTwice'], go: { command: [bin], env: { KUBECONFIG: cluster.kubeconfigPath } }, reconcilerSpec: { kind: 'go', command: [bin] } }));
    assert.equal(r.totals.errors, 1, summary(r));
    assert.match(r.results[0]!.message!, new RegExp(`announced widget \\(widgets\\.lab\\.reconcile\\.dev\\), but not a controller reconciling gizmos\\.${group.replace(/\./g, '\\.')}`), summary(r));
    assert.deepEqual(await scratchOf(r), []);
  });

  test('samples/buggy/go-removes-finalizer-first: the deletion check, crashing the deletion after each write, finds the registry ConfigMap left behind', async () => {
    const dir = join(ROOT, 'samples/buggy/go-removes-finalizer-first');
    const r = await runChecks(options({ checks: ['deletion'], go: { command: ['go', 'run', '.'], cwd: dir, env: { KUBECONFIG: cluster.kubeconfigPath } }, reconcilerSpec: { kind: 'go', command: ['go', 'run', '.'] }, convergenceBoundMs: 8_000 }));
    assert.deepEqual([...new Set(r.findings.map((f) => f.check))], ['deletion'], summary(r));
    const f = r.findings[0]!;
    assert.match(f.title, /^Crash during the deletion after write \d of \d \((update|patch) widgets\.lab\.reconcile\.dev rl-check-[0-9a-f]+\/widget-ready\): configmaps\/widget-ready-registry is left behind$/, summary(r));
    assert.match(f.explanation, /removed the last finalizer[^]*remove the finalizer last/, f.explanation);
    assert.match(f.reproduce, new RegExp(`^reconcile-lab check ${ns}/widget-ready --check deletion`));
    assert.deepEqual(await scratchOf(r), []);
  });

  // A controller that keeps a record in another namespace (test/fixtures/go-external-cleanup): inside a check
  // instance (cache and writes confined to the scratch namespace) its reconciles fail because of the check. That is
  // no finding: before, the deletion check blamed the controller ("failed on the Terminating object") and the
  // convergence check called the retries a hot loop of writes.
  test('a Go controller whose finalizer deletes a record in another namespace: the deletion check says it could not judge the key, with the refused write, and finds nothing', async () => {
    const dir = join(ROOT, 'test/fixtures/go-external-cleanup');
    const command = ['go', 'run', '.', '--external=delete', '--external-namespace=h1-records'];
    const r = await runChecks(options({ checks: ['deletion'], go: { command, cwd: dir, env: { KUBECONFIG: cluster.kubeconfigPath } }, reconcilerSpec: { kind: 'go', command }, convergenceBoundMs: 6_000 }));
    assert.deepEqual(r.findings, [], summary(r));
    const d = r.results.find((x) => x.check === 'deletion')!;
    assert.equal(d.status, 'error', summary(r));
    assert.match(d.message!, /^could not check this key inside a check instance: the write delete configmaps h1-records\/rl-check-[0-9a-f]+\.widget-ready was refused \(a check instance writes only in its scratch namespace\)[^]*not from your controller/, summary(r));
    assert.deepEqual(await scratchOf(r), []);
  });

  test('a Go controller that reads a record in another namespace on every reconcile: every check says it could not judge the key after the first reference run, naming the read', async () => {
    const dir = join(ROOT, 'test/fixtures/go-external-cleanup');
    const command = ['go', 'run', '.', '--external=register', '--external-namespace=h1-records'];
    const r = await runChecks(options({ checks: ['convergence', 'runTwice', 'deletion'], go: { command, cwd: dir, env: { KUBECONFIG: cluster.kubeconfigPath } }, reconcilerSpec: { kind: 'go', command }, convergenceBoundMs: 4_000 }));
    assert.deepEqual(r.findings, [], summary(r));
    assert.deepEqual(r.results.map((x) => `${x.check}: ${x.status}`).sort(), ['convergence: error', 'deletion: error', 'runTwice: error'], summary(r));
    for (const x of r.results) assert.match(x.message!, /^could not check this key inside a check instance: a read \(get h1-records\/rl-check-[0-9a-f]+\.widget-ready\) outside the scratch namespace failed[^]*unknown namespace for the cache/, summary(r));
    assert.ok(!r.parts.some((p) => p.part === 'reference run 2'), 'no second reference run: every check would hit the same wall');
    assert.deepEqual(await scratchOf(r), []);
  });

  test('samples/buggy/go-status-every-reconcile (go run, built once): caught by convergence only, with the field that changes', async () => {
    const dir = join(ROOT, 'samples/buggy/go-status-every-reconcile');
    const r = await runChecks(options({ go: { command: ['go', 'run', '.'], cwd: dir, env: { KUBECONFIG: cluster.kubeconfigPath } }, reconcilerSpec: { kind: 'go', command: ['go', 'run', '.'] }, convergenceBoundMs: 6_000 }));
    assert.deepEqual([...new Set(r.findings.map((f) => f.check))], ['convergence'], summary(r));
    const f = r.findings[0]!;
    assert.match(f.title, /Never converges: \d+ × update widgets\.lab\.reconcile\.dev \S+ \(status\)/, summary(r));
    assert.match(f.explanation, /hot loop[^]*status\.conditions\[0\]\.message/, f.explanation);
    assert.match(f.reproduce, new RegExp(`^reconcile-lab check ${ns}/widget-ready --check convergence`));
    assert.ok(f.journal.some((e) => e.kind === 'reconcileStart'), 'the Go run\'s journal is attached');
    assert.ok(r.parts.some((p) => p.part === 'build'), 'the go run command was built once');
    assert.deepEqual(await scratchOf(r), []);
  });

  // WithEventFilter applies to every watch: the owned ConfigMap's updates are dropped (its generation never moves).
  test('samples/buggy/go-filters-child-events: the child drift check finds the edited child never put back; a deleted one is restored, and no other check finds anything', async () => {
    const dir = join(ROOT, 'samples/buggy/go-filters-child-events');
    const r = await runChecks(options({ checks: ['runTwice', 'crashAfterWrite', 'unobservedState', 'historyIndependence', 'childDrift'], go: { command: ['go', 'run', '.'], cwd: dir, env: { KUBECONFIG: cluster.kubeconfigPath } }, reconcilerSpec: { kind: 'go', command: ['go', 'run', '.'] }, convergenceBoundMs: 6_000 }));
    assert.deepEqual(r.findings.map((f) => f.check), ['childDrift'], summary(r));
    const f = r.findings[0]!;
    assert.match(f.title, /^Not restored after a change: configmaps\/widget-ready-config: data\.[a-z]+$/, summary(r));
    assert.match(f.explanation, /did not put it back within 6 s: configmaps\/widget-ready-config: data\.[a-z]+: "[^"]*" when settled, "[^"]*-drifted" after the change[^]*WithEventFilter\(predicate\.GenerationChangedPredicate\{\}\)` applies to every watch[^]*No write followed the change/, f.explanation);
    assert.match(f.perturbation.description, /^changed data\.[a-z]+ of configmaps\/widget-ready-config \(\{"data":/);
    assert.match(f.diff, /-drifted/);
    assert.match(r.results.find((x) => x.check === 'childDrift')!.message!, /deleted configmaps\/widget-ready-config: recreated/, summary(r));
    assert.deepEqual(await scratchOf(r), []);
  });

  // No Owns: the child is deleted behind the controller's back and nothing tells it (a typed client's create answers
  // without a kind: the hint still names the child's Go type).
  test('a Go controller that does not watch its child (test/fixtures/go-unwatched-child): child drift finds it not restored after a delete and names the Owns line', async () => {
    const dir = join(ROOT, 'test/fixtures/go-unwatched-child');
    const r = await runChecks(options({ checks: ['childDrift'], go: { command: ['go', 'run', '.'], cwd: dir, env: { KUBECONFIG: cluster.kubeconfigPath } }, reconcilerSpec: { kind: 'go', command: ['go', 'run', '.'] }, convergenceBoundMs: 5_000 }));
    assert.deepEqual(r.findings.map((f) => f.title), ['Not restored after a delete: configmaps/widget-ready-config'], summary(r));
    assert.match(r.findings[0]!.explanation, /did not put it back within 5 s: configmaps\/widget-ready-config: missing after the delete[^]*`Owns\(&corev1\.ConfigMap\{\}\)` in SetupWithManager[^]*No write followed the delete/, r.findings[0]!.explanation);
    assert.match(r.results[0]!.message!, /^1 change\(s\) behind the controller's back not put back; 0 of 1 child\(ren\) restored/, summary(r));
    assert.deepEqual(await scratchOf(r), []);
  });

  // A Get whose NotFound is returned: the reconcile the last delete event queues fails, and is retried with backoff.
  test('samples/buggy/go-fails-when-gone: the deletion check finds the reconciles that fail once the Widget is gone, and names IgnoreNotFound', async () => {
    const dir = join(ROOT, 'samples/buggy/go-fails-when-gone');
    const r = await runChecks(options({ checks: ['runTwice', 'deletion', 'childDrift'], go: { command: ['go', 'run', '.'], cwd: dir, env: { KUBECONFIG: cluster.kubeconfigPath } }, reconcilerSpec: { kind: 'go', command: ['go', 'run', '.'] }, convergenceBoundMs: 5_000 }));
    assert.deepEqual(r.findings.map((f) => f.check), ['deletion'], summary(r));
    const f = r.findings[0]!;
    assert.match(f.title, /^Fails after the object is gone: \d+ of \d+ reconcile\(s\) failed, last with: Widget\.lab\.reconcile\.dev "widget-ready" not found$/, summary(r));
    assert.match(f.explanation, /still retried with backoff[^]*\{ return ctrl\.Result\{\}, client\.IgnoreNotFound\(err\) \}` on the Get of the object/, f.explanation);
    // The crash points during the deletion still run (a failure after the object is gone hides nothing else) and
    // agree: the sample's cleanup is re-entrant.
    assert.match(r.results.find((x) => x.check === 'deletion')!.message!, /^gone \d+ ms after the delete \(the reconciler removed lab\.reconcile\.dev\/cleanup\); the reconcile after it was gone failed; \d+ crash point\(s\) during the deletion, same end state each time$/, summary(r));
    assert.deepEqual(await scratchOf(r), []);
  });

  // The bug only a restart shows: each run is a new process, so the restart run's controller really has an empty memory.
  test('samples/buggy/go-never-prunes-keys: the history check finds the entry a reverted change leaves in a child (CreateOrUpdate merging into the map it read); its path and restart runs and the other checks find nothing', async () => {
    const dir = join(ROOT, 'samples/buggy/go-never-prunes-keys');
    const r = await runChecks(options({ checks: ['runTwice', 'crashAfterWrite', 'unobservedState', 'historyIndependence', 'childDrift'], go: { command: ['go', 'run', '.'], cwd: dir, env: { KUBECONFIG: cluster.kubeconfigPath } }, reconcilerSpec: { kind: 'go', command: ['go', 'run', '.'] }, convergenceBoundMs: 6_000 }));
    assert.deepEqual(r.findings.map((f) => f.check), ['historyIndependence'], summary(r));
    const f = r.findings[0]!;
    // No --transition: the schema-derived change adds a key to spec.data (and changes the color), then sets both back.
    assert.equal(f.title, 'Not undone when the change was reverted: configmaps/widget-ready-env: data.WIDGET_RECONCILE-LAB-ADDED: (absent) before the changes, "added" after they were reverted', summary(r));
    assert.match(f.explanation, /^After spec\.data\.reconcile-lab-added \(added\), spec\.data\.[a-z]+(, spec\.data\.[a-z]+)* changed as the schema allows/, f.explanation);
    assert.match(f.perturbation.description, /then set every field the changes touched back to its value before them/);
    assert.match(f.explanation, /keys or labels merged into a child and never removed[^]*CreateOrUpdate` mutate function gets the object as the server has it: assign whole maps, `cm\.Data = desired`/, f.explanation);
    // After the revert the controller did write: the sample's own child lost the key; the env child got its values back
    // but kept the added entry (an unchanged line of the write's diff).
    assert.ok(f.writes.some((w) => w.resource === 'configmaps' && w.objectKey.endsWith('/widget-ready-config')), JSON.stringify(f.writes));
    const env = f.writes.find((w) => w.objectKey.endsWith('/widget-ready-env'));
    assert.match(env?.diff ?? '', /^\+ {2}WIDGET_COLOR: [a-z]+$/m, JSON.stringify(f.writes));
    assert.match(env?.diff ?? '', /^ {3}WIDGET_RECONCILE-LAB-ADDED: added$/m, JSON.stringify(f.writes));
    assert.match(r.results.find((x) => x.check === 'historyIndependence')!.message!, /^the change was not undone when it was reverted: 1 difference\(s\) from the state before the changes/, summary(r));
    assert.ok(r.parts.some((p) => p.part === 'path run (each change reconciled, then reverted)'), r.parts.map((p) => p.part).join(', '));
    assert.deepEqual(await scratchOf(r), []);
  });

  // A reconcile from a view in which the child's kind lags (the Secrets frozen before the controller created its
  // token) gets AlreadyExists for the controller's own token and records "taken" on the Widget, which later reconciles
  // trust. Before, the stale-cache check had no view in which one kind lags while the rest is current (a whole-cache
  // freeze stops this controller at its finalizer's 409), and no oracle for a state that never comes back: it passed.
  test('samples/buggy/go-already-exists-taken: the stale-cache check finds the decision taken from a lagging child cache that never comes back; no other check does', async () => {
    const dir = join(ROOT, 'samples/buggy/go-already-exists-taken');
    const r = await runChecks(options({ checks: ['runTwice', 'crashAfterWrite', 'staleCache', 'unobservedState'], go: { command: ['go', 'run', '.'], cwd: dir, env: { KUBECONFIG: cluster.kubeconfigPath } }, reconcilerSpec: { kind: 'go', command: ['go', 'run', '.'] } }));
    assert.deepEqual([...new Set(r.findings.map((f) => f.check))], ['staleCache'], summary(r));
    const f = r.findings[0]!;
    // Which stale view shows it first depends on the informers' catch-up order after thaw; each one names its view.
    assert.match(f.title, /^Did not come back to the settled state after a reconcile from a stale view (in which only secrets lagged \(frozen before the controller created them\)|frozen before the controller's own writes): widgets\.lab\.reconcile\.dev\/widget-ready: metadata\.annotations\.lab\.reconcile\.dev\/token: \(absent\) in the reference, "taken" after the perturbation$/, summary(r));
    assert.match(f.explanation, /Failed: create secrets rl-check-[0-9a-f]+\/widget-ready-token: [^]*already exists[^]*an AlreadyExists answer to its create means exactly that, not that someone else owns the name/, f.explanation);
    assert.ok(f.writes.some((w) => w.verb === 'create' && w.resource === 'secrets' && w.outcome === 'error'), JSON.stringify(f.writes));
    assert.ok(r.parts.some((p) => p.part === 'perturbed run (stale cache, secrets only)'), r.parts.map((p) => p.part).join(', '));
    assert.deepEqual(await scratchOf(r), []);
  });

  test('samples/buggy/go-remembers-old-child: the history check\'s restart run finds the old child a controller down during the change never deletes; crash after write and unobserved state do not', async () => {
    const dir = join(ROOT, 'samples/buggy/go-remembers-old-child');
    const r = await runChecks(options({ checks: ['crashAfterWrite', 'unobservedState', 'historyIndependence'], go: { command: ['go', 'run', '.'], cwd: dir, env: { KUBECONFIG: cluster.kubeconfigPath } }, reconcilerSpec: { kind: 'go', command: ['go', 'run', '.'] } }));
    assert.deepEqual(r.findings.map((f) => f.check), ['historyIndependence'], summary(r));
    const f = r.findings[0]!;
    // The schema-derived change (spec.data.color "blue" → "blue-changed") renamed the flavour child.
    assert.equal(f.title, 'Changed while the controller was down: configmaps/widget-ready-blue: exists only after a restart', summary(r));
    assert.match(f.explanation, /landed before a new controller started[^]*a controller watching each change did not leave[^]*a restart, a leader failover or an upgrade loses/, f.explanation);
    assert.match(f.perturbation.description, /while no controller ran, then started a new one/);
    assert.ok(f.writes.some((w) => w.verb === 'create' && w.resource === 'configmaps' && w.objectKey.endsWith('/widget-ready-blue-changed')), JSON.stringify(f.writes));
    assert.ok(f.journal.some((e) => e.kind === 'reconcileStart'), 'the restarted run\'s journal is attached');
    assert.ok(r.parts.some((p) => p.part === 'restart run (the changes made while no controller ran)'), r.parts.map((p) => p.part).join(', '));
    assert.deepEqual(await scratchOf(r), []);
  });
});

// A cluster-scoped primary (samples/go-harbor-operator: a cluster-scoped Harbor whose controller writes a ConfigMap
// in the namespace its spec names, and its status). Before, `check --go` refused every cluster-scoped kind (the
// scratch namespace does not scope cluster-scoped objects). Now the instance's cache sees the copy alone among the
// Harbors, the copy's spec.namespace names the scratch namespace, and the copy is the one object outside it the
// instance may write.
describe('robustness checks on a Go controller of a cluster-scoped kind (samples/go-harbor-operator)', { skip: (!haveGo() && 'go is not installed') || (!existsSync(harborOperatorDir()) && 'samples/go-harbor-operator is not in this tree') }, () => {
  const HARBORS: ResourceInfo = { group: 'fleet.example.io', version: 'v1beta1', resource: 'harbors', kind: 'Harbor', namespaced: false };
  const CONFIGMAPS: ResourceInfo = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true };
  let cluster: TestCluster;
  let c: DynamicKubeClient;
  let bin: string;

  before(async () => {
    cluster = await getTestCluster();
    c = createDynamicClient(cluster.transport, { fieldManager: 'reconcile-lab-test' });
    const crd = parseAllDocuments(readFileSync(join(harborOperatorDir(), 'config', 'crd.yaml'), 'utf8'))[0]!.toJSON() as KubeObject;
    await installCrd(cluster.transport, crd).catch((e: unknown) => {
      if (!/AlreadyExists|already exists/.test(String((e as Error).message))) throw e;
    });
    bin = buildGoProgram(harborOperatorDir(), 'harbor-operator');
  });

  test('every check runs on the copy alone, the copy writes in the scratch namespace, and nothing of the developer\'s changes', async () => {
    const ns = await createNamespace(cluster.transport, 'gochkharbor');
    const name = uniqueName('harbor');
    const mine = await c.create(HARBORS, { apiVersion: 'fleet.example.io/v1beta1', kind: 'Harbor', metadata: { name }, spec: { berths: 3, namespace: ns } });
    const other = await c.create(HARBORS, { apiVersion: 'fleet.example.io/v1beta1', kind: 'Harbor', metadata: { name: `${name}-other` }, spec: { berths: 1, namespace: ns } });
    const command = [bin, '--health-probe-bind-address=0', '--metrics-bind-address=0'];
    const r = await runChecks({
      transport: cluster.transport,
      client: c,
      cluster: { name: 'test', local: true },
      primary: HARBORS,
      keys: [name],
      checks: ['runTwice', 'crashAfterWrite', 'convergence', 'deletion'],
      convergenceBoundMs: 10_000,
      quietMs: 1_000,
      go: { command, env: { KUBECONFIG: cluster.kubeconfigPath } },
      reconcilerSpec: { kind: 'go', command },
    });
    const s = [...r.results.map((x) => `${x.check}: ${x.status}${x.message ? ` (${x.message})` : ''}`), ...r.notes].join('\n');
    assert.equal(r.findings.length, 0, s);
    assert.deepEqual(r.results.map((x) => `${x.check}: ${x.status}`).sort(), ['convergence: passed', 'crashAfterWrite: passed', 'deletion: passed', 'runTwice: passed'], s);
    // The first reconcile writes the ConfigMap and the status: one crash point, between them.
    assert.match(r.results.find((x) => x.check === 'crashAfterWrite')!.message!, /^1 crash point\(s\)/, s);
    assert.ok(r.notes.some((n) => n === `${name} is cluster-scoped: in its copies spec.namespace (${ns}) names the run's scratch namespace instead, so its controller writes there and never in your namespace.`), s);
    assert.deepEqual((await c.list(CONFIGMAPS, ns)).items.map((x) => x.metadata.name).filter((n) => n !== 'kube-root-ca.crt'), [], 'no ConfigMap was written in the developer\'s namespace');
    assert.equal((await c.get(HARBORS, undefined, name)).metadata.resourceVersion, mine.metadata.resourceVersion, 'the checked Harbor untouched');
    assert.equal((await c.get(HARBORS, undefined, other.metadata.name!)).metadata.resourceVersion, other.metadata.resourceVersion, 'another Harbor untouched');
    assert.deepEqual((await c.list(HARBORS, undefined)).items.map((h) => h.metadata.name).filter((n) => n!.startsWith('rl-check-')), [], 'the copies are deleted');
  });
});
