import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { realClock } from '../../src/core/clock.ts';
import { launchProcess } from '../../src/core/bridge/launcher.ts';
import { alive } from '../support/alive.ts';

// Real processes (no cluster needed). Waiting for a process to die is polling /proc: no timed assertion.

/** Alive and not a zombie. */

async function gone(pid: number, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (!alive(pid)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`${what} (pid ${pid}) still runs`);
}

function firstLine(p: { onOutput: (l: (o: { line: string }) => void) => unknown }): Promise<string> {
  return new Promise((r) => p.onOutput((o) => r(o.line)));
}

test('launcher: bridge env wins, output captured, stop kills the whole process group (the grandchild too)', async () => {
  const p = launchProcess(
    { command: 'sh', args: ['-c', 'sleep 300 & echo "$!:$RECONCILE_LAB_BRIDGE:$EXTRA"; wait'], env: { EXTRA: 'x', RECONCILE_LAB_BRIDGE: 'overridden?' } },
    { clock: realClock, bridgeEnv: { RECONCILE_LAB_BRIDGE: 'unix:///tmp/b.sock', RECONCILE_LAB_BRIDGE_TOKEN: 't' }, killGraceMs: 1000 },
  );
  const line = await firstLine(p);
  const [grandchild, address, extra] = line.split(':');
  assert.equal(address, 'unix'); // "unix:///tmp/b.sock" split on ':'
  assert.equal(extra, '///tmp/b.sock');
  assert.ok(line.endsWith(':x'));
  const gpid = Number(grandchild);
  assert.ok(alive(gpid));
  const exit = await p.stop();
  assert.equal(exit.signal, 'SIGINT', 'Ctrl+C first: sh dies of it (its background sleep ignores it, the group kill after the leader exited takes it)');
  await gone(gpid, 'the grandchild (like the binary go run builds)');
  assert.deepEqual(p.tail(), [line]);
  p.dispose();
});

test('launcher: a program that cannot start is a clear exit, not a throw', async () => {
  const p = launchProcess({ command: '/nonexistent/go', args: ['run', '.'] }, { clock: realClock, bridgeEnv: {} });
  const e = await p.exited;
  assert.equal(e.error, 'could not start /nonexistent/go: no such file: build it first, or check the path');
  p.dispose();
});

test('launcher: a directory given as the program (--go ./cmd, the package instead of a binary) is told how to run or build it, not to chmod +x', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rl-launch-dir-'));
  mkdirSync(join(dir, 'cmd'));
  try {
    const p = launchProcess({ command: './cmd', args: [], cwd: dir }, { clock: realClock, bridgeEnv: {} });
    const e = await p.exited;
    assert.equal(e.error, 'could not start ./cmd: it is a directory, not a program: run its Go package with go run (--go "go run ./cmd"), or build it first (go build -o bin/manager ./cmd) and give the binary');
    p.dispose();
    // A file without the execute permission still gets the chmod advice.
    writeFileSync(join(dir, 'manager'), '#!/bin/sh\n', { mode: 0o644 });
    const q = launchProcess({ command: './manager', args: [], cwd: dir }, { clock: realClock, bridgeEnv: {} });
    assert.equal((await q.exited).error, 'could not start ./manager: permission denied (is it executable? chmod +x)');
    q.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('launcher: a program that panics behind a long goroutine dump: its failure tail starts with the panic line', async () => {
  // A stack overflow's report: "runtime: goroutine stack exceeds …", "fatal error: stack overflow", then hundreds of lines.
  const script = 'echo "runtime: goroutine stack exceeds 1000000000-byte limit"; echo "fatal error: stack overflow"; i=0; while [ $i -lt 300 ]; do echo "goroutine frame $i"; i=$((i+1)); done; exit 2';
  const p = launchProcess({ command: 'sh', args: ['-c', script] }, { clock: realClock, bridgeEnv: {}, keepLines: 200 });
  await p.exited;
  const t = p.failureTail(15);
  assert.equal(t.length, 15);
  assert.deepEqual(t.slice(0, 3), ['fatal error: stack overflow', '…', 'goroutine frame 287']);
  assert.equal(t.at(-1), 'goroutine frame 299');
  assert.deepEqual(p.tail(3), ['goroutine frame 297', 'goroutine frame 298', 'goroutine frame 299'], 'tail() is unchanged');
  p.dispose();
});

test('launcher: a program that refuses a flag (Go flag package, then its usage): its failure tail starts with the refusal', async () => {
  // What a kubebuilder main prints for `--go "./bin/manager --bogus"`: the refusal, "Usage of …:", then two lines per flag.
  const goFlag = 'echo "flag provided but not defined: -bogus"; echo "Usage of /tmp/manager:"; i=0; while [ $i -lt 20 ]; do echo "  -flag$i"; echo "    \tusage $i"; i=$((i+1)); done; exit 2';
  const p = launchProcess({ command: 'sh', args: ['-c', goFlag] }, { clock: realClock, bridgeEnv: {} });
  await p.exited;
  const t = p.failureTail(15);
  assert.equal(t.length, 15);
  assert.deepEqual(t.slice(0, 2), ['flag provided but not defined: -bogus', '…']);
  assert.equal(t.at(-1), '    \tusage 19');
  p.dispose();
  // spf13/pflag (operator-sdk, cobra) says it its way.
  const pflag = 'echo "unknown flag: --bogus"; i=0; while [ $i -lt 30 ]; do echo "      --flag$i   usage"; i=$((i+1)); done; exit 1';
  const q = launchProcess({ command: 'sh', args: ['-c', pflag] }, { clock: realClock, bridgeEnv: {} });
  await q.exited;
  assert.equal(q.failureTail(15)[0], 'unknown flag: --bogus');
  q.dispose();
});

test('launcher: when the owner dies without cleaning up (SIGKILL), the watchdog kills the program group', async () => {
  const launcher = resolve(import.meta.dirname, '../../src/core/bridge/launcher.ts');
  const clock = resolve(import.meta.dirname, '../../src/core/clock.ts');
  const script = `
    const { launchProcess } = await import(${JSON.stringify(launcher)});
    const { realClock } = await import(${JSON.stringify(clock)});
    const p = launchProcess({ command: 'sh', args: ['-c', 'sleep 300 & echo $!; wait'] }, { clock: realClock, bridgeEnv: {}, killGraceMs: 1000 });
    p.onOutput((o) => { process.stdout.write(p.pid + ' ' + o.line + '\\n'); });
    setInterval(() => {}, 1000);
  `;
  const owner = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((r) => {
    let buf = '';
    owner.stdout!.on('data', (b: Buffer) => {
      buf += b.toString();
      if (buf.includes('\n')) r(buf.split('\n')[0]!);
    });
  });
  const [leader, grandchild] = line.split(' ').map(Number) as [number, number];
  assert.ok(alive(leader) && alive(grandchild));
  owner.kill('SIGKILL');
  await gone(leader, 'the program');
  await gone(grandchild, 'its child');
});

/**
 * A Go program (no dependencies) that prints "up", then on SIGINT or SIGTERM says which and exits 0 (as a manager
 * does): on stdout, or appended to the file $SAID when set (a write to a closed pipe would kill it with SIGPIPE).
 */
function signalWaitingModule(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rl-launch-go-'));
  writeFileSync(join(dir, 'go.mod'), 'module example.com/waiter\n\ngo 1.22\n');
  writeFileSync(
    join(dir, 'main.go'),
    'package main\n\nimport (\n\t"fmt"\n\t"os"\n\t"os/signal"\n\t"syscall"\n)\n\nfunc main() {\n\tc := make(chan os.Signal, 1)\n\tsignal.Notify(c, syscall.SIGINT, syscall.SIGTERM)\n\tfmt.Println("up")\n\tgot := fmt.Sprintln("got", <-c)\n\tif f := os.Getenv("SAID"); f != "" {\n\t\t_ = os.WriteFile(f, []byte(got), 0o600)\n\t\treturn\n\t}\n\tfmt.Print(got)\n}\n',
  );
  mkdirSync(join(dir, 'gotmp'));
  return dir;
}

test('launcher: stopping a `go run` program lets it shut down on SIGINT and leaves no go-build directory behind', { timeout: 180_000 }, async () => {
  const dir = signalWaitingModule();
  try {
    // GOTMPDIR: where `go run` puts its build directory (the compiled binary), watched here instead of all of /tmp.
    const p = launchProcess({ command: 'go', args: ['run', '.'], cwd: dir, env: { GOTMPDIR: join(dir, 'gotmp') } }, { clock: realClock, bridgeEnv: {}, killGraceMs: 20_000 });
    assert.equal(await firstLine(p), 'up');
    assert.equal(readdirSync(join(dir, 'gotmp')).length, 1, 'go run built the program into its build directory');
    const exit = await p.stop();
    assert.deepEqual(p.tail(), ['up', 'got interrupt'], 'the program saw SIGINT, as from Ctrl+C in a terminal');
    assert.equal(exit.signal, null, 'go run was not killed: it waited for its program and exited by itself');
    assert.deepEqual(readdirSync(join(dir, 'gotmp')), [], 'go run removed its build directory');
    p.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('launcher: when the owner of a `go run` program is SIGKILLed, the watchdog ends it with SIGINT and no go-build directory is left', { timeout: 180_000 }, async () => {
  const dir = signalWaitingModule();
  const launcher = resolve(import.meta.dirname, '../../src/core/bridge/launcher.ts');
  const clock = resolve(import.meta.dirname, '../../src/core/clock.ts');
  const said = join(dir, 'said.txt');
  const script = `
    const { launchProcess } = await import(${JSON.stringify(launcher)});
    const { realClock } = await import(${JSON.stringify(clock)});
    const p = launchProcess({ command: 'go', args: ['run', '.'], cwd: ${JSON.stringify(dir)}, env: { GOTMPDIR: ${JSON.stringify(join(dir, 'gotmp'))}, SAID: ${JSON.stringify(said)} } }, { clock: realClock, bridgeEnv: {} });
    p.onOutput((o) => { if (o.line === 'up') process.stdout.write(p.pid + '\\n'); });
    setInterval(() => {}, 1000);
  `;
  try {
    const owner = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const leader = await new Promise<number>((r) => {
      let buf = '';
      owner.stdout!.on('data', (b: Buffer) => {
        buf += b.toString();
        if (buf.includes('\n')) r(Number(buf.split('\n')[0]));
      });
    });
    assert.equal(readdirSync(join(dir, 'gotmp')).length, 1, 'go run built the program into its build directory');
    owner.kill('SIGKILL');
    await gone(leader, 'go run');
    assert.equal(readFileSync(said, 'utf8'), 'got interrupt\n', 'the program saw SIGINT first');
    assert.deepEqual(readdirSync(join(dir, 'gotmp')), [], 'go run removed its build directory');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('launcher: a go command builds in a GOTMPDIR of its launch, removed when it exited; one an owner that died left behind is removed by the next launch', { timeout: 180_000 }, async () => {
  const dir = signalWaitingModule();
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp);
  const launcher = resolve(import.meta.dirname, '../../src/core/bridge/launcher.ts');
  const clock = resolve(import.meta.dirname, '../../src/core/clock.ts');
  // The owner's program answers the watchdog's SIGINT on stdout, a pipe whose reader died with the owner: SIGPIPE
  // kills it, and go run with it, before either can remove anything.
  const script = `
    const { launchProcess } = await import(${JSON.stringify(launcher)});
    const { realClock } = await import(${JSON.stringify(clock)});
    const p = launchProcess({ command: 'go', args: ['run', '.'], cwd: ${JSON.stringify(dir)} }, { clock: realClock, bridgeEnv: {} });
    p.onOutput((o) => { if (o.line === 'up') process.stdout.write(p.pid + '\\n'); });
    setInterval(() => {}, 1000);
  `;
  const before = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  try {
    const owner = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, TMPDIR: tmp } });
    const leader = await new Promise<number>((r) => {
      let buf = '';
      owner.stdout!.on('data', (b: Buffer) => {
        buf += b.toString();
        if (buf.includes('\n')) r(Number(buf.split('\n')[0]));
      });
    });
    const [own] = readdirSync(tmp);
    assert.match(own ?? '', /^reconcile-lab-go-/, 'the launch\'s own GOTMPDIR, not /tmp');
    assert.equal(readdirSync(join(tmp, own!)).filter((f) => f.startsWith('go-build')).length, 1, 'go run built into it');
    owner.kill('SIGKILL');
    await gone(leader, 'go run');
    assert.deepEqual(readdirSync(tmp), [own], 'left behind by the owner that died');

    // The next launch of a go command sweeps it, and removes its own once the program exited.
    const next = launchProcess({ command: 'go', args: ['env', 'GOTMPDIR'], cwd: dir }, { clock: realClock, bridgeEnv: {} });
    const exit = await next.exited;
    assert.equal(exit.code, 0);
    assert.match(next.tail()[0] ?? '', new RegExp(`^${tmp}/reconcile-lab-go-`), 'go saw its GOTMPDIR');
    assert.deepEqual(readdirSync(tmp), [], 'the leftover swept, its own removed');
    next.dispose();
  } finally {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(dir, { recursive: true, force: true });
  }
});

// A stand-in for a Go program whose bridge module is older or newer than the editor, or that dials and says
// nothing: a real process dialling the real listener (the Go bridge sends exactly this hello).
const FAKE_PROGRAM = `
const net = require('node:net');
const u = new URL(process.env.RECONCILE_LAB_BRIDGE);
const s = u.protocol === 'unix:' ? net.connect(u.pathname) : net.connect(Number(u.port), u.hostname);
const mode = process.argv[1];
s.on('connect', () => {
  if (mode === 'garbage') s.write('I am not the bridge protocol\\n');
  else s.write(JSON.stringify({ type: 'hello', protocol: mode === 'hello' ? 2 : Number(mode), token: process.env.RECONCILE_LAB_BRIDGE_TOKEN, pid: process.pid, program: 'fake', goVersion: 'go1.26', controllerRuntime: 'v0.25.3', instance: 'fake-' + process.pid }) + '\\n');
});
s.on('error', () => {});
setInterval(() => {}, 1 << 30);
`;

async function hubForTest() {
  const { BridgeHub } = await import('../../src/core/bridge/bridgeHub.ts');
  const { Journal } = await import('../../src/core/journal/journal.ts');
  return BridgeHub.start({ clock: realClock, journal: new Journal({ clock: realClock }) });
}

test('runGoController: a program whose bridge speaks another protocol version (or not the protocol) fails at once with a clear message and is stopped', async () => {
  const { runGoController } = await import('../../src/core/bridge/runGoController.ts');
  const hub = await hubForTest();
  try {
    for (const [mode, want] of [
      ['1', /dialled Reconcile Lab's bridge and was refused \(protocol version 1 is not supported \(this editor speaks 2\)\): its bridge module speaks another protocol version; point the replace line of its go\.mod at this Reconcile Lab's bridge\/ directory and rebuild\./],
      ['3', /refused \(protocol version 3 is not supported/],
      ['garbage', /dialled Reconcile Lab's bridge and was refused \(not JSON/],
    ] as const) {
      let pid: number | undefined;
      const err = await runGoController({ hub, spec: { command: process.execPath, args: ['-e', FAKE_PROGRAM, mode] }, clock: realClock, onOutput: () => {} }).then(
        () => undefined,
        (e: Error) => e,
      );
      assert.ok(err, `mode ${mode}: rejected`);
      assert.match(err.message, want);
      // The program was stopped: no process with our script is left.
      for (const p of readdirSyncSafe('/proc')) {
        const cmd = readCmdline(p);
        if (cmd.includes('RECONCILE_LAB_BRIDGE') && cmd.includes(mode)) pid = Number(p);
      }
      assert.equal(pid, undefined, `mode ${mode}: the program was stopped`);
    }
  } finally {
    hub.dispose();
  }
});

test('runGoController: a program that never dials, or dials and announces no controller, gets a notice saying which and why', async () => {
  const { runGoController } = await import('../../src/core/bridge/runGoController.ts');
  const hub = await hubForTest();
  try {
    for (const [args, want] of [
      [['-e', 'setInterval(() => {}, 1 << 30)'], /has not connected to Reconcile Lab yet: .*never calls bridge\.Setup or bridge\.Options never connects/],
      [['-e', FAKE_PROGRAM, 'hello'], /connected \(pid \d+\) but announced no controller yet: each controller needs WithOptions\(bridge\.Options\(mgr, name, …\)\)/],
    ] as const) {
      const ac = new AbortController();
      const notices: string[] = [];
      const run = runGoController({
        hub,
        spec: { command: process.execPath, args: [...args] },
        clock: realClock,
        noticeAfterMs: 300,
        onNotice: (m) => {
          notices.push(m);
          ac.abort(new Error('seen'));
        },
        signal: ac.signal,
      });
      await assert.rejects(run, /seen/);
      assert.equal(notices.length, 1);
      assert.match(notices[0]!, want);
    }
  } finally {
    hub.dispose();
  }
});

function readdirSyncSafe(dir: string): string[] {
  try {
    return readdirSync(dir).filter((p) => /^\d+$/.test(p));
  } catch {
    return [];
  }
}
function readCmdline(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}
