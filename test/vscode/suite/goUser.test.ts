// Run Controller… with a Go program shaped like a user's own kubebuilder project (samples/go-harbor-operator: one
// manager, two controllers on other resources than the connection's), in the real extension host against the real
// control plane: each controller is its own queue, and the views follow the one shown — its resource in the
// Resources tree (watched on demand when the connection did not list it, e.g. deployments.apps), its keys for Step
// this key (a cluster-scoped key has no namespace), the Event Log rows of each controller naming its resource.
import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { processAlive, RunRegistry } from '../../../src/core/bridge/runRegistry.ts';
import * as vscode from 'vscode';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { StepResult } from '../../../src/core/controller/controller.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import type { ReconcileLab } from '../../../src/host/reconcileLab.ts';
import { buildGoProgram, harborOperatorDir, haveGo, setRepoRoot } from '../../integration/support/goSample.ts';
import { installCrd, uniqueName } from '../../integration/support/cluster.ts';
import { api, connectTo, lab, labCluster, ok, ROOT, run, runAsStranger, testNamespace, waitUntil } from './support/lab.ts';
import { Peer } from '../../unit/bridge/peer.ts';

setRepoRoot(ROOT);

const HARBORS = 'harbors.fleet.example.io';
const DEPLOYMENTS = 'deployments.apps';

describe('a user-shaped Go program with two controllers (Run Controller…)', function () {
  this.timeout(240_000);
  let l: ReconcileLab;
  let ns = '';
  let bin = '';
  const harbor = uniqueName('ext-harbor');

  before(async function () {
    if (!haveGo() || !existsSync(harborOperatorDir())) this.skip();
    this.timeout(300_000);
    l = await lab();
    bin = buildGoProgram(harborOperatorDir(), 'harbor-operator'); // cached by the integration phase
    const crd = parseAllDocuments(readFileSync(join(harborOperatorDir(), 'config', 'crd.yaml'), 'utf8'))[0]!.toJS() as KubeObject;
    await installCrd(labCluster().transport, crd);
    ns = await testNamespace('ext-gouser');
    await labCluster().client.create({ group: 'fleet.example.io', version: 'v1beta1', resource: 'harbors' }, { apiVersion: 'fleet.example.io/v1beta1', kind: 'Harbor', metadata: { name: harbor }, spec: { berths: 4, namespace: ns } });
    await labCluster().client.create(
      { group: 'apps', version: 'v1', resource: 'deployments' },
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns }, spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'example.invalid/none' }] } } } },
    );
    await connectTo(ns); // the run's Widget CRD is the connection's resource; neither Harbors nor Deployments are listed
  });

  after(async () => {
    if (l) await run('reconcileLab.stopController', {});
  });

  it('each controller is a queue of its own; the views follow the one shown: its resource, its keys, Step this key', async function () {
    this.timeout(300_000);
    const s = l.session!;
    const widgets = s.builtInPrimaryResource;
    assert.ok(widgets, 'the connection has a built-in loop resource');
    assert.ok(!s.resources.some((r) => r.id === DEPLOYMENTS), 'deployments are not watched before');
    const started = ok(await run<{ controller: string }>('reconcileLab.runController', { command: bin, args: ['--health-probe-bind-address=0', '--metrics-bind-address=0'], waitMs: 120_000 }));
    await waitUntil(() => l.go.all.length === 2, 'both controllers announced', 60_000);
    assert.deepEqual(l.go.all.map((c) => c.controller.name).sort(), ['deployment', 'harbor-keeper']);
    // Neither reconciles the connection's resource: the first controller cmd/main.go sets up is shown, whichever the
    // manager (which starts both at once) announced first.
    assert.equal(started.controller, 'harbor-keeper');
    assert.equal(l.go.current?.controller.name, 'harbor-keeper');

    // The cluster-scoped CRD's controller: its resource is the views' resource, its key has no namespace.
    assert.match(ok(await run<{ shown: string }>('reconcileLab.selectController', { controller: 'harbor-keeper' })).shown, /^Go controller harbor-keeper/);
    assert.equal(s.primaryResource, HARBORS, 'the views show the Harbors the shown controller reconciles');
    // Show Controller…'s pick says which controller the views show now, and only that one.
    const from = (await api()).shownMark();
    const picking = vscode.commands.executeCommand('reconcileLab.selectController');
    let pick = '';
    await waitUntil(async () => (pick = (await api()).shownSince(from).find((t) => t.kind === 'quickPick')?.text ?? '') !== '', 'the Show Controller… pick');
    await new Promise((r) => setTimeout(r, 500));
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    await picking;
    assert.match(pick, /^harbor-keeper · harbors\.fleet\.example\.io · pid \d+ · connected · shown now$/m, pick);
    assert.equal(pick.match(/shown now/g)?.length, 1, pick);
    assert.equal(s.controller?.name, 'harbor-keeper', 'dismissed: nothing changed');
    assert.equal(s.primaryInfo?.namespaced, false);
    await waitUntil(() => s.keyState(harbor)?.phase === 'queued' && s.get(HARBORS, harbor) !== undefined, 'the Harbor queued and in the tree', 60_000).catch((e: Error) => {
      throw new Error(`${e.message}: DEBUG state=${JSON.stringify(s.keyState(harbor))} obj=${s.get(HARBORS, harbor) !== undefined} primary=${s.primaryResource} keys=${JSON.stringify(s.keyStates().map((k) => [k.key, k.phase]))} resources=${s.resources.map((r) => r.id).join(',')}`);
    });
    const step = ok(await run<{ step: StepResult; summary: string }>('reconcileLab.stepReconcile', { key: harbor, resource: HARBORS }));
    assert.ok(step.step.kind === 'reconciled' && step.step.key === harbor, step.summary);
    assert.equal(s.resourceOfController('harbor-keeper'), HARBORS, 'its Event Log rows name Harbors');

    // The built-in type's controller (not watched by the connection): watched from now on, its keys namespaced.
    assert.match(ok(await run<{ shown: string }>('reconcileLab.selectController', { controller: 'deployment' })).shown, /^Go controller deployment/);
    assert.equal(s.primaryResource, DEPLOYMENTS);
    assert.ok(s.resources.some((r) => r.id === DEPLOYMENTS), 'deployments are watched now');
    await waitUntil(() => s.get(DEPLOYMENTS, `${ns}/web`) !== undefined && s.keyState(`${ns}/web`)?.phase === 'queued', 'the Deployment in the tree and queued', 60_000);
    const step2 = ok(await run<{ step: StepResult; summary: string }>('reconcileLab.stepReconcile', { key: `${ns}/web`, resource: DEPLOYMENTS }));
    assert.ok(step2.step.kind === 'reconciled' && step2.step.outcome.kind === 'requeueAfter', step2.summary);
    assert.equal(s.resourceOfController('deployment'), DEPLOYMENTS);

    ok(await run('reconcileLab.stopController', {}));
    assert.deepEqual(l.go.all.map((c) => c.controller.name), [], 'the stopped program\'s controllers are no longer listed (the next run lists only its own)');
    assert.equal(s.controller, s.builtInController);
    assert.equal(s.primaryResource, widgets, 'back to the built-in loop\'s resource');
  });

  // The order the manager announces its controllers in is a race: here the second controller the program set up is
  // announced first. Before, showing it made its resource the views' resource, and the first controller, announced
  // next, then looked like "not the one reconciling the primary resource" and was never shown (a CI run caught it).
  it('a program that announces its second controller first: the views still show the first it set up', async function () {
    this.timeout(60_000);
    const hub = await l.go.ensureBridge(l.session!);
    const env = hub.env();
    const { peer } = await Peer.hello(env.RECONCILE_LAB_BRIDGE!, env.RECONCILE_LAB_BRIDGE_TOKEN!, { pid: 4343, instance: `inst-${Date.now()}` });
    try {
      peer.send({ type: 'controller', name: 'deployment', group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', priorityQueue: false, paused: true, order: 2, declared: 2 });
      await waitUntil(() => l.go.current?.controller.name === 'deployment', 'the first announced is shown meanwhile', 20_000);
      peer.send({ type: 'controller', name: 'harbor-keeper', group: 'fleet.example.io', version: 'v1beta1', kind: 'Harbor', resource: 'harbors', priorityQueue: true, paused: true, order: 1, declared: 2 });
      await waitUntil(() => l.go.current?.controller.name === 'harbor-keeper', 'the first controller the program set up is shown once announced', 20_000);
    } finally {
      peer.close();
      l.go.hideShown();
      const p = hub.processByPid(4343);
      if (p) hub.remove(p); // as Stop Controller does: the next run lists only its own controllers
    }
  });

  // The person's choice wins over the announcement order: a controller picked in Show Controller… stays shown when the
  // program's first controller is announced after it (a CI run of the relay sample's beacon-board test caught the
  // views switching back).
  it('a controller chosen in Show Controller… stays shown when the program announces the first controller it set up later', async function () {
    this.timeout(60_000);
    const hub = await l.go.ensureBridge(l.session!);
    const env = hub.env();
    const { peer } = await Peer.hello(env.RECONCILE_LAB_BRIDGE!, env.RECONCILE_LAB_BRIDGE_TOKEN!, { pid: 4345, instance: `inst-chosen-${Date.now()}` });
    try {
      peer.send({ type: 'controller', name: 'deployment', group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', priorityQueue: false, paused: true, order: 2, declared: 2 });
      await waitUntil(() => l.go.all.some((c) => c.controller.name === 'deployment'), 'deployment announced', 20_000);
      assert.match(ok(await run<{ shown: string }>('reconcileLab.selectController', { controller: 'deployment' })).shown, /^Go controller deployment/);
      peer.send({ type: 'controller', name: 'harbor-keeper', group: 'fleet.example.io', version: 'v1beta1', kind: 'Harbor', resource: 'harbors', priorityQueue: true, paused: true, order: 1, declared: 2 });
      // Listed and handled in one turn (the hub lists a controller and fires its announcement together).
      await waitUntil(() => l.go.all.some((c) => c.controller.name === 'harbor-keeper'), 'harbor-keeper announced', 20_000);
      assert.equal(l.go.current?.controller.name, 'deployment', 'the chosen controller is still shown');
    } finally {
      peer.close();
      l.go.hideShown();
      const p = hub.processByPid(4345);
      if (p) hub.remove(p);
    }
  });

  // An F5 session's program (pid known from the debug adapter's process event) whose controller has leader election
  // on and a ReconciliationTimeout: told once. Before, any program shown while a debug session ran was "debugged"
  // (also one Run Controller… launched beside it), and Show Controller… back to it told it again each time.
  it('the debugging hazards (leader election, ReconciliationTimeout) are told for the debugged program only, once', async function () {
    this.timeout(60_000);
    const hub = await l.go.ensureBridge(l.session!);
    const env = hub.env();
    l.go.hideShown();
    l.go.debugState('f5-session', { stopped: false, pid: 5151 });
    const stamp = Date.now();
    const launched = await Peer.hello(env.RECONCILE_LAB_BRIDGE!, env.RECONCILE_LAB_BRIDGE_TOKEN!, { pid: 5152, instance: `inst-launched-${stamp}` });
    const debugged = await Peer.hello(env.RECONCILE_LAB_BRIDGE!, env.RECONCILE_LAB_BRIDGE_TOKEN!, { pid: 5151, instance: `inst-debugged-${stamp}` });
    const from = (await api()).shownMark();
    const hazards = async () => (await api()).shownSince(from).filter((t) => /Reconcile Lab: debugging /.test(t.text)).map((t) => t.text);
    try {
      launched.peer.send({ type: 'controller', name: 'lamp', group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', priorityQueue: true, paused: true, leaderElection: true, order: 1, declared: 1 });
      await waitUntil(() => l.go.current?.controller.name === 'lamp', 'the launched program\'s controller shown', 20_000);
      debugged.peer.send({ type: 'controller', name: 'queue', group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', priorityQueue: true, paused: true, leaderElection: true, reconciliationTimeoutMs: 20_000, order: 1, declared: 1 });
      await waitUntil(() => l.go.all.some((c) => c.controller.name === 'queue'), 'the debugged program\'s controller announced', 20_000);
      assert.deepEqual(await hazards(), [], 'the program no debug session runs is not "debugged"');
      assert.match(ok(await run<{ shown: string }>('reconcileLab.selectController', { controller: 'queue' })).shown, /^Go controller queue/);
      const told = await hazards();
      assert.equal(told.length, 1, JSON.stringify(told));
      assert.match(told[0]!, /^Reconcile Lab: debugging queue: leader election is on: a breakpoint held longer than the lease[^]*; a ReconciliationTimeout of 20000 ms is set: a breakpoint inside Reconcile cancels its context after that long\.$/);
      ok(await run('reconcileLab.selectController', { controller: 'lamp' }));
      ok(await run('reconcileLab.selectController', { controller: 'queue' }));
      assert.equal((await hazards()).length, 1, 'told once, not at each Show Controller…');
    } finally {
      l.go.debugState('f5-session', { ended: true });
      launched.peer.close();
      debugged.peer.close();
      l.go.hideShown();
      for (const pid of [5151, 5152]) {
        const p = hub.processByPid(pid);
        if (p) hub.remove(p);
      }
    }
  });

  // A newcomer's first mistake: the kind's CRD is not installed. The program's RESTMapper finds no resource, so the
  // announcement names the kind only; the editor says so at once, not when the cache sync timeout ends the program.
  it('a controller whose kind the cluster does not serve (CRD not installed): a warning at once says to install the CRD', async function () {
    this.timeout(60_000);
    const hub = await l.go.ensureBridge(l.session!);
    const env = hub.env();
    const mark = (await api()).shownMark();
    const { peer } = await Peer.hello(env.RECONCILE_LAB_BRIDGE!, env.RECONCILE_LAB_BRIDGE_TOKEN!, { pid: 4344, instance: `inst-crd-${Date.now()}` });
    try {
      peer.send({ type: 'controller', name: 'shelf', group: 'shop.example.org', version: 'v1alpha1', kind: 'Shelf', priorityQueue: true, paused: true, order: 1, declared: 1 });
      const warned = async () => (await api()).shownSince(mark).filter((t) => t.kind === 'warning' && /Shelf/.test(t.text));
      let texts: ReadonlyArray<{ text: string }> = [];
      await waitUntil(async () => (texts = await warned()).length > 0, 'a warning about the Shelf kind', 20_000);
      assert.match(texts[0]!.text, /the Go controller shelf reconciles Shelf \(shop\.example\.org\/v1alpha1\), a kind the cluster does not serve .*install its CRD \(a kubebuilder project: make install, or kubectl apply -f config\/crd\/bases\)/);
      assert.equal(texts.length, 1, 'said once');
      // Shown, it reconciles no resource the views know: the built-in loop's Widgets are not its keys, so no kind row
      // reads "reconciled by Go controller shelf" and no Widget can be stepped in it.
      const s = l.session!;
      if (s.controller?.name !== 'shelf') ok(await run('reconcileLab.selectController', { controller: 'shelf' }));
      assert.equal(s.controller?.name, 'shelf');
      assert.ok(s.builtInPrimaryResource, 'the connection has a built-in loop resource');
      assert.equal(s.primaryResource, undefined);
      l.resourcesTree.flush();
      const kinds = l.resourcesTree.getChildren().filter((n) => n.type === 'kind').map((n) => String(l.resourcesTree.getTreeItem(n).description));
      assert.ok(!kinds.some((d) => /reconciled by/.test(d)), JSON.stringify(kinds));
      const step = await run('reconcileLab.stepReconcile', { key: `${ns}/anything`, resource: s.builtInPrimaryResource });
      assert.ok(!step.ok, JSON.stringify(step));
    } finally {
      peer.close();
      l.go.hideShown();
      const p = hub.processByPid(4344);
      if (p) hub.remove(p);
    }
  });

  // code-server keeps a closed tab's window (and the program it launched) running for a while; the next window's Run
  // Controller… sees that run in the registry of this user's windows and stops it first when the person says so.
  it('another window runs the same controller: Run Controller… sees it and stops it first (others: stop); its own run is recorded for other windows until stopped', async function () {
    this.timeout(300_000);
    const cwd = l.go.runRequest({ command: bin }).spec.cwd!;
    // The other window: its extension host and the program it launched (a group leader, as the launcher starts it).
    const otherWindow = spawn('sleep', ['300'], { stdio: 'ignore' });
    const otherProgram = spawn('sleep', ['300'], { stdio: 'ignore', detached: true });
    try {
      const rec = new RunRegistry(undefined, otherWindow.pid!).record({ pid: otherProgram.pid!, cwd, command: 'go run ./cmd', startedAt: Date.now() - 60_000 });
      assert.deepEqual(l.go.otherRuns(cwd).map((r) => [r.pid, r.ownerPid]), [[otherProgram.pid, otherWindow.pid]], 'this window sees the other window\'s run');
      const r = ok(await run<{ stoppedOthers: number[] }>('reconcileLab.runController', { command: bin, args: ['--health-probe-bind-address=0', '--metrics-bind-address=0'], waitMs: 120_000, others: 'stop' }));
      assert.deepEqual(r.stoppedOthers, [otherProgram.pid]);
      assert.equal(processAlive(otherProgram.pid!), false, 'the other window\'s program was stopped');
      assert.deepEqual(l.go.otherRuns(cwd), [], 'its record is gone with it');
      rec.dispose();
      // Seen from the other window, this window's run is recorded now, until it is stopped.
      const fromOther = new RunRegistry(undefined, otherWindow.pid!);
      assert.deepEqual(fromOther.others(cwd).map((x) => [x.pid, x.ownerPid]), [[l.go.launchedProcess!.pid, process.pid]]);
      ok(await run('reconcileLab.stopController', {}));
      await waitUntil(() => fromOther.others(cwd).length === 0, 'the record gone after Stop Controller', 20_000);
    } finally {
      otherWindow.kill('SIGKILL');
      otherProgram.kill('SIGKILL');
    }
  });

  it('Run Controller… from the settings: command, args, env and a cwd relative to the workspace folder reach the program', async function () {
    this.timeout(300_000);
    const folder = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    mkdirSync(join(folder, 'operator'), { recursive: true });
    const cfg = () => vscode.workspace.getConfiguration('reconcileLab');
    const T = vscode.ConfigurationTarget.Workspace;
    try {
      await cfg().update('goController.command', 'sh -c', T);
      await cfg().update('goController.args', [`echo "cwd=$PWD greeting=$HARBOR_GREETING kubeconfig=$KUBECONFIG"; exec ${bin} --health-probe-bind-address=0 --metrics-bind-address=0`], T);
      // A KUBECONFIG of the user's own: the connection's wins (the program must reach the cluster the views show), and
      // that is said rather than done silently.
      await cfg().update('goController.env', { HARBOR_GREETING: 'ahoy', KUBECONFIG: '/nowhere/kind.kubeconfig' }, T);
      await cfg().update('goController.cwd', 'operator', T);
      const from = (await api()).shownMark();
      ok(await run('reconcileLab.runController', { waitMs: 120_000 }));
      await waitUntil(() => l.go.all.length === 2, 'both controllers announced', 60_000);
      const out = l.go.launchedProcess!.tail(200);
      assert.ok(out.includes(`cwd=${join(folder, 'operator')} greeting=ahoy kubeconfig=${labCluster().kubeconfigPath}`), JSON.stringify(out.slice(0, 5)));
      const shown = (await api()).shownSince(from).map((t) => t.text);
      assert.ok(
        shown.some((t) => t.includes(`reconcileLab.goController.env sets KUBECONFIG to /nowhere/kind.kubeconfig, but the program gets the connection's kubeconfig (${labCluster().kubeconfigPath}) instead`)),
        JSON.stringify(shown),
      );
    } finally {
      ok(await run('reconcileLab.stopController', {}));
      for (const k of ['goController.command', 'goController.args', 'goController.env', 'goController.cwd']) await cfg().update(k, undefined, T);
    }
  });

  it('Run Controller… with no command set, in a module whose cmd/ holds two programs and no main package of its own: it names them and how to choose, and starts nothing', async function () {
    const folder = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    const dir = join(folder, 'two-programs');
    for (const name of ['correct', 'buggy']) {
      mkdirSync(join(dir, 'cmd', name), { recursive: true });
      writeFileSync(join(dir, 'cmd', name, 'main.go'), 'package main\n\nfunc main() {}\n');
    }
    writeFileSync(join(dir, 'go.mod'), 'module example.com/two\n\ngo 1.26.0\n');
    const cfg = () => vscode.workspace.getConfiguration('reconcileLab');
    const T = vscode.ConfigurationTarget.Workspace;
    try {
      await cfg().update('goController.cwd', 'two-programs', T);
      const before = l.go.launchedProcess;
      const r = await run<{ pid: number }>('reconcileLab.runController', { waitMs: 30_000 });
      assert.ok(!r.ok, JSON.stringify(r));
      assert.equal((r as { reason?: string }).reason, 'invalidArgument', JSON.stringify(r));
      assert.match((r as { message: string }).message, /two-programs has no main package of its own and its cmd\/ holds 2 programs \(\.\/cmd\/buggy, \.\/cmd\/correct\), so Run Controller… cannot tell which one runs your controller\. Set reconcileLab\.goController\.command, e\.g\. "go run \.\/cmd\/buggy"\./);
      assert.equal(l.go.launchedProcess, before, 'nothing was started');
    } finally {
      await cfg().update('goController.cwd', undefined, T);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // A kubebuilder project with webhooks, run outside the cluster: its webhook server finds no certificate and the
  // manager stops before any controller starts. The program here is a shell that behaves so unless ENABLE_WEBHOOKS is
  // "false" (then it runs the harbor operator); its module's code reads ENABLE_WEBHOOKS as kubebuilder's scaffold does.
  it('a program stopped by its webhook server (no serving certificate): Run Without Webhooks writes ENABLE_WEBHOOKS=false to the settings and runs it again', async function () {
    this.timeout(300_000);
    const folder = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    const dir = join(folder, 'webhook-operator');
    mkdirSync(join(dir, 'cmd'), { recursive: true });
    writeFileSync(join(dir, 'go.mod'), 'module example.org/webhookop\n\ngo 1.26\n');
    writeFileSync(join(dir, 'cmd', 'main.go'), 'package main\n\nimport "os"\n\nfunc main() {\n\tif os.Getenv("ENABLE_WEBHOOKS") != "false" {\n\t\tsetUpWebhooks()\n\t}\n}\n');
    const script = `if [ "$ENABLE_WEBHOOKS" = false ]; then exec ${bin} --health-probe-bind-address=0 --metrics-bind-address=0; fi; echo 'INFO controller-runtime.webhook Starting webhook server' >&2; echo 'ERROR setup problem running manager {"error": "open /tmp/k8s-webhook-server/serving-certs/tls.crt: no such file or directory"}' >&2; exit 1`;
    const cfg = () => vscode.workspace.getConfiguration('reconcileLab');
    const T = vscode.ConfigurationTarget.Workspace;
    try {
      await cfg().update('goController.env', { HARBOR_GREETING: 'ahoy' }, T);
      // Without the person's yes (a call from code without withoutWebhooks): the error names the certificate and the way out.
      const refused = await run('reconcileLab.runController', { command: 'sh', args: ['-c', script], cwd: dir, waitMs: 60_000 });
      assert.ok(!refused.ok, JSON.stringify(refused));
      assert.match(refused.message, /no serving certificate \(\/tmp\/k8s-webhook-server\/serving-certs\/tls\.crt\)[^]*skips its webhooks when ENABLE_WEBHOOKS=false[^]*Run Without Webhooks/);
      assert.deepEqual(cfg().get('goController.env'), { HARBOR_GREETING: 'ahoy' }, 'nothing written without a yes');
      // With it (the button): the setting keeps what was there and gains ENABLE_WEBHOOKS=false; the program runs.
      const r = ok(await run<{ webhooksTurnedOff: boolean; controllers: string[] }>('reconcileLab.runController', { command: 'sh', args: ['-c', script], cwd: dir, waitMs: 120_000, withoutWebhooks: true }));
      assert.equal(r.webhooksTurnedOff, true);
      assert.deepEqual(cfg().get('goController.env'), { HARBOR_GREETING: 'ahoy', ENABLE_WEBHOOKS: 'false' });
      await waitUntil(() => l.go.all.length === 2, 'both controllers announced', 60_000);
      // The privileged argument is refused from anything but this suite (a command link cannot change the settings).
      const link = await runAsStranger('reconcileLab.runController', { withoutWebhooks: true });
      assert.ok(!link.ok, JSON.stringify(link));
      assert.match(link.message, /"withoutWebhooks"[^]*honoured only from Reconcile Lab's own test suite/);
    } finally {
      ok(await run('reconcileLab.stopController', {}));
      await cfg().update('goController.env', undefined, T);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
