import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../fakes/fakeClock.ts';
import { createJournal } from '../../../../src/core/journal/journal.ts';
import { entryDetail, maskSecret } from '../../../../src/host/webview/entryDetail.ts';
import { toLogEntryView } from '../../../../src/host/webview/journalView.ts';

const PRIMARY = 'widgets.lab.reconcile.dev';
const CM = { group: '', version: 'v1', resource: 'configmaps' };

function scenario() {
  const clock = new FakeClock();
  const j = createJournal({ clock, delivery: 'sync' });
  const ev = j.append({ kind: 'informer', controller: 'widgets', resource: 'widgets.v1alpha1.lab.reconcile.dev', role: 'primary', event: 'update', objectKey: 'ns/w1', resourceVersion: '7', enqueued: ['ns/w1'] });
  clock.step(2);
  const start = j.append({
    kind: 'reconcileStart', controller: 'widgets', key: 'ns/w1', attempt: 2, via: 'worker',
    triggers: [{ kind: 'informer', event: 'update', resource: 'widgets.v1alpha1.lab.reconcile.dev', objectKey: 'ns/w1', resourceVersion: '7', at: clock.now() - 2 }],
  });
  clock.step(3);
  const write = j.recordWrite({
    verb: 'patch', gvr: CM, namespace: 'ns', name: 'w1-config', controller: 'widgets', key: 'ns/w1', dryRun: false, resourceVersionBefore: '8', resourceVersionAfter: '9',
    detail: {
      patchType: 'merge', patch: { data: { color: 'purple' } },
      before: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w1-config', namespace: 'ns', resourceVersion: '8' }, data: { color: 'blue' } },
      after: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w1-config', namespace: 'ns', resourceVersion: '9' }, data: { color: 'purple' } },
    },
  });
  clock.step(1);
  const end = j.append({ kind: 'reconcileEnd', controller: 'widgets', key: 'ns/w1', outcome: { kind: 'error', message: 'status update failed:\nline two of the error', retryAt: clock.now() + 10, failures: 1 }, durationMs: 4 });
  const action = j.append({ kind: 'control', action: 'resetBackoff', controller: 'widgets', key: 'ns/w1' });
  const strip = j.append({ kind: 'control', action: 'stripFinalizers', controller: 'reconcile-lab', key: 'ns/w1', detail: 'legacy.example.com/x' });
  return { j, ev, start, write, end, action, strip };
}

describe('entryDetail', () => {
  it("a write the server warned about names the warnings, and says an unknown field was never stored", () => {
    const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
    const w = j.recordWrite({ verb: 'update', gvr: { group: 'shop.example.io', version: 'v1', resource: 'orders' }, namespace: 'ns', name: 'o1', controller: 'orders', key: 'ns/o1', dryRun: false, resourceVersionBefore: '3', resourceVersionAfter: '4', warnings: ['unknown field "spec.tier"'] });
    const f = entryDetail(j, w.seq, 'orders.shop.example.io')!.fields.find((x) => x.label === 'Server warnings');
    assert.match(f?.value ?? '', /^unknown field "spec\.tier"\n\(the server dropped each unknown field: it is not in the resource's schema/);
    const other = j.recordWrite({ verb: 'update', gvr: CM, namespace: 'ns', name: 'c', dryRun: false, warnings: ['v1 ComponentStatus is deprecated'] });
    assert.equal(entryDetail(j, other.seq, PRIMARY)!.fields.find((x) => x.label === 'Server warnings')?.value, 'v1 ComponentStatus is deprecated', 'no unknown-field note for another warning');
    const plain = j.recordWrite({ verb: 'update', gvr: CM, namespace: 'ns', name: 'd', dryRun: false });
    assert.equal(entryDetail(j, plain.seq, PRIMARY)!.fields.some((x) => x.label === 'Server warnings'), false);
  });
  it('a write shows its patch body, the object diff before → after, the cause and its reconcile', () => {
    const { j, start, write, end } = scenario();
    const d = entryDetail(j, write.seq, PRIMARY)!;
    assert.equal(d.seq, write.seq);
    assert.equal(d.fields.find((x) => x.label === 'Entry')?.value, `#${write.seq} · API write (write)`, "the Event Log's words, with the kind an export names");
    assert.equal(d.patchType, 'merge');
    assert.deepEqual(JSON.parse(d.patch!), { data: { color: 'purple' } });
    assert.match(d.diff!, /^-\s+color: blue$/m);
    assert.match(d.diff!, /^\+\s+color: purple$/m);
    assert.doesNotMatch(d.diff!, /resourceVersion/, 'volatile fields are not part of the diff');
    assert.equal(d.cause?.length, 1, 'the triggers of its reconcile');
    assert.match(d.cause[0]!, /update/);
    assert.ok(d.reconcile, 'the reconcile it belongs to');
    assert.match(d.reconcile.label, /Reconcile #2 of ns\/w1/);
    assert.deepEqual(d.reconcile.entries.map((e) => e.seq), [start.seq, write.seq, end.seq]);
    assert.ok(d.fields.some((f) => f.label === 'resourceVersion' && f.value === '8 → 9'));
  });

  it('a time field carries its epoch ms beside its ISO text, so the page can show it in its own local time as its rows do', () => {
    const { j, end } = scenario();
    const d = entryDetail(j, end.seq, PRIMARY)!;
    const time = d.fields.find((f) => f.label === 'Time');
    assert.deepEqual(time, { label: 'Time', value: new Date(end.at).toISOString(), at: end.at });
    const retry = d.fields.find((f) => f.label === 'Retry at');
    assert.deepEqual(retry, { label: 'Retry at', value: new Date(end.at + 10).toISOString(), at: end.at + 10 });
    assert.equal(d.fields.find((f) => f.label === 'Failures in a row')?.at, undefined, 'other fields are not times');
  });

  it('a reconcile end carries the whole multi-line message; its reconcile lists the same entries', () => {
    const { j, start, end } = scenario();
    const d = entryDetail(j, end.seq, PRIMARY)!;
    assert.equal(d.message, 'status update failed:\nline two of the error');
    assert.equal(d.level, 'error');
    assert.equal(d.reconcile?.entries[0]?.seq, start.seq);
    assert.ok(d.fields.some((f) => f.label === 'Failures in a row' && f.value === '1'));
  });

  it('an informer event says what it enqueued and belongs to no reconcile', () => {
    const { j, ev } = scenario();
    const d = entryDetail(j, ev.seq, PRIMARY)!;
    assert.deepEqual(d.cause, ['enqueued ns/w1']);
    assert.equal(d.reconcile, undefined);
    assert.equal(d.diff, undefined);
  });

  it('a person\'s actions are named entries', () => {
    const { j, action, strip } = scenario();
    assert.match(toLogEntryView(j.get(action.seq)!, PRIMARY).summary, /\] Reset Backoff \(your action\)$/);
    const d = entryDetail(j, strip.seq, PRIMARY)!;
    assert.match(d.title, /Strip Finalizers \(your action\): legacy\.example\.com\/x/);
    assert.ok(d.fields.some((f) => f.label === 'By' && f.value === 'you'));
  });

  it('an action Reconcile Lab took on its own (retrying backoffs when the module changed) is not called yours', () => {
    const { j } = scenario();
    const auto = j.append({ kind: 'control', action: 'enqueue', controller: 'widgets', key: 'ns/w1', detail: 'reconciler module db.ts changed', automatic: true });
    assert.match(toLogEntryView(j.get(auto.seq)!, PRIMARY).summary, /\] Enqueue \(automatic\): reconciler module db\.ts changed$/);
    const d = entryDetail(j, auto.seq, PRIMARY)!;
    assert.ok(d.fields.some((f) => f.label === 'By' && f.value === 'Reconcile Lab, on its own'), JSON.stringify(d.fields));
  });

  it('a live write recorded without a body (a Go controller\'s Create or Update of a Secret) says so and points at Dry-Run Reconcile, not at a detail that was never dropped', () => {
    const j = createJournal({ clock: new FakeClock(), delivery: 'sync', detailCapacity: 1 });
    const SECRETS = { group: '', version: 'v1', resource: 'secrets' };
    const live = j.recordWrite({ verb: 'update', gvr: SECRETS, namespace: 'userdb', name: 'users-credentials', controller: 'database', key: 'userdb/users', dryRun: false, resourceVersionBefore: '285', resourceVersionAfter: '729' });
    const note = entryDetail(j, live.seq, 'databases.data.example.org')!.diffNote!;
    assert.doesNotMatch(note, /newest writes only/, 'the newest write, nothing was dropped');
    assert.equal(note, 'This write was journaled without its body or objects: a Go controller\'s live writes carry none (only a Patch\'s body, never a Secret\'s). Dry-Run Reconcile of userdb/users shows what a reconcile writes, with each object\'s diff.');
    // Details dropped beyond the capacity (or by Clear) are named as dropped, also for a write without one among them.
    const a = j.recordWrite({ verb: 'create', gvr: CM, namespace: 'ns', name: 'a', dryRun: false, detail: { after: { kind: 'ConfigMap', metadata: { name: 'a' } } } });
    j.recordWrite({ verb: 'create', gvr: CM, namespace: 'ns', name: 'b', dryRun: false, detail: { after: { kind: 'ConfigMap', metadata: { name: 'b' } } } });
    assert.match(entryDetail(j, a.seq, PRIMARY)!.diffNote!, /newest writes only: this write's were dropped/);
    const c = j.recordWrite({ verb: 'create', gvr: CM, namespace: 'ns', name: 'c', dryRun: false, detail: { after: { kind: 'ConfigMap', metadata: { name: 'c' } } } });
    assert.equal(entryDetail(j, c.seq, PRIMARY)!.diffNote, undefined, 'kept');
    assert.equal(j.writeDetailMayBeDropped(c.seq), false);
    j.clear();
    assert.equal(j.writeDetailMayBeDropped(c.seq), true, 'a clear drops the kept details too');
  });

  it('a write whose details are gone says so; an entry no longer held is undefined', () => {
    const clock = new FakeClock();
    const j = createJournal({ clock, capacity: 3, detailCapacity: 1 });
    const a = j.recordWrite({ verb: 'create', gvr: CM, namespace: 'ns', name: 'a', dryRun: true, detail: { after: { kind: 'ConfigMap', metadata: { name: 'a' } } } });
    const b = j.recordWrite({ verb: 'create', gvr: CM, namespace: 'ns', name: 'b', dryRun: true, detail: { after: { kind: 'ConfigMap', metadata: { name: 'b' } } } });
    assert.match(entryDetail(j, a.seq, PRIMARY)!.diffNote!, /newest writes only/);
    const db = entryDetail(j, b.seq, PRIMARY)!;
    assert.match(db.diff!, /^\+\s+name: b$/m, 'a create diffs from nothing');
    assert.ok(db.fields.some((f) => f.label === 'Dry run'));
    for (let i = 0; i < 3; i++) j.append({ kind: 'warning', code: 'x', message: 'm' });
    assert.equal(entryDetail(j, a.seq, PRIMARY), undefined);
  });

  it('Secret values are masked in patches and diffs', () => {
    assert.deepEqual(maskSecret({ kind: 'Secret', data: { password: 'c2VjcmV0' }, stringData: { token: 't' } }), { kind: 'Secret', data: { password: '***' }, stringData: { token: '***' } });
    const clock = new FakeClock();
    const j = createJournal({ clock });
    const w = j.recordWrite({
      verb: 'update', gvr: { group: '', version: 'v1', resource: 'secrets' }, namespace: 'ns', name: 's', dryRun: false,
      detail: { before: { kind: 'Secret', metadata: { name: 's' }, data: { password: 'b2xk' } }, after: { kind: 'Secret', metadata: { name: 's' }, data: { password: 'bmV3' } } },
    });
    const d = entryDetail(j, w.seq, PRIMARY)!;
    assert.doesNotMatch(d.diff ?? '', /b2xk|bmV3/);
    assert.match(d.diff ?? '', /password: "\*\*\* \(after\)"/, 'the diff still says which key changed');
    // A merge patch to a Secret carries no kind: masked because the write went to secrets.
    const p = j.recordWrite({
      verb: 'patch', gvr: { group: '', version: 'v1', resource: 'secrets' }, namespace: 'ns', name: 's', dryRun: false,
      detail: { patchType: 'merge', patch: { data: { password: 'bmV3' } } },
    });
    assert.doesNotMatch(entryDetail(j, p.seq, PRIMARY)!.patch ?? '', /bmV3/);
  });

  it('a dry-run write belongs to the person\'s Dry-Run Reconcile: its cause and its planned writes, not a loop reconcile', () => {
    const { j } = scenario();
    const action = j.append({ kind: 'control', action: 'dryRun', controller: 'reconcile-lab', key: 'ns/w1', detail: 'dry-run reconcile of ns/w1' });
    const other = j.append({ kind: 'informer', controller: 'widgets', resource: 'widgets.v1alpha1.lab.reconcile.dev', role: 'primary', event: 'update', objectKey: 'ns/w2', resourceVersion: '11', enqueued: ['ns/w2'] });
    const w1 = j.recordWrite({ verb: 'patch', gvr: CM, namespace: 'ns', name: 'w1-config', controller: 'reconcile-lab', key: 'ns/w1', dryRun: true });
    const w2 = j.recordWrite({ verb: 'update', gvr: { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets' }, namespace: 'ns', name: 'w1', subresource: 'status', controller: 'reconcile-lab', key: 'ns/w1', dryRun: true });
    const later = j.recordWrite({ verb: 'patch', gvr: CM, namespace: 'ns', name: 'w1-config', controller: 'reconcile-lab', key: 'ns/w1', dryRun: false });
    for (const seq of [action.seq, w1.seq, w2.seq]) {
      const d = entryDetail(j, seq, PRIMARY)!;
      assert.match(d.reconcile?.label ?? '', /^Dry-Run Reconcile of ns\/w1 \(your action; nothing was stored\)$/, `entry ${seq}`);
      assert.deepEqual(d.reconcile!.entries.map((e) => e.seq), [action.seq, w1.seq, w2.seq], 'the action and its planned writes, not the other key\'s event nor the later real write');
      assert.match(d.cause?.[0] ?? '', /Dry-Run Reconcile/);
    }
    assert.ok(!entryDetail(j, other.seq, PRIMARY)!.reconcile, 'another key\'s entry is not part of it');
    assert.ok(!entryDetail(j, later.seq, PRIMARY)!.reconcile, 'a real write after it is not part of it');
    // A dry-run write whose action is no longer retained has no such section.
    const k = createJournal({ clock: new FakeClock(), capacity: 2 });
    k.append({ kind: 'control', action: 'dryRun', controller: 'reconcile-lab', key: 'ns/w1' });
    k.append({ kind: 'warning', code: 'x', message: 'm' });
    const orphan = k.recordWrite({ verb: 'patch', gvr: CM, namespace: 'ns', name: 'w1-config', controller: 'reconcile-lab', key: 'ns/w1', dryRun: true });
    assert.equal(entryDetail(k, orphan.seq, PRIMARY)!.reconcile, undefined);
  });
});
