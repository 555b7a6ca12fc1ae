import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../fakes/fakeClock.ts';
import { createJournal, type JournalEntry } from '../../../../src/core/journal/journal.ts';
import { ControllerLabelling, exportJsonLines, resourceIdFromGvrString, toLogEntryView } from '../../../../src/host/webview/journalView.ts';
import { WriteIndex } from '../../../../src/core/journal/writeIndex.ts';
import type { EnqueueReason } from '../../../../src/core/controller/keyState.ts';

const PRIMARY = 'widgets.lab.reconcile.dev';

function journalWith(): JournalEntry[] {
  const clock = new FakeClock();
  const j = createJournal({ clock, delivery: 'sync' });
  j.append({ kind: 'informer', resource: 'widgets.v1alpha1.lab.reconcile.dev', role: 'primary', event: 'update', objectKey: 'default/w1', resourceVersion: '7', enqueued: ['default/w1'], key: 'default/w1' });
  j.append({ kind: 'informer', resource: 'configmaps.v1', role: 'owned', event: 'delete', objectKey: 'default/w1-config', enqueued: ['default/w1'], key: 'default/w1' });
  j.append({ kind: 'queue', transition: 'waiting', dueAt: clock.now() + 5000, waitKind: 'backoff', key: 'default/w1' });
  j.append({ kind: 'reconcileStart', triggers: [{ kind: 'manual', action: 'step', at: clock.now() }], attempt: 3, via: 'step', key: 'default/w1' });
  j.append({ kind: 'write', verb: 'patch', resource: 'configmaps.v1', gvr: { group: '', version: 'v1', resource: 'configmaps' }, objectKey: 'default/w1-config', dryRun: true, resourceVersionBefore: '8', resourceVersionAfter: '8', key: 'default/w1' });
  j.append({ kind: 'reconcileEnd', outcome: { kind: 'error', message: 'conflict', retryAt: clock.now() + 10 }, durationMs: 12, key: 'default/w1' });
  j.append({ kind: 'warning', code: 'hotLoop', message: 'default/w2 reconciled 50 times in 10 s', key: 'default/w2' });
  j.append({ kind: 'control', action: 'pause', controller: 'widgets' });
  return j.entries();
}

describe('resourceIdFromGvrString', () => {
  it('drops the version', () => {
    assert.equal(resourceIdFromGvrString('widgets.v1alpha1.lab.reconcile.dev'), 'widgets.lab.reconcile.dev');
    assert.equal(resourceIdFromGvrString('configmaps.v1'), 'configmaps');
    assert.equal(resourceIdFromGvrString('deployments.v1.apps'), 'deployments.apps');
  });
});

describe('toLogEntryView', () => {
  const rows = journalWith().map((e) => toLogEntryView(e, PRIMARY));

  it('keeps seq, time and kind and gives one line per entry', () => {
    assert.deepEqual(rows.map((r) => r.kind), ['informer', 'informer', 'queue', 'reconcileStart', 'write', 'reconcileEnd', 'warning', 'control']);
    assert.deepEqual(rows.map((r) => r.seq), [1, 2, 3, 4, 5, 6, 7, 8]);
    for (const r of rows) assert.ok(!r.summary.includes('\n'), r.summary);
  });

  it('names the reconciled object: the primary for its own events, the parent for an owned child event', () => {
    assert.deepEqual([rows[0]!.key, rows[0]!.resource], ['default/w1', PRIMARY]);
    assert.match(rows[0]!.summary, /^update widgets\.lab\.reconcile\.dev default\/w1 rv 7 → enqueued default\/w1$/);
    assert.deepEqual([rows[1]!.key, rows[1]!.resource], ['default/w1', PRIMARY]);
    assert.match(rows[1]!.summary, /delete configmaps default\/w1-config/);
    assert.deepEqual([rows[2]!.key, rows[2]!.resource], ['default/w1', PRIMARY]);
  });

  it('summarises queue waits, steps, dry-run writes, failures, warnings and control actions', () => {
    assert.equal(rows[2]!.summary, 'waiting (backoff, due in 5.0s)');
    assert.match(rows[3]!.summary, /^reconcile #3 \(step\) started: step/);
    assert.equal(rows[4]!.summary, 'patch configmaps default/w1-config rv 8→8 (dry-run)');
    assert.equal(rows[5]!.summary, 'error in 12ms: conflict');
    assert.equal(rows[5]!.level, 'error');
    assert.equal(rows[6]!.level, 'warn');
    assert.equal(rows[7]!.summary, '[widgets] pause');
    assert.equal(rows[7]!.key, undefined);
  });

  it("a write the server warned about (an unknown field it dropped) is a warn row naming the warning", () => {
    const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
    const e = j.recordWrite({ verb: 'update', gvr: { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets' }, namespace: 'default', name: 'w1', dryRun: false, resourceVersionBefore: '8', resourceVersionAfter: '9', warnings: ['unknown field "spec.replicsa"'] });
    const row = toLogEntryView(e, PRIMARY);
    assert.equal(row.summary, 'update widgets.lab.reconcile.dev default/w1 rv 8→9 — server warning: unknown field "spec.replicsa"');
    assert.equal(row.level, 'warn');
    const plain = toLogEntryView(j.recordWrite({ verb: 'update', gvr: { group: '', version: 'v1', resource: 'configmaps' }, namespace: 'default', name: 'c', dryRun: false }), PRIMARY);
    assert.equal(plain.level, 'info');
  });

  it('a delete the server answered NotFound reads "not found (already gone)", not an error row; any other failed write stays one', () => {
    const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
    const cm = { group: '', version: 'v1', resource: 'configmaps' };
    const gone = toLogEntryView(j.recordWrite({ verb: 'delete', gvr: cm, namespace: 'default', name: 'c', dryRun: false, error: 'configmaps "c" not found' }), PRIMARY);
    assert.equal(gone.summary, 'delete configmaps default/c not found (already gone): configmaps "c" not found');
    assert.equal(gone.level, 'info');
    const refused = toLogEntryView(j.recordWrite({ verb: 'delete', gvr: cm, namespace: 'default', name: 'c', dryRun: false, error: 'configmaps "c" is forbidden' }), PRIMARY);
    assert.equal(refused.summary, 'delete configmaps default/c failed: configmaps "c" is forbidden');
    assert.equal(refused.level, 'error');
    const update = toLogEntryView(j.recordWrite({ verb: 'update', gvr: cm, namespace: 'default', name: 'c', dryRun: false, error: 'configmaps "c" not found' }), PRIMARY);
    assert.equal(update.summary, 'update configmaps default/c failed: configmaps "c" not found');
    assert.equal(update.level, 'error');
  });
});

describe('exportJsonLines', () => {
  it('exports the raw entries whose rows match the filter, one JSON object per line', () => {
    const entries = journalWith();
    const all = exportJsonLines(entries, {}, PRIMARY);
    assert.equal(all.count, entries.length);
    assert.equal(all.text.split('\n').filter(Boolean).length, entries.length);
    const errors = exportJsonLines(entries, { kinds: ['reconcileEnd'], key: 'default/w1' }, PRIMARY);
    assert.equal(errors.count, 1);
    assert.equal(JSON.parse(errors.text).outcome.message, 'conflict');
    const text = exportJsonLines(entries, { text: 'HOTLOOP' }, PRIMARY);
    assert.equal(text.count, 1);
  });
});

describe('priorities', () => {
  it('queue and reconcile-start rows show the priority', () => {
    const clock = new FakeClock();
    const j = createJournal({ clock, delivery: 'sync' });
    j.append({ kind: 'queue', transition: 'queued', priority: -100, key: 'default/w1' });
    j.append({ kind: 'queue', transition: 'reprioritized', priority: 0, key: 'default/w1' });
    j.append({ kind: 'reconcileStart', triggers: [], attempt: 1, via: 'worker', priority: 10, key: 'default/w1' });
    const rows = j.entries().map((e) => toLogEntryView(e, PRIMARY).summary);
    assert.deepEqual(rows, ['queued · low priority (-100)', 'priority changed · priority 0', 'reconcile #1 at priority 10 started: no recorded trigger']);
  });
});

describe('toLogEntryView: a reconcile started by its controller\'s own write says so', () => {
  it('names the write\'s reconcile for the causes the lookup attributes to the entry\'s controller, and only then', () => {
    const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
    const ix = new WriteIndex();
    j.onDidAppend((batch) => batch.forEach((e) => ix.note(e)));
    j.recordWrite({ verb: 'update', gvr: { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets' }, namespace: 'default', name: 'w1', subresource: 'status', resourceVersionBefore: '7', resourceVersionAfter: '8', dryRun: false, controller: 'widget', key: 'default/w1' });
    const own = { kind: 'informer' as const, event: 'update' as const, resource: 'widgets.v1alpha1.lab.reconcile.dev', objectKey: 'default/w1', resourceVersion: '8', at: 0 };
    const other = { kind: 'owned' as const, event: 'delete' as const, resource: 'configmaps.v1', child: 'default/w1-config', resourceVersion: '9', at: 0 };
    const start = j.append({ kind: 'reconcileStart', controller: 'widget', triggers: [other, own], attempt: 2, via: 'worker', key: 'default/w1' });
    const lookup = (r: EnqueueReason, controller: string | undefined) => (controller ? ix.reconcileKeyOf(r, controller) : undefined);
    const row = toLogEntryView(start, PRIMARY, lookup);
    assert.match(row.summary, /^reconcile #2 started: update of default\/w1 \(rv 8, this key's own write\), \S+ ago \(\+1 more\)$/, row.summary);
    assert.match(row.detail ?? '', /^delete of owned configmaps\.v1 default\/w1-config \(rv 9\), \S+ ago\nupdate of default\/w1 \(rv 8, this key's own write\)/, row.detail);
    assert.doesNotMatch(toLogEntryView(start, PRIMARY).summary, /own write/, 'without a lookup: the event alone');
    const another = j.append({ kind: 'reconcileStart', controller: 'gadget', triggers: [own], attempt: 1, via: 'worker', key: 'default/w1' });
    assert.doesNotMatch(toLogEntryView(another, PRIMARY, lookup).summary, /own write/, "another controller's reconcile: not its write");
  });
});

describe('toLogEntryView: a reconcile is said to start for the reason that made it due', () => {
  it('a requeue-after or backoff retry not due yet (a Go controller reports the wait when it begins) is not named first, though newest', () => {
    const clock = new FakeClock();
    const j = createJournal({ clock, delivery: 'sync' });
    const own = { kind: 'informer' as const, event: 'update' as const, resource: 'widgets.v1alpha1.lab.reconcile.dev', objectKey: 'default/w1', resourceVersion: '8', at: clock.now() - 5 };
    const wait = { kind: 'requeueAfter' as const, afterMs: 20_000, at: clock.now() + 19_000 };
    const early = j.append({ kind: 'reconcileStart', controller: 'widget', triggers: [own, wait], attempt: 2, via: 'worker', key: 'default/w1' });
    assert.match(toLogEntryView(early, PRIMARY).summary, /^reconcile #2 started: update of default\/w1 \(rv 8\), \S+ ago \(\+1 more\)$/);
    const retry = { kind: 'backoff' as const, attempt: 1, delayMs: 5, at: clock.now() + 5 };
    assert.match(toLogEntryView(j.append({ kind: 'reconcileStart', controller: 'widget', triggers: [own, retry], attempt: 3, via: 'worker', key: 'default/w1' }), PRIMARY).summary, /started: update of default\/w1/);
    // Due by the start: the wait is the reason.
    const due = { kind: 'requeueAfter' as const, afterMs: 20_000, at: clock.now() };
    assert.match(toLogEntryView(j.append({ kind: 'reconcileStart', controller: 'widget', triggers: [own, due], attempt: 4, via: 'worker', key: 'default/w1' }), PRIMARY).summary, /started: requeue after/);
    // Only a wait not due (a step of a waiting key reports its step; with none recorded, the wait is all there is).
    assert.match(toLogEntryView(j.append({ kind: 'reconcileStart', controller: 'widget', triggers: [wait], attempt: 5, via: 'worker', key: 'default/w1' }), PRIMARY).summary, /started: requeue after/);
  });
});

describe('toLogEntryView: rows of a journal shared by several controllers name theirs', () => {
  // A Go program with two controllers beside the built-in loop (paused meanwhile): the loop's informer still journals
  // a ConfigMap's add as "nothing enqueued" while the program's watering-schedule queues it. Unlabelled, the two
  // lines read as one controller contradicting itself.
  it('labels every entry once the journal holds two controllers; the person\'s actions are no controller', () => {
    const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
    const labels = new ControllerLabelling();
    const informer = j.append({ kind: 'informer', controller: 'lab', resource: 'configmaps.v1', role: 'owned', event: 'add', objectKey: 'ns/manual', resourceVersion: '5', enqueued: [] });
    j.append({ kind: 'control', action: 'dryRun', controller: 'reconcile-lab', key: 'ns/w1' });
    assert.equal(labels.note(j.entries()), false, 'one controller and the person');
    const queued = j.append({ kind: 'queue', controller: 'watering-schedule', transition: 'queued', key: 'ns/manual' });
    assert.equal(labels.note([queued]), true);
    assert.equal(toLogEntryView(informer, PRIMARY, undefined, true).summary, '[lab] add configmaps ns/manual rv 5 → nothing enqueued');
    assert.equal(toLogEntryView(queued, PRIMARY, undefined, true).summary, '[watering-schedule] queued');
    assert.equal(toLogEntryView(queued, PRIMARY).summary, 'queued', 'unlabelled by default (one controller)');
    const shutdown = j.append({ kind: 'queue', controller: 'planter', transition: 'shutdown' });
    assert.equal(toLogEntryView(shutdown, PRIMARY, undefined, labels.labelled).summary, '[planter] shutdown', 'whose queue shut down');
    const warning = j.append({ kind: 'warning', code: 'x', message: 'm' });
    assert.equal(toLogEntryView(warning, PRIMARY, undefined, true).summary, 'x: m', 'an entry of no controller has no label');
  });

  it('a control entry of a Go controller names that controller and its resource (a Dry-Run Reconcile of a Planter)', () => {
    const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
    const dry = j.append({ kind: 'control', action: 'dryRun', controller: 'planter', key: 'ns/fern', detail: 'dry-run reconcile of ns/fern in planter (every write dryRun=All)' });
    const resourceOf = (c: string | undefined) => (c === 'planter' ? 'planters.greenhouse.example.net' : PRIMARY);
    const row = toLogEntryView(dry, resourceOf);
    assert.match(row.summary, /^\[planter\] Dry-Run Reconcile \(your action\)/);
    assert.deepEqual([row.key, row.resource], ['ns/fern', 'planters.greenhouse.example.net']);
  });
});

describe('toLogEntryView: queue transitions a newcomer cannot read by name are said in words', () => {
  it('deferred, waitCancelled and reprioritized read as what happened; the entry keeps the name (filters, exports, --json)', () => {
    const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
    const say = (transition: 'deferred' | 'waitCancelled' | 'reprioritized' | 'processing') => {
      const e = j.append({ kind: 'queue', controller: 'widget', transition, key: 'ns/w1' });
      assert.equal(e.kind === 'queue' && e.transition, transition);
      return toLogEntryView(e, PRIMARY).summary;
    };
    assert.equal(say('deferred'), 'added while processing: queued again after this reconcile');
    assert.equal(say('waitCancelled'), 'wait cancelled: queued now');
    assert.equal(say('reprioritized'), 'priority changed');
    assert.equal(say('processing'), 'processing', 'a plain word stays as it is');
  });
});
