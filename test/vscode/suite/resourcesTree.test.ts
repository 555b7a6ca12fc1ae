// The Resources view as VS Code sees it (the registered TreeDataProvider): kind → namespace → object → finalizers,
// conditions and owned children; a Terminating object shows its deletion age and finalizers; reveal selects it.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ReconcileLab } from '../../../src/host/reconcileLab.ts';
import { PAGE_SIZE, type ResourceNode } from '../../../src/host/views/resourcesTree.ts';
import { TARGETED_ROWS } from '../../../src/host/views/queueTree.ts';
import { connectTo, lab, labCluster, ok, run, suiteWidgets, testNamespace, treeLabel as label, waitUntil, type WidgetCrd, tooltipText } from './support/lab.ts';

const LEGACY = 'legacy.example.com/external-dns';

describe('Resources view', function () {
  this.timeout(90_000);
  let l: ReconcileLab;
  let c: WidgetCrd;
  let ns = '';

  before(async function () {
    this.timeout(120_000);
    ({ l, c, ns } = await suiteWidgets('ext-tree', [{ name: 'held', finalizers: [LEGACY] }, 'parent'], { connect: true }));
  });

  function objectNodes(): ResourceNode[] {
    const kind = l.resourcesTree.getChildren().find((n) => n.type === 'kind' && n.resource === c.resourceId);
    assert.ok(kind, 'a kind node for the Widget resource');
    const nsNode = l.resourcesTree.getChildren(kind).find((n) => n.type === 'namespace' && n.namespace === ns);
    assert.ok(nsNode, 'a namespace node');
    return l.resourcesTree.getChildren(nsNode);
  }

  it('groups objects by kind and namespace with stable ids and parents', () => {
    const kinds = l.resourcesTree.getChildren();
    assert.deepEqual(kinds.map((k) => (k.type === 'kind' ? k.resource : '')).sort(), [c.resourceId, 'configmaps'].sort());
    const objs = objectNodes();
    assert.deepEqual(objs.map((o) => label(l, o)).sort(), ['held', 'parent']);
    const held = objs.find((o) => label(l, o) === 'held')!;
    assert.equal(held.type === 'object' && held.key, `${ns}/held`);
    // getParent walks back to the root (what reveal needs), and ids are the same on a second read.
    const parent = l.resourcesTree.getParent(held)!;
    assert.equal(parent.type, 'namespace');
    assert.equal(l.resourcesTree.getParent(parent)!.type, 'kind');
    assert.deepEqual(objectNodes().map((o) => o.id).sort(), objs.map((o) => o.id).sort());
    const item = l.resourcesTree.getTreeItem(held);
    assert.equal(item.id, held.id);
    assert.equal(item.contextValue, 'reconcileLab:object:live:finalizers:primary');
  });

  it('shows a Terminating object with its deletion age, its finalizers and a finalizer node that blocks deletion', async () => {
    await labCluster().client.delete(c.gvr, ns, 'held');
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/held`)?.metadata.deletionTimestamp), 'cache sees the deletion');
    l.resourcesTree.flush();
    const held = objectNodes().find((o) => label(l, o) === 'held')!;
    const item = l.resourcesTree.getTreeItem(held);
    assert.match(String(item.description), new RegExp(`^Terminating \\d+s \\(${LEGACY.replace(/\./g, '\\.')}\\)`));
    assert.equal(item.contextValue, 'reconcileLab:object:terminating:finalizers:primary');
    assert.equal((item.iconPath as { id?: string }).id, 'trash');
    const groups = l.resourcesTree.getChildren(held);
    const fin = groups.find((g) => g.type === 'finalizers');
    assert.ok(fin, 'a Finalizers node');
    const finalizers = l.resourcesTree.getChildren(fin);
    assert.deepEqual(finalizers.map((f) => (f.type === 'finalizer' ? f.finalizer : '')), [LEGACY]);
    const fItem = l.resourcesTree.getTreeItem(finalizers[0]!);
    assert.equal(fItem.description, 'blocking deletion');
    assert.equal(fItem.contextValue, 'reconcileLab:finalizer');
    // The finalizer node is a valid argument of the strip command (it carries key, resource and finalizer).
    const f0 = finalizers[0]!;
    assert.ok(f0.type === 'finalizer' && f0.key === `${ns}/held` && f0.resource === c.resourceId);
  });

  it('shows owned children, conditions and the queue state after a reconcile', async () => {
    const key = `${ns}/parent`;
    for (let i = 0; i < 4; i++) {
      ok(await run('reconcileLab.stepReconcile', { key, resource: c.resourceId, force: true }));
      if (l.session?.list('configmaps').some((o) => o.metadata.name === 'parent-config')) break;
    }
    await waitUntil(() => Boolean(l.session?.get('configmaps', `${ns}/parent-config`)), 'the child ConfigMap is cached');
    await waitUntil(() => (l.session?.get(c.resourceId, key)?.status as { conditions?: unknown[] } | undefined)?.conditions !== undefined, 'status written');
    l.resourcesTree.flush();
    const parent = objectNodes().find((o) => label(l, o) === 'parent')!;
    const children = l.resourcesTree.getChildren(parent);
    const child = children.find((n) => n.type === 'object');
    assert.ok(child && child.type === 'object' && child.resource === 'configmaps' && child.key === `${ns}/parent-config`, JSON.stringify(children.map((n) => n.id)));
    assert.match(label(l, child), /^ConfigMap parent-config$/);
    assert.equal(l.resourcesTree.getParent(child), parent);
    assert.ok(children.some((n) => n.type === 'conditions'));
    const desc = String(l.resourcesTree.getTreeItem(parent).description);
    assert.match(desc, /gen 1/);
    assert.match(desc, /Ready|Not Ready/);
  });

  it('reveals an object (what a click in the Event Log does)', async () => {
    const r = ok(await run<{ id: string }>('reconcileLab.revealObject', { key: `${ns}/parent`, resource: c.resourceId }));
    // The command returns once the renderer's selection reached this process (or after its last attempt).
    assert.equal(l.resourcesView.selection[0]?.id, r.id);
  });

  it('reveals an object while the view is hidden behind another view container and its whole tree was refreshed meanwhile', async () => {
    for (let i = 0; i < 3; i++) {
      // Another view container in front: the Resources view is hidden, so its refreshes wait until it is shown — which
      // the reveal does, racing the renderer's rebuild of the rows it looks for.
      await vscode.commands.executeCommand('workbench.view.explorer');
      await waitUntil(() => !l.resourcesView.visible, 'the Resources view hidden');
      l.resourcesTree.setFilter(l.resourcesTree.filter); // a whole-tree refresh, at once
      const key = i % 2 === 0 ? `${ns}/parent` : `${ns}/held`;
      const r = ok(await run<{ id: string }>('reconcileLab.revealObject', { key, resource: c.resourceId }));
      assert.equal(l.resourcesView.selection[0]?.id, r.id, `reveal ${i + 1} of ${key} selected it`);
    }
  });

  it('the Work Queue view lists keys with their state, and the status bar shows the connection', () => {
    const nodes = l.queueTree.getChildren();
    for (const n of nodes) {
      const item = l.queueTree.getTreeItem(n);
      assert.match(String(item.contextValue), /^reconcileLab:queueItem:(queued|processing|backoff|requeueAfter|idle)(:backoff)?$/);
      if (n.type !== 'queueKey') continue;
      // Reset Backoff's marker only on a key with failures or a backoff wait.
      const s = l.session!.keyState(n.key);
      assert.equal(String(item.contextValue).endsWith(':backoff'), Boolean(s && (s.requeues > 0 || s.phase === 'backoff' || s.waiting?.kind === 'backoff')), `${n.key}: ${String(item.contextValue)}`);
      // The tooltip is made on hover (resolveTreeItem), not for every row of every refresh.
      const tip = tooltipText(l.queueTree.resolveTreeItem(item, n).tooltip);
      assert.ok(tip.includes(n.key.split('/')[1]!), tip);
    }
    assert.match(l.statusBar.text, /\$\(plug\)/);
    assert.match(l.statusBar.text, /queued/);
  });
});

describe('Resources view under a burst of events', function () {
  this.timeout(120_000);

  it('coalesces 2,000 object events into at most one refresh per 250 ms', async () => {
    const l = await lab();
    const ns = await testNamespace('ext-burst');
    await connectTo(ns, { resources: ['configmaps'] });
    const { client } = labCluster();
    const N = 2000;
    const refreshesBefore = l.resourcesTree.refreshCount;
    const t0 = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < N) {
          const i = next++;
          await client.create({ group: '', version: 'v1', resource: 'configmaps' }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: ns }, data: { i: String(i) } });
        }
      }),
    );
    await waitUntil(() => l.session!.list('configmaps').filter((o) => o.metadata.namespace === ns).length >= N, 'every ConfigMap cached', 60_000);
    l.resourcesTree.flush();
    const elapsed = Date.now() - t0;
    const refreshes = l.resourcesTree.refreshCount - refreshesBefore;
    // The coalescer's guarantee, measured against the real elapsed time: never more than one refresh per 250 ms.
    assert.ok(refreshes <= Math.ceil(elapsed / 250) + 2, `${refreshes} refreshes in ${elapsed} ms for ${N} events`);
    assert.ok(refreshes < N / 10, `${refreshes} refreshes for ${N} events`);
    const kind = l.resourcesTree.getChildren().find((n) => n.type === 'kind' && n.resource === 'configmaps')!;
    const nsNode = l.resourcesTree.getChildren(kind).find((n) => n.type === 'namespace' && n.namespace === ns)!;
    const t1 = Date.now();
    const ranges = l.resourcesTree.getChildren(nsNode);
    const children = ranges.flatMap((r) => l.resourcesTree.getChildren(r));
    for (const c of children) l.resourcesTree.getTreeItem(c);
    console.log(`      [measure] ${N} events → ${refreshes} refreshes in ${elapsed} ms; children + tree items of ${children.length} objects in ${Date.now() - t1} ms`);
    assert.ok(children.length >= N);

    // More than PAGE_SIZE objects: the namespace shows them in ranges of PAGE_SIZE, sorted by name across ranges.
    assert.equal(ranges.length, Math.ceil(children.length / PAGE_SIZE));
    assert.ok(ranges.every((r) => r.type === 'range' && l.resourcesTree.getParent(r) === nsNode));
    assert.ok(ranges.slice(0, -1).every((r) => l.resourcesTree.getChildren(r).length === PAGE_SIZE));
    const names = children.map((o) => (o.type === 'object' ? o.key.split('/')[1]! : ''));
    assert.deepEqual(names, [...names].sort((a, b) => a.localeCompare(b, undefined, { numeric: true })));
    // Digits by value: the ranges read as ranges (cm-0 … cm-99, then cm-100 … ), not cm-0, cm-1, cm-10, cm-100, ….
    assert.deepEqual(names.filter((n) => n.startsWith('cm-')).slice(0, 3), ['cm-0', 'cm-1', 'cm-2']);
    const first = l.resourcesTree.getTreeItem(ranges[0]!);
    assert.equal(first.label, `${names[0]} … ${names[PAGE_SIZE - 1]}`);
    assert.equal(first.id, ranges[0]!.id);
    // An object's parent is its range; nodeFor (what reveal uses) finds the same range.
    const last = children[children.length - 1]!;
    assert.equal(l.resourcesTree.getParent(last)!.id, ranges[ranges.length - 1]!.id);
    const found = l.resourcesTree.nodeFor('configmaps', last.type === 'object' ? last.key : '')!;
    assert.equal(found.id, last.id);
    assert.equal(l.resourcesTree.getParent(found)!.id, ranges[ranges.length - 1]!.id);

    // Updates that keep an object's place refresh only its rows: VS Code is handed the very elements it was given
    // (it matches them by identity), not the root. An added object refreshes the whole view.
    const shown = l.resourcesTree.getChildren(ranges[0]!);
    const updated = shown.slice(0, 3) as Array<ResourceNode & { type: 'object' }>;
    const fired: Array<ResourceNode | ResourceNode[] | undefined> = [];
    const sub = l.resourcesTree.onDidChangeTreeData((e) => fired.push(e));
    try {
      const targeted0 = l.resourcesTree.targetedRefreshes;
      for (const n of updated) {
        const [namespace, name] = n.key.split('/') as [string, string];
        await client.patch({ group: '', version: 'v1', resource: 'configmaps' }, namespace, name, 'merge', { data: { touched: 'yes' } });
      }
      await waitUntil(() => updated.every((n) => (l.session!.get('configmaps', n.key)?.data as { touched?: string } | undefined)?.touched === 'yes'), 'the updates are cached');
      l.resourcesTree.flush();
      const rows = fired.filter((e): e is ResourceNode[] => Array.isArray(e)).flat();
      assert.ok(!fired.includes(undefined), 'no whole-view refresh for updates');
      assert.ok(l.resourcesTree.targetedRefreshes > targeted0, 'targeted refreshes');
      for (const n of updated) assert.ok(rows.includes(n), `the row of ${n.key} is refreshed as the element VS Code holds`);
      assert.ok(rows.every((r) => r.type === 'object' && updated.some((u) => u.key === r.key)), 'only the rows of updated objects');
      assert.equal(l.resourcesTree.getChildren(ranges[0]!)[0], updated[0], 'the same element for the same row after a targeted refresh');
      fired.length = 0;
      await client.create({ group: '', version: 'v1', resource: 'configmaps' }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-added', namespace: ns } });
      await waitUntil(() => Boolean(l.session!.get('configmaps', `${ns}/cm-added`)), 'the new ConfigMap is cached');
      l.resourcesTree.flush();
      assert.ok(fired.includes(undefined), 'an added object refreshes the whole view');
    } finally {
      sub.dispose();
    }
  });
});

describe('Work Queue view refreshes', function () {
  this.timeout(120_000);

  it('only the changed keys\' rows while the listing keeps its order; all of it when the order changes', async () => {
    const { l, c, ns } = await suiteWidgets('ext-wq', ['a', 'b', 'c'], { connect: true });
    await waitUntil(() => l.session?.queuedKeys().length === 3, 'three keys queued (paused loop)');
    l.queueTree.refresh();
    await new Promise((r) => setTimeout(r, 600));
    const rows = l.queueTree.getChildren();
    const head = rows[0]!;
    assert.equal(head.type === 'queueKey' && head.key, l.session!.queuedKeys()[0]);
    const fired: Array<unknown> = [];
    const sub = l.queueTree.onDidChangeTreeData((e) => fired.push(e));
    try {
      // An update of the head key adds a reason to it (it stays first): only its row is refreshed, as the element
      // VS Code was handed.
      const targeted0 = l.queueTree.targetedRefreshes;
      const key = head.type === 'queueKey' ? head.key : '';
      const before = l.session!.keyState(key)!.reasons.length;
      await labCluster().client.patch(c.gvr, ns, key.split('/')[1]!, 'merge', { metadata: { labels: { touched: 'yes' } } });
      await waitUntil(() => l.session!.keyState(key)!.reasons.length > before, 'the update is a reason of the key');
      await waitUntil(() => l.queueTree.targetedRefreshes > targeted0, 'a targeted refresh');
      assert.ok(!fired.includes(undefined), 'no whole-view refresh');
      const refreshed = fired.filter(Array.isArray).flat();
      assert.ok(refreshed.includes(head), 'the head row is refreshed as the same element');
      assert.ok(refreshed.every((n) => n === head), 'and nothing else');
      assert.equal(l.queueTree.getChildren()[0], head);
      // An update of the last key raises its priority above the initial list's: it moves up, the listing's order
      // changed, and the whole view is refreshed.
      fired.length = 0;
      const last = l.queueTree.getChildren().at(-1)!;
      const lastKey = last.type === 'queueKey' ? last.key : '';
      // VS Code itself may fetch the root at any time (e.g. an earlier refresh it handles late, under load). When such a
      // fetch lands after the move but before the view's coalesced flush, VS Code already holds the new order and the
      // flush rightly refreshes only the changed row. What must hold: VS Code ends up holding the new order, through a
      // whole-view refresh or a root fetch after the move — never a targeted refresh over the old order.
      const rootFetches: string[][] = [];
      const getChildren = l.queueTree.getChildren.bind(l.queueTree);
      l.queueTree.getChildren = (n) => {
        const out = getChildren(n);
        if (!n) rootFetches.push(out.map((r) => (r.type === 'queueKey' ? r.key : r.id)));
        return out;
      };
      try {
        await labCluster().client.patch(c.gvr, ns, lastKey.split('/')[1]!, 'merge', { metadata: { labels: { touched: 'yes' } } });
        await waitUntil(() => l.session!.queuedKeys().indexOf(lastKey) < 2, 'the last key moved up the queue');
        const movedUp = (keys: string[]) => keys.indexOf(lastKey) >= 0 && keys.indexOf(lastKey) < 2;
        await waitUntil(() => fired.includes(undefined) || rootFetches.some(movedUp), 'a whole-view refresh (or a root fetch by VS Code) once the listing changed').catch((e: Error) => {
          throw new Error(`${e.message}: DEBUG fired=${JSON.stringify(fired.map((f) => (Array.isArray(f) ? f.map((n) => (n as { id?: string }).id) : f)))} fetches=${JSON.stringify(rootFetches)} queued=${JSON.stringify(l.session!.queuedKeys())} targeted=${l.queueTree.targetedRefreshes} flushes=${l.queueTree.refreshCount}`);
        });
        if (!fired.includes(undefined)) {
          // The flush after that fetch saw the order VS Code holds: any refresh it fired was targeted at shown rows.
          const firstNew = rootFetches.findIndex(movedUp);
          assert.ok(rootFetches.slice(firstNew).every(movedUp), 'no later root fetch went back to the old order');
        }
      } finally {
        l.queueTree.getChildren = getChildren;
      }
      const keys = l.queueTree.getChildren().map((n) => (n.type === 'queueKey' ? n.key : ''));
      assert.deepEqual(keys, l.session!.queuedKeys(), 'the view lists the queue in its new order');
      // What a tick does (relative times: `retry in 3s`, `due 2s ago`): the rows shown, as the elements VS Code holds,
      // never the whole view (which would leave an inline button or context-menu command clicked meanwhile without
      // its row).
      l.queueTree.flush();
      const shownRows = l.queueTree.getChildren().filter((n) => n.type === 'queueKey');
      fired.length = 0;
      l.queueTree.refreshTimes();
      l.queueTree.flush();
      assert.ok(!fired.includes(undefined), 'no whole-view refresh for a tick');
      const ticked = fired.filter(Array.isArray).flat();
      for (const n of shownRows) assert.ok(ticked.includes(n), `the row of ${n.type === 'queueKey' ? n.key : n.id} is re-rendered as the same element`);
    } finally {
      sub.dispose();
    }
  });

  it('hands VS Code at most TARGETED_ROWS rows per targeted refresh, the rest in the next ones, none lost', async () => {
    const names = Array.from({ length: TARGETED_ROWS + 20 }, (_, i) => `k-${String(i).padStart(3, '0')}`);
    const { l } = await suiteWidgets('ext-wq-many', names, { connect: true });
    await waitUntil(() => l.session?.queuedKeys().length === names.length, 'every key queued (paused loop)');
    l.queueTree.refresh();
    await new Promise((r) => setTimeout(r, 600));
    const rows = l.queueTree.getChildren().filter((n) => n.type === 'queueKey');
    assert.equal(rows.length, names.length);
    const fired: Array<unknown> = [];
    const sub = l.queueTree.onDidChangeTreeData((e) => fired.push(e));
    try {
      // Every key enqueued again in one task, in queue order: each moves to priority 0 behind the ones before it (the
      // order is kept) and gets a reason (its row changed): one coalesced refresh with more than TARGETED_ROWS rows.
      const order = l.session!.queuedKeys();
      for (const key of order) assert.ok(l.session!.controller!.enqueue(key, 'test'));
      assert.ok(order.every((k) => l.session!.keyState(k)!.reasons.some((r) => r.kind === 'manual')), 'every key has the new reason');
      const refreshed = new Set<unknown>();
      await waitUntil(() => {
        for (const e of fired) if (Array.isArray(e)) for (const n of e) refreshed.add(n);
        return rows.every((r) => refreshed.has(r));
      }, 'every changed row refreshed', 20_000);
      assert.ok(!fired.includes(undefined), 'the order was kept: no whole-view refresh');
      for (const e of fired) if (Array.isArray(e)) assert.ok(e.length <= TARGETED_ROWS, `${e.length} rows in one refresh`);
      assert.deepEqual(l.session!.queuedKeys(), order, 'the queue kept its order');
      assert.ok(fired.filter(Array.isArray).length >= 2, 'the rows were split over several refreshes');
    } finally {
      sub.dispose();
    }
  });
});
