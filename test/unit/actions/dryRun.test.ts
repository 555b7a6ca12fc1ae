import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changesNothing, noWritesText, plannedActions, UNCHANGED_WRITE_NOTE, unchangedWriteNote } from '../../../src/core/actions/dryRun.ts';
import { writeDiff } from '../../../src/core/actions/objectDiff.ts';
import type { WriteRecord } from '../../../src/core/k8s/dynamicClient.ts';

test('a planned write changes nothing when it was accepted, is no delete, and its diff is empty', () => {
  assert.equal(changesNothing({ verb: 'update', diff: '', outcome: 'ok' }), true);
  assert.equal(changesNothing({ verb: 'patch', diff: undefined }), true);
  assert.equal(changesNothing({ verb: 'update', diff: '-a: 1\n+a: 2' }), false);
  assert.equal(changesNothing({ verb: 'update', diff: '', outcome: 'error' }), false, 'a refused write is said as refused');
  assert.equal(changesNothing({ verb: 'update', diff: '', error: '409 Conflict' }), false);
  assert.equal(changesNothing({ verb: 'delete', diff: '' }), false, 'a delete is said by its own text');
  assert.match(UNCHANGED_WRITE_NOTE, /^changes nothing \(/);
});

test('an unchanged server-side apply is not told to compare before writing (apply sends the whole intent on every pass); other writes are', () => {
  assert.equal(unchangedWriteNote('update'), UNCHANGED_WRITE_NOTE);
  assert.equal(unchangedWriteNote('patch'), UNCHANGED_WRITE_NOTE);
  assert.match(unchangedWriteNote('apply'), /^changes nothing \(the object already is as applied: a server-side apply sent on every pass stores nothing then\)$/);
  assert.doesNotMatch(unchangedWriteNote('apply'), /compare before writing/);
});

test('no planned write reads "already as desired" only after a pass that ended done; a failed or requeued pass says so', () => {
  assert.equal(noWritesText({ kind: 'done' }), 'none (already as desired)');
  assert.equal(noWritesText({ kind: 'error', error: 'TypeError: x' }), 'none before it failed (a failed reconcile says nothing about the desired state)');
  assert.equal(noWritesText({ kind: 'terminal', error: 'bad spec' }), noWritesText({ kind: 'error', error: '' }));
  assert.equal(noWritesText({ kind: 'requeueAfter', requeueAfterMs: 20_000, reason: 'waiting' }), 'none yet (it asked to run again: nothing to write until then)');
  assert.equal(noWritesText({ kind: 'requeue' }), noWritesText({ kind: 'requeueAfter', requeueAfterMs: 1 }));
});

test('a dry-run write\'s diff reads current → planned; a live write\'s (a live report) before → after', () => {
  const write = (dryRun: boolean): WriteRecord => ({
    verb: 'update', subresource: 'status', gvr: { group: 'walk.example', version: 'v1', resource: 'backups' }, namespace: 'ns', name: 'b', key: 'ns/b', dryRun,
    before: { apiVersion: 'walk.example/v1', kind: 'Backup', metadata: { name: 'b', namespace: 'ns' }, status: { phase: 'Waiting' } },
    after: { apiVersion: 'walk.example/v1', kind: 'Backup', metadata: { name: 'b', namespace: 'ns' }, status: { phase: 'Ready' } },
    outcome: 'ok', startedAt: 0, durationMs: 1,
  });
  const [live] = plannedActions([write(false)]);
  assert.match(live!.diff, /^--- backups\.walk\.example\/ns\/b \(status\)\tbefore\n\+\+\+ backups\.walk\.example\/ns\/b \(status\)\tafter\n/m);
  assert.match(live!.diff, /^-  phase: Waiting\n\+  phase: Ready$/m);
  const [dry] = plannedActions([write(true)]);
  assert.match(dry!.diff, /^--- backups\.walk\.example\/ns\/b \(status\)\tcurrent\n\+\+\+ backups\.walk\.example\/ns\/b \(status\)\tplanned\n/m);
});

test("writeDiff names a write's sides by what it was, whichever reconciler wrote (a Go controller's wire write too); a delete shows nothing after unless finalizers kept the object", () => {
  const cm = (data: Record<string, string>, more: object = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', ...more }, data });
  assert.match(writeDiff('configmaps ns/c', { verb: 'update', dryRun: true, before: cm({ a: '1' }), after: cm({ a: '2' }) }), /^--- configmaps ns\/c\tcurrent\n\+\+\+ configmaps ns\/c\tplanned\n/);
  assert.match(writeDiff('configmaps ns/c', { verb: 'update', dryRun: false, before: cm({ a: '1' }), after: cm({ a: '2' }) }), /^--- configmaps ns\/c\tbefore\n\+\+\+ configmaps ns\/c\tafter\n/);
  const create = writeDiff('configmaps ns/c', { verb: 'create', dryRun: false, after: cm({ a: '1' }) });
  assert.match(create, /^\+data:\n\+ {2}a: "1"$/m);
  assert.doesNotMatch(create, /^-[^-]/m, 'a create removes nothing');
  const gone = writeDiff('configmaps ns/c', { verb: 'delete', dryRun: false, before: cm({ a: '1' }), after: cm({ a: '1' }) });
  assert.match(gone, /^-data:$/m, 'a delete removes the object, whatever the server sent back');
  const held = writeDiff('configmaps ns/c', { verb: 'delete', dryRun: false, before: cm({ a: '1' }), after: cm({ a: '1' }, { deletionTimestamp: '2026-12-06T19:00:00Z', finalizers: ['x.io/f'] }) });
  assert.match(held, /^\+ {2}deletionTimestamp: 2026-12-06T19:00:00Z$/m, 'finalizers kept it: Terminating');
  assert.doesNotMatch(held, /^-data:$/m);
});
