import { test } from 'node:test';
import assert from 'node:assert/strict';
import { programEndedHint, programEnding } from '../../../src/cli/cli.ts';

test('programEnding: how the Go program ended reads as a sentence (was killed by …), with its last output when there is any', () => {
  assert.equal(programEnding('killed by SIGKILL', []), 'The Go program was killed by SIGKILL.');
  assert.equal(programEnding('exited with code 3', ['boom']), 'The Go program exited with code 3. Last output:\n  boom');
});

test('programEnding: a program that ended after announcing its controllers because a watched kind never synced (another controller\'s CRD not installed) gets the advice the launch gives', () => {
  const tail = ['2026-12-06T16:31:06Z\tERROR\tsetup\tproblem running manager\t{"error": "failed to wait for cachequota caches to sync kind source: *v1.CacheQuota: timed out waiting for cache to be synced for kind source: *v1.CacheQuota"}', 'exit status 1'];
  const text = programEnding('exited with code 1', tail);
  assert.match(text, /^The Go program exited with code 1\. Last output:\n/);
  assert.match(text, /\nIts cache never synced CacheQuota objects: is the CacheQuota CRD installed in this cluster\?.*make install/);
  assert.equal(programEndedHint(['panic: boom']), undefined);
  assert.match(programEndedHint(['error listening on :8081: listen tcp :8081: bind: address already in use']) ?? '', /^Another process already listens on :8081/);
});
