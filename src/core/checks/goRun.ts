import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sleep, type Clock } from '../clock.ts';
import { protectProcessGroup } from '../process/ownerWatchdog.ts';
import { BridgeHub } from '../bridge/bridgeHub.ts';
import { PROTOCOL, type WireWrite, type WriteMessage } from '../bridge/protocol.ts';
import type { RemoteController } from '../bridge/remoteController.ts';
import type { StepResult } from '../controller/controller.ts';
import { runGoController, splitGoRun, type RunningGoController } from '../bridge/runGoController.ts';
import { bridgeResourceName } from '../bridge/causes.ts';
import { Journal, type JournalEntry } from '../journal/journal.ts';
import type { WriteRecord } from '../k8s/dynamicClient.ts';
import { isNotFound } from '../k8s/client.ts';
import { keyFor, splitKey, type ObjectKey } from '../k8s/keys.ts';
import { KubeListerWatcher } from '../k8s/listerWatcher.ts';
import { loadKubeConfig } from '../k8s/kubeconfig.ts';
import type { KubeObject, ResourceInfo } from '../k8s/objects.ts';
import type { Disposable } from '../lifecycle.ts';
import { freezes, resourceLabelOf, viewKeyOf, type CheckRun, type HarnessEnv, type RunHooks, type RunWrite, type StartRun } from './harness.ts';

/**
 * The robustness checks on the developer's own Go controller-runtime controller, through the bridge (bridge/
 * checks.go). Every run is a NEW process of the developer's program (so a "crash" really loses its cache, queue
 * and memory), started as a check instance: restricted to the run's scratch namespace (never their objects), with
 * leader election, metrics and probes off, connected to its own bridge listener and journal. The perturbations are
 * made inside that process by the bridge: its client holds every write after write i, its cache lists at a frozen
 * resourceVersion until thawed, its informers withhold a key's update events until released.
 */

/** What to run: the developer's program, as `--go` takes it for the loop. */
export interface GoCheckTarget {
  /** The command line, split ("go", "run", "./cmd", "--flag"). `go run` is built once into a binary first. */
  command: string[];
  cwd?: string;
  /** Extra environment (KUBECONFIG of the connection). The bridge's variables win. */
  env?: Readonly<Record<string, string>>;
  /** Each output line of every launched instance. */
  onOutput?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** How long a launch may take to announce its controller. Default 5 min (a cold `go build`). */
  waitMs?: number;
  /** The name of the program's controller to check (default: the first reconciling the checked resource by object key). */
  controller?: string;
}

/**
 * Why a Go program started with KUBECONFIG=`kubeconfigPath` would not talk to the cluster of `context`: it reads the
 * file's current-context (controller-runtime's GetConfig has no context variable), so a different selected context
 * would put its scratch namespaces on one cluster and the program on another. Undefined when they agree.
 */
export function goContextProblem(kubeconfigPath: string | undefined, context: string, consequence = 'the checks would copy your objects into one cluster and run the controller against another'): string | undefined {
  let current: string;
  try {
    const kc = loadKubeConfig(kubeconfigPath ? { path: kubeconfigPath } : {});
    current = kc.getCurrentContext();
    if (current === context) return undefined;
    // Two contexts on the same server with the same user (they may differ in namespace only) reach the same cluster
    // as the same identity: nothing to tell.
    const a = kc.getContextObject(current);
    const b = kc.getContextObject(context);
    if (a && b && a.user === b.user && kc.getCluster(a.cluster)?.server === kc.getCluster(b.cluster)?.server && kc.getCluster(a.cluster)?.server !== undefined) return undefined;
  } catch {
    return undefined; // the connection itself already read it; nothing more to say here
  }
  return `the Go controller reads the kubeconfig's current-context "${current}", not the selected context "${context}" (another cluster or user): ${consequence}. Switch the kubeconfig's current-context (kubectl config use-context ${context}) or pass a kubeconfig whose current-context is ${context}.`;
}

export { splitGoRun } from '../bridge/runGoController.ts';

/**
 * Runs `command` (the `go build` of a check's controller) to its end in a process group of its own (the compilers it
 * starts belong to it), registered with the owner's watchdog, so neither a cancel nor the owner's death leaves a
 * build running. An abort interrupts the group with SIGINT, as Ctrl+C does, and SIGKILL follows after `killGraceMs`.
 * Rejects with the abort's reason, or with the exit code and the last 4,000 characters of output.
 */
function runToEnd(command: string, args: string[], cwd: string | undefined, env: NodeJS.ProcessEnv, signal: AbortSignal, clock: Clock, killGraceMs = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const guard = protectProcessGroup(child.pid);
    let killTimer: ReturnType<Clock['setTimeout']> | undefined;
    const group = (sig: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, sig);
      } catch {
        // gone
      }
    };
    const onAbort = () => {
      group('SIGINT');
      killTimer = clock.setTimeout(() => group('SIGKILL'), killGraceMs);
    };
    const settle = () => {
      signal.removeEventListener('abort', onAbort);
      if (killTimer !== undefined) clock.clearTimeout(killTimer);
      guard.dispose();
    };
    let out = '';
    const keep = (d: Buffer) => {
      out = (out + d.toString('utf8')).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', (e) => {
      settle();
      reject(e);
    });
    child.once('exit', (code) => {
      settle();
      if (signal.aborted) reject(signal.reason instanceof Error ? signal.reason : new Error('the build was cancelled'));
      else if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} exited with code ${code}:\n${out.trim()}`));
    });
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The {@link StartRun} of a Go controller. `prepare` builds a `go run` command once (every run then starts the
 * binary in a fraction of a second); `dispose` removes the binary.
 */
export class GoCheckRunner implements Disposable {
  private readonly target: GoCheckTarget;
  private command: string[];
  private cwd: string | undefined;
  private dir: string | undefined;

  constructor(target: GoCheckTarget) {
    this.target = target;
    this.command = [...target.command];
    this.cwd = target.cwd;
  }

  /** The working directory each run starts in: the target's, or (a built `go -C dir run`) that `dir` under it. */
  get launchCwd(): string | undefined {
    return this.cwd;
  }

  /** The command as the person gave it (for messages: the built binary is temporary). */
  get givenCommand(): readonly string[] {
    return this.target.command;
  }

  /** The command each run launches (after {@link prepare}: the built binary for a `go run` command). */
  get launchCommand(): readonly string[] {
    return this.command;
  }

  /** Whether {@link prepare} builds something: a `go run` command (a program given as a binary is run as it is). */
  get builds(): boolean {
    return splitGoRun(this.target.command) !== undefined;
  }

  /**
   * Builds a `go run` command's package into a temporary binary (once), in this runner's directory, which
   * {@link dispose} removes. go build's own work directory (GOTMPDIR) is in it too: a build stopped by `signal` (Ctrl+C
   * during check) is interrupted, and an interrupted or killed go build leaves its go-build* directory behind.
   */
  async prepare(signal: AbortSignal, clock: Clock): Promise<void> {
    const split = splitGoRun(this.target.command);
    if (!split || this.dir) return;
    this.dir = mkdtempSync(join(tmpdir(), 'reconcile-lab-check-'));
    const bin = join(this.dir, 'controller');
    const work = join(this.dir, 'gotmp');
    mkdirSync(work);
    const [pkg] = split.buildArgs.slice(-1);
    await runToEnd('go', [...(split.chdir !== undefined ? ['-C', split.chdir] : []), 'build', '-o', bin, ...split.buildArgs.slice(0, -1), pkg!], this.target.cwd, { ...process.env, ...(this.target.env ?? {}), GOTMPDIR: work }, signal, clock);
    this.command = [bin, ...split.programArgs];
    if (split.chdir !== undefined) this.cwd = resolve(this.target.cwd ?? process.cwd(), split.chdir);
  }

  readonly startRun: StartRun = (env, namespace, hooks) => startGoRun(this, env, namespace, hooks);

  /** @internal */
  get targetOptions(): GoCheckTarget {
    return this.target;
  }

  dispose(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}

/** The content type of a server-side apply patch (controller-runtime's `client.Apply` patch). */
const APPLY_PATCH_TYPE = 'application/apply-patch+yaml';

/**
 * A wire write as the harness's write record (bodies as the check instance sent them); a patch of the apply patch
 * type is recorded with the verb `apply`.
 */
export function runWriteOf(m: WriteMessage, at: number): RunWrite {
  const w: WireWrite = m.write;
  // A patch of controller-runtime's client.Apply type (Patch(ctx, obj, client.Apply)) is a server-side apply: the
  // checks judge it as one (a no-op apply on every pass is not a finding).
  const applyPatch = w.verb === 'patch' && w.patchType === APPLY_PATCH_TYPE;
  const verb = w.verb === 'deleteAllOf' ? 'delete' : applyPatch ? 'apply' : (['create', 'update', 'patch', 'apply', 'delete'] as const).find((v) => v === w.verb) ?? 'update';
  const record: WriteRecord = {
    verb,
    gvr: { group: w.group, version: w.version, resource: w.resource },
    ...(w.namespace ? { namespace: w.namespace } : {}),
    name: w.name,
    key: keyFor(w.namespace, w.name),
    dryRun: w.dryRun,
    ...(w.subresource ? { subresource: w.subresource } : {}),
    ...(w.resourceVersionBefore ? { resourceVersionBefore: w.resourceVersionBefore } : {}),
    ...(w.resourceVersionAfter ? { resourceVersionAfter: w.resourceVersionAfter } : {}),
    ...(w.deleted ? { deleted: true } : {}),
    ...(w.warnings?.length ? { warnings: [...w.warnings] } : {}),
    ...(w.before ? { before: w.before as unknown as KubeObject } : {}),
    ...(w.after ? { after: w.after as unknown as KubeObject } : {}),
    outcome: w.error !== undefined ? 'error' : 'ok',
    ...(w.error !== undefined ? { error: { code: 0, reason: 'Error', message: w.error } } : {}),
    startedAt: m.at,
    durationMs: 0,
  };
  return { record, key: m.key ?? record.key, at };
}

class GoRun implements CheckRun {
  readonly writes: RunWrite[] = [];
  readonly entries: JournalEntry[] = [];
  lastActivity: number;
  controller!: RemoteController;
  running!: RunningGoController;
  private stopped = false;
  private readonly hub: BridgeHub;
  private readonly journal: Journal;
  private readonly env: HarnessEnv;
  private readonly namespace: string;
  private readonly hooks: RunHooks;

  constructor(hub: BridgeHub, journal: Journal, env: HarnessEnv, namespace: string, hooks: RunHooks) {
    this.hub = hub;
    this.journal = journal;
    this.env = env;
    this.namespace = namespace;
    this.hooks = hooks;
    this.lastActivity = env.clock.now();
    journal.onDidAppend((batch) => {
      for (const e of batch) {
        this.entries.push(e);
        if (e.kind !== 'queue' || e.transition !== 'waiting') this.lastActivity = e.at;
      }
    });
  }

  attach(r: RunningGoController): void {
    this.running = r;
    this.controller = r.controller;
  }

  onWrite(m: WriteMessage): void {
    const w = runWriteOf(m, this.env.clock.now());
    this.writes.push(w);
    this.lastActivity = w.at;
    if (this.hooks.crashAfterWrites !== undefined && w.record.outcome === 'ok' && !w.record.dryRun) {
      const ok = this.writes.filter((x) => x.record.outcome === 'ok' && !x.record.dryRun).length;
      if (ok === this.hooks.crashAfterWrites) this.hooks.onCrash?.();
    }
  }

  private async command(op: 'thaw' | 'withhold' | 'release', key?: ObjectKey): Promise<number> {
    const reply = await this.running.process.request({ op, controller: this.controller.name, ...(key !== undefined ? { key, resource: bridgeResourceName(this.env.primary) } : {}) });
    if (!reply.ok) throw new Error(`${op} refused by ${this.running.process.description}: ${reply.error ?? 'no reason given'}`);
    return reply.withheld ?? 0;
  }

  async frozenView(): Promise<Map<string, KubeObject>> {
    if (this.hooks.freezeAt === undefined) throw new Error('frozenView: this run was not started with a frozen cache');
    // The frozen cache listed at exactly this resourceVersion: the same list, read here, is what it holds.
    const view = new Map<string, KubeObject>();
    for (const r of [this.env.primary, ...this.env.owned]) {
      // A cluster-scoped primary: the instance's cache holds its copy alone (RECONCILE_LAB_CHECK_CLUSTER_OBJECT).
      const scope = r.namespaced ? { namespace: this.namespace } : r === this.env.primary && this.hooks.key !== undefined ? { fieldSelector: `metadata.name=${this.hooks.key}` } : {};
      const lw = new KubeListerWatcher({ transport: this.env.transport, resource: r, ...scope });
      // With freezeOnly, the other resources' informers are current: read them as they are now.
      const l = await lw.list(freezes(this.hooks, r) ? { resourceVersion: this.hooks.freezeAt, resourceVersionMatch: 'Exact' } : {}, this.env.signal);
      for (const o of l.items) view.set(viewKeyOf(r, o.metadata.namespace, o.metadata.name), o);
    }
    if (this.hooks.freezeOnly?.length) await this.verifyFrozenOnly();
    return view;
  }

  /**
   * Rejects when the program's cache holds the copy (the primary, which {@link RunHooks.freezeOnly} leaves current) at
   * another resourceVersion than the server: its bridge ignored RECONCILE_LAB_CHECK_FREEZE_RESOURCES (a bridge older
   * than this editor) and froze the whole cache, so the view would not be the one the check names. Without a key, or
   * when the primary is itself to be frozen, there is nothing to compare and it passes.
   */
  private async verifyFrozenOnly(): Promise<void> {
    const key = this.hooks.key;
    const primary = this.env.primary;
    if (key === undefined || this.hooks.freezeOnly?.some((r) => r.group === primary.group && r.resource === primary.resource)) return;
    const { namespace, name } = splitKey(key);
    const server = await this.env.client.get(primary, namespace, name, this.env.signal);
    const cached = await this.controller.cachedObject(primary, key);
    const rv = cached.object?.metadata.resourceVersion;
    if (rv !== undefined && rv !== server.metadata.resourceVersion) {
      throw new Error(`${this.running.process.description} froze its whole cache, not only its cache of ${(this.hooks.freezeOnly ?? []).map((r) => resourceLabelOf(r)).join(', ')} (it holds ${resourceLabelOf(primary)} ${key} at resourceVersion ${rv}, the server at ${server.metadata.resourceVersion}): its bridge package is older than this Reconcile Lab and ignores ${PROTOCOL.env.checkFreezeResources}. Point the replace directive of its go.mod at this Reconcile Lab's bridge (Set Up Go Bridge…), run go mod tidy, and run the checks again.`);
    }
  }


  async thaw(): Promise<void> {
    await this.command('thaw');
  }

  async withhold(): Promise<void> {
    if (this.hooks.withholdKey === undefined) throw new Error('withhold: this run was not started with withholdKey');
    await this.command('withhold', this.hooks.withholdKey);
  }

  async release(): Promise<number> {
    if (this.hooks.withholdKey === undefined) throw new Error('release: this run was not started with withholdKey');
    return this.command('release', this.hooks.withholdKey);
  }

  async stepKey(key: ObjectKey): Promise<StepResult> {
    const ends = () => this.entries.filter((e) => e.kind === 'reconcileEnd' && e.key === key).length;
    this.journal.flush();
    const before = ends();
    const r = await this.controller.step({ key, force: true });
    if (r.kind !== 'reconciled') return r;
    // The reply travels ahead of the reconcile's write and end messages (the process prefers replies): wait for
    // the end message, which the process sends after every write of that reconcile.
    const start = this.env.clock.now();
    for (;;) {
      this.journal.flush();
      if (ends() > before) return r;
      if (this.env.clock.now() - start > 30_000) throw new Error(`the Go controller replied to the step of ${key} but its reconcile end never arrived`);
      await sleep(this.env.clock, 20, this.env.signal);
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    try {
      if (this.running) {
        await this.running.launched.stop();
        this.running.launched.dispose();
      }
    } finally {
      this.journal.flush();
      this.hub.dispose();
      this.journal.dispose();
    }
  }
}

/** How long a new check instance may take to queue its key before the harness looks whether the copy still exists. */
const GONE_LOOK_MS = 5_000;

/** Whether the primary object `key` names is gone from the server (false when it exists or cannot be read). */
async function goneFromServer(env: HarnessEnv, key: ObjectKey): Promise<boolean> {
  const { namespace, name } = splitKey(key);
  try {
    await env.client.get(env.primary, env.primary.namespaced ? namespace : undefined, name, env.signal);
    return false;
  } catch (e) {
    return isNotFound(e);
  }
}

/**
 * Why a check instance never queued `key`: the copy it was started for is gone (deleted, or its last finalizer
 * removed) before the instance saw it — typically another instance of the controller
 * (a `run --go`, Run Controller…, the deployed controller) acting on the scratch namespaces.
 */
export function goneBeforeQueuedText(key: ObjectKey, namespaced: boolean): string {
  return `the Go controller never queued ${key}: the copy no longer exists, and this check instance never saw it. Something else deleted it or removed its last finalizer — most likely another instance of this controller${namespaced ? ' reconciling every namespace' : ''} (a reconcile-lab run --go or Run Controller… left running, or the controller deployed in the cluster) acting on the scratch copies: stop it (or scope it to its namespaces) and check again`;
}

/**
 * Why a check instance that started never queued the copy `key` within its minute, in words. Its manager's cache
 * watches the scratch namespace whatever the program's cache.Options say (the bridge sets it), so the usual cause is
 * the controller's own event filter: a predicate that lets through one fixed namespace, name or label (the copy
 * lives elsewhere), or a label / field selector of its cache for that kind that the copy does not match.
 */
export function notQueuedText(key: ObjectKey): string {
  return `the Go controller did not queue ${key} within 60 s, though its check instance's cache watches the scratch namespace: most likely an event filter of the controller (builder.WithPredicates, WithEventFilter) lets through only a fixed namespace, name or label the copy does not have, or a label or field selector of its cache (cache.Options.ByObject) leaves the copy out; the checks reconcile copies in scratch namespaces, so such a controller cannot be checked this way.`;
}

async function startGoRun(runner: GoCheckRunner, env: HarnessEnv, namespace: string, hooks: RunHooks): Promise<CheckRun> {
  const target = runner.targetOptions;
  const journal = new Journal({ clock: env.clock, capacity: 20_000 });
  const hub = await BridgeHub.start({ clock: env.clock, journal, log: env.log, startPaused: () => hooks.startPaused === true });
  const run = new GoRun(hub, journal, env, namespace, hooks);
  try {
    const [command, ...args] = runner.launchCommand;
    const vars: Record<string, string> = { ...(target.env ?? {}), [PROTOCOL.env.checkNamespace]: namespace };
    if (hooks.crashAfterWrites !== undefined) vars[PROTOCOL.env.checkHoldAfterWrites] = String(hooks.crashAfterWrites);
    if (hooks.freezeAt !== undefined) vars[PROTOCOL.env.checkFreezeCacheAt] = hooks.freezeAt;
    if (hooks.freezeAt !== undefined && hooks.freezeOnly?.length) vars[PROTOCOL.env.checkFreezeResources] = hooks.freezeOnly.map((r) => resourceLabelOf(r)).join(',');
    if (!env.primary.namespaced) {
      // The scratch namespace does not scope cluster-scoped objects: the instance's cache sees the copy alone among
      // the objects of the kind, and the copy is the one object outside the namespace it may write.
      if (hooks.key === undefined) throw new Error('a check run of a cluster-scoped resource needs the key of its copy');
      const { group, version, kind, resource } = env.primary;
      vars[PROTOCOL.env.checkClusterObject] = JSON.stringify({ group, version, kind, resource, name: hooks.key });
    }
    // The hub (disposed with the run) owns both subscriptions.
    hub.onDidAddProcess((p) => p.onDidWrite((m) => run.onWrite(m)));
    const r = await runGoController({
        hub,
        spec: { command: command!, args, ...(runner.launchCwd ? { cwd: runner.launchCwd } : {}) },
        clock: env.clock,
        log: env.log,
        env: vars,
        waitMs: target.waitMs ?? 300_000,
        // Checks reconcile copies by object key: a controller with a custom request type (keys that are texts of its
        // own items) cannot be driven by them.
        accept: (c) =>
          !c.controller.announcement.requestType &&
          (target.controller === undefined || c.controller.name === target.controller) &&
          (c.controller.resourceId === undefined || c.controller.resourceId === (env.primary.group ? `${env.primary.resource}.${env.primary.group}` : env.primary.resource)),
        // A program none of whose controllers reconciles the checked resource fails once it announced the others.
        wanted: `${target.controller !== undefined ? `the controller ${target.controller}, ` : ''}a controller reconciling ${env.primary.group ? `${env.primary.resource}.${env.primary.group}` : env.primary.resource} (the checked --resource) with reconcile.Request keys (checks reconcile copies by object key; a controller with a custom request type is not checked)`,
        ...(target.onOutput ? { onOutput: target.onOutput } : {}),
        signal: env.signal,
      });
    run.attach(r);
    if (hooks.startPaused) r.controller.pause();
    else r.controller.resume();
    if (hooks.key !== undefined) {
      // The controller is announced when its queue is built, before the cache synced: wait until it saw the key.
      const start = env.clock.now();
      const key = hooks.key;
      let lookedAt = start;
      for (;;) {
        journal.flush();
        if (run.entries.some((e) => e.key === key)) break;
        if (r.launched.exit) throw new Error(`the Go controller exited before it saw ${key}. Last output:\n${r.launched.failureTail(15).join('\n')}`);
        // Once its cache had time to sync, a copy that is gone explains the silence: say so now, not after 60 s.
        if (env.clock.now() - lookedAt >= GONE_LOOK_MS) {
          lookedAt = env.clock.now();
          if (await goneFromServer(env, key)) throw new Error(goneBeforeQueuedText(key, env.primary.namespaced));
        }
        if (env.clock.now() - start > 60_000) throw new Error(`${notQueuedText(key)} Last output:\n${r.launched.failureTail(15).join('\n')}`);
        await sleep(env.clock, 50, env.signal);
      }
    }
    return run;
  } catch (e) {
    await run.stop();
    throw e;
  }
}
