import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { createJournal, rvAfterText, writeDeletedText, type JournalEntry } from '../../../src/core/journal/journal.ts';
import { deletedByWrite, type KubeObject } from '../../../src/core/k8s/objects.ts';
import { recordingClient, type WriteRecord } from '../../../src/core/k8s/dynamicClient.ts';
import type { KubeClient } from '../../../src/core/k8s/client.ts';
import { writeRecordOf } from '../../../src/core/bridge/causes.ts';
import { journalWriteOf } from '../../../src/core/actions/controllerContext.ts';
import { formatEntry } from '../../../src/cli/cli.ts';
import { toLogEntryView } from '../../../src/host/webview/journalView.ts';
import { entryDetail } from '../../../src/host/webview/entryDetail.ts';
import { renderReportMarkdown, type ReconcileReport } from '../../../src/core/actions/report.ts';

// A write that removes the last finalizer of a Terminating object makes the API server delete it; the server answers
// with the object at its last resourceVersion, so "rv 596 → 596" read as "nothing happened". Every view says deleted.

const CM = { group: '', version: 'v1', resource: 'configmaps' };
const terminating = (finalizers: string[], grace?: number): KubeObject => ({
  metadata: { name: 'a', namespace: 'ns', resourceVersion: '596', deletionTimestamp: '2026-12-02T13:00:00Z', finalizers, ...(grace !== undefined ? { deletionGracePeriodSeconds: grace } : {}) },
});

test('deletedByWrite: Terminating, no finalizers left and no grace period pending; not a live object, a held one or a Pod in graceful termination', () => {
  assert.equal(deletedByWrite(terminating([])), true);
  assert.equal(deletedByWrite(terminating([], 0)), true);
  assert.equal(deletedByWrite(terminating(['lab.example/hold'])), false);
  assert.equal(deletedByWrite(terminating([], 30)), false);
  assert.equal(deletedByWrite({ metadata: { name: 'a', resourceVersion: '596' } }), false);
  assert.equal(deletedByWrite(undefined), false);
});

test('rvAfterText / writeDeletedText: "deleted" instead of the unchanged resourceVersion, and the sentence (dry run: would)', () => {
  assert.equal(rvAfterText({ resourceVersionAfter: '596', deleted: true }, '—'), 'deleted');
  assert.equal(rvAfterText({ resourceVersionAfter: '597' }, '—'), '597');
  assert.equal(rvAfterText({}, '∅'), '∅');
  assert.equal(writeDeletedText({ deleted: true }), 'removed the last finalizer: the object is deleted');
  assert.equal(writeDeletedText({ deleted: true, dryRun: true }), 'would remove the last finalizer: the object would be deleted');
  assert.equal(writeDeletedText({ resourceVersionAfter: '596' }), undefined);
});

test("the TS client's record of a patch that removed the last finalizer says deleted; a create, a delete and a kept finalizer do not", async () => {
  let answer: KubeObject = terminating([]);
  const inner = {
    get: async () => terminating(['lab.example/hold']),
    patch: async () => answer,
    update: async () => answer,
    create: async () => terminating([]),
    delete: async () => terminating([]),
  } as unknown as KubeClient;
  const records: WriteRecord[] = [];
  const rc = recordingClient(inner, { dryRun: false, onWrite: (r) => records.push(r) });
  await rc.patch(CM, 'ns', 'a', 'merge', { metadata: { finalizers: null } });
  answer = terminating(['lab.example/other']);
  await rc.update(CM, terminating(['lab.example/other']));
  await rc.create(CM, terminating([]));
  await rc.delete(CM, 'ns', 'a');
  assert.deepEqual(records.map((r) => [r.verb, r.deleted ?? false]), [['patch', true], ['update', false], ['create', false], ['delete', false]]);
  assert.equal(records[0]!.resourceVersionBefore, records[0]!.resourceVersionAfter);
  // … and the journal entry of the built-in loop carries it.
  const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
  const e = j.recordWrite(journalWriteOf(records[0]!, 'widgets', 'ns/a'));
  assert.equal(e.kind === 'write' && e.deleted, true);
});

test('a Go write reported deleted reads "rv 596 → deleted" in the CLI, the Event Log row and detail; a plain write keeps its resourceVersions', () => {
  const clock = new FakeClock(Date.UTC(2026, 11, 2, 13, 0, 0));
  const j = createJournal({ clock, delivery: 'sync' });
  const wire = { verb: 'patch', group: '', version: 'v1', resource: 'configmaps', namespace: 'ns', name: 'a', resourceVersionBefore: '596', resourceVersionAfter: '596', dryRun: false };
  const gone = j.recordWrite(writeRecordOf({ ...wire, deleted: true }, 'widgets', 'ns/a')) as JournalEntry & { kind: 'write' };
  const plain = j.recordWrite(writeRecordOf({ ...wire, resourceVersionAfter: '597' }, 'widgets', 'ns/a'));
  assert.equal(gone.deleted, true);
  assert.match(formatEntry(gone, false)!, /✎ patch configmaps ns\/a rv 596 → deleted$/);
  assert.match(formatEntry(plain, false)!, /rv 596 → 597$/);
  assert.match(toLogEntryView(gone, undefined).summary, /^patch configmaps ns\/a rv 596→deleted$/);
  assert.match(toLogEntryView(plain, undefined).summary, /rv 596→597$/);
  const d = entryDetail(j, gone.seq, undefined)!;
  assert.deepEqual(d.fields.find((f) => f.label === 'Deleted'), { label: 'Deleted', value: 'removed the last finalizer: the object is deleted' });
  assert.equal(entryDetail(j, plain.seq, undefined)!.fields.find((f) => f.label === 'Deleted'), undefined);
});

test('the dry-run report says the planned write would delete the object', () => {
  const report: ReconcileReport = {
    generatedAt: '2026-12-02T13:00:00Z', resource: 'widgets.lab.reconcile.dev', reconciler: 'widgets', dryRun: true,
    totals: { objects: 1, writes: 1, changed: 1, unchanged: 0, requeued: 0, errors: 0 },
    entries: [{
      key: 'ns/a', diff: '', explained: false, notes: [], outcome: { kind: 'done' }, requeue: 'no requeue', durationMs: 1, resourceVersionBefore: '596',
      actions: [{ verb: 'update', resource: 'widgets', key: 'ns/a', dryRun: true, outcome: 'ok', resourceVersionBefore: '596', resourceVersionAfter: '596', deleted: true, diff: '' }],
    }],
  };
  const text = renderReportMarkdown(report);
  assert.match(text, /rv 596 → deleted \(would remove the last finalizer: the object would be deleted\)/);
  // A delete answered NotFound (the object was gone: an idempotent delete ignores that) is not called a failure; other errors are.
  const entry = report.entries[0]!;
  const gone = renderReportMarkdown({ ...report, entries: [{ ...entry, actions: [
    { verb: 'delete', resource: 'configmaps', key: 'ns/a-crate', dryRun: false, outcome: 'error', error: 'configmaps "a-crate" not found', diff: '' },
    { verb: 'update', resource: 'configmaps', key: 'ns/a-box', dryRun: false, outcome: 'error', error: 'configmaps "a-box" not found', diff: '' },
  ] }] });
  assert.match(gone, /\| delete configmaps ns\/a-crate \(not found: already gone\)<br>update configmaps ns\/a-box \(failed\) \|/);
  assert.match(gone, /- delete configmaps ns\/a-crate: not found \(already gone\): configmaps "a-crate" not found/);
  assert.match(gone, /- update configmaps ns\/a-box: failed: /);
  // A write that changes nothing (live: the resourceVersion stayed; dry run: planned equals current) is said so.
  const noop = (dryRun: boolean, after: string, diff: string) => renderReportMarkdown({ ...report, dryRun, entries: [{ ...entry, actions: [
    { verb: 'update', subresource: 'status', resource: 'widgets', key: 'ns/a', dryRun, outcome: 'ok', resourceVersionBefore: '414', resourceVersionAfter: after, diff },
  ] }] });
  assert.match(noop(true, '414', ''), /1 write\(s\) planned \(1 changing nothing\)/);
  assert.match(noop(true, '414', ''), /\| update widgets ns\/a \(status\) \(no change\) \|/);
  assert.match(noop(true, '414', ''), /rv 414 → 414 — no change: the object already was as planned/);
  assert.doesNotMatch(noop(true, '414', '--- a\n+++ b\n'), /no change|changing nothing/, 'a dry run with a diff changes something');
  assert.match(noop(false, '414', ''), /1 write\(s\) \(1 changing nothing\)/);
  assert.doesNotMatch(noop(false, '415', ''), /no change|changing nothing/, 'live: the resourceVersion moved');
});

test("a Go write's patch body (and a dry run's objects before and after) reach the Event Log's detail pane", () => {
  const j = createJournal({ clock: new FakeClock(Date.UTC(2026, 11, 4, 12, 0, 0)), delivery: 'sync' });
  const wire = { verb: 'patch', group: 'shop.h4.example.org', version: 'v1', resource: 'gadgets', namespace: 'h4-shop', name: 'g', subresource: 'status', resourceVersionBefore: '461', resourceVersionAfter: '918', dryRun: false };
  const e = j.recordWrite(writeRecordOf({ ...wire, patchType: 'application/merge-patch+json', patch: '{"status":{"phase":"Ready"}}' }, 'gadget', 'h4-shop/g'));
  const d = entryDetail(j, e.seq, undefined)!;
  assert.equal(d.diffNote, undefined, 'the detail is there');
  assert.equal(d.patchType, 'application/merge-patch+json');
  assert.deepEqual(JSON.parse(d.patch!), { status: { phase: 'Ready' } });
  // A body the bridge cut short is not JSON: shown as sent.
  const cut = j.recordWrite(writeRecordOf({ ...wire, patch: '{"status":{"phase":"Re' }, 'gadget', 'h4-shop/g'));
  assert.equal(entryDetail(j, cut.seq, undefined)!.patch, '{"status":{"phase":"Re');
  // A dry-run write: its objects before and after, as a diff.
  const before = { apiVersion: 'shop.h4.example.org/v1', kind: 'Gadget', metadata: { name: 'g', namespace: 'h4-shop' }, status: { phase: 'WaitingFor:stock' } };
  const dry = j.recordWrite(writeRecordOf({ ...wire, dryRun: true, patch: '{"status":{"phase":"Ready"}}', before, after: { ...before, status: { phase: 'Ready' } } }, 'gadget', 'h4-shop/g'));
  assert.match(entryDetail(j, dry.seq, undefined)!.diff!, /-\s+phase: WaitingFor:stock\n\+\s+phase: Ready/);
  // Nothing sent (a Secret's write, a delete): no detail, as before.
  const none = j.recordWrite(writeRecordOf(wire, 'gadget', 'h4-shop/g'));
  assert.match(entryDetail(j, none.seq, undefined)!.diffNote!, /^This write was journaled without its body or objects: a Go controller's live writes carry none .*Dry-Run Reconcile of h4-shop\/g/);
});
