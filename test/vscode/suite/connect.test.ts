// Connecting and disconnecting through the commands, with the kubeconfig the run provides (RECONCILE_LAB_KUBECONFIG).
import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ReconcileLab } from '../../../src/host/reconcileLab.ts';
import { api, connectTo, lab, labCluster, ok, ROOT, run, testNamespace, waitUntil, widget, widgetCrd } from './support/lab.ts';

describe('connect', function () {
  this.timeout(90_000);
  let l: ReconcileLab;

  before(async () => {
    l = await lab();
  });

  it('connects with the kubeconfig of RECONCILE_LAB_KUBECONFIG and its current context', async () => {
    const ns = await testNamespace('ext-conn');
    const c = await widgetCrd();
    const r = await connectTo(ns);
    assert.equal(r.server, labCluster().transport.server);
    assert.ok(r.context.length > 0);
    assert.deepEqual([...r.resources].sort(), [c.resourceId, 'configmaps'].sort());
    assert.equal(r.primaryResource, c.resourceId);
    assert.equal(r.loopProblem, undefined);
    assert.ok(l.session, 'a session is attached');
    assert.ok(l.session.resources.every((x) => x.synced), 'caches synced before connect resolved');
    assert.match(l.statusBar.text, new RegExp(r.context.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  });

  it('watches every custom resource when no resources are listed', async () => {
    const ns = await testNamespace('ext-conn');
    const c = await widgetCrd();
    const r = await connectTo(ns, { resources: [] });
    assert.ok(r.resources.includes(c.resourceId), r.resources.join(', '));
    assert.ok(!r.resources.includes('pods'), 'built-in kinds are not watched by default');
  });

  it('with several namespaces, shows and reconciles only objects in them', async () => {
    const c = await widgetCrd();
    const [a, b, other] = [await testNamespace('ext-ns'), await testNamespace('ext-ns'), await testNamespace('ext-ns')];
    const { client } = labCluster();
    for (const ns of [a, b, other]) await client.create(c.gvr, widget(c, ns, 'w'));
    await connectTo(a, { namespaces: [a, b] });
    await waitUntil(() => l.session?.list(c.resourceId).length === 2, 'two widgets in view');
    assert.deepEqual(l.session!.list(c.resourceId).map((o) => o.metadata.namespace).sort(), [a, b].sort());
    assert.equal(l.session!.get(c.resourceId, `${other}/w`), undefined);
    await waitUntil(() => l.session!.queuedKeys().length === 2, 'both in-scope keys queued');
    assert.deepEqual(l.session!.queuedKeys().sort(), [`${a}/w`, `${b}/w`].sort());
  });

  it('reports resources the server does not serve instead of failing', async () => {
    const ns = await testNamespace('ext-conn');
    await connectTo(ns, { resources: ['nonexistent.example.com', 'configmaps'] });
    assert.deepEqual(l.session?.unknownResources, ['nonexistent.example.com']);
    // The Resources view names it and says what to do next.
    await waitUntil(() => /nonexistent\.example\.com/.test(l.resourcesView.message ?? ''), 'the Resources view names the unserved resource');
    assert.match(l.resourcesView.message ?? '', /^Not served by the cluster: nonexistent\.example\.com\. Install its CRD \(Reconcile Lab: Install CRD… applies those of this workspace\), or choose other resources with "Choose Watched Resources…"\.$/);
  });

  it('fails with a clear error for a missing kubeconfig context, and stays disconnected', async () => {
    const r = await run('reconcileLab.connect', { kubeconfig: labCluster().kubeconfigPath, context: 'no-such-context' });
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.message : '', /no-such-context/);
    assert.equal(l.session, undefined);
    assert.match(l.statusBar.text, /Reconcile Lab/);
  });

  it('first run without a usable kubeconfig: a missing file of the setting, or a current-context not in the file, says what to do next', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-ext-kc-'));
    const cfg = vscode.workspace.getConfiguration('reconcileLab');
    try {
      const missing = join(dir, 'missing.yaml');
      await cfg.update('connection.kubeconfig', missing, vscode.ConfigurationTarget.Workspace);
      const a = await run('reconcileLab.connect', {});
      assert.equal(a.ok, false);
      const am = !a.ok ? a.message : '';
      assert.equal(am, `The kubeconfig file ${missing} does not exist. The file is the setting reconcileLab.connection.kubeconfig: change or clear it.`);
      assert.equal(l.session, undefined);
      // The welcome shown then names the setting and the next steps (Connect's choices, Start Local Control Plane).
      const welcome = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).contributes.viewsWelcome as Array<{ view: string; contents: string; when: string }>)
        .filter((w) => w.view === 'reconcileLab.resources' && w.when.includes('!reconcileLab.connected'));
      const forSetting = welcome.find((w) => /(^|&& )config\.reconcileLab\.connection\.kubeconfig/.test(w.when));
      assert.ok(forSetting, JSON.stringify(welcome.map((w) => w.when)));
      assert.match(forSetting.contents, /reconcileLab\.connection\.kubeconfig[\s\S]*missing[\s\S]*Connect[\s\S]*local control plane/);
      assert.match(forSetting.contents, /command:reconcileLab\.startLocalControlPlane/);
      await cfg.update('connection.kubeconfig', undefined, vscode.ConfigurationTarget.Workspace);

      const kc = readFileSync(labCluster().kubeconfigPath, 'utf8');
      assert.match(kc, /current-context:/);
      const stale = join(dir, 'stale.yaml');
      writeFileSync(stale, kc.replace(/current-context:.*$/m, 'current-context: deleted-cluster'));
      const b = await run('reconcileLab.connect', { kubeconfig: stale });
      assert.equal(b.ok, false);
      const bm = !b.ok ? b.message : '';
      assert.match(bm, /^The kubeconfig's current-context "deleted-cluster" is not one of its contexts \(contexts: [^)]+\): choose one of them\. Connect lists them; the setting reconcileLab\.connection\.context keeps the one to use\.$/);
      for (const m of [am, bm]) assert.doesNotMatch(m, /\n\s+at |ENOENT|Error:/, 'no stack trace or errno');
      assert.equal(l.session, undefined);
    } finally {
      await cfg.update('connection.kubeconfig', undefined, vscode.ConfigurationTarget.Workspace);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('Choose Watched Resources / Namespaces save the settings and reconnect with them', async () => {
    const c = await widgetCrd();
    const ns = await testNamespace('ext-conn');
    await connectTo(ns);
    const r = ok(await run<{ resources: string[] }>('reconcileLab.selectResources', { resources: [c.resourceId] }));
    assert.deepEqual(r.resources, [c.resourceId]);
    assert.deepEqual(vscode.workspace.getConfiguration('reconcileLab').get('resources'), [c.resourceId]);
    assert.ok(l.session?.resources.some((x) => x.id === c.resourceId));
    const n = ok(await run<{ namespaces: string[] }>('reconcileLab.selectNamespaces', { namespaces: [ns] }));
    assert.deepEqual(n.namespaces, [ns]);
    assert.deepEqual(l.session?.settings.namespaces, [ns]);
    assert.deepEqual(l.session?.settings.resources, [c.resourceId]);
    // Back to the defaults for the suites that follow.
    await vscode.workspace.getConfiguration('reconcileLab').update('resources', undefined, vscode.ConfigurationTarget.Workspace);
    await vscode.workspace.getConfiguration('reconcileLab').update('namespaces', undefined, vscode.ConfigurationTarget.Workspace);
  });

  it('Choose Reconciler… writes the reconciler settings and reconnects at once, with no "settings changed" prompt', async () => {
    const c = await widgetCrd();
    const ns = await testNamespace('ext-conn');
    await connectTo(ns);
    const a = await api();
    const mark = a.shownMark();
    const cfg = () => vscode.workspace.getConfiguration('reconcileLab');
    try {
      const before = l.session;
      const r = ok(await run<{ kind: string; resource?: string; modulePath?: string }>('reconcileLab.chooseReconciler', { kind: 'module', modulePath: join(ROOT, 'samples/module-reconciler.ts'), resource: c.resourceId }));
      assert.equal(r.kind, 'module');
      assert.equal(cfg().get('reconciler.kind'), 'module');
      assert.equal(cfg().get('reconciler.modulePath'), join(ROOT, 'samples/module-reconciler.ts'));
      assert.equal(cfg().get('reconciler.resource'), c.resourceId);
      assert.notEqual(l.session, before, 'reconnected');
      assert.match(l.session!.reconcilerDescription, /^module reconciler .*module-reconciler\.ts/);
      assert.equal(l.session!.loopProblem, undefined);
      // Back to the lab reconciler: without samples/crd.yaml's Widgets served here, the suite's Widget kind chosen before stays.
      const served = l.session!.discovered.some((x) => x.group === 'lab.reconcile.dev' && x.resource === 'widgets');
      ok(await run('reconcileLab.chooseReconciler', { kind: 'lab' }));
      assert.equal(cfg().get('reconciler.kind'), 'lab');
      assert.equal(cfg().get('reconciler.resource'), served ? '' : c.resourceId);
      if (!served) assert.equal(l.session!.reconcilerDescription, 'lab sample reconciler');
      const bad = await run('reconcileLab.chooseReconciler', { kind: 'modul' });
      assert.equal(!bad.ok && bad.reason, 'invalidArgument');
      await new Promise((res) => setTimeout(res, 500)); // a late configuration event would ask now
      assert.deepEqual(a.shownSince(mark).filter((t) => /Reconnect to apply/.test(t.text)).map((t) => t.text), [], 'no reconnect prompt: the command reconnected itself');
    } finally {
      for (const k of ['reconciler.kind', 'reconciler.modulePath', 'reconciler.resource']) await cfg().update(k, undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  it('a reconcileLab.* key that is no setting (a misspelt name) is named at connect with the setting meant, and the loop still runs', async () => {
    // VS Code refuses to write an unregistered key through its API: write the folder's settings.json as a person does.
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    assert.ok(folder, 'the suite runs in a folder');
    const file = join(folder, '.vscode', 'settings.json');
    let before: string | undefined;
    try {
      before = readFileSync(file, 'utf8');
    } catch {
      before = undefined;
    }
    const typo = 'reconcileLab.reconciler.predicate';
    try {
      mkdirSync(join(folder, '.vscode'), { recursive: true });
      writeFileSync(file, JSON.stringify({ ...(before ? JSON.parse(before) as object : {}), [typo]: ['generation-changed'] }, null, 2));
      await waitUntil(() => (vscode.workspace.getConfiguration('reconcileLab').get('reconciler') as { predicate?: unknown } | undefined)?.predicate !== undefined, 'VS Code reads the new key', 20_000);
      const ns = await testNamespace('ext-conn');
      const from = (await api()).shownMark();
      const r = await connectTo(ns);
      assert.equal(r.loopProblem, undefined);
      const warning = (await api()).shownSince(from).find((t) => t.kind === 'warning' && t.text.includes(typo));
      assert.ok(warning, 'a warning names the key');
      assert.match(warning.text, /reconcileLab\.reconciler\.predicate is not a Reconcile Lab setting \(did you mean reconcileLab\.reconciler\.predicates\?\): it does nothing/);
    } finally {
      if (before === undefined) rmSync(file, { force: true });
      else writeFileSync(file, before);
      await waitUntil(() => (vscode.workspace.getConfiguration('reconcileLab').get('reconciler') as { predicate?: unknown } | undefined)?.predicate === undefined, 'the key is gone again', 20_000);
    }
  });

  it('disconnects', async () => {
    const ns = await testNamespace('ext-conn');
    await connectTo(ns);
    const r = ok(await run<{ wasConnected: boolean }>('reconcileLab.disconnect'));
    assert.equal(r.wasConnected, true);
    assert.equal(l.session, undefined);
    assert.equal(l.resourcesTree.getChildren().length, 0);
  });
});
