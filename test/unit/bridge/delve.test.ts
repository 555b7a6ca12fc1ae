// Finding Delve and running `dlv dap` (src/core/bridge/delve.ts) with stand-in `dlv` scripts: the search order, the
// listening port read from its output, a dlv that exits before listening, and dispose killing dlv's whole process
// group and the debuggee in a group of its own, as Delve starts it. The real Delve is exercised by the integration and extension-host tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DELVE_VERSION, envFilesOf, findDelve, readEnvFiles, startDelveDap, parseEnvFile } from '../../../src/core/bridge/delve.ts';
import { alive } from '../../support/alive.ts';

function script(dir: string, name: string, body: string): string {
  mkdirSync(dir, { recursive: true });
  const p = join(dir, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}


async function until(f: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !f(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(f(), what);
}

test('findDelve: the setting first, then PATH, GOBIN, GOPATH/bin, the install directory; undefined when none', () => {
  const d = mkdtempSync(join(tmpdir(), 'rl-dlv-'));
  try {
    const env = { PATH: join(d, 'path') };
    const none = { env, goPath: () => join(d, 'gopath'), installDir: join(d, 'storage') };
    assert.equal(findDelve(none), undefined);
    const installed = script(join(d, 'storage', DELVE_VERSION), 'dlv', 'exit 0');
    assert.equal(findDelve(none), installed);
    const inGoPath = script(join(d, 'gopath', 'bin'), 'dlv', 'exit 0');
    assert.equal(findDelve(none), inGoPath);
    const inGoBin = script(join(d, 'gobin'), 'dlv', 'exit 0');
    assert.equal(findDelve({ ...none, env: { ...env, GOBIN: join(d, 'gobin') } }), inGoBin);
    const onPath = script(join(d, 'path'), 'dlv', 'exit 0');
    assert.equal(findDelve({ ...none, env: { ...env, GOBIN: join(d, 'gobin') } }), onPath);
    writeFileSync(join(d, 'path', 'dlv'), 'not executable');
    chmodSync(join(d, 'path', 'dlv'), 0o644);
    assert.equal(findDelve(none), inGoPath, 'a file that is not executable is skipped');
    assert.equal(findDelve({ ...none, configured: '/nowhere/dlv' }), '/nowhere/dlv', 'the setting is returned as is (a wrong path is reported by the caller)');
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test('startDelveDap: the port from "listening at"; dispose kills dlv and the process it started (its group)', async () => {
  const d = mkdtempSync(join(tmpdir(), 'rl-dlv-'));
  try {
    const pidFile = join(d, 'debuggee.pid');
    // Like dlv: prints where it listens, starts a child (the debuggee) and keeps running.
    const dlv = script(d, 'dlv', `sleep 300 & echo $! > ${pidFile}\necho "DAP server listening at: 127.0.0.1:43117"\nwait`);
    const server = await startDelveDap(dlv, { cwd: d, killGraceMs: 200 });
    assert.equal(server.port, 43117);
    const { readFileSync, existsSync } = await import('node:fs');
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 'the stand-in started its child');
    const child = Number(readFileSync(pidFile, 'utf8').trim());
    assert.ok(alive(child));
    server.dispose();
    await server.exited;
    await until(() => !alive(child), 'the child in dlv\'s process group is gone too');
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test('startDelveDap: dispose kills the debuggee in a process group of its own (as Delve starts it) even when dlv needed SIGKILL', async (t) => {
  try {
    execFileSync('sh', ['-c', 'command -v setsid'], { stdio: 'ignore' });
  } catch {
    t.skip('no setsid on this machine');
    return;
  }
  const d = mkdtempSync(join(tmpdir(), 'rl-dlv-'));
  try {
    const pidFile = join(d, 'debuggee.pid');
    // Like dlv with a debuggee (own session and group, as Delve's Setpgid), here one that ignores SIGTERM.
    const dlv = script(d, 'dlv', `trap '' TERM\nsetsid sleep 300 & echo $! > ${pidFile}\necho "DAP server listening at: 127.0.0.1:43118"\nwait`);
    const server = await startDelveDap(dlv, { cwd: d, killGraceMs: 200 });
    const { readFileSync, existsSync } = await import('node:fs');
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 'the stand-in started its child');
    const child = Number(readFileSync(pidFile, 'utf8').trim());
    const pgid = () => {
      try {
        return execFileSync('ps', ['-o', 'pgid=', '-p', String(child)], { encoding: 'utf8' }).trim();
      } catch {
        return '';
      }
    };
    await until(() => pgid() === String(child), 'the child leads its own process group');
    server.dispose();
    await server.exited;
    await until(() => !alive(child), 'the debuggee in its own process group is gone too');
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test('startDelveDap: a dlv that exits before listening rejects with its output; a missing one with the path', async () => {
  const d = mkdtempSync(join(tmpdir(), 'rl-dlv-'));
  try {
    const bad = script(d, 'dlv', 'echo "unknown command \\"dap\\"" >&2\nexit 1');
    await assert.rejects(startDelveDap(bad), /dlv dap exited \(code 1\) before listening: unknown command "dap"/);
    await assert.rejects(startDelveDap(join(d, 'missing')), new RegExp(`could not start ${join(d, 'missing').replace(/[/.]/g, '\\$&')}`));
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

// A Go launch configuration's envFile is the Go extension's attribute: dlv dap does not know it, so under Reconcile
// Lab's own Delve adapter its variables were silently missing from the program.
test('parseEnvFile: NAME=value lines, export, comments, blank lines, quoted values; other lines skipped', () => {
  assert.deepEqual(
    parseEnvFile('# the operator\'s local settings\nWATCH_NAMESPACE=shop\n\nexport LOG_LEVEL = debug\nGREETING="two\\nlines"\nRAW=\'a\\nb\'\nEMPTY=\nnot a variable\r\nLAST=x\r\n'),
    { WATCH_NAMESPACE: 'shop', LOG_LEVEL: 'debug', GREETING: 'two\nlines', RAW: 'a\\nb', EMPTY: '', LAST: 'x' },
  );
  assert.deepEqual(parseEnvFile(''), {});
});

// The warnings of F5 (KUBECONFIG replaced, ENABLE_WEBHOOKS) name the envFile a variable came from.
test('readEnvFiles: files read in order, a later file\'s variable wins, each variable with the file it came from; envFilesOf: a path or a list', () => {
  const texts: Record<string, string> = { '/a.env': 'KUBECONFIG=/kind\nMINE=a\n', '/b.env': 'MINE=b\nENABLE_WEBHOOKS=true\n' };
  const { env, from } = readEnvFiles(envFilesOf(['/a.env', '', 3, '/b.env']), (f) => texts[f]!);
  assert.deepEqual(env, { KUBECONFIG: '/kind', MINE: 'b', ENABLE_WEBHOOKS: 'true' });
  assert.deepEqual(from, { KUBECONFIG: '/a.env', MINE: '/b.env', ENABLE_WEBHOOKS: '/b.env' });
  assert.deepEqual(envFilesOf('/a.env'), ['/a.env']);
  assert.deepEqual(envFilesOf(undefined), []);
  assert.throws(() => readEnvFiles(['/missing'], () => { throw new Error('ENOENT /missing'); }), /ENOENT \/missing/);
});
