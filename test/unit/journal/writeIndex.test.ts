import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal } from '../../../src/core/journal/journal.ts';
import { WriteIndex } from '../../../src/core/journal/writeIndex.ts';
import type { EnqueueReason } from '../../../src/core/controller/keyState.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';

const cm = { group: '', version: 'v1', resource: 'configmaps' };
const write = (name: string, before: string | undefined, after: string | undefined, more: { controller?: string; key?: string; dryRun?: boolean; error?: string; deleted?: true } = {}) => ({
  verb: 'update' as const,
  gvr: cm,
  namespace: 'ns',
  name,
  ...(before ? { resourceVersionBefore: before } : {}),
  ...(after ? { resourceVersionAfter: after } : {}),
  dryRun: more.dryRun ?? false,
  ...(more.error ? { error: more.error } : {}),
  ...(more.deleted ? { deleted: true as const } : {}),
  detail: {},
  ...(more.controller ? { controller: more.controller } : {}),
  ...(more.key ? { key: more.key } : {}),
});

test('WriteIndex: a persisted write that changed its object is attributed to its controller and key, for each kind of event cause', () => {
  const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
  const ix = new WriteIndex();
  j.onDidAppend((batch) => batch.forEach((e) => ix.note(e)));
  j.recordWrite(write('a-config', '10', '12', { controller: 'widget', key: 'ns/a' }));
  j.recordWrite(write('a', '20', '21', { controller: 'widget', key: 'ns/a' }));
  j.recordWrite(write('shelf', '30', '31', { controller: 'stove', key: 'ns/main' }));
  j.recordWrite(write('by-hand', '40', '41', { controller: 'reconcile-lab' }));
  const owned: EnqueueReason = { kind: 'owned', event: 'update', resource: 'configmaps', child: 'ns/a-config', resourceVersion: '12', at: 0 };
  const informer: EnqueueReason = { kind: 'informer', event: 'update', resource: 'configmaps', objectKey: 'ns/a', resourceVersion: '21', at: 0 };
  const watch: EnqueueReason = { kind: 'watch', event: 'update', resource: 'configmaps', objectKey: 'ns/shelf', resourceVersion: '31', at: 0 };
  assert.equal(ix.reconcileKeyOf(owned, 'widget'), 'ns/a');
  assert.equal(ix.reconcileKeyOf(informer, 'widget'), 'ns/a');
  assert.equal(ix.reconcileKeyOf(watch, 'widget'), undefined, "stove's write is not widget's");
  assert.equal(ix.reconcileKeyOf(watch, 'stove'), 'ns/main');
  const byHand: EnqueueReason = { kind: 'informer', event: 'update', resource: 'configmaps', objectKey: 'ns/by-hand', resourceVersion: '41', at: 0 };
  assert.deepEqual(ix.writerOf(byHand), { controller: 'reconcile-lab', key: 'ns/by-hand' }, "the journal keys a write made outside a reconcile by its object");
  assert.equal(ix.reconcileKeyOf(byHand, 'widget'), undefined, "a person's write through Reconcile Lab is not the controller's");
  assert.equal(ix.reconcileKeyOf({ ...owned, resourceVersion: '13' }, 'widget'), undefined, 'another version of the same object');
  assert.equal(ix.reconcileKeyOf({ kind: 'owned', event: 'update', resource: 'configmaps', child: 'ns/a-config', at: 0 }, 'widget'), undefined, 'an event without a resourceVersion');
  assert.equal(ix.writerOf({ kind: 'backoff', attempt: 1, delayMs: 5, at: 0 }), undefined);
  assert.equal(ix.writerOf({ kind: 'manual', action: 'reconcileNow', at: 0 }), undefined);
});

test('WriteIndex: dry runs, failures, deletes and writes that left the resourceVersion as it was are no one\'s; a later write of the same version wins; the oldest are dropped past max', () => {
  const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
  const ix = new WriteIndex(3);
  j.onDidAppend((batch) => batch.forEach((e) => ix.note(e)));
  const w = { controller: 'widget', key: 'ns/a' };
  assert.equal(ix.note(j.recordWrite(write('dry', '1', '2', { ...w, dryRun: true }))), undefined);
  assert.equal(ix.note(j.recordWrite(write('failed', '1', undefined, { ...w, error: '409 Conflict: stale' }))), undefined);
  assert.equal(ix.note(j.recordWrite(write('noop', '5', '5', w))), undefined);
  assert.equal(ix.note(j.recordWrite(write('gone', '6', '7', { ...w, deleted: true }))), undefined);
  for (const [name, rv] of [['dry', '2'], ['noop', '5'], ['gone', '7']] as const) assert.equal(ix.writer(`ns/${name}`, rv), undefined, name);
  j.recordWrite(write('x', '1', '2', w));
  j.recordWrite(write('y', '1', '2', w));
  j.recordWrite(write('z', '1', '2', w));
  assert.deepEqual(ix.writer('ns/x', '2'), w);
  j.recordWrite(write('x', '1', '2', { controller: 'widget', key: 'ns/b' })); // noted again: now the newest
  j.recordWrite(write('v', '1', '2', w));
  assert.equal(ix.writer('ns/y', '2'), undefined, 'the oldest went past max = 3');
  assert.deepEqual(ix.writer('ns/x', '2'), { controller: 'widget', key: 'ns/b' });
  assert.deepEqual([ix.writer('ns/z', '2'), ix.writer('ns/v', '2')], [w, w]);
  ix.clear();
  assert.equal(ix.writer('ns/x', '2'), undefined);
});
