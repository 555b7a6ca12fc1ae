// UI test: Reconcile Lab as a person uses it in VS Code (code-server in Chromium), against the real test cluster.
//
// Setup: the lab's Widget CRD (samples/crd.yaml) and two Widgets in a namespace of this test's own; the workspace's
// settings point the extension at that namespace and resource. The extension connects on start-up because the
// server's environment carries RECONCILE_LAB_KUBECONFIG.
// Checks: activity-bar tab → Resources view → the Widgets appear in the tree → an object's context menu → "Open as
// YAML" shows the live object → "Step Reconcile" reconciles it (its child ConfigMap appears in the cluster) → the
// Event Log webview shows journal entries for it, including that reconcile, and its key filter works.
// Then Reconcile Lab: Get Started opens the walkthrough, with the steps this window went through checked off.
// Screenshots: test-output/screenshots/resources.png, event-log.png and walkthrough.png.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { GROUP, clusterClient, createWidget, widgetCrdAndNamespace, writeWorkspaceSettings } from './support/cluster.mjs';
import {
  activeEditorText, activityTab, contextMenu, contextMenuLabels, eventually, openEventLog, openViewContainer,
  openViewPane, openWorkbench, resizeSideBar, runCommand, treeLabels, viewTree,
} from './support/workbench.mjs';

/** Expands collapsed tree items (breadth first, bounded) until every label in `wanted` is rendered. */
async function expandUntilVisible(tree, wanted) {
  const tried = new Set();
  for (let round = 0; round < 40; round++) {
    const labels = await treeLabels(tree);
    if (wanted.every((w) => labels.includes(w))) return labels;
    const collapsed = tree.locator('[role="treeitem"][aria-expanded="false"]');
    let expanded = false;
    for (const item of await collapsed.all()) {
      const label = ((await item.locator('.label-name').first().textContent()) ?? '').trim();
      const id = `${await item.getAttribute('aria-level')}:${label}`;
      if (tried.has(id) || wanted.includes(label)) continue;
      tried.add(id);
      await item.locator('.monaco-tl-twistie').click();
      expanded = true;
      break;
    }
    if (!expanded) await new Promise((r) => setTimeout(r, 500)); // nothing to open yet: cluster data still arriving
  }
  throw new Error(`tree items ${JSON.stringify(wanted)} did not appear; visible: ${JSON.stringify(await treeLabels(tree))}`);
}

export default async function reconcileLabUi(t) {
  const { page, root } = t;
  const ns = `ui-${randomBytes(3).toString('hex')}`;
  const names = ['ui-widget-a', 'ui-widget-b'];

  const kube = await clusterClient(t);

  await t.step('setup: Widget CRD and two Widgets in a namespace of its own', async () => {
    await widgetCrdAndNamespace(t, kube, ns);
    for (const name of names) {
      await createWidget(kube, ns, name, { data: { color: 'blue' } });
    }
    writeWorkspaceSettings(t, {
      'reconcileLab.namespaces': [ns],
      'reconcileLab.resources': [`widgets.${GROUP}`],
    });
  });

  try {
    await t.step('the workbench loads with Reconcile Lab in the activity bar', async () => {
      await openWorkbench(page, t.url);
      await activityTab(page, 'Reconcile Lab').waitFor({ state: 'visible', timeout: 120_000 }); // extensions register late on a loaded machine
    });

    let container;
    let resourcesPane;
    let tree;
    await t.step('the activity-bar tab opens the Resources and Work Queue views', async () => {
      container = await openViewContainer(page, 'reconcileLab', 'Reconcile Lab');
      await openViewPane(container, 'Work Queue');
      resourcesPane = await openViewPane(container, 'Resources');
      tree = viewTree(resourcesPane);
    });

    await t.step('the Resources tree shows the Widgets from the cluster', async () => {
      // Connected: the welcome content gives way to the tree (the extension host may start late on a loaded machine).
      await tree.waitFor({ state: 'visible', timeout: 180_000 });
      const labels = await expandUntilVisible(tree, names);
      for (const name of names) assert.ok(labels.includes(name), `${name} in ${JSON.stringify(labels)}`);
      await resizeSideBar(page, 560); // the rows' descriptions read in full in the screenshot
      await page.mouse.move(1000, 820); // no tooltip in the screenshot
      await t.screenshot('resources');
    });

    await t.step('an object\'s context menu offers its actions and "Open as YAML" shows the live object', async () => {
      const item = tree.getByRole('treeitem').filter({ has: page.locator('.label-name', { hasText: names[0] }) }).first();
      const labels = await contextMenuLabels(item);
      for (const action of ['Open as YAML', 'Dry-Run Reconcile', 'Reconcile Now', 'Inspect Cache vs Server']) {
        assert.ok(labels.includes(action), `context menu ${JSON.stringify(labels)} lacks ${action}`);
      }
      await contextMenu(item, 'Open as YAML');
      const text = await eventually('the YAML editor to show the object', () => activeEditorText(page),
        (s) => s.includes(`name: ${names[0]}`) && s.includes(`namespace: ${ns}`));
      assert.match(text, /kind: Widget/);
    });

    await t.step('"Step Reconcile" from the context menu reconciles the object: its child ConfigMap appears in the cluster', async () => {
      const item = tree.getByRole('treeitem').filter({ has: page.locator('.label-name', { hasText: names[0] }) }).first();
      await contextMenu(item, 'Step Reconcile');
      const child = `${names[0]}-config`;
      const cm = await eventually(`ConfigMap ${ns}/${child}`, () => kube.json({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps/${child}` }).catch(() => undefined),
        (c) => c !== undefined);
      assert.equal(cm.metadata.ownerReferences?.[0]?.name, names[0]);
      // Only the stepped key ran: the loop is paused, so the other Widget has no child.
      await assert.rejects(kube.json({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps/${names[1]}-config` }), (e) => e.code === 404);
    });

    await t.step('the Event Log webview shows journal entries for the object and filters by key', async () => {
      const { log, rows } = await openEventLog(page, resourcesPane);
      const keys = () => rows.locator('.key').allTextContents();
      await eventually('event log rows', keys, (k) => k.length > 0, { timeoutMs: 30_000 });
      await log.locator('#filter-key').fill(`${ns}/${names[0]}`);
      await eventually(`rows for ${ns}/${names[0]} only`, keys, (k) => k.length > 0 && k.every((key) => key === `${ns}/${names[0]}`));
      const kinds = await rows.locator('.kind').allTextContents();
      assert.ok(kinds.some((k) => /reconcile/i.test(k)), `the stepped reconcile is in the log: ${JSON.stringify(kinds)}`);
      // A grid with column headers; the row selected from the keyboard is the grid's active, selected row.
      assert.deepEqual((await log.getByRole('columnheader').allTextContents()).map((s) => s.trim()), ['Time', 'Kind', 'Key', 'Summary']);
      await log.locator('#list').focus();
      await page.keyboard.press('ArrowDown');
      const active = await eventually('a keyboard-selected row', () => log.locator('#list').getAttribute('aria-activedescendant'), (id) => !!id);
      assert.equal(await log.locator(`#${active}`).getAttribute('aria-selected'), 'true');
      assert.equal(await log.locator('#list .row[aria-selected="true"]:not([hidden])').count(), 1);
      const close = log.locator('#detail-close');
      if (await close.isVisible()) await close.click(); // the screenshot below shows the list alone
      // A filter that hides every entry says so instead of leaving a blank pane.
      await log.locator('#filter-key').fill(`${ns}/no-such-widget`);
      await eventually('the empty-state line', () => log.locator('#empty:not([hidden]) [role="status"]').textContent().catch(() => ''), (s) => s === 'No entry matches the filter.');
      await log.locator('#filter-key').fill('');
      await eventually('rows for both widgets', keys, (k) => names.every((n) => k.includes(`${ns}/${n}`)));
      await resizeSideBar(page, 300); // the log gets the room (the Resources screenshot widened the side bar)
      // The key box's hint is read whole, not cut ("Key (namespace/name or na"): its text fits the box's content width.
      const hint = await log.locator('#filter-key').evaluate((e) => {
        const cs = getComputedStyle(e);
        const ctx = document.createElement('canvas').getContext('2d');
        ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
        const room = e.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
        return { text: e.placeholder, width: ctx.measureText(e.placeholder).width, room };
      });
      assert.ok(hint.width <= hint.room, `the key filter's placeholder fits: ${JSON.stringify(hint)}`);
      // The log's Pause is not the loop's, and its Kind is not the object's kind: their tooltips say so.
      assert.match(await log.locator('#pause').getAttribute('title') ?? '', /reconcile loop keeps running/);
      assert.match(await log.locator('#clear').getAttribute('title') ?? '', /Timeline/);
      assert.match(await log.getByRole('columnheader', { name: 'Kind' }).getAttribute('title') ?? '', /not the object's kind/);
      await t.screenshot('event-log');
    });

    await t.step('Reconcile Lab: Get Started opens the walkthrough; what this window did is checked off', async () => {
      await runCommand(page, 'Reconcile Lab: Get Started');
      const page1 = page.locator('.gettingStartedContainer');
      await page1.getByText('Get Started with Reconcile Lab').first().waitFor({ state: 'visible', timeout: 30_000 });
      const steps = () => page1.locator('.getting-started-step').evaluateAll((els) => els.map((e) => ({
        title: e.querySelector('.step-title')?.textContent?.trim() ?? '',
        done: !!e.querySelector('.codicon-getting-started-step-checked'),
      })));
      // This window connected, showed the views, stepped a key and opened the Event Log before VS Code's walkthrough
      // service existed (this code-server opens no Welcome page): those steps are checked off all the same; nobody ran
      // a Go controller or the checks here.
      const expected = {
        'Connect to a cluster': true,
        'Read the Resources and Work Queue views': true,
        'Step, resume and dry-run a reconcile': true,
        'Follow the Event Log and the Timeline': true,
        'Your own Go controller': false,
        'Find bugs with robustness checks': false,
      };
      const seen = await eventually('the walkthrough steps with their progress', steps,
        (list) => Object.entries(expected).every(([title, done]) => list.some((x) => x.title === title && x.done === done)));
      assert.deepEqual(seen.map((x) => x.title), Object.keys(expected), 'the steps in order');
      await page1.locator('.getting-started-step', { hasText: 'Step, resume and dry-run a reconcile' }).click();
      await page1.getByRole('button', { name: 'Dry-Run Reconcile' }).waitFor({ state: 'visible' });
      await page1.locator('.getting-started-media img').first().waitFor({ state: 'visible' });
      await page.mouse.move(1000, 880);
      await t.screenshot('walkthrough');
    });
  } finally {
    await kube.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  }
}
