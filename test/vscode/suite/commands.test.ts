// The commands end to end, in the real extension host against the real control plane: step, dry-run (with diff
// editors), inspect cache vs server, open as YAML, strip finalizers (guarded, confirmation bypassed explicitly),
// loop controls, reconcile now / reset backoff, and the reconcile report.
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { StepResult } from '../../../src/core/controller/controller.ts';
import type { ReconcileLab } from '../../../src/host/reconcileLab.ts';
import { Schemes } from '../../../src/host/ids.ts';
import { api, connectTo, labCluster, ok, run, suiteWidgets, waitUntil, widget, type WidgetCrd } from './support/lab.ts';

const LEGACY = 'legacy.example.com/external-dns';
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

describe('commands against the local control plane', function () {
  this.timeout(90_000);
  let l: ReconcileLab;
  let c: WidgetCrd;
  let ns = '';
  let tmp = '';

  before(async function () {
    this.timeout(120_000);
    ({ l, c, ns } = await suiteWidgets('ext-cmd', [{ name: 'alpha', data: { color: 'blue' } }]));
    tmp = mkdtempSync(join(tmpdir(), 'rl-ext-cmd-'));
    const r = await connectTo(ns);
    assert.equal(r.primaryResource, c.resourceId);
    assert.equal(r.loop, 'paused', 'a new connection starts with the loop paused');
    await waitUntil(() => l.session?.list(c.resourceId).length === 1, 'the widget is cached');
  });

  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('steps one reconcile of a chosen key and leaves the loop paused; stepping again converges (child ConfigMap, Ready)', async () => {
    const key = `${ns}/alpha`;
    const { client } = labCluster();
    let last: StepResult | undefined;
    for (let i = 0; i < 6; i++) {
      const r = ok(await run<{ step: StepResult; summary: string }>('reconcileLab.stepReconcile', { key, resource: c.resourceId, force: true }));
      last = r.step;
      assert.equal(r.step.kind, 'reconciled', r.summary);
      assert.equal(l.session!.loopState(), 'paused');
      const w = await client.get(c.gvr, ns, 'alpha');
      const ready = (w.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions?.find((x) => x.type === 'Ready');
      if (ready?.status === 'True') break;
    }
    assert.ok(last && last.kind === 'reconciled' && (last.outcome.kind === 'success' || last.outcome.kind === 'requeueAfter'), JSON.stringify(last));
    const child = await client.get(CONFIGMAPS, ns, 'alpha-config');
    assert.equal((child.data as Record<string, string>).color, 'blue');
    assert.ok(child.metadata.ownerReferences?.some((o) => o.controller && o.name === 'alpha'));
    // The key's state is visible to the Work Queue view.
    const state = l.session!.keyState(key);
    assert.ok(state && state.reconciles >= 1);
  });

  it('step without a key takes the next queued key, or says nothing is queued', async () => {
    const r = ok(await run<{ step: StepResult; summary: string }>('reconcileLab.stepReconcile', { force: true }));
    assert.ok(['reconciled', 'empty', 'notReady'].includes(r.step.kind), r.summary);
  });

  it('dry-run reconcile plans the child update as a diff without persisting anything, in one reused result view, journaled as dry-run', async () => {
    const { client } = labCluster();
    await client.patch(c.gvr, ns, 'alpha', 'merge', { spec: { data: { color: 'purple' } } });
    await waitUntil(() => (l.session?.get(c.resourceId, `${ns}/alpha`)?.spec as { data?: { color?: string } })?.data?.color === 'purple', 'cache sees the new spec');
    const before = await client.get(CONFIGMAPS, ns, 'alpha-config');
    const sinceSeq = l.session!.journal.lastSeq;
    type DryRun = { actions: Array<{ verb: string; resource: string; key: string; outcome: string; diff: string }>; summary: string; uri: string };
    const r = ok(await run<DryRun>('reconcileLab.dryRunReconcile', { key: `${ns}/alpha`, resource: c.resourceId }));
    const childWrite = r.actions.find((a) => a.resource === 'configmaps' && a.key === `${ns}/alpha-config`);
    assert.ok(childWrite, `planned actions: ${JSON.stringify(r.actions.map((a) => `${a.verb} ${a.resource} ${a.key}`))}`);
    assert.equal(childWrite.outcome, 'ok');
    assert.match(childWrite.diff, /\+\s+color: purple/);
    assert.match(r.summary, /dryRun=All/);
    assert.match(r.summary, /```diff[\s\S]*\+\s+color: purple/, 'the planned diff is inline in the result view');
    const after = await client.get(CONFIGMAPS, ns, 'alpha-config');
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'a dry-run must not change the child');
    assert.equal((after.data as Record<string, string>).color, 'blue');
    // The person's action and its writes are in the journal, the writes marked dry-run.
    const journaled = l.session!.journal.entries({ sinceSeq });
    assert.ok(journaled.some((e) => e.kind === 'control' && e.action === 'dryRun' && e.key === `${ns}/alpha`), 'a named dry-run entry');
    const writes = journaled.filter((e) => e.kind === 'write');
    assert.ok(writes.length >= 1 && writes.every((e) => e.kind === 'write' && e.dryRun), `dry-run writes: ${JSON.stringify(writes)}`);
    // A second dry-run reuses the one result view: one tab, no diff editors.
    const again = ok(await run<DryRun>('reconcileLab.dryRunReconcile', { key: `${ns}/alpha`, resource: c.resourceId }));
    assert.equal(again.uri, r.uri);
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
    assert.equal(tabs.filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === r.uri).length, 1, 'exactly one result view');
    assert.equal(tabs.filter((t) => t.input instanceof vscode.TabInputTextDiff && /Dry-run/.test(t.label)).length, 0, 'no diff editor per write');
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === r.uri);
    assert.ok(doc, 'the result view is open');
    await waitUntil(() => doc.getText() === again.summary, 'the view shows the newest result');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('inspect cache vs server reports in-sync once the informer caught up, and opens the diff editor', async () => {
    let r: { state: string; differs: boolean; cachedResourceVersion?: string; serverResourceVersion?: string } | undefined;
    await waitUntil(async () => {
      r = ok(await run<{ state: string; differs: boolean; cachedResourceVersion?: string; serverResourceVersion?: string }>('reconcileLab.inspectCache', { key: `${ns}/alpha`, resource: c.resourceId, open: false }));
      return r.state === 'in-sync';
    }, 'cache in sync with the server');
    assert.equal(r!.differs, false);
    assert.equal(r!.cachedResourceVersion, r!.serverResourceVersion);
    ok(await run('reconcileLab.inspectCache', { key: `${ns}/alpha`, resource: c.resourceId }));
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    assert.ok(tab?.input instanceof vscode.TabInputTextDiff, 'the active editor is a diff');
    assert.match(tab.label, /cache ↔ server \(in-sync/);
    assert.ok(tab.label.startsWith(`Widget ${ns}/alpha: `), `the title names the kind: ${tab.label}`);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('opens an object as a read-only YAML document of the cache', async () => {
    const r = ok(await run<{ uri: string }>('reconcileLab.openYaml', { key: `${ns}/alpha`, resource: c.resourceId }));
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === r.uri);
    assert.ok(doc, 'the document is open');
    assert.equal(doc.uri.scheme, Schemes.object);
    assert.match(doc.getText(), /name: alpha/);
    assert.match(doc.getText(), /color: purple/);
    assert.ok(l.session!.get(c.resourceId, `${ns}/alpha`)!.metadata.managedFields?.length, 'the cached object has managedFields');
    assert.match(doc.getText(), /^# metadata\.managedFields hidden, as kubectl get -o yaml hides them/);
    assert.doesNotMatch(doc.getText(), /managedFields:/);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('strips a named finalizer from a Terminating object, guarded and recorded, and the object goes away', async () => {
    const { client } = labCluster();
    // The loop is paused and this key is never stepped: only the foreign finalizer holds it.
    await client.create(c.gvr, widget(c, ns, 'stuck', { finalizers: [LEGACY], data: { color: 'red' } }));
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/stuck`)), 'cache sees the widget');
    await client.delete(c.gvr, ns, 'stuck');
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/stuck`)?.metadata.deletionTimestamp), 'cache sees the deletion');
    const r = ok(
      await run<{ removed: string[]; remaining: string[]; deleted: boolean; diagnosis: { terminating: boolean; finalizers: Array<{ finalizer: string; consequence: string }> } }>(
        'reconcileLab.stripFinalizers',
        { key: `${ns}/stuck`, resource: c.resourceId, finalizer: LEGACY, confirmed: true },
      ),
    );
    assert.deepEqual(r.removed, [LEGACY]);
    assert.deepEqual(r.remaining, []);
    assert.equal(r.deleted, true);
    assert.equal(r.diagnosis.terminating, true);
    assert.match(r.diagnosis.finalizers[0]!.consequence, /orphaned/);
    await assert.rejects(client.get(c.gvr, ns, 'stuck'), (e: unknown) => (e as { code?: number }).code === 404);
    // The write is in the journal (the audit trail).
    const writes = l.session!.journal.entries({ kinds: ['write'], key: `${ns}/stuck` });
    assert.ok(writes.some((w) => w.kind === 'write' && w.verb === 'patch'), 'the finalizer patch is journaled');
  });

  it('refuses to strip without a named finalizer when confirmation is bypassed and several are present', async () => {
    const { client } = labCluster();
    await client.create(c.gvr, widget(c, ns, 'multi', { finalizers: [LEGACY, 'other.example.com/cleanup'] }));
    const r = await run('reconcileLab.stripFinalizers', { key: `${ns}/multi`, resource: c.resourceId, confirmed: true });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.reason, 'invalidArgument');
    const still = await client.get(c.gvr, ns, 'multi');
    assert.deepEqual(still.metadata.finalizers, [LEGACY, 'other.example.com/cleanup'], 'nothing was removed');
  });

  it('starts, pauses, resumes and stops the loop; reconcile now and reset backoff act on a running loop', async () => {
    assert.equal(ok(await run<{ loop: string }>('reconcileLab.pauseLoop')).loop, 'paused');
    const now = ok(await run<{ key: string }>('reconcileLab.reconcileNow', { key: `${ns}/alpha`, resource: c.resourceId }));
    assert.equal(now.key, `${ns}/alpha`);
    const reset = ok(await run<{ requeuesBefore: number }>('reconcileLab.resetBackoff', { key: `${ns}/alpha` }));
    assert.equal(typeof reset.requeuesBefore, 'number');
    assert.equal(ok(await run<{ loop: string }>('reconcileLab.startLoop')).loop, 'running');
    // The running loop reconciles the spec change planned by the dry-run earlier.
    await waitUntil(async () => ((await labCluster().client.get(CONFIGMAPS, ns, 'alpha-config')).data as Record<string, string>).color === 'purple', 'the loop applied the new color');
    assert.equal(ok(await run<{ loop: string }>('reconcileLab.stopLoop')).loop, 'stopped');
    const refused = await run('reconcileLab.reconcileNow', { key: `${ns}/alpha`, resource: c.resourceId });
    assert.equal(refused.ok, false, 'reconcile now needs a running loop');
    // Step on a stopped loop starts it paused first.
    const step = ok(await run<{ step: StepResult }>('reconcileLab.stepReconcile', { key: `${ns}/alpha`, resource: c.resourceId, force: true }));
    assert.equal(step.step.kind, 'reconciled');
    assert.equal(l.session!.loopState(), 'paused');
  });

  it('rejects a key of a resource the loop does not reconcile', async () => {
    const r = await run('reconcileLab.stepReconcile', { key: `${ns}/alpha-config`, resource: 'configmaps' });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.reason, 'invalidArgument');
  });

  it('exports a dry-run reconcile report as Markdown', async () => {
    const path = join(tmp, 'report.md');
    const r = ok(await run<{ path: string; totals: { objects: number; errors: number } }>('reconcileLab.exportReport', { path, dryRun: true, open: false }));
    assert.equal(r.path, path);
    assert.ok(existsSync(path));
    assert.ok(r.totals.objects >= 1);
    const text = readFileSync(path, 'utf8');
    assert.match(text, /^# Reconcile report/m);
    assert.match(text, new RegExp(`${ns}/alpha`));
  });

  it('refuses a live report while the loop runs (it would reconcile outside the work queue), allows it paused', async () => {
    const path = join(tmp, 'live-report.json');
    ok(await run('reconcileLab.resumeLoop'));
    const refused = await run('reconcileLab.exportReport', { path, dryRun: false, format: 'json', open: false });
    assert.equal(refused.ok, false);
    assert.equal(!refused.ok && refused.reason, 'loopRunning');
    assert.equal(existsSync(path), false, 'nothing written');
    ok(await run('reconcileLab.pauseLoop'));
    await waitUntil(() => l.session!.controller!.status().inFlight === 0, 'in-flight reconciles done');
    const r = ok(await run<{ path: string }>('reconcileLab.exportReport', { path, dryRun: false, format: 'json', open: false }));
    assert.equal(JSON.parse(readFileSync(r.path, 'utf8')).dryRun, false);
  });

  it('a command a person ran never fails silently: run from the palette or a row, its failure is shown; run by code, it is only returned', async () => {
    const a = await api();
    const shownFrom = async (mark: number) => a.shownSince(mark).filter((t) => t.kind === 'warning').map((t) => t.text);
    // The palette (no argument): Apply to Cluster with no object open for editing.
    let mark = a.shownMark();
    const palette = await run('reconcileLab.applyObjectEdit');
    assert.equal(palette.ok, false);
    assert.deepEqual(await shownFrom(mark), [`Reconcile Lab: ${!palette.ok && palette.message}`]);
    // A row of the Resources view (the node VS Code passes from its context menu): Reveal Secret on a Widget.
    const kind = l.resourcesTree.getChildren().find((n) => n.type === 'kind' && n.resource === c.resourceId)!;
    const nsNode = l.resourcesTree.getChildren(kind).find((n) => n.type === 'namespace' && n.namespace === ns)!;
    const row = l.resourcesTree.getChildren(nsNode).find((n) => n.type === 'object' && n.key === `${ns}/alpha`)!;
    l.resourcesTree.getTreeItem(row); // what VS Code does for every row it shows
    mark = a.shownMark();
    const clicked = await vscode.commands.executeCommand<{ ok: boolean; message?: string }>('reconcileLab.revealSecret', row);
    assert.equal(clicked.ok, false);
    assert.match(clicked.message ?? '', /is not a Secret/);
    assert.deepEqual(await shownFrom(mark), [`Reconcile Lab: ${clicked.message}`]);
    // Code (a plain argument, even a copy of the row): the failure is the result, nothing is shown.
    mark = a.shownMark();
    const scripted = await vscode.commands.executeCommand<{ ok: boolean }>('reconcileLab.revealSecret', { ...row });
    assert.equal(scripted.ok, false);
    assert.deepEqual(await shownFrom(mark), []);
  });

  it('Reveal Secret Values… from the palette with no Secrets watched: no picker of other kinds, a message saying how to watch them', async () => {
    assert.ok(!l.session!.resources.some((r) => r.id === 'secrets'), 'this connection watches no Secrets');
    const a = await api();
    const mark = a.shownMark();
    const r = await vscode.commands.executeCommand<{ ok: boolean; reason?: string; message?: string }>('reconcileLab.revealSecret');
    assert.equal(r.ok, false);
    assert.equal(r.reason, 'notFound');
    const shown = a.shownSince(mark);
    assert.ok(!shown.some((t) => t.kind === 'quickPick'), shown.map((t) => t.text).join(' | '));
    assert.deepEqual(shown.filter((t) => t.kind === 'info').map((t) => t.text), [`Reconcile Lab: ${r.message}`]);
    assert.match(r.message ?? '', /No Secrets are watched.*add "secrets" to reconcileLab\.resources \(Choose Watched Resources…\)/);
  });

  it('every command returns a failure result (never throws) when not connected', async () => {
    await run('reconcileLab.disconnect');
    for (const id of ['reconcileLab.stepReconcile', 'reconcileLab.dryRunReconcile', 'reconcileLab.inspectCache', 'reconcileLab.stripFinalizers']) {
      const r = await run(id, { key: `${ns}/alpha`, resource: c.resourceId });
      assert.equal(r.ok, false, id);
      assert.equal(!r.ok && r.reason, 'notConnected', id);
    }
  });
});
