// The registry of the programs this user's editor windows launched: a run counts only while its window and its
// program live; a window never sees its own runs; records of a crashed window go when read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunRegistry } from '../../../src/core/bridge/runRegistry.ts';

test('others: live runs of other windows in the same directory; dead windows\' and programs\' records removed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'runs-'));
  const window = spawn('sleep', ['60'], { stdio: 'ignore' });
  const program = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    const other = new RunRegistry(dir, window.pid!);
    const mine = new RunRegistry(dir, process.pid);
    other.record({ pid: program.pid!, cwd: '/work/shop', command: 'go run ./cmd', startedAt: 1 });
    mine.record({ pid: program.pid!, cwd: '/work/shop', command: 'go run ./cmd', startedAt: 2 });
    other.record({ pid: program.pid!, cwd: '/work/other', command: 'go run .', startedAt: 3 });
    new RunRegistry(dir, 2 ** 22 + 7).record({ pid: program.pid!, cwd: '/work/shop', command: 'crashed window', startedAt: 4 }); // no such process
    other.record({ pid: 2 ** 22 + 9, cwd: '/work/shop', command: 'exited program', startedAt: 5 });
    assert.deepEqual(mine.others('/work/shop').map((r) => r.command), ['go run ./cmd'], 'the other live window\'s run only');
    assert.deepEqual(other.others('/work/shop').map((r) => [r.command, r.ownerPid]), [['go run ./cmd', process.pid]]);
    assert.equal(readdirSync(dir).length, 3, 'the dead window\'s and the exited program\'s records were removed');
    const rec = mine.record({ pid: program.pid!, cwd: '/work/x', command: 'x', startedAt: 6 });
    assert.equal(other.others('/work/x').length, 1);
    rec.dispose();
    assert.equal(other.others('/work/x').length, 0, 'disposing removes the record');
  } finally {
    window.kill('SIGKILL');
    program.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
