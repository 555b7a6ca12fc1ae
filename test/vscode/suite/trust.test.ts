// Workspace trust: exec and module reconcilers run workspace code, so they only run in a trusted workspace.
// The `[untrusted]` suite runs in the untrusted variant (a folder opened with trust withheld); the other in the
// trusted one.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { StepResult } from '../../../src/core/controller/controller.ts';
import { installCrd } from '../../integration/support/cluster.ts';
import { api, connectTo, lab, labCluster, ok, ROOT, run, testNamespace, uniqueName, waitUntil, widget, widgetCrd } from './support/lab.ts';

describe('workspace trust [untrusted]', function () {
  this.timeout(90_000);

  it('refuses the exec reconciler in an untrusted workspace and explains why, while the views still work', async () => {
    assert.equal(vscode.workspace.isTrusted, false);
    const l = await lab();
    const ns = await testNamespace('ext-trust');
    const c = await widgetCrd();
    const r = await connectTo(ns, { reconcilerKind: 'exec' });
    assert.match(r.loopProblem ?? '', /trusted workspace/);
    assert.equal(l.session?.loopProblem?.reason, 'untrusted');
    assert.equal(l.session?.controller, undefined, 'no loop was built');
    assert.ok(l.session?.resources.some((x) => x.id === c.resourceId), 'the informers and views still work');
    for (const id of ['reconcileLab.stepReconcile', 'reconcileLab.startLoop', 'reconcileLab.dryRunReconcile']) {
      const res = await run(id, { key: `${ns}/x`, resource: c.resourceId });
      assert.equal(res.ok, false, id);
      assert.equal(!res.ok && res.reason, 'untrusted', id);
    }
  });

  it('ignores a kubeconfig, context, auto-connect, resources, namespaces or reconciled resource chosen by the untrusted workspace', async () => {
    const cfg = () => vscode.workspace.getConfiguration('reconcileLab');
    const keys = ['connection.kubeconfig', 'connection.context', 'connection.autoConnect', 'resources', 'namespaces', 'reconciler.resource', 'reconciler.kind', 'reconciler.modulePath'] as const;
    const values = {
      'reconciler.kind': 'module',
      'reconciler.modulePath': 'tenant.ts',
      'connection.kubeconfig': '/tmp/evil-kubeconfig',
      'connection.context': 'evil',
      'connection.autoConnect': true,
      resources: ['configmaps', 'secrets'],
      namespaces: ['kube-system'],
      'reconciler.resource': 'configmaps',
    };
    const before = keys.map((k) => cfg().get(k));
    try {
      for (const k of keys) await cfg().update(k, values[k], vscode.ConfigurationTarget.Workspace);
      // The values are really in the workspace's settings file…
      const folder = vscode.workspace.workspaceFolders![0]!.uri;
      const file = JSON.parse(new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(folder, '.vscode/settings.json'))));
      for (const k of keys) assert.deepEqual(file[`reconcileLab.${k}`], values[k], `${k} is written in the workspace settings`);
      // …but an untrusted workspace's values of restricted settings are not applied.
      assert.deepEqual(keys.map((k) => cfg().get(k)), before, 'the restricted settings keep their user values');
      // …and a connection made now uses the user values (the loop does not reconcile ConfigMaps in kube-system).
      const l = await lab();
      const connected = ok(await run<{ ignoredWorkspaceSettings?: string[] }>('reconcileLab.connect', { kubeconfig: labCluster().kubeconfigPath }));
      // …and the connection says which of the folder's settings it ignored (a warning names them, with Manage Workspace Trust).
      assert.deepEqual(connected.ignoredWorkspaceSettings, ['reconciler.modulePath', 'reconciler.kind', 'connection.kubeconfig', 'connection.context', 'connection.autoConnect', 'resources', 'namespaces', 'reconciler.resource']);
      assert.equal(l.session?.settings['reconciler.kind'], before[6]);
      assert.deepEqual(l.session?.settings.resources, before[3]);
      assert.deepEqual(l.session?.settings.namespaces, before[4]);
      assert.equal(l.session?.settings['reconciler.resource'], before[5]);
      assert.notEqual(l.session?.primaryResource, 'configmaps');
      await l.disconnect();
    } finally {
      for (const k of keys) await cfg().update(k, undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  it('[untrusted] a reconciler kind that is none of lab, exec, module (a typo in the user settings) builds no loop, and never the module one', async () => {
    const cfg = () => vscode.workspace.getConfiguration('reconcileLab');
    const l = await lab();
    try {
      // User settings (applied even in Restricted Mode): VS Code hands out a value outside the declared enum.
      await cfg().update('reconciler.kind', 'Module', vscode.ConfigurationTarget.Global);
      await cfg().update('reconciler.modulePath', join(ROOT, 'samples/module-reconciler.ts'), vscode.ConfigurationTarget.Global);
      const r = ok(await run<{ loopProblem?: string }>('reconcileLab.connect', { kubeconfig: labCluster().kubeconfigPath }));
      assert.match(r.loopProblem ?? '', /reconcileLab\.reconciler\.kind is "Module", which is not a reconciler kind: use "lab" .*did you mean "module"\?/);
      assert.equal(l.session?.loopProblem?.reason, 'config');
      assert.equal(l.session?.controller, undefined, 'no loop, so no workspace module ran');
      await l.disconnect();
    } finally {
      await cfg().update('reconciler.kind', undefined, vscode.ConfigurationTarget.Global);
      await cfg().update('reconciler.modulePath', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('still runs the built-in lab reconciler in an untrusted workspace', async () => {
    const l = await lab();
    const ns = await testNamespace('ext-trust');
    const r = await connectTo(ns, { reconcilerKind: 'lab' });
    assert.equal(r.loopProblem, undefined);
    assert.ok(l.session?.controller);
    await l.disconnect();
  });
});

describe('workspace trust', function () {
  this.timeout(90_000);

  it('says what is missing when the module reconciler has no module path', async () => {
    const l = await lab();
    const ns = await testNamespace('ext-trust');
    const r = await connectTo(ns, { reconcilerKind: 'module', reconcilerModulePath: '' });
    assert.match(r.loopProblem ?? '', /modulePath is empty/);
    assert.equal(l.session?.loopProblem?.reason, 'config');
  });

  it('a reconciled resource the server does not serve names the setting, which the warning then opens', async () => {
    const l = await lab();
    const ns = await testNamespace('ext-trust');
    const r = await connectTo(ns, { reconcilerResource: 'gizmos.nowhere.example' });
    assert.match(r.loopProblem ?? '', /The reconciled resource "gizmos\.nowhere\.example" \(reconcileLab\.reconciler\.resource\) is not served by /);
    assert.equal(l.session?.loopProblem?.reason, 'noPrimary');
    assert.equal(l.session?.loopProblem?.setting, 'reconciler.resource', 'Open Settings opens this setting');
  });

  it('a module reconciler with no reconciled resource set takes the one custom resource watched; of several it takes none and names them', async () => {
    const l = await lab();
    const ns = await testNamespace('ext-trust');
    const c = await widgetCrd();
    const group = `${uniqueName('pick')}.example.org`;
    const gadgets = `gadgets.${group}`;
    await installCrd(labCluster().transport, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: gadgets },
      spec: {
        group,
        scope: 'Namespaced',
        names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', listKind: 'GadgetList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    });
    try {
      const module = { reconcilerKind: 'module', reconcilerModulePath: join(ROOT, 'samples/module-reconciler.ts'), reconcilerResource: '' };
      const several = await connectTo(ns, { ...module, resources: [c.resourceId, gadgets, 'configmaps'] });
      assert.equal(several.primaryResource, undefined, 'no resource guessed');
      assert.ok((several.loopProblem ?? '').startsWith(`2 custom resources are watched ("${c.resourceId}", "${gadgets}") and reconcileLab.reconciler.resource is not set`), several.loopProblem);
      assert.equal(l.session?.loopProblem?.reason, 'noPrimary', 'the warning offers Choose Reconciler…');
      const one = await connectTo(ns, { ...module, resources: [gadgets, 'configmaps'] });
      assert.equal(one.loopProblem, undefined, one.loopProblem);
      assert.equal(one.primaryResource, gadgets);
    } finally {
      await labCluster().transport.json({ method: 'DELETE', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${gadgets}` }).catch(() => undefined);
    }
  });

  it('a reconciled resource written with its version (or as kubectl takes it) names the plural.group the setting wants', async () => {
    const l = await lab();
    const ns = await testNamespace('ext-trust');
    const c = await widgetCrd();
    const r = await connectTo(ns, { reconcilerResource: `${c.resourceId}/v1alpha1` });
    assert.ok((r.loopProblem ?? '').includes(`is not served by `), r.loopProblem);
    assert.ok((r.loopProblem ?? '').endsWith(`Did you mean "${c.resourceId}"? The setting takes plural.group, as kubectl api-resources lists it.`), r.loopProblem);
    assert.equal(l.session?.loopProblem?.setting, 'reconciler.resource');
  });

  it('refuses a module path whose extension no loader takes, naming the accepted ones, and builds no loop', async () => {
    const l = await lab();
    const ns = await testNamespace('ext-trust');
    const r = await connectTo(ns, { reconcilerKind: 'module', reconcilerModulePath: 'samples/module-reconciler.ts.bak' });
    assert.match(r.loopProblem ?? '', /reconcileLab\.reconciler\.modulePath: samples\/module-reconciler\.ts\.bak is not a JavaScript or TypeScript file \("\.bak"\): a reconciler module's name must end in \.ts, \.mts, \.cts, \.js, \.mjs or \.cjs/);
    assert.equal(l.session?.loopProblem?.reason, 'config');
    assert.equal(l.session?.controller, undefined);
  });

  it('a module path naming no file (a typo) is a loop problem at connect, with the file meant and Open Settings; the right path builds the loop', async () => {
    const l = await lab();
    const ns = await testNamespace('ext-trust');
    const dir = mkdtempSync(join(tmpdir(), 'rl-typo-'));
    try {
      writeFileSync(join(dir, 'oven-reconciler.ts'), 'export function reconcile() { return {}; }\n');
      const from = (await api()).shownMark();
      const r = await connectTo(ns, { reconcilerKind: 'module', reconcilerModulePath: join(dir, 'oven-reconciller.ts') });
      assert.match(r.loopProblem ?? '', /reconcileLab\.reconciler\.modulePath ".*oven-reconciller\.ts": reconciler module not found: .*oven-reconciller\.ts \(did you mean oven-reconciler\.ts\?\)\. Fix the setting, then reconnect\./);
      assert.equal(l.session?.loopProblem?.reason, 'config');
      assert.equal(l.session?.loopProblem?.setting, 'reconciler.modulePath');
      assert.equal(l.session?.controller, undefined, 'no loop whose every reconcile would fail with "not found"');
      await waitUntil(() => /did you mean oven-reconciler\.ts\?/.test(l.queueView.message ?? ''), 'the Work Queue view says it');
      assert.match(l.queueView.description ?? '', /^no loop/, 'the header does not show the module as if it were fine');
      assert.ok((await api()).shownSince(from).some((t) => t.kind === 'warning' && /did you mean oven-reconciler\.ts\?/.test(t.text)), 'a warning says it at once');
      // Fixed: the loop is built.
      const fixed = await connectTo(ns, { reconcilerKind: 'module', reconcilerModulePath: join(dir, 'oven-reconciler.ts') });
      assert.equal(fixed.loopProblem, undefined);
      assert.ok(l.session?.controller);
      await l.disconnect();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('builds no loop for a module whose predicates or options exports are wrong, and says which export to fix', async () => {
    const l = await lab();
    const ns = await testNamespace('ext-trust');
    const dir = mkdtempSync(join(tmpdir(), 'rl-trust-'));
    try {
      const path = join(dir, 'badExports.mjs');
      writeFileSync(path, `export function reconcile() { return {}; }\nexport const predicates = ['generation-change'];\n`);
      const r = await connectTo(ns, { reconcilerKind: 'module', reconcilerModulePath: path });
      assert.match(r.loopProblem ?? '', /reconcileLab\.reconciler\.modulePath: .*badExports\.mjs.*predicates\[0\]: unknown predicate "generation-change".*Fix the module's exports, then reconnect/s);
      assert.equal(l.session?.loopProblem?.reason, 'config');
      assert.equal(l.session?.controller, undefined, 'no loop runs without the predicates the module asked for');
      const res = await run('reconcileLab.stepReconcile', { key: `${ns}/x` });
      assert.equal(res.ok, false, 'there is no loop to step');
      await l.disconnect();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('builds no loop when a reconcileLab.reconciler.predicates entry is wrong (the module reconciler made for it is let go)', async () => {
    const cfg = () => vscode.workspace.getConfiguration('reconcileLab');
    const l = await lab();
    const ns = await testNamespace('ext-trust');
    try {
      await cfg().update('reconciler.predicates', ['generation-chnged'], vscode.ConfigurationTarget.Global);
      const r = await connectTo(ns, { reconcilerKind: 'module', reconcilerModulePath: join(ROOT, 'samples/module-reconciler.ts') });
      assert.match(r.loopProblem ?? '', /reconcileLab\.reconciler\.predicates: .*generation-chnged/);
      assert.equal(l.session?.loopProblem?.reason, 'config');
      assert.equal(l.session?.controller, undefined, 'no loop runs beside the problem message');
      await l.disconnect();
    } finally {
      await cfg().update('reconciler.predicates', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('runs the workspace module reconciler in a trusted workspace (samples/module-reconciler.ts)', async () => {
    assert.equal(vscode.workspace.isTrusted, true);
    const l = await lab();
    const ns = await testNamespace('ext-trust');
    const c = await widgetCrd();
    await labCluster().client.create(c.gvr, widget(c, ns, 'mod'));
    const r = await connectTo(ns, { reconcilerKind: 'module', reconcilerModulePath: join(ROOT, 'samples/module-reconciler.ts') });
    assert.equal(r.loopProblem, undefined);
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/mod`)), 'widget cached');
    let child: unknown;
    for (let i = 0; i < 4 && !child; i++) {
      const step = ok(await run<{ step: StepResult; summary: string }>('reconcileLab.stepReconcile', { key: `${ns}/mod`, resource: c.resourceId, force: true }));
      assert.equal(step.step.kind, 'reconciled', step.summary);
      assert.ok(step.step.kind === 'reconciled' && step.step.outcome.kind !== 'error', step.summary);
      child = await labCluster().client.get({ group: '', version: 'v1', resource: 'configmaps' }, ns, 'mod-module').catch(() => undefined);
    }
    assert.ok(child, 'the module reconciler created its child ConfigMap (<name>-module)');
    await l.disconnect();
  });
});
