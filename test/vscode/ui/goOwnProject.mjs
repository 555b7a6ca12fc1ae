// UI test: a Go controller of the person's own, from a fresh project to a dry-run, as a new user goes through it.
//
// The project (fixtures/bucket-operator: a Bucket CRD of storage.example.org, main.go at the root, an owned Secret
// holding a token, a finalizer, a delayed requeue while a Bucket has no class) is copied next to the test workspace
// and opened as its own folder, with no Reconcile Lab settings at all. Checks: Set Up Go Bridge… from the palette
// adds the bridge to go.mod, replaced with the copy inside the installed extension (the files of the .vsix) → the
// lines the README gives are added, `go mod tidy` and `go vet` pass → Run Controller… with the default command
// (`go run .`) before the Bucket CRD is installed: the warning offers Install CRD (the project's crd.yaml); clicked,
// it installs the CRD and restarts the program, which then shows "Go controller bucket" in the Work Queue header, its keys, and not the built-in loop's problem
// (no Widget CRD is needed) → the Resources view follows the controller's CRD (not in any setting) → Step Reconcile
// and Dry-Run Reconcile from a Bucket's row: the dry-run plans the Secret and the status, the Secret's value never
// shows; the real steps create it and the Event Log journals the write, its detail without the value either →
// Run Robustness Checks… from another Bucket's row runs new instances of the program over scratch namespaces: every
// check passes or is skipped with its reason, the Secret children it wrote are compared (a note says so), never shown.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { clusterClient } from './support/cluster.mjs';
import {
  activeEditorText, activityTab, contextMenu, eventually, openEventLog, openViewContainer, openViewPane, openWorkbench,
  editorTab, paneDescription, resizeSideBar, runCommand, treeItem, treeLabels, viewTree, webviewContent,
} from './support/workbench.mjs';

const GROUP = 'storage.example.org';
const BRIDGE = 'github.com/reconcile-lab/reconcile-lab/bridge';
/** The token the fixture writes into each Bucket's Secret (`s3cr3t-<name>-hunter2`), and its base64 prefix. */
const SECRET_VALUE = /hunter2|czNjcjN0/;

/** "label | description" of every rendered row of a tree, read in one snapshot. */
function rows(tree) {
  return tree.getByRole('treeitem').evaluateAll((els) => els.map((r) => `${r.querySelector('.label-name')?.textContent?.trim() ?? ''} | ${r.querySelector('.label-description')?.textContent?.trim() ?? ''}`));
}

/** The whole text of the active editor: its first screen, then its last (Ctrl+End). */
async function editorText(page) {
  const top = await activeEditorText(page);
  await page.keyboard.press('Control+End');
  await page.waitForTimeout(300);
  return `${top}\n${await activeEditorText(page)}`;
}

export default async function goOwnProjectUi(t) {
  const { page, root } = t;
  const goSample = await import(pathToFileURL(join(root, 'test/integration/support/goSample.ts')).href);
  if (!goSample.haveGo()) {
    t.log('      skipped: no Go toolchain');
    return;
  }
  const project = join(dirname(t.workspace), 'bucket-operator');
  const ns = `ui-own-${randomBytes(3).toString('hex')}`;
  const kube = await clusterClient(t);
  const buckets = `/apis/${GROUP}/v1alpha1/namespaces/${ns}/buckets`;

  const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/buckets.${GROUP}`;
  await t.step('setup: the project next to the workspace, no Bucket CRD in the cluster yet (a newcomer runs first)', async () => {
    rmSync(project, { recursive: true, force: true });
    cpSync(join(root, 'test/vscode/ui/fixtures/bucket-operator'), project, { recursive: true });
    await kube.json({ method: 'DELETE', path: crdPath }).catch((e) => {
      if (e.code !== 404) throw e;
    });
    await eventually('no Bucket CRD', () => kube.json({ method: 'GET', path: crdPath }).then(() => 'present', (e) => (e.code === 404 ? 'gone' : 'present')), (x) => x === 'gone', { timeoutMs: 60_000 });
    await kube.json({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
  });

  try {
    let queuePane;
    let resourcesPane;
    let resources;
    await t.step('Set Up Go Bridge… adds the bridge to go.mod, replaced with the installed extension\'s copy', async () => {
      await openWorkbench(page, `${t.url}?folder=${encodeURIComponent(project)}`);
      await activityTab(page, 'Reconcile Lab').waitFor({ state: 'visible', timeout: 120_000 });
      const container = await openViewContainer(page, 'reconcileLab', 'Reconcile Lab');
      resourcesPane = await openViewPane(container, 'Resources');
      resources = viewTree(resourcesPane);
      // Connected: a tree, or (no CRD in a fresh cluster) the message that no resource is watched, naming Install CRD….
      await resourcesPane.locator('.pane-body').getByRole('tree').or(resourcesPane.getByText(/No resources are watched/)).first().waitFor({ state: 'visible', timeout: 180_000 });
      queuePane = await openViewPane(container, 'Work Queue');
      await runCommand(page, 'Reconcile Lab: Set Up Go Bridge…');
      const goMod = await eventually('go.mod to require and replace the bridge', () => readFileSync(join(project, 'go.mod'), 'utf8'),
        (m) => m.includes(`${BRIDGE} v0.0.0`) && m.includes(`replace ${BRIDGE} =>`), { timeoutMs: 60_000 });
      const target = goMod.match(new RegExp(`replace ${BRIDGE.replace(/\./g, '\\.')} => (\\S+)`))[1];
      assert.match(target, /extensions\/[^/]+\/bridge$/, 'the copy inside the installed extension');
      assert.ok(existsSync(join(target, 'go.mod')) && existsSync(join(target, 'queue.go')), `${target} holds the bridge module`);
      // The set-up guide names the project's own controller, read from its code, with the name both calls need.
      const guide = await eventually('the set-up guide naming the controller found in the code', () => editorText(page),
        (x) => /bucket_controller\.go:\d+`[\s\u00a0]+—[\s\u00a0]+controller[\s\u00a0]+`bucket`[\s\u00a0]+\(For[\s\u00a0]+`api\.Bucket`\)/.test(x), { timeoutMs: 30_000, intervalMs: 1000 });
      assert.match(guide, /bridge\.Options\(mgr,[\s\u00a0]+"bucket"/);
      assert.match(guide, /Found[\s\u00a0]+in[\s\u00a0]+your[\s\u00a0]+code:[\s\u00a0]+`main\.go:\d+`\./, 'where its manager is built');
    });

    await t.step('the lines of the README added, go mod tidy and go vet pass', async () => {
      const main = join(project, 'main.go');
      const m = readFileSync(main, 'utf8')
        .replace('"example.org/bucket-operator/internal/controller"', `"example.org/bucket-operator/internal/controller"\n\t"${BRIDGE}"`)
        .replace('mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{', 'mgrOpts := ctrl.Options{')
        .replace('\t})\n\tif err != nil {', '\t}\n\tbridge.Setup(&mgrOpts)\n\tmgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), mgrOpts)\n\tif err != nil {');
      assert.match(m, /bridge\.Setup\(&mgrOpts\)/);
      writeFileSync(main, m);
      const file = join(project, 'internal/controller/bucket_controller.go');
      const c = readFileSync(file, 'utf8')
        .replace('"example.org/bucket-operator/api"', `"example.org/bucket-operator/api"\n\t"${BRIDGE}"\n\t"sigs.k8s.io/controller-runtime/pkg/controller"`)
        .replace('\t\tComplete(r)', '\t\tWithOptions(bridge.Options(mgr, "bucket", controller.Options{})).\n\t\tComplete(bridge.Wrap(mgr, "bucket", r, &api.Bucket{}))');
      assert.match(c, /bridge\.Wrap/);
      writeFileSync(file, c);
      execFileSync('go', ['mod', 'tidy'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
      execFileSync('go', ['vet', './...'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
    });

    let queue;
    await t.step('Run Controller… before the CRD is installed: a warning offers Install CRD (crd.yaml of the project); it installs it and restarts the program', async () => {
      await runCommand(page, 'Reconcile Lab: Run Controller…');
      const toast = page.locator('.notification-toast').filter({ hasText: 'reconciles Bucket' });
      await toast.waitFor({ state: 'visible', timeout: 300_000 }); // a first go run compiles
      const text = await toast.locator('.notification-list-item-message').innerText();
      assert.match(text, /^Reconcile Lab: the Go controller bucket reconciles Bucket \(storage\.example\.org\/v1alpha1\), a kind the cluster does not serve: its CRD is not installed\. Install CRD applies buckets\.storage\.example\.org from crd\.yaml to the cluster of context \S+ and restarts the controller\./);
      await t.screenshot('install-crd');
      await toast.getByRole('button', { name: 'Install CRD' }).click();
      await eventually('the Bucket CRD established', () => kube.json({ method: 'GET', path: crdPath }).catch(() => ({})),
        (c) => (c.status?.conditions ?? []).some((x) => x.type === 'Established' && x.status === 'True'), { timeoutMs: 60_000 });
      for (const [name, spec] of [['photos', { size: 10, class: 'standard' }], ['logs', { size: 1 }], ['archive', { size: 500, class: 'cold' }]]) {
        await kube.json({ method: 'POST', path: buckets, body: { apiVersion: `${GROUP}/v1alpha1`, kind: 'Bucket', metadata: { name, namespace: ns }, spec } });
      }
    });

    await t.step('the restarted controller is shown; the views follow its CRD', async () => {
      // The view's message that nothing was watched goes once the CRD's resource is watched.
      await eventually('the Resources view\'s message gone', () => resourcesPane.getByText(/No resources are watched/).count(), (n) => n === 0);
      const description = await eventually('the Work Queue header to name the Go controller', () => paneDescription(queuePane),
        (s) => /Go controller bucket · pid \d+ · connected/.test(s), { timeoutMs: 300_000 });
      assert.match(description, /Go controller bucket/);
      queue = viewTree(queuePane);
      await eventually('the Buckets in the Go controller\'s queue', () => treeLabels(queue),
        (labels) => ['photos', 'logs', 'archive'].every((n) => labels.includes(`${ns}/${n}`)), { timeoutMs: 60_000 });
      // The built-in loop has no Widget CRD here; that is not the shown controller's problem.
      const message = await queuePane.locator('.pane-body').innerText();
      assert.doesNotMatch(message, /Widget custom resource/);
      assert.match(message, /Paused/);
      await resizeSideBar(page, 600);
      await treeItem(resources, 'Bucket', { expand: true });
      await treeItem(resources, ns, { expand: true });
      const shown = await eventually('the Buckets queued in the Resources view', () => rows(resources),
        (list) => list.some((r) => /^Bucket \| 3 · reconciled by Go controller bucket/.test(r)) && ['photos', 'logs', 'archive'].every((n) => list.some((r) => r.startsWith(`${n} | `) && /queued/.test(r))));
      assert.ok(shown.length >= 5, shown.join('\n'));
    });

    await t.step('Dry-Run Reconcile from a row plans the Secret and the status without showing the Secret\'s value; Step makes them', async () => {
      const photos = resources.getByRole('treeitem').filter({ has: page.locator('.label-name', { hasText: /^\s*photos\s*$/ }) }).first();
      // The first pass only adds the finalizer. A context-menu click can be swallowed when the tree re-renders
      // under it (live queue states): the step is sent again only if 10 s after the last one nothing happened
      // (a second pass would create the Secret before the dry-run below could plan it).
      const hasFinalizer = (b) => (b?.metadata.finalizers ?? []).includes(`${GROUP}/release`);
      let lastStep = 0;
      await eventually('the finalizer on photos', async () => {
        const b = await kube.json({ method: 'GET', path: `${buckets}/photos` });
        if (!hasFinalizer(b) && Date.now() - lastStep > 10_000) {
          await contextMenu(photos, 'Step Reconcile');
          lastStep = Date.now();
        }
        return b;
      }, hasFinalizer, { timeoutMs: 60_000, intervalMs: 500 });
      // The dry-run reads the controller's cache, which has the finalizer a moment after the server.
      const plan = await eventually('a dry-run that plans the Secret', async () => {
        await contextMenu(photos, 'Dry-Run Reconcile');
        await page.waitForTimeout(1_500);
        return editorText(page);
      }, (text) => /- create secrets \S+\/photos-access/.test(text), { timeoutMs: 60_000, intervalMs: 500 });
      assert.match(plan, new RegExp(`- update buckets\\.${GROUP.replace(/\./g, '\\.')} ${ns}/photos \\(status\\)`));
      assert.match(plan, /token: "\*\*\* \(after\)"/, 'the value redacted');
      assert.doesNotMatch(plan, SECRET_VALUE);
      await assert.rejects(kube.json({ method: 'GET', path: `/api/v1/namespaces/${ns}/secrets/photos-access` }), (e) => e.code === 404, 'the dry-run persisted nothing');
      const secret = await eventually('the Secret made by a real step', async () => {
        await contextMenu(photos, 'Step Reconcile');
        return kube.json({ method: 'GET', path: `/api/v1/namespaces/${ns}/secrets/photos-access` }).catch(() => undefined);
      }, (s) => s !== undefined, { timeoutMs: 60_000, intervalMs: 2_000 });
      assert.equal(secret.metadata.ownerReferences?.[0]?.name, 'photos');
      // The program caches Secrets (its Owns), so the views watch them too, although no setting lists them: the
      // Secret shows under its Bucket, by name only.
      const photosRow = await treeItem(resources, 'photos', { expand: true });
      const tree = await eventually('the Secret under photos in the Resources view', async () => {
        if ((await photosRow.getAttribute('aria-expanded')) === 'false') await photosRow.press('ArrowRight');
        return rows(resources);
      }, (list) => list.some((r) => /^(Secret|secrets) photos-access \|/.test(r)), { timeoutMs: 30_000, intervalMs: 500 });
      assert.doesNotMatch(tree.join('\n'), SECRET_VALUE);
    });

    await t.step('the Event Log journals the Secret\'s create; its detail does not show the value either', async () => {
      const { log, rows: entries } = await openEventLog(page, resourcesPane);
      await log.locator('#follow').uncheck(); // the list stops scrolling to new entries (rows are virtualized)
      await log.locator('#filter-key').fill(`${ns}/photos`);
      const write = entries.filter({ hasText: /create secrets/ }).filter({ hasNotText: 'dry-run' }).first();
      // The list renders the filter a moment after it is typed (its rows are re-used): until then a row may still
      // show another Bucket's Secret create (archive makes one too). Read the row until it shows photos'.
      const title = await eventually('the Secret create of photos in the filtered list', async () => {
        await write.waitFor({ state: 'attached', timeout: 5_000 }).catch(() => {});
        return (await write.getAttribute('title', { timeout: 3_000 }).catch(() => null)) ?? '';
      }, (t) => t.includes(`${ns}/photos-access`), { timeoutMs: 30_000, intervalMs: 500 });
      assert.match(title, new RegExp(`${ns}/photos-access rv ∅→\\d+`));
      const detail = log.locator('#detail');
      await eventually('the write\'s detail', async () => {
        await write.scrollIntoViewIfNeeded({ timeout: 3_000 }).catch(() => {});
        await write.click({ timeout: 3_000 }).catch(() => {});
        return detail.innerText();
      }, (s) => /photos-access/.test(s), { timeoutMs: 60_000, intervalMs: 500 });
      assert.doesNotMatch(await log.locator('body').innerText(), SECRET_VALUE);
    });

    await t.step('Run Robustness Checks… from a Bucket\'s row: new instances of the program, the Secret children compared but never shown', async () => {
      // archive: it has a class, so its reconciles create the Secret (logs has none and only waits).
      const archive = resources.getByRole('treeitem').filter({ has: page.locator('.label-name', { hasText: /^\s*archive\s*$/ }) }).first();
      const picker = page.locator('.quick-input-widget');
      // A right-click can land on another row while the tree re-renders (the namespace row: its three keys): the
      // picker's title names what is checked, so a picker for anything but archive is closed and the menu opened again.
      for (let attempt = 1; ; attempt++) {
        await contextMenu(archive, 'Run Robustness Checks…');
        await picker.waitFor({ state: 'visible' });
        const title = (await picker.locator('.quick-input-title').textContent().catch(() => '')) ?? '';
        if (title.includes(`${ns}/archive`)) break;
        if (attempt >= 3) throw new Error(`the checks picker is not for ${ns}/archive: ${title}`);
        await page.keyboard.press('Escape');
        await picker.waitFor({ state: 'hidden' });
      }
      await eventually('the eight checks in the pick list', () => picker.locator('.quick-input-list .monaco-list-row').count(), (n) => n >= 8);
      await page.keyboard.press('Enter'); // all selected
      await picker.waitFor({ state: 'hidden' });
      await editorTab(page, 'Robustness Checks').waitFor({ state: 'visible', timeout: 60_000 });
      const view = webviewContent(page);
      const status = await eventually('the checks to finish', () => view.locator('#status').textContent().catch(() => ''),
        (x) => /^(Finished|Cancelled)/.test(x ?? ''), { timeoutMs: 240_000, intervalMs: 1000 });
      assert.match(status, /^Finished.*no findings/, status);
      const text = await view.locator('body').innerText();
      assert.match(text, new RegExp(`Robustness checks of ${ns}/archive · Go controller`));
      assert.match(text, /Crash after write[^]*the end state equals the reference/, 'a crash between its writes (the Secret, the status) is compared');
      // The views watch Secrets (the program caches them), so the checks compare them from the start.
      assert.match(text, /End states compared secrets \(Secret values are compared, never shown\)/);
      assert.doesNotMatch(text, SECRET_VALUE);
    });

    await t.step('Stop Controller goes back to the built-in loop', async () => {
      await runCommand(page, 'Reconcile Lab: Stop Controller');
      await eventually('the Work Queue header to leave the Go controller', () => paneDescription(queuePane), (s) => !/Go controller/.test(s), { timeoutMs: 30_000 });
    });

    await t.step('Disconnected, the views offer Run Controller… for the workspace\'s controller module, which already uses the bridge (no Set Up Go Bridge… any more)', async () => {
      await runCommand(page, 'Reconcile Lab: Disconnect');
      await resourcesPane.getByText('controller-runtime module uses the Reconcile Lab bridge').waitFor({ state: 'visible', timeout: 30_000 });
      for (const label of ['Run Controller…', 'Connect to Cluster…']) {
        assert.ok(await resourcesPane.getByRole('button', { name: label }).isVisible(), `${label} in the Resources view's welcome`);
      }
      assert.equal(await resourcesPane.getByRole('button', { name: 'Set Up Go Bridge…' }).count(), 0, 'Set Up Go Bridge… is done: not offered again');
      // The Work Queue view renders its welcome on its own schedule (its message and rows are cleared separately).
      await queuePane.getByRole('button', { name: 'Run Controller…' }).waitFor({ state: 'visible', timeout: 30_000 });
      await runCommand(page, 'View: Close All Editors');
      await runCommand(page, 'Notifications: Clear All Notifications');
      await page.mouse.move(1100, 820);
      await t.screenshot('welcome-go');
    });
  } finally {
    await kube.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  }
}
