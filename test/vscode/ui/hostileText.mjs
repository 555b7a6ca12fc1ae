// UI test: text from the cluster that looks like links, HTML or icons reads as itself in the views' tooltips.
//
// Setup: the lab's Widget CRD and one Widget in a namespace of this test's own, whose finalizer (a qualified name:
// "www.…/…"), labels, annotations and Ready condition message are written as links would be written in Markdown
// (bare URLs, www. names, <autolinks>, [label](command:…), <img> HTML, $(icon), e-mail addresses).
// Checks: hovering the Widget's row in the Resources view shows its tooltip with that text, and no link, image or
// icon in it (VS Code renders a tooltip's Markdown with GFM autolinks: a bare URL there would be a link).
// Screenshot: test-output/screenshots/hostile-tooltip.png.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { GROUP, VERSION, clusterClient, createWidget, widgetCrdAndNamespace, writeWorkspaceSettings } from './support/cluster.mjs';
import { activityTab, eventually, openViewContainer, openViewPane, openWorkbench, resizeSideBar, treeItem, viewTree } from './support/workbench.mjs';

const HOSTILE = 'see https://evil.example/a and www.evil.example and <https://evil.example/b> and <command:workbench.action.terminal.new> and [x](command:workbench.action.terminal.new) and [y](https://evil.example/c) and <img src=x onerror=alert(1)> and $(alert) and mail@evil.example';

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
      const row = await treeItem(tree, name);
      const hover = page.locator('.workbench-hover, .monaco-hover').filter({ hasText: 'evil.example' }).first();
      await eventually('the tooltip', async () => {
        await page.mouse.move(5, 5);
        await row.hover();
        return hover.isVisible().catch(() => false);
      }, (v) => v, { timeoutMs: 30_000, intervalMs: 1500 });
      const shown = await hover.evaluate((el) => ({
        text: el.textContent ?? '',
        links: [...el.querySelectorAll('a')].map((a) => `${a.textContent} -> ${a.getAttribute('href') ?? a.getAttribute('data-href') ?? ''}`),
        images: el.querySelectorAll('img').length,
        icons: [...el.querySelectorAll('.codicon')].map((c) => c.className),
      }));
      await t.screenshot('hostile-tooltip');
      t.log(`tooltip: ${JSON.stringify(shown)}`);
      assert.deepEqual(shown.links, [], `links in the tooltip: ${JSON.stringify(shown)}`);
      assert.equal(shown.images, 0, `images in the tooltip: ${JSON.stringify(shown)}`);
      assert.deepEqual(shown.icons, [], `icons in the tooltip: ${JSON.stringify(shown)}`);
      for (const piece of ['https://evil.example/a', 'www.evil.example/pwn', '[x](command:workbench.action.terminal.new)', '<img src=x onerror=alert(1)>', '$(alert)', 'mail@evil.example']) {
        assert.ok(shown.text.replace(/\s+/g, ' ').includes(piece), `"${piece}" reads as itself in the tooltip: ${shown.text}`);
      }
    });
  } finally {
    await kube.json({ method: 'PATCH', path, contentType: 'application/merge-patch+json', body: { metadata: { finalizers: null } } }).catch(() => {});
    await kube.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  }
}
