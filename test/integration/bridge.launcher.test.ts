import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { realClock } from '../../src/core/clock.ts';
import { launchProcess } from '../../src/core/bridge/launcher.ts';

// Real processes (no cluster needed). Waiting for a process to die is polling /proc: no timed assertion.

/** Alive and not a zombie. */
function alive(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return false;
  try {
    const state = readFileSync(stat, 'utf8').split(') ')[1]?.[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

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
  assert.equal(exit.signal, 'SIGTERM');
  await gone(gpid, 'the grandchild (like the binary go run builds)');
  assert.deepEqual(p.tail(), [line]);
  p.dispose();
});

test('launcher: a program that cannot start is a clear exit, not a throw', async () => {
  const p = launchProcess({ command: '/nonexistent/go', args: ['run', '.'] }, { clock: realClock, bridgeEnv: {} });
  const e = await p.exited;
  assert.match(e.error ?? '', /\/nonexistent\/go: spawn \/nonexistent\/go ENOENT/);
  p.dispose();
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
