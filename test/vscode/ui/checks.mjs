// UI test: Run Robustness Checks… as a person runs it in VS Code (code-server in Chromium), against the real test cluster.
//
// Setup: the lab's Widget CRD and one Widget in a namespace of this test's own; the workspace settings point the
// extension at that namespace and at a buggy sample reconciler (samples/buggy/, a create with generateName on every
// pass; the lab reconciler when the samples are missing).
// Checks: the object's context menu offers "Run Robustness Checks…" → the check pick list (all eight selected) → Enter runs
// them → the results view opens, shows each check's status while running and, when finished, the finding with its
// explanation, perturbation, journal (entry kinds in the Event Log's words) and reproduce line (Copy button); keys are plain text (no link anywhere in the
// page) and a key's Reveal button selects its object in the Resources view.
// Screenshot: test-output/screenshots/checks.png (for the README's docs/images/checks.png).
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { GROUP, clusterClient, createWidget, widgetCrdAndNamespace, writeWorkspaceSettings } from './support/cluster.mjs';
import { contextMenu, contextMenuLabels, editorTab, eventually, openViewContainer, openViewPane, openWorkbench, treeLabels, viewTree, webviewContent } from './support/workbench.mjs';


/** Expands collapsed tree items until `name` is rendered. */
async function expandUntilVisible(tree, name) {
  for (let round = 0; round < 40; round++) {
    const labels = await treeLabels(tree);
    if (labels.includes(name)) return;
    const collapsed = tree.locator('[role="treeitem"][aria-expanded="false"]');
    if ((await collapsed.count()) > 0) await collapsed.first().locator('.monaco-tl-twistie').click();
    else await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${name} did not appear in the Resources tree; visible: ${JSON.stringify(await treeLabels(tree))}`);
}

export default async function checksUi(t) {
  const { page, root } = t;
  const ns = `ui-checks-${randomBytes(3).toString('hex')}`;
  const name = 'ui-checked';
  const buggyDir = join(root, 'samples/buggy');
  const buggy = existsSync(buggyDir) ? readdirSync(buggyDir).find((f) => /generate-?name/i.test(f) && /\.(ts|js|mjs)$/.test(f)) : undefined;

  const kube = await clusterClient(t);

  await t.step('setup: Widget CRD, one Widget, the workspace settings', async () => {
    await widgetCrdAndNamespace(t, kube, ns);
    await createWidget(kube, ns, name, { data: { color: 'blue' } });
    writeWorkspaceSettings(t, {
      'reconcileLab.namespaces': [ns],
      'reconcileLab.resources': [`widgets.${GROUP}`, 'configmaps'],
      'reconcileLab.reconciler.resource': `widgets.${GROUP}`,
      ...(buggy ? { 'reconcileLab.reconciler.kind': 'module', 'reconcileLab.reconciler.modulePath': join(buggyDir, buggy) } : {}),
    });
  });

  try {
    let tree;
    await t.step('the Resources tree shows the Widget', async () => {
      await openWorkbench(page, t.url);
      // The extension host starts after the workbench: its activity-bar tab can take minutes under load.
      await page.locator('.part.activitybar').getByRole('tab', { name: 'Reconcile Lab' }).waitFor({ state: 'visible', timeout: 240_000 });
      const container = await openViewContainer(page, 'reconcileLab', 'Reconcile Lab');
      tree = viewTree(await openViewPane(container, 'Resources'), 'Resources');
      await tree.waitFor({ state: 'visible', timeout: 60_000 });
      await expandUntilVisible(tree, name);
    });

    await t.step('"Run Robustness Checks…" from the object\'s context menu: pick the checks, run them', async () => {
      const item = tree.getByRole('treeitem').filter({ has: page.locator('.label-name', { hasText: name }) }).first();
      const labels = await contextMenuLabels(item);
      assert.ok(labels.includes('Run Robustness Checks…'), `context menu ${JSON.stringify(labels)}`);
      await contextMenu(item, 'Run Robustness Checks…');
      const picker = page.locator('.quick-input-widget');
      await picker.waitFor({ state: 'visible' });
      const rows = picker.locator('.quick-input-list .monaco-list-row');
      await eventually('the eight checks in the pick list', () => rows.count(), (n) => n >= 8);
      // A list of toggles survives focus moving away (a click on the tree): only Escape or OK closes it.
      await item.click();
      await page.waitForTimeout(500); // settle; the assertion is on the state after the focus change
      assert.ok(await picker.isVisible(), 'the checks picker stays open when the tree is clicked');
      await picker.locator('.quick-input-box input').click();
      await page.keyboard.press('Enter'); // all are selected: OK
      await picker.waitFor({ state: 'hidden' });
    });

    await t.step('the results view shows every check and, for the buggy sample, its finding', async () => {
      await editorTab(page, 'Robustness Checks').waitFor({ state: 'visible', timeout: 60_000 });
      const view = webviewContent(page);
      const status = await eventually('the run to finish', () => view.locator('#status').textContent().catch(() => ''), (s) => /^(Finished|Cancelled)/.test(s ?? ''), { timeoutMs: 240_000, intervalMs: 1000 });
      assert.match(status, /^Finished/);
      // The status line stays one line of totals; the time per run is a section below the results.
      assert.doesNotMatch(status, /reference run/, status);
      assert.match(await view.locator('#footer').innerText(), /Time per run\s+reference run 1 /i);
      // The totals name the checks that could not run as each row does (not "error(s)"); a check's time has a unit
      // that fits it ("40 ms", not "0.0 s").
      assert.match(status, /\d+ skipped, \d+ could not run$/, status);
      const times = (await view.locator('.result .time').allTextContents()).map((s) => s.trim());
      assert.ok(times.length > 0 && times.every((x) => /^(\d+ ms|\d\.\d s|\d{2,} s)$/.test(x) && x !== '0.0 s'), JSON.stringify(times));
      const checks = (await view.locator('.result .check').allTextContents()).map((s) => s.trim());
      assert.deepEqual(checks, ['Run twice', 'Crash after write', 'Stale cache', 'Unobserved intermediate state', 'History independence', 'Convergence', 'Deletion', 'Child drift']);
      if (buggy) {
        const findings = view.locator('.finding');
        assert.ok((await findings.count()) >= 1, 'the generateName bug is found');
        const first = findings.first();
        assert.ok(((await first.locator('.explanation').textContent()) ?? '').length > 40, 'an explanation');
        assert.match((await first.locator('.repro code').textContent()) ?? '', /reconcile-lab check/);
        await first.locator('.repro button.copy').waitFor({ state: 'visible' });
        // The journal of the perturbed run names entry kinds as the Event Log does, never by their internal names.
        const journal = (await first.locator('pre.journal .j').allTextContents()).join('');
        assert.match(journal, /Reconcile started/, journal);
        assert.match(journal, /API write/, journal);
        assert.doesNotMatch(journal, /reconcileStart|reconcileEnd/, journal);
        assert.match(status, /finding/);
      } else {
        assert.match(status, /no findings/);
      }
      await t.screenshot('checks');
    });

    await t.step('a key is plain text, never a link; its Reveal button selects the object in the Resources view', async () => {
      const view = webviewContent(page);
      assert.equal(await view.locator('a').count(), 0, 'no link in the results view');
      const result = view.locator('.result').first();
      assert.equal(((await result.locator('.key').textContent()) ?? '').trim(), `${ns}/${name}`);
      // Select another row first (the context menu left the Widget selected), so only Reveal can select it again.
      await tree.getByRole('treeitem').filter({ has: page.locator('.label-name', { hasText: ns }) }).first().click();
      await eventually('another row selected', () => tree.locator('[role="treeitem"][aria-selected="true"] .label-name').allTextContents(), (l) => l.length > 0 && !l.some((x) => x.trim() === name));
      await result.locator('button.reveal').click();
      await eventually('the Widget selected in the Resources view', () => tree.locator('[role="treeitem"][aria-selected="true"] .label-name').allTextContents(), (l) => l.some((x) => x.trim() === name));
    });
  } finally {
    await kube.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  }
}
