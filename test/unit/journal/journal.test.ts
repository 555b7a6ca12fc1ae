import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, type JournalEntry } from '../../../src/core/journal/journal.ts';
import { FakeClock, flushMicrotasks } from '../../fakes/fakeClock.ts';

const gvr = { group: 'lab.reconcile.dev', version: 'v1', resource: 'widgets' };

test('entries get monotonic sequence numbers and Clock timestamps, in append order', () => {
  const clock = new FakeClock();
  const j = createJournal({ clock });
  const a = j.append({ kind: 'control', action: 'start', controller: 'c' });
  clock.step(5);
  const b = j.append({ kind: 'queue', transition: 'queued', key: 'ns/a', controller: 'c' });
  assert.equal(a.seq, 1);
  assert.equal(b.seq, 2);
  assert.equal(b.at - a.at, 5);
  assert.equal(j.lastSeq, 2);
  assert.deepEqual(j.entries().map((e) => e.seq), [1, 2]);
  assert.ok(Object.isFrozen(b));
  assert.equal(j.get(2), b);
  assert.equal(j.get(3), undefined);
});

test('the ring buffer keeps the newest `capacity` entries; seq shows the gap', () => {
  const j = createJournal({ clock: new FakeClock(), capacity: 3 });
  for (let i = 0; i < 7; i++) j.append({ kind: 'queue', transition: 'queued', key: `k${i}` });
  assert.equal(j.size, 3);
  assert.equal(j.firstSeq, 5);
  assert.deepEqual(j.entries().map((e) => e.key), ['k4', 'k5', 'k6']);
  assert.equal(j.get(4), undefined);
  assert.equal(j.get(5)?.key, 'k4');
  j.resize(2);
  assert.deepEqual(j.entries().map((e) => e.seq), [6, 7]);
  j.resize(5);
  j.append({ kind: 'queue', transition: 'queued', key: 'k7' });
  assert.deepEqual(j.entries().map((e) => e.seq), [6, 7, 8]);
  j.clear();
  assert.equal(j.size, 0);
  assert.equal(j.append({ kind: 'control', action: 'pause' }).seq, 9, 'seq continues after clear');
  assert.throws(() => createJournal({ clock: new FakeClock(), capacity: 0 }), RangeError);
});

test('dropped counts the entries lost since the last clear (ring buffer and a smaller resize), so a full log can say so', () => {
  const j = createJournal({ clock: new FakeClock(), capacity: 3 });
  for (let i = 0; i < 3; i++) j.append({ kind: 'queue', transition: 'queued', key: `k${i}` });
  assert.equal(j.dropped, 0, 'nothing lost while the buffer has room');
  for (let i = 3; i < 10; i++) j.append({ kind: 'queue', transition: 'queued', key: `k${i}` });
  assert.equal(j.dropped, 7);
  assert.equal(j.dropped, j.firstSeq - 1, 'every entry before the oldest held is counted');
  j.resize(1);
  assert.equal(j.dropped, 9);
  j.resize(4);
  assert.equal(j.dropped, 9, 'growing loses nothing');
  j.clear();
  assert.equal(j.dropped, 0, 'Clear starts a new count: what was cleared was not lost');
  for (let i = 0; i < 6; i++) j.append({ kind: 'queue', transition: 'queued', key: `c${i}` });
  assert.equal(j.dropped, 2);
});

test('filters by key (entry key or object key), kinds, controller, sinceSeq and limit', () => {
  const j = createJournal({ clock: new FakeClock() });
  j.append({ kind: 'informer', controller: 'c1', key: 'ns/a', resource: 'widgets.v1.lab', role: 'primary', event: 'add', objectKey: 'ns/a', enqueued: ['ns/a'] });
  j.append({ kind: 'informer', controller: 'c1', key: 'ns/a', resource: 'configmaps.v1', role: 'owned', event: 'update', objectKey: 'ns/a-cm', enqueued: ['ns/a'] });
  j.append({ kind: 'queue', controller: 'c1', key: 'ns/a', transition: 'queued' });
  j.append({ kind: 'queue', controller: 'c2', key: 'ns/b', transition: 'queued' });
  j.recordWrite({ verb: 'update', gvr: { group: '', version: 'v1', resource: 'configmaps' }, namespace: 'ns', name: 'a-cm', dryRun: false, controller: 'c1', key: 'ns/a' });
  assert.deepEqual(j.entries({ key: 'ns/a' }).map((e) => e.seq), [1, 2, 3, 5]);
  assert.deepEqual(j.entries({ key: 'ns/a-cm' }).map((e) => e.seq), [2, 5], 'the object key matches too');
  assert.deepEqual(j.entries({ kinds: ['queue'] }).map((e) => e.seq), [3, 4]);
  assert.deepEqual(j.entries({ kinds: ['queue', 'write'], controller: 'c1' }).map((e) => e.seq), [3, 5]);
  assert.deepEqual(j.entries({ sinceSeq: 3 }).map((e) => e.seq), [4, 5]);
  assert.deepEqual(j.entries({ limit: 2 }).map((e) => e.seq), [4, 5]);
  assert.deepEqual(j.entries({ key: 'ns/a', limit: 1 }).map((e) => e.seq), [5]);
  assert.deepEqual(j.entries({ kinds: [] }).length, 5, 'an empty kinds list matches everything');
});

test('recordWrite records verb, resource, object, resourceVersions before/after and dry-run', () => {
  const j = createJournal({ clock: new FakeClock() });
  const e = j.recordWrite({
    verb: 'patch',
    gvr,
    namespace: 'ns',
    name: 'a',
    subresource: 'status',
    resourceVersionBefore: '10',
    resourceVersionAfter: '11',
    dryRun: true,
    controller: 'widgets',
  });
  assert.deepEqual({ ...e }, {
    seq: 1,
    at: e.at,
    kind: 'write',
    verb: 'patch',
    resource: 'widgets.v1.lab.reconcile.dev',
    gvr,
    objectKey: 'ns/a',
    dryRun: true,
    key: 'ns/a',
    controller: 'widgets',
    subresource: 'status',
    resourceVersionBefore: '10',
    resourceVersionAfter: '11',
  });
  const failed = j.recordWrite({ verb: 'create', gvr, name: 'cluster-thing', dryRun: false, error: 'AlreadyExists', key: 'ns/owner' });
  assert.equal(failed.kind === 'write' && failed.objectKey, 'cluster-thing');
  assert.equal(failed.key, 'ns/owner');
  assert.equal(failed.kind === 'write' && failed.error, 'AlreadyExists');
});

test('exports JSON lines that parse back to the entries', () => {
  const j = createJournal({ clock: new FakeClock() });
  j.append({ kind: 'control', action: 'start', controller: 'c' });
  j.append({ kind: 'warning', code: 'hotLoop', message: 'line one\nline two "quoted"', key: 'ns/a' });
  const text = j.toJsonLines();
  const lines = text.split('\n');
  assert.equal(lines.length, 3);
  assert.equal(lines[2], '');
  assert.deepEqual(lines.slice(0, 2).map((l) => JSON.parse(l)), j.entries().map((e) => ({ ...e })));
  assert.equal(j.toJsonLines({ kinds: ['warning'] }).trim().split('\n').length, 1);
  assert.equal(createJournal({ clock: new FakeClock() }).toJsonLines(), '');
});

test('onDidAppend batches the entries of one synchronous stretch (microtask delivery)', async () => {
  const j = createJournal({ clock: new FakeClock() });
  const batches: number[][] = [];
  j.onDidAppend((b) => batches.push(b.map((e) => e.seq)));
  j.append({ kind: 'control', action: 'pause' });
  j.append({ kind: 'control', action: 'resume' });
  j.append({ kind: 'control', action: 'pause' });
  assert.deepEqual(batches, [], 'not delivered synchronously');
  await flushMicrotasks();
  assert.deepEqual(batches, [[1, 2, 3]]);
  j.append({ kind: 'control', action: 'resume' });
  j.flush();
  assert.deepEqual(batches, [[1, 2, 3], [4]], 'flush delivers at once');
  await flushMicrotasks();
  assert.equal(batches.length, 2, 'no empty batch');
});

test('sync delivery fires one batch per append; every entry is delivered once even if the ring dropped it', () => {
  const j = createJournal({ clock: new FakeClock(), capacity: 2, delivery: 'sync' });
  const seen: JournalEntry[] = [];
  j.onDidAppend((b) => seen.push(...b));
  for (let i = 0; i < 5; i++) j.append({ kind: 'queue', transition: 'queued', key: `k${i}` });
  assert.deepEqual(seen.map((e) => e.seq), [1, 2, 3, 4, 5]);
  let cleared = 0;
  j.onDidClear(() => cleared++);
  j.clear();
  assert.equal(cleared, 1);
  j.dispose();
  j.append({ kind: 'control', action: 'stop' });
  assert.equal(seen.length, 5, 'no delivery after dispose');
});

test('write details (patch, before, after) are kept beside the newest writes only, and not exported', () => {
  const clock = new FakeClock();
  const j = createJournal({ clock, detailCapacity: 2 });
  const w = (name: string) =>
    j.recordWrite({ verb: 'patch', gvr, namespace: 'ns', name, dryRun: false, detail: { patchType: 'merge', patch: { spec: { n: name } }, before: { spec: {} }, after: { spec: { n: name } } } });
  const a = w('a');
  const b = w('b');
  const c = w('c');
  assert.equal(j.writeDetail(a.seq), undefined, 'the oldest detail is dropped beyond detailCapacity');
  assert.deepEqual(j.writeDetail(b.seq)?.patch, { spec: { n: 'b' } });
  assert.equal(j.writeDetail(c.seq)?.patchType, 'merge');
  assert.doesNotMatch(j.toJsonLines(), /"spec"|"before"/, 'details stay out of the entries and their export');
  j.clear();
  assert.equal(j.writeDetail(c.seq), undefined);
});

test('reconcileOf finds the reconcile an entry belongs to, with its other entries; none outside a reconcile', () => {
  const clock = new FakeClock();
  const j = createJournal({ clock });
  const q = j.append({ kind: 'queue', transition: 'queued', key: 'ns/a', controller: 'c' });
  const s1 = j.append({ kind: 'reconcileStart', key: 'ns/a', controller: 'c', triggers: [], attempt: 1, via: 'step' });
  j.append({ kind: 'reconcileStart', key: 'ns/b', controller: 'c', triggers: [], attempt: 1, via: 'worker' });
  const w = j.recordWrite({ verb: 'update', gvr, namespace: 'ns', name: 'a', dryRun: false, controller: 'c', key: 'ns/a' });
  const other = j.recordWrite({ verb: 'update', gvr, namespace: 'ns', name: 'x', dryRun: false, controller: 'reconcile-lab', key: 'ns/a' });
  const e1 = j.append({ kind: 'reconcileEnd', key: 'ns/a', controller: 'c', outcome: { kind: 'success' }, durationMs: 3 });
  const after = j.append({ kind: 'queue', transition: 'done', key: 'ns/a', controller: 'c' });
  const s2 = j.append({ kind: 'reconcileStart', key: 'ns/a', controller: 'c', triggers: [], attempt: 2, via: 'worker' });

  const span = j.reconcileOf(w.seq)!;
  assert.equal(span.start, s1);
  assert.equal(span.end, e1);
  assert.deepEqual(span.entries.map((e) => e.seq), [s1.seq, w.seq, e1.seq], 'only the same controller and key');
  assert.equal(j.reconcileOf(e1.seq)?.start, s1, 'the end belongs to its reconcile');
  assert.equal(j.reconcileOf(s1.seq)?.end, e1);
  assert.equal(j.reconcileOf(q.seq), undefined, 'before the start');
  assert.equal(j.reconcileOf(after.seq), undefined, 'after the end');
  assert.equal(j.reconcileOf(other.seq), undefined, 'another controller (a person\'s write) is not part of it');
  const open = j.reconcileOf(s2.seq)!;
  assert.equal(open.end, undefined, 'a reconcile still running has no end yet');
  assert.deepEqual(open.entries.map((e) => e.seq), [s2.seq]);
});
