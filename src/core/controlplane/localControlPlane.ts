import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Emitter, type Event } from '../event.ts';
import type { Disposable } from '../lifecycle.ts';
import { createOwnedTempDir } from '../process/ownedTempDir.ts';
import { protectProcessGroup } from '../process/ownerWatchdog.ts';
import { createMiniCa } from './pki.ts';

/**
 * A real, local Kubernetes control plane in the envtest style: etcd,
 * kube-apiserver and (optionally) kube-controller-manager running only the
 * garbage-collector and namespace controllers, each its own process group,
 * on free loopback ports, with every file in one private temp dir.
 *
 * The binaries come from (first match): `options.binary` (the kube-testenv
 * multicall binary), `KUBEBUILDER_ASSETS` (envtest's etcd + kube-apiserver,
 * and kube-controller-manager when present), or a one-time Go build by
 * `scripts/build-control-plane.sh`, cached by version.
 *
 * Invariant: after `stop()` resolves no process of this control plane is
 * alive and its temp dir is gone. A start failure stops whatever started and
 * throws an error carrying the last lines of the failing component's log.
 *
 * Nothing outlives the process that started it: every component's process
 * group is registered with the owner's parent-death watchdog
 * (src/core/process/ownerWatchdog.ts), so a SIGKILLed owner takes them along;
 * the temp dir carries an owner record, and the next start removes the dir
 * (and any process still running from it) of a run that died (see
 * src/core/process/ownedTempDir.ts).
 *
 * etcd only talks to authenticated clients: its client and peer ports are
 * TLS with client certificates required, from a CA made for this control
 * plane whose keys stay in the private dir; kube-apiserver presents one.
 */
export interface LocalControlPlane {
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** An admin kubeconfig (system:masters) for this control plane. */
  readonly kubeconfigPath: string;
  /** The private temp dir holding data, keys, logs and the kubeconfig. */
  readonly dir: string;
  /**
   * etcd's client URL (https, client certificate required). The CA, certificate and key kube-apiserver uses
   * for it are {@link etcdClientTls}; for tests and diagnostics.
   */
  readonly etcdUrl: string;
  readonly etcdClientTls: { readonly caFile: string; readonly certFile: string; readonly keyFile: string };
  /**
   * A component exited although nobody stopped it (it crashed, or someone sent it a signal). The control
   * plane does not restart it; owners that run as one unit (`npm run lab`) stop everything.
   */
  readonly onDidExitUnexpectedly: Event<ComponentExit>;
  /**
   * Stops kube-apiserver only (etcd and its data stay): for tests of watch
   * interruptions. By default SIGTERM, then SIGKILL after 10 s (a graceful
   * kube-apiserver waits on open watches, so this usually takes the 10 s);
   * `{ graceMs: 0 }` kills it at once, like a crash: open connections drop
   * and it is gone when the promise resolves, so a test can make an outage
   * of a chosen length.
   */
  stopApiServer(options?: StopApiServerOptions): Promise<void>;
  /** Starts kube-apiserver again on the same port with the same data; resolves when /readyz answers ok. */
  startApiServer(): Promise<void>;
  /** Stops every component (SIGTERM, then SIGKILL after a grace period) and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

/** How a component ended. */
export interface ComponentExit {
  readonly component: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface StopApiServerOptions {
  /** Time between SIGTERM and SIGKILL; default 10 s. 0: SIGKILL at once (no graceful shutdown). */
  graceMs?: number;
}

export interface LocalControlPlaneOptions {
  /** Path to the kube-testenv multicall binary. */
  binary?: string;
  /** Repository root (to find scripts/build-control-plane.sh). Default: derived from this file's location. */
  repoRoot?: string;
  /** Also run kube-controller-manager (garbage collector + namespace controller). Default true. */
  controllerManager?: boolean;
  /** Start limit per component in ms. Default: RECONCILE_LAB_START_TIMEOUT or 90 s (2-core machines are slow). */
  startTimeoutMs?: number;
  /** Progress lines for people (never contains credentials). */
  log?: (line: string) => void;
  /**
   * Picks a free loopback port (etcd client, etcd peer, kube-apiserver, in that order, per attempt). Default: the
   * kernel's choice for a listener closed at once. Tests inject ports that are taken to exercise the retry.
   */
  pickPort?: () => Promise<number>;
}

/**
 * Start attempts when a component finds its port taken. A port is picked by binding and closing a listener, so another
 * process can take it before etcd or kube-apiserver binds it (seen on busy CI machines); a new attempt picks new ports.
 */
export const PORT_ATTEMPTS = 3;

/** Whether a start failure is a component that could not bind the port picked for it. */
function portTaken(e: unknown): boolean {
  return e instanceof ControlPlaneError && /exited during start-up/.test(e.message) && /bind: address already in use/.test(e.message);
}

/** A start failure, with the failing component's log tail. */
export class ControlPlaneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ControlPlaneError';
  }
}

interface Binaries {
  etcd: string[];
  apiserver: string[];
  controllerManager?: string[];
}

const live = new Set<ChildProcess>();
const liveDirs = new Set<string>();
let exitHookInstalled = false;

/** Last resort: if the Node process exits without stop(), kill every process group we started. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of live) killGroup(p, 'SIGKILL');
    for (const d of liveDirs) rmSync(d, { recursive: true, force: true });
  });
}

function killGroup(p: ChildProcess, signal: NodeJS.Signals): void {
  if (p.pid === undefined || p.exitCode !== null || p.signalCode !== null) return;
  try {
    process.kill(-p.pid, signal);
  } catch {
    try {
      p.kill(signal);
    } catch {
      // already gone
    }
  }
}

function defaultRepoRoot(): string {
  const url = (import.meta as { url?: string }).url;
  if (url) return resolve(dirname(fileURLToPath(url)), '../../..');
  return process.cwd();
}

/**
 * Finds or builds the binaries. The Go build (first run only) runs as a child
 * process without blocking the event loop, so an extension host stays
 * responsive; its progress lines go to `options.log`. Throws a
 * ControlPlaneError saying what to install when nothing works.
 */
export async function resolveBinaries(options: LocalControlPlaneOptions = {}): Promise<Binaries> {
  const multicall = (bin: string): Binaries => ({
    etcd: [bin, 'etcd'],
    apiserver: [bin, 'kube-apiserver'],
    controllerManager: [bin, 'kube-controller-manager'],
  });
  if (options.binary) return multicall(options.binary);
  const assets = process.env.KUBEBUILDER_ASSETS;
  if (assets) {
    const etcd = join(assets, 'etcd');
    const apiserver = join(assets, 'kube-apiserver');
    if (!existsSync(etcd) || !existsSync(apiserver)) {
      throw new ControlPlaneError(`KUBEBUILDER_ASSETS=${assets} does not contain etcd and kube-apiserver.`);
    }
    const kcm = join(assets, 'kube-controller-manager');
    return { etcd: [etcd], apiserver: [apiserver], ...(existsSync(kcm) ? { controllerManager: [kcm] } : {}) };
  }
  const script = join(options.repoRoot ?? defaultRepoRoot(), 'scripts/build-control-plane.sh');
  if (!existsSync(script)) throw new ControlPlaneError(`Cannot find ${script} to build the control plane.`);
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((res) => {
    const p = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
    p.stderr!.setEncoding('utf8').on('data', (c: string) => {
      err = (err + c).slice(-64_000);
      for (const line of c.split('\n')) if (line.startsWith('[control-plane build]')) options.log?.(line.slice(22).trim());
    });
    p.on('error', (e) => res({ code: -1, stdout: out, stderr: `${err}\n${e.message}` }));
    p.on('close', (c) => res({ code: c, stdout: out, stderr: err }));
  });
  if (code !== 0) {
    const tail = stderr.trim().split('\n').slice(-15).join('\n');
    throw new ControlPlaneError(code === 3 ? tail : `Building the local control plane failed (exit ${code}):\n${tail}`);
  }
  return multicall(stdout.trim().split('\n').pop()!);
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.unref();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

interface ProbeResult {
  status: number;
  body: string;
}

interface ProbeAuth {
  ca?: string;
  token?: string;
  /** A client certificate and key (PEM). */
  cert?: string;
  key?: string;
}

function probe(url: string, auth: ProbeAuth = {}): Promise<ProbeResult> {
  return new Promise((res) => {
    const u = new URL(url);
    const { ca, token, cert, key } = auth;
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(
      u,
      { method: 'GET', timeout: 2000, ...(ca ? { ca } : {}), ...(cert && key ? { cert, key } : {}), headers: token ? { Authorization: `Bearer ${token}` } : {} },
      (r) => {
        let body = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (body += c));
        r.on('end', () => res({ status: r.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => res({ status: 0, body: '' }));
    req.end();
  });
}

class Component {
  readonly name: string;
  readonly logFile: string;
  private readonly argv: string[];
  private readonly onUnexpectedExit: (e: ComponentExit) => void;
  proc?: ChildProcess;

  constructor(name: string, argv: string[], logFile: string, onUnexpectedExit: (e: ComponentExit) => void = () => {}) {
    this.name = name;
    this.argv = argv;
    this.logFile = logFile;
    this.onUnexpectedExit = onUnexpectedExit;
  }

  start(): void {
    // Output goes straight to the log file (no pipes through this process), and the child is unref'd:
    // it never keeps Node alive on its own; the exit hook kills it if stop() was never called, and the
    // watchdog if this process dies without running exit hooks.
    const fd = openSync(this.logFile, 'a');
    const [cmd, ...args] = this.argv;
    try {
      const p = spawn(cmd!, args, { detached: true, stdio: ['ignore', fd, fd] });
      p.unref();
      live.add(p);
      const guard: Disposable = protectProcessGroup(p.pid);
      const ended = () => {
        live.delete(p);
        // The leader is gone: reap anything left in its group, then stop watching the (now free) pgid.
        if (p.pid !== undefined) {
          try {
            process.kill(-p.pid, 'SIGKILL');
          } catch {
            // the group is empty
          }
        }
        guard.dispose();
      };
      p.on('exit', (code, signal) => {
        ended();
        if (this.proc === p) {
          this.proc = undefined;
          this.onUnexpectedExit({ component: this.name, code, signal });
        }
      });
      p.on('error', ended);
      this.proc = p;
    } finally {
      closeSync(fd);
    }
  }

  get exited(): boolean {
    const p = this.proc;
    return !p || p.exitCode !== null || p.signalCode !== null;
  }

  /** SIGTERM, then SIGKILL after `graceMs` (0: SIGKILL at once); resolves once the process has exited. */
  async stop(graceMs = 10_000): Promise<void> {
    const p = this.proc;
    if (!p) return;
    this.proc = undefined;
    if (p.exitCode === null && p.signalCode === null) {
      const exited = new Promise<void>((res) => p.once('exit', () => res()));
      killGroup(p, graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
      const timer = setTimeout(() => killGroup(p, 'SIGKILL'), Math.max(0, graceMs));
      await exited;
      clearTimeout(timer);
    }
    // Any grandchild left in the group goes too.
    killGroup(p, 'SIGKILL');
  }
}

async function waitFor(what: Component, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (what.exited) {
      throw new ControlPlaneError(`${what.name} exited during start-up. Last lines of ${what.logFile}:\n${tail(what.logFile)}`);
    }
    if (await check()) return;
    if (Date.now() > deadline) {
      throw new ControlPlaneError(`${what.name} was not ready after ${Math.round(timeoutMs / 1000)} s. Last lines of ${what.logFile}:\n${tail(what.logFile)}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
}

/**
 * Starts a local control plane; see {@link LocalControlPlane}. When etcd or kube-apiserver finds the port picked for it
 * taken, the failed attempt is stopped and removed and the start is tried again on new ports, up to
 * {@link PORT_ATTEMPTS} times; any other failure (and the last one) is thrown as it is.
 */
export async function startLocalControlPlane(options: LocalControlPlaneOptions = {}): Promise<LocalControlPlane> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (e) {
      if (attempt >= PORT_ATTEMPTS || !portTaken(e)) throw e;
      options.log?.(`a port picked for the control plane was taken before its component bound it; starting again on other ports (attempt ${attempt + 1} of ${PORT_ATTEMPTS})`);
    }
  }
}

async function startOnce(options: LocalControlPlaneOptions): Promise<LocalControlPlane> {
  const log = options.log ?? (() => {});
  const pickPort = options.pickPort ?? freePort;
  const timeoutMs = options.startTimeoutMs ?? (Number(process.env.RECONCILE_LAB_START_TIMEOUT) || 90_000);
  const bins = await resolveBinaries(options);
  installExitHook();

  const dir = createOwnedTempDir('reconcile-lab-cp-', { onLeftoverRemoved: (d) => log(`removed ${d}, left behind by a run that did not stop`) });
  liveDirs.add(dir);
  const components: Component[] = [];
  let stopped = false;
  const exitEmitter = new Emitter<ComponentExit>();
  const unexpected = (e: ComponentExit) => {
    if (!stopped) exitEmitter.fire(e);
  };
  const stopAll = async () => {
    if (stopped) return;
    stopped = true;
    for (const c of components.slice().reverse()) await c.stop();
    rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
    exitEmitter.dispose();
  };

  try {
    const [etcdPort, peerPort, apiPort] = [await pickPort(), await pickPort(), await pickPort()];

    // Credentials: a bearer token for the admin user, and the service-account signing key pair.
    const token = randomBytes(24).toString('hex');
    writeFileSync(join(dir, 'tokens.csv'), `${token},reconcile-lab-admin,reconcile-lab-admin,"system:masters"\n`, { mode: 0o600 });
    const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(dir, 'sa.key'), sa.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    writeFileSync(join(dir, 'sa.pub'), sa.publicKey.export({ type: 'spki', format: 'pem' }), { mode: 0o600 });

    // etcd's own PKI: client and peer ports require a certificate from this CA (nobody else on the machine
    // can read or write the cluster's data through them).
    const etcdPki = join(dir, 'etcd-pki');
    mkdirSync(etcdPki, { mode: 0o700 });
    const etcdCa = createMiniCa('reconcile-lab-etcd-ca');
    const etcdServer = etcdCa.issue('etcd');
    const etcdClient = etcdCa.issue('kube-apiserver-etcd-client');
    const pkiFile = (name: string, pemText: string) => {
      const f = join(etcdPki, name);
      writeFileSync(f, pemText, { mode: 0o600 });
      return f;
    };
    const etcdCaFile = pkiFile('ca.crt', etcdCa.certPem);
    const etcdCert = pkiFile('server.crt', etcdServer.certPem);
    const etcdKey = pkiFile('server.key', etcdServer.keyPem);
    const clientCert = pkiFile('client.crt', etcdClient.certPem);
    const clientKey = pkiFile('client.key', etcdClient.keyPem);
    const etcdUrl = `https://127.0.0.1:${etcdPort}`;

    const etcd = new Component('etcd', [
      ...bins.etcd,
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--cert-file=${etcdCert}`,
      `--key-file=${etcdKey}`,
      `--trusted-ca-file=${etcdCaFile}`,
      '--client-cert-auth=true',
      `--listen-peer-urls=https://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=https://127.0.0.1:${peerPort}`,
      `--initial-cluster=default=https://127.0.0.1:${peerPort}`,
      `--peer-cert-file=${etcdCert}`,
      `--peer-key-file=${etcdKey}`,
      `--peer-trusted-ca-file=${etcdCaFile}`,
      '--peer-client-cert-auth=true',
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ], join(dir, 'etcd.log'), unexpected);
    components.push(etcd);
    log(`starting etcd on 127.0.0.1:${etcdPort} (TLS, client certificates required)`);
    etcd.start();
    const etcdAuth = { ca: etcdCa.certPem, cert: etcdClient.certPem, key: etcdClient.keyPem };
    await waitFor(etcd, async () => (await probe(`${etcdUrl}/health`, etcdAuth)).status === 200, timeoutMs);

    const certDir = join(dir, 'pki');
    const apiserver = new Component('kube-apiserver', [
      ...bins.apiserver,
      `--etcd-servers=${etcdUrl}`,
      `--etcd-cafile=${etcdCaFile}`,
      `--etcd-certfile=${clientCert}`,
      `--etcd-keyfile=${clientKey}`,
      `--secure-port=${apiPort}`,
      '--bind-address=127.0.0.1',
      `--cert-dir=${certDir}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--allow-privileged=true',
      '--disable-admission-plugins=ServiceAccount',
      '--authorization-mode=RBAC',
      `--service-account-issuer=https://127.0.0.1:${apiPort}/`,
      `--service-account-key-file=${join(dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
      '--endpoint-reconciler-type=none',
      '--v=0',
    ], join(dir, 'kube-apiserver.log'), unexpected);
    components.push(apiserver);
    const server = `https://127.0.0.1:${apiPort}`;
    const caFile = join(certDir, 'apiserver.crt');
    const apiReady = async () => {
      if (!existsSync(caFile)) return false;
      const r = await probe(`${server}/readyz`, { ca: readFileSync(caFile, 'utf8'), token });
      return r.status === 200;
    };
    const startApi = async () => {
      log(`starting kube-apiserver on ${server}`);
      apiserver.start();
      await waitFor(apiserver, apiReady, timeoutMs);
    };
    await startApi();

    const kubeconfigPath = join(dir, 'kubeconfig');
    writeFileSync(kubeconfigPath, [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: reconcile-lab',
      '  cluster:',
      `    server: ${server}`,
      `    certificate-authority: ${caFile}`,
      'users:',
      '- name: reconcile-lab-admin',
      '  user:',
      `    token: ${token}`,
      'contexts:',
      '- name: reconcile-lab',
      '  context:',
      '    cluster: reconcile-lab',
      '    user: reconcile-lab-admin',
      '    namespace: default',
      'current-context: reconcile-lab',
      '',
    ].join('\n'), { mode: 0o600 });

    if ((options.controllerManager ?? true) && bins.controllerManager) {
      const kcm = new Component('kube-controller-manager', [
        ...bins.controllerManager,
        `--kubeconfig=${kubeconfigPath}`,
        '--controllers=garbagecollector,namespace',
        '--leader-elect=false',
        '--secure-port=0',
        '--use-service-account-credentials=false',
        '--v=0',
      ], join(dir, 'kube-controller-manager.log'), unexpected);
      components.push(kcm);
      log('starting kube-controller-manager (garbage collector, namespace controller)');
      kcm.start();
      // KCM has no port to probe here (secure-port=0): give it a moment to fail on bad flags.
      await new Promise((r) => setTimeout(r, 1500));
      if (kcm.exited) {
        throw new ControlPlaneError(`kube-controller-manager exited during start-up. Last lines of ${kcm.logFile}:\n${tail(kcm.logFile)}`);
      }
    }

    return {
      server,
      kubeconfigPath,
      dir,
      etcdUrl,
      etcdClientTls: { caFile: etcdCaFile, certFile: clientCert, keyFile: clientKey },
      onDidExitUnexpectedly: exitEmitter.event,
      stopApiServer: (o: StopApiServerOptions = {}) => apiserver.stop(o.graceMs ?? 10_000),
      startApiServer: startApi,
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
