// A user whose RBAC rights are namespaced connects with every namespace watched (the default): the connect does not
// wait out the two-minute cache-sync timeout, and a warning names the refused list, the missing right and the
// namespace to pick (the context's), with Choose Namespaces… as its button. No token appears in anything shown.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKubeConfig } from '../../../src/core/k8s/kubeconfig.ts';
import { KubeTransport } from '../../../src/core/k8s/transport.ts';
import { installCrd, testCrd, uniqueName } from '../../integration/support/cluster.ts';
import { rendersLink } from '../../../src/host/safeText.ts';
import * as vscode from 'vscode';
import { namespacedUserToken, tokenKubeconfig } from '../../integration/support/limitedUser.ts';
import { api, lab, labCluster, ok, run, runAsStranger, testNamespace, waitUntil, widget, widgetCrd } from './support/lab.ts';

describe('a user with namespaced rights only', function () {
  this.timeout(120_000);
  let tmp = '';
  let ns = '';
  let token = '';
  let kubeconfig = '';
  const ownGroup = `${uniqueName('own')}.example.org`;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'rl-ext-limited-'));
    ns = await testNamespace('ext-limited');
    const c = await widgetCrd();
    const { transport, client } = labCluster();
    // A kind of the user's own besides the Widget, which it may read in its namespace (but not its CRD).
    await installCrd(transport, testCrd({ group: ownGroup, kind: 'Gauge', plural: 'gauges' }));
    token = await namespacedUserToken(transport, ns, [
      { apiGroups: [c.group], resources: ['widgets'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] },
      { apiGroups: [ownGroup], resources: ['gauges'], verbs: ['get', 'list', 'watch'] },
    ]);
    await transport.json({ method: 'POST', path: `/apis/${ownGroup}/v1/namespaces/${ns}/gauges`, body: { apiVersion: `${ownGroup}/v1`, kind: 'Gauge', metadata: { name: 'g' } } });
    await client.create(c.gvr, widget(c, ns, 'w'));
    const cluster = loadKubeConfig({ path: labCluster().kubeconfigPath }).getCurrentCluster()!;
    kubeconfig = join(tmp, 'kubeconfig');
    writeFileSync(kubeconfig, tokenKubeconfig(cluster, token, [{ name: 'dev', namespace: ns }]), { mode: 0o600 });
  });
  after(async () => {
    rmSync(tmp, { recursive: true, force: true });
    await (await lab()).disconnect();
    const { transport } = labCluster();
    for (const path of [...cleanup, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gauges.${ownGroup}`]) await transport.json({ method: 'DELETE', path }).catch(() => undefined);
  });
  /** Cluster-wide objects a test made (its CRD, ClusterRole and binding), deleted after the suite. */
  const cleanup: string[] = [];

  it('connecting to every namespace says at once which list was refused and offers the context\'s namespace', async () => {
    const c = await widgetCrd();
    const a = await api();
    const mark = a.shownMark();
    const r = ok(await run<{ context: string }>('reconcileLab.connect', { kubeconfig, namespaces: [], resources: [c.resourceId, 'configmaps'], reconcilerResource: c.resourceId, reconcilerKind: 'lab' }));
    assert.equal(r.context, 'dev');
    let text: string | undefined;
    await waitUntil(() => (text = a.shownSince(mark).map((s) => s.text).find((t) => /You may not list/.test(t))) !== undefined, 'the refused list said');
    assert.match(text!, /in all namespaces \(403 Forbidden: /);
    assert.match(text!, new RegExp(`Choose Namespaces… and pick ${ns} \\(your context's namespace\\)`));
    assert.match(text!, /Missing right: list on \S+ cluster-wide/);
    assert.match(text!, /The reconcile loop did not start\./);
    for (const s of a.shownSince(mark)) {
      assert.ok(!s.text.includes(token), 'no token in what is shown');
      assert.equal(rendersLink(s.text), false, `shown as a link: ${s.text}`);
    }
    assert.ok((await lab()).session?.refusedList, 'the session knows what was refused');
  });

  it("Choose Namespaces… (the warning's button) asks for the names when the user may not list namespaces, its context's namespace filled in", async () => {
    const l = await lab();
    assert.ok(l.session?.refusedList, 'still connected with every namespace watched');
    const a = await api();
    const mark = a.shownMark();
    const pending = runAsStranger<{ namespaces: string[] }>('reconcileLab.selectNamespaces');
    try {
      let prompt = '';
      await waitUntil(() => (prompt = a.shownSince(mark).find((t) => t.kind === 'quickPick')?.text ?? '') !== '', 'the input box');
      assert.match(prompt, /Your user may not list namespaces: type the ones to watch/);
      // The input is recorded just before VS Code renders it.
      await new Promise((r) => setTimeout(r, 1000));
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      const r = ok(await pending);
      assert.deepEqual(r.namespaces, [ns], "the context's namespace, accepted as filled in");
      await waitUntil(() => l.session?.namespaces.join() === ns, 'reconnected watching it');
    } finally {
      await vscode.workspace.getConfiguration('reconcileLab').update('namespaces', undefined, vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global);
    }
  });

  it('connected to its namespace, it lists and reconciles there', async () => {
    const c = await widgetCrd();
    ok(await run('reconcileLab.connect', { kubeconfig, namespaces: [ns], resources: [c.resourceId, 'configmaps'], reconcilerResource: c.resourceId, reconcilerKind: 'lab' }));
    const l = await lab();
    assert.equal(l.session?.refusedList, undefined);
    await waitUntil(() => l.session?.list(c.resourceId).length === 1, 'its widget in view');
  });

  it('may not list CRDs: watching every custom resource (the default) still shows its own kinds, found through discovery', async () => {
    const c = await widgetCrd();
    const r = ok(await run<{ resources: string[]; loop: string; loopProblem?: string }>('reconcileLab.connect', { kubeconfig, namespaces: [ns], resources: [], reconcilerResource: c.resourceId, reconcilerKind: 'lab' }));
    assert.ok(r.resources.includes(`gauges.${ownGroup}`), `its own kind is watched without access to its CRD: ${r.resources.join(', ')}`);
    assert.ok(!r.resources.some((id) => id === 'deployments.apps' || id.endsWith('.k8s.io')), `no built-in resource is taken for a custom one: ${r.resources.join(', ')}`);
    assert.equal(r.loop, 'paused', 'the loop started (paused)');
    const l = await lab();
    assert.equal(l.session?.refusedList, undefined);
    await waitUntil(() => l.session?.list(`gauges.${ownGroup}`).length === 1, 'its Gauge in view');
  });

  it("watching every custom resource (the default) in its namespace, another team's kind it may not list stops nothing: the loop starts, that kind shows not synced", async () => {
    const c = await widgetCrd();
    const { transport } = labCluster();
    // The user may read CRDs (many shared clusters allow it), so every custom resource is watched, among them one
    // its Role does not cover.
    const group = `${uniqueName('other-team')}.example.org`;
    const other = testCrd({ group, kind: 'Ledger', plural: 'ledgers' });
    await installCrd(transport, other);
    cleanup.push(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${other.metadata.name}`);
    await transport.json({ method: 'POST', path: `/apis/${group}/v1/namespaces/${ns}/ledgers`, body: { apiVersion: `${group}/v1`, kind: 'Ledger', metadata: { name: 'l' } } });
    const role = uniqueName('crd-reader');
    await transport.json({ method: 'POST', path: '/apis/rbac.authorization.k8s.io/v1/clusterroles', body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: role }, rules: [{ apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['get', 'list', 'watch'] }] } });
    cleanup.push(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${role}`);
    await transport.json({ method: 'POST', path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: role }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ kind: 'ServiceAccount', name: 'dev', namespace: ns }] } });
    cleanup.push(`/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${role}`);
    // RBAC bindings take effect through the authorizer's cache: wait until the user may list CRDs.
    const user = new KubeTransport(loadKubeConfig({ path: kubeconfig }));
    try {
      await waitUntil(() => user.json({ method: 'GET', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${other.metadata.name}` }).then(() => true, () => false), 'the user may read CRDs');
    } finally {
      user.dispose();
    }
    const r = ok(await run<{ resources: string[]; loop: string; loopProblem?: string }>('reconcileLab.connect', { kubeconfig, namespaces: [ns], resources: [], reconcilerResource: c.resourceId, reconcilerKind: 'lab' }));
    assert.ok(r.resources.includes(`ledgers.${group}`), `the other team's kind is watched (every custom resource): ${r.resources.join(', ')}`);
    const l = await lab();
    assert.equal(l.session?.refusedList, undefined, 'a kind watched only by default does not count as a refused list');
    assert.equal(r.loopProblem, undefined);
    assert.equal(r.loop, 'paused', 'the loop started (paused)');
    await waitUntil(() => l.session?.list(c.resourceId).length === 1, 'its widget in view');
    assert.equal(l.session!.resources.find((x) => x.id === `ledgers.${group}`)?.synced, false, 'the kind it may not list is shown not synced');
  });
});
