import { test } from 'node:test';
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultGoLaunch, describeExit, launchSpecOf, leaderElectionFlag, processGroupOf } from '../../../src/core/bridge/launcher.ts';

test('defaultGoLaunch: cmd/main.go (kubebuilder v4) → go run ./cmd; one cmd/<name>/main.go → that; else go run .', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rl-launch-'));
  try {
    assert.deepEqual(defaultGoLaunch(dir), { command: 'go', args: ['run', '.'], cwd: dir });
    mkdirSync(join(dir, 'cmd', 'manager'), { recursive: true });
    writeFileSync(join(dir, 'cmd', 'manager', 'main.go'), 'package main\n');
    assert.deepEqual(defaultGoLaunch(dir).args, ['run', './cmd/manager']);
    mkdirSync(join(dir, 'cmd', 'other'));
    writeFileSync(join(dir, 'cmd', 'other', 'main.go'), 'package main\n');
    assert.deepEqual(defaultGoLaunch(dir).args, ['run', '.'], 'two candidates: no guess');
    writeFileSync(join(dir, 'cmd', 'main.go'), 'package main\n');
    assert.deepEqual(defaultGoLaunch(dir).args, ['run', './cmd']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('launchSpecOf splits like a shell without running one; an empty line is an error', () => {
  assert.deepEqual(launchSpecOf(`go run ./cmd --zap-log-level=debug "--metrics-bind-address=:0"`, { cwd: '/w' }), {
    command: 'go',
    args: ['run', './cmd', '--zap-log-level=debug', '--metrics-bind-address=:0'],
    cwd: '/w',
  });
  assert.throws(() => launchSpecOf('   '), /empty/);
});

test('leaderElectionFlag: kubebuilder and older flags, with or without a value', () => {
  assert.equal(leaderElectionFlag(['--leader-elect']), '--leader-elect');
  assert.equal(leaderElectionFlag(['--leader-elect=true']), '--leader-elect=true');
  assert.equal(leaderElectionFlag(['--leader-elect', 'true']), '--leader-elect');
  assert.equal(leaderElectionFlag(['-enable-leader-election']), '-enable-leader-election');
  assert.equal(leaderElectionFlag(['--leader-elect=false']), undefined);
  assert.equal(leaderElectionFlag(['--leader-elect', 'false']), undefined);
  assert.equal(leaderElectionFlag(['--leader-election-id=x', 42]), undefined);
});

test('describeExit', () => {
  assert.equal(describeExit({ code: 2, signal: null }), 'exited with code 2');
  assert.equal(describeExit({ code: null, signal: 'SIGTERM' }), 'killed by SIGTERM');
  assert.equal(describeExit({ code: null, signal: null, error: 'go: ENOENT' }), 'could not start: go: ENOENT');
});

test('processGroupOf: a launched program\'s child (go run\'s compiled program) is in the group of the launched process', { skip: process.platform === 'win32' && 'no process groups' }, async () => {
  const leader = spawn('sh', ['-c', 'sleep 30 & echo $!; wait'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const childPid = await new Promise<number>((resolve) => leader.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
    assert.equal(processGroupOf(childPid), leader.pid);
    assert.equal(processGroupOf(leader.pid!), leader.pid);
    assert.notEqual(processGroupOf(process.pid), leader.pid);
    assert.equal(processGroupOf(-1), undefined);
  } finally {
    process.kill(-leader.pid!, 'SIGKILL');
  }
});
