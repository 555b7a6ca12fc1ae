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
