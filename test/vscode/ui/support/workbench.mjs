// Playwright page objects for the VS Code workbench (code-server in Chromium). Selectors follow VS Code's own smoke-test
// automation (test/automation) and the ARIA roles the workbench renders; lists are virtualised, so only visible rows
// exist in the DOM.

/** Opens the workbench at `url` (code-server's root, folder = the workspace it was started with) and waits for it. */
export async function openWorkbench(page, url) {
  // A loaded machine (several test runs on 2 cores) can take minutes to serve the workbench: wait as long as the
  // session may last (RECONCILE_LAB_VSCODE_TIMEOUT), for DOMContentLoaded rather than `load`.
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: Number(process.env.RECONCILE_LAB_VSCODE_TIMEOUT ?? 240_000) });
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 120_000 });
  // The activity bar is rendered late on a cold start; everything else hangs off it.
  await page.locator('.part.activitybar').waitFor({ state: 'visible', timeout: 120_000 });
}

/**
 * Resizes the primary side bar to about `width` CSS pixels by dragging the sash on its right edge, as a user would
 * (for screenshots whose rows and descriptions should read in full, or whose editor should have the room; VS Code
 * keeps the size for the session). A side bar already within a few pixels of it is left alone.
 */
export async function resizeSideBar(page, width) {
  const bar = page.locator('[id="workbench.parts.sidebar"]');
  const box = await bar.boundingBox();
  if (!box || Math.abs(box.width - width) < 12) return;
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width + 1, y);
  await page.mouse.down();
  await page.mouse.move(box.x + width, y, { steps: 10 });
  await page.mouse.up();
  await eventually('the side bar to be resized', async () => (await bar.boundingBox())?.width ?? 0, (w) => Math.abs(w - width) < 24, { timeoutMs: 5_000 });
  // Off the sash (no click: the editor area may hold a view); its highlight then fades out (a transition).
  await page.mouse.move(box.x + width + 300, box.y + box.height - 20, { steps: 5 });
  const sash = page.locator('.monaco-sash.primary-sidebar-sash').first();
  if (await sash.count()) {
    await eventually('the side bar\'s sash to fade out', () => sash.evaluate((e) => getComputedStyle(e, '::before').backgroundColor),
      (c) => c === 'transparent' || /^rgba\(.*,\s*0\)$/.test(c), { timeoutMs: 5_000 });
  }
}

/**
 * Opens the Event Log from the Resources view's title bar (its "Show Event Log" button) and returns the webview's
 * content and its shown rows (pooled rows beyond the visible ones are hidden).
 */
export async function openEventLog(page, resourcesPane) {
  const header = paneHeader(resourcesPane);
  await header.hover();
  await header.getByRole('button', { name: 'Show Event Log' }).click();
  await editorTab(page, 'Event Log').waitFor({ state: 'visible' });
  const log = webviewContent(page);
  return { log, rows: log.locator('#list .row:not([hidden])') };
}

/** The activity-bar entry of a view container, by its title. */
export function activityTab(page, title) {
  return page.locator('.part.activitybar').getByRole('tab', { name: title });
}

/** Shows a view container from the activity bar (a click on the already shown one would hide it) and returns it. */
export async function openViewContainer(page, containerId, title) {
  const container = page.locator(`[id="workbench.view.extension.${containerId}"]`);
  if (!(await container.isVisible())) await activityTab(page, title).click();
  await container.waitFor({ state: 'visible' });
  return container;
}

/**
 * A view pane inside a container, by the view's name (its header's title element, matched exactly), expanded; the
 * pane holds the view's header, tree and welcome. The header's aria-label and the tree's accessible name are not used:
 * VS Code changes them when a view has a description or a message.
 */
export async function openViewPane(container, name) {
  const pane = container.locator('.pane').filter({ has: container.page().locator('.pane-header .title', { hasText: exactText(name) }) });
  const header = paneHeader(pane);
  await header.waitFor({ state: 'visible' });
  if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
  return pane;
}

/** The header of a view pane (title, description, title-bar actions). */
export function paneHeader(pane) {
  return pane.locator('.pane-header').first();
}

/** The description a view shows in its header (TreeView.description), '' when none. */
export async function paneDescription(pane) {
  const d = paneHeader(pane).locator('.description');
  return (await d.count()) ? ((await d.first().textContent()) ?? '').trim() : '';
}

/** The tree of a view pane (present once the view has items; while it has none the pane shows its welcome content). */
export function viewTree(pane) {
  return pane.locator('.pane-body').getByRole('tree');
}

/** A regular expression matching exactly `text` (trimmed). */
function exactText(text) {
  return new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
}

/** Labels of the tree items currently rendered in `scope` (virtualised: only visible rows). */
export async function treeLabels(scope) {
  // One snapshot in the page: a live tree replaces its row elements while it refreshes, so reading row by row
  // can wait on a row that no longer exists.
  return scope.getByRole('treeitem').evaluateAll((rows) => rows.map((r) => (r.querySelector('.label-name')?.textContent ?? '').trim()));
}

/** A tree item in `scope` whose label is `label` (exact); expanded (ArrowRight) when `expand` is set. */
export async function treeItem(scope, label, { expand = false } = {}) {
  const item = scope.getByRole('treeitem').filter({ has: scope.page().locator('.label-name', { hasText: label }) }).first();
  await item.waitFor({ state: 'visible' });
  if (!expand) return item;
  // A live tree may re-render the row while it refreshes (a busy cluster, a controller's queue filling), dropping an
  // expansion made just before: expand until it stays expanded.
  for (let attempt = 0; (await item.getAttribute('aria-expanded')) === 'false'; attempt++) {
    if (attempt >= 20) throw new Error(`tree item ${label} does not stay expanded`);
    if (attempt % 2 === 0) await item.click();
    else await item.press('ArrowRight');
    await item.page().waitForTimeout(500);
  }
  return item;
}

/**
 * Right-clicks `target` until its context menu opens. A tree fed by live data re-renders its rows (a refresh
 * replaces the row elements), and on a loaded machine Playwright's wait for a stable element can lose that race
 * again and again: after a first try, click as soon as the row is found.
 */
async function rightClick(target) {
  const menu = target.page().locator('.monaco-menu');
  for (let attempt = 1; ; attempt++) {
    try {
      await target.click({ button: 'right', timeout: attempt === 1 ? 20_000 : 5_000, force: attempt > 1 });
      if (await menu.waitFor({ state: 'visible', timeout: 5_000 }).then(() => true, () => false)) return;
    } catch (e) {
      if (attempt >= 6) throw e;
    }
    if (attempt >= 6) return; // the caller's wait for the menu reports it
    await target.page().keyboard.press('Escape'); // a half-open menu or hover, before the next try
  }
}

/** Right-clicks `target` and picks the context-menu entry `label`. */
export async function contextMenu(target, label) {
  const page = target.page();
  await rightClick(target);
  const menu = page.locator('.monaco-menu');
  await menu.waitFor({ state: 'visible' });
  const entry = menu.getByRole('menuitem', { name: label }).first();
  await entry.waitFor({ state: 'visible' });
  await entry.hover(); // focuses the entry
  await entry.click();
  // A click that lands while the tree under the menu re-renders (live cluster data) can be swallowed; the hovered
  // entry keeps the focus, so Enter runs it then.
  if (!(await menu.waitFor({ state: 'hidden', timeout: 2_000 }).then(() => true, () => false))) {
    await page.keyboard.press('Enter');
    await menu.waitFor({ state: 'hidden' });
  }
}

/** The labels of the context menu `target` offers (the menu is closed again with Escape). */
export async function contextMenuLabels(target) {
  const page = target.page();
  await rightClick(target);
  const menu = page.locator('.monaco-menu');
  await menu.waitFor({ state: 'visible' });
  const labels = (await menu.locator('.action-label').allTextContents()).map((s) => s.trim()).filter(Boolean);
  await page.keyboard.press('Escape');
  await menu.waitFor({ state: 'hidden' });
  return labels;
}

/**
 * Runs a command from the command palette by its full title ("Category: Title"). Waits for the palette to close;
 * with `{ opensPicker: true }` (a command that asks with a quick pick of its own) it waits instead until the quick
 * input holds that command's picker (no longer the palette's ">" query).
 */
export async function runCommand(page, title, { opensPicker = false, timeoutMs = 60_000 } = {}) {
  const row = page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: title }).first();
  // The palette lists only commands whose enablement holds; context keys (trust, connection) can settle after the
  // views show data, so a command missing from the list is looked for again with a fresh palette.
  const end = Date.now() + timeoutMs;
  for (;;) {
    await page.locator('.monaco-workbench').click({ position: { x: 600, y: 10 } }).catch(() => {});
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${title}`);
    const shown = await row.waitFor({ state: 'visible', timeout: 10_000 }).then(() => true, (e) => {
      if (Date.now() > end) throw e;
      return false;
    });
    if (shown) break;
    await page.keyboard.press('Escape');
    await page.waitForTimeout(1_000);
  }
  await row.click();
  if (opensPicker) {
    await page.waitForFunction(() => {
      const el = document.querySelector('.quick-input-widget:not(.quick-input-widget-closing) input');
      return !!el && !el.value.startsWith('>');
    });
    return;
  }
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

/** The editor tab titled `title` (a locator; may not exist yet). */
export function editorTab(page, title) {
  return page.locator('.tabs-container .tab', { hasText: title });
}

/** Text of the visible lines of the active text editor. */
export async function activeEditorText(page) {
  const lines = await page.locator('.editor-group-container.active .monaco-editor .view-line').allTextContents();
  return lines.map((l) => l.replace(/\u00a0/g, ' ')).join('\n');
}

/**
 * The document inside a webview panel (VS Code nests it: iframe.webview → iframe#active-frame). `title` picks the
 * webview whose panel title matches; the frame locator waits for the content to load.
 */
export function webviewContent(page) {
  return page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
}

/** Texts of the visible notification toasts. */
export async function notifications(page) {
  return (await page.locator('.notification-toast .notification-list-item-message').allTextContents()).map((s) => s.trim());
}

/**
 * Polls `probe` until `accept(value)` holds or `timeoutMs` passes; resolves to the last value, throws with it and
 * `what` on timeout. For UI state that appears asynchronously (cluster data arriving in a tree).
 */
export async function eventually(what, probe, accept, { timeoutMs = 30_000, intervalMs = 250 } = {}) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await probe();
    if (accept(last)) return last;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The (innermost) webview frame whose document has `selector`, waiting until one has it. */
export async function webviewFrame(page, selector, what) {
  return eventually(`the ${what} webview`, async () => {
    for (const f of page.frames()) {
      if (await f.locator(selector).count().catch(() => 0)) return f;
    }
    return undefined;
  }, (f) => f !== undefined, { timeoutMs: 30_000 });
}
