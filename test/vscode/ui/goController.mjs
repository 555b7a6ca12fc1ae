// UI test: the Go sample controller (samples/go-controller, controller-runtime + the bridge) run from the editor with
// "Reconcile Lab: Run Controller…", against the real test cluster.
//
// Setup: the Widget CRD (samples/crd.yaml), two Widgets in a namespace of this test's own, the sample built into the
// project cache; the workspace settings point the extension at that namespace and reconcileLab.goController.* at the
// binary (the sample's own flags: no leader election, metrics and probes off). Checks: Run Controller → the Work Queue
// header names the Go controller with its pid and "connected" → its queue (paused: the editor welcomes a process
// paused while the loop is) lists the Widgets → "Step Reconcile" on one of them runs the Go Reconcile (its child
// ConfigMap appears, the other Widget's does not) → Stop Controller goes back to the built-in loop.
// Screenshot: test-output/screenshots/go-controller.png (docs/images/go-controller.png in the README).
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { GROUP, clusterClient, createWidget, widgetCrdAndNamespace, writeWorkspaceSettings } from './support/cluster.mjs';
import {
  activityTab, contextMenu, eventually, openEventLog, openViewContainer, openViewPane, openWorkbench, paneDescription,
  resizeSideBar, runCommand, treeItem, treeLabels, viewTree,
} from './support/workbench.mjs';


/** "label description" of every rendered row of a tree, read in one snapshot. */
function resourceRows(tree) {
  return tree.getByRole('treeitem').evaluateAll((rows) => rows.map((r) => `${r.querySelector('.label-name')?.textContent?.trim() ?? ''} ${r.querySelector('.label-description')?.textContent?.trim() ?? ''}`));
}

export default async function goControllerUi(t) {
  const { page, root } = t;
  const goSample = await import(pathToFileURL(join(root, 'test/integration/support/goSample.ts')).href);
  if (!goSample.haveGo() || !existsSync(goSample.sampleDir())) {
    t.log('      skipped: no Go toolchain or no samples/go-controller');
    return;
  }
  const ns = `ui-go-${randomBytes(3).toString('hex')}`;
  const names = ['gizmo-a', 'gizmo-b'];
  const kube = await clusterClient(t);

  await t.step('setup: Widget CRD, two Widgets, the Go sample built, settings for Run Controller', async () => {
    await widgetCrdAndNamespace(t, kube, ns);
    for (const name of names) {
      await createWidget(kube, ns, name, { data: { color: 'orange' } });
    }
    const bin = goSample.buildGoSample();
    writeWorkspaceSettings(t, {
      'reconcileLab.namespaces': [ns],
      'reconcileLab.resources': [`widgets.${GROUP}`, 'configmaps'],
      'reconcileLab.goController.command': bin,
      'reconcileLab.goController.args': ['--metrics-bind-address=0', '--health-probe-bind-address=0', '--leader-elect=false', `--namespace=${ns}`],
    });
  });

  try {
    let container;
    let queue;
    let queuePane;
    let resources;
    let resourcesPane;
    await t.step('the workbench connects; Run Controller… starts the Go controller and the Work Queue names it', async () => {
      await openWorkbench(page, t.url);
      await activityTab(page, 'Reconcile Lab').waitFor({ state: 'visible', timeout: 120_000 }); // extensions register late on a loaded machine
      container = await openViewContainer(page, 'reconcileLab', 'Reconcile Lab');
      resourcesPane = await openViewPane(container, 'Resources');
      resources = viewTree(resourcesPane);
      await resources.waitFor({ state: 'visible', timeout: 180_000 }); // connected
      queuePane = await openViewPane(container, 'Work Queue');
      await runCommand(page, 'Reconcile Lab: Run Controller…');
      const description = await eventually('the Work Queue header to name the Go controller', () => paneDescription(queuePane),
        (s) => /Go controller \S+ · pid \d+ · connected/.test(s), { timeoutMs: 240_000 });
      assert.match(description, /Go controller widget · pid \d+ · connected/);
      queue = viewTree(queuePane);
      // The sample watches this test's namespace only (--namespace), as the Resources view does: the shared test
      // cluster's other Widgets are in neither view; each row shows its key's queue state from the Go controller.
      await eventually('the Resources view to show both Widgets queued by the Go controller', () => resourceRows(resources),
        (rows) => names.every((n) => rows.some((r) => r.startsWith(`${n} `) && /\bqueued\b/.test(r))), { timeoutMs: 60_000 });
      // The Work Queue lists what the controller's queue holds: this namespace's two keys, nothing else.
      const keys = await eventually('the Work Queue to list the two keys', () => treeLabels(queue),
        (labels) => names.every((n) => labels.includes(`${ns}/${n}`)), { timeoutMs: 30_000 });
      assert.deepEqual(keys.filter((l) => /^[a-z0-9.-]+\/[a-z0-9.-]+$/.test(l)).sort(), names.map((n) => `${ns}/${n}`).sort(), keys.join('\n'));
    });

    await t.step('"Step Reconcile" on a queued key runs the Go Reconcile: its child ConfigMap appears in the cluster', async () => {
      // From the Resources view: its two rows keep their order (the queue's rows move as other keys come and go).
      const item = resources.getByRole('treeitem').filter({ has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${names[0]}\\s*$`) }) }).first();
      await contextMenu(item, 'Step Reconcile');
      const child = `${names[0]}-config`;
      const cm = await eventually(`ConfigMap ${ns}/${child}`, () => kube.json({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps/${child}` }).catch(() => undefined),
        (c) => c !== undefined, { timeoutMs: 60_000 });
      assert.equal(cm.metadata.ownerReferences?.[0]?.name, names[0]);
      await assert.rejects(kube.json({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps/${names[1]}-config` }), (e) => e.code === 404);
      await eventually('the Work Queue to show the stepped key\'s reconcile', () => treeLabels(queue), (labels) => labels.some((l) => l.includes(names[1])), { timeoutMs: 10_000 });
    });

    await t.step('the stepped key is queued again by its own write, and its row says why (the owned ConfigMap\'s add)', async () => {
      // The reconcile created the Widget's child ConfigMap (and wrote the status only if it changed): the cache's
      // event for the child re-queues the owner, which the bridge attributes to that child.
      await resizeSideBar(page, 600); // the rows and their reasons read in full (the screenshot below)
      const key = `${ns}/${names[0]}`;
      const row = await treeItem(queue, key, { expand: true });
      const reasons = await eventually(`the reasons under ${key}`, async () => {
        if ((await row.getAttribute('aria-expanded')) === 'false') await row.press('ArrowRight');
        return treeLabels(queue);
      }, (labels) => labels.some((l) => /^queued because/.test(l)), { timeoutMs: 30_000 });
      const descriptions = await queue.getByRole('treeitem').evaluateAll((rows) => rows.map((r) => `${r.querySelector('.label-name')?.textContent?.trim() ?? ''} ${r.querySelector('.label-description')?.textContent?.trim() ?? ''}`));
      assert.ok(descriptions.some((d) => new RegExp(`^queued because add of owned ConfigMap ${ns}/${names[0]}-config`).test(d)),
        `a reason naming the child's add under ${key}:\n${descriptions.join('\n')}\n(labels: ${reasons.join(', ')})`);
      // Every event since the step came from that reconcile's own writes (finalizer, child, status): each reason says
      // so, also when the watch event reached the editor before the bridge reported the write that made it.
      const rowsText = () => queue.getByRole('treeitem').evaluateAll((rows) => rows.map((r) => `${r.querySelector('.label-name')?.textContent?.trim() ?? ''} ${r.querySelector('.label-description')?.textContent?.trim() ?? ''}`));
      const ownEvents = (list) => list.filter((d) => d.startsWith('queued because ') && d.includes(`${key}`) && / \(rv \d+/.test(d));
      const attributed = await eventually(`the reasons under ${key} to name its own writes`, rowsText,
        (list) => ownEvents(list).length > 0 && ownEvents(list).every((d) => d.includes("this key's own write")), { timeoutMs: 10_000 });
      assert.ok(ownEvents(attributed).some((d) => d.includes(`ConfigMap ${key}-config`)), ownEvents(attributed).join('\n'));
    });

    await t.step('the Event Log journals the Go reconcile: its start, each write with resourceVersions, its end', async () => {
      const { log, rows } = await openEventLog(page, resourcesPane);
      const key = `${ns}/${names[0]}`;
      await log.locator('#filter-key').fill(key);
      // [key, "kind summary"] of every shown row (the kind as the Kind column says it), once the filter applies (every row is the stepped key's).
      const entries = () => rows.evaluateAll((els) => els.map((e) => [e.querySelector('.key')?.textContent?.trim() ?? '', `${e.querySelector('.kind')?.textContent?.trim()} ${e.querySelector('.summary')?.textContent?.trim()}`]));
      const seen = await eventually(`the journal of ${key} alone`, entries, (list) => list.length > 0 && list.every(([k]) => k === key)
        && list.some(([, l]) => /^Reconcile started /.test(l)) && list.some(([, l]) => /^Reconcile finished /.test(l))
        && list.some(([, l]) => /^API write \[widget\] create configmaps\S* \S*-config rv ∅→\d+/.test(l)), { timeoutMs: 30_000 });
      const lines = seen.map(([, l]) => l);
      // The reconcile's status write: the Widget's own resourceVersion before → after. The journal holds the built-in
      // loop's entries too (paused meanwhile), so every row names its controller.
      assert.ok(lines.some((l) => new RegExp(`^API write \\[widget\\] update widgets\\S* ${key} \\(status\\) rv \\d+→\\d+`).test(l)), `the status write:\n${lines.join('\n')}`);
      const close = log.locator('#detail-close');
      if (await close.isVisible()) await close.click();
      await page.mouse.move(1100, 820); // off the header's buttons (their tooltip) and below the log's rows
      // VS Code keeps a finished progress notification ("starting …") on screen for a while: let it go first.
      await page.locator('.notification-toast').filter({ hasText: 'Reconcile Lab: starting' }).waitFor({ state: 'hidden', timeout: 15_000 }).catch(() => {});
      await t.screenshot('go-controller');
    });

    await t.step('Stop Controller goes back to the built-in loop', async () => {
      await runCommand(page, 'Reconcile Lab: Stop Controller');
      await eventually('the Work Queue header to show the built-in loop', () => paneDescription(queuePane), (s) => /Reconcile Lab's loop/.test(s), { timeoutMs: 30_000 });
    });
  } finally {
    await kube.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  }
}
