// Processes never outlive their owner (issue 9 §12), with real processes: a real local control plane (etcd,
// kube-apiserver, kube-controller-manager), an exec reconciler run, and `npm run lab`. Waiting for a process to die
// polls /proc (bounded); nothing asserts on elapsed time.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { request } from 'node:https';
import { request as httpRequest } from 'node:http';
import { join, resolve } from 'node:path';
import { createOwnedTempDir, processesUsing } from '../../src/core/process/ownedTempDir.ts';
import { alive } from '../support/alive.ts';
import { startCliProcess } from './support/cli.ts';

const root = resolve(import.meta.dirname, '../..');
const src = (p: string) => JSON.stringify(resolve(root, 'src', p));

/** Alive and not a zombie. */

async function eventually(cond: () => boolean, what: string, tries = 600): Promise<void> {
  for (let i = 0; i < tries && !cond(); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(cond(), what);
}

/** Collects every line of `child`'s stdout into the returned array, for as long as the child runs. */
function collectLines(child: ChildProcess): string[] {
  const lines: string[] = [];
  let buf = '';
  child.stdout!.on('data', (b: Buffer) => {
    buf += b.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
  return lines;
}

/** Resolves with the first collected line matching `re` (rejects if the child exits first). */
async function lineMatching(child: ChildProcess, lines: string[], re: RegExp): Promise<RegExpMatchArray> {
  for (;;) {
    for (const line of lines) {
      const m = re.exec(line);
      if (m) return m;
    }
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited (${child.signalCode ?? child.exitCode}) before printing ${re}:\n${lines.slice(-30).join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function get(url: string, options: Record<string, unknown>): Promise<number | string> {
  return new Promise((res) => {
    const u = new URL(url);
    const req = (u.protocol === 'https:' ? request : httpRequest)(u, { timeout: 5000, ...options }, (r) => {
      r.resume();
      res(r.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => res(`error: ${e.message}`));
    req.end();
  });
}

const exited = (c: ChildProcess) => new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => {
  if (c.exitCode !== null || c.signalCode !== null) r({ code: c.exitCode, signal: c.signalCode });
  else c.once('exit', (code, signal) => r({ code, signal }));
});

describe('processes never outlive their owner', () => {
  it('SIGKILL of the owner: etcd, kube-apiserver, kube-controller-manager and a running exec program (and its child) all go; etcd took only authenticated clients; the next start removes the temp dir', { timeout: 600_000 }, async () => {
    const script = `
      const { startLocalControlPlane } = await import(${src('core/controlplane/localControlPlane.ts')});
      const { createExecReconciler } = await import(${src('core/reconcilers/execReconciler.ts')});
      const cp = await startLocalControlPlane();
      const r = createExecReconciler({ command: ['sh', '-c', 'sleep 300 & wait'], timeoutMs: 0 });
      const ctx = {
        cache: { get: () => ({ metadata: { name: 'w' } }) }, primary: { group: 'g', version: 'v1', resource: 'things' },
        signal: new AbortController().signal, dryRun: false, log: { debug() {}, info() {}, warn() {}, error() {} },
      };
      void r.reconcile({ key: 'ns/w', namespace: 'ns', name: 'w' }, ctx).catch(() => {});
      console.log(JSON.stringify({ dir: cp.dir, etcdUrl: cp.etcdUrl, tls: cp.etcdClientTls }));
      setInterval(() => {}, 1000);
    `;
    // The exec program is found through /proc (a child of the owner running `sh -c 'sleep 300 & wait'`).
    const owner = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const seen = collectLines(owner);
      const ready = JSON.parse((await lineMatching(owner, seen, /^\{"dir":.*\}$/))[0]) as { dir: string; etcdUrl: string; tls: { caFile: string; certFile: string; keyFile: string } };
      const { dir, etcdUrl, tls } = ready;

      // etcd: only clients with a certificate from this control plane's CA get an answer.
      const ca = readFileSync(tls.caFile, 'utf8');
      assert.equal(await get(`${etcdUrl}/health`, { ca, cert: readFileSync(tls.certFile, 'utf8'), key: readFileSync(tls.keyFile, 'utf8') }), 200, 'with the client certificate');
      const anonymous = await get(`${etcdUrl}/health`, { ca });
      assert.notEqual(anonymous, 200, `without a client certificate: ${anonymous}`);
      const plain = await get(etcdUrl.replace('https:', 'http:') + '/health', {});
      assert.notEqual(plain, 200, `plain http: ${plain}`);

      // Every component runs from the private dir; the exec program and its background child run too.
      const components = processesUsing(dir);
      const names = components.map((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').join(' '));
      for (const c of ['etcd', 'kube-apiserver', 'kube-controller-manager']) assert.ok(names.some((n) => n.includes(c)), `${c} runs: ${names.join('\n')}`);
      // The exec program is a process group of its own whose leader's parent is the owner. Spawning is
      // asynchronous as far as /proc is concerned (the fork shows node's cmdline until exec, and `sh` forks its
      // background `sleep` when it gets the CPU), so both are waited for, bounded.
      const programs = (): number[] => readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number).filter((p) => {
        try {
          const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
          const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          return Number(f[1]) === owner.pid && readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith('sh\0-c\0sleep 300');
        } catch {
          return false;
        }
      });
      await eventually(() => programs().length === 1, 'the exec program runs');
      const program = programs()[0]!;
      const groupOf = (leader: number): number[] => readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number).filter((p) => {
        try {
          const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === leader && alive(p);
        } catch {
          return false;
        }
      });
      await eventually(() => groupOf(program).length >= 2, `the program and its background sleep share its group: ${groupOf(program).join(' ')}`);
      const group = groupOf(program);

      owner.kill('SIGKILL');
      await exited(owner);
      await eventually(() => processesUsing(dir).length === 0, `every control plane process is gone (left: ${processesUsing(dir).join(' ')})`);
      await eventually(() => group.every((p) => !alive(p)), 'the exec program and its child are gone');
      for (const p of components) assert.ok(!alive(p), `pid ${p} is gone`);

      // No exit hook ran: the dir is still there, until the next start sweeps it.
      assert.ok(existsSync(dir), 'the dead run left its temp dir');
      const next = createOwnedTempDir('reconcile-lab-cp-');
      try {
        assert.ok(!existsSync(dir), 'the next start removed the leftover dir');
      } finally {
        rmSync(next, { recursive: true, force: true });
      }
    } finally {
      if (owner.exitCode === null && owner.signalCode === null) owner.kill('SIGKILL');
    }
  });

  // A lab a failed or timed-out test left running gets the Ctrl-C treatment.
  const labs: ChildProcess[] = [];
  after(() => {
    for (const l of labs) if (l.exitCode === null && l.signalCode === null) l.kill('SIGTERM');
  });

  /** `npm run lab -- --no-vscode` as `node scripts/run.cjs lab --no-vscode`; resolves once the lab is up. */
  async function startLab(): Promise<{ run: ChildProcess; dir: string; out: string[] }> {
    const run = spawn(process.execPath, [resolve(root, 'scripts/run.cjs'), 'lab', '--no-vscode'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    labs.push(run);
    const out = collectLines(run);
    const kubeconfig = (await lineMatching(run, out, /^\s*kubeconfig:\s+(\S+)\/kubeconfig\s*$/))[1]!;
    await lineMatching(run, out, /press Ctrl-C to stop everything/);
    return { run, dir: kubeconfig, out };
  }

  async function assertAllGone(lab: { run: ChildProcess; dir: string; out: string[] }): Promise<void> {
    const how = await exited(lab.run);
    await eventually(() => processesUsing(lab.dir).length === 0, `no lab process is left (left: ${processesUsing(lab.dir).join(' ')})`);
    await eventually(() => !existsSync(lab.dir), 'the lab removed its temp dir');
    assert.ok(lab.out.some((l) => /stopped; nothing left running/.test(l)), `the lab says it stopped (${JSON.stringify(how)}):\n${lab.out.slice(-10).join('\n')}`);
  }

  it('npm run lab: SIGTERM to scripts/run.cjs stops everything', { timeout: 600_000 }, async () => {
    const lab = await startLab();
    try {
      assert.ok(processesUsing(lab.dir).length >= 3, 'the lab runs its control plane');
      lab.run.kill('SIGTERM');
      await assertAllGone(lab);
    } finally {
      lab.run.kill('SIGTERM');
    }
  });

  it('npm run lab: SIGTERM to etcd stops everything', { timeout: 600_000 }, async () => {
    const lab = await startLab();
    try {
      const etcd = processesUsing(lab.dir).find((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('--data-dir='));
      assert.ok(etcd, 'etcd runs');
      process.kill(etcd, 'SIGTERM');
      await assertAllGone(lab);
      assert.ok(lab.out.some((l) => /etcd exited by itself/.test(l)), 'the lab says why it stopped');
    } finally {
      lab.run.kill('SIGTERM');
    }
  });
});

describe('the CLI process ends when its command has answered', () => {
  it('Ctrl+C / SIGTERM while run or check connects (a server that never answers): the command answers 130 / 143 with its --json line (Node\'s default ended it, silent)', { timeout: 60_000 }, async () => {
    const sockets: Socket[] = [];
    const server = createServer((c) => void sockets.push(c));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const dir = mkdtempSync(join(tmpdir(), 'rl-cli-connecting-'));
    try {
      const kubeconfig = join(dir, 'kubeconfig');
      const port = (server.address() as AddressInfo).port;
      writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{ name: c, cluster: { server: "https://127.0.0.1:${port}" } }]\nusers: [{ name: u, user: { token: t } }]\ncontexts: [{ name: x, context: { cluster: c, user: u } }]\ncurrent-context: x\n`);
      for (const [command, signal, code, said] of [['run', 'SIGINT', 130, 'interrupted'], ['check', 'SIGINT', 130, 'interrupted'], ['run', 'SIGTERM', 143, 'terminated (SIGTERM)'], ['check', 'SIGTERM', 143, 'terminated (SIGTERM)']] as const) {
        const seen = sockets.length;
        const cli = startCliProcess([command, '--kubeconfig', kubeconfig, '--json']);
        // The deterministic point: the CLI's discovery request is open on the silent server.
        await eventually(() => sockets.length > seen, `${command} connects to the silent server`);
        cli.kill(signal);
        const r = await cli.exited;
        assert.equal(r.code, code, `${command} ${signal}: ${r.stderr}`);
        assert.deepEqual(r.stdout.trim().split('\n').map((l) => JSON.parse(l)), [{ error: `${said}: ${command} stopped before it finished`, exitCode: code }], r.stdout);
        assert.equal(r.stderr, `reconcile-lab: ${said}: ${command} stopped before it finished\n`);
      }
    } finally {
      for (const sk of sockets) sk.destroy();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("Ctrl+C while a TLS connection to a server that never answers is still opening: the process ends after saying 'interrupted' (it lingered ~20 s, until undici gave up connecting)", { timeout: 9_000 }, async () => {
    // A TCP server that accepts and then says nothing: undici's TLS handshake waits for its 10 s connect timeout,
    // and neither closing nor destroying its dispatcher ends that wait (nodejs/undici#4405).
    const sockets: Socket[] = [];
    const server = createServer((c) => void sockets.push(c));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const dir = mkdtempSync(join(tmpdir(), 'rl-cli-silent-'));
    try {
      const kubeconfig = join(dir, 'kubeconfig');
      const port = (server.address() as AddressInfo).port;
      writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{ name: c, cluster: { server: "https://127.0.0.1:${port}" } }]\nusers: [{ name: u, user: { token: t } }]\ncontexts: [{ name: x, context: { cluster: c, user: u } }]\ncurrent-context: x\n`);
      const cli = startCliProcess(['report', '--kubeconfig', kubeconfig]);
      await eventually(() => sockets.length > 0, 'the CLI connects to the silent server');
      cli.kill('SIGINT');
      // Ended by the CLI's own grace timer (1 s after its answer). The test's bound (9 s from its start, startup
      // included) is below undici's 10 s connect timeout, which the process otherwise waited out (and more).
      const r = await cli.exited;
      assert.equal(r.code, 130, r.stderr);
      assert.match(r.stderr, /interrupted: report stopped before it finished/);
    } finally {
      for (const sk of sockets) sk.destroy();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
