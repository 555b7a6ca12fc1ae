import { before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createNamespace, getTestCluster, installCrd, testCrd, uniqueName, type TestCluster } from './support/cluster.ts';
import type { Reconciler } from '../../src/core/controller/reconcile.ts';
import { writeStatusIfChanged } from '../../src/core/reconcilers/statusWriter.ts';
import { client as makeClient, installLabCrd, ROOT, sampleWidgets, type LabCrd } from './reconcilers.support.ts';
import type { DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import { runChecks, CheckRefusedError } from '../../src/core/checks/runChecks.ts';
import type { CheckKind, CheckReport, RunChecksOptions } from '../../src/core/checks/types.ts';
import { SCRATCH_OWNER_ANNOTATION } from '../../src/core/checks/leftovers.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { createLabReconciler } from '../../src/core/reconcilers/labReconciler.ts';
import { createModuleReconciler } from '../../src/core/reconcilers/moduleReconciler.ts';
import { createExecReconciler } from '../../src/core/reconcilers/execReconciler.ts';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolveBinaries } from '../../src/core/controlplane/localControlPlane.ts';

const have = (cmd: string, args: string[], env?: NodeJS.ProcessEnv) => spawnSync(cmd, args, { stdio: 'ignore', env }).status === 0;
/** kubectl from the control plane's multicall binary (as the exec suite does), else PATH. */
async function toolPath(): Promise<string> {
  try {
    const [bin] = (await resolveBinaries()).apiserver;
    if (bin && have(bin, ['kubectl', 'version', '--client'])) {
      const dir = mkdtempSync(join(tmpdir(), 'rl-kubectl-'));
      writeFileSync(join(dir, 'kubectl'), `#!/bin/sh\nexec '${bin}' kubectl "$@"\n`, { mode: 0o755 });
      return `${dir}:${process.env.PATH ?? ''}`;
    }
  } catch {
    // no multicall binary: fall back to PATH
  }
  return process.env.PATH ?? '';
}

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

/**
 * A reconciler that counts the spec changes (generations) it saw in memory, which a new controller starts without,
 * and writes the count into its child ConfigMap `<name>-edits`, read fresh from the server and updated with its
 * resourceVersion: a stale cache or one coalesced update of two changes makes it write a different count.
 */
function countsSpecChanges(): Reconciler {
  let lastGeneration: number | undefined;
  let edits = 0;
  return {
    name: 'counts-spec-changes',
    async reconcile(req, ctx) {
      let w: KubeObject;
      try {
        w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal);
      } catch (e) {
        if ((e as { code?: number }).code === 404) return {};
        throw e;
      }
      if (w.metadata.deletionTimestamp) return {};
      if (lastGeneration !== undefined && lastGeneration !== w.metadata.generation) edits++;
      lastGeneration = w.metadata.generation;
      const name = `${req.name}-edits`;
      const data = { edits: String(edits) };
      let child: KubeObject | undefined;
      try {
        child = await ctx.client.get(CONFIGMAPS, req.namespace, name, ctx.signal);
      } catch (e) {
        if ((e as { code?: number }).code !== 404) throw e;
      }
      const owner = [{ apiVersion: w.apiVersion!, kind: w.kind!, name: req.name, uid: w.metadata.uid!, controller: true }];
      if (!child) await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: req.namespace, ownerReferences: owner }, data }, { signal: ctx.signal });
      else if ((child as { data?: Record<string, string> }).data?.edits !== data.edits) await ctx.client.update(CONFIGMAPS, { ...child, data }, { signal: ctx.signal });
      return {};
    },
  };
}

describe('robustness checks (issue 11) on the real control plane', () => {
  let cluster: TestCluster;
  let c: DynamicKubeClient;
  let crd: LabCrd;
  let ns: string;

  before(async () => {
    cluster = await getTestCluster();
    c = makeClient(cluster.transport);
    crd = await installLabCrd(cluster.transport);
    ns = await createNamespace(cluster.transport, 'checks');
    for (const w of sampleWidgets(crd, ns)) await c.create(crd.gvr, w);
  });

  function options(o: Partial<RunChecksOptions> & Pick<RunChecksOptions, 'createReconciler' | 'reconcilerSpec'>): RunChecksOptions {
    return {
      transport: cluster.transport,
      client: c,
      cluster: { name: 'test', local: true },
      primary: { ...crd.gvr, kind: 'Widget', namespaced: true },
      keys: [`${ns}/widget-ready`],
      convergenceBoundMs: 8_000,
      quietMs: 600,
      ...o,
    };
  }

  function summary(r: CheckReport): string {
    return r.results.map((x) => `${x.check}: ${x.status}${x.message ? ` (${x.message})` : ''}${x.findings.map((f) => `\n    ${f.severity} ${f.title}`).join('')}`).join('\n');
  }

  /**
   * Scratch namespaces that exist and are not being deleted; those of other runs on a shared cluster excluded: made
   * before (scratchBefore) or by another process (their owner annotation names its pid).
   */
  async function liveScratch(): Promise<Set<string>> {
    const mine = (n: KubeObject) => {
      try {
        return (JSON.parse(n.metadata.annotations?.[SCRATCH_OWNER_ANNOTATION] ?? '{}') as { pid?: number }).pid === process.pid;
      } catch {
        return true;
      }
    };
    return new Set((await c.list(NAMESPACES, undefined, { labelSelector: 'checks.reconcile-lab.dev/scratch=true' })).items.filter((n) => !n.metadata.deletionTimestamp && mine(n)).map((n) => n.metadata.name!));
  }
  let scratchBefore = new Set<string>();
  beforeEach(async () => {
    scratchBefore = await liveScratch();
  });
  async function scratchLeft(): Promise<string[]> {
    return [...(await liveScratch())].filter((n) => !scratchBefore.has(n));
  }

  test('the lab reconciler: zero findings, copies cleaned up, the original untouched', async () => {
    const before = await c.get(crd.gvr, ns, 'widget-ready');
    const r = await runChecks(options({ createReconciler: () => createLabReconciler(), reconcilerSpec: { kind: 'lab' } }));
    assert.equal(r.findings.length, 0, summary(r));
    assert.equal(r.totals.errors, 0, summary(r));
    assert.equal(r.results.find((x) => x.check === 'crashAfterWrite')?.status, 'passed', summary(r));
    // Deletion: the lab reconciler's own finalizer is removed after its cleanup, and the copy is gone in the bound.
    const del = r.results.find((x) => x.check === 'deletion');
    assert.equal(del?.status, 'passed', summary(r));
    assert.match(del!.message!, /^gone \d+ ms after the delete \(the reconciler removed lab\.reconcile\.dev\/cleanup\)/, summary(r));
    // It cleans up before it removes the finalizer: crashed after each write of its deletion, it still cleans up.
    assert.match(del!.message!, /; [1-8] crash point\(s\) during the deletion, same end state each time$/, summary(r));
    // Child drift: its owned child, deleted and then changed behind its back, is put back each time.
    assert.match(r.results.find((x) => x.check === 'childDrift')?.message ?? '', /^(\d) of \1 child\(ren\) restored within [\d.]+ s of a change behind the controller's back \(deleted configmaps\/widget-ready[^:]*: recreated; changed data\.[^ ]+ of configmaps\/widget-ready[^:]*: put back/, summary(r));
    assert.deepEqual(await scratchLeft(), []);
    assert.equal((await c.get(crd.gvr, ns, 'widget-ready')).metadata.resourceVersion, before.metadata.resourceVersion);
    assert.ok(!r.notes.some((n) => /changed by a writer the checks did not run/.test(n)), `no other writer was there: ${r.notes.join('\n')}`);
  });

  test('another writer acting on the scratch copies (a second instance of the controller watching every namespace) is named in the notes', async () => {
    // The "second instance": it marks every Widget in a scratch namespace, as a controller reconciling all namespaces would write it.
    let stop = false;
    const marked = new Set<string>();
    const rogue = (async () => {
      while (!stop) {
        for (const w of (await c.list(crd.gvr, undefined)).items) {
          const wns = w.metadata.namespace ?? '';
          if (!wns.startsWith('rl-check-') || marked.has(`${wns}/${w.metadata.name}`)) continue;
          marked.add(`${wns}/${w.metadata.name}`);
          await c.patch(crd.gvr, wns, w.metadata.name!, 'merge', { metadata: { annotations: { 'rogue.example.io/seen': 'yes' } } }).catch(() => {});
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      const r = await runChecks(options({ createReconciler: () => createLabReconciler(), reconcilerSpec: { kind: 'lab' }, checks: ['runTwice'] }));
      assert.ok(marked.size > 0, 'the other writer reached a scratch copy');
      assert.ok(r.notes.some((n) => new RegExp(`^The scratch copy of ${ns}/widget-ready was changed by a writer the checks did not run .*another instance of this controller`).test(n)), r.notes.join('\n'));
    } finally {
      stop = true;
      await rogue;
    }
    assert.deepEqual(await scratchLeft(), []);
  });

  async function moduleOptions(file: string, keys?: string[]): Promise<RunChecksOptions> {
    const path = join(ROOT, file);
    const probe = createModuleReconciler({ path });
    const config = await probe.controllerConfig();
    probe.dispose();
    return options({
      createReconciler: () => createModuleReconciler({ path }),
      reconcilerSpec: { kind: 'module', path: file },
      predicates: config.predicates,
      ...(config.checkTransitions ? { transitions: config.checkTransitions } : {}),
      ...(keys ? { keys } : {}),
    });
  }

  test('samples/module-reconciler.ts: zero findings', async () => {
    const r = await runChecks(await moduleOptions('samples/module-reconciler.ts'));
    assert.equal(r.findings.length, 0, summary(r));
    assert.match(r.results.find((x) => x.check === 'deletion')?.message ?? '', /no metadata.finalizers to remove/, summary(r));
    assert.equal(r.totals.errors, 0, summary(r));
    assert.deepEqual(await scratchLeft(), []);
  });

  test('samples/exec-reconciler.sh: zero findings', async (t) => {
    const PATH = await toolPath();
    if (!have('kubectl', ['version', '--client'], { ...process.env, PATH }) || !have('jq', ['--version'])) return t.skip('kubectl or jq not installed');
    const r = await runChecks(options({
      createReconciler: () => createExecReconciler({ command: [join(ROOT, 'samples/exec-reconciler.sh')], kubeconfigPath: cluster.kubeconfigPath, env: { PATH } }),
      reconcilerSpec: { kind: 'exec', command: ['samples/exec-reconciler.sh'] },
      // Each reconcile runs several kubectl processes: seconds apiece on a loaded machine.
      convergenceBoundMs: 60_000,
      quietMs: 1_500,
    }));
    assert.equal(r.findings.length, 0, summary(r));
    assert.equal(r.totals.errors, 0, summary(r));
  });

  test('an exec program that rewrites its child with kubectl on every pass: the convergence finding names the update that keeps queueing the key', async (t) => {
    const PATH = await toolPath();
    if (!have('kubectl', ['version', '--client'], { ...process.env, PATH })) return t.skip('kubectl not installed');
    // A user's program: applies its child with a new timestamp annotation every pass (the write is not Reconcile Lab's).
    const program = join(mkdtempSync(join(tmpdir(), 'rl-check-exec-')), 'stamp-child.mjs');
    writeFileSync(program, [
      "import { spawnSync } from 'node:child_process';",
      "let input = '';",
      'for await (const b of process.stdin) input += b;',
      'const { object: o } = JSON.parse(input);',
      "if (o) spawnSync('kubectl', ['apply', '-f', '-'], { stdio: ['pipe', 2, 2], input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap',",
      "  metadata: { name: o.metadata.name + '-plan', namespace: o.metadata.namespace, annotations: { 'walk/last-run': String(process.hrtime.bigint()) },",
      '    ownerReferences: [{ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid, controller: true }] } }) });',
      "console.log('{}');",
      '',
    ].join('\n'));
    const r = await runChecks(options({
      createReconciler: () => createExecReconciler({ command: [process.execPath, program], kubeconfigPath: cluster.kubeconfigPath, env: { PATH } }),
      reconcilerSpec: { kind: 'exec', command: ['node', program] },
      checks: ['convergence'],
      convergenceBoundMs: 5_000,
    }));
    const f = r.findings.find((x) => x.check === 'convergence');
    assert.ok(f, summary(r));
    assert.match(f.title, /^Never goes idle: (\d+) reconciles in 5 s, (\d+) started by an update of owned ConfigMap rl-check-[0-9a-f]+\/widget-ready-plan$/, f.title);
    assert.match(f.explanation, /reconciles were started by an update of owned ConfigMap rl-check-[0-9a-f]+\/widget-ready-plan, while the run made no write through Reconcile Lab's client: [^]*an exec program's own kubectl write[^]*a hot loop/);
    assert.doesNotMatch(f.explanation, /still running when the bound|call that never returns/);
  });

  // `also`: checks that rightly report the same sample too. Samples that never update a child they created (a
  // create-only child, besides their own bug) are found by history independence (the end state depends on the path)
  // and child drift (an edited child is not put back); a child without an ownerReference is not watched, so child
  // drift finds it not restored after a delete.
  const buggy: Array<{ file: string; check: CheckKind; title: RegExp; explanation: RegExp; also?: CheckKind[] }> = [
    // Its reports have no ownerReference: the deletion check finds the one made for the copy left behind (it names the
    // object the server made, soil-2rnzn, not the generateName prefix).
    { file: 'samples/buggy/generate-name-every-pass.ts', check: 'runTwice', title: /Second reconcile created another configmaps \(generateName "widget-ready-report-"\)/, explanation: /idempotent/, also: ['deletion'] },
    { file: 'samples/buggy/interrupted-sequence.ts', check: 'crashAfterWrite', title: /Interrupted after write 1 of 2/, explanation: /status[^]*missing in the perturbed run|status\.childName/, also: ['historyIndependence', 'childDrift'] },
    { file: 'samples/buggy/stale-cache-delete.ts', check: 'staleCache', title: /Deleted configmaps .*widget-ready-[0-9a-f]{8} from a stale view/, explanation: /lagged behind the server/, also: ['childDrift'] },
    { file: 'samples/buggy/cached-child-lookup.ts', check: 'staleCache', title: /Created an extra object from a stale view frozen before the controller's own writes: configmaps\/widget-ready-cache-<generated #2>/, explanation: /lags behind your own writes[^]*generateName makes a second one/, also: ['historyIndependence'] },
    { file: 'samples/buggy/missed-transition.ts', check: 'unobservedState', title: /End state depends on seeing an intermediate state/, explanation: /maintenanceWindows/, also: ['historyIndependence'] },
    { file: 'samples/buggy/rewrites-spec.ts', check: 'unobservedState', title: /Undid your change: spec\.data\.color \(update widgets/, explanation: /spec\.data\.color = "blue" instead of "Blue"[^]*fights every kubectl apply/ },
    { file: 'samples/buggy/status-every-reconcile.ts', check: 'convergence', title: /Never converges: \d+ × update widgets\S* \S+ \(status\)/, explanation: /hot loop[^]*status\.conditions\[0\]\.message/ },
    { file: 'samples/buggy/never-removes-finalizer.ts', check: 'deletion', title: /^Stays Terminating: finalizer buggy\.reconcile-lab\.dev\/cleanup is never removed \(the reconciler did not handle deletionTimestamp\)$/, explanation: /still exists with deletionTimestamp set[^]*remove the finalizer/, also: ['historyIndependence', 'childDrift'] },
    { file: 'samples/buggy/conflict-gives-up.ts', check: 'staleCache', title: /^update widgets\.[a-z0-9.-]+ rl-check-[0-9a-f]+\/widget-ready \(status\) got 409 Conflict from a stale view and the reconciler stopped retrying: the key never converged$/, explanation: /answered 409 Conflict[^]*returned a terminal error, so the key was not retried; no later event queued the key again[^]*status\.observedGeneration: the object's metadata\.generation in the reference, 1 after the perturbation[^]*read again and retry/ },
    { file: 'samples/buggy/create-only-child.ts', check: 'historyIndependence', title: /^The path mattered: configmaps\/widget-ready-settings: data\.[a-z]+: "[^"]*-changed" when created with that spec, "[^"]*" after the changes$/, explanation: /spec\.data\.[a-z]+ changed as the schema allows[^]*created with that final spec[^]*never updated when the spec changes[^]*These changes were chosen from the CRD's schema; if a changed field names another object \(a reference\)[^]*--transition '<JSON merge patch>' \(CLI\), the setting reconcileLab\.checks\.transitions, or a module's checkTransitions export\.$/, also: ['childDrift'] },
    { file: 'samples/buggy/remembers-old-child.ts', check: 'historyIndependence', title: /^Changed while the controller was down: configmaps\/widget-ready-standard: exists only after a restart$/, explanation: /1 change\(s\) \(\{"spec":\{"data":\{"profile":"large"\}\}\}\) landed before a new controller started[^]*a controller watching each change did not leave[^]*a restart, a leader failover or an upgrade loses[^]*by label or ownerReference/ },
    { file: 'samples/buggy/never-prunes-keys.ts', check: 'historyIndependence', title: /^Not undone when the change was reverted: configmaps\/widget-ready-settings: data\.tier: \(absent\) before the changes, "gold" after they were reverted$/, explanation: /1 change\(s\) \(\{"spec":\{"data":\{"tier":"gold"\}\}\}\), each reconciled, every field the changes touched was set back[^]*recovery oracle[^]*keys or labels merged into a child and never removed/ },
    // Its predicate drops the annotation's update after a stale reconcile too: the stale-cache check finds it not settling back.
    { file: 'samples/buggy/ignores-annotation-changes.ts', check: 'historyIndependence', title: /^The path mattered: configmaps\/widget-ready-sign: data\.state: "paused" when created with that spec, "active" after the changes$/, explanation: /1 change\(s\) \(\{"metadata":\{"annotations":\{"lab\.reconcile\.dev\/paused":"true"\}\}\}\)[^]*a child made only when it is missing[^]*lets only one edge of a field through[^]*The changes touched metadata only, which makes no new generation: a filter on generation[^]*AnnotationChangedPredicate/, also: ['staleCache'] },
    { file: 'samples/buggy/skips-when-done.ts', check: 'childDrift', title: /^Not restored after a delete: configmaps\/widget-ready-settings$/, explanation: /was deleted[^]*did not put it back within[^]*configmaps\/widget-ready-settings: missing after the delete[^]*skips its work when the object's status says it is done[^]*No write followed the delete/ },
    { file: 'samples/buggy/fails-when-gone.ts', check: 'deletion', title: /^Fails after the object is gone: \d+ of \d+ reconcile\(s\) failed, last with: .*not found/, explanation: /its last delete event queued the key once more[^]*for as long as the process runs[^]*catch the 404 of `ctx\.client\.get\(/ },
    { file: 'samples/buggy/child-without-owner.ts', check: 'deletion', title: /^Left behind after the delete: configmaps\/widget-ready-settings \(created by the controller, no ownerReference\)$/, explanation: /no ownerReference[^]*stays for good[^]*metadata\.ownerReferences: \[\{ apiVersion, kind, name, uid, controller: true \}\][^]*ctx\.client\.create/, also: ['childDrift'] },
    { file: 'samples/buggy/removes-finalizer-first.ts', check: 'deletion', title: /^Crash during the deletion after write 1 of 2 \(patch widgets\.[a-z0-9.-]+ rl-check-[0-9a-f]+\/widget-ready\): configmaps\/widget-ready-registry is left behind$/, explanation: /Write 1 removed the last finalizer[^]*no reconcile of it ever runs again[^]*remove the finalizer last/, also: ['childDrift'] },
  ];
  for (const b of buggy) {
    test(`${b.file}: caught by ${b.check} only, with an explanation`, async () => {
      const advice = 'ADVICE: run again with --predicate generation-changed';
      const r = await runChecks({ ...(await moduleOptions(b.file)), predicateAdvice: advice });
      const checks = [...new Set(r.findings.map((f) => f.check))].sort();
      assert.deepEqual(checks, [b.check, ...(b.also ?? [])].sort(), summary(r));
      const f = r.findings.find((x) => x.check === b.check)!;
      assert.equal(f.key, `${ns}/widget-ready`);
      assert.match(f.title, b.title, summary(r));
      assert.match(f.explanation, b.explanation, f.explanation);
      assert.match(f.reproduce, new RegExp(`^reconcile-lab check ${ns}/widget-ready --check ${b.check}`));
      assert.ok(f.journal.some((e) => e.kind === 'reconcileStart'), 'the perturbed run\'s journal is attached');
      // Any hot-loop warning of the checks' own loop advises as the caller says (a flag, a setting), not with the library call.
      const hot = f.journal.filter((e) => e.kind === 'warning' && /generation-changed predicate/.test(e.message));
      for (const w of hot) assert.ok(w.kind === 'warning' && w.message.includes(advice) && !w.message.includes('controllerBuilder'), JSON.stringify(w));
      assert.equal(r.totals.errors, 0, summary(r));
      assert.deepEqual(await scratchLeft(), []);
      if (b.check === 'deletion') {
        // The stuck copy was ours: its finalizer was stripped afterwards, so no copy is left Terminating; yours is untouched.
        const stuck = (await c.list(crd.gvr, undefined)).items.filter((w) => w.metadata.namespace?.startsWith('rl-check-') && w.metadata.finalizers?.includes('buggy.reconcile-lab.dev/cleanup'));
        assert.deepEqual(stuck.map((w) => `${w.metadata.namespace}/${w.metadata.name}`), []);
        const mine = await c.get(crd.gvr, ns, 'widget-ready');
        assert.equal(mine.metadata.deletionTimestamp, undefined);
        assert.ok(!mine.metadata.finalizers?.includes('buggy.reconcile-lab.dev/cleanup'), 'your own object was never reconciled by the check');
      }
    });
  }

  test('deletion, crashed during it: a cleanup that is not re-entrant leaves the copy Terminating; the finding names it, its finalizer and what the restarted controller did', async () => {
    const r = await runChecks({ ...(await moduleOptions('samples/buggy/cleanup-not-reentrant.ts')), checks: ['deletion'] });
    assert.equal(r.findings.length, 1, summary(r));
    const f = r.findings[0]!;
    assert.match(f.title, /^Crash during the deletion after write 1 of 2 \(delete configmaps rl-check-[0-9a-f]+\/widget-ready-stand\): widgets\.[a-z0-9.-]+ rl-check-[0-9a-f]+\/widget-ready stays Terminating: finalizer buggy\.reconcile-lab\.dev\/stand is never removed$/, summary(r));
    assert.match(f.explanation, /still exists with deletionTimestamp set and finalizer buggy\.reconcile-lab\.dev\/stand: the restarted controller's \d+ reconcile\(s\) succeeded and wrote nothing[^]*returns early when what it cleans up is already gone[^]*treat "already gone" as success and go on: a 404 of the cleanup's `ctx\.client\.delete` is done\), remove the finalizer last\.$/, f.explanation);
    assert.equal(r.totals.errors, 0, summary(r));
    assert.deepEqual(await scratchLeft(), []);
  });

  test('deletion: a reconcile that fails once the object is gone does not hide a finalizer removed before the cleanup; both are found', async () => {
    const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
    const FIN = 'walk.reconcile-lab.dev/entry';
    const reconciler = (): Reconciler => ({
      name: 'two-deletion-bugs',
      async reconcile(req, ctx) {
        const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal); // BUG 1: the 404 once it is gone is thrown
        const finalizers = w.metadata.finalizers ?? [];
        const entry = `${req.name}-entry`;
        if (w.metadata.deletionTimestamp) {
          if (!finalizers.includes(FIN)) return {};
          // BUG 2: the finalizer comes off before the cleanup.
          await ctx.client.patch(ctx.primary, req.namespace, req.name, 'merge', { metadata: { resourceVersion: w.metadata.resourceVersion, finalizers: finalizers.filter((f) => f !== FIN) } }, { signal: ctx.signal });
          await ctx.client.delete(CONFIGMAPS, req.namespace, entry, { signal: ctx.signal }).catch((e: { code?: number }) => {
            if (e.code !== 404) throw e;
          });
          return {};
        }
        if (!finalizers.includes(FIN)) {
          await ctx.client.patch(ctx.primary, req.namespace, req.name, 'merge', { metadata: { resourceVersion: w.metadata.resourceVersion, finalizers: [...finalizers, FIN] } }, { signal: ctx.signal });
          return {};
        }
        await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: entry, namespace: req.namespace }, data: { of: req.name } }, { signal: ctx.signal }).catch((e: { code?: number }) => {
          if (e.code !== 409) throw e;
        });
        return {};
      },
    });
    const r = await runChecks(options({ createReconciler: reconciler, reconcilerSpec: { kind: 'module', path: 'two-deletion-bugs.ts' }, checks: ['deletion'], convergenceBoundMs: 5_000 }));
    const titles = r.findings.map((f) => f.title);
    assert.equal(r.findings.length, 2, summary(r));
    assert.match(titles[0]!, /^Fails after the object is gone: /, summary(r));
    assert.match(titles[1]!, /^Crash during the deletion after write 1 of 2 \(patch widgets\.[a-z0-9.-]+ rl-check-[0-9a-f]+\/widget-ready\): configmaps\/widget-ready-entry is left behind$/, summary(r));
    assert.equal(r.totals.errors, 0, summary(r));
    assert.deepEqual(await scratchLeft(), []);
  });

  test('stale cache without --transition: the spec change derived from the CRD\'s schema drives it, so a deletion decided from a stale spec is found (with titles that tell the views apart)', async () => {
    // The sample's own checkTransitions left out: only the schema-derived change is there to expose the bug.
    const r = await runChecks({ ...(await moduleOptions('samples/buggy/stale-cache-delete.ts')), transitions: undefined, checks: ['staleCache'] });
    const found = r.findings.filter((f) => f.check === 'staleCache');
    assert.ok(found.some((f) => /^Deleted configmaps rl-check-[0-9a-f]+\/widget-ready-[0-9a-f]{8} from a stale view frozen (where the controller had settled|before the controller's own writes) \(/.test(f.title)), summary(r));
    assert.equal(new Set(found.map((f) => f.title)).size, found.length, `each finding's title names its view: ${summary(r)}`);
    assert.match(found[0]!.perturbation.description, /"-changed"|-changed/, found[0]!.perturbation.description);
    assert.equal(r.totals.errors, 0, summary(r));
    assert.deepEqual(await scratchLeft(), []);
  });

  test('crash after write: a fixed-name create that treats AlreadyExists as an error; the finding names the error the restarted controller kept getting', async () => {
    const cms = { group: '', version: 'v1', resource: 'configmaps' };
    const reconciler = (): Reconciler => ({
      name: 'already-exists-is-an-error',
      async reconcile(req, ctx) {
        const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal);
        if ((w.status as { childName?: string } | undefined)?.childName) return {};
        // BUG: "no status yet" is taken to mean "no child yet"; after a crash between the two writes the create fails forever.
        await ctx.client.create(cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${req.name}-settings`, namespace: req.namespace }, data: {} }, { signal: ctx.signal });
        await ctx.client.updateStatus(ctx.primary, { ...w, status: { childName: `${req.name}-settings` } }, { signal: ctx.signal });
        return {};
      },
    });
    const r = await runChecks(options({ createReconciler: reconciler, reconcilerSpec: { kind: 'module', path: 'already-exists.ts' }, checks: ['crashAfterWrite'], convergenceBoundMs: 6_000 }));
    const f = r.findings.find((x) => x.check === 'crashAfterWrite');
    assert.ok(f, summary(r));
    assert.match(f.title, /Interrupted after write 1 of 2, the restarted controller never settles/);
    assert.match(f.explanation, /reconciles failed \d+ time\(s\) \(retried with backoff\), last with: [^]*already exists[^]*an AlreadyExists answer to a create means the earlier run got that far/, f.explanation);
    assert.deepEqual(await scratchLeft(), []);
  });

  test('child drift: a child the controller does not watch (no ownerReference) but looks at on a periodic requeue is put back when that requeue comes within the bound (its status counting the creates is not drift); beyond it, the finding names the requeue', async () => {
    const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
    const periodic = (everyMs: number) => (): Reconciler => ({
      name: `periodic-${everyMs}`,
      async reconcile(req, ctx) {
        const name = `${req.name}-periodic`;
        try {
          await ctx.client.get(CONFIGMAPS, req.namespace, name, ctx.signal);
        } catch (e) {
          if ((e as { code?: number }).code !== 404) throw e;
          // No ownerReference: the loop is never told about this child. No data either: only its delete is tried.
          await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: req.namespace } }, { signal: ctx.signal });
          // A count of its creates in status (the Widget's schema keeps childName): what the controller records
          // about the child is not drift.
          const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal);
          const creates = Number(/created (\d+)/.exec((w.status as { childName?: string } | undefined)?.childName ?? '')?.[1] ?? 0) + 1;
          await ctx.client.updateStatus(ctx.primary, { ...w, status: { ...(w.status as object | undefined), childName: `${name}, created ${creates} time(s)` } }, { signal: ctx.signal });
        }
        return { requeueAfterMs: everyMs, reason: 'look again' };
      },
    });
    const soon = await runChecks(options({ createReconciler: periodic(2_000), reconcilerSpec: { kind: 'module', path: 'periodic.ts' }, checks: ['childDrift'], convergenceBoundMs: 8_000 }));
    assert.equal(soon.results[0]!.status, 'passed', summary(soon));
    assert.match(soon.results[0]!.message!, /^1 of 1 child\(ren\) restored within 8 s of a change behind the controller's back \(deleted configmaps\/widget-ready-periodic: recreated\)$/, summary(soon));
    const late = await runChecks(options({ createReconciler: periodic(60_000), reconcilerSpec: { kind: 'module', path: 'periodic.ts' }, checks: ['childDrift'], convergenceBoundMs: 4_000 }));
    const f = late.findings.find((x) => x.check === 'childDrift');
    assert.ok(f, summary(late));
    assert.equal(f.title, 'Not restored after a delete: configmaps/widget-ready-periodic');
    assert.match(f.explanation, /did not put it back within 4 s: configmaps\/widget-ready-periodic: missing after the delete[^]*No write followed the delete[^]*Its next reconcile was a requeue-after (59|60) s after the change, beyond the bound/, f.explanation);
    // The child has no ownerReference: that is the cause named first, and the generic "needs an ownerReference" item is not repeated.
    assert.match(f.explanation, /restores what someone else removed\. configmaps\/widget-ready-periodic has no ownerReference with controller: true, so Reconcile Lab's loop[^]*Other causes: a predicate or event filter/, f.explanation);
    assert.doesNotMatch(f.explanation, /the child needs an ownerReference/, f.explanation);
    assert.deepEqual(await scratchLeft(), []);
  });

  test('stale cache: a child written from a fresh read (its latest resourceVersion) with a value kept in memory is explained by the memory a new controller lacks, not by a missing precondition', async () => {
    const r = await runChecks(options({ createReconciler: countsSpecChanges, reconcilerSpec: { kind: 'module', path: 'counts-spec-changes.ts' }, checks: ['staleCache'] }));
    const f = r.findings.find((x) => x.check === 'staleCache' && /overwrote newer state/.test(x.title));
    assert.ok(f, summary(r));
    assert.match(f.title, /^update configmaps rl-check-[0-9a-f]+\/widget-ready-edits overwrote newer state with stale values from a view frozen where the controller had settled \(data\.edits\)$/, f.title);
    assert.match(f.explanation, /with the latest resourceVersion \(\d+\) as its precondition[^]*state kept in memory between reconciles/, f.explanation);
    assert.doesNotMatch(f.explanation, /without a resourceVersion precondition/, f.explanation);
    assert.deepEqual(await scratchLeft(), []);
  });

  test('unobserved state without transitions: the schema\'s spec change, then a second one, finds a reconciler that counts the spec changes it saw; a level-based one passes', async () => {
    const r = await runChecks(options({ createReconciler: countsSpecChanges, reconcilerSpec: { kind: 'module', path: 'counts.ts' }, checks: ['unobservedState'] }));
    const f = r.findings.find((x) => x.check === 'unobservedState');
    assert.ok(f, summary(r));
    assert.equal(f.title, 'End state depends on seeing an intermediate state');
    assert.match(f.explanation, /configmaps\/widget-ready-edits: data\.edits: "2" in the reference, "1" after the perturbation/, f.explanation);
    assert.match(f.perturbation.description, /applied 2 changes to the copy \(\{"spec":[^]*\} → \{"spec":[^]*\}\) while its update events were withheld/, f.perturbation.description);
    assert.doesNotMatch(f.perturbation.description, /null/, 'the second change moves on, it does not set the first back');
    const lab = await runChecks(options({ createReconciler: () => createLabReconciler(), reconcilerSpec: { kind: 'lab' }, checks: ['unobservedState'] }));
    assert.equal(lab.findings.length, 0, summary(lab));
    assert.match(lab.results[0]!.message!, /^spec\.[^]* changed as the schema allows, then changed again: 2 state change\(s\), \d+ update event\(s\) withheld, same end state$/, summary(lab));
    assert.deepEqual(await scratchLeft(), []);
  });

  test('convergence: a reconcile that writes once (its finalizer) and then fails every time is named as failing, not as a hot loop of writes', async () => {
    const reconciler = (): Reconciler => ({
      name: 'fails-after-finalizer',
      async reconcile(req, ctx) {
        const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal);
        if (!w.metadata.finalizers?.includes('example.org/keep')) {
          await ctx.client.update(ctx.primary, { ...w, metadata: { ...w.metadata, finalizers: ['example.org/keep'] } }, { signal: ctx.signal });
        }
        if (w.metadata.deletionTimestamp) {
          await ctx.client.update(ctx.primary, { ...w, metadata: { ...w.metadata, finalizers: [] } }, { signal: ctx.signal });
          return {};
        }
        throw new Error('broker unreachable at amqp://queue:5672');
      },
    });
    const r = await runChecks(options({ createReconciler: reconciler, reconcilerSpec: { kind: 'module', path: 'fails-after-finalizer.ts' }, checks: ['convergence'], convergenceBoundMs: 4_000 }));
    const f = r.findings.find((x) => x.check === 'convergence');
    assert.ok(f, summary(r));
    assert.match(r.results[0]!.message!, /^not idle after 4000 ms: the reconcile keeps failing$/, summary(r));
    assert.match(f.title, /^Never converges: \d+ of \d+ reconciles failed in 4 s, last with: broker unreachable at amqp:\/\/queue:5672$/, f.title);
    assert.match(f.explanation, /ended in an error \(the last one too\); an error is retried with backoff[^]*return \{ requeueAfterMs, reason \} \(or throw an error with terminal: true/, f.explanation);
    assert.doesNotMatch(f.explanation, /RequeueAfter|TerminalError/, 'a module is told in its own protocol\'s terms');
    assert.doesNotMatch(f.explanation, /hot loop|kept writing/, f.explanation);
    assert.deepEqual(await scratchLeft(), []);
  });

  test('convergence: a module file whose reconcile() returns a malformed Result is told to fix the file, not to return a requeue', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-malformed-'));
    const path = join(dir, 'pizza.ts');
    writeFileSync(path, 'export async function reconcile() {\n  return { requeueAfter: 5000 };\n}\n');
    const r = await runChecks(options({ createReconciler: () => createModuleReconciler({ path }), reconcilerSpec: { kind: 'module', path }, checks: ['convergence'], convergenceBoundMs: 3_000 }));
    const f = r.findings.find((x) => x.check === 'convergence');
    assert.ok(f, summary(r));
    assert.match(f.title, /^Never converges: \d+ of \d+ reconciles failed in 3 s, last with: \S+pizza\.ts: reconcile\(\) returned a Result with unknown field "requeueAfter" \(did you mean "requeueAfterMs"\?\)/, f.title);
    assert.match(f.explanation, /The error is about the module itself, not the object[^]*Fix the module file/, f.explanation);
    assert.doesNotMatch(f.explanation, /instead of throwing|RequeueAfter/, f.explanation);
    assert.deepEqual(await scratchLeft(), []);
  });

  test('convergence: a reconcile that never returns is named so; with the loop\'s reconcile deadline the checks abort ctx.signal too, and a reconcile that passes it on fails with its error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-hangs-'));
    const path = join(dir, 'oven.ts');
    writeFileSync(path, "export async function reconcile(req, ctx) {\n  await new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('the oven never got hot'))));\n  return {};\n}\n");
    const base = { createReconciler: () => createModuleReconciler({ path }), reconcilerSpec: { kind: 'module' as const, path }, checks: ['convergence' as CheckKind], convergenceBoundMs: 3_000 };
    const hangs = await runChecks(options(base));
    const h = hangs.findings.find((x) => x.check === 'convergence');
    assert.ok(h, summary(hangs));
    assert.match(h.title, /^Never returns: a reconcile was still running when the bound of 3 s passed \(1 reconcile\(s\) started\)$/, h.title);
    assert.match(h.explanation, /a call that never returns or a Promise that never settles: pass ctx\.signal to every call, and give the loop a reconcile deadline \(a module's options export reconcileTimeoutMs, the setting reconcileLab\.workQueue\.reconcileTimeoutSeconds, check's --reconcile-timeout\), which the checks apply too/, h.explanation);
    const deadline = await runChecks(options({ ...base, reconcileTimeoutMs: 500 }));
    const d = deadline.findings.find((x) => x.check === 'convergence');
    assert.ok(d, summary(deadline));
    assert.match(d.title, /^Never converges: \d+ of \d+ reconciles failed in 3 s, last with: .*the oven never got hot/, d.title);
    assert.deepEqual(await scratchLeft(), []);
  });

  test('convergence: a reconcile that writes once (its finalizer) and then asks for Requeue: true every time is named as requeueing, not as a hot loop of writes, and gets no "settled waiting" note', async () => {
    const reconciler = (): Reconciler => ({
      name: 'requeues-forever',
      async reconcile(req, ctx) {
        const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal);
        if (w.metadata.deletionTimestamp) {
          await ctx.client.update(ctx.primary, { ...w, metadata: { ...w.metadata, finalizers: [] } }, { signal: ctx.signal });
          return {};
        }
        if (!w.metadata.finalizers?.includes('example.org/keep')) {
          await ctx.client.update(ctx.primary, { ...w, metadata: { ...w.metadata, finalizers: ['example.org/keep'] } }, { signal: ctx.signal });
        }
        return { requeue: true }; // "not ready yet", polled through the rate limiter
      },
    });
    const r = await runChecks(options({ createReconciler: reconciler, reconcilerSpec: { kind: 'module', path: 'requeues-forever.ts' }, checks: ['convergence'], convergenceBoundMs: 4_000 }));
    const f = r.findings.find((x) => x.check === 'convergence');
    assert.ok(f, summary(r));
    assert.match(r.results[0]!.message!, /^not idle after 4000 ms: every reconcile asks to be requeued$/, summary(r));
    assert.match(f.title, /^Never goes idle: \d+ of \d+ reconciles in 4 s asked to be requeued \(Requeue: true\)$/, f.title);
    assert.match(f.explanation, /returned a requeue \(`requeue: true`\): the key goes back through the rate limiter[^]*poll at an interval you choose with a requeue-after/, f.explanation);
    assert.doesNotMatch(f.title + f.explanation, /hot loop|kept writing|update widgets/);
    assert.ok(!r.notes.some((n) => /settled waiting/.test(n)), r.notes.join('\n'));
    assert.deepEqual(await scratchLeft(), []);
  });

  test('a reference run that never settles, convergence not selected: the skipped checks say the last reconcile\'s error, and where to look further', async () => {
    const reconciler = (): Reconciler => ({
      name: 'always-fails',
      async reconcile() {
        throw new Error('permission denied: ./reconcile.sh');
      },
    });
    const r = await runChecks(options({ createReconciler: reconciler, reconcilerSpec: { kind: 'module', path: 'always-fails.ts' }, checks: ['runTwice'], convergenceBoundMs: 3_000 }));
    const rt = r.results.find((x) => x.check === 'runTwice');
    assert.equal(rt?.status, 'skipped', summary(r));
    assert.match(rt!.message!, /^skipped: the reference run did not settle within 3000 ms; its last reconcile failed: permission denied: \.\/reconcile\.sh \(--check convergence tells why it did not\)$/, rt!.message);
    assert.deepEqual(await scratchLeft(), []);
  });

  test('a reference run that settles waiting (requeue-after, Ready False) gets a note: the checks judged the reconcile up to the wait, and what a copy lacks', async () => {
    const reconciler = (): Reconciler => ({
      name: 'waits-for-a-secret',
      async reconcile(req, ctx) {
        const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal);
        // It waits for a Secret its spec does not name (so nothing is copied): the copy always waits.
        await writeStatusIfChanged(ctx, ctx.primary, w, () => ({ conditions: [{ type: 'Ready', status: 'False', reason: 'SecretMissing', message: 'waiting for Secret orders-creds' }] }));
        return { requeueAfterMs: 30_000 };
      },
    });
    const secrets = { group: '', version: 'v1', resource: 'secrets' };
    const start = `The reference run of ${ns}/widget-ready settled waiting: its last reconcile asked for a requeue after 30 s (Ready False, SecretMissing: waiting for Secret orders-creds), so the checks judged the reconcile up to that wait only. The object is copied into a scratch namespace with the Secrets and ConfigMaps of its namespace that its spec refers to (secretRef, configMapKeyRef, secretName, volumes, envFrom, valueFrom, a lab-style dependsOn…; its spec named none of them in those ways, so nothing else was copied): if it waits for anything else of its real namespace (an object named in a way the checks do not recognise, or of another kind), the path after the wait was not checked.`;
    // The Secret is not in the object's namespace either: the original waits too, and --copy of it would find nothing.
    await c.delete(secrets, ns, 'orders-creds').catch(() => undefined);
    const absent = await runChecks(options({ createReconciler: reconciler, reconcilerSpec: { kind: 'module', path: 'waits-for-a-secret.ts' }, checks: ['runTwice'], convergenceBoundMs: 6_000 }));
    assert.ok(absent.notes.some((n) => n === `${start} Secret orders-creds is not in namespace ${ns} either: the original waits for it too, so there is nothing to copy; create it there and check again to cover what happens after the wait.`), absent.notes.join('\n'));
    // It is there, but the spec does not name it: the note says how to have it copied.
    await c.create(secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'orders-creds', namespace: ns }, stringData: { token: 'x' } });
    const r = await runChecks(options({ createReconciler: reconciler, reconcilerSpec: { kind: 'module', path: 'waits-for-a-secret.ts' }, checks: ['runTwice'], convergenceBoundMs: 6_000 }));
    await c.delete(secrets, ns, 'orders-creds');
    assert.ok(r.notes.some((n) => n === `${start} To copy it too: --copy secret/orders-creds (CLI), or in reconcileLab.checks.copy (editor).`), r.notes.join('\n'));
    const done = await runChecks(options({ createReconciler: () => ({ name: 'done', async reconcile() { return {}; } }), reconcilerSpec: { kind: 'module', path: 'done.ts' }, checks: ['runTwice'], convergenceBoundMs: 6_000 }));
    assert.ok(!done.notes.some((n) => /settled waiting/.test(n)), 'no note for a reference run that ends done');
    assert.deepEqual(await scratchLeft(), []);
  });

  test('run twice: a server-side apply of the whole intent on every pass that changes nothing is no finding; a merge patch that changes nothing still is', async () => {
    const reconciler = (mode: 'apply' | 'patch') => (): Reconciler => ({
      name: `${mode}-every-pass`,
      async reconcile(req, ctx) {
        let w: KubeObject;
        try {
          w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal);
        } catch (e) {
          if ((e as { code?: number }).code === 404) return {};
          throw e;
        }
        const name = `${req.name}-applied`;
        const owner = [{ apiVersion: w.apiVersion!, kind: w.kind!, name: req.name, uid: w.metadata.uid!, controller: true }];
        const intent = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: req.namespace, ownerReferences: owner }, data: { from: 'intent' } };
        if (mode === 'apply') {
          await ctx.client.apply(CONFIGMAPS, intent, { fieldManager: 'apply-every-pass', force: true, signal: ctx.signal });
        } else {
          try {
            await ctx.client.patch(CONFIGMAPS, req.namespace, name, 'merge', { data: intent.data }, { signal: ctx.signal });
          } catch (e) {
            if ((e as { code?: number }).code !== 404) throw e;
            await ctx.client.create(CONFIGMAPS, intent, { signal: ctx.signal });
          }
        }
        return {};
      },
    });
    const applied = await runChecks(options({ createReconciler: reconciler('apply'), reconcilerSpec: { kind: 'module', path: 'apply-every-pass.ts' }, checks: ['runTwice'], convergenceBoundMs: 6_000 }));
    const rt = applied.results.find((x) => x.check === 'runTwice');
    assert.equal(rt?.status, 'passed', summary(applied));
    assert.match(rt!.message!, /^the second reconcile wrote nothing \(outcome success\); its server-side apply \(apply configmaps rl-check-[^/]+\/widget-ready-applied\) changed nothing, as apply sent with the whole intent on every pass should$/, summary(applied));
    const patched = await runChecks(options({ createReconciler: reconciler('patch'), reconcilerSpec: { kind: 'module', path: 'patch-every-pass.ts' }, checks: ['runTwice'], convergenceBoundMs: 6_000 }));
    const f = patched.findings.find((x) => x.check === 'runTwice');
    assert.match(f?.title ?? '', /^No-op write on the second reconcile: patch configmaps rl-check-[^/]+\/widget-ready-applied/, summary(patched));
    assert.deepEqual(await scratchLeft(), []);
  });

  test('crash after write: a child of a resource the run was not given (a Secret with generateName) is compared because the reconciler wrote it; its value is never shown', async () => {
    const secrets = { group: '', version: 'v1', resource: 'secrets' };
    const reconciler = (): Reconciler => ({
      name: 'leaks-a-secret',
      async reconcile(req, ctx) {
        const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal);
        if ((w.status as { childName?: string } | undefined)?.childName) return {};
        // BUG: the child is found through the status only; after a crash between the two writes a second Secret is made.
        const made = await ctx.client.create(secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { generateName: `${req.name}-access-`, namespace: req.namespace }, stringData: { token: 'hunter2-in-a-check' } }, { signal: ctx.signal });
        await ctx.client.updateStatus(ctx.primary, { ...w, status: { childName: made.metadata.name } }, { signal: ctx.signal });
        return {};
      },
    });
    const r = await runChecks(options({ createReconciler: reconciler, reconcilerSpec: { kind: 'module', path: 'leaks-a-secret.ts' }, checks: ['runTwice', 'crashAfterWrite'], convergenceBoundMs: 6_000 }));
    assert.equal(r.results.find((x) => x.check === 'runTwice')?.status, 'passed', summary(r));
    const f = r.findings.find((x) => x.check === 'crashAfterWrite');
    assert.ok(f, summary(r));
    assert.match(f.title, /Interrupted after write 1 of 2, the restarted controller ends in a different state/);
    assert.match(f.explanation, /secrets\/widget-ready-access-<generated #2>: exists only in the perturbed run/, f.explanation);
    assert.match(f.diff, /token: "\*\*\*/, 'the Secret is in the end state, its value masked');
    assert.ok(r.notes.some((n) => /End states compared secrets too: the reconciler wrote that resource in the scratch namespace \(Secret values are compared, never shown\)/.test(n)), r.notes.join('\n'));
    const text = JSON.stringify(r);
    assert.ok(!text.includes('hunter2-in-a-check') && !text.includes(Buffer.from('hunter2-in-a-check').toString('base64')), 'the value is in no finding, diff or note');
    assert.deepEqual(await scratchLeft(), [], 'the learned resource\'s objects went with the scratch namespaces');
  });

  test('convergence: an owned child created with generateName on every pass (its add event starts the next pass) is counted as one write and named as a new object each time', async () => {
    const configmaps = { group: '', version: 'v1', resource: 'configmaps' };
    const reconciler = (): Reconciler => ({
      name: 'plants-a-child-each-pass',
      async reconcile(req, ctx) {
        const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal);
        if (w.metadata.deletionTimestamp) return {};
        // BUG: a new owned child on every pass; its add event queues the owner again.
        await ctx.client.create(configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: `${req.name}-soil-`, namespace: req.namespace, ownerReferences: [{ apiVersion: w.apiVersion!, kind: w.kind!, name: w.metadata.name!, uid: w.metadata.uid!, controller: true }] } }, { signal: ctx.signal });
        return {};
      },
    });
    const r = await runChecks(options({ createReconciler: reconciler, reconcilerSpec: { kind: 'module', path: 'plants.ts' }, checks: ['convergence'], convergenceBoundMs: 3_000 }));
    const f = r.findings.find((x) => x.check === 'convergence');
    assert.ok(f, summary(r));
    assert.match(f.title, /^Never converges: \d+ × create configmaps rl-check-[0-9a-f]+\/widget-ready-soil-\* \(generateName\) in 3 s/, f.title);
    assert.match(f.explanation, /created a new object on every pass \(\d+ of them, named from metadata\.generateName "widget-ready-soil-"\)[^]*Look the object up first/, f.explanation);
    assert.deepEqual(await scratchLeft(), []);
  });

  test('convergence: a finalizer appended on every pass is named as a list that grows, with advice for the object rather than for status', async () => {
    const reconciler = (): Reconciler => ({
      name: 'appends-finalizer-each-pass',
      async reconcile(req, ctx) {
        const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal);
        if (w.metadata.deletionTimestamp) {
          await ctx.client.patch(ctx.primary, req.namespace, req.name, 'merge', { metadata: { finalizers: null } }, { signal: ctx.signal });
          return {};
        }
        // BUG: appended without looking whether it is there; the update of the object queues the key again.
        await ctx.client.patch(ctx.primary, req.namespace, req.name, 'merge', { metadata: { finalizers: [...(w.metadata.finalizers ?? []), 'example.org/oven'] } }, { signal: ctx.signal });
        return {};
      },
    });
    const r = await runChecks(options({ createReconciler: reconciler, reconcilerSpec: { kind: 'module', path: 'appends.ts' }, checks: ['convergence'], convergenceBoundMs: 3_000 }));
    const f = r.findings.find((x) => x.check === 'convergence');
    assert.ok(f, summary(r));
    assert.match(f.title, /^Never converges: \d+ × patch widgets\.\S+ rl-check-[0-9a-f]+\/widget-ready in 3 s/, f.title);
    assert.match(f.explanation, /The fields that change on every write: metadata\.finalizers\. metadata\.finalizers grows on every write \(\d+ → \d+ → \d+ → … items\)[^]*add it only when metadata\.finalizers lacks it/, f.explanation);
    assert.doesNotMatch(f.explanation, /Write status only|finalizers\[\d+\]/, f.explanation);
    assert.deepEqual(await scratchLeft(), []);
  });

  test('a child named uniquely by the reconciler itself (a random ending, not generateName): the correct reconciler has no findings, the leaking one is found', async () => {
    const configmaps = { group: '', version: 'v1', resource: 'configmaps' };
    // The child is `<widget>-job-<6 random hex digits>`, recorded in status.childName; `lookup` finds an existing one
    // by its label (correct) or only through the status (BUG: a crash between the create and the status write
    // leaves the first child behind and makes a second).
    const reconciler = (lookup: 'label' | 'status') => (): Reconciler => ({
      name: `job-namer-by-${lookup}`,
      async reconcile(req, ctx) {
        const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal);
        if (w.metadata.deletionTimestamp) return {};
        let childName = (w.status as { childName?: string } | undefined)?.childName;
        if (lookup === 'label') childName = (await ctx.client.list(configmaps, req.namespace, { labelSelector: `job-of=${req.name}` })).items[0]?.metadata.name ?? childName;
        if (!childName) {
          const made = await ctx.client.create(configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${req.name}-job-${randomBytes(3).toString('hex')}`, namespace: req.namespace, labels: { 'job-of': req.name }, ownerReferences: [{ apiVersion: w.apiVersion!, kind: w.kind!, name: w.metadata.name!, uid: w.metadata.uid!, controller: true }] }, data: { step: 'one' } }, { signal: ctx.signal });
          childName = made.metadata.name!;
        }
        await writeStatusIfChanged(ctx, ctx.primary, w, () => ({ childName }));
        return {};
      },
    });
    const correct = await runChecks(options({ createReconciler: reconciler('label'), reconcilerSpec: { kind: 'module', path: 'job-namer-by-label.ts' }, checks: ['runTwice', 'crashAfterWrite', 'staleCache', 'unobservedState'], convergenceBoundMs: 6_000 }));
    assert.equal(correct.findings.length, 0, summary(correct));
    assert.ok(correct.notes.some((n) => /names some children uniquely itself \(not with generateName\): configmaps\/widget-ready-job-<6 characters> had other endings in the two reference runs/.test(n)), correct.notes.join('\n'));
    assert.ok(correct.masked.some((m) => m.path === 'configmaps/widget-ready-job-<random #n>: metadata.name' && m.reason === 'learned'), JSON.stringify(correct.masked));
    const leaking = await runChecks(options({ createReconciler: reconciler('status'), reconcilerSpec: { kind: 'module', path: 'job-namer-by-status.ts' }, checks: ['crashAfterWrite'], convergenceBoundMs: 6_000 }));
    const f = leaking.findings.find((x) => x.check === 'crashAfterWrite');
    assert.ok(f, summary(leaking));
    assert.match(f.explanation, /configmaps\/widget-ready-job-<random #2>: exists only in the perturbed run/, f.explanation);
    assert.deepEqual(await scratchLeft(), []);
  });

  test('history independence: a correct controller whose Deployment child it updates when the spec changes passes (the child\'s generation, 2 after the update and 1 when created with the final spec, tells the path, not the state)', async () => {
    const deployments = { group: 'apps', version: 'v1', resource: 'deployments' };
    const reconciler = (): Reconciler => ({
      name: 'keeps-a-deployment',
      async reconcile(req, ctx) {
        const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal);
        const want = JSON.stringify((w.spec as { data?: unknown } | undefined)?.data ?? {});
        const name = `${req.name}-web`;
        const labels = { app: name };
        const desired = {
          apiVersion: 'apps/v1', kind: 'Deployment',
          metadata: { name, namespace: req.namespace, ownerReferences: [{ apiVersion: w.apiVersion!, kind: w.kind!, name: w.metadata.name!, uid: w.metadata.uid!, controller: true }] },
          spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels, annotations: { 'lab.reconcile.dev/data': want } }, spec: { containers: [{ name: 'c', image: 'example.invalid/none' }] } } },
        };
        let current;
        try {
          current = await ctx.client.get(deployments, req.namespace, name, ctx.signal);
        } catch (e) {
          if ((e as { code?: number }).code !== 404) throw e;
          await ctx.client.create(deployments, desired, { signal: ctx.signal });
          return {};
        }
        const annotations = (current.spec as { template: { metadata?: { annotations?: Record<string, string> } } }).template.metadata?.annotations ?? {};
        if (annotations['lab.reconcile.dev/data'] !== want) await ctx.client.update(deployments, { ...current, spec: { ...(current.spec as object), template: desired.spec.template } }, { signal: ctx.signal });
        return {};
      },
    });
    const r = await runChecks(options({ createReconciler: reconciler, reconcilerSpec: { kind: 'module', path: 'keeps-a-deployment.ts' }, checks: ['historyIndependence'], convergenceBoundMs: 6_000 }));
    const h = r.results.find((x) => x.check === 'historyIndependence');
    assert.equal(h?.status, 'passed', summary(r));
    assert.ok(r.notes.some((n) => /End states compared deployments\.apps too/.test(n)), `the Deployment was compared: ${r.notes.join('\n')}`);
    assert.deepEqual(await scratchLeft(), []);
  });

  test('stale cache, one change behind: the twin of conflict-gives-up that returns the Conflict (retried) converges and passes', async () => {
    const reconciler = (): Reconciler => ({
      name: 'conflict-retried',
      async reconcile(req, ctx) {
        const w = ctx.cache.get(ctx.primary, req.key);
        if (!w || w.metadata.deletionTimestamp) return {};
        const status = (w.status ?? {}) as { observedGeneration?: number };
        if (status.observedGeneration === w.metadata.generation) return {};
        // The same stale write as the buggy sample; a 409 is thrown as an ordinary error, so the queue retries.
        await ctx.client.updateStatus(ctx.primary, { ...w, status: { ...status, observedGeneration: w.metadata.generation } }, { signal: ctx.signal });
        return {};
      },
    });
    const base = await moduleOptions('samples/buggy/conflict-gives-up.ts');
    const r = await runChecks({ ...base, createReconciler: reconciler, reconcilerSpec: { kind: 'module', path: 'conflict-retried.ts' }, checks: ['staleCache'] });
    const stale = r.results.find((x) => x.check === 'staleCache');
    assert.equal(stale?.status, 'passed', summary(r));
    assert.match(stale!.message!, /; one change behind: 1 write\(s\) from the stale view, 1 got 409 Conflict and were retried, converged$/, summary(r));
    assert.deepEqual(await scratchLeft(), []);
  });

  test('history independence, reverted: a setting turned on and back off (derived from the CRD schema: a boolean flipped, an integer raised) must take away what it made; a controller that only ever adds is found, one that prunes passes', async () => {
    const group = `${uniqueName('rev')}.example.org`;
    const crdObject = testCrd({ group, kind: 'Exporter', plural: 'exporters' });
    const version = (crdObject.spec as { versions: Array<Record<string, unknown>> }).versions[0]!;
    version.schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { metrics: { type: 'boolean' }, shards: { type: 'integer', minimum: 1, maximum: 4 } } }, status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } };
    await installCrd(cluster.transport, crdObject);
    const exporters = { group, version: 'v1', resource: 'exporters', kind: 'Exporter', namespaced: true };
    const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
    await c.create(exporters, { apiVersion: `${group}/v1`, kind: 'Exporter', metadata: { name: 'edge', namespace: ns }, spec: { metrics: false, shards: 1 } });
    const reconciler = (prunes: boolean): Reconciler => ({
      name: prunes ? 'prunes' : 'only-adds',
      async reconcile(req, ctx) {
        const e = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal).catch((err: unknown) => {
          if ((err as { code?: number }).code === 404) return undefined;
          throw err;
        });
        if (!e || e.metadata.deletionTimestamp) return {};
        const spec = (e.spec ?? {}) as { metrics?: boolean; shards?: number };
        const want = new Set([...Array.from({ length: spec.shards ?? 1 }, (_, i) => `${req.name}-shard-${i}`), ...(spec.metrics ? [`${req.name}-metrics`] : [])]);
        const owner = [{ apiVersion: e.apiVersion!, kind: e.kind!, name: e.metadata.name!, uid: e.metadata.uid!, controller: true }];
        const have = (await ctx.client.list(CONFIGMAPS, req.namespace, { signal: ctx.signal })).items.filter((m) => m.metadata.ownerReferences?.some((o) => o.uid === e.metadata.uid));
        for (const name of want) {
          if (!have.some((m) => m.metadata.name === name)) await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: req.namespace, ownerReferences: owner }, data: { role: name.slice(req.name.length + 1) } }, { signal: ctx.signal });
        }
        if (prunes) for (const m of have) if (!want.has(m.metadata.name!)) await ctx.client.delete(CONFIGMAPS, req.namespace, m.metadata.name!, { signal: ctx.signal });
        return {};
      },
    });
    const run = (prunes: boolean) => runChecks(options({ primary: exporters, keys: [`${ns}/edge`], createReconciler: () => reconciler(prunes), reconcilerSpec: { kind: 'module', path: prunes ? 'prunes.ts' : 'only-adds.ts' }, checks: ['historyIndependence'], convergenceBoundMs: 6_000 }));
    const bad = await run(false);
    const h = bad.results.find((x) => x.check === 'historyIndependence')!;
    assert.equal(h.status, 'failed', summary(bad));
    assert.equal(h.message, 'the change was not undone when it was reverted: 2 difference(s) from the state before the changes (the same end state as an object created with the final spec otherwise)', summary(bad));
    assert.deepEqual(bad.findings.map((f) => f.title), ['Not undone when the change was reverted: configmaps/edge-metrics: exists only after they were reverted'], summary(bad));
    const f = bad.findings[0]!;
    assert.match(f.explanation, /^After spec\.metrics, spec\.shards changed as the schema allows \(\{"spec":\{"metrics":true,"shards":2\}\}\), each reconciled, every field the changes touched was set back to its value before them[^]*configmaps\/edge-metrics: exists only after they were reverted; configmaps\/edge-shard-1: exists only after they were reverted[^]*never deleted/, f.explanation);
    assert.match(f.diff ?? '', /\+\+\+ configmaps\/edge-metrics/, f.diff);
    const good = await run(true);
    const g = good.results.find((x) => x.check === 'historyIndependence')!;
    assert.equal(g.status, 'passed', summary(good));
    assert.match(g.message!, /; and reverted, the state before the changes came back$/, summary(good));
    assert.deepEqual(await scratchLeft(), []);
  });

  test('history independence with an immutable field (a CEL rule self == oldSelf): the schema\'s change is refused as a whole, so its fields are tried one by one; the refused one is left out and named, the rest is checked', async () => {
    const group = `${uniqueName('cel')}.example.org`;
    const crdObject = testCrd({ group, kind: 'Cache', plural: 'caches' });
    const version = (crdObject.spec as { versions: Array<Record<string, unknown>> }).versions[0]!;
    version.schema = { openAPIV3Schema: { type: 'object', properties: {
      spec: { type: 'object', properties: { region: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'region is immutable' }] }, replicas: { type: 'integer', minimum: 1, maximum: 9 } } },
      status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    } } };
    await installCrd(cluster.transport, crdObject);
    const caches = { group, version: 'v1', resource: 'caches', kind: 'Cache', namespaced: true };
    await c.create(caches, { apiVersion: `${group}/v1`, kind: 'Cache', metadata: { name: 'hot', namespace: ns }, spec: { region: 'eu-west', replicas: 1 } });
    const reconciler: Reconciler = {
      name: 'cache-status',
      async reconcile(req, ctx) {
        const obj = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal).catch((e: unknown) => {
          if ((e as { code?: number }).code === 404) return undefined;
          throw e;
        });
        if (!obj) return {};
        await writeStatusIfChanged(ctx, ctx.primary, obj, (o) => ({ observedGeneration: o.metadata.generation, replicas: (o.spec as { replicas?: number }).replicas }));
        return {};
      },
    };
    const r = await runChecks(options({ primary: caches, keys: [`${ns}/hot`], createReconciler: () => reconciler, reconcilerSpec: { kind: 'module', path: 'cache-status.ts' }, checks: ['historyIndependence'], convergenceBoundMs: 6_000 }));
    const h = r.results.find((x) => x.check === 'historyIndependence')!;
    assert.equal(h.status, 'passed', summary(r));
    assert.match(h.message!, /^spec\.replicas changed as the schema allows \(\{"spec":\{"replicas":2\}\}\) \(the server refused spec\.region \(.*region is immutable.*\): left out\): the same end state as an object created with the final spec[^]*and reverted, the state before the changes came back$/, summary(r));
    assert.deepEqual(await scratchLeft(), []);
  });

  test('a cluster-scoped kind: only the copy is reconciled, every check compares, the other objects are untouched', async () => {
    const group = `${uniqueName('chk')}.example.org`;
    await installCrd(cluster.transport, testCrd({ group, kind: 'Policy', plural: 'policies', scope: 'Cluster' }));
    const policies = { group, version: 'v1', resource: 'policies', kind: 'Policy', namespaced: false };
    // Its spec names a namespace and a Secret there: the copies name their scratch namespace, the Secret is copied into it.
    await c.create({ group: '', version: 'v1', resource: 'secrets' }, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'policy-creds', namespace: ns }, stringData: { token: 'policy-secret-value' } });
    const mine = await c.create(policies, { apiVersion: `${group}/v1`, kind: 'Policy', metadata: { name: 'allow.egress-to-db.v2' }, spec: { level: 3, targetNamespace: ns, credentials: { secretRef: { name: 'policy-creds', namespace: ns } } } });
    const other = await c.create(policies, { apiVersion: `${group}/v1`, kind: 'Policy', metadata: { name: 'someone-elses' }, spec: { level: 9 } });
    const reconciled = new Set<string>();
    const reconciler: Reconciler = {
      name: 'policy-status',
      async reconcile(req, ctx) {
        reconciled.add(req.key);
        const obj = await ctx.client.get(ctx.primary, undefined, req.name, ctx.signal).catch((e: unknown) => {
          if ((e as { code?: number }).code === 404) return undefined; // gone: nothing to do
          throw e;
        });
        if (!obj) return {};
        await writeStatusIfChanged(ctx, ctx.primary, obj, (o) => ({ observedGeneration: o.metadata.generation, level: (o.spec as { level?: number }).level }));
        return {};
      },
    };
    // A spec transition (the test CRD publishes no schema to derive one from): history independence compares too.
    const r = await runChecks(options({ primary: policies, keys: [mine.metadata.name!], createReconciler: () => reconciler, reconcilerSpec: { kind: 'module', path: 'policy-status.ts' }, transitions: [{ spec: { level: 4 } }] }));
    assert.deepEqual([...reconciled].filter((k) => !k.startsWith('rl-check-')), [], 'the check runs reconciled only scratch copies');
    assert.equal(r.findings.length, 0, summary(r));
    assert.deepEqual(r.results.map((x) => `${x.check}: ${x.status}`).sort(), ['childDrift: skipped', 'convergence: passed', 'crashAfterWrite: skipped', 'deletion: passed', 'historyIndependence: passed', 'runTwice: passed', 'staleCache: passed', 'unobservedState: passed'], summary(r));
    // It writes no child: child drift has nothing to change, and says so.
    assert.match(r.results.find((x) => x.check === 'childDrift')!.message!, /^the controller created no child in the copy's namespace that the check can change behind its back$/, summary(r));
    assert.ok(r.notes.includes(`allow.egress-to-db.v2 is cluster-scoped: in its copies spec.credentials.secretRef.namespace (${ns}), spec.targetNamespace (${ns}) name the run's scratch namespace instead, so its controller writes there and never in your namespaces.`), r.notes.join('\n'));
    assert.ok(r.notes.some((n) => n.includes(`copied into every scratch namespace of allow.egress-to-db.v2`) && n.includes(`Secret ${ns}/policy-creds (spec.credentials.secretRef.name)`)), r.notes.join('\n'));
    assert.ok(!JSON.stringify(r).includes('policy-secret-value'), 'the Secret\'s value is in no message');
    assert.equal((await c.get(policies, undefined, other.metadata.name!)).metadata.resourceVersion, other.metadata.resourceVersion, 'another Policy was not written');
    assert.equal((await c.get(policies, undefined, mine.metadata.name!)).metadata.resourceVersion, mine.metadata.resourceVersion, 'the checked Policy itself was not written');
    assert.deepEqual((await c.list(policies, undefined)).items.map((p) => p.metadata.name).sort(), ['allow.egress-to-db.v2', 'someone-elses'], 'the copies are deleted');
  });

  test('child drift of a cluster-scoped kind whose controller makes a Namespace per object: the skip names the children it left alone outside the scratch namespace, not "no child"', async () => {
    const group = `${uniqueName('chk')}.example.org`;
    await installCrd(cluster.transport, testCrd({ group, kind: 'Space', plural: 'spaces', scope: 'Cluster' }));
    const spaces = { group, version: 'v1', resource: 'spaces', kind: 'Space', namespaced: false };
    const mine = await c.create(spaces, { apiVersion: `${group}/v1`, kind: 'Space', metadata: { name: uniqueName('team') }, spec: { level: 1 } });
    const made = new Set<string>();
    const reconciler: Reconciler = {
      name: 'space-namespace',
      async reconcile(req, ctx) {
        const obj = await ctx.client.get(ctx.primary, undefined, req.name, ctx.signal).catch((e: unknown) => {
          if ((e as { code?: number }).code === 404) return undefined;
          throw e;
        });
        if (!obj || obj.metadata.deletionTimestamp) return {};
        const owner = { apiVersion: obj.apiVersion!, kind: obj.kind!, name: obj.metadata.name!, uid: obj.metadata.uid!, controller: true };
        const nsName = `sp-${req.name}`.slice(0, 63);
        made.add(nsName);
        const exists = async (gvr: typeof NAMESPACES, namespace: string | undefined, name: string) => ctx.client.get(gvr, namespace, name, ctx.signal).then(() => true, (e: unknown) => {
          if ((e as { code?: number }).code === 404) return false;
          throw e;
        });
        if (!(await exists(NAMESPACES, undefined, nsName))) await ctx.client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: nsName, ownerReferences: [owner] } }, { signal: ctx.signal });
        if (!(await exists(CONFIGMAPS, nsName, 'info'))) await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'info', namespace: nsName, ownerReferences: [owner] }, data: { level: '1' } }, { signal: ctx.signal });
        return {};
      },
    };
    try {
      const r = await runChecks(options({ primary: spaces, keys: [mine.metadata.name!], createReconciler: () => reconciler, reconcilerSpec: { kind: 'module', path: 'space-namespace.ts' }, checks: ['childDrift'] }));
      const drift = r.results.find((x) => x.check === 'childDrift')!;
      assert.equal(drift.status, 'skipped', summary(r));
      assert.match(drift.message!, /^the controller created no child in the copy's namespace that the check can change behind its back; the children it created outside it \(namespaces sp-rl-check-[a-z0-9-]+, configmaps sp-rl-check-[a-z0-9-]+\/info\) are left alone: the check changes objects in its scratch namespace only$/, summary(r));
    } finally {
      for (const name of made) await c.delete(NAMESPACES, undefined, name).catch(() => undefined);
      await c.delete(spaces, undefined, mine.metadata.name!).catch(() => undefined);
    }
  });

  test('a module that changes an object of a real namespace during the checks is refused before the server: the key could not be checked, the object is untouched', async () => {
    // A record kept in a fixed namespace (here the test's own namespace stands for "platform-system").
    const registry = await c.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: uniqueName('registry'), namespace: ns }, data: { seen: '' } });
    const reconciler: Reconciler = {
      name: 'registry-writer',
      async reconcile(req, ctx) {
        const obj = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal).catch(() => undefined);
        if (!obj || obj.metadata.deletionTimestamp) return {};
        await ctx.client.patch(CONFIGMAPS, ns, registry.metadata.name!, 'merge', { data: { seen: req.name } }, { signal: ctx.signal });
        return {};
      },
    };
    const r = await runChecks(options({ keys: [`${ns}/widget-ready`], createReconciler: () => reconciler, reconcilerSpec: { kind: 'module', path: 'registry-writer.ts' }, checks: ['runTwice', 'convergence'] }));
    for (const x of r.results) {
      assert.equal(x.status, 'error', summary(r));
      assert.match(x.message!, new RegExp(`^could not check this key inside a check instance: the write patch configmaps ${ns}/${registry.metadata.name} was refused \\(a check instance writes only in its scratch namespace\\)`), summary(r));
    }
    const after = await c.get(CONFIGMAPS, ns, registry.metadata.name!);
    assert.equal(after.metadata.resourceVersion, registry.metadata.resourceVersion, 'the real ConfigMap was never written');
  });

  test('child drift: a child of a kind the check\'s loop does not watch is left alone, and the skip says how to watch it', async () => {
    const SECRETS = { group: '', version: 'v1', resource: 'secrets' };
    const withSecret = (): Reconciler => ({
      name: 'secret-child',
      async reconcile(req, ctx) {
        const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal);
        const name = `${req.name}-credentials`;
        try {
          await ctx.client.get(SECRETS, req.namespace, name, ctx.signal);
        } catch (e) {
          if ((e as { code?: number }).code !== 404) throw e;
          const owner = { apiVersion: w.apiVersion!, kind: w.kind!, name: w.metadata.name!, uid: w.metadata.uid!, controller: true };
          await ctx.client.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: req.namespace, ownerReferences: [owner] }, stringData: { password: 'x' } }, { signal: ctx.signal });
        }
        return {};
      },
    });
    const r = await runChecks(options({ createReconciler: withSecret, reconcilerSpec: { kind: 'module', path: 'secret-child.ts' }, checks: ['childDrift'] }));
    assert.equal(r.results[0]!.status, 'skipped', summary(r));
    assert.match(r.results[0]!.message!, /\(secrets left alone: the check's loop does not watch that kind; to check it, watch it as the loop's children: --owns secrets in the CLI, or add it to the setting reconcileLab\.resources in the editor\)$/, summary(r));
    assert.deepEqual(await scratchLeft(), []);
  });

  test('a built-in kind of a named API group (deployments.apps): no spec change is derived, and the skip says it is built-in rather than quoting a CustomResourceDefinition 404', async () => {
    const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments' };
    const name = uniqueName('builtin');
    await c.create(DEPLOYMENTS, {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: ns },
      spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    } as unknown as KubeObject);
    const idle = (): Reconciler => ({ name: 'idle', reconcile: async () => ({}) });
    const r = await runChecks(options({ primary: { ...DEPLOYMENTS, kind: 'Deployment', namespaced: true }, keys: [`${ns}/${name}`], createReconciler: idle, reconcilerSpec: { kind: 'module', path: 'idle.ts' }, checks: ['historyIndependence'] }));
    assert.equal(r.results[0]!.status, 'skipped', summary(r));
    assert.match(r.results[0]!.message!, /^no spec change to try: deployments\.apps is a built-in resource \(no CustomResourceDefinition defines it\); give one with --transition/, summary(r));
    assert.doesNotMatch(r.results[0]!.message!, /could not be read|not found/, summary(r));
    assert.deepEqual(await scratchLeft(), []);
  });

  test('refuses a cluster that is not the local control plane unless confirmed by name', async () => {
    await assert.rejects(runChecks(options({ cluster: { name: 'prod', local: false }, createReconciler: () => createLabReconciler(), reconcilerSpec: { kind: 'lab' } })), CheckRefusedError);
  });
});
