// The Event Log's detail pane and the per-key Timeline in real VS Code: both webviews load under their CSP and
// complete the ready handshake; selecting an entry (as the Timeline does when a mark is clicked) round-trips through
// the Event Log webview and brings back the entry's detail (the write's diff before → after, its reconcile); Show
// Timeline opens one panel from the palette, a tree element or `{ key }`, focuses the key's lane (of the controller a
// tree row or an Event Log entry names) and streams entries.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ReconcileLab } from '../../../src/host/reconcileLab.ts';
import { ok, run, suiteWidgets, waitUntil, type WidgetCrd } from './support/lab.ts';

describe('Event Log detail pane and Timeline', function () {
  this.timeout(90_000);
  let l: ReconcileLab;
  let ns = '';
  let resource = '';

  before(async function () {
    this.timeout(120_000);
    let c: WidgetCrd;
    ({ l, c, ns } = await suiteWidgets('ext-timeline', ['traced'], { connect: true }));
    resource = c.resourceId;
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('a selected write shows its diff before → after and the reconcile it belongs to, through the webview', async () => {
    const key = `${ns}/traced`;
    const since = l.session!.journal.lastSeq;
    ok(await run('reconcileLab.stepReconcile', { key, resource, force: true }));
    const entries = l.session!.journal.entries({ sinceSeq: since });
    const write = entries.find((e) => e.kind === 'write' && !e.error);
    assert.ok(write, `the step wrote: ${JSON.stringify(entries.map((e) => e.kind))}`);
    // The Timeline's click path: open the Event Log on that entry; the webview selects it and asks for its detail.
    l.eventLog.selectEntry(write.seq);
    await waitUntil(() => l.eventLog.selectedSeq === write.seq, 'the webview selected the entry and asked for its detail');
    const d = l.eventLog.lastDetail;
    assert.ok(d, 'a detail was sent');
    assert.equal(d.seq, write.seq);
    assert.ok(d.diff !== undefined && /^\+/m.test(d.diff), `a diff before → after: ${d.diff ?? d.diffNote}`);
    assert.ok(d.reconcile, 'the reconcile it belongs to');
    assert.ok(d.reconcile.entries.some((e) => e.kind === 'reconcileStart') && d.reconcile.entries.some((e) => e.kind === 'reconcileEnd'), JSON.stringify(d.reconcile));
    assert.ok(d.cause && d.cause.length > 0, 'the cause (the triggers of its reconcile)');
  });

  it('a person\'s actions are journaled as named entries (Reset Backoff, Reconcile Now)', async () => {
    const key = `${ns}/traced`;
    const since = l.session!.journal.lastSeq;
    ok(await run('reconcileLab.resetBackoff', { key, resource }));
    ok(await run('reconcileLab.reconcileNow', { key, resource }));
    const actions = l.session!.journal.entries({ sinceSeq: since }).filter((e) => e.kind === 'control' && e.key === key);
    assert.deepEqual(actions.map((e) => (e.kind === 'control' ? e.action : '')), ['resetBackoff', 'reconcileNow']);
    const last = actions[actions.length - 1]!;
    l.eventLog.selectEntry(last.seq);
    await waitUntil(() => l.eventLog.selectedSeq === last.seq, 'selected');
    assert.match(l.eventLog.lastDetail!.title, /Reconcile Now \(your action\)/);
  });

  it('Show Timeline opens one panel, completes the handshake and focuses the key given', async () => {
    const key = `${ns}/traced`;
    const r = ok(await run<{ key?: string; connected: boolean }>('reconcileLab.showTimeline', { key }));
    assert.equal(r.key, key);
    assert.equal(r.connected, true);
    await waitUntil(() => l.timeline.isReady, 'the timeline webview said ready');
    assert.ok(l.timeline.posted.inits >= 1 && l.timeline.posted.entries > 0, JSON.stringify(l.timeline.posted));
    assert.equal(l.timeline.posted.focus, key);
    assert.equal(l.timeline.posted.focusController, undefined, 'a bare key names no controller: every lane of it');
    // Opened again from the Resources tree element: the same panel, focused on that key's lane of the loop the views
    // show (the name its journal entries carry), not every controller's lane of the key.
    l.resourcesTree.flush();
    const node = l.resourcesTree.nodeFor(resource, key);
    assert.ok(node, 'the object is in the tree');
    const shown = l.session!.controller!.name;
    const own = l.session!.journal.entries({ key }).filter((e) => e.controller === shown);
    assert.ok(own.length > 0, `the shown controller journaled entries of ${key} under its name`);
    const fromRow = ok(await run<{ key?: string; controller?: string }>('reconcileLab.showTimeline', node));
    assert.equal(fromRow.controller, shown);
    assert.equal(l.timeline.posted.focus, key);
    assert.equal(l.timeline.posted.focusController, shown);
    // From an Event Log entry ({ key, seq }: the detail pane's button): the entry's controller.
    ok(await run('reconcileLab.showTimeline', { key, seq: own[own.length - 1]!.seq }));
    assert.equal(l.timeline.posted.focusController, shown);
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputWebview && /Timeline/.test(t.label));
    assert.equal(tabs.length, 1, 'one Timeline panel');
    // Without a key (palette): every lane, no new panel.
    ok(await run('reconcileLab.showTimeline'));
    assert.equal(vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputWebview && /Timeline/.test(t.label)).length, 1);
  });

  it('streams new journal entries to the open timeline in batches', async () => {
    await waitUntil(() => l.timeline.isReady, 'ready');
    const before = l.timeline.posted.entries;
    const batches = l.timeline.posted.batches;
    ok(await run('reconcileLab.stepReconcile', { key: `${ns}/traced`, resource, force: true }));
    await waitUntil(() => l.timeline.posted.entries > before, 'entries posted after a step');
    assert.ok(l.timeline.posted.batches - batches <= l.timeline.posted.entries - before);
  });
});
