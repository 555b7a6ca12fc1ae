// The Event Log webview in real VS Code: it loads under its CSP, completes the ready handshake, receives batched
// journal entries, and the journal exports as JSON lines.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ReconcileLab } from '../../../src/host/reconcileLab.ts';
import { ok, run, suiteWidgets, waitUntil, widgetCrd } from './support/lab.ts';

describe('Event Log', function () {
  this.timeout(90_000);
  let l: ReconcileLab;
  let ns = '';
  let tmp = '';

  before(async function () {
    this.timeout(120_000);
    ({ l, ns } = await suiteWidgets('ext-log', ['logged'], { connect: true }));
    tmp = mkdtempSync(join(tmpdir(), 'rl-ext-log-'));
  });

  after(async () => {
    rmSync(tmp, { recursive: true, force: true });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('opens, completes the ready handshake and receives the journal snapshot', async () => {
    ok(await run('reconcileLab.showEventLog'));
    assert.equal(l.eventLog.isOpen, true);
    await waitUntil(() => l.eventLog.isReady, 'the webview said ready');
    assert.ok(l.eventLog.posted.batches >= 1, 'the snapshot was posted');
    const tab = vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputWebview);
    assert.ok(tab, 'a webview tab is open');
    assert.match(tab.label, /Event Log/);
  });

  it('streams new journal entries to the webview in batches', async () => {
    const c = await widgetCrd();
    const before = l.eventLog.posted.entries;
    const batchesBefore = l.eventLog.posted.batches;
    ok(await run('reconcileLab.stepReconcile', { key: `${ns}/logged`, resource: c.resourceId, force: true }));
    await waitUntil(() => l.eventLog.posted.entries > before, 'entries posted after a step');
    const newEntries = l.eventLog.posted.entries - before;
    const newBatches = l.eventLog.posted.batches - batchesBefore;
    assert.ok(newBatches <= newEntries, `${newEntries} entries in ${newBatches} posts`);
  });

  it('delivers a burst of 5,000 journal entries in a couple of batched posts', async () => {
    const s = l.session!;
    await waitUntil(() => l.eventLog.isReady, 'the webview is ready');
    const entries = l.eventLog.posted.entries;
    const batches = l.eventLog.posted.batches;
    for (let i = 0; i < 5000; i++) s.journal.append({ kind: 'control', action: 'enqueue', detail: `burst ${i}`, key: `${ns}/burst-${i % 50}` });
    await waitUntil(() => l.eventLog.posted.entries >= entries + 5000, 'the burst reached the webview');
    assert.ok(l.eventLog.posted.batches - batches <= 3, `${l.eventLog.posted.batches - batches} posts for 5,000 entries`);
  });

  it('exports the journal as JSON lines, filtered like the view', async () => {
    const path = join(tmp, 'journal.jsonl');
    const r = ok(await run<{ exported: string }>('reconcileLab.showEventLog', { exportTo: path, filter: { kinds: ['reconcileStart', 'reconcileEnd'] } }));
    assert.match(r.exported, /Exported \d+ entries/);
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    assert.ok(lines.length >= 2, `${lines.length} lines`);
    for (const line of lines) {
      const e = JSON.parse(line) as { seq: number; kind: string };
      assert.equal(typeof e.seq, 'number');
      assert.ok(['reconcileStart', 'reconcileEnd'].includes(e.kind), e.kind);
    }
  });
});
