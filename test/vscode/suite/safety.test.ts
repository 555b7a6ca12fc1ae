// Safety in the real extension host: text from the cluster, a program or the workspace never becomes a clickable
// link in what the extension shows, and the arguments that skip confirmations are refused without the argument
// token (as from a command link or another extension).
import * as assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { StepResult } from '../../../src/core/controller/controller.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { rendersLink } from '../../../src/host/safeText.ts';
import { api, connectTo, lab, labCluster, ok, run, runAsStranger, testNamespace, uniqueName, waitUntil, widget, widgetCrd } from './support/lab.ts';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const LINK = (label: string) => `[${label}](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22echo%20pwned%5Cn%22%7D)`;

/** The texts shown since `mark` (an index into the ring). */
async function shownSince(mark: number): Promise<string[]> {
  return (await api()).shownSince(mark).map((s) => s.text);
}

async function mark(): Promise<number> {
  return (await api()).shownMark();
}

/** Waits until a text matching `re` was shown since `from`, asserts that no shown text renders a link, and returns it. */
async function shownInert(from: number, re: RegExp, what: string): Promise<string> {
  let found: string | undefined;
  await waitUntil(async () => {
    found = (await shownSince(from)).find((t) => re.test(t));
    return found !== undefined;
  }, what);
  for (const t of await shownSince(from)) assert.equal(rendersLink(t), false, `shown as a link: ${t}`);
  return found!;
}

describe('safety: untrusted text never becomes a link', function () {
  this.timeout(120_000);
  let tmp = '';
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'rl-ext-safety-'));
  });
  after(async () => {
    rmSync(tmp, { recursive: true, force: true });
    await (await lab()).disconnect();
  });

  it('a server error written by an admission policy is shown without its command link', async () => {
    const { client } = labCluster();
    const ns = await testNamespace('ext-safe');
    const c = await widgetCrd();
    const policy = uniqueName('deny-evil');
    const vap = { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingadmissionpolicies' };
    const vapb = { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingadmissionpolicybindings' };
    await client.create(vap, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: policy },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] },
        validations: [{ expression: "!object.metadata.name.startsWith('evil')", message: `denied: ${LINK('Fix it')}` }],
      },
    } as KubeObject);
    await client.create(vapb, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: policy },
      spec: { policyName: policy, validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } } },
    } as KubeObject);
    try {
      // The policy is enforced once the server has loaded it.
      await waitUntil(async () => {
        try {
          await client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'evil-probe', namespace: ns } }, { dryRun: true });
          return false;
        } catch (e) {
          return /command:/.test((e as Error).message);
        }
      }, 'the admission policy to deny');
      await client.create(c.gvr, widget(c, ns, 'evil'));
      const l = await lab();
      await connectTo(ns);
      await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/evil`)), 'widget cached');
      const from = await mark();
      let step: StepResult | undefined;
      for (let i = 0; i < 4 && !(step?.kind === 'reconciled' && step.outcome.kind === 'error'); i++) {
        step = ok(await run<{ step: StepResult }>('reconcileLab.stepReconcile', { key: `${ns}/evil`, resource: c.resourceId, force: true })).step;
      }
      assert.ok(step?.kind === 'reconciled' && step.outcome.kind === 'error', JSON.stringify(step));
      const text = await shownInert(from, /denied/, 'the step failure notification');
      assert.match(text, /\[Fix it\] \(command:/, 'the text is still readable');
    } finally {
      await client.delete(vapb, undefined, policy).catch(() => {});
      await client.delete(vap, undefined, policy).catch(() => {});
    }
  });

  it("an exec program's error is shown without its command link", async () => {
    const ns = await testNamespace('ext-safe');
    const c = await widgetCrd();
    await labCluster().client.create(c.gvr, widget(c, ns, 'exec'));
    const script = join(tmp, 'evil-reconciler.sh');
    writeFileSync(script, `#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '{"error": "exec says ${LINK('Open').replace(/"/g, '\\"')}"}'\n`);
    chmodSync(script, 0o755);
    const l = await lab();
    await connectTo(ns, { reconcilerKind: 'exec', reconcilerCommand: script });
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/exec`)), 'widget cached');
    const from = await mark();
    const r = ok(await run<{ step: StepResult }>('reconcileLab.stepReconcile', { key: `${ns}/exec`, resource: c.resourceId, force: true }));
    assert.ok(r.step.kind === 'reconciled' && r.step.outcome.kind === 'error', JSON.stringify(r.step));
    await shownInert(from, /exec says/, 'the exec error notification');
  });

  it('an ownerReference kind from the cluster is shown without its link', async () => {
    const ns = await testNamespace('ext-safe');
    const c = await widgetCrd();
    const { client } = labCluster();
    await client.create(c.gvr, widget(c, ns, 'owned'));
    // A child ConfigMap controlled by something else, whose kind is a link (the server does not validate kinds).
    await client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'owned-config', namespace: ns, ownerReferences: [{ apiVersion: 'v1', kind: LINK('Owner'), name: 'x', uid: '00000000-0000-0000-0000-000000000001', controller: true }] },
    });
    const l = await lab();
    await connectTo(ns);
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/owned`)), 'widget cached');
    const from = await mark();
    let step: StepResult | undefined;
    for (let i = 0; i < 4 && !(step?.kind === 'reconciled' && step.outcome.kind === 'terminal'); i++) {
      step = ok(await run<{ step: StepResult }>('reconcileLab.stepReconcile', { key: `${ns}/owned`, resource: c.resourceId, force: true })).step;
    }
    assert.ok(step?.kind === 'reconciled' && step.outcome.kind === 'terminal', JSON.stringify(step));
    await shownInert(from, /is controlled by/, 'the conflict notification');
  });

  it('a field manager name (a finalizer owner) is shown in the quick pick without its link', async () => {
    const ns = await testNamespace('ext-safe');
    const c = await widgetCrd();
    const { client } = labCluster();
    await client.create(c.gvr, widget(c, ns, 'fin'));
    await client.patch(c.gvr, ns, 'fin', 'merge', { metadata: { finalizers: ['a.example.com/x', 'b.example.com/y'] } }, { fieldManager: LINK('mgr').slice(0, 120) });
    const l = await lab();
    await connectTo(ns);
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/fin`)?.metadata.finalizers?.length), 'widget cached with finalizers');
    const from = await mark();
    // As from the tree: an object element without a finalizer → the quick pick of finalizers.
    const pending = runAsStranger('reconcileLab.stripFinalizers', { key: `${ns}/fin`, resource: c.resourceId });
    try {
      await shownInert(from, /added by field manager/, 'the finalizer quick pick');
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    }
    const r = await pending;
    assert.equal(!r.ok && r.reason, 'cancelled');
    await client.patch(c.gvr, ns, 'fin', 'merge', { metadata: { finalizers: null } });
  });

  it('a workspace setting (reconcileLab.resources) is shown without its link', async () => {
    const ns = await testNamespace('ext-safe');
    const from = await mark();
    await connectTo(ns, { resources: [LINK('serve it'), 'configmaps'] });
    await shownInert(from, /does not serve/, 'the unknown-resource warning');
  });
});

describe('safety: the lab reconciler reconciles only its Widget resource', function () {
  this.timeout(90_000);

  it('builds no loop when the lab reconciler is pointed at ConfigMaps, and says why', async () => {
    const ns = await testNamespace('ext-safe');
    const { client } = labCluster();
    await client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: ns }, data: { k: 'v' } });
    const l = await lab();
    const from = await mark();
    const r = await connectTo(ns, { reconcilerKind: 'lab', reconcilerResource: 'configmaps', resources: ['configmaps'] });
    assert.match(r.loopProblem ?? '', /lab reconciler only reconciles its own Widget resource/);
    assert.equal(l.session?.controller, undefined, 'no loop was built');
    await shownInert(from, /only reconciles its own Widget/, 'the loop-unavailable warning');
    // The views do not pretend a loop: the loop's buttons and menus are hidden (context key), the kind row says the
    // objects are not reconciled, and no object shows a convergence word ("changing") of a loop that is not there.
    l.renderStatus();
    assert.equal(l.contextKeys.get('reconcileLab.loopAvailable'), false);
    assert.match(l.statusBar.text, /\$\(circle-slash\) no loop/, l.statusBar.text);
    assert.doesNotMatch(l.statusBar.text, /queued/, 'no queue to count');
    l.resourcesTree.flush();
    const kind = l.resourcesTree.getChildren().find((n) => n.type === 'kind' && n.resource === 'configmaps')!;
    assert.match(String(l.resourcesTree.getTreeItem(kind).description), /no loop: not reconciled/);
    assert.doesNotMatch(String(l.resourcesTree.getTreeItem(kind).description), /reconciled by the loop/);
    assert.equal(l.session?.convergence(`${ns}/app`), undefined);
    const step = await run('reconcileLab.stepReconcile', { key: `${ns}/app`, resource: 'configmaps' });
    assert.equal(step.ok, false);
    const app = await client.get(CONFIGMAPS, ns, 'app');
    assert.deepEqual(app.metadata.finalizers ?? [], []);
    await l.disconnect();
  });
});

describe('safety: settings and names from the workspace or a caller', function () {
  this.timeout(90_000);

  it('a workspace asking for 50 million workers gets the declared maximum (64)', async () => {
    const cfg = () => vscode.workspace.getConfiguration('reconcileLab');
    const ns = await testNamespace('ext-safe');
    await cfg().update('workQueue.maxConcurrentReconciles', 50_000_000, vscode.ConfigurationTarget.Workspace);
    await cfg().update('eventLog.size', 1e12, vscode.ConfigurationTarget.Workspace);
    try {
      const l = await lab();
      await connectTo(ns);
      assert.equal(l.session?.settings['workQueue.maxConcurrentReconciles'], 64);
      assert.equal(l.session?.settings['eventLog.size'], 200_000);
      assert.ok(l.session?.controller, 'the loop was built');
      await l.disconnect();
    } finally {
      await cfg().update('workQueue.maxConcurrentReconciles', undefined, vscode.ConfigurationTarget.Workspace);
      await cfg().update('eventLog.size', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  it('refuses the object names "." and ".." given to a command', async () => {
    const ns = await testNamespace('ext-safe');
    const c = await widgetCrd();
    await connectTo(ns);
    for (const key of [`${ns}/..`, `${ns}/.`, '..']) {
      const r = await run('reconcileLab.inspectCache', { key, resource: c.resourceId, open: false });
      assert.equal(!r.ok && r.reason, 'invalidArgument', key);
    }
    await (await lab()).disconnect();
  });
});

describe('safety: Secret values stay masked unless revealed explicitly', function () {
  this.timeout(90_000);
  const SECRETS = { group: '', version: 'v1', resource: 'secrets' };

  it('Open as YAML and Inspect show *** for data, stringData and last-applied; Reveal Secret Values shows them only when asked (token or modal)', async () => {
    const ns = await testNamespace('ext-secret');
    const c = await widgetCrd();
    const value = 'c3VwZXItc2VjcmV0LXZhbHVl'; // "super-secret-value"
    const lastApplied = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', data: { password: value } });
    await labCluster().client.create(SECRETS, {
      apiVersion: 'v1', kind: 'Secret', type: 'Opaque',
      metadata: { name: 'db', namespace: ns, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied } },
      data: { password: value },
    } as KubeObject);
    const l = await lab();
    await connectTo(ns, { resources: [c.resourceId, 'configmaps', 'secrets'] });
    await waitUntil(() => Boolean(l.session?.get('secrets', `${ns}/db`)), 'the Secret is cached');
    try {
      const opened = ok(await run<{ uri: string }>('reconcileLab.openYaml', { key: `${ns}/db`, resource: 'secrets' }));
      const masked = (await vscode.workspace.openTextDocument(vscode.Uri.parse(opened.uri))).getText();
      assert.match(masked, /password: "\*\*\*"/);
      assert.match(masked, /last-applied-configuration: "\*\*\*"/);
      assert.ok(!masked.includes(value) && !masked.includes('super-secret-value'), masked);

      // The item in the Resources view offers Reveal Secret Values (contextValue ends with :secret).
      l.resourcesTree.flush();
      const node = l.resourcesTree.nodeFor('secrets', `${ns}/db`);
      assert.ok(node, 'the Secret is in the Resources view');
      assert.match(String(l.resourcesTree.getTreeItem(node).contextValue), /^reconcileLab:object:live.*:secret$/);

      // Without the token, confirmed is refused (as from a command link or another extension).
      const stranger = await runAsStranger('reconcileLab.revealSecret', { key: `${ns}/db`, resource: 'secrets', confirmed: true });
      assert.equal(!stranger.ok && stranger.reason, 'invalidArgument');
      const notSecret = await run('reconcileLab.revealSecret', { key: `${ns}/db`, resource: c.resourceId, confirmed: true });
      assert.equal(notSecret.ok, false, 'a non-Secret (or a key of another resource) is refused');

      // From the palette (no argument): the picker offers the watched Secrets only, not the Widgets or ConfigMaps.
      const mark = (await api()).shownMark();
      const pending = runAsStranger('reconcileLab.revealSecret');
      let pick = '';
      await waitUntil(async () => {
        pick = (await api()).shownSince(mark).find((t) => t.kind === 'quickPick')?.text ?? '';
        return pick !== '';
      }, 'the Secret pick');
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      assert.equal((await pending).ok, false);
      const rows = pick.split('\n').slice(2);
      assert.ok(rows.some((row) => row.startsWith(`${ns}/db · Secret`)), pick);
      assert.ok(rows.every((row) => row.split(' · ')[1] === 'Secret'), pick);

      const revealed = ok(await run<{ uri: string }>('reconcileLab.revealSecret', { key: `${ns}/db`, resource: 'secrets', confirmed: true }));
      const shown = (await vscode.workspace.openTextDocument(vscode.Uri.parse(revealed.uri))).getText();
      assert.ok(shown.includes(value), 'the revealed view shows the value');
      // A reveal URI made up by someone else shows nothing.
      const forged = vscode.Uri.parse(revealed.uri.replace(/\/reveal\/[0-9a-f]+\//, `/reveal/${'0'.repeat(32)}/`));
      assert.ok(!(await vscode.workspace.openTextDocument(forged)).getText().includes(value), 'a forged reveal URI shows nothing');
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      await l.disconnect();
    }
  });
});

describe('safety: arguments that skip confirmations need the argument token', function () {
  this.timeout(90_000);

  it('refuses confirmed, kubeconfig, path, exportTo, force, resources and namespaces without the token, and does nothing', async () => {
    const ns = await testNamespace('ext-safe');
    const c = await widgetCrd();
    await labCluster().client.create(c.gvr, widget(c, ns, 'tok', { finalizers: ['legacy.example.com/x'] }));
    const l = await lab();
    await connectTo(ns);
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/tok`)), 'widget cached');
    const dir = mkdtempSync(join(tmpdir(), 'rl-ext-token-'));
    try {
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['reconcileLab.stripFinalizers', { key: `${ns}/tok`, resource: c.resourceId, finalizer: 'legacy.example.com/x', confirmed: true }, 'confirmed'],
        ['reconcileLab.connect', { kubeconfig: join(dir, 'evil-kubeconfig') }, 'kubeconfig'],
        ['reconcileLab.connect', { reconcilerKind: 'exec', reconcilerCommand: '/bin/true' }, 'reconcilerCommand'],
        ['reconcileLab.exportReport', { path: join(dir, 'report.md'), dryRun: true, open: false }, 'path'],
        ['reconcileLab.exportReport', { dryRun: false }, 'dryRun'],
        ['reconcileLab.showEventLog', { exportTo: join(dir, 'journal.jsonl') }, 'exportTo'],
        ['reconcileLab.stepReconcile', { key: `${ns}/tok`, resource: c.resourceId, force: true }, 'force'],
        ['reconcileLab.selectResources', { resources: ['configmaps'] }, 'resources'],
        ['reconcileLab.selectNamespaces', { namespaces: ['default'] }, 'namespaces'],
        ['reconcileLab.chooseReconciler', { kind: 'exec', command: '/bin/true' }, 'command'],
        ['reconcileLab.applyObjectEdit', { uri: `reconcile-lab-edit:/${c.resourceId}/${ns}/tok.yaml`, text: 'spec: {}' }, 'uri'],
        ['reconcileLab.applyObjectEdit', { resolve: 'keepMine' }, 'resolve'],
      ];
      for (const [command, arg, field] of cases) {
        for (const attempt of [arg, { ...arg, argumentToken: 'f'.repeat(64) }]) {
          const r = await runAsStranger(command, attempt);
          assert.equal(r.ok, false, `${command} ${field}`);
          assert.equal(!r.ok && r.reason, 'invalidArgument', `${command} ${field}`);
          assert.match(!r.ok ? r.message : '', new RegExp(`"${field}"`), `${command} names ${field}`);
        }
      }
      assert.equal(existsSync(join(dir, 'report.md')), false, 'no report written');
      assert.equal(existsSync(join(dir, 'journal.jsonl')), false, 'no journal written');
      const w = await labCluster().client.get(c.gvr, ns, 'tok');
      assert.ok(w.metadata.finalizers?.includes('legacy.example.com/x'), 'the finalizer is still there');
      assert.equal(l.session?.kubeconfigPath, labCluster().kubeconfigPath, 'still connected to the test cluster');
      assert.deepEqual(vscode.workspace.getConfiguration('reconcileLab').get('namespaces'), [], 'no setting written');
      assert.notEqual(vscode.workspace.getConfiguration('reconcileLab').get('reconciler.command'), '/bin/true', 'no reconciler setting written');
      // With the token (as the suite's run() adds it) the same argument is honoured.
      ok(await run('reconcileLab.showEventLog', { exportTo: join(dir, 'journal.jsonl') }));
      assert.equal(existsSync(join(dir, 'journal.jsonl')), true);
    } finally {
      await labCluster().client.patch(c.gvr, ns, 'tok', 'merge', { metadata: { finalizers: null } }).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
