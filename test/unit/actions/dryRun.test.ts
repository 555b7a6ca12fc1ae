import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changesNothing, UNCHANGED_WRITE_NOTE } from '../../../src/core/actions/dryRun.ts';

test('a planned write changes nothing when it was accepted, is no delete, and its diff is empty', () => {
  assert.equal(changesNothing({ verb: 'update', diff: '', outcome: 'ok' }), true);
  assert.equal(changesNothing({ verb: 'patch', diff: undefined }), true);
  assert.equal(changesNothing({ verb: 'update', diff: '-a: 1\n+a: 2' }), false);
  assert.equal(changesNothing({ verb: 'update', diff: '', outcome: 'error' }), false, 'a refused write is said as refused');
  assert.equal(changesNothing({ verb: 'update', diff: '', error: '409 Conflict' }), false);
  assert.equal(changesNothing({ verb: 'delete', diff: '' }), false, 'a delete is said by its own text');
  assert.match(UNCHANGED_WRITE_NOTE, /^changes nothing \(/);
});
