// UI test: the Event Log and the Timeline as a keyboard user and a newcomer meet them, on a kind of the test's own
// (a namespaced Lamp, reconciled by a small exec program in the workspace), in VS Code (code-server in Chromium).
//
// Setup: the Lamp CRD, a namespace of this test's own with three Lamps, an exec reconciler (lamp.sh) that fails one
// Lamp with text that looks like HTML and sets a requeue on the others (one with a long name); the workspace
// settings run it.
// Checks: a button and the Follow checkbox focused with Tab show the theme's focus colour (--vscode-focusBorder), not
// the browser's own ring; a key cut to the Event Log's column has the whole key as its tooltip; a filter that hides
// every entry says so and offers Clear Filters (and Escape in a filter box clears it); the Timeline's empty states
// are text in the page (a screen reader reads them), with Clear Filter, and Escape clears its key box; on the
// Timeline's canvas, Home/arrows move a focus ring between marks and lanes and a live region says each item (its
// tooltip's text, the lane's key first on a lane change), Enter opens the item in the Event Log as a click does; the Event Log
// shows the selected entry's detail again after it was hidden and shown; the failing Lamp's error text stays text
// (no element made of it); the Timeline's legend tells an error bar (taller) and a running one (outlined) by shape,
// and queued apart from running by colour; an entry's kind reads in words (its tooltip names the internal kind), and the
// kind filter, chosen by such a label, keeps filtering after the view was hidden and shown and after Clear.
// Screenshots: test-output/screenshots/event-log-no-match.png, timeline-no-match.png, timeline-keyboard.png.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterClient, writeWorkspaceSettings } from './support/cluster.mjs';
import { activityTab, editorTab, eventually, openWorkbench, runCommand, webviewFrame } from './support/workbench.mjs';

const GROUP = 'ui.reconcile.dev';
const CRD_NAME = `lamps.${GROUP}`;
const HOSTILE = '<img src=x onerror=alert(1)> javascript:alert(1)';
/** A name longer than the Event Log's key column (63 characters, the longest a label-safe name may be). */
const LONG = 'lamp-with-a-rather-long-name-that-the-key-column-cuts-short-ok';
/** The journal's entry kinds as Export… and the CLI's --json lines name them, in the Event Log's filter order. */
const INTERNAL_KINDS = ['informer', 'queue', 'reconcileStart', 'reconcileEnd', 'write', 'warning', 'control'];

/** The focused element of `frame`: its id, and whether its outline is a solid line in the theme's focus colour. */
function focusRing(frame) {
  return frame.evaluate(() => {
    const a = document.activeElement;
    const probe = document.createElement('span');
    probe.style.color = 'var(--vscode-focusBorder)';
    document.body.appendChild(probe);
    const focusBorder = getComputedStyle(probe).color;
    probe.remove();
    const s = getComputedStyle(a);
    return { id: a.id, style: s.outlineStyle, width: s.outlineWidth, color: s.outlineColor, focusBorder };
  });
}

function assertThemeRing(ring, id) {
  assert.equal(ring.id, id, `focus on #${id}: ${JSON.stringify(ring)}`);
  assert.equal(ring.style, 'solid', `#${id}'s focus outline: ${JSON.stringify(ring)}`);
  assert.notEqual(ring.width, '0px', JSON.stringify(ring));
  assert.equal(ring.color, ring.focusBorder, `#${id}'s focus outline is the theme's focusBorder: ${JSON.stringify(ring)}`);
}

export default async function webviewKeyboardUi(t) {
  const { page } = t;
  const ns = `kb-${randomBytes(3).toString('hex')}`;
  const kube = await clusterClient(t);

  await t.step('setup: the Lamp CRD, three Lamps and an exec reconciler in the workspace', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: CRD_NAME },
      spec: {
        group: GROUP, scope: 'Namespaced', names: { plural: 'lamps', singular: 'lamp', kind: 'Lamp', listKind: 'LampList' },
        versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    await kube.json({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd }).catch((e) => {
      if (e.code !== 409) throw e;
    });
    await eventually('the Lamp CRD to be established', () => kube.json({ method: 'GET', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}` }),
      (c) => (c.status?.conditions ?? []).some((x) => x.type === 'Established' && x.status === 'True'));
    await kube.json({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    for (const name of ['desk', 'porch', LONG]) {
      await kube.json({ method: 'POST', path: `/apis/${GROUP}/v1/namespaces/${ns}/lamps`, body: { apiVersion: `${GROUP}/v1`, kind: 'Lamp', metadata: { name, namespace: ns }, spec: { on: true } } });
    }
    const program = join(t.workspace, 'lamp.sh');
    writeFileSync(program, [
      '#!/bin/sh',
      'cat >/dev/null',
      'case "$RECONCILE_NAME" in',
      `  porch) echo '{"error":"bulb broken ${HOSTILE}"}' ;;`,
      '  *) echo \'{"requeueAfterMs":60000,"reason":"dimming","status":{"phase":"On"}}\' ;;',
      'esac',
      '',
    ].join('\n'));
    chmodSync(program, 0o755);
    writeWorkspaceSettings(t, {
      'reconcileLab.namespaces': [ns], 'reconcileLab.resources': [`lamps.${GROUP}`],
      'reconcileLab.reconciler.kind': 'exec', 'reconcileLab.reconciler.command': './lamp.sh', 'reconcileLab.reconciler.resource': `lamps.${GROUP}`,
    });
  });

  try {
    await t.step('the workbench loads; Resume runs the exec reconciler on the Lamps', async () => {
      await openWorkbench(page, t.url);
      await activityTab(page, 'Reconcile Lab').waitFor({ state: 'visible', timeout: 240_000 });
      await eventually('desk reconciled', async () => {
        await runCommand(page, 'Reconcile Lab: Resume Reconcile Loop').catch(() => page.keyboard.press('Escape'));
        return kube.json({ method: 'GET', path: `/apis/${GROUP}/v1/namespaces/${ns}/lamps/desk` }).then((l) => l.status?.phase, () => undefined);
      }, (phase) => phase === 'On', { timeoutMs: 240_000, intervalMs: 2000 }); // connecting takes minutes on a loaded machine
    });

    let log;
    await t.step('Event Log: Tab shows the theme focus colour on a button and on the Follow checkbox', async () => {
      await runCommand(page, 'Reconcile Lab: Show Event Log');
      await editorTab(page, 'Event Log').waitFor({ state: 'visible' });
      log = await webviewFrame(page, '#list', 'Event Log');
      await eventually('porch\'s failed reconcile', () => log.locator('#list .row:not([hidden])', { hasText: 'bulb broken' }).count(), (n) => n > 0);
      // The failure's text stays text: no element was made of it.
      assert.equal(await log.locator('#list img, #list a, #detail img, #detail a').count(), 0);
      await log.locator('#filter-text').focus();
      await page.keyboard.press('Tab');
      assertThemeRing(await focusRing(log), 'pause');
      for (const id of ['clear', 'export', 'follow']) {
        await page.keyboard.press('Tab');
        assert.equal((await focusRing(log)).id, id);
      }
      assertThemeRing(await focusRing(log), 'follow');
    });

    await t.step('Event Log: a key cut to its column shows the whole key on hover', async () => {
      const key = `${ns}/${LONG}`;
      await log.locator('#filter-key').fill(LONG); // its rows in view (the list renders only those)
      const cell = log.locator('#list .row:not([hidden]) .key', { hasText: key }).first();
      await cell.waitFor({ state: 'visible' });
      // Measured once the row is laid out (the list re-renders its rows as entries arrive).
      await eventually('the key cut to its column', () => cell.evaluate((c) => c.scrollWidth > c.clientWidth).catch(() => false), (cut) => cut === true);
      assert.equal(await cell.getAttribute('title'), key);
      await log.locator('#filter-key').fill('');
    });

    await t.step('Event Log: a filter that hides every entry offers Clear Filters; Escape clears a filter box', async () => {
      await log.locator('#filter-text').fill('no-entry-says-this');
      await eventually('the empty state', () => log.locator('#empty:not([hidden])').textContent().catch(() => ''), (s) => /No entry matches the filter\./.test(s ?? ''));
      const clear = log.getByRole('button', { name: 'Clear Filters', exact: true });
      await clear.waitFor({ state: 'visible' });
      await t.screenshot('event-log-no-match');
      await clear.focus();
      await page.keyboard.press('Enter');
      assert.equal(await log.locator('#filter-text').inputValue(), '');
      await eventually('the entries back', () => log.locator('#list .row:not([hidden])').count(), (n) => n > 0);
      assert.ok(await log.locator('#empty').isHidden(), 'no empty state with entries shown');
      await log.locator('#filter-key').fill(`${ns}/no-such-lamp`);
      await eventually('the empty state', () => log.locator('#empty').isVisible(), (v) => v);
      await log.locator('#filter-key').press('Escape');
      assert.equal(await log.locator('#filter-key').inputValue(), '');
      await eventually('the entries back after Escape', () => log.locator('#list .row:not([hidden])').count(), (n) => n > 0);
    });

    await t.step('Event Log: the selected entry\'s detail is shown again after the view was hidden and shown', async () => {
      await log.locator('#follow').uncheck();
      await log.locator('#filter-key').fill(`${ns}/porch`);
      // By keyboard: ArrowUp from the list selects the newest entry, then the ones before it, until porch's error.
      await log.locator('#list').focus();
      // One key press at a time: the pane shows the selected entry once the host has answered (slow on a busy machine).
      let title = '';
      for (let i = 0; i < 40 && !/bulb broken/.test(title); i++) {
        await page.keyboard.press('ArrowUp');
        title = await eventually('the selected entry\'s detail', async () => {
          const selected = await log.locator('#list .row.selected:not([hidden]) .summary').textContent().catch(() => undefined);
          const shown = await log.locator('#detail:not([hidden]) #detail-title').textContent().catch(() => '');
          return selected !== undefined && shown === selected ? shown : '';
        }, (s) => s !== '');
      }
      assert.match(title, /bulb broken/);
      assert.match(await log.locator('#list .row.selected:not([hidden])').textContent(), /bulb broken/);
      // The detail's Time reads as the row's does (the page's local time), then in ISO UTC.
      const rowTime = ((await log.locator('#list .row.selected:not([hidden]) .time').textContent()) ?? '').trim();
      const detailTime = (await log.locator('#detail .detail-fields dt', { hasText: /^Time$/ }).locator('xpath=following-sibling::dd[1]').textContent()) ?? '';
      assert.ok(rowTime !== '' && detailTime.startsWith(`${rowTime} · `) && /^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(detailTime.slice(rowTime.length + 3)), `detail Time ${JSON.stringify(detailTime)}, row time ${JSON.stringify(rowTime)}`);
      // Not following (a scroll to the bottom turns it back on): the view, shown again, scrolls to the selected row.
      if (await log.locator('#follow').isChecked()) await log.locator('#follow').uncheck();
      await runCommand(page, 'Reconcile Lab: Show Timeline'); // the same editor group: the Event Log is hidden
      await webviewFrame(page, '#stage', 'Timeline');
      await runCommand(page, 'Reconcile Lab: Show Event Log');
      log = await webviewFrame(page, '#list', 'Event Log');
      const again = await eventually('the detail pane again', () => log.locator('#detail:not([hidden]) #detail-title').textContent().catch(() => ''), (s) => (s ?? '') !== '');
      assert.equal(again, title);
      assert.equal(await log.locator('#filter-key').inputValue(), `${ns}/porch`, 'the filter is kept too');
      // The detail pane comes from the view's saved state at once; the list's rows arrive with the host's snapshot after it.
      await eventually('the row selected and in view', () => log.locator('#list .row.selected:not([hidden])').count(), (n) => n === 1);
      assert.equal(await log.locator('#detail img, #detail a').count(), 0, 'the error in the detail pane stays text');
    });

    await t.step('Timeline: empty states are text in the page; Clear Filter and Escape clear the key box; the focus colour', async () => {
      await runCommand(page, 'Reconcile Lab: Show Timeline');
      const tl = await webviewFrame(page, '#stage', 'Timeline');
      await eventually('lanes drawn', () => tl.locator('#status').textContent(), (s) => /\b[1-9]\d* lanes?\b/.test(s ?? ''));
      assert.ok(await tl.locator('#empty').isHidden(), 'no empty state with lanes shown');
      // The legend's colours have words, and a screen reader finds them as the legend.
      assert.match(await tl.getByRole('group', { name: 'Legend' }).textContent(), /reconcile ok.*error.*requeue.*informer event/);
      // Not by colour alone, and running and queued apart: the legend's swatches as the canvas draws them.
      const swatch = (cls) => tl.locator(`#legend .swatch.${cls}`).evaluate((e) => {
        const b = getComputedStyle(e, '::before');
        return { bg: b.backgroundColor, h: b.height, border: b.borderTopStyle };
      });
      const [ok, err, run, queue] = [await swatch('ok'), await swatch('err'), await swatch('run'), await swatch('queue')];
      assert.ok(parseFloat(err.h) > parseFloat(ok.h), `an error bar is taller: ${JSON.stringify({ ok, err })}`);
      assert.equal(run.border, 'solid', `a running bar has an outline: ${JSON.stringify(run)}`);
      assert.notEqual(run.bg, queue.bg, `running and queued differ in colour: ${JSON.stringify({ run, queue })}`);
      await tl.locator('#filter-key').fill('no-such-lamp');
      const empty = await eventually('the empty state', () => tl.locator('#empty:not([hidden]) [role="status"]').textContent().catch(() => ''), (s) => (s ?? '') !== '');
      assert.equal(empty, 'No lane matches the key filter.');
      await t.screenshot('timeline-no-match');
      await tl.getByRole('button', { name: 'Clear Filter', exact: true }).click();
      assert.equal(await tl.locator('#filter-key').inputValue(), '');
      await eventually('lanes again', () => tl.locator('#status').textContent(), (s) => /\b[1-9]\d* lanes?\b/.test(s ?? ''));
      assert.ok(await tl.locator('#empty').isHidden());
      await tl.locator('#filter-key').fill('no-such-lamp');
      await eventually('the empty state', () => tl.locator('#empty').isVisible(), (v) => v);
      await tl.locator('#filter-key').press('Escape');
      assert.equal(await tl.locator('#filter-key').inputValue(), '');
      await eventually('lanes after Escape', () => tl.locator('#empty').isHidden(), (v) => v);
      await tl.locator('#filter-key').focus();
      await page.keyboard.press('Tab');
      assertThemeRing(await focusRing(tl), 'zoom-in');
    });

    await t.step('Timeline by keyboard: arrows move between marks and lanes, a live region says each, Enter opens it as a click does', async () => {
      const tl = await webviewFrame(page, '#stage', 'Timeline');
      const stage = tl.locator('#stage');
      assert.equal(await stage.getAttribute('role'), 'application');
      assert.match(await stage.getAttribute('aria-label'), /arrows move between a lane's items/);
      const live = tl.locator('#announce');
      assert.equal(await live.getAttribute('role'), 'status');
      assert.equal(await live.getAttribute('aria-live'), 'polite');
      const said = async () => (await live.textContent()) ?? '';
      await stage.focus();
      // One key at a time, each read back from the live region (it changes as the webview handles the key).
      const press = async (key, before) => {
        await page.keyboard.press(key);
        return eventually(`the live region after ${key}`, said, (s) => s !== '' && s !== before);
      };
      const lanePrefix = new RegExp(`^(${ns}/[a-z0-9-]+): `);
      let text = await press('Home', '');
      let lane = lanePrefix.exec(text)?.[1];
      assert.ok(lane, `the first item says its lane: ${JSON.stringify(text)}`);
      // Right: the lane's next item (same lane: no key first), the text its tooltip shows.
      const first = text.slice(lane.length + 2);
      text = await press('ArrowRight', text);
      assert.notEqual(text, first, 'another item');
      assert.equal(await tl.locator('#tooltip:not([hidden])').textContent(), text, 'the tooltip beside it says the same');
      // Down until porch's lane (the Event Log's key filter shows porch's entries).
      for (let i = 0; i < 4 && lane !== `${ns}/porch`; i++) {
        text = await press('ArrowDown', text);
        const next = lanePrefix.exec(text)?.[1];
        assert.ok(next && next !== lane, `a lane change says the new lane: ${JSON.stringify(text)}`);
        lane = next;
      }
      assert.equal(lane, `${ns}/porch`);
      text = await press('End', text);
      const label = text.startsWith(`${lane}: `) ? text.slice(lane.length + 2) : text;
      await t.screenshot('timeline-keyboard');
      // The focused item has a dashed ring in the theme's focusBorder on the canvas while the Timeline has focus:
      // pixels of that colour that go when the focus leaves (the "now" line and a selection keep theirs).
      const focusPixels = () => tl.evaluate(async () => {
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))); // the frame after the change
        const probe = document.createElement('span');
        probe.style.color = 'var(--vscode-focusBorder)';
        document.body.appendChild(probe);
        const [r, g, b] = getComputedStyle(probe).color.match(/\d+/g).map(Number);
        probe.remove();
        const c = document.getElementById('canvas');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - r) < 8 && Math.abs(d[i + 1] - g) < 8 && Math.abs(d[i + 2] - b) < 8) n++;
        return n;
      });
      const focused = await focusPixels();
      await tl.locator('#filter-key').focus();
      const blurred = await focusPixels();
      assert.ok(focused > blurred + 20, `focus ring pixels: ${focused} focused, ${blurred} not`);
      await stage.focus();
      await page.keyboard.press('Enter');
      await eventually('the Event Log to be the active editor', () => page.locator('.tabs-container .tab.active').textContent(), (s) => /Event Log/.test(s ?? ''));
      const log = await webviewFrame(page, '#detail:not([hidden])', 'Event Log detail');
      // A mark's label is its entry's summary; a bar's starts with its first entry's (then "→ how it ended").
      const title = await eventually('the entry\'s detail', () => log.locator('#detail-title').textContent().catch(() => ''), (s) => s !== '' && label.startsWith(s));
      assert.ok(label.startsWith(title), `detail ${JSON.stringify(title)} for ${JSON.stringify(label)}`);
    });

    await t.step('Event Log: entry kinds read in words; the kind filter shows the chosen kind, also after hide/show and after Clear', async () => {
      let log = await webviewFrame(page, '#list', 'Event Log');
      const rows = () => log.locator('#list .row:not([hidden])');
      const kindCells = () => rows().locator('.kind').allTextContents();
      const chosen = () => log.locator('#filter-kind').evaluate((s) => ({ value: s.value, text: s.selectedOptions[0]?.textContent }));
      await log.locator('#filter-text').fill('');
      await log.locator('#filter-key').fill(`${ns}/desk`);
      await log.locator('#follow').check(); // the newest of desk's entries in view
      // desk was reconciled (and requeued) more than once: its starts and ends are in view, named in words.
      const shown = await eventually('desk\'s reconciles in words', kindCells, (k) => k.includes('Reconcile started') && k.includes('Reconcile finished'));
      for (const k of shown) assert.ok(!INTERNAL_KINDS.includes(k), `a row shows the internal kind ${k}: ${JSON.stringify(shown)}`);
      // The cell's tooltip names the internal kind, as Export… and the CLI's --json lines write it; the label fits.
      const finished = rows().locator('.kind', { hasText: /^Reconcile finished$/ }).first();
      assert.match(await finished.getAttribute('title') ?? '', /"kind": "reconcileEnd" in Export… and the CLI's --json lines/);
      const cut = await rows().locator('.kind').evaluateAll((cs) => cs.filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.textContent));
      assert.deepEqual(cut, [], 'every label in view fits the Kind column (none cut to "…")');
      // The filter lists the kinds in words along a change's path; each option's value stays the internal kind.
      const options = await log.locator('#filter-kind option').evaluateAll((os) => os.map((o) => ({ value: o.value, text: o.textContent, title: o.title })));
      assert.deepEqual(options.map((o) => o.text), ['All kinds', 'Informer event', 'Work queue', 'Reconcile started', 'Reconcile finished', 'API write', 'Warning', 'Action']);
      assert.deepEqual(options.map((o) => o.value), ['', ...INTERNAL_KINDS]);
      for (const o of options.slice(1)) assert.ok(o.title.includes(`"kind": "${o.value}"`), `option ${o.text}'s tooltip: ${o.title}`);
      await log.locator('#filter-kind').selectOption({ label: 'Reconcile finished' });
      await eventually('only finished reconciles', kindCells, (k) => k.length > 0 && k.every((x) => x === 'Reconcile finished'));
      // Hidden and shown again (the page is rebuilt): the same kind chosen, the same rows.
      await runCommand(page, 'Reconcile Lab: Show Timeline');
      await webviewFrame(page, '#stage', 'Timeline');
      await runCommand(page, 'Reconcile Lab: Show Event Log');
      log = await webviewFrame(page, '#list', 'Event Log');
      assert.deepEqual(await chosen(), { value: 'reconcileEnd', text: 'Reconcile finished' });
      await eventually('only finished reconciles after hide/show', kindCells, (k) => k.length > 0 && k.every((x) => x === 'Reconcile finished'));
      // Clear empties the journal, not the filter: desk's next reconcile (its spec changed) shows, and only its end.
      await log.locator('#clear').click();
      await eventually('the log cleared', () => rows().count(), (n) => n === 0);
      assert.deepEqual(await chosen(), { value: 'reconcileEnd', text: 'Reconcile finished' });
      await kube.json({ method: 'PATCH', path: `/apis/${GROUP}/v1/namespaces/${ns}/lamps/desk`, contentType: 'application/merge-patch+json', body: { spec: { on: false } } });
      await eventually('desk\'s next reconcile, only its end', kindCells, (k) => k.length > 0 && k.every((x) => x === 'Reconcile finished'));
      assert.equal((await log.locator('#filter-kind option').allTextContents()).length, options.length, 'the filter keeps its kinds');
      await log.locator('#filter-kind').selectOption({ label: 'All kinds' });
      await eventually('every kind again', kindCells, (k) => k.includes('Reconcile started'));
    });
  } finally {
    await kube.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  }
}
