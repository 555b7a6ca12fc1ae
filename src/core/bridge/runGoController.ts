import type { Clock, TimerHandle } from '../clock.ts';
import type { Logger } from '../log.ts';
import type { BridgeHub } from './bridgeHub.ts';
import type { GoProcess } from './goProcess.ts';
import { describeExit, launchProcess, processGroupOf, type LaunchedProcess, type LaunchSpec } from './launcher.ts';
import type { BridgeRefusal } from './listener.ts';
import type { RemoteController } from './remoteController.ts';

export interface RunGoControllerOptions {
  hub: BridgeHub;
  spec: LaunchSpec;
  clock: Clock;
  log?: Logger;
  /** Extra variables beside the bridge's (e.g. KUBECONFIG of the connection). The bridge's win. */
  env?: Readonly<Record<string, string>>;
  /** Give up after this long without a controller (a cold `go run` compiles for a minute or more). Default 5 min. */
  waitMs?: number;
  /** Which announced controller to resolve with (default: the first of the new process). */
  accept?: (c: { process: GoProcess; controller: RemoteController }) => boolean;
  /**
   * What `accept` wants, for people ("the controller reconciling widgets.lab.reconcile.dev (--resource)"): when the
   * program announced controllers but none is accepted at the notice time (or, when it had announced none then, at
   * a later multiple of `noticeAfterMs`), the run fails saying which it announced.
   */
  wanted?: string;
  /** Each output line of the program, as it comes. */
  onOutput?: (line: string, stream: 'stdout' | 'stderr') => void;
  /**
   * Told once when no controller was announced `noticeAfterMs` after the launch (default 20 s): whether the
   * program has not dialled the bridge yet or dialled and announced nothing, and what usually causes it.
   * Default: a warning on `log`.
   */
  onNotice?: (message: string) => void;
  noticeAfterMs?: number;
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

export interface RunningGoController {
  readonly launched: LaunchedProcess;
  readonly process: GoProcess;
  readonly controller: RemoteController;
}

/**
 * Launches a Go controller program with the bridge's environment and
 * resolves once one of its controllers is announced. Rejects — after
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
  const waitMs = o.waitMs ?? 300_000;
  const wait = new AbortController();
  const timer = o.clock.setTimeout(() => wait.abort(new Error(`${o.spec.command}: no controller announced within ${Math.round(waitMs / 1000)} s. Last output:\n${launched.tail(15).join('\n')}`)), waitMs);
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
  const check = () => {
    const connected = o.hub.processes.filter((p) => !before.has(p));
    const announced = connected.flatMap((p) => p.controllers);
    if (announced.length && o.wanted) {
      const list = announced.map((c) => `${c.name}${c.resourceId ? ` (${c.resourceId})` : ''}`).join(', ');
      wait.abort(new Error(`${commandLine} announced ${list}, but not ${o.wanted}.`));
      return;
    }
    // With `wanted`, announcements are looked at again every noticeAfterMs: a program that announces only later
    // (a first go run compiles for minutes) and none it accepts fails then, not after waitMs.
    if (o.wanted) noticeTimer = o.clock.setTimeout(check, noticeAfterMs);
    if (noticed) return;
    noticed = true;
    notice(
      connected.length
        ? `${commandLine} connected (pid ${connected.map((p) => p.pid).join(', ')}) but announced no controller yet: each controller needs WithOptions(bridge.Options(mgr, name, …)) in its SetupWithManager; its queue is announced when the manager starts the controller (after winning leader election when that is on).`
        : `${commandLine} has not connected to Reconcile Lab yet: a first go run compiles for a minute or more; a program that never calls bridge.Setup or bridge.Options never connects.`,
    );
  };
  noticeTimer = o.clock.setTimeout(check, noticeAfterMs);
  try {
    const accept = o.accept ?? (() => true);
    const ref = await Promise.race([
      o.hub.waitForController((c) => !before.has(c.process) && accept(c), wait.signal),
      launched.exited.then((e) => {
        throw new Error(`${[o.spec.command, ...o.spec.args].join(' ')} ${describeExit(e)} before announcing a controller. Last output:\n${launched.tail(15).join('\n')}`);
      }),
    ]);
    return { launched, process: ref.process, controller: ref.controller };
  } catch (e) {
    await launched.stop();
    launched.dispose();
    throw e;
  } finally {
    waiting.set(o.hub, (waiting.get(o.hub) ?? 1) - 1);
    o.clock.clearTimeout(timer);
    if (noticeTimer !== undefined) o.clock.clearTimeout(noticeTimer);
    refused.dispose();
    o.signal?.removeEventListener('abort', onAbort);
    wait.abort();
  }
}
