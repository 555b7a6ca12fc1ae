import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createMiniCa } from '../../../src/core/controlplane/pki.ts';
import { OWNER_FILE, removeLeftoverTempDirs } from '../../../src/core/process/ownedTempDir.ts';
import { alive } from '../../support/alive.ts';

// Real processes and files, no cluster. Waiting for a process to die polls /proc (bounded), no timed assertion.


/** Waits (up to 10 s) until `cond` holds; a `cond` that throws (a /proc entry not there yet) counts as not yet. */
async function eventually(cond: () => boolean, what: string): Promise<void> {
  const holds = () => {
    try {
      return cond();
    } catch {
      return false;
    }
  };
  for (let i = 0; i < 200 && !holds(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(holds(), what);
}

test('pki: the CA and a leaf for 127.0.0.1/localhost, server and client use, signed by the CA', () => {
  const ca = createMiniCa('test-ca');
  const leaf = ca.issue('etcd');
  const c = new X509Certificate(ca.certPem);
  const l = new X509Certificate(leaf.certPem);
  assert.equal(c.ca, true);
  assert.equal(l.ca, false);
  assert.ok(l.checkIssued(c) && l.verify(c.publicKey), 'the leaf is signed by the CA');
  assert.ok(!l.verify(new X509Certificate(createMiniCa('other').certPem).publicKey), 'and not by another CA');
  assert.equal(l.checkIP('127.0.0.1'), '127.0.0.1');
  assert.equal(l.checkHost('localhost'), 'localhost');
  assert.deepEqual(l.keyUsage, ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
  assert.match(l.subject, /CN=etcd/);
  assert.match(l.issuer, /CN=test-ca/);
  assert.ok(new Date(l.validFrom) <= new Date() && new Date() < new Date(l.validTo));
  assert.match(leaf.keyPem, /^-----BEGIN PRIVATE KEY-----/);
});

test('leftover temp dirs: a dead owner\'s dir goes (with a process still running from it); live owners, fresh unowned dirs and other prefixes stay', async () => {
  const root = mkdtempSync(join(tmpdir(), 'rl-sweep-test-'));
  try {
    const mk = (name: string, owner?: object) => {
      const d = join(root, name);
      mkdirSync(d);
      if (owner) writeFileSync(join(d, OWNER_FILE), JSON.stringify(owner));
      return d;
    };
    // A dead owner: a process that has exited.
    const gone = spawn('true');
    await new Promise((r) => gone.once('exit', r));
    const dead = mk('p-dead', { pid: gone.pid });
    // A process still running from the dead run's dir (like an orphaned etcd --data-dir=<dir>/etcd).
    // (`--` makes the flag the script's argument: Node would refuse it as one of its own options and exit at once.)
    const orphanWithDir = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', `--data-dir=${dead}/etcd`], { stdio: 'ignore' });
    await eventually(() => readFileSync(`/proc/${orphanWithDir.pid}/cmdline`, 'utf8').includes(dead), 'the orphan runs');
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(alive(orphanWithDir.pid!), 'the orphan keeps running until the sweep');
    const live = mk('p-live', { pid: process.pid });
    const reused = mk('p-reused', { pid: process.pid, start: '1' }); // our pid, but another start time: a recycled pid
    const fresh = mk('p-unowned-fresh');
    const old = mk('p-unowned-old');
    utimesSync(old, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    const other = mk('q-dead', { pid: gone.pid });

    const removed = removeLeftoverTempDirs('p-', root).sort();
    assert.deepEqual(removed, [dead, old, reused].sort());
    for (const d of [dead, old, reused]) assert.ok(!existsSync(d), `${d} removed`);
    for (const d of [live, fresh, other]) assert.ok(existsSync(d), `${d} kept`);
    await eventually(() => !alive(orphanWithDir.pid!), 'the process running from the dead dir was killed');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('watchdog: groups registered by an owner that is SIGKILLed get killed; a released group is left alone', async () => {
  const watchdog = JSON.stringify(resolve(import.meta.dirname, '../../../src/core/process/ownerWatchdog.ts'));
  const script = `
    const { spawn } = await import('node:child_process');
    const { protectProcessGroup } = await import(${watchdog});
    const a = spawn('sh', ['-c', 'sleep 300 & wait'], { detached: true, stdio: 'ignore' });
    const b = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
    protectProcessGroup(a.pid);
    protectProcessGroup(b.pid).dispose();
    console.log(a.pid + ' ' + b.pid);
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
  const [a, b] = line.split(' ').map(Number) as [number, number];
  // a's background sleep: the other member of a's group.
  const member = () => Number(readFileSync(`/proc/${a}/task/${a}/children`, 'utf8').trim().split(' ')[0]);
  await eventually(() => member() > 0, 'the protected group has a grandchild');
  const grandchild = member();
  try {
    assert.ok(alive(a) && alive(grandchild) && alive(b));
    owner.kill('SIGKILL');
    await eventually(() => !alive(a) && !alive(grandchild), 'the protected group (leader and grandchild) was killed');
    assert.ok(alive(b), 'the released group still runs');
  } finally {
    for (const p of [b, grandchild]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
});
