// UI test: the Event Log's detail pane, the reused dry-run result view and the per-key Timeline, as a person uses them
// in VS Code (code-server in Chromium) against the real test cluster. Driven through the command palette and the
// webviews' own controls (no tree locators).
//
// Setup: the lab's Widget CRD and three Widgets in a namespace of this test's own (one waits for a missing ConfigMap:
// a requeue-after); the workspace settings point the extension at that namespace.
// Checks: Resume runs the loop (children appear) → a spec change → Pause → Dry-Run Reconcile twice opens ONE result
// view with the planned diff inline → the Event Log: clicking a write shows the detail pane (diff before → after, its
// reconcile) → its "Show Timeline" opens the Timeline on that key → clicking a mark on the canvas opens its entry
// in the Event Log's detail pane.
// Screenshots: test-output/screenshots/dry-run.png, event-log-detail.png, timeline.png (copied to docs/images/).
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { GROUP, VERSION, clusterClient, createWidget, widgetCrdAndNamespace, writeWorkspaceSettings } from './support/cluster.mjs';
import { activityTab, editorTab, eventually, openWorkbench, runCommand, webviewFrame } from './support/workbench.mjs';


export default async function timelineUi(t) {
  const { page, root } = t;
  const ns = `tl-${randomBytes(3).toString('hex')}`;
  const names = ['tl-alpha', 'tl-beta', 'tl-waiting'];

  const kube = await clusterClient(t);
  const widgets = `/apis/${GROUP}/${VERSION}/namespaces/${ns}/widgets`;

  await t.step('setup: Widget CRD and three Widgets (one waiting for a dependency) in a namespace of its own', async () => {
    await widgetCrdAndNamespace(t, kube, ns);
    for (const name of names) {
      const spec = name === 'tl-waiting' ? { data: { color: 'green' }, dependsOn: [{ kind: 'ConfigMap', name: 'tl-waiting-settings' }] } : { data: { color: 'blue' } };
      await createWidget(kube, ns, name, spec);
    }
    writeWorkspaceSettings(t, { 'reconcileLab.namespaces': [ns], 'reconcileLab.resources': [`widgets.${GROUP}`] });
  });

  try {
    await t.step('the workbench loads and the extension connects', async () => {
      await openWorkbench(page, t.url);
      // The extension host starts after the workbench; on a loaded machine that takes minutes.
      await activityTab(page, 'Reconcile Lab').waitFor({ state: 'visible', timeout: 240_000 });
    });

    await t.step('Resume runs the loop: every Widget gets its child; a spec change is reconciled; Pause', async () => {
      await eventually('the loop to be paused and resumable', async () => {
        await runCommand(page, 'Reconcile Lab: Resume Reconcile Loop').catch(() => page.keyboard.press('Escape'));
        return kube.json({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps/tl-alpha-config` }).catch(() => undefined);
      }, (cm) => cm !== undefined, { timeoutMs: 240_000, intervalMs: 2000 }); // connecting takes minutes on a loaded machine
      await eventually('tl-beta-config', () => kube.json({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps/tl-beta-config` }).catch(() => undefined), (c) => c !== undefined);
      await kube.json({ method: 'PATCH', path: `${widgets}/tl-beta`, contentType: 'application/merge-patch+json', body: { spec: { data: { color: 'orange' } } } });
      await eventually('the spec change reconciled', () => kube.json({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps/tl-beta-config` }), (c) => c.data?.color === 'orange');
      await runCommand(page, 'Reconcile Lab: Pause Reconcile Loop');
    });

    await t.step('Dry-Run Reconcile twice reuses ONE result view with the planned diff inline', async () => {
      await kube.json({ method: 'PATCH', path: `${widgets}/tl-alpha`, contentType: 'application/merge-patch+json', body: { spec: { data: { color: 'purple' } } } });
      await new Promise((r) => setTimeout(r, 1500)); // the informer sees the change (the loop is paused: nothing reconciles it)
      for (let i = 0; i < 2; i++) {
        await runCommand(page, 'Reconcile Lab: Dry-Run Reconcile', { opensPicker: true });
        const input = page.locator('.quick-input-widget input');
        await input.waitFor({ state: 'visible' });
        await input.fill('tl-alpha');
        await page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: 'tl-alpha' }).first().click();
        await editorTab(page, 'Dry-run result.md').waitFor({ state: 'visible' });
      }
      assert.equal(await editorTab(page, 'Dry-run result.md').count(), 1, 'one result view');
      assert.equal(await page.locator('.tabs-container .tab', { hasText: /current ↔ planned/ }).count(), 0, 'no diff editor per write');
      const lines = page.locator('.editor-group-container.active .monaco-editor .view-lines').first();
      const shown = async () => ((await lines.textContent()) ?? '').replace(/\u00a0/g, ' '); // the editor renders spaces as U+00A0
      const text = await eventually('the result header', shown, (s) => s.includes('Dry-run reconcile of'));
      assert.match(text, /dryRun=All/);
      // The editor renders only the lines in view: the planned ConfigMap diff sits at the end of the document.
      await lines.click();
      await page.keyboard.press('Control+End');
      await eventually('the planned diff inline', shown, (s) => s.includes('purple'));
      await page.keyboard.press('Control+Home');
      await t.screenshot('dry-run');
    });

    let log;
    await t.step('the Event Log: clicking a write shows the detail pane with the diff before → after and its reconcile', async () => {
      await runCommand(page, 'Reconcile Lab: Show Event Log');
      await editorTab(page, 'Event Log').waitFor({ state: 'visible' });
      log = await webviewFrame(page, '#list', 'Event Log');
      await log.locator('#filter-key').fill(`${ns}/tl-beta`);
      const writeRow = log.locator('#list .row:not([hidden])', { has: log.locator('.kind', { hasText: /^API write$/ }) }).filter({ hasText: 'configmaps' }).filter({ hasNotText: '(dry-run)' }).last();
      // The loop's own write (the dry-runs above journaled theirs too, under the person's Dry-Run Reconcile).
      await writeRow.waitFor({ state: 'visible', timeout: 30_000 });
      // Stop following, so the rows stay where they are, then click until the pane shows that write (the list
      // re-uses its row elements while it renders the filtered entries).
      await log.locator('#follow').uncheck();
      const detail = log.locator('#detail:not([hidden])');
      // The pane shows a selection a moment after the click, and a click can land on a re-used row that shows
      // another entry by then: a click only happens when the pane does not show the write, and the write counts
      // as shown only when read one interval after the last click (never right after it).
      const shownWrite = (d) => /^(create|update|patch) configmaps /.test(d.title) && !/dry-run/.test(d.title) && /#\d+ · API write \(write\)/.test(d.fields) && d.sections.some((x) => /before → after/.test(x));
      const readDetail = async () => (await detail.count())
        ? { title: (await log.locator('#detail-title').textContent()) ?? '', fields: (await log.locator('#detail .detail-fields').textContent()) ?? '', sections: await log.locator('.detail-section').allTextContents() }
        : undefined;
      const shown = await eventually('the detail pane to show the loop\'s ConfigMap write with its diff', async () => {
        const d = await readDetail();
        if (d && shownWrite(d)) return { shown: true, d };
        await writeRow.click({ timeout: 5_000 }).catch(() => {});
        return { shown: false, d };
      }, (r) => r.shown, { intervalMs: 700 }); // slower than a double-click
      const sections = shown.d.sections;
      assert.ok(sections.some((s) => /^Reconcile #\d+ of /.test(s)), `the reconcile it belongs to: ${JSON.stringify(sections)}`);
      assert.ok(sections.includes('Cause'), JSON.stringify(sections));
      const diff = await log.locator('.detail-pre.diff').textContent();
      assert.match(diff, /^\+\s+color: orange$/m);
      await t.screenshot('event-log-detail');
    });

    let tl;
    await t.step('"Show Timeline" in the detail pane opens the Timeline on that key', async () => {
      await log.locator('#detail-timeline').click();
      await editorTab(page, 'Timeline').waitFor({ state: 'visible' });
      tl = await webviewFrame(page, '#stage', 'Timeline');
      const status = await eventually('lanes drawn', () => tl.locator('#status').textContent(), (s) => /\b[1-9]\d* lanes?\b/.test(s ?? ''));
      assert.match(status, /items/);
      // The icon-like zoom buttons ("+", "−") have names a screen reader can say.
      await tl.getByRole('button', { name: 'Zoom in', exact: true }).waitFor({ state: 'visible' });
      await tl.getByRole('button', { name: 'Zoom out', exact: true }).waitFor({ state: 'visible' });
      await tl.locator('#follow').uncheck();
      await tl.locator('#fit').click();
      await page.waitForTimeout(300);
      await t.screenshot('timeline');
    });

    await t.step('clicking a mark on the timeline opens its entry in the Event Log detail pane', async () => {
      // Lanes are sorted by key; tl-beta is the second. Find a mark by hovering along its lane until the tooltip shows.
      const stage = tl.locator('#stage');
      const box = await stage.boundingBox();
      const y = 24 + 1 * 24 + 12;
      // The lane's label (cut to its column when long) shows the whole key on hover.
      await stage.hover({ position: { x: 20, y } });
      await eventually('the lane label\'s tooltip', () => tl.locator('#tooltip:not([hidden])').textContent().catch(() => ''), (s) => s === `${ns}/tl-beta`);
      let found = false;
      for (let x = box.width - 20; x > 200 && !found; x -= 3) {
        await stage.hover({ position: { x, y } });
        if (await tl.locator('#tooltip:not([hidden])').count()) {
          await stage.click({ position: { x, y } });
          found = true;
        }
      }
      assert.ok(found, 'a mark or bar on the tl-beta lane');
      await eventually('the Event Log to be the active editor', () => page.locator('.tabs-container .tab.active').textContent(), (s) => /Event Log/.test(s ?? ''));
      const again = await webviewFrame(page, '#detail:not([hidden])', 'Event Log detail');
      const title = await eventually('the entry\'s detail', () => again.locator('#detail-title').textContent(), (s) => (s ?? '').length > 0);
      assert.ok(title.length > 0);
    });
  } finally {
    await kube.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  }
}
