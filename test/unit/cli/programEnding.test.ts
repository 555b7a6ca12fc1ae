import { test } from 'node:test';
import assert from 'node:assert/strict';
import { programEnding } from '../../../src/cli/cli.ts';

test('programEnding: how the Go program ended reads as a sentence (was killed by …), with its last output when there is any', () => {
  assert.equal(programEnding('killed by SIGKILL', []), 'The Go program was killed by SIGKILL.');
  assert.equal(programEnding('exited with code 3', ['boom']), 'The Go program exited with code 3. Last output:\n  boom');
});
