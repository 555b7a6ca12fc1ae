import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changesNothing, noWritesText, UNCHANGED_WRITE_NOTE } from '../../../src/core/actions/dryRun.ts';

test('a planned write changes nothing when it was accepted, is no delete, and its diff is empty', () => {
  assert.equal(changesNothing({ verb: 'update', diff: '', outcome: 'ok' }), true);
  assert.equal(changesNothing({ verb: 'patch', diff: undefined }), true);
  assert.equal(changesNothing({ verb: 'update', diff: '-a: 1\n+a: 2' }), false);
  assert.equal(changesNothing({ verb: 'update', diff: '', outcome: 'error' }), false, 'a refused write is said as refused');
  assert.equal(changesNothing({ verb: 'update', diff: '', error: '409 Conflict' }), false);
  assert.equal(changesNothing({ verb: 'delete', diff: '' }), false, 'a delete is said by its own text');
  assert.match(UNCHANGED_WRITE_NOTE, /^changes nothing \(/);
});

test('no planned write reads "already as desired" only after a pass that ended done; a failed or requeued pass says so', () => {
  assert.equal(noWritesText({ kind: 'done' }), 'none (already as desired)');
  assert.equal(noWritesText({ kind: 'error', error: 'TypeError: x' }), 'none before it failed (a failed reconcile says nothing about the desired state)');
  assert.equal(noWritesText({ kind: 'terminal', error: 'bad spec' }), noWritesText({ kind: 'error', error: '' }));
  assert.equal(noWritesText({ kind: 'requeueAfter', requeueAfterMs: 20_000, reason: 'waiting' }), 'none yet (it asked to run again: nothing to write until then)');
  assert.equal(noWritesText({ kind: 'requeue' }), noWritesText({ kind: 'requeueAfter', requeueAfterMs: 1 }));
});
