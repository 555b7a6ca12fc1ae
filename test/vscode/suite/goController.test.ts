// Run Controller… with the Go sample (samples/go-controller, controller-runtime + the bridge), in the real extension
// host against the real control plane: the views show the Go controller (pid, liveness), step / dry-run act on it
// through the bridge, Run Robustness Checks… runs new instances of its program over scratch namespaces, a stranger
// cannot name the program, Stop Controller goes back to the built-in loop.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { parseAllDocuments } from 'yaml';
import type { StepResult } from '../../../src/core/controller/controller.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import type { ReconcileLab } from '../../../src/host/reconcileLab.ts';
import { buildGoSample, haveGo, installDelve, sampleDir, setRepoRoot, warmDebugBuild } from '../../integration/support/goSample.ts';
import { installCrd } from '../../integration/support/cluster.ts';
import { holdLease } from '../../integration/support/liveLease.ts';
import { api, connectTo, lab, labCluster, ok, ROOT, run, runAsStranger, testNamespace, uniqueName, waitUntil } from './support/lab.ts';
import { alive } from '../../support/alive.ts';
import { findDelve } from '../../../src/core/bridge/delve.ts';
import { entryDetail } from '../../../src/host/webview/entryDetail.ts';
import { nextStepsFor, SettingsError } from '../../../src/host/notify.ts';

const WIDGETS = { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets' };
const RESOURCE = 'widgets.lab.reconcile.dev';

setRepoRoot(ROOT);

describe('Go controller (Run Controller…) in the editor', function () {
  this.timeout(240_000);
  let l: ReconcileLab;
  let ns = '';
  let bin = '';

  before(async function () {
    if (!haveGo() || !existsSync(sampleDir())) this.skip();
    this.timeout(300_000);
    l = await lab();
    bin = buildGoSample(); // cached by the integration phase
    const crd = parseAllDocuments(readFileSync(join(ROOT, 'samples/crd.yaml'), 'utf8'))[0]!.toJS() as KubeObject;
    await installCrd(labCluster().transport, crd).catch((e: unknown) => {
      if (!/already exists|AlreadyExists/.test(String((e as Error).message))) throw e;
    });
    ns = await testNamespace('ext-go');
    await labCluster().client.create(WIDGETS, { apiVersion: 'lab.reconcile.dev/v1alpha1', kind: 'Widget', metadata: { name: 'gadget', namespace: ns }, spec: { data: { color: 'teal' } } });
    await connectTo(ns, { resources: [RESOURCE, 'configmaps'], reconcilerResource: RESOURCE });
  });

  after(async () => {
    if (l) await run('reconcileLab.stopController', {});
  });

  it('Run Controller… of a module without the bridge says so before building it; Set Up Go Bridge… adds it to go.mod (once), pointing at the bridge inside the extension', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rlab-mine-'));
    try {
      mkdirSync(join(dir, 'cmd'));
      writeFileSync(join(dir, 'go.mod'), 'module example.com/mine\n\ngo 1.26\n');
      writeFileSync(join(dir, 'cmd', 'main.go'), 'package main\n\nfunc main() {}\n');
      const refused = await run('reconcileLab.runController', { command: 'go run ./cmd', cwd: dir, waitMs: 5_000 });
      assert.ok(!refused.ok && refused.reason === 'invalidArgument', JSON.stringify(refused));
      assert.match(refused.message, /go\.mod does not require github\.com\/reconcile-lab\/reconcile-lab\/bridge: the program never connects to Reconcile Lab\. Run Reconcile Lab: Set Up Go Bridge… first/);
      assert.equal(l.go.launchedProcess, undefined, 'nothing was started');

      const set = ok(await run<{ goMod: string; bridgeDir: string; changed: boolean }>('reconcileLab.setUpGoBridge', { dir: join(dir, 'cmd'), open: false }));
      assert.equal(set.goMod, join(dir, 'go.mod'), 'the go.mod governing the directory');
      assert.equal(set.changed, true);
      assert.equal(set.bridgeDir, join(ROOT, 'bridge'));
      const goMod = readFileSync(join(dir, 'go.mod'), 'utf8');
      assert.match(goMod, /^require github\.com\/reconcile-lab\/reconcile-lab\/bridge v0\.0\.0$/m);
      assert.ok(goMod.includes(`replace github.com/reconcile-lab/reconcile-lab/bridge => ${join(ROOT, 'bridge')}`), goMod);
      const again = ok(await run<{ changed: boolean }>('reconcileLab.setUpGoBridge', { dir, open: false }));
      assert.equal(again.changed, false, 'a module already set up is left alone');
      assert.equal(readFileSync(join(dir, 'go.mod'), 'utf8'), goMod);

      // go.mod set up, but the code's controller does not pass bridge.Options yet: said before anything is built.
      writeFileSync(join(dir, 'cmd', 'controller.go'), 'package main\n\nfunc setup(mgr ctrl.Manager) error {\n\treturn ctrl.NewControllerManagedBy(mgr).\n\t\tFor(&v1.Gadget{}).\n\t\tComplete(r)\n}\n');
      const notYet = await run('reconcileLab.runController', { command: 'go run ./cmd', cwd: dir, waitMs: 5_000 });
      assert.ok(!notYet.ok && notYet.reason === 'invalidArgument', JSON.stringify(notYet));
      assert.match(notYet.message, /none of the controllers in your code \(gadget\) passes bridge\.Options yet/);
      assert.equal(l.go.launchedProcess, undefined, 'nothing was started');

      const stranger = await runAsStranger('reconcileLab.setUpGoBridge', { dir });
      assert.ok(!stranger.ok && stranger.reason === 'invalidArgument', JSON.stringify(stranger));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a workspace that is not a Go module: the Go commands take the one controller module below it, or the one the person picks', async () => {
    const folder = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    assert.equal(existsSync(join(folder, 'go.mod')), false, 'the test workspace is not a Go module');
    const root = join(folder, 'repo-with-operators');
    const module = (name: string, version = 'v0.25.3') => {
      mkdirSync(join(root, name, 'cmd'), { recursive: true });
      writeFileSync(join(root, name, 'go.mod'), `module example.org/${name}\n\ngo 1.26\n\nrequire sigs.k8s.io/controller-runtime ${version}\n`);
      writeFileSync(join(root, name, 'cmd', 'main.go'), 'package main\n\nfunc main() {}\n');
    };
    try {
      mkdirSync(join(root, 'tools'), { recursive: true });
      writeFileSync(join(root, 'tools', 'go.mod'), 'module example.org/tools\n\ngo 1.26\n'); // a Go module, not a controller
      assert.equal(l.go.refreshGoProject(), false, 'no controller module yet (the tools module is none)');
      assert.equal(l.contextKeys.get('reconcileLab.goProject'), false);
      module('alpha-operator');
      // The welcome views offer Run Controller… once a controller module is there (read again when go.mod files
      // change and when the connection changes; asked here directly, the file watcher's timing is not the test's).
      assert.equal(l.go.refreshGoProject(), true);
      assert.equal(l.contextKeys.get('reconcileLab.goProject'), true);
      const one = l.go.runRequest(undefined).spec;
      assert.equal(one.cwd, join(root, 'alpha-operator'), 'the only controller module, without asking');
      assert.deepEqual(one.args, ['run', './cmd'], 'its layout decides the default command');
      // A go.work at the folder's root does not make the folder a module (`go run .` there: "no Go files").
      assert.equal(existsSync(join(folder, 'go.work')), false);
      writeFileSync(join(folder, 'go.work'), 'go 1.26.0\n\nuse ./repo-with-operators/alpha-operator\n');
      try {
        assert.equal(l.go.runRequest(undefined).spec.cwd, join(root, 'alpha-operator'), 'with a go.work at the root: still the controller module');
      } finally {
        rmSync(join(folder, 'go.work'), { force: true });
      }

      module('beta-operator', 'v0.22.1'); // older than the bridge's
      const scripted = await run('reconcileLab.setUpGoBridge', { open: false });
      assert.ok(!scripted.ok && scripted.reason === 'invalidArgument', JSON.stringify(scripted));
      assert.match(scripted.message, /2 controller modules \(repo-with-operators\/alpha-operator, repo-with-operators\/beta-operator\): set reconcileLab\.goController\.cwd/);
      assert.equal(l.go.runRequest(undefined).spec.cwd, folder, 'nothing picked: no module is guessed');

      // A person runs it from the palette: a pick of both (the tools module is not a controller), the second taken.
      const from = (await api()).shownMark();
      const pending = runAsStranger<{ goMod: string; changed: boolean; controllerRuntime?: string }>('reconcileLab.setUpGoBridge');
      let pick = '';
      await waitUntil(async () => {
        pick = (await api()).shownSince(from).find((t) => t.kind === 'quickPick')?.text ?? '';
        return pick !== '';
      }, 'the module pick');
      assert.match(pick, /Which Go module is your controller\?/);
      assert.match(pick, /repo-with-operators\/alpha-operator · example\.org\/alpha-operator\nrepo-with-operators\/beta-operator · example\.org\/beta-operator$/);
      // The pick is recorded just before VS Code renders it; navigating before it is shown does nothing.
      await new Promise((r) => setTimeout(r, 1000));
      await vscode.commands.executeCommand('workbench.action.quickOpenSelectNext');
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      const set = ok(await pending);
      assert.equal(set.goMod, join(root, 'beta-operator', 'go.mod'));
      assert.match(set.controllerRuntime ?? '', /requires controller-runtime v0\.22\.1; the bridge is built with v0\.\d+\.\d+, so `go mod tidy` raises it/);
      assert.ok((await api()).shownSince(from).some((t) => t.kind === 'warning' && /go mod tidy` raises it/.test(t.text)), 'the person is told');
      assert.equal(set.changed, true);
      assert.match(readFileSync(set.goMod, 'utf8'), /^\s*github\.com\/reconcile-lab\/reconcile-lab\/bridge v0\.0\.0$/m, 'required (in the require block)');
      assert.doesNotMatch(readFileSync(join(root, 'alpha-operator', 'go.mod'), 'utf8'), /reconcile-lab/, 'the other module is untouched');
      assert.equal(l.go.runRequest(undefined).spec.cwd, join(root, 'beta-operator'), 'the pick is kept for Run Controller…');
      const again = ok(await run<{ goMod: string; changed: boolean }>('reconcileLab.setUpGoBridge', { open: false }));
      assert.equal(again.goMod, set.goMod, 'no second pick, also for a scripted call');
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      rmSync(root, { recursive: true, force: true });
    }
    assert.equal(l.go.refreshGoProject(), false, 'gone with the modules');
  });

  it('a command link or another extension cannot name the program to run', async () => {
    const r = await runAsStranger('reconcileLab.runController', { command: '/bin/sh', args: ['-c', 'touch /tmp/pwned'] });
    assert.equal(r.ok, false);
    assert.ok(!r.ok && r.reason === 'invalidArgument', JSON.stringify(r));
    assert.equal(l.go.launchedProcess, undefined);
  });

  it('a program that does not compile: its compile errors go into the Problems panel (source go build) until the next run or an edit of the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rlab-broken-'));
    try {
      mkdirSync(join(dir, 'cmd'));
      const main = join(dir, 'cmd', 'main.go');
      writeFileSync(main, 'package main\n\nfunc main() {\n\tx := Growing\n}\n');
      // What `go run ./cmd` prints for it (without compiling here).
      const failing = ['# example.com/broken/cmd', 'cmd/main.go:4:7: undefined: Growing', 'cmd/main.go:4:2: declared and not used: x', '../outside/evil.go:1:1: not ours'].map((l) => `echo '${l}' >&2`).join('; ');
      const r = await run('reconcileLab.runController', { command: 'sh', args: ['-c', `${failing}; exit 1`], cwd: dir, waitMs: 20_000 });
      assert.ok(!r.ok, JSON.stringify(r));
      const problems = () => vscode.languages.getDiagnostics(vscode.Uri.file(main)).filter((d) => d.source === 'go build');
      assert.deepEqual(problems().map((d) => [d.range.start.line + 1, d.range.start.character + 1, d.message, d.severity]), [
        [4, 7, 'undefined: Growing', vscode.DiagnosticSeverity.Error],
        [4, 2, 'declared and not used: x', vscode.DiagnosticSeverity.Error],
      ]);
      assert.ok(!vscode.languages.getDiagnostics().some(([uri]) => uri.fsPath.endsWith('evil.go')), 'nothing outside the module');
      // Edited, the file's entries go (their lines may have moved).
      const doc = await vscode.workspace.openTextDocument(main);
      const edit = new vscode.WorkspaceEdit();
      edit.insert(doc.uri, new vscode.Position(3, 0), '\t// fixing\n');
      assert.ok(await vscode.workspace.applyEdit(edit));
      await waitUntil(() => problems().length === 0, 'the edited file\'s build errors cleared', 5_000);
      await vscode.window.showTextDocument(doc);
      await vscode.commands.executeCommand('workbench.action.files.revert');
      // The next run starts with none.
      await run('reconcileLab.runController', { command: 'sh', args: ['-c', `${failing}; exit 1`], cwd: dir, waitMs: 20_000 });
      assert.equal(problems().length, 2);
      await run('reconcileLab.runController', { command: 'sh', args: ['-c', 'echo boom >&2; exit 3'], cwd: dir, waitMs: 20_000 });
      assert.equal(problems().length, 0, 'cleared by the next run');
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a program waiting for a leader-election Lease another identity holds: Run Controller…\'s notice names the Lease and its holder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rlab-lease-'));
    const leases = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };
    // Named like a controller's LeaderElectionID (a finalizer-like domain): deleted below whatever happens.
    const name = `${uniqueName('notice')}.lab.reconcile.dev`;
    const holder = 'laptop_4f2a9c1e-other-instance';
    const client = labCluster().client;
    await client.create(leases, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: ns }, spec: { holderIdentity: holder, leaseDurationSeconds: 15 } });
    const stop = join(dir, 'stop');
    let running: ReturnType<typeof run> | undefined;
    try {
      const from = (await api()).shownMark();
      // client-go's line as it starts to wait, then it waits (until the test lets it end: no clock decides).
      const line = `I1207 10:00:00.000000 4242 leaderelection.go:257] attempting to acquire leader lease ${ns}/${name}...`;
      running = run('reconcileLab.runController', { command: 'sh', args: ['-c', `echo '${line}' >&2; while [ ! -e '${stop}' ]; do sleep 0.1; done; exit 1`], cwd: dir, waitMs: 120_000, noticeAfterMs: 300 });
      const notice = () => api().then((a) => a.shownSince(from).find((t) => t.kind === 'progress' && /announced no controller yet/.test(t.text)));
      await waitUntil(async () => (await notice()) !== undefined, 'the Run Controller… notice', 60_000);
      writeFileSync(stop, '');
      const r = await running;
      assert.ok(!r.ok, 'it ended without announcing a controller');
      const text = (await notice())!.text;
      assert.ok(text.includes(`it waits for leader election: Lease ${ns}/${name} is held by ${holder} (another instance of your program`), text);
      assert.match(text, /run with --leader-elect=false/);
    } finally {
      // The program ends (also when the notice never came), then the Lease goes: a leftover one breaks later suites.
      writeFileSync(stop, '');
      await running?.catch(() => undefined);
      await client.delete(leases, ns, name).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a typo in reconcileLab.goController.command: the failure names the setting and where it is set, and offers Open Settings', async () => {
    const config = vscode.workspace.getConfiguration('reconcileLab');
    await config.update('goController.command', 'og run ./cmd', vscode.ConfigurationTarget.Workspace);
    try {
      const r = await run('reconcileLab.runController', { waitMs: 20_000 });
      assert.ok(!r.ok && r.reason === 'error', JSON.stringify(r));
      assert.match(r.message, /^could not start og: no such command on PATH: give its path, or install it\.\nIt ran reconcileLab\.goController\.command "og run \.\/cmd" \(the workspace settings\): check it in Settings \(left empty, Run Controller… runs go run on your main package\)\.$/);
      assert.equal(l.go.launchedProcess, undefined);
      // A command line passed by code is not the setting's: not blamed on it.
      const given = await run('reconcileLab.runController', { command: bin, args: ['--no-such-flag'], waitMs: 20_000 });
      assert.ok(!given.ok && !/reconcileLab\.goController/.test(given.message), JSON.stringify(given));
    } finally {
      await config.update('goController.command', undefined, vscode.ConfigurationTarget.Workspace);
    }
    assert.deepEqual(nextStepsFor(new SettingsError('m', 'reconcileLab.goController')), [{ label: 'Open Settings', command: 'workbench.action.openSettings', arg: 'reconcileLab.goController' }]);
  });

  it('shows the Go controller in the views; step, dry-run and the robustness checks act on it; Stop Controller goes back to the built-in loop', async function () {
    this.timeout(480_000);
    const s = l.session!;
    const key = `${ns}/gadget`;
    const started = (await api()).shownMark();
    const r = ok(
      await run<{ pid: number; controller: string; controllers: string[]; command: string }>('reconcileLab.runController', {
        command: bin,
        args: ['--metrics-bind-address=0', '--health-probe-bind-address=0', '--leader-elect=false'],
        waitMs: 120_000,
      }),
    );
    assert.ok(r.pid > 0);
    // The status bar's item names the controller; no transient note beside it says the same again.
    await waitUntil(() => new RegExp(`\\$\\(debug-alt\\) Go ${r.controller} `).test(l.statusBar.text), 'the status bar names the controller');
    assert.deepEqual((await api()).shownSince(started).filter((t) => t.kind === 'status'), []);
    assert.equal(s.controller, l.go.current?.controller, 'the views show the Go controller');
    assert.notEqual(s.controller, s.builtInController);
    assert.equal(s.builtInController?.status().paused, true, 'the built-in loop is paused meanwhile');
    assert.match(s.controllerOrigin, new RegExp(`^Go controller ${r.controller} · pid ${r.pid} · connected$`));
    assert.match(l.queueView.description ?? '', /pid \d+ · connected/);
    assert.equal(vscode.workspace.isTrusted, true);
    // The Resources view's kind row names who reconciles its objects now, and the built-in loop again after.
    const kindDescription = () => {
      l.resourcesTree.flush();
      const kind = l.resourcesTree.getChildren().find((n) => n.type === 'kind' && n.resource === RESOURCE)!;
      return String(l.resourcesTree.getTreeItem(kind).description);
    };
    assert.match(kindDescription(), new RegExp(`reconciled by Go controller ${r.controller}\\b`));

    await waitUntil(() => s.keyState(key)?.phase === 'queued', 'the widget is queued in the Go controller', 60_000);
    assert.ok(s.queuedKeys().includes(key), 'the Work Queue view lists it');
    assert.equal(s.loopState(), 'paused');
    // Its loop lives in its program: Stop Reconcile Loop is not offered (Pause and Stop Controller are) and refuses.
    assert.equal(l.contextKeys.get('reconcileLab.showsGoController'), true);
    const stopLoop = await run('reconcileLab.stopLoop');
    assert.ok(!stopLoop.ok && stopLoop.reason === 'invalidArgument' && /whose loop runs in its program: Pause Reconcile Loop stops its workers, Stop Controller ends the program/.test(stopLoop.message), JSON.stringify(stopLoop));
    assert.equal(s.loopState(), 'paused');

    const dry = ok(await run<{ actions: Array<{ verb: string; resource: string; outcome: string; diff: string }>; summary: string }>('reconcileLab.dryRunReconcile', { key, resource: RESOURCE, open: false }));
    assert.ok(dry.actions.some((a) => a.verb === 'create' && a.resource === 'configmaps' && a.outcome === 'ok'), JSON.stringify(dry.actions));
    // The result reads as the built-in loop's: the same header, reconciler line and numbered planned writes.
    assert.match(dry.summary, new RegExp(`^# Dry-run reconcile of ${key.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\n\nReconciler: Go controller ${r.controller} · resource `), dry.summary);
    assert.match(dry.summary, /## Planned writes \(\d+\)\n\n(- .*\n)*- create configmaps /, dry.summary);
    await assert.rejects(labCluster().client.get({ group: '', version: 'v1', resource: 'configmaps' }, ns, 'gadget-config'), 'the dry-run created nothing');
    // The person's Dry-Run Reconcile is journaled under the Go controller, as the planned writes its process reports
    // are: the Event Log row reads "[<controller>] Dry-Run Reconcile …" (not "[reconcile-lab]") and a planned
    // write's detail belongs to that action.
    const action = s.journal.entries({ kinds: ['control'], key }).filter((e) => e.kind === 'control' && e.action === 'dryRun').at(-1);
    assert.equal(action?.controller, r.controller, JSON.stringify(action));
    const planned = s.journal.entries({ kinds: ['write'], key }).filter((e) => e.kind === 'write' && e.dryRun).at(-1)!;
    assert.equal(planned.controller, r.controller);
    assert.match(entryDetail(s.journal, planned.seq, RESOURCE)?.reconcile?.label ?? '', /^Dry-Run Reconcile of \S+ \(your action; nothing was stored\)$/);

    const step = ok(await run<{ step: StepResult; summary: string }>('reconcileLab.stepReconcile', { key, resource: RESOURCE }));
    assert.equal(step.step.kind, 'reconciled', step.summary);
    const starts = s.journal.entries({ kinds: ['reconcileStart'], key }).filter((e) => e.controller === r.controller);
    assert.equal(starts.length, 1, 'one reconcile in the Go process, journaled like the built-in loop');
    assert.equal(s.keyState(key)?.reconciles, 1);
    assert.ok(s.journal.entries({ kinds: ['write'], key }).some((e) => e.kind === 'write' && !e.dryRun && e.resourceVersionAfter), 'its writes with resourceVersions');

    // Inspect Cache vs Server compares the Go program's own cache (read through the bridge) with the server.
    let inspected: { cache: string; state: string; cachedResourceVersion?: string; serverResourceVersion?: string } | undefined;
    await waitUntil(async () => (inspected = ok(await run<NonNullable<typeof inspected>>('reconcileLab.inspectCache', { key, resource: RESOURCE, open: false }))).state === 'in-sync', 'the Go cache to catch up with the step\'s writes', 30_000);
    assert.equal(inspected?.cache, `Go controller ${r.controller}'s cache`);
    // The finalizer the Go program added (its field manager is its program name) is its own in the escape hatch's
    // diagnosis, paused like it; the built-in lab loop, which uses the same finalizer name, is not taken for its owner.
    await waitUntil(() => (s.get(RESOURCE, key)?.metadata.finalizers ?? []).length > 0, 'the finalizer in the cache', 30_000);
    const strip = ok(await run<{ dryRun: boolean; diagnosis: { finalizers: Array<{ finalizer: string; running: string; probableOwner: string }> } }>('reconcileLab.stripFinalizers', { key, resource: RESOURCE, dryRun: true, confirmed: true }));
    assert.equal(strip.dryRun, true);
    const fin = strip.diagnosis.finalizers.find((f) => f.finalizer === 'lab.reconcile.dev/cleanup');
    assert.match(fin?.probableOwner ?? '', new RegExp(`^the Go controller ${r.controller} \\(\\S+, pid ${r.pid}\\)$`), JSON.stringify(strip.diagnosis));
    assert.equal(fin?.running, 'paused');
    assert.equal(inspected?.cachedResourceVersion, (await labCluster().client.get(WIDGETS, ns, 'gadget')).metadata.resourceVersion);

    // Show Controller…: back to the built-in loop and to the Go controller again, by name.
    assert.match(ok(await run<{ shown: string }>('reconcileLab.selectController', { controller: null })).shown, /^lab sample reconciler · Reconcile Lab's loop$/);
    assert.equal(s.controller, s.builtInController);
    assert.match(kindDescription(), /reconciled by the loop/);
    assert.match(ok(await run<{ shown: string }>('reconcileLab.selectController', { controller: r.controller })).shown, /^Go controller/);
    assert.equal(s.keyState(key)?.reconciles, 1, 'its key history is still there');
    const nobody = await run('reconcileLab.selectController', { controller: 'nobody' });
    assert.ok(!nobody.ok && nobody.reason === 'notFound');

    // Run Robustness Checks… while the views show the Go controller: new instances of the same program, each over
    // a scratch namespace, never the running one against the developer's objects.
    const rvBefore = (await labCluster().client.get(WIDGETS, ns, 'gadget')).metadata.resourceVersion;
    const checked = ok(await run<{ totals: { findings: number; errors: number; passed: number }; findings: unknown[] }>('reconcileLab.runChecks', { key, resource: RESOURCE, checks: ['runTwice', 'crashAfterWrite', 'staleCache', 'unobservedState', 'convergence'], quiet: true }));
    assert.equal(checked.totals.findings, 0, JSON.stringify(checked));
    assert.equal(checked.totals.errors, 0, JSON.stringify(checked));
    assert.equal(l.checks.lastReport?.reconcilerKind, 'go');
    assert.equal(l.checks.lastReport?.reconciler, [bin, '--metrics-bind-address=0', '--health-probe-bind-address=0', '--leader-elect=false'].join(' '));
    assert.equal((await labCluster().client.get(WIDGETS, ns, 'gadget')).metadata.resourceVersion, rvBefore, 'the developer\'s object untouched');
    assert.equal(s.keyState(key)?.reconciles, 1, 'the running Go controller did not reconcile for the checks');

    const stopped = ok(await run<{ exit?: string }>('reconcileLab.stopController', {}));
    assert.match(stopped.exit ?? '', /killed by SIGTERM|exited with code/);
    assert.equal(s.controller, s.builtInController, 'back to the built-in loop');
    assert.equal(l.go.launchedProcess, undefined);
    assert.equal(l.contextKeys.get('reconcileLab.showsGoController'), false, 'Stop Reconcile Loop is offered again');
  });

  it('a shown Go program that exits by itself (a crash, Stop in an F5 session) stays shown, without offering Start or Step: the Work Queue view says how to go on', async function () {
    this.timeout(240_000);
    const s = l.session!;
    const r = ok(await run<{ pid: number; controller: string }>('reconcileLab.runController', { command: bin, args: ['--metrics-bind-address=0', '--health-probe-bind-address=0', '--leader-elect=false'], waitMs: 120_000 }));
    assert.equal(l.contextKeys.get('reconcileLab.loopAvailable'), true);
    const before = (await api()).shownMark();
    try {
      process.kill(r.pid, 'SIGKILL');
      await waitUntil(() => l.go.current?.process.liveness === 'exited', 'the program seen exited', 30_000);
      // A notification says it ended by itself and how, not only the view's "exited" (once).
      await waitUntil(async () => (await api()).shownSince(before).some((t) => t.kind === 'error' && / was killed by SIGKILL after it started its controllers\./.test(t.text)), 'a notification that the program ended by itself', 10_000);
      l.renderStatus();
      assert.equal(s.controller, l.go.current?.controller, 'still shown, as it last was');
      assert.equal(l.contextKeys.get('reconcileLab.loopAvailable'), false, 'no Start / Step / Pause buttons for a program that is gone');
      const message = `Your Go program (pid ${r.pid}) exited, and its controller ${r.controller}'s queue with it. Run Controller… (or F5) runs it again; Show Controller… shows Reconcile Lab's loop.`;
      await waitUntil(() => l.queueView.message === message, `the Work Queue view to say: ${message} (it says: ${l.queueView.message})`, 5_000);
      assert.doesNotMatch(l.queueView.description ?? '', /Step: starts the loop/);
      assert.match(l.queueView.description ?? '', new RegExp(`Go controller ${r.controller} · pid ${r.pid} · exited`));
      const step = await run('reconcileLab.stepReconcile', {});
      assert.ok(!step.ok && /is not connected: run it again \(Run Controller…, or F5 for a debug session\)/.test(step.message), JSON.stringify(step));
      // The notice names the command as the palette does ("Start Reconcile Loop", not "Start Loop").
      const from = (await api()).shownMark();
      assert.equal((await run('reconcileLab.startLoop', {})).ok, false);
      const told = (await api()).shownSince(from).filter((t) => t.kind === 'error').map((t) => t.text);
      assert.ok(told.some((t) => t.startsWith('Start Reconcile Loop failed: ')), JSON.stringify(told));
    } finally {
      ok(await run('reconcileLab.stopController', {}));
    }
    const ended = (await api()).shownSince(before).filter((t) => /after it started its controllers/.test(t.text));
    assert.equal(ended.length, 1, `told once; Stop Controller tells nothing of the kind: ${JSON.stringify(ended)}`);
    assert.match(ended[0]!.text, new RegExp(`^Reconcile Lab: your Go program \\(${bin.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} --metrics-bind-address=0 --health-probe-bind-address=0 --leader-elect=false\\) was killed by SIGKILL after it started its controllers\\. Its last output is in the output "Reconcile Lab: Go Controller"\\.$`));
    assert.equal(s.controller, s.builtInController);
    assert.equal(l.contextKeys.get('reconcileLab.loopAvailable'), true, 'the built-in loop again');
  });

  it('Run Controller… in a window that is not connected yet connects first (with the settings), then runs the program', async function () {
    this.timeout(240_000);
    try {
      const session = () => l.session; // read afresh (no narrowing across the commands)
      ok(await run('reconcileLab.disconnect', {}));
      assert.equal(session(), undefined);
      const from = (await api()).shownMark();
      const r = ok(await run<{ pid: number; controller: string }>('reconcileLab.runController', { command: bin, args: ['--metrics-bind-address=0', '--health-probe-bind-address=0', '--leader-elect=false'], waitMs: 120_000 }));
      assert.ok(session(), 'connected by Run Controller…');
      assert.equal(session()?.controller, l.go.current?.controller, 'the views show the Go controller');
      assert.ok(r.pid > 0);
      assert.ok((await api()).shownSince(from).some((t) => /connecting to the cluster to run your controller/.test(t.text)));
      ok(await run('reconcileLab.stopController', {}));
    } finally {
      await connectTo(ns, { resources: [RESOURCE, 'configmaps'], reconcilerResource: RESOURCE });
    }
  });
});

describe('Go controller [untrusted]', () => {
  it('Run Controller refuses in an untrusted workspace: it runs workspace code', async () => {
    const r = await run('reconcileLab.runController', {});
    assert.equal(r.ok, false);
    assert.ok(!r.ok && r.reason === 'untrusted', JSON.stringify(r));
  });

  it('Install CRD refuses in an untrusted workspace: workspace files would become cluster objects', async () => {
    const r = await run('reconcileLab.installCrd', {});
    assert.ok(!r.ok && r.reason === 'untrusted', JSON.stringify(r));
  });
});

describe('Debug with Reconcile Lab (F5 on a Go launch configuration)', function () {
  this.timeout(120_000);
  let spy: vscode.Disposable | undefined;
  let resolved: vscode.DebugConfiguration[] = [];

  before(async () => {
    await lab();
    await connectTo(await testNamespace('ext-dbg'));
    // Registered after the extension's provider, so it sees the configuration as ours left it; returning undefined
    // ends the launch there (no Go extension, no Delve: the configuration is what is tested, not a debug session).
    spy = vscode.debug.registerDebugConfigurationProvider('go', {
      resolveDebugConfigurationWithSubstitutedVariables(_folder, config) {
        resolved.push(config);
        return undefined;
      },
    });
  });

  after(() => spy?.dispose());

  async function f5(config: Record<string, unknown>): Promise<{ config: vscode.DebugConfiguration; shown: string[] }> {
    resolved = [];
    const from = (await api()).shownMark(); // recentlyShown() keeps only the newest texts: count from a mark
    const folder = vscode.workspace.workspaceFolders?.[0];
    await vscode.debug.startDebugging(folder, { name: 'Debug controller', type: 'go', request: 'launch', mode: 'debug', program: '${workspaceFolder}/cmd', ...config });
    await waitUntil(() => resolved.length === 1, 'the configuration to be resolved');
    return { config: resolved[0]!, shown: (await api()).shownSince(from).map((s) => s.text) };
  }

  it('"reconcileLab": true gets the bridge environment and the connection\'s KUBECONFIG; leader election on is warned about', async () => {
    const { config, shown } = await f5({ reconcileLab: true, args: ['--leader-elect'], env: { MINE: 'kept' } });
    const env = config.env as Record<string, string>;
    assert.match(env.RECONCILE_LAB_BRIDGE ?? '', /^(unix:\/\/\/|tcp:\/\/127\.0\.0\.1:)/);
    assert.ok((env.RECONCILE_LAB_BRIDGE_TOKEN ?? '').length >= 32, 'a token');
    assert.equal(env.KUBECONFIG, labCluster().kubeconfigPath);
    assert.equal(env.MINE, 'kept', 'the configuration\'s own env is kept');
    const warning = shown.find((t) => /leader election looks enabled \(--leader-elect\)/.test(t));
    assert.ok(warning, `a leader-election warning among ${JSON.stringify(shown)}`);
    assert.match(warning, /loses leadership/);
    assert.ok(!shown.some((t) => t.includes(env.RECONCILE_LAB_BRIDGE_TOKEN!)), 'the token is never shown');
  });

  it('a program whose go.mod does not require the bridge is warned about (the session still starts)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rlab-dbg-'));
    try {
      mkdirSync(join(dir, 'cmd'));
      writeFileSync(join(dir, 'go.mod'), 'module example.com/plain\n\ngo 1.26\n');
      const { config, shown } = await f5({ reconcileLab: true, args: ['--leader-elect=false'], program: join(dir, 'cmd') });
      assert.ok((config.env as Record<string, string> | undefined)?.RECONCILE_LAB_BRIDGE, 'the environment is still added');
      assert.ok(
        shown.some((t) => t.includes(`${join(dir, 'go.mod')} does not require github.com/reconcile-lab/reconcile-lab/bridge`) && /the views will not show it/.test(t)),
        JSON.stringify(shown),
      );
      const set = await f5({ reconcileLab: true, args: ['--leader-elect=false'], program: '${workspaceFolder}/cmd' });
      assert.ok(!set.shown.some((t) => /does not require/.test(t)), `no go.mod in the workspace, no warning: ${JSON.stringify(set.shown)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a program that registers its webhooks unless ENABLE_WEBHOOKS=false, with no serving certificate: the launch configuration is told to set it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rlab-dbg-webhooks-'));
    try {
      mkdirSync(join(dir, 'cmd'));
      writeFileSync(join(dir, 'go.mod'), 'module example.com/hooks\n\ngo 1.26\n\nrequire github.com/reconcile-lab/reconcile-lab/bridge v0.0.0\n\nreplace github.com/reconcile-lab/reconcile-lab/bridge => ' + join(ROOT, 'bridge') + '\n');
      writeFileSync(join(dir, 'cmd', 'main.go'), 'package main\n\nimport "os"\n\nfunc main() {\n\tif os.Getenv("ENABLE_WEBHOOKS") != "false" {\n\t\tsetUpWebhooks()\n\t}\n}\n');
      const { config, shown } = await f5({ name: 'Operator', reconcileLab: true, args: ['--leader-elect=false'], program: join(dir, 'cmd') });
      assert.equal((config.env as Record<string, string>).ENABLE_WEBHOOKS, undefined, 'a launch.json configuration is not changed behind its back');
      assert.ok(shown.some((t) => /registers its webhooks unless ENABLE_WEBHOOKS is "false", and there is no serving certificate \(.*k8s-webhook-server\/serving-certs\/tls\.crt\)[^]*Add "env": \{"ENABLE_WEBHOOKS": "false"\} to the launch configuration "Operator"/.test(t)), JSON.stringify(shown));
      const off = await f5({ name: 'Operator', reconcileLab: true, args: ['--leader-elect=false'], program: join(dir, 'cmd'), env: { ENABLE_WEBHOOKS: 'false' } });
      assert.ok(!off.shown.some((t) => /webhooks/.test(t)), JSON.stringify(off.shown));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // The launch configuration's envFile was read for neither warning: a KUBECONFIG set there was replaced silently
  // (env's was warned about), and the webhook hint ignored its ENABLE_WEBHOOKS.
  it('an envFile\'s KUBECONFIG replaced is warned about, naming the envFile; the webhook hint reads ENABLE_WEBHOOKS there too, under env\'s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rlab-dbg-envfile-warn-'));
    try {
      mkdirSync(join(dir, 'cmd'));
      writeFileSync(join(dir, 'go.mod'), 'module example.com/hooks\n\ngo 1.26\n\nrequire github.com/reconcile-lab/reconcile-lab/bridge v0.0.0\n\nreplace github.com/reconcile-lab/reconcile-lab/bridge => ' + join(ROOT, 'bridge') + '\n');
      writeFileSync(join(dir, 'cmd', 'main.go'), 'package main\n\nimport "os"\n\nfunc main() {\n\tif os.Getenv("ENABLE_WEBHOOKS") != "false" {\n\t\tsetUpWebhooks()\n\t}\n}\n');
      const mine = join(dir, 'kind.kubeconfig');
      const off = join(dir, 'off.env');
      writeFileSync(off, `# local\nKUBECONFIG=${mine}\nENABLE_WEBHOOKS=false\n`);
      const base = { name: 'Operator', reconcileLab: true, args: ['--leader-elect=false'], program: join(dir, 'cmd') };

      const fromFile = await f5({ ...base, envFile: off });
      assert.equal((fromFile.config.env as Record<string, string>).KUBECONFIG, labCluster().kubeconfigPath, 'the program reaches the cluster the views show');
      assert.ok(
        fromFile.shown.some((t) => t.includes(`The envFile ${off} of the launch configuration "Operator" sets KUBECONFIG to ${mine}, but the program gets the connection's kubeconfig (${labCluster().kubeconfigPath}) instead`)),
        JSON.stringify(fromFile.shown),
      );
      assert.ok(!fromFile.shown.some((t) => /webhooks/.test(t)), `the envFile turns the webhooks off: ${JSON.stringify(fromFile.shown)}`);

      // env wins over the envFile: its KUBECONFIG is the one told about, its ENABLE_WEBHOOKS the one the program gets.
      const theirs = join(dir, 'other.kubeconfig');
      const both = await f5({ ...base, envFile: off, env: { KUBECONFIG: theirs, ENABLE_WEBHOOKS: 'true' } });
      assert.ok(both.shown.some((t) => t.includes(`The launch configuration "Operator" sets KUBECONFIG to ${theirs}`)), JSON.stringify(both.shown));
      assert.ok(!both.shown.some((t) => t.includes('The envFile')), JSON.stringify(both.shown));
      assert.ok(both.shown.some((t) => /registers its webhooks unless ENABLE_WEBHOOKS is "false"/.test(t)), JSON.stringify(both.shown));

      const on = join(dir, 'on.env');
      writeFileSync(on, 'ENABLE_WEBHOOKS=true\n');
      const fileOn = await f5({ ...base, envFile: [off, on] });
      assert.ok(
        fileOn.shown.some((t) => t.includes(`Add "env": {"ENABLE_WEBHOOKS": "false"} to the launch configuration "Operator" (it wins over the "true" of its envFile ${on}), or set ENABLE_WEBHOOKS=false there.`)),
        JSON.stringify(fileOn.shown),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('F5 before connecting connects with the settings first, then adds the bridge environment', async () => {
    const l = await lab();
    const ns = await testNamespace('ext-dbg-connect');
    try {
      ok(await run('reconcileLab.disconnect', {}));
      assert.equal(l.session, undefined);
      const { config, shown } = await f5({ reconcileLab: true, args: ['--leader-elect=false'] });
      assert.ok(l.session, 'connected by the F5');
      const env = config.env as Record<string, string>;
      assert.match(env.RECONCILE_LAB_BRIDGE ?? '', /^(unix:\/\/\/|tcp:\/\/127\.0\.0\.1:)/);
      assert.equal(env.KUBECONFIG, labCluster().kubeconfigPath);
      assert.ok(shown.some((t) => /connecting to the cluster for the debug session/.test(t)), JSON.stringify(shown));
      assert.ok(!shown.some((t) => /could not connect|starts without Reconcile Lab/.test(t)), JSON.stringify(shown));
    } finally {
      await connectTo(ns);
    }
  });

  // A new user's launch.json: args ["--leader-elect", "false"] (Go reads that as on, plus an argument), or no args at
  // all while cmd/main.go's flag defaults to true; and an env with their own KUBECONFIG, which the connection's
  // replaces. Each was silent before.
  it('leader election on by a separate "false" or by the program\'s flag default, and the user\'s own KUBECONFIG replaced: each is warned about', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rlab-dbg-le-'));
    try {
      mkdirSync(join(dir, 'cmd'));
      writeFileSync(join(dir, 'go.mod'), 'module example.com/queues\n\ngo 1.26\n\nrequire github.com/reconcile-lab/reconcile-lab/bridge v0.0.0\n\nreplace github.com/reconcile-lab/reconcile-lab/bridge => ' + join(ROOT, 'bridge') + '\n');
      writeFileSync(join(dir, 'cmd', 'main.go'), 'package main\n\nimport "flag"\n\nfunc main() {\n\tvar le bool\n\tflag.BoolVar(&le, "leader-elect", true, "Enable leader election.")\n\tflag.Parse()\n}\n');
      const separate = await f5({ reconcileLab: true, args: ['--leader-elect', 'false'], program: join(dir, 'cmd') });
      assert.ok(separate.shown.some((t) => /leader election looks enabled \(--leader-elect false: a Go bool flag takes its value only after "="[^]*--leader-elect=false turns it off\)/.test(t)), JSON.stringify(separate.shown));
      const byDefault = await f5({ reconcileLab: true, args: [], program: join(dir, 'cmd') });
      const warning = byDefault.shown.find((t) => /leader election looks enabled/.test(t));
      assert.ok(warning, `a leader-election warning among ${JSON.stringify(byDefault.shown)}`);
      assert.ok(warning.includes(`(the --leader-elect flag defined in ${join(dir, 'cmd', 'main.go')}:7 defaults to true, and the configuration's args do not set it)`), warning);
      assert.match(warning, /loses leadership[^]*debug with --leader-elect=false in the configuration's args\.$/);
      const off = await f5({ reconcileLab: true, args: ['--leader-elect=false'], program: join(dir, 'cmd') });
      assert.ok(!off.shown.some((t) => /leader election/.test(t)), JSON.stringify(off.shown));

      const mine = join(dir, 'kind.kubeconfig');
      const own = await f5({ name: 'Queues', reconcileLab: true, args: ['--leader-elect=false'], program: join(dir, 'cmd'), env: { KUBECONFIG: mine, MINE: 'kept' } });
      const env = own.config.env as Record<string, string>;
      assert.equal(env.KUBECONFIG, labCluster().kubeconfigPath, 'the program reaches the cluster the views show');
      assert.equal(env.MINE, 'kept');
      assert.ok(
        own.shown.some((t) => t.includes(`The launch configuration "Queues" sets KUBECONFIG to ${mine}, but the program gets the connection's kubeconfig (${labCluster().kubeconfigPath}) instead`)),
        JSON.stringify(own.shown),
      );
      const same = await f5({ reconcileLab: true, args: ['--leader-elect=false'], program: join(dir, 'cmd'), env: { KUBECONFIG: labCluster().kubeconfigPath } });
      assert.ok(!same.shown.some((t) => /sets KUBECONFIG/.test(t)), JSON.stringify(same.shown));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // envFile is the Go extension's attribute; without it Reconcile Lab's Delve adapter debugs, and dlv dap ignores
  // envFile: its variables reached the program only under the Go extension.
  it('without the Go extension, an envFile\'s variables reach the program under env\'s own (and the bridge\'s); an unreadable one stops the launch with its path', async function () {
    if (vscode.extensions.getExtension('golang.go')) this.skip(); // the Go extension reads envFile itself
    const dir = mkdtempSync(join(tmpdir(), 'rlab-dbg-envfile-'));
    try {
      writeFileSync(join(dir, '.env'), '# local\nWATCH_NAMESPACE=shop\nexport MINE=from-file\nKUBECONFIG=/elsewhere\n');
      const { config } = await f5({ reconcileLab: true, args: ['--leader-elect=false'], envFile: join(dir, '.env'), env: { MINE: 'from-env' } });
      const env = config.env as Record<string, string>;
      assert.equal(env.WATCH_NAMESPACE, 'shop', 'the envFile\'s variable');
      assert.equal(env.MINE, 'from-env', 'env wins over the envFile');
      assert.equal(env.KUBECONFIG, labCluster().kubeconfigPath, 'the bridge\'s environment wins over both');
      assert.ok(env.RECONCILE_LAB_BRIDGE);
      assert.equal(config.envFile, undefined, 'read: dlv dap is not given an attribute it does not know');

      const from = (await api()).shownMark();
      const missing = join(dir, 'missing.env');
      const folder = vscode.workspace.workspaceFolders?.[0];
      const started = await vscode.debug.startDebugging(folder, { name: 'With envFile', type: 'go', request: 'launch', mode: 'debug', program: '${workspaceFolder}/cmd', args: ['--leader-elect=false'], reconcileLab: true, envFile: missing });
      assert.equal(started, false, 'no session without its environment');
      const shown = (await api()).shownSince(from).map((t) => t.text);
      assert.ok(shown.some((t) => t.includes(`could not read the envFile ${missing} of the launch configuration "With envFile" (ENOENT)`)), JSON.stringify(shown));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--leader-elect=false is not warned about; a configuration without "reconcileLab" is left untouched', async () => {
    const off = await f5({ reconcileLab: true, args: ['--leader-elect=false'] });
    assert.ok(off.config.env?.RECONCILE_LAB_BRIDGE);
    assert.ok(!off.shown.some((t) => /leader election/.test(t)), JSON.stringify(off.shown));
    const plain = await f5({ args: ['--leader-elect'] });
    assert.equal(plain.config.env, undefined, 'no environment added');
    assert.ok(!plain.shown.some((t) => /Reconcile Lab/.test(t)), JSON.stringify(plain.shown));
  });
});

// F5 in an editor without VS Code's Go extension (code-server here has none): Reconcile Lab debugs the `go`
// configuration with Delve's own DAP server. A breakpoint in the sample's Reconcile is hit by the first reconcile,
// the views say the process is stopped in the debugger (not dead), continuing finishes the reconcile and journals
// it, and ending the session leaves neither dlv nor the program running.
describe('F5 without the Go extension: Reconcile Lab debugs with Delve (dlv dap)', function () {
  this.timeout(300_000);
  const events: Array<{ event: string; body?: Record<string, unknown> }> = [];
  let tracker: vscode.Disposable | undefined;
  let ns = '';

  before(async function () {
    if (!haveGo() || !existsSync(sampleDir()) || vscode.extensions.getExtension('golang.go')) this.skip();
    // A cold machine compiles every dependency without optimisations for Delve's build: minutes on two cores. Done
    // here, in the background, so the debug session below builds from Go's cache within its timeout.
    this.timeout(900_000);
    await warmDebugBuild(sampleDir());
    await lab();
    const dlv = installDelve(); // cached by the integration phase
    await vscode.workspace.getConfiguration('reconcileLab').update('goController.delvePath', dlv, vscode.ConfigurationTarget.Global);
    const crd = parseAllDocuments(readFileSync(join(ROOT, 'samples/crd.yaml'), 'utf8'))[0]!.toJS() as KubeObject;
    await installCrd(labCluster().transport, crd).catch((e: unknown) => {
      if (!/already exists|AlreadyExists/.test(String((e as Error).message))) throw e;
    });
    ns = await testNamespace('ext-delve');
    await labCluster().client.create(WIDGETS, { apiVersion: 'lab.reconcile.dev/v1alpha1', kind: 'Widget', metadata: { name: 'debugged', namespace: ns }, spec: { data: { color: 'plum' } } });
    await connectTo(ns, { resources: [RESOURCE, 'configmaps'], reconcilerResource: RESOURCE });
    tracker = vscode.debug.registerDebugAdapterTrackerFactory('go', {
      createDebugAdapterTracker: () => ({ onDidSendMessage: (m: { type?: string; event?: string; body?: Record<string, unknown> }) => void (m.type === 'event' && m.event && events.push({ event: m.event, body: m.body })) }),
    });
  });

  after(async () => {
    tracker?.dispose();
    vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
    await vscode.debug.stopDebugging();
    await vscode.workspace.getConfiguration('reconcileLab').update('goController.delvePath', undefined, vscode.ConfigurationTarget.Global);
  });

  it('a breakpoint in Reconcile is hit, the views say "stopped in the debugger", continue journals the reconcile, stop leaves no process', async () => {
    const l = await lab();
    const file = join(sampleDir(), 'widget', 'controller.go');
    const line = readFileSync(file, 'utf8').split('\n').findIndex((t) => t.startsWith('func (r *Reconciler) Reconcile(')) + 1; // the first statement
    assert.ok(line > 0, 'Reconcile found in the sample');
    vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(vscode.Uri.file(file), new vscode.Position(line, 0)))]);
    const started = new Promise<vscode.DebugSession>((resolve) => {
      const d = vscode.debug.onDidStartDebugSession((s) => (d.dispose(), resolve(s)));
    });
    const folder = vscode.workspace.workspaceFolders?.[0];
    const ok1 = await withTimeout(vscode.debug.startDebugging(folder, {
      name: 'Debug controller with Reconcile Lab',
      type: 'go',
      request: 'launch',
      mode: 'debug',
      program: join(sampleDir(), 'cmd'),
      args: ['--leader-elect=false', `--namespace=${ns}`],
      reconcileLab: true,
    }), 120_000, () => `startDebugging did not return; events: ${JSON.stringify(events).slice(0, 2000)}`);
    assert.ok(ok1, 'the debug session started');
    const session = await started;
    const key = `${ns}/debugged`;
    const s = l.session!;
    // dlv builds the program with debug flags first (cached by the integration phase's Delve test); the views then
    // show its controller, paused as a launched one is, with the Widget queued.
    await waitUntil(() => s.keyState(key)?.phase === 'queued' && l.go.all.length > 0, 'the debugged controller to queue the widget', 120_000);
    // Step it from the editor: the reconcile runs into the breakpoint (the step answers once it ended).
    const stepping = run<{ step: StepResult; summary: string }>('reconcileLab.stepReconcile', { key, resource: RESOURCE });
    await waitUntil(() => events.some((e) => e.event === 'stopped' && e.body?.reason === 'breakpoint'), 'the breakpoint in Reconcile to be hit', 120_000).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}; the adapter's events: ${JSON.stringify(events).slice(0, 3000)}; controllers: ${l.go.all.map((r) => l.go.describe(r)).join(', ')}`);
    });
    const stopped = events.find((e) => e.event === 'stopped')!;
    await waitUntil(() => l.go.all.some((r) => r.process.liveness === 'stoppedInDebugger'), 'the views to say the process is stopped in the debugger', 60_000);
    const ref = l.go.all.find((r) => r.process.liveness === 'stoppedInDebugger')!;
    assert.match(l.go.describe(ref), /· stopped in the debugger$/);
    const pid = ref.process.pid;
    // The Go controller's own reconciles (the built-in loop of the connection reconciles the Widget too).
    const goEnds = () => s.journal.entries({ kinds: ['reconcileEnd'], key }).filter((e) => e.controller === ref.controller.name).length;
    assert.equal(goEnds(), 0, 'the reconcile is held at the breakpoint');
    // A second step of the key answers at once, and says where the reconcile is held.
    const again = ok(await withTimeout(run<{ step: StepResult; summary: string }>('reconcileLab.stepReconcile', { key, resource: RESOURCE }), 20_000, () => 'a second step waited for the held reconcile'));
    assert.equal(again.step.kind, 'busy');
    assert.match(again.summary, /stopped in the debugger: continue the debug session/);
    // Delve built the program into the session's temporary directory, not __debug_bin… in the developer's folder.
    const output = String(session.configuration.output);
    assert.ok(output.startsWith(join(tmpdir(), 'reconcile-lab-dlv-')) && existsSync(output), `the debugged binary is in a temporary directory (${output})`);
    assert.deepEqual(readdirSync(join(sampleDir(), 'cmd')).filter((n) => n.startsWith('__debug_bin')), [], 'nothing built into the program\'s folder');

    vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
    await session.customRequest('continue', { threadId: stopped.body?.threadId });
    const step = ok(await stepping);
    assert.equal(step.step.kind, 'reconciled', step.summary);
    assert.equal(goEnds(), 1, 'the reconcile held at the breakpoint is journaled once it ended');
    await waitUntil(() => ref.process.liveness === 'connected', 'the process to answer again', 30_000);

    await vscode.debug.stopDebugging(session);
    await waitUntil(() => !alive(pid), `the debugged program (pid ${pid}) to be gone`, 30_000);
    await waitUntil(() => !dlvRunning(), 'dlv to be gone', 30_000);
    await waitUntil(() => !existsSync(join(output, '..')), 'the temporary build directory to be removed', 30_000);
  });
});

// F5 while another instance of the controller holds its leader-election lease: the debugged program waits for the
// lease, its controllers never start and the views show nothing; the session said nothing about it before.
describe('F5 while another instance holds the leader-election lease', function () {
  this.timeout(300_000);
  let ns = '';

  before(async function () {
    if (!haveGo() || !existsSync(sampleDir()) || vscode.extensions.getExtension('golang.go')) this.skip();
    this.timeout(900_000);
    await warmDebugBuild(sampleDir());
    await lab();
    await vscode.workspace.getConfiguration('reconcileLab').update('goController.delvePath', installDelve(), vscode.ConfigurationTarget.Global);
    const crd = parseAllDocuments(readFileSync(join(ROOT, 'samples/crd.yaml'), 'utf8'))[0]!.toJS() as KubeObject;
    await installCrd(labCluster().transport, crd).catch((e: unknown) => {
      if (!/already exists|AlreadyExists/.test(String((e as Error).message))) throw e;
    });
    ns = await testNamespace('ext-lease');
    await connectTo(ns, { resources: [RESOURCE, 'configmaps'], reconcilerResource: RESOURCE });
  });

  after(async () => {
    await vscode.debug.stopDebugging();
    await vscode.workspace.getConfiguration('reconcileLab').update('goController.delvePath', undefined, vscode.ConfigurationTarget.Global);
  });

  it('after 20 s of running without a controller, a warning says the program waits for the lease and who holds it', async () => {
    const l = await lab();
    // The sample's lease (LeaderElectionID widget-sample.lab.reconcile.dev) as another running instance holds it
    // (renewing it), for an hour.
    const held = await holdLease(labCluster().client, { namespace: ns, name: 'widget-sample.lab.reconcile.dev', holder: 'other-laptop_0f3c', durationSeconds: 3600 });
    const from = (await api()).shownMark();
    const started = new Promise<vscode.DebugSession>((resolve) => {
      const d = vscode.debug.onDidStartDebugSession((s) => (d.dispose(), resolve(s)));
    });
    const folder = vscode.workspace.workspaceFolders?.[0];
    const ok1 = await withTimeout(vscode.debug.startDebugging(folder, {
      name: 'Second instance',
      type: 'go',
      request: 'launch',
      mode: 'debug',
      program: join(sampleDir(), 'cmd'),
      args: ['--leader-elect', `--leader-election-namespace=${ns}`, `--namespace=${ns}`],
      reconcileLab: true,
    }), 120_000, () => 'startDebugging did not return');
    assert.ok(ok1, 'the debug session started');
    const session = await started;
    try {
      const told = () => api().then((a) => a.shownSince(from).filter((t) => t.kind === 'warning' && /the debug session "Second instance"/.test(t.text)));
      await waitUntil(async () => (await told()).length > 0, 'the notice about the debugged program', 180_000);
      const [notice] = await told();
      assert.ok(notice!.text.includes(`is waiting for the leader-election lease ${ns}/widget-sample.lab.reconcile.dev, held by other-laptop_0f3c`), notice!.text);
      assert.match(notice!.text, /Stop the other instance, or debug with --leader-elect=false in the configuration's args/);
      assert.equal(l.go.all.filter((r) => r.controller.announcement.leaderElection).length, 0, 'no controller of the debugged program started');
    } finally {
      await vscode.debug.stopDebugging(session);
      await held.release();
    }
  });
});

// F5 with no Delve anywhere: the offer to install it is a modal dialog. The debug session waits for the answer, and
// a notification hides itself after a few seconds, which left F5 looking hung with its offer out of sight. (Tests
// refuse modal dialogs, as a person dismissing it would: no session starts.)
describe('F5 without the Go extension and without Delve: the install offer is a dialog', function () {
  this.timeout(120_000);

  before(async function () {
    if (vscode.extensions.getExtension('golang.go') || findDelve({})) this.skip(); // a Delve on this machine is used, not offered
    await lab();
    await vscode.workspace.getConfiguration('reconcileLab').update('goController.delvePath', undefined, vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await vscode.debug.stopDebugging();
  });

  it('the offer is modal; dismissed, the session ends and nothing is installed', async () => {
    const from = (await api()).shownMark();
    const dir = mkdtempSync(join(tmpdir(), 'rlab-nodlv-'));
    try {
      const folder = vscode.workspace.workspaceFolders?.[0];
      // The test host refuses the dialog with an error naming it (a person would dismiss it): no session either way.
      const started = await withTimeout(vscode.debug.startDebugging(folder, { name: 'no Delve', type: 'go', request: 'launch', mode: 'debug', program: dir }), 60_000, () => 'startDebugging did not return: the offer waits for an answer nobody sees').then(
        (r) => r,
        (e: unknown) => {
          assert.match(String((e as Error).message), /refused to show dialog.*needs Delve/s);
          return false;
        },
      );
      assert.equal(started, false, 'no session without Delve');
      const shown = (await api()).shownSince(from);
      const offer = shown.find((t) => /needs Delve/.test(t.text));
      assert.ok(offer, `the offer among ${JSON.stringify(shown)}`);
      assert.equal(offer.kind, 'modal', offer.text);
      assert.match(offer.text, /go install github\.com\/go-delve\/delve\/cmd\/dlv@v\d/);
      assert.ok(!shown.some((t) => t.kind === 'progress' && /installing Delve/.test(t.text)), 'nothing installed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function withTimeout<T>(p: Thenable<T>, ms: number, what: () => string): Promise<T> {
  let t: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([Promise.resolve(p), new Promise<never>((_, reject) => (t = setTimeout(() => reject(new Error(what())), ms)))]).finally(() => clearTimeout(t));
}


/** Whether a `dlv dap` started by this extension host still runs (its children). */
function dlvRunning(): boolean {
  try {
    const out = execFileSync('pgrep', ['-P', String(process.pid), '-f', 'dlv dap'], { encoding: 'utf8' });
    return out.trim().length > 0;
  } catch {
    return false;
  }
}
