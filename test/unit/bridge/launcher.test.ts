import { test } from 'node:test';
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ambiguousMainPackages, defaultDebugArgs, kubeconfigReplacedNote, defaultDebugProgram, defaultGoLaunch, describeExit, launchProcess, launchSpecOf, leaderElectionFlag, leaderElectionFlagOf, leaderElectionFlagText, MAX_OUTPUT_LINE_CHARS, notFoundText, processGroupOf } from '../../../src/core/bridge/launcher.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';

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

test('ambiguousMainPackages: two or more cmd/<name>/main.go, no cmd/main.go and no main package at the root → each ./cmd/<name>; otherwise none', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rl-launch-'));
  try {
    assert.deepEqual(ambiguousMainPackages(dir), []);
    for (const name of ['manager', 'audit']) {
      mkdirSync(join(dir, 'cmd', name), { recursive: true });
      writeFileSync(join(dir, 'cmd', name, 'main.go'), 'package main\n');
    }
    assert.deepEqual(ambiguousMainPackages(dir), ['./cmd/audit', './cmd/manager']);
    writeFileSync(join(dir, 'doc.go'), '// Package lib.\npackage lib\n');
    assert.deepEqual(ambiguousMainPackages(dir), ['./cmd/audit', './cmd/manager'], 'a root package that is no command does not count');
    writeFileSync(join(dir, 'main.go'), '// Command op.\npackage main\n\nfunc main() {}\n');
    assert.deepEqual(ambiguousMainPackages(dir), [], 'the root is a command: go run . is right');
    rmSync(join(dir, 'main.go'));
    writeFileSync(join(dir, 'cmd', 'main.go'), 'package main\n');
    assert.deepEqual(ambiguousMainPackages(dir), [], 'cmd/main.go: go run ./cmd');
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
  assert.equal(leaderElectionFlag(['-enable-leader-election']), '-enable-leader-election');
  assert.equal(leaderElectionFlag(['--leader-elect=false']), undefined);
  assert.equal(leaderElectionFlag(['--leader-election-id=x', 42]), undefined);
});

// Go's flag package (and pflag) read a bool flag's value with strconv.ParseBool, and only after "=": `--leader-elect
// false` turns leader election ON and leaves "false" as an argument (tried: flag.Bool("leader-elect", true, "") then
// prints true [false]), while `--leader-elect=0` / `=F` / `=FALSE` turn it off.
test('leaderElectionFlag: read as Go reads a bool flag (value only after "=", strconv.ParseBool words, the last one wins)', () => {
  assert.equal(leaderElectionFlag(['--leader-elect', 'false']), '--leader-elect false', 'on: "false" is an argument of its own');
  assert.equal(leaderElectionFlag(['--leader-elect', 'true']), '--leader-elect true');
  for (const off of ['0', 'f', 'F', 'FALSE', 'False']) assert.equal(leaderElectionFlag([`--leader-elect=${off}`]), undefined, `--leader-elect=${off} is off`);
  for (const on of ['1', 't', 'T', 'TRUE', 'True']) assert.equal(leaderElectionFlag([`--leader-elect=${on}`]), `--leader-elect=${on}`);
  assert.equal(leaderElectionFlag(['--leader-elect', '--leader-elect=false']), undefined, 'the last occurrence wins');
  assert.equal(leaderElectionFlag(['--leader-elect=false', '-leader-elect']), '-leader-elect');
  assert.equal(leaderElectionFlagText('--leader-elect'), '--leader-elect');
  assert.match(leaderElectionFlagText('--leader-elect false'), /^--leader-elect false: a Go bool flag takes its value only after "=", so this turns --leader-elect on and passes "false" as an argument; --leader-elect=false turns it off$/);
});

test('describeExit', () => {
  assert.equal(describeExit({ code: 2, signal: null }), 'exited with code 2');
  assert.equal(describeExit({ code: null, signal: 'SIGTERM' }), 'killed by SIGTERM');
  assert.equal(describeExit({ code: null, signal: null, error: 'could not start go: no such command on PATH: give its path, or install it' }), 'could not start go: no such command on PATH: give its path, or install it');
});

test('notFoundText: a missing file, a bare name not on PATH and shell syntax each say what was wrong', () => {
  assert.equal(notFoundText({ command: './bin/manager', cwd: '/src/op' }), 'no such file (from /src/op): build it first, or check the path');
  assert.equal(notFoundText({ command: 'manager' }), 'no such command on PATH: give its path, or install it');
  assert.match(notFoundText({ command: '~/bin/manager' }), /^no such command or file: the command line is run without a shell, so ~, \$VAR, &&, \| and globs are not expanded/);
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

test('a launched program\'s output lines are bounded: a line longer than MAX_OUTPUT_LINE_CHARS is passed on and kept cut once, the lines around it whole', async () => {
  const long = MAX_OUTPUT_LINE_CHARS * 6;
  // Written in many chunks: the unfinished line must not grow with them either.
  const script = `const w = (s) => process.stdout.write(s); w('before\\n'); for (let i = 0; i < ${long / 1024}; i++) w('x'.repeat(1024)); w('\\nafter\\n'); w('y'.repeat(${long}));`;
  const launched = launchProcess({ command: process.execPath, args: ['-e', script] }, { clock: new FakeClock(), bridgeEnv: {} });
  const seen: string[] = [];
  launched.onOutput((l) => seen.push(l.line));
  try {
    const exit = await launched.exited;
    assert.equal(exit.code, 0);
    const cut = 'x'.repeat(MAX_OUTPUT_LINE_CHARS) + '… (line cut)';
    const cutY = 'y'.repeat(MAX_OUTPUT_LINE_CHARS) + '… (line cut)';
    assert.deepEqual(seen.map((l) => (l.length > 40 ? `${l[0]}×${l.length}` : l)), ['before', `x×${cut.length}`, 'after', `y×${cutY.length}`]);
    assert.deepEqual(launched.tail(4), ['before', cut, 'after', cutY]);
  } finally {
    launched.dispose();
  }
});

test('defaultDebugProgram: F5 without a launch.json debugs the main package Run Controller would run, of the folder\'s module or the one controller module below it', () => {
  const d = mkdtempSync(join(tmpdir(), 'rl-dbgprog-'));
  try {
    assert.equal(defaultDebugProgram(undefined), '${workspaceFolder}');
    assert.equal(defaultDebugProgram(d), '${workspaceFolder}', 'no Go module: the folder');
    const op = join(d, 'operator');
    mkdirSync(join(op, 'cmd'), { recursive: true });
    writeFileSync(join(op, 'go.mod'), 'module example.com/op\n\ngo 1.26\n\nrequire sigs.k8s.io/controller-runtime v0.25.3\n');
    writeFileSync(join(op, 'cmd', 'main.go'), 'package main\n');
    assert.equal(defaultDebugProgram(d), '${workspaceFolder}/operator/cmd', 'the one controller module below the folder');
    assert.equal(defaultDebugProgram(op), '${workspaceFolder}/cmd', 'a kubebuilder module at the folder');
    writeFileSync(join(d, 'go.mod'), 'module example.com/root\n\ngo 1.26\n');
    assert.equal(defaultDebugProgram(d), '${workspaceFolder}', 'a module at the folder with main.go at its root');
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

// F5 without a launch.json used to pass --leader-elect=false to every program: one that defines no such flag (a
// main.go of its own, an operator-sdk scaffold's --enable-leader-election) stopped at once with Go's "flag provided
// but not defined: -leader-elect" (exit 2). And a program whose flag defaults to true got no warning.
test('leaderElectionFlagOf / defaultDebugArgs: the flag the main package defines (flag, pflag, cobra), with its literal default; F5\'s args turn only that one off', () => {
  const d = mkdtempSync(join(tmpdir(), 'rl-leflag-'));
  try {
    assert.equal(leaderElectionFlagOf(join(d, 'absent')), undefined);
    assert.deepEqual(defaultDebugArgs(undefined), []);
    writeFileSync(join(d, 'main.go'), 'package main\n\nfunc main() {\n\tflag.Parse()\n}\n');
    assert.equal(leaderElectionFlagOf(d), undefined);
    assert.deepEqual(defaultDebugArgs(d), [], 'no leader-election flag: no argument the program would reject');
    writeFileSync(join(d, 'main_test.go'), 'package main\n\nvar _ = flag.Bool("leader-elect", true, "")\n');
    assert.equal(leaderElectionFlagOf(d), undefined, 'tests are not the program');
    writeFileSync(join(d, 'main.go'), 'package main\n\nfunc main() {\n\tvar on bool\n\tflag.BoolVar(&on, "leader-elect", true,\n\t\t"Enable leader election.")\n}\n');
    assert.deepEqual(leaderElectionFlagOf(d), { flag: '--leader-elect', defaultOn: true, file: join(d, 'main.go'), line: 5 });
    assert.deepEqual(defaultDebugArgs(d), ['--leader-elect=false']);
    writeFileSync(join(d, 'main.go'), 'package main\n\nvar le = flag.Bool("enable-leader-election", false, "")\n');
    assert.deepEqual(leaderElectionFlagOf(d), { flag: '--enable-leader-election', defaultOn: false, file: join(d, 'main.go'), line: 3 });
    assert.deepEqual(defaultDebugArgs(d), ['--enable-leader-election=false'], 'an older scaffold\'s flag');
    writeFileSync(join(d, 'main.go'), 'package main\n\nfunc init() {\n\tcmd.Flags().BoolVarP(&opts.LE, "leader-elect", "l", defaultLE, "")\n}\n');
    assert.deepEqual(leaderElectionFlagOf(d), { flag: '--leader-elect', file: join(d, 'main.go'), line: 4 }, 'cobra/pflag with a shorthand; a default that is no literal is unknown');
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

// The bridge's environment (with the connection's KUBECONFIG) wins over the person's own env, silently before: a
// launch.json "env": {"KUBECONFIG": "…/kind.yaml"} was dropped without a word.
test('kubeconfigReplacedNote: the person\'s own KUBECONFIG, replaced by the connection\'s, is named with where it is set and what to do', () => {
  const note = kubeconfigReplacedNote({ KUBECONFIG: '/home/me/.kube/kind.yaml', OTHER: 'x' }, '/home/me/.kube/config', 'The launch configuration "Debug"');
  assert.equal(note, 'The launch configuration "Debug" sets KUBECONFIG to /home/me/.kube/kind.yaml, but the program gets the connection\'s kubeconfig (/home/me/.kube/config) instead, so that it reaches the cluster the views show. To run it against /home/me/.kube/kind.yaml, connect Reconcile Lab to that file (reconcileLab.connection.kubeconfig, or Connect to Cluster…); to silence this, remove KUBECONFIG there.');
  assert.equal(kubeconfigReplacedNote({ KUBECONFIG: '/k' }, '/k', 'x'), undefined, 'the same file');
  assert.equal(kubeconfigReplacedNote({ OTHER: 'x' }, '/k', 'x'), undefined, 'none set');
  assert.equal(kubeconfigReplacedNote(undefined, '/k', 'x'), undefined);
  assert.equal(kubeconfigReplacedNote({ KUBECONFIG: '/mine' }, undefined, 'x'), undefined, 'the connection has no file to give: theirs is used');
});

test('exited resolves only once the program\'s output is read: lines still in the pipes when the process ends reach tail()', async () => {
  // 'exit' can come before the pipes are drained (a busy extension host saw an empty "Last output"); the exit
  // messages (CRD, port, webhook hints) read tail(). Here a helper outside the program's process group holds the
  // pipe and writes 0.3 s after the program ended: deterministic, and gone right after.
  // The program waits until the helper is in its own session (its marker file), so the group kill at the exit cannot reach it.
  const marker = join(tmpdir(), `rl-drain-${process.pid}-${Date.now()}`);
  const script = `echo first; setsid sh -c 'touch "$0"; sleep 0.3; echo last words >&2' "${marker}" & while [ ! -e "${marker}" ]; do sleep 0.01; done; rm -f "${marker}"; exit 3`;
  const p = launchProcess({ command: 'sh', args: ['-c', script] }, { clock: new FakeClock(), bridgeEnv: {} });
  try {
    const e = await p.exited;
    assert.equal(e.code, 3);
    assert.deepEqual(p.tail(10), ['first', 'last words']);
  } finally {
    p.dispose();
  }
});
