// Run Controller… with a Go program whose manager cache watches only some namespaces (samples/go-relay-operator:
// cache.Options DefaultNamespaces), in the real extension host against the real control plane: an object of the
// shown controller's resource outside those namespaces is shown as outside its cache — no queue state, not a
// ":primary" row (so no Step this key / Dry-Run / Reconcile Now in its menu) — and a step of it is refused with the
// reason; an object inside is a key of the controller as usual.
import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import type { ReconcileLab } from '../../../src/host/reconcileLab.ts';
import type { ResourceNode } from '../../../src/host/views/resourcesTree.ts';
import { buildGoProgram, haveGo, relayOperatorDir, setRepoRoot } from '../../integration/support/goSample.ts';
import { installCrd, testCrd, uniqueName } from '../../integration/support/cluster.ts';
import { api, connectTo, lab, labCluster, ok, ROOT, run, testNamespace, waitUntil, tooltipText } from './support/lab.ts';
import { CRD_RESOURCE } from '../../../src/core/k8s/crdManifests.ts';
import { restartNotice, type InstallCrdsResult } from '../../../src/host/commands/crdCommands.ts';

setRepoRoot(ROOT);

const BEACONS = 'beacons.relay.example.io';
const GVR = { group: 'relay.example.io', version: 'v1alpha1', resource: 'beacons' };

// A newcomer runs their controller before installing its CRD. The program's bridge announces the kind without a
// resource; the editor warns at once and, finding the CRD's manifest in the workspace (config/crd/bases), offers to
// install it and restart the program: Install CRD applies it, waits until it is served, and the restarted program's
// controller reconciles the now-served resource, which the connection then watches. Runs first in this file: the
// next suite installs the Beacon CRD again for itself.
describe('Install CRD: a Go program run before its CRD was installed (Run Controller…)', function () {
  this.timeout(240_000);
  let l: ReconcileLab;
  let ns = '';
  let bin = '';
  let manifestDir = '';
  const sibling = { group: `${uniqueName('relay')}.example.io`, kind: 'Lamp', plural: 'lamps' };
  const siblingCrd = () => `${sibling.plural}.${sibling.group}`;

  before(async function () {
    if (!haveGo() || !existsSync(relayOperatorDir())) this.skip();
    this.timeout(300_000);
    l = await lab();
    bin = buildGoProgram(relayOperatorDir(), 'relay-operator'); // cached by the integration phase
    // No Beacon CRD in the cluster (an earlier run or phase may have installed it, and left Beacons whose finalizer
    // no running controller removes any more: the CRD's deletion waits for every Beacon to go, so release them first).
    const left = await labCluster().client.list(GVR, undefined).catch(() => ({ items: [] as KubeObject[] }));
    for (const b of left.items) {
      if (b.metadata.finalizers?.length) await labCluster().client.patch(GVR, b.metadata.namespace, b.metadata.name!, 'merge', { metadata: { finalizers: null } }).catch(() => undefined);
    }
    await labCluster().client.delete(CRD_RESOURCE, undefined, BEACONS).catch(() => undefined);
    await waitUntil(() => labCluster().client.get(CRD_RESOURCE, undefined, BEACONS).then(() => false, () => true), 'the Beacon CRD gone', 60_000);
    // The project's manifest where kubebuilder puts it.
    manifestDir = join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, 'config', 'crd', 'bases');
    mkdirSync(manifestDir, { recursive: true });
    writeFileSync(join(manifestDir, 'relay.example.io_beacons.yaml'), readFileSync(join(relayOperatorDir(), 'config', 'crd', 'beacons.yaml'), 'utf8'));
    // Another CRD of the project, not installed either (make install applies them together).
    writeFileSync(join(manifestDir, `${sibling.group}_${sibling.plural}.yaml`), stringify(testCrd(sibling)));
    ns = await testNamespace('ext-crd');
    await connectTo(ns);
  });

  after(async () => {
    if (l) await run('reconcileLab.stopController', {});
    if (manifestDir) rmSync(join(manifestDir, '..', '..'), { recursive: true, force: true });
    await labCluster().client.delete(CRD_RESOURCE, undefined, siblingCrd()).catch(() => undefined);
  });

  it('the warning offers Install CRD; installing it restarts the program, whose controller then reconciles the served kind', async function () {
    this.timeout(300_000);
    const s = l.session!;
    const mark = (await api()).shownMark();
    // controller-runtime logs "no matches for kind" for Beacon as the controller starts, racing the bridge's
    // announcement of it: here the log line surely comes first (echoed before the program starts; not again after the
    // restart, when the kind is served), and the warning still names the controller, once.
    const line = JSON.stringify({ level: 'error', logger: 'controller-runtime.source.EventHandler', msg: 'if kind is a CRD, it should be installed before calling Start', kind: 'Beacon.relay.example.io', error: 'no matches for kind "Beacon" in version "relay.example.io/v1alpha1"' });
    // The sibling CRD's kind (of the same config/crd/bases) missing too, as the program's log would say of a kind it
    // watches: its offer would name the same two CRDs as Beacon's, which is still shown; it is not shown again.
    const lampLine = JSON.stringify({ level: 'error', logger: 'controller-runtime.source.EventHandler', msg: 'if kind is a CRD, it should be installed before calling Start', kind: `Lamp.${sibling.group}`, error: `no matches for kind "Lamp" in version "${sibling.group}/v1"` });
    const once = join(manifestDir, '..', '..', `.logged-${ns}`);
    ok(await run('reconcileLab.runController', { command: 'sh', args: ['-c', `[ -e '${once}' ] || { echo '${line}'; echo '${lampLine}'; }; touch '${once}'; exec ${bin} --health-probe-bind-address=0 --metrics-bind-address=0 --namespaces=${ns}`], waitMs: 120_000 }));
    await waitUntil(() => l.go.all.some((c) => c.controller.name === 'beacon'), 'the beacon controller announced', 60_000);
    const beacon = () => l.go.all.find((c) => c.controller.name === 'beacon');
    assert.equal(beacon()?.controller.resourceId, undefined, 'no resource: the kind is not served');
    let warning: string | undefined;
    await waitUntil(async () => (warning = (await api()).shownSince(mark).find((t) => t.kind === 'warning' && /reconciles Beacon/.test(t.text))?.text) !== undefined, 'the warning about Beacon', 20_000);
    // The echoed line waited out its grace and was not told again.
    await waitUntil(() => l.go.unservedPending.length === 0, 'the output\'s unserved kinds looked at', 40_000);
    const aboutBeacon = (await api()).shownSince(mark).filter((t) => t.kind === 'warning' && /Beacon \(relay\.example\.io/.test(t.text));
    assert.equal(aboutBeacon.length, 1, `told once: ${JSON.stringify(aboutBeacon)}`);
    assert.ok(warning!.startsWith(`Reconcile Lab: the Go controller beacon reconciles Beacon (relay.example.io/v1alpha1), a kind the cluster does not serve: its CRD is not installed. Install CRDs applies ${BEACONS} and the other CRDs of config/crd/bases this cluster lacks (${siblingCrd()}) to the cluster of context ${s.contextName} and restarts the controller. (Until`), warning);
    const offer = await l.go.crdOffer(beacon()!);
    assert.deepEqual(offer?.manifests.map((m) => m.name), [BEACONS, siblingCrd()]);
    assert.equal(offer?.button, 'Install CRDs');
    const pidBefore = beacon()!.process.pid;

    // What the warning's Install CRDs button does, as the command with the offered manifests chosen.
    const r = ok(await run<InstallCrdsResult>('reconcileLab.installCrd', { names: offer!.manifests.map((m) => m.name) }));
    assert.deepEqual(r.installed.map((i) => [i.name, i.created]).sort(), [[BEACONS, true], [siblingCrd(), true]].sort());
    assert.deepEqual(r.failed, []);
    assert.equal(r.restarted, true, 'the launched program was run again');
    // What the person who clicked Install CRDs is told meanwhile.
    assert.equal(restartNotice('beacons.relay.example.io installed', ['beacon'], 1), 'Reconcile Lab: beacons.relay.example.io installed. Restarting your Go program: its controller beacon waited for it, and controller-runtime finds a kind only when its program starts.');
    assert.match(restartNotice('a installed, b installed', ['beacon', 'the watch of Bell'], 2), /Restarting your Go program: its controller beacon and the watch of Bell waited for them, and/);
    await waitUntil(() => beacon()?.controller.resourceId === BEACONS, 'the restarted program\'s beacon controller reconciles beacons', 60_000);
    assert.notEqual(beacon()!.process.pid, pidBefore, 'a new process');
    ok(await run('reconcileLab.selectController', { controller: 'beacon' }));
    assert.equal(s.primaryResource, BEACONS, 'the views show the now-served resource');
    assert.ok(s.resources.some((res) => res.id === BEACONS), 'and the connection watches it');
    // The new kind works end to end: a Beacon created now is a key of the controller.
    await labCluster().client.create(GVR, { apiVersion: 'relay.example.io/v1alpha1', kind: 'Beacon', metadata: { name: 'first', namespace: ns }, spec: { message: 'hi' } });
    await waitUntil(() => s.get(BEACONS, `${ns}/first`) !== undefined && s.keyState(`${ns}/first`) !== undefined, 'the new Beacon in the tree and the queue', 60_000);
    // The echoed Lamp line was looked at (unservedPending emptied above) long before now: its offer would have named
    // the same two CRDs as Beacon's warning, which is still shown, so it was not shown again.
    const aboutLamp = (await api()).shownSince(mark).filter((t) => t.kind === 'warning' && /Lamp/.test(t.text));
    assert.deepEqual(aboutLamp, [], 'the Lamp CRD is offered by the Beacon warning already shown (Install CRDs installs both): no second offer of the same CRDs');
  });

  // A kind the program watches besides its controllers' own (an owned or watched custom resource) whose CRD is missing
  // shows only in controller-runtime's log, every 10 s: "if kind is a CRD, it should be installed before calling
  // Start … no matches for kind". The program here is the real operator; its output starts with that line as
  // controller-runtime writes it (no sample owns a custom resource of another CRD).
  it('controller-runtime\'s "no matches for kind" in the output of the launched program: told once, Install CRD offered, installing it restarts the program', async function () {
    this.timeout(300_000);
    const bell = { group: `${uniqueName('bell')}.example.io`, kind: 'Bell', plural: 'bells', version: 'v1' };
    const bellCrd = `${bell.plural}.${bell.group}`;
    writeFileSync(join(manifestDir, `${bell.group}_${bell.plural}.yaml`), stringify(testCrd(bell)));
    // The project's other CRDs served (the first test installs them; here too, so that this test stands alone and the
    // offer names Bell only).
    await installCrd(labCluster().transport, parseAllDocuments(readFileSync(join(relayOperatorDir(), 'config', 'crd', 'beacons.yaml'), 'utf8'))[0]!.toJS() as KubeObject);
    await installCrd(labCluster().transport, testCrd(sibling));
    const line = JSON.stringify({ level: 'error', ts: '2026-12-04T19:40:00Z', logger: 'controller-runtime.source.EventHandler', msg: 'if kind is a CRD, it should be installed before calling Start', kind: `${bell.kind}.${bell.group}`, error: `no matches for kind "${bell.kind}" in version "${bell.group}/${bell.version}"` });
    const mark = (await api()).shownMark();
    try {
      ok(await run('reconcileLab.runController', { command: 'sh', args: ['-c', `echo '${line}'; echo '${line}'; exec ${bin} --health-probe-bind-address=0 --metrics-bind-address=0 --namespaces=${ns}`], waitMs: 120_000 }));
      const pidBefore = l.go.launchedProcess!.pid;
      let warnings: string[] = [];
      await waitUntil(async () => (warnings = (await api()).shownSince(mark).filter((t) => t.kind === 'warning' && /watches Bell/.test(t.text)).map((t) => t.text)).length > 0, 'the warning about Bell', 20_000);
      assert.equal(warnings.length, 1, 'told once although logged twice');
      assert.ok(warnings[0]!.startsWith(`Reconcile Lab: your Go program watches Bell (${bell.group}/v1), a kind the cluster does not serve: its CRD is not installed. Install CRD applies ${bellCrd} from config/crd/bases/${bell.group}_bells.yaml to the cluster of context ${l.session!.contextName} and restarts the controller.`), warnings[0]);
      const r = ok(await run<InstallCrdsResult>('reconcileLab.installCrd', { names: [bellCrd] }));
      assert.deepEqual(r.installed.map((i) => i.name), [bellCrd]);
      assert.equal(r.restarted, true, 'the program waited for Bell: run again');
      assert.notEqual(l.go.launchedProcess!.pid, pidBefore);
    } finally {
      await labCluster().client.delete(CRD_RESOURCE, undefined, bellCrd).catch(() => undefined);
    }
  });
});

describe('a Go program whose manager cache watches some namespaces (Run Controller…)', function () {
  this.timeout(240_000);
  let l: ReconcileLab;
  let inside = '';
  let outside = '';
  let bin = '';

  before(async function () {
    if (!haveGo() || !existsSync(relayOperatorDir())) this.skip();
    this.timeout(300_000);
    l = await lab();
    bin = buildGoProgram(relayOperatorDir(), 'relay-operator'); // cached by the integration phase
    const crd = parseAllDocuments(readFileSync(join(relayOperatorDir(), 'config', 'crd', 'beacons.yaml'), 'utf8'))[0]!.toJS() as KubeObject;
    await installCrd(labCluster().transport, crd);
    inside = await testNamespace('ext-relay-in');
    outside = await testNamespace('ext-relay-out');
    for (const ns of [inside, outside]) await labCluster().client.create(GVR, { apiVersion: 'relay.example.io/v1alpha1', kind: 'Beacon', metadata: { name: 'b', namespace: ns }, spec: { message: 'hi' } });
    await connectTo(inside, { namespaces: [inside, outside] }); // the connection sees both namespaces
  });

  after(async () => {
    if (l) await run('reconcileLab.stopController', {});
  });

  /** The tree's object node of the Beacon in `ns`. */
  function beaconNode(ns: string): ResourceNode | undefined {
    const kind = l.resourcesTree.getChildren().find((n) => n.type === 'kind' && n.resource === BEACONS);
    const nsNode = kind && l.resourcesTree.getChildren(kind).find((n) => n.type === 'namespace' && n.namespace === ns);
    return nsNode && l.resourcesTree.getChildren(nsNode).find((n) => n.type === 'object' && n.key === `${ns}/b`);
  }

  it('an object outside the cache is marked so, is no key of the controller, and a step of it is refused with the reason', async function () {
    this.timeout(300_000);
    const s = l.session!;
    ok(await run('reconcileLab.runController', { command: bin, args: ['--health-probe-bind-address=0', '--metrics-bind-address=0', `--namespaces=${inside}`], waitMs: 120_000 }));
    await waitUntil(() => l.go.all.some((c) => c.controller.name === 'beacon'), 'the beacon controller announced', 60_000);
    ok(await run('reconcileLab.selectController', { controller: 'beacon' }));
    assert.equal(s.primaryResource, BEACONS);
    await waitUntil(() => s.get(BEACONS, `${outside}/b`) !== undefined && s.keyState(`${inside}/b`)?.phase === 'queued', 'both Beacons in the tree, the inside one queued', 60_000).catch((e: Error) => {
      throw new Error(`${e.message}: DEBUG outside=${s.get(BEACONS, `${outside}/b`) !== undefined} inside=${JSON.stringify(s.keyState(`${inside}/b`))} primary=${s.primaryResource} keys=${JSON.stringify(s.keyStates().map((k) => [k.key, k.phase]))} ctrls=${JSON.stringify(l.go.all.map((c) => [c.controller.name, c.controller.status()]))}`);
    });
    assert.match(s.outsideController(`${outside}/b`) ?? '', new RegExp(`outside beacon's cache \\(namespaces ${inside}\\)`));
    assert.equal(s.outsideController(`${inside}/b`), undefined);

    l.resourcesTree.flush();
    const out = l.resourcesTree.getTreeItem(beaconNode(outside)!);
    assert.match(String(out.description), /outside beacon's cache/);
    assert.ok(!String(out.contextValue).includes(':primary'), `no key commands on it: ${out.contextValue}`);
    const inn = l.resourcesTree.getTreeItem(beaconNode(inside)!);
    assert.ok(String(inn.contextValue).includes(':primary'), String(inn.contextValue));
    assert.doesNotMatch(String(inn.description), /outside/);

    const refused = await run<{ step: unknown }>('reconcileLab.stepReconcile', { key: `${outside}/b`, resource: BEACONS, force: true });
    assert.ok(!refused.ok, JSON.stringify(refused));
    assert.match(JSON.stringify(refused), /outside the cache of controller/);
  });
  /** The tree's object node of `key` of resource `resource`. */
  function objectNode(resource: string, key: string): ResourceNode | undefined {
    const [ns] = key.split('/');
    const kind = l.resourcesTree.getChildren().find((n) => n.type === 'kind' && n.resource === resource);
    const nsNode = kind && l.resourcesTree.getChildren(kind).find((n) => n.type === 'namespace' && n.namespace === ns);
    return nsNode && l.resourcesTree.getChildren(nsNode).find((n) => n.type === 'object' && n.key === key);
  }

  it('a per-namespace label selector (ByObject Namespaces): an object it leaves out is marked, Reconcile Now and Step of it are refused with the reason, and the mark goes once its labels change into the selector', async function () {
    this.timeout(300_000);
    const s = l.session!;
    ok(await run('reconcileLab.stopController', {}));
    const SECRETS = { group: '', version: 'v1', resource: 'secrets' };
    const key = `${inside}/torch`;
    await labCluster().client.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'torch', namespace: inside, labels: { app: 'web' } }, stringData: { k: 'v' } });
    ok(await run('reconcileLab.runController', { command: bin, args: ['--health-probe-bind-address=0', '--metrics-bind-address=0', `--namespaces=${inside}`, `--lamp-scope=${inside}:app=torch`], waitMs: 120_000 }));
    await waitUntil(() => l.go.all.some((c) => c.controller.name === 'lamp-keeper' && c.controller.announcement.cacheSelectors !== undefined), 'lamp-keeper announced', 60_000);
    ok(await run('reconcileLab.selectController', { controller: 'lamp-keeper' }));
    assert.equal(s.primaryResource, 'secrets');
    await waitUntil(() => s.get('secrets', key) !== undefined, 'the Secret in the tree', 60_000);
    const mark = `outside lamp-keeper's cache (label selector app=torch in ${inside})`;
    assert.equal(s.outsideController(key), mark);
    l.resourcesTree.flush();
    const item = l.resourcesTree.getTreeItem(objectNode('secrets', key)!);
    assert.match(String(item.description), /outside lamp-keeper's cache \(label selector app=torch/);
    assert.ok(!String(item.contextValue).includes(':primary'), `no key commands on it: ${item.contextValue}`);

    const reason = new RegExp(`key ${key} is outside the cache of controller \\\\"lamp-keeper\\\\": its manager's cache \\(cache\\.Options\\) lists Secret objects in namespace ${inside} only with label selector app=torch, which its labels \\(app=web\\) do not match`);
    const now = await run('reconcileLab.reconcileNow', { key, resource: 'secrets' });
    assert.ok(!now.ok, JSON.stringify(now));
    assert.match(JSON.stringify(now), reason);
    const step = await run('reconcileLab.stepReconcile', { key, resource: 'secrets', force: true });
    assert.ok(!step.ok, JSON.stringify(step));
    assert.match(JSON.stringify(step), reason);

    // Its labels change into the selector: the mark goes, it is a key of the controller (queued by the cache's add).
    await labCluster().client.patch(SECRETS, inside, 'torch', 'merge', { metadata: { labels: { app: 'torch' } } });
    await waitUntil(() => s.outsideController(key) === undefined && s.keyState(key)?.phase === 'queued', 'the Secret inside the cache, queued', 60_000).catch((e: Error) => {
      throw new Error(`${e.message}: DEBUG outside=${JSON.stringify(s.outsideController(key))} labels=${JSON.stringify(s.get('secrets', key)?.metadata?.labels)} state=${JSON.stringify(s.keyState(key))} keys=${JSON.stringify(s.keyStates().map((k) => [k.key, k.phase]))} ctrls=${JSON.stringify(l.go.all.map((c) => [c.controller.name, c.controller.status()]))}`);
    });
    l.resourcesTree.flush();
    const after = l.resourcesTree.getTreeItem(objectNode('secrets', key)!);
    assert.doesNotMatch(String(after.description), /outside/);
    assert.ok(String(after.contextValue).includes(':primary'), String(after.contextValue));
  });

  it('a controller with a custom request type (beacon-board): the views name its type and list its key as text; dry-run, step and its row act on it by that text; an unknown text is refused with the reason', async function () {
    this.timeout(300_000);
    const s = l.session!;
    ok(await run('reconcileLab.stopController', {}));
    ok(await run('reconcileLab.runController', { command: bin, args: ['--health-probe-bind-address=0', '--metrics-bind-address=0', `--namespaces=${inside}`, '--board'], waitMs: 120_000 }));
    await waitUntil(() => l.go.all.some((c) => c.controller.name === 'beacon-board'), 'beacon-board announced', 60_000);
    const shown = ok(await run<{ shown: string }>('reconcileLab.selectController', { controller: 'beacon-board' })).shown;
    assert.match(shown, /^Go controller beacon-board \(requests controller\.BoardKey\) · pid \d+/);
    assert.match(s.controllerOrigin, /^Go controller beacon-board \(requests controller\.BoardKey\) · pid \d+ · connected$/);
    assert.equal(s.primaryResource, BEACONS);
    const key = `Namespace=${inside}`;
    await waitUntil(() => s.keyState(key)?.phase === 'queued', 'the namespace key queued', 60_000);
    const findRow = () => l.queueTree.getChildren().find((n) => n.type === 'queueKey' && n.key === key);
    await waitUntil(() => findRow() !== undefined, `the Work Queue lists ${key}`, 30_000);
    const row = findRow()!;
    const label = l.queueTree.getTreeItem(row).label;
    assert.equal(typeof label === 'string' ? label : label?.label, key);
    const tip = l.queueTree.resolveTreeItem(l.queueTree.getTreeItem(row), row).tooltip;
    assert.match(tooltipText(tip), /watch|informer|Beacon|beacons/, 'the tooltip says why it was queued');

    const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
    const dry = ok(await run<{ actions: Array<{ verb: string; resource: string; outcome: string }> }>('reconcileLab.dryRunReconcile', { key, open: false }));
    assert.ok(dry.actions.some((a) => a.verb === 'create' && a.resource === 'configmaps' && a.outcome === 'ok'), JSON.stringify(dry.actions));
    await assert.rejects(labCluster().client.get(CONFIGMAPS, inside, 'relay-board'), 'the dry-run created nothing');
    // The row itself, as its context menu passes it.
    const step = ok(await run<{ step: { kind: string; key?: string } }>('reconcileLab.stepReconcile', row));
    assert.equal(step.step.kind, 'reconciled', JSON.stringify(step));
    assert.equal(step.step.key, key);
    const board = (await labCluster().client.get(CONFIGMAPS, inside, 'relay-board')) as KubeObject & { data?: Record<string, string> };
    assert.equal(board.data?.beacons, 'b=');

    const unknown = await run('reconcileLab.stepReconcile', { key: 'Namespace=nowhere', force: true });
    assert.ok(!unknown.ok, JSON.stringify(unknown));
    assert.match(JSON.stringify(unknown), /never queued a key shown as/);
    // The robustness checks reconcile copies by object key: they refuse it with the reason, rather than check another controller.
    const checks = await run('reconcileLab.runChecks', { key, checks: ['runTwice'], quiet: true });
    assert.ok(!checks.ok && checks.reason === 'noLoop', JSON.stringify(checks));
    assert.match(JSON.stringify(checks), /beacon-board has a custom request type \(controller\.BoardKey\)/);
  });
});
