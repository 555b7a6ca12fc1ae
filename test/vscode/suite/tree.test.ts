// Issue 12 item 8, the Resources view for a controller developer: filter by state, the object's Kubernetes Events,
// Edit Spec as YAML… with optimistic concurrency (a conflict is shown and never clobbers), and the warning when
// another field manager keeps undoing this loop's writes.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { parse, stringify } from 'yaml';
import type { ReconcileLab } from '../../../src/host/reconcileLab.ts';
import type { ResourceNode } from '../../../src/host/views/resourcesTree.ts';
import { api, labCluster, ok, run, runAsStranger, suiteWidgets, treeLabel as label, waitUntil, widget, type WidgetCrd, tooltipText } from './support/lab.ts';

const LEGACY = 'legacy.example.com/external-dns';

describe('Resources view: filter, Events, Edit Spec as YAML, field-manager fights', function () {
  this.timeout(120_000);
  let l: ReconcileLab;
  let c: WidgetCrd;
  let ns = '';

  before(async function () {
    this.timeout(120_000);
    ({ l, c, ns } = await suiteWidgets('ext-item8', ['calm', { name: 'doomed', finalizers: [LEGACY] }], { connect: true }));
  });

  after(async () => {
    await run('reconcileLab.clearResourcesFilter');
  });

  function objectNames(): string[] {
    l.resourcesTree.flush();
    const kind = l.resourcesTree.getChildren().find((n) => n.type === 'kind' && n.resource === c.resourceId)!;
    const nsNode = l.resourcesTree.getChildren(kind).find((n) => n.type === 'namespace' && n.namespace === ns);
    return nsNode ? l.resourcesTree.getChildren(nsNode).map((o) => label(l, o)).sort() : [];
  }

  function objectNode(name: string): ResourceNode {
    l.resourcesTree.flush();
    const kind = l.resourcesTree.getChildren().find((n) => n.type === 'kind' && n.resource === c.resourceId)!;
    const nsNode = l.resourcesTree.getChildren(kind).find((n) => n.type === 'namespace' && n.namespace === ns)!;
    return l.resourcesTree.getChildren(nsNode).find((o) => label(l, o) === name)!;
  }

  it('filters by state: only Terminating objects, said in the view description; cleared shows all; unknown states are refused', async () => {
    await labCluster().client.delete(c.gvr, ns, 'doomed');
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/doomed`)?.metadata.deletionTimestamp), 'cache sees the deletion');
    const r = ok(await run<{ states: string[]; label: string }>('reconcileLab.filterResources', { states: ['terminating'] }));
    assert.deepEqual(r.states, ['terminating']);
    assert.deepEqual(objectNames(), ['doomed']);
    assert.match(l.resourcesView.description ?? '', /^Filter: Terminating/);
    const kind = l.resourcesTree.getChildren().find((n) => n.type === 'kind' && n.resource === c.resourceId)!;
    assert.match(String(l.resourcesTree.getTreeItem(kind).description), /^1 of 2 shown/);
    // The namespace row: counts, and (namespaces are not watched here) no claim about the namespace's own state.
    const nsRow = l.resourcesTree.getChildren(kind).find((n) => n.type === 'namespace' && n.namespace === ns)!;
    const nsItem = l.resourcesTree.getTreeItem(nsRow);
    assert.equal(nsItem.description, '1 of 2 · 1 terminating');
    assert.match(tooltipText(nsItem.tooltip), /- Namespace: state not known: namespaces are not watched/);
    ok(await run('reconcileLab.filterResources', { states: ['notReady'] }));
    assert.deepEqual(objectNames(), [], 'nothing reconciled yet: no Ready condition to be False');
    ok(await run('reconcileLab.clearResourcesFilter'));
    assert.deepEqual(objectNames(), ['calm', 'doomed']);
    assert.doesNotMatch(l.resourcesView.description ?? '', /Filter/);
    const bad = await run('reconcileLab.filterResources', { states: ['sleepy'] });
    assert.ok(!bad.ok && bad.reason === 'invalidArgument' && /Unknown state "sleepy"/.test(bad.message));
  });

  it("shows the object's Kubernetes Events under it (core/v1 and events.k8s.io/v1)", async () => {
    const calm = l.session!.get(c.resourceId, `${ns}/calm`)!;
    const ref = { apiVersion: c.apiVersion, kind: 'Widget', name: 'calm', namespace: ns, uid: calm.metadata.uid };
    const t = labCluster().transport;
    await t.json({ method: 'POST', path: `/api/v1/namespaces/${ns}/events`, body: { apiVersion: 'v1', kind: 'Event', metadata: { name: 'calm.a', namespace: ns }, involvedObject: ref, type: 'Warning', reason: 'DependencyMissing', message: 'ConfigMap calm-settings not found', count: 2, source: { component: 'someone' }, lastTimestamp: new Date().toISOString() } });
    await t.json({ method: 'POST', path: `/apis/events.k8s.io/v1/namespaces/${ns}/events`, body: { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'calm.b', namespace: ns }, regarding: ref, type: 'Normal', reason: 'Checked', note: 'looked fine', action: 'Check', reportingController: 'example.com/checker', reportingInstance: 'x', eventTime: new Date(Date.now() - 60_000).toISOString().replace('Z', '000Z') } });
    const events = l.resourcesTree.getChildren(objectNode('calm')).find((n) => n.type === 'events');
    assert.ok(events, 'an Events node under the object');
    await waitUntil(() => l.resourcesTree.getChildren(events).some((n) => n.type === 'event' && n.event?.reason === 'DependencyMissing'), 'the Events listed');
    const rows = l.resourcesTree.getChildren(events);
    assert.deepEqual(rows.map((n) => (n.type === 'event' ? n.event?.reason : '')), ['DependencyMissing', 'Checked'], 'newest first');
    const warning = l.resourcesTree.getTreeItem(rows[0]!);
    assert.match(String(warning.description), /^×2 · \d+s ago · ConfigMap calm-settings not found$/);
    assert.equal(warning.contextValue, 'reconcileLab:event:warning');
    // Tooltip values are appended as text (spaces become &nbsp;).
    assert.match(tooltipText(warning.tooltip), /Reported by: someone/);
    assert.match(String(l.resourcesTree.getTreeItem(events).description), /^2 · 1 warning$/);
    assert.match(tooltipText(l.resourcesTree.getTreeItem(rows[1]!).tooltip), /Reported by: example\.com\/checker/);
  });

  it('Events arriving re-render only that object\'s Events row (the element VS Code holds), never the whole view', async () => {
    // A whole-view refresh makes VS Code's extension host forget every row until the view fetched them again; one came
    // with every Events fetch (each EVENTS_TTL_MS while an object is expanded), and in the walk Strip Finalizers…
    // picked meanwhile on a stuck object's row got no element and asked "Strip finalizers from which object?".
    await labCluster().client.create(c.gvr, widget(c, ns, 'quiet'));
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/quiet`)), 'the widget is cached');
    const object = objectNode('quiet');
    const events = l.resourcesTree.getChildren(object).find((n) => n.type === 'events')!;
    assert.ok(events, 'an Events node under the object');
    assert.equal(l.resourcesTree.getChildren(object).find((n) => n.type === 'events'), events, 'the same element on a second read');
    l.resourcesTree.flush();
    const fired: Array<ResourceNode | ResourceNode[] | undefined> = [];
    const sub = l.resourcesTree.onDidChangeTreeData((e) => fired.push(e));
    try {
      // What VS Code does when it shows the row: its tree item asks for the Events (fetched in the background).
      assert.match(String(l.resourcesTree.getTreeItem(events).description), /^loading…$/);
      await waitUntil(() => {
        l.resourcesTree.flush();
        return fired.some((e) => Array.isArray(e) && e.includes(events));
      }, 'the Events row refreshed when its Events arrived');
    } finally {
      sub.dispose();
    }
    assert.deepEqual(fired.filter((e) => e === undefined), [], `no whole-view refresh (${fired.length} refreshes)`);
    assert.equal(String(l.resourcesTree.getTreeItem(events).description), '0');
  });

  // Apply to Cluster applies the editor's text directly (not through a save, which code-server may cancel when a
  // save participant is slow) and then shows the server's answer as the saved text.
  it('Edit Spec as YAML… applies with the opened resourceVersion; a concurrent change is a conflict that keeps the edit and writes nothing', async () => {
    const { client } = labCluster();
    const target = { key: `${ns}/calm`, resource: c.resourceId };
    const opened = ok(await run<{ uri: string; resourceVersion: string }>('reconcileLab.editObject', target));
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === opened.uri)!;
    assert.ok(doc, 'the edit document is open');
    assert.equal(doc.languageId, 'yaml');
    assert.match(doc.getText(), new RegExp(`at resourceVersion ${opened.resourceVersion}`));
    assert.doesNotMatch(doc.getText(), /managedFields/);

    const shown = await api();
    let mark = shown.shownMark();
    const applied = ok(await run<{ result: string; resourceVersion: string; diff: string }>('reconcileLab.applyObjectEdit', { uri: opened.uri, text: doc.getText().replace('color: blue', 'color: green') }));
    assert.equal(applied.result, 'applied');
    assert.notEqual(applied.resourceVersion, opened.resourceVersion);
    // Said: which object, its new resourceVersion (a notification, and a status-bar note replacing any "not applied" one).
    // (An auto-save of the browser may have kept a draft just before: its note is older, and replaced.)
    assert.deepEqual(shown.shownSince(mark).filter((t) => /applied, now at|Applied to/.test(t.text)), [
      { kind: 'status', text: `Reconcile Lab: applied, now at resourceVersion ${applied.resourceVersion}` },
      { kind: 'info', text: `Reconcile Lab: Applied to Widget ${ns}/calm: now at resourceVersion ${applied.resourceVersion} (was ${opened.resourceVersion}).` },
    ]);
    assert.deepEqual(((await client.get(c.gvr, ns, 'calm')).spec as { data: unknown }).data, { color: 'green' });
    await waitUntil(() => doc.getText().includes(`at resourceVersion ${applied.resourceVersion}`) && !doc.isDirty, 'the document shows the server\'s answer');

    // Someone else writes after the document was (re)opened: the stale edit is refused and nothing is clobbered.
    const current = await client.get(c.gvr, ns, 'calm');
    await client.update(c.gvr, { ...current, spec: { data: { color: 'red' } } });
    const conflict = await run<{ result: string }>('reconcileLab.applyObjectEdit', { uri: opened.uri, text: doc.getText().replace('color: green', 'color: purple') });
    assert.ok(!conflict.ok && conflict.reason === 'conflict', JSON.stringify(conflict));
    assert.match(conflict.message, /changed on the server since you opened it .*nothing was written/);
    assert.match((conflict as unknown as { diff: string }).diff, /-\s+color: red\n\+\s+color: purple/);
    assert.deepEqual(((await client.get(c.gvr, ns, 'calm')).spec as { data: unknown }).data, { color: 'red' }, 'the other change survives');
    // (Dirty, or clean as a draft once the browser's auto-save kept it: either way not applied.)
    assert.ok(doc.getText().includes('color: purple'), 'the edit is kept in the editor');

    // The explicit choice: keep my edit on the latest version.
    const resolved = ok(await run<{ result: string; resourceVersion: string }>('reconcileLab.applyObjectEdit', { uri: opened.uri, resolve: 'keepMine' }));
    assert.equal(resolved.result, 'applied');
    assert.deepEqual(((await client.get(c.gvr, ns, 'calm')).spec as { data: unknown }).data, { color: 'purple' });
    await waitUntil(() => doc.getText().includes(`at resourceVersion ${resolved.resourceVersion}`) && !doc.isDirty, 'the document shows the answer to the re-based apply');

    // As the editor's title button calls it (the document's URI, its current text): an edit typed in the editor.
    const typed = new vscode.WorkspaceEdit();
    const at = doc.getText().indexOf('color: purple');
    typed.replace(doc.uri, new vscode.Range(doc.positionAt(at), doc.positionAt(at + 'color: purple'.length)), 'color: teal');
    assert.ok(await vscode.workspace.applyEdit(typed));
    const fromTitle = ok(await runAsStranger<{ result: string; resourceVersion: string }>('reconcileLab.applyObjectEdit', doc.uri));
    assert.equal(fromTitle.result, 'applied');
    assert.deepEqual(((await client.get(c.gvr, ns, 'calm')).spec as { data: unknown }).data, { color: 'teal' });
    await waitUntil(() => !doc.isDirty && doc.getText().includes(`at resourceVersion ${fromTitle.resourceVersion}`), 'clean after the title-button apply');

    // A status edit beside a spec edit: the Widget CRD has the status subresource, so the update ignores the status
    // and the person is told so (a warning), while the spec edit is applied.
    const withStatus = parse(doc.getText()) as { spec: { data: Record<string, string> }; status?: Record<string, unknown> };
    withStatus.spec.data = { color: 'navy' };
    withStatus.status = { ...(withStatus.status ?? {}), observedGeneration: 999 };
    mark = shown.shownMark();
    const statusEdit = ok(await run<{ result: string; resourceVersion: string }>('reconcileLab.applyObjectEdit', { uri: opened.uri, text: stringify(withStatus) }));
    assert.equal(statusEdit.result, 'applied');
    const afterStatusEdit = await client.get(c.gvr, ns, 'calm');
    assert.deepEqual((afterStatusEdit.spec as { data: unknown }).data, { color: 'navy' });
    assert.notEqual((afterStatusEdit.status as { observedGeneration?: number } | undefined)?.observedGeneration, 999, 'the status edit is not stored');
    const warned = shown.shownSince(mark).filter((t) => t.kind === 'warning').map((t) => t.text);
    assert.equal(warned.length, 1, JSON.stringify(warned));
    assert.match(warned[0]!, new RegExp(`^Reconcile Lab: Applied to Widget ${ns}/calm: now at resourceVersion ${statusEdit.resourceVersion} \\(was ${fromTitle.resourceVersion}\\)\\. Your status edits were not applied: status is a subresource of Widget, written through /status \\(by its controller\\)`));
    await waitUntil(() => !doc.isDirty && doc.getText().includes(`at resourceVersion ${statusEdit.resourceVersion}`), 'the document shows the server\'s answer (its status)');

    // Another conflict, resolved the other way: reload the server's object, discarding the edit; nothing written.
    // (On an object of its own: more writes to calm's color by two managers would read as a field-manager fight.)
    await client.create(c.gvr, widget(c, ns, 'edited'));
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/edited`)), 'edited cached');
    const second = ok(await run<{ uri: string; resourceVersion: string }>('reconcileLab.editObject', { key: `${ns}/edited`, resource: c.resourceId }));
    const doc2 = vscode.workspace.textDocuments.find((d) => d.uri.toString() === second.uri)!;
    const now = await client.get(c.gvr, ns, 'edited');
    const theirs = await client.update(c.gvr, { ...now, spec: { data: { color: 'black' } } });
    const refused = await run('reconcileLab.applyObjectEdit', { uri: second.uri, text: doc2.getText().replace('color: blue', 'color: white') });
    assert.ok(!refused.ok && refused.reason === 'conflict', JSON.stringify(refused));
    ok(await run('reconcileLab.applyObjectEdit', { uri: second.uri, resolve: 'reload' }));
    await waitUntil(() => !doc2.isDirty && doc2.getText().includes(`at resourceVersion ${theirs.metadata.resourceVersion}`), 'the server\'s object reloaded');
    assert.ok(doc2.getText().includes('color: black') && !doc2.getText().includes('color: white'), 'the edit was discarded');
    assert.deepEqual(((await client.get(c.gvr, ns, 'edited')).spec as { data: unknown }).data, { color: 'black' });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('warns when another field manager keeps undoing the loop\'s status write, naming it; the warning filter finds the object', async () => {
    const { client } = labCluster();
    const key = `${ns}/calm`;
    ok(await run('reconcileLab.resumeLoop'));
    const ready = () => (l.session?.get(c.resourceId, key)?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions?.find((x) => x.type === 'Ready')?.status;
    await waitUntil(() => ready() === 'True', 'the loop made calm Ready');
    for (let round = 0; round < 2 && !l.session?.keyState(key)?.warning; round++) {
      const now = await client.get(c.gvr, ns, 'calm');
      const conditions = ((now.status as { conditions?: Array<Record<string, unknown>> }).conditions ?? []).map((x) => (x.type === 'Ready' ? { ...x, status: 'False', reason: 'Sabotaged', message: 'the other controller says no' } : x));
      await client.patchStatus(c.gvr, ns, 'calm', 'merge', { status: { conditions } });
      await waitUntil(() => ready() === 'True' && Number(l.session?.get(c.resourceId, key)?.metadata.resourceVersion) > Number(now.metadata.resourceVersion) + 1, `round ${round + 1}: the loop undid the other write`);
    }
    await waitUntil(() => Boolean(l.session?.keyState(key)?.warning), 'a warning on the key');
    ok(await run('reconcileLab.pauseLoop'));
    assert.match(l.session!.keyState(key)!.warning!, /another controller \(field manager "reconcile-lab-vscode-test"\) is fighting this one over \.status\.conditions/);
    ok(await run('reconcileLab.filterResources', { states: ['warning'] }));
    assert.deepEqual(objectNames(), ['calm']);
    ok(await run('reconcileLab.clearResourcesFilter'));
  });
});
