// UI test: text from the cluster that looks like links, HTML or icons reads as itself in the views' tooltips.
//
// Setup: the lab's Widget CRD and one Widget in a namespace of this test's own, whose finalizer (a qualified name:
// "www.…/…"), labels, annotations and Ready condition message are written as links would be written in Markdown
// (bare URLs, www. names, <autolinks>, [label](command:…), <img> HTML, $(icon), e-mail addresses).
// A Warning Event about it has such a reason, message and source.
// Checks: hovering the Widget's row in the Resources view, and its Event's row, shows the tooltip with that text and
// no link, image or icon in it (VS Code renders a tooltip's Markdown with GFM autolinks: a bare URL there would be a
// link); Strip Finalizers… asks in a modal dialog that names the finalizer without a link.
// Screenshots: test-output/screenshots/hostile-tooltip.png, hostile-event-tooltip.png, hostile-modal.png.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { GROUP, VERSION, clusterClient, createWidget, widgetCrdAndNamespace, writeWorkspaceSettings } from './support/cluster.mjs';
import { activityTab, contextMenu, eventually, openViewContainer, openViewPane, openWorkbench, resizeSideBar, treeItem, viewTree } from './support/workbench.mjs';

const HOSTILE = 'see https://evil.example/a and www.evil.example and <https://evil.example/b> and <command:workbench.action.terminal.new> and [x](command:workbench.action.terminal.new) and [y](https://evil.example/c) and <img src=x onerror=alert(1)> and $(alert) and mail@evil.example';

/** Hovers `row` until its tooltip (holding `marker`) shows; its text and the links, images and icons in it. */
async function tooltipOfRow(page, row, marker) {
  const hover = page.locator('.workbench-hover, .monaco-hover').filter({ hasText: marker }).first();
  await eventually('the tooltip', async () => {
    await page.mouse.move(5, 5);
    await row.hover();
    return hover.isVisible().catch(() => false);
  }, (v) => v, { timeoutMs: 30_000, intervalMs: 1500 });
  return hover.evaluate((el) => ({
    text: el.textContent ?? '',
    links: [...el.querySelectorAll('a')].map((a) => `${a.textContent} -> ${a.getAttribute('href') ?? a.getAttribute('data-href') ?? ''}`),
    images: el.querySelectorAll('img').length,
    icons: [...el.querySelectorAll('.codicon')].map((c) => c.className),
  }));
}

/** No link, image or icon in `shown`, and each of `pieces` reads as itself in its text. */
function assertInert(shown, pieces) {
  assert.deepEqual(shown.links, [], `links: ${JSON.stringify(shown)}`);
  assert.equal(shown.images, 0, `images: ${JSON.stringify(shown)}`);
  assert.deepEqual(shown.icons, [], `icons: ${JSON.stringify(shown)}`);
  for (const piece of pieces) assert.ok(shown.text.replace(/\s+/g, ' ').includes(piece), `"${piece}" reads as itself: ${shown.text}`);
}

export default async function hostileTextUi(t) {
  const { page } = t;
  const ns = `hx-${randomBytes(3).toString('hex')}`;
  const name = 'hostile-widget';
  const kube = await clusterClient(t);
  const path = `/apis/${GROUP}/${VERSION}/namespaces/${ns}/widgets/${name}`;

  await t.step('setup: a Widget whose finalizer, labels, annotations and Ready message look like links', async () => {
    await widgetCrdAndNamespace(t, kube, ns);
    await createWidget(kube, ns, name, { data: { color: 'blue' } });
    await kube.json({
      method: 'PATCH', path, contentType: 'application/merge-patch+json',
      body: { metadata: { finalizers: ['www.evil.example/pwn'], labels: { site: 'www.evil.example' }, annotations: { note: HOSTILE } } },
    });
    await kube.json({
      method: 'PATCH', path: `${path}/status`, contentType: 'application/merge-patch+json',
      body: { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Evil', message: HOSTILE, lastTransitionTime: new Date().toISOString() }] } },
    });
    const widget = await kube.json({ method: 'GET', path });
    const now = new Date().toISOString();
    await kube.json({
      method: 'POST', path: `/api/v1/namespaces/${ns}/events`,
      body: {
        apiVersion: 'v1', kind: 'Event', metadata: { name: 'hostile-event', namespace: ns },
        involvedObject: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Widget', name, namespace: ns, uid: widget.metadata.uid },
        type: 'Warning', reason: 'www.evil.example', message: HOSTILE, source: { component: 'mail@evil.example' },
        firstTimestamp: now, lastTimestamp: now, count: 1,
      },
    });
    writeWorkspaceSettings(t, { 'reconcileLab.namespaces': [ns], 'reconcileLab.resources': [`widgets.${GROUP}`] });
  });

  try {
    await t.step('the workbench loads with Reconcile Lab in the activity bar', async () => {
      await openWorkbench(page, t.url);
      await activityTab(page, 'Reconcile Lab').waitFor({ state: 'visible', timeout: 120_000 });
    });

    let tree;
    await t.step('the Resources tree shows the Widget', async () => {
      const container = await openViewContainer(page, 'reconcileLab', 'Reconcile Lab');
      const pane = await openViewPane(container, 'Resources');
      tree = viewTree(pane);
      await tree.waitFor({ state: 'visible', timeout: 180_000 });
      await resizeSideBar(page, 560);
      await eventually('the Widget row', async () => {
        for (const item of await tree.locator('[role="treeitem"][aria-expanded="false"]').all()) await item.locator('.monaco-tl-twistie').click().catch(() => {});
        return tree.locator('.label-name', { hasText: name }).count();
      }, (n) => n > 0, { timeoutMs: 120_000, intervalMs: 1000 });
    });

    await t.step("the Widget's tooltip shows the text as it is: no link, image or icon", async () => {
      const shown = await tooltipOfRow(page, await treeItem(tree, name), 'evil.example');
      await t.screenshot('hostile-tooltip');
      assertInert(shown, ['https://evil.example/a', 'www.evil.example/pwn', '[x](command:workbench.action.terminal.new)', '<img src=x onerror=alert(1)>', '$(alert)', 'mail@evil.example']);
    });

    await t.step("the Event's tooltip shows its reason, message and source as they are", async () => {
      await treeItem(tree, 'Events', { expand: true });
      // The Event's row (its reason is its label), not the finalizer's (www.evil.example/pwn).
      const row = tree.getByRole('treeitem').filter({ has: page.locator('.label-name', { hasText: /^\s*www\.evil\.example\s*$/ }) }).first();
      await row.waitFor({ state: 'visible' });
      const shown = await tooltipOfRow(page, row, 'Reported by');
      await t.screenshot('hostile-event-tooltip');
      assertInert(shown, ['Warning www.evil.example', 'https://evil.example/a', '<https://evil.example/b>', 'Reported by: mail@evil.example']);
    });

    await t.step('Strip Finalizers… asks in a modal that names the finalizer without a link', async () => {
      await page.mouse.move(5, 5);
      await contextMenu(await treeItem(tree, name), 'Strip Finalizers…');
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ state: 'visible' });
      await eventually('the finalizer in the dialog', () => dialog.textContent(), (text) => (text ?? '').includes('www.evil.example/pwn'));
      const shown = await dialog.evaluate((el) => ({
        text: el.textContent ?? '',
        // In the message and its detail (the buttons are anchors of the dialog's own).
        links: [...el.querySelectorAll('.dialog-message-container a')].map((a) => `${a.textContent} -> ${a.getAttribute('href') ?? a.getAttribute('data-href') ?? ''}`),
        images: el.querySelectorAll('img').length,
        icons: [],
      }));
      await t.screenshot('hostile-modal');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      assertInert(shown, ['www.evil.example/pwn']);
      const still = await kube.json({ method: 'GET', path });
      assert.deepEqual(still.metadata.finalizers, ['www.evil.example/pwn'], 'dismissing the dialog removed nothing');
    });
  } finally {
    await kube.json({ method: 'PATCH', path, contentType: 'application/merge-patch+json', body: { metadata: { finalizers: null } } }).catch(() => {});
    await kube.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  }
}
