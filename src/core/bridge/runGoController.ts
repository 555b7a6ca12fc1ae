import { closestNames } from '../text/closest.ts';
import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../log.ts';
import { basename, resolve } from 'node:path';
import type { BridgeHub } from './bridgeHub.ts';
import { addressInUseHint, cacheSyncHint, forbiddenCacheHint, leaderElectionNamespaceHint, goCompileErrors, goExitDetails, goModTidyHint, webhookCertHint, type GoCompileError, type GoExitDetails } from './goModule.ts';
import type { GoProcess } from './goProcess.ts';
import { describeExit, launchProcess, leaderElectionFlag, leaderElectionFlagText, processGroupOf, type LaunchedProcess, type LaunchSpec } from './launcher.ts';
import { LeaseWaitReader, leaseUnrenewed, unrenewedLeaseText, type LeaseHolder, type LeaseRef } from './leaseWait.ts';
import type { BridgeRefusal } from './listener.ts';
import type { RemoteController } from './remoteController.ts';

/**
 * A Go program that exited before announcing a controller: the message has its last output; `details` the first
 * compile error's place (the editor offers to open it) and the program's own exit code under `go run`.
 */
export class GoProgramExitError extends Error {
  readonly details: GoExitDetails;
  /** Every compile error its last output lines name ({@link goCompileErrors}); empty when it compiled. */
  readonly compileErrors: readonly GoCompileError[];
  constructor(message: string, details: GoExitDetails, compileErrors: readonly GoCompileError[] = []) {
    super(message);
    this.details = details;
    this.compileErrors = compileErrors;
    this.name = 'GoProgramExitError';
  }
}

/**
 * The program announced every controller it sets up (or some, by a notice time) and none is the one asked for
 * (`wanted`): a mistake in what was asked (`--controller`, `--resource`), not in the program. The message lists what it
 * announced; `announced` has their names.
 */
export class GoControllerNotAnnouncedError extends Error {
  readonly announced: readonly string[];
  constructor(message: string, announced: readonly string[]) {
    super(message);
    this.announced = announced;
    this.name = 'GoControllerNotAnnouncedError';
  }
}

export interface RunGoControllerOptions {
  hub: BridgeHub;
  spec: LaunchSpec;
  clock: Clock;
  log?: Logger;
  /** Extra variables beside the bridge's (e.g. KUBECONFIG of the connection). The bridge's win. */
  env?: Readonly<Record<string, string>>;
  /** Give up after this long without a controller (a cold `go run` compiles for a minute or more). Default 5 min. */
  waitMs?: number;
  /**
   * Which announced controllers the run may resolve with (default: any of the new process). Of those, the run
   * resolves with the first the program sets up ({@link followedController}).
   */
  accept?: (c: { process: GoProcess; controller: RemoteController }) => boolean;
  /**
   * What `accept` wants, for people ("the controller reconciling widgets.lab.reconcile.dev (--resource)"): when the
   * program announced controllers but none is accepted at the notice time (or, when it had announced none then, at
   * a later multiple of `noticeAfterMs`), the run fails saying which it announced.
   */
  wanted?: string;
  /** The controller name the user gave (`--controller`): a failure suggests the announced name closest to it. */
  wantedName?: string;
  /** Each output line of the program, as it comes. */
  onOutput?: (line: string, stream: 'stdout' | 'stderr') => void;
  /**
   * Told once when no controller was announced `noticeAfterMs` after the launch (default 20 s): whether the
   * program has not dialled the bridge yet or dialled and announced nothing, and what usually causes it; when its
   * output says it waits for a leader-election Lease (client-go's "attempting to acquire leader lease ns/name"), that
   * Lease and, read through `leaseHolder`, who holds it. Default: a warning on `log`.
   */
  onNotice?: (message: string) => void;
  noticeAfterMs?: number;
  /**
   * The holder of a Lease (its spec.holderIdentity, and how recently it renewed it) read from the cluster
   * (leaseHolderReader of the connection's client), for the notice; undefined when it cannot be read. Without it the
   * notice names the Lease only.
   */
  leaseHolder?: (lease: LeaseRef, signal?: AbortSignal) => Promise<LeaseHolder | undefined>;
  signal?: AbortSignal;
  /** Told the launched process at once (before it announced anything). */
  onLaunched?: (launched: LaunchedProcess) => void;
  /** The process group of a pid (default: read from the system); injectable for tests. */
  processGroupOf?: (pid: number) => number | undefined;
}

/** How many runGoController calls wait for their program on each hub (see {@link refusalIsMine}). */
const waiting = new WeakMap<BridgeHub, number>();

/**
 * Whether a refused handshake on the hub came from the program this run launched: the pid of its hello is the
 * launched process or in its process group (`go run`'s compiled child). A refusal without a pid (no usable hello)
 * or whose group cannot be read is taken only while this run is the only one waiting on the hub; otherwise the
 * run ends by its program's exit or its timeout, with the notice.
 */
function refusalIsMine(r: BridgeRefusal, launched: LaunchedProcess, hub: BridgeHub, groupOf: (pid: number) => number | undefined): boolean {
  const alone = (waiting.get(hub) ?? 0) <= 1;
  if (r.pid === undefined || launched.pid === undefined) return alone;
  if (r.pid === launched.pid) return true;
  const group = groupOf(r.pid);
  return group === undefined ? alone : group === launched.pid;
}

type ControllerRef = { process: GoProcess; controller: RemoteController };

/**
 * Whether `p` announced every controller it set up: its announcements tell how many it declared (`declared`) and
 * the places 1…declared were all announced. False when its bridge does not say (an older bridge) or none came yet.
 */
export function everyControllerAnnounced(p: GoProcess): boolean {
  const declared = Math.max(0, ...p.controllers.map((c) => c.announcement.declared ?? 0));
  if (!declared) return false;
  const places = new Set(p.controllers.map((c) => c.announcement.order));
  for (let i = 1; i <= declared; i++) if (!places.has(i)) return false;
  return true;
}

/**
 * Resolves true once `p` announced every controller it set up ({@link everyControllerAnnounced}); false when `ms`
 * pass first or its connection closes, and at once when its bridge does not say how many it set up (an older bridge:
 * nothing to wait for). A
 * manager starts its controllers in parallel, so the others come shortly after the first; a command that reads them
 * and then stops the program waits here. The timer and listeners are disposed when it resolves.
 */
export function whenEveryControllerAnnounced(p: GoProcess, ms: number, clock: Clock): Promise<boolean> {
  const said = () => p.controllers.some((c) => (c.announcement.declared ?? 0) > 0);
  if (everyControllerAnnounced(p)) return Promise.resolve(true);
  if (!said() || p.liveness === 'exited') return Promise.resolve(false);
  return new Promise((resolve) => {
    const check = () => {
      if (everyControllerAnnounced(p)) end(true);
      else if (p.liveness === 'exited') end(false);
    };
    const added = p.onDidAddController(check);
    const changed = p.onDidChange(check);
    const timer = clock.setTimeout(() => end(false), ms);
    function end(v: boolean): void {
      added.dispose();
      changed.dispose();
      clock.clearTimeout(timer);
      resolve(v);
    }
  });
}

/**
 * The controller a run follows among `announced` (every controller of the run's process(es), in the order they
 * were announced): of those `accept` takes, the one with the lowest place in the program (`order`: the order of
 * its `bridge.Options` calls). A manager starts its controllers in parallel, so the first announced is a matter of
 * scheduling; the lowest place is the same on every run. `settled` once every controller of a lower place was
 * announced (a later announcement cannot change the choice then). Controllers without a place (a bridge that does
 * not send it): the first announced, settled. Undefined when `accept` takes none.
 */
export function followedController(announced: readonly ControllerRef[], accept: (c: ControllerRef) => boolean): { ref: ControllerRef; settled: boolean } | undefined {
  for (const p of [...new Set(announced.map((c) => c.process))]) {
    const mine = announced.filter((c) => c.process === p);
    const ok = mine.filter(accept);
    if (!ok.length) continue;
    const placed = ok.filter((c) => c.controller.announcement.order !== undefined);
    if (placed.length < ok.length) return { ref: ok.find((c) => c.controller.announcement.order === undefined)!, settled: true };
    const ref = placed.reduce((a, b) => (b.controller.announcement.order! < a.controller.announcement.order! ? b : a));
    const places = new Set(mine.map((c) => c.controller.announcement.order));
    let settled = true;
    for (let i = 1; i < ref.controller.announcement.order!; i++) if (!places.has(i)) settled = false;
    return { ref, settled };
  }
  return undefined;
}

export interface RunningGoController {
  readonly launched: LaunchedProcess;
  readonly process: GoProcess;
  readonly controller: RemoteController;
}

/** Go run flags that take a value as the next argument (`go help build`). */
const GO_VALUE_FLAGS = new Set(['-C', '-p', '-asmflags', '-buildmode', '-buildvcs', '-compiler', '-gccgoflags', '-gcflags', '-installsuffix', '-ldflags', '-mod', '-modfile', '-overlay', '-pgo', '-pkgdir', '-tags', '-toolexec', '-exec', '-o', '-covermode', '-coverpkg']);

/**
 * `go [-C dir] run [build flags] <package> [program args]` as `go build` arguments, the program's arguments and the
 * `-C` directory (go changes to it before anything else, so the program it runs starts there too; relative to the
 * command's working directory); undefined for any other command (it is launched as it is).
 */
export function splitGoRun(command: readonly string[]): { buildArgs: string[]; programArgs: string[]; chdir?: string } | undefined {
  if (command[0] !== 'go') return undefined;
  let chdir: string | undefined;
  let at = 1;
  // go accepts -C only first, as -C dir, -C=dir (or with two dashes).
  const c = /^--?C(?:=(.*))?$/.exec(command[1] ?? '');
  if (c) {
    chdir = c[1] ?? command[2];
    at = c[1] !== undefined ? 2 : 3;
    if (!chdir) return undefined;
  }
  if (command[at] !== 'run') return undefined;
  const buildArgs: string[] = [];
  let i = at + 1;
  for (; i < command.length; i++) {
    const a = command[i]!;
    if (!a.startsWith('-')) break;
    buildArgs.push(a);
    const flag = a.replace(/^--/, '-');
    if (!flag.includes('=') && GO_VALUE_FLAGS.has(flag) && i + 1 < command.length) buildArgs.push(command[++i]!);
  }
  if (i >= command.length) return undefined;
  buildArgs.push(command[i]!);
  return { buildArgs, programArgs: command.slice(i + 1), ...(chdir !== undefined ? { chdir } : {}) };
}

/**
 * The advice to build a `go run` program once instead of compiling it at every launch, in the terms of its own
 * command line (`command` is `go` and its arguments, as {@link splitGoRun} reads them): `go run ./cmd
 * --leader-elect=false` → `build it once (go build -o bin/manager ./cmd) and pass the binary, e.g. --go
 * "./bin/manager --leader-elect=false"`; build flags are kept, and with `-C operator` the build runs there
 * (`go -C operator build …`) and the binary is `operator/bin/manager`. Any other command line reads `<package>`.
 */
export function buildOnceAdvice(command: readonly string[]): string {
  const split = splitGoRun(command);
  if (!split) return 'build it once (go build -o bin/manager <package>) and pass the binary, e.g. --go ./bin/manager';
  const dir = split.chdir?.replace(/\/+$/, '');
  const binary = dir ? `${dir}/bin/manager` : './bin/manager';
  const go = [binary, ...split.programArgs].join(' ');
  return `build it once (${['go', ...(dir ? ['-C', dir] : []), 'build', '-o', 'bin/manager', ...split.buildArgs].join(' ')}) and pass the binary, e.g. --go ${split.programArgs.length ? `"${go}"` : go}`;
}

/**
 * Launches a Go controller program with the bridge's environment and
 * resolves with one of its controllers: the first the program sets up among
 * those `accept` takes, once the program announced it and every one it sets
 * up before ({@link followedController}), or the best announced at a notice
 * time when one set up before was not announced by then. Rejects — after
 * stopping the program — when the program exits first (with its last output
 * lines), when the bridge refuses its handshake (another protocol version, a
 * wrong token, not the bridge protocol: retrying cannot help), when nothing is
 * announced within `waitMs`, or when `signal` aborts. The caller owns the
 * launched process on success.
 */
export async function runGoController(o: RunGoControllerOptions): Promise<RunningGoController> {
  const before = new Set(o.hub.processes);
  waiting.set(o.hub, (waiting.get(o.hub) ?? 0) + 1);
  let launched: LaunchedProcess;
  try {
    launched = launchProcess(o.spec, { clock: o.clock, ...(o.log ? { log: o.log } : {}), bridgeEnv: { ...(o.env ?? {}), ...o.hub.env() } });
  } catch (e) {
    waiting.set(o.hub, (waiting.get(o.hub) ?? 1) - 1);
    throw e;
  }
  try {
    o.onLaunched?.(launched);
  } catch (e) {
    // The caller never got to own it: stop the program and give its place on the hub back before rethrowing.
    waiting.set(o.hub, (waiting.get(o.hub) ?? 1) - 1);
    await launched.stop();
    launched.dispose();
    throw e;
  }
  if (o.onOutput) launched.onOutput((l) => o.onOutput!(l.line, l.stream));
  // The Lease its leader election waits for, if it says so: the notice names it (until the run ends).
  const leases = new LeaseWaitReader();
  const leaseLines = launched.onOutput((l) => leases.line(l.line));
  /** The run ended (resolved or rejected): a holder read still under way tells nothing. */
  let ended = false;
  const waitMs = o.waitMs ?? 300_000;
  const wait = new AbortController();
  // `go run` (also `go -C dir run`): the program is compiled first, silently, for minutes on a cold build cache.
  const goRun = basename(o.spec.command) === 'go' && o.spec.args.slice(0, 3).includes('run');
  const buildFirst = buildOnceAdvice([basename(o.spec.command), ...o.spec.args]);
  const timer = o.clock.setTimeout(() => {
    const tail = launched.failureTail(15);
    const still = goRun && !tail.length ? ` go run printed nothing: it may still have been compiling (a cold build cache takes minutes); ${buildFirst}, or allow longer.` : '';
    wait.abort(new Error(`${o.spec.command}: no controller announced within ${Math.round(waitMs / 1000)} s.${still}${lastOutput(tail)}`));
  }, waitMs);
  const onAbort = () => wait.abort(o.signal!.reason);
  if (o.signal?.aborted) onAbort();
  else o.signal?.addEventListener('abort', onAbort, { once: true });
  const commandLine = [o.spec.command, ...o.spec.args].join(' ');
  // A refused handshake is final: the Go side would only redial and be refused again until waitMs. Only this run's
  // program's refusals count: another program launched on the same hub has its own run.
  const groupOf = o.processGroupOf ?? processGroupOf;
  const refused = o.hub.listener.onDidRefuse((r) => {
    if (!refusalIsMine(r, launched, o.hub, groupOf)) return;
    const reason = r.reason;
    if (/closed before hello|no hello within/.test(reason)) return; // a dial that went away: the exit says more
    const version = /protocol version/.test(reason)
      ? ': its bridge module speaks another protocol version; point the replace line of its go.mod at this Reconcile Lab\'s bridge/ directory and rebuild'
      : '';
    wait.abort(new Error(`${commandLine} dialled Reconcile Lab's bridge and was refused (${reason.replace(/^bridge handshake refused: /, '')})${version}.`));
  });
  const notice = o.onNotice ?? ((m: string) => o.log?.warn(m));
  const noticeAfterMs = o.noticeAfterMs ?? 20_000;
  let noticed = false;
  let noticeTimer: TimerHandle | undefined;
  const accept = o.accept ?? (() => true);
  let follow: ((ref: ControllerRef) => void) | undefined;
  const followed = new Promise<ControllerRef>((resolve) => (follow = resolve));
  /** Resolves `followed` with the controller to follow once it is settled (or, when `anyway`, when there is one). */
  const look = (anyway: boolean): boolean => {
    const f = followedController(o.hub.controllers.filter((c) => !before.has(c.process)), accept);
    if (!f || !(f.settled || anyway)) return false;
    follow?.(f.ref);
    return true;
  };
  /** Ends the run: the program announced controllers, none of them the one wanted (false when it announced none). */
  const refuseAnnounced = (): boolean => {
    const announced = o.hub.processes.filter((p) => !before.has(p)).flatMap((p) => p.controllers);
    if (!announced.length || !o.wanted) return false;
    const list = announced.map((c) => `${c.name}${c.resourceId ? ` (${c.resourceId})` : ''}`).join(', ');
    const close = o.wantedName !== undefined ? closestNames(o.wantedName, announced.map((c) => c.name)) : [];
    wait.abort(
      new GoControllerNotAnnouncedError(
        `${commandLine} announced ${list}, but not ${o.wanted}.${close.length ? ` Did you mean --controller ${close[0]}?` : ''}`,
        announced.map((c) => c.name),
      ),
    );
    return true;
  };
  const announcements = o.hub.onDidAddController(() => {
    if (look(false)) return;
    // Every controller the program set up is announced and none is accepted: no need to wait for the notice.
    const connected = o.hub.processes.filter((p) => !before.has(p));
    if (o.wanted && connected.length && connected.every(everyControllerAnnounced)) refuseAnnounced();
  });
  const check = () => {
    // A controller set up before the one accepted was never announced (it waits for leadership, or the program
    // never built it): follow the best announced.
    if (look(true)) return;
    const connected = o.hub.processes.filter((p) => !before.has(p));
    if (refuseAnnounced()) return;
    // With `wanted`, announcements are looked at again every noticeAfterMs: a program that announces only later
    // (a first go run compiles for minutes) and none it accepts fails then, not after waitMs.
    if (o.wanted) noticeTimer = o.clock.setTimeout(check, noticeAfterMs);
    if (noticed) return;
    noticed = true;
    const lease = leases.lease;
    if (lease) {
      const holder = o.leaseHolder ? o.leaseHolder(lease, wait.signal).catch(() => undefined) : Promise.resolve(undefined);
      void holder.then((h) => {
        // Announced (or ended) while the holder was read: nothing to say any more.
        if (!ended) notice(leaseWaitNotice(commandLine, connected.map((p) => p.pid), lease, h, o.spec.args));
      });
      return;
    }
    notice(
      connected.length
        ? `${commandLine} connected (pid ${connected.map((p) => p.pid).join(', ')}) but announced no controller yet: each controller needs WithOptions(bridge.Options(mgr, name, …)) in its SetupWithManager; its queue is announced when the manager starts the controller (after winning leader election when that is on).${leaderElectionNote(o.spec.args)}`
        : goRun
          ? `${commandLine} has not connected to Reconcile Lab yet: a first go run compiles for a minute or more (to skip that, ${buildFirst}); a program that never calls bridge.Setup or bridge.Options never connects.`
          : `${commandLine} has not connected to Reconcile Lab yet: a program that never calls bridge.Setup or bridge.Options never connects (go version -m ${o.spec.command} lists github.com/reconcile-lab/reconcile-lab/bridge when the bridge is built in).`,
    );
  };
  noticeTimer = o.clock.setTimeout(check, noticeAfterMs);
  try {
    look(false);
    const aborted = new Promise<never>((_, reject) => {
      if (wait.signal.aborted) reject(wait.signal.reason);
      else wait.signal.addEventListener('abort', () => reject(wait.signal.reason), { once: true });
    });
    const ref = await Promise.race([
      followed,
      aborted,
      launched.exited.then((e) => {
        const tail = launched.failureTail(15);
        const dir = o.spec.args[0] === '-C' && o.spec.args[1] ? resolve(o.spec.cwd ?? process.cwd(), o.spec.args[1]) : (o.spec.cwd ?? process.cwd());
        const details = goExitDetails(tail, dir);
        const hint = programExitHint(tail, dir, details);
        const own = details.programExitCode !== undefined && o.spec.args[0] === 'run' && !e.signal && e.code === 1
          ? `Your program itself exited with code ${details.programExitCode} (go run reports every failed program as 1).`
          : undefined;
        throw new GoProgramExitError(
          `${e.error ? e.error : `${[o.spec.command, ...o.spec.args].join(' ')} ${describeExit(e)} before announcing a controller`}.${lastOutput(tail)}${hint ? `\n${hint}` : ''}${own ? `\n${own}` : ''}`,
          details,
          goCompileErrors(tail, dir),
        );
      }),
    ]);
    return { launched, process: ref.process, controller: ref.controller };
  } catch (e) {
    await launched.stop();
    launched.dispose();
    throw e;
  } finally {
    ended = true;
    leaseLines.dispose();
    waiting.set(o.hub, (waiting.get(o.hub) ?? 1) - 1);
    o.clock.clearTimeout(timer);
    if (noticeTimer !== undefined) o.clock.clearTimeout(noticeTimer);
    refused.dispose();
    announcements.dispose();
    o.signal?.removeEventListener('abort', onAbort);
    wait.abort();
  }
}

/**
 * What a controller program's last output lines (`tail`) say about why it ended, for the module in `dir`: `go mod
 * tidy` still to run, a cache the API server's RBAC refused to list, a kind whose cache never synced (its CRD not installed), an address already in use, leader
 * election outside the cluster without a namespace, webhooks without a serving certificate. The same whether the
 * program ended before or after announcing its controllers (controller-runtime may start the webhook server, or
 * time out a cache, after the bridge announced them). Undefined for any other output.
 */
export function programExitHint(tail: readonly string[], dir: string, details: GoExitDetails = goExitDetails(tail, dir)): string | undefined {
  return goModTidyHint(tail, dir) ?? forbiddenCacheHint(tail) ?? cacheSyncHint(tail) ?? addressInUseHint(tail) ?? leaderElectionNamespaceHint(tail) ?? (details.webhookCert !== undefined ? webhookCertHint(tail, details.readsEnableWebhooks === true) : undefined);
}

/**
 * What the "announced no controller yet" notice adds for a program launched with leader election on (`--leader-elect`
 * among `args`): its controllers start only once it holds the lease, so another instance of the same program holding
 * it (`make run` in a terminal, the operator deployed in the cluster) keeps it waiting with nothing to show. "" otherwise.
 */
export function leaderElectionNote(args: readonly string[]): string {
  const flag = leaderElectionFlag(args);
  if (!flag) return '';
  const name = flag.split(' ')[0]!.replace(/=.*$/, '');
  const runsWith = flag.includes(' ') ? `${leaderElectionFlagText(flag)};` : `${flag}:`;
  return ` It runs with ${runsWith} its controllers start only after it wins the lease, and another instance of your program holding it (make run in a terminal, the operator deployed in this cluster) keeps it waiting until that one stops and the lease expires. Stop the other instance, or run with ${name}=false (leader election is not needed to debug a controller).`;
}

/**
 * The notice for a program that announced no controller and logged it waits for the leader-election Lease `lease`
 * (client-go's "attempting to acquire leader lease"): the Lease, its holder when it could be read, and the ways out —
 * stop the other instance while the holder renews it; when it has stopped renewing it (an earlier run that did not give
 * it back), that there is nothing to stop and when it expires. `pids`: the program's processes connected to the
 * bridge (none yet: it has not connected). The flag named is the one among `args` that turns leader election on, else
 * kubebuilder's `--leader-elect`.
 */
export function leaseWaitNotice(commandLine: string, pids: readonly number[], lease: LeaseRef, holder: LeaseHolder | undefined, args: readonly string[]): string {
  const given = leaderElectionFlag(args);
  const flag = given ? given.split(' ')[0]!.replace(/=.*$/, '') : '--leader-elect';
  const state = pids.length ? `connected (pid ${pids.join(', ')}) but announced no controller yet` : 'announced no controller yet';
  // `--leader-elect false` turns it on (a Go bool flag takes its value only after "="): say why it runs with it.
  const yours = !given ? ' (or the flag of your program that turns leader election off)' : given.includes(' ') ? ` (it runs with ${leaderElectionFlagText(given)})` : '';
  if (holder && leaseUnrenewed(holder)) {
    return `${commandLine} ${state}: it waits for leader election: Lease ${lease.namespace}/${lease.name} is held by ${unrenewedLeaseText(holder, `run with ${flag}=false${yours}`)}`;
  }
  const held = holder ? `is held by ${holder.identity}` : 'is held by another instance';
  return `${commandLine} ${state}: it waits for leader election: Lease ${lease.namespace}/${lease.name} ${held} (another instance of your program: make run in a terminal, the operator deployed in this cluster, a debug session). Its controllers start only once it holds the lease, when that instance stops and the lease expires. Stop the other instance, or run with ${flag}=false${yours} (leader election is not needed to debug a controller).`;
}

/** ` Last output:` and the lines (each on its own line), or '' when the program printed nothing. */
function lastOutput(tail: readonly string[]): string {
  return tail.length ? ` Last output:\n${tail.join('\n')}` : '';
}
