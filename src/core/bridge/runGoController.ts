import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import type { BridgeHub } from './bridgeHub.ts';
import type { GoProcess } from './goProcess.ts';
import { describeExit, launchProcess, type LaunchedProcess, type LaunchSpec } from './launcher.ts';
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
  /** Each output line of the program, as it comes. */
  onOutput?: (line: string, stream: 'stdout' | 'stderr') => void;
  signal?: AbortSignal;
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
 * lines), when nothing is announced within `waitMs`, or when `signal`
 * aborts. The caller owns the launched process on success.
 */
export async function runGoController(o: RunGoControllerOptions): Promise<RunningGoController> {
  const before = new Set(o.hub.processes);
  const launched = launchProcess(o.spec, { clock: o.clock, ...(o.log ? { log: o.log } : {}), bridgeEnv: { ...(o.env ?? {}), ...o.hub.env() } });
  if (o.onOutput) launched.onOutput((l) => o.onOutput!(l.line, l.stream));
  const waitMs = o.waitMs ?? 300_000;
  const wait = new AbortController();
  const timer = o.clock.setTimeout(() => wait.abort(new Error(`${o.spec.command}: no controller announced within ${Math.round(waitMs / 1000)} s. Last output:\n${launched.tail(15).join('\n')}`)), waitMs);
  const onAbort = () => wait.abort(o.signal!.reason);
  if (o.signal?.aborted) onAbort();
  else o.signal?.addEventListener('abort', onAbort, { once: true });
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
    o.clock.clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
    wait.abort();
  }
}
