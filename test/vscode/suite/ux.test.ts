// Issue 12 (the newcomer's walk): Step acts on the selected key and says which; relative times tick while a view is
// visible (one timer); the escape hatch recognises this session's own loop and says what happens after a removal;
// objects can be deleted without waiting for finalizers.
import * as assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { StepResult } from '../../../src/core/controller/controller.ts';
import type { ReconcileLab } from '../../../src/host/reconcileLab.ts';
import type { ResourceNode } from '../../../src/host/views/resourcesTree.ts';
import { api, connectTo, labCluster, ok, run, suiteWidgets, waitUntil, widget, type WidgetCrd, tooltipText } from './support/lab.ts';

const LEGACY = 'legacy.example.com/external-dns';
const LAB_FINALIZER = 'lab.reconcile.dev/cleanup';

describe('Step has one meaning, and relative times tick', function () {
  this.timeout(90_000);
  let l: ReconcileLab;
  let c: WidgetCrd;
  let ns = '';

  before(async function () {
    this.timeout(120_000);
    ({ l, c, ns } = await suiteWidgets('ext-ux', ['a', 'b', 'c'], { connect: true }));
    await waitUntil(() => l.session?.queuedKeys().length === 3, 'three keys queued (paused loop)');
    await vscode.commands.executeCommand('reconcileLab.resources.focus');
  });

  it('with nothing selected, Step (title button / F10: no argument) announces and steps the head of the queue', async () => {
    // Select the kind row: it stands for no key.
    const kind = l.resourcesTree.getChildren().find((n) => n.type === 'kind' && n.resource === c.resourceId)!;
    await l.resourcesView.reveal(kind, { select: true, focus: true });
    await waitUntil(() => l.stepTarget()?.source === 'queue', 'no key selected');
    const head = l.session!.queuedKeys()[0]!;
    assert.equal(l.resourcesView.description, `Step ${head} (next in queue)`);
    assert.ok(l.queueView.description?.endsWith(` · Step ${head} (next in queue)`), l.queueView.description);
    assert.match(l.statusBar.text, new RegExp(`\\$\\(debug-step-over\\) ${head}`));
    const r = ok(await run<{ step: StepResult }>('reconcileLab.stepReconcile'));
    assert.equal(r.step.kind === 'reconciled' && r.step.key, head);
  });

  it('with an object selected, the same button steps that key (not the head of the queue) and says so first', async () => {
    const queued = l.session!.queuedKeys();
    const last = queued[queued.length - 1]!;
    assert.notEqual(queued[0], last);
    l.resourcesTree.flush();
    const node = l.resourcesTree.nodeFor(c.resourceId, last)!;
    await l.resourcesView.reveal(node, { select: true, focus: true });
    await waitUntil(() => l.stepTarget()?.key === last, 'the selection is the step target');
    assert.equal(l.resourcesView.description, `Step ${last} (selected)`);
    // The header line follows within VIEW_MESSAGE_INTERVAL_MS (it is throttled: see MessageThrottle).
    await waitUntil(() => new RegExp(`Step reconciles ${last} once \\(selected\\)`).test(l.queueView.message ?? ''), 'the Work Queue header names the selected key');
    const r = ok(await run<{ step: StepResult }>('reconcileLab.stepReconcile'));
    assert.equal(r.step.kind === 'reconciled' && r.step.key, last);
    // The context menu passes the element itself: the same key.
    const again = ok(await run<{ step: StepResult }>('reconcileLab.stepReconcile', { ...node, force: true }));
    assert.equal(again.step.kind === 'reconciled' && again.step.key, last);
  });

  it('after Stop, F10 steps the key still selected in the Resources view, even when a Work Queue row selected later left the queue', async () => {
    await vscode.commands.executeCommand('reconcileLab.resources.focus');
    ok(await run('reconcileLab.pauseLoop'));
    for (const name of ['a', 'b', 'c']) ok(await run('reconcileLab.reconcileNow', { key: `${ns}/${name}` }));
    const queued = l.session!.queuedKeys();
    assert.ok(queued.length >= 2, `two keys queued: ${queued.join(', ')}`);
    const [head, chosen] = [queued[0]!, queued[queued.length - 1]!];
    // The object selected in the Resources view…
    l.resourcesTree.flush();
    await l.resourcesView.reveal(l.resourcesTree.nodeFor(c.resourceId, chosen)!, { select: true, focus: true });
    await waitUntil(() => l.stepTarget()?.key === chosen, 'the Resources selection is the step target');
    // …then a Work Queue row (the latest selection wins)…
    await vscode.commands.executeCommand('reconcileLab.queue.focus');
    l.queueTree.getChildren();
    await l.queueView.reveal(l.queueTree.nodeFor(head)!, { select: true, focus: true });
    await waitUntil(() => l.stepTarget()?.key === head && l.stepTarget()?.source === 'selection', 'the queue row is the step target');
    // …which leaves the view when Stop drops the queue: the Resources view's selection counts again.
    ok(await run('reconcileLab.stopLoop'));
    await waitUntil(() => l.queueView.selection.length === 0, 'the queue row is gone');
    await waitUntil(() => l.stepTarget()?.key === chosen, 'the step target falls back to the Resources selection');
    assert.equal(l.resourcesView.description, `Step ${chosen} (selected)`);
    // F10 / the title button (no argument) starts the loop paused and steps that key, not the head of the queue.
    const r = ok(await run<{ step: StepResult }>('reconcileLab.stepReconcile'));
    assert.equal(r.step.kind === 'reconciled' && r.step.key, chosen);
    assert.equal(l.session!.loopState(), 'paused');
  });

  it('a Terminating age ticks: one timer refreshes the visible views every second, and stops when they are hidden', async () => {
    const { client } = labCluster();
    await client.create(c.gvr, widget(c, ns, 'ticking', { finalizers: [LEGACY] }));
    await client.delete(c.gvr, ns, 'ticking');
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/ticking`)?.metadata.deletionTimestamp), 'cache sees the deletion');
    await vscode.commands.executeCommand('reconcileLab.resources.focus');
    await waitUntil(() => l.resourcesView.visible && l.ticker.running, 'the ticker runs while the view is visible');
    l.resourcesTree.flush();
    const node = l.resourcesTree.nodeFor(c.resourceId, `${ns}/ticking`)!;
    // Ticks re-render the ticking row by itself, as the element VS Code holds, not the whole view: a whole-view refresh
    // makes VS Code's extension host forget every row until the view fetched them again, and a context-menu command
    // picked on the row meanwhile (Strip Finalizers… on this very object) got no element and asked which object.
    const fired: Array<ResourceNode | ResourceNode[] | undefined> = [];
    const sub = l.resourcesTree.onDidChangeTreeData((e) => fired.push(e));
    const ticks = l.ticker.ticks;
    const refreshes = l.resourcesTree.refreshCount;
    try {
      await waitUntil(() => l.ticker.ticks >= ticks + 3 && l.resourcesTree.refreshCount >= refreshes + 2, 'ticks re-render the view', 10_000);
    } finally {
      sub.dispose();
    }
    const rowRefreshes = fired.filter((e) => Array.isArray(e) && e.some((n) => n.id === node.id)).length;
    const wholeView = fired.filter((e) => e === undefined).length;
    assert.ok(rowRefreshes >= 2, `the ticking row is refreshed as its element (${rowRefreshes} of ${fired.length} refreshes)`);
    assert.ok(wholeView < l.ticker.ticks - ticks, `ticks do not refresh the whole view (${wholeView} whole-view refreshes in ${l.ticker.ticks - ticks} ticks)`);
    const item = l.resourcesTree.getTreeItem(node);
    const age = /^Terminating (\d+)s/.exec(String(item.description))?.[1];
    assert.ok(age !== undefined && Number(age) >= 1, String(item.description));
    // Row and tooltip (made on hover: resolveTreeItem): the same age at the same now.
    const tip = tooltipText(l.resourcesTree.resolveTreeItem(item, node).tooltip);
    assert.ok(tip.includes(`deletion requested ${age}s ago`), tip);
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    await vscode.commands.executeCommand('workbench.action.closePanel');
    await waitUntil(() => !l.resourcesView.visible && !l.queueView.visible, 'views hidden');
    assert.equal(l.ticker.running, false, 'no timer while no view is visible');
    await vscode.commands.executeCommand('reconcileLab.resources.focus');
    await waitUntil(() => l.ticker.running, 'ticking again once visible');
    await client.patch(c.gvr, ns, 'ticking', 'merge', { metadata: { finalizers: null } });
  });
});

describe('escape hatch and Delete', function () {
  this.timeout(90_000);
  let l: ReconcileLab;
  let c: WidgetCrd;
  let ns = '';

  before(async function () {
    this.timeout(120_000);
    ({ l, c, ns } = await suiteWidgets('ext-hatch', [{ name: 'stuck', finalizers: [LEGACY] }, 'plain'], { connect: true }));
  });

  it('Delete does not wait for finalizers: the object stays Terminating and the delete is journaled', async () => {
    // One reconcile adds the loop's own finalizer.
    ok(await run('reconcileLab.stepReconcile', { key: `${ns}/stuck`, resource: c.resourceId, force: true }));
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/stuck`)?.metadata.finalizers?.includes(LAB_FINALIZER)), 'lab finalizer added');
    const r = ok(await run<{ terminating: boolean; finalizers: string[]; message: string }>('reconcileLab.deleteObject', { key: `${ns}/stuck`, resource: c.resourceId, confirmed: true }));
    assert.equal(r.terminating, true);
    assert.deepEqual([...r.finalizers].sort(), [LAB_FINALIZER, LEGACY].sort());
    assert.match(r.message, /is Terminating: it waits for/);
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/stuck`)?.metadata.deletionTimestamp), 'the cache sees it Terminating');
    const writes = l.session!.journal.entries({ kinds: ['write'], key: `${ns}/stuck` });
    assert.ok(writes.some((w) => w.kind === 'write' && w.verb === 'delete'), 'the delete is journaled');
    // Deleting it again says it is already being deleted.
    const again = await run('reconcileLab.deleteObject', { key: `${ns}/stuck`, resource: c.resourceId, confirmed: true });
    assert.equal(again.ok, false);
    assert.match(!again.ok ? again.message : '', /already being deleted/);
  });

  it('the diagnosis recognises the paused loop as the owner of its finalizer; after stripping the legacy one the object waits for one more reconcile', async () => {
    assert.equal(l.session!.loopState(), 'paused');
    const r = ok(
      await run<{ remaining: string[]; deleted: boolean; next: string; nextMessage: string; diagnosis: { finalizers: Array<{ finalizer: string; running: string; probableOwner: string }> } }>('reconcileLab.stripFinalizers', {
        key: `${ns}/stuck`,
        resource: c.resourceId,
        finalizer: LEGACY,
        confirmed: true,
      }),
    );
    const ours = r.diagnosis.finalizers.find((f) => f.finalizer === LAB_FINALIZER)!;
    assert.equal(ours.running, 'paused');
    assert.match(ours.probableOwner, /Reconcile Lab's lab loop/);
    assert.notEqual(r.diagnosis.finalizers.find((f) => f.finalizer === LEGACY)!.running, 'yes', "the loop's own writes are no evidence for the legacy owner");
    assert.deepEqual(r.remaining, [LAB_FINALIZER]);
    assert.equal(r.deleted, false);
    assert.equal(r.next, 'waitsForReconcile');
    assert.match(r.nextMessage, /waits for one more reconcile.*step it to finish/);
    // Offered next step: one reconcile runs the cleanup and removes the loop's finalizer: the object is gone.
    ok(await run('reconcileLab.stepReconcile', { key: `${ns}/stuck`, resource: c.resourceId, force: true }));
    await waitUntil(async () => !(await labCluster().client.get(c.gvr, ns, 'stuck').then(() => true, () => false)), 'the object is gone');
  });

  it('Delete of an object without finalizers removes it at once', async () => {
    const r = ok(await run<{ terminating: boolean; message: string }>('reconcileLab.deleteObject', { key: `${ns}/plain`, resource: c.resourceId, confirmed: true }));
    assert.equal(r.terminating, false);
    assert.match(r.message, /is deleted/);
    await waitUntil(async () => !(await labCluster().client.get(c.gvr, ns, 'plain').then(() => true, () => false)), 'gone');
  });
});

describe('a namespace that does not exist in reconcileLab.namespaces', function () {
  this.timeout(90_000);

  it('is named after connecting, with the namespace a typo most likely meant; a real one is not', async () => {
    const { l, ns } = await suiteWidgets('ext-nstypo', ['a'], { connect: true });
    const shownAfter = async (namespace: string) => {
      const from = (await api()).shownMark();
      await connectTo(namespace);
      await l.namespacesChecked; // the check that follows the connection (a read of the namespace)
      return (await api()).shownSince(from).filter((t) => t.kind === 'warning').map((t) => t.text);
    };
    const typo = `${ns}x`;
    const warned = await shownAfter(typo);
    assert.ok(warned.some((t) => t.includes(`reconcileLab.namespaces: namespace "${typo}" does not exist (did you mean ${ns}?)`) && /Nothing of it is watched until it exists/.test(t)), JSON.stringify(warned));
    const fine = await shownAfter(ns);
    assert.ok(!fine.some((t) => /does not exist/.test(t)), JSON.stringify(fine));
  });
});

describe('an exec program that fails with a long stderr: the Work Queue rows stay readable', function () {
  this.timeout(90_000);
  let dir = '';
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the key's 'last error' and 'queued because' rows show the error's first line (the due time stays in sight); the tooltip has all of it", async () => {
    const { l, c, ns } = await suiteWidgets('ext-exec-rows', ['nightly']);
    dir = mkdtempSync(join(tmpdir(), 'rl-exec-rows-'));
    const script = join(dir, 'backup.sh');
    // 200 lines of progress on stderr, then the cause, and a failing exit: the error carries the stderr's last 4 KiB.
    writeFileSync(script, '#!/bin/sh\ncat >/dev/null\ni=0; while [ $i -lt 200 ]; do echo "progress line $i" >&2; i=$((i+1)); done\necho "cannot reach backup storage" >&2\nexit 3\n');
    chmodSync(script, 0o755);
    await connectTo(ns, { reconcilerKind: 'exec', reconcilerCommand: script });
    const key = `${ns}/nightly`;
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, key)), 'nightly cached');
    const r = ok(await run<{ step: StepResult }>('reconcileLab.stepReconcile', { key, resource: c.resourceId, force: true }));
    assert.ok(r.step.kind === 'reconciled' && r.step.outcome.kind === 'error', JSON.stringify(r.step));
    const rows = () => {
      const n = l.queueTree.getChildren().find((x) => x.type === 'queueKey' && x.key === key);
      return n ? l.queueTree.getChildren(n).map((d) => l.queueTree.getTreeItem(d)) : [];
    };
    // Paused: the retry comes due and queues the key ("queued because retry #1 …").
    await waitUntil(() => rows().some((i) => i.label === 'queued because' && String(i.description).startsWith('retry #1')), 'the key queued by its retry');
    const retry = rows().find((i) => i.label === 'queued because' && String(i.description).startsWith('retry #1'))!;
    assert.match(String(retry.description), new RegExp(`^retry #1 after \\S+ backoff \\(${script.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} exited with code 3 …\\), due \\S+ ago$`));
    const last = rows().find((i) => i.label === 'last error')!;
    assert.match(String(last.description), new RegExp(`^${script.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} exited with code 3 … \\(\\S+ ago, hover for all of it\\)$`));
    const tip = tooltipText(last.tooltip);
    assert.match(tip, /stderr \(tail\):\n[^]*progress line 199\ncannot reach backup storage/, 'the tooltip has the whole error');
  });
});
