import { spawn, type ChildProcess } from 'node:child_process';
import { toDisposable, type Disposable } from '../lifecycle.ts';

/**
 * Parent-death watchdog: process groups this process started end when this process ends, however it ends
 * (a normal exit, an uncaught exception, SIGKILL, an out-of-memory kill), not only through exit hooks, which
 * SIGKILL skips.
 *
 * Mechanism (POSIX, no native code, no polling): one small `sh` per owner process, started with a pipe on its
 * stdin whose only write end is held by the owner (Node opens it close-on-exec, so no other child inherits it).
 * The owner sends `+<pgid>` / `-<pgid>` lines as it starts and reaps process groups. When the owner dies for
 * any reason the kernel closes the write end, `read` sees end-of-file, and the watchdog ends every group still
 * registered as Ctrl+C in a terminal would: SIGINT (`go run` then waits for its program and removes its build
 * directory, which SIGTERM would leave behind), SIGTERM after the grace period, SIGKILL one second later.
 *
 * The watchdog runs in a session of its own (`detached`), so a Ctrl-C in the terminal or a signal to the
 * owner's process group does not take it down with the owner; it ignores SIGINT and SIGHUP too. It never keeps
 * the owner's event loop alive. If it is killed, the next {@link protectProcessGroup} starts a new one and
 * registers every group still protected.
 *
 * Contract for callers: register a group right after spawning its leader with `detached: true` (so its pid is
 * the pgid), and dispose the registration as soon as the leader has exited and the group was reaped, so a
 * recycled pgid is never signalled.
 */

/** What the watchdog runs: POSIX sh builtins only (dash's `kill` takes "-<pgid>", it has no `--`). */
const SCRIPT = [
  "trap '' INT HUP",
  'groups=" "',
  'while read -r op; do',
  '  g=${op#?}',
  '  case "$op" in',
  '    +*) groups="$groups$g " ;;',
  '    -*) case "$groups" in *" $g "*) groups="${groups%% $g *} ${groups#* $g }" ;; esac ;;',
  '  esac',
  'done',
  '[ -n "${groups# }" ] || exit 0',
  'for g in $groups; do kill -INT "-$g" 2>/dev/null; done',
  'sleep "$1"',
  'for g in $groups; do kill -TERM "-$g" 2>/dev/null; done',
  'sleep 1',
  'for g in $groups; do kill -KILL "-$g" 2>/dev/null; done',
].join('\n');

/** Grace between the watchdog's SIGINT and SIGTERM, in whole seconds (SIGKILL follows SIGTERM after one more). */
export const WATCHDOG_GRACE_SECONDS = 2;

let watchdog: ChildProcess | undefined;
/** Protected groups, with how many registrations each has. */
const protectedGroups = new Map<number, number>();

function send(line: string): void {
  const w = ensureWatchdog();
  if (!w?.stdin || w.stdin.destroyed) return;
  w.stdin.write(`${line}\n`);
}

function ensureWatchdog(): ChildProcess | undefined {
  if (watchdog && watchdog.exitCode === null && watchdog.signalCode === null && watchdog.stdin && !watchdog.stdin.destroyed) return watchdog;
  let w: ChildProcess;
  try {
    w = spawn('sh', ['-c', SCRIPT, 'reconcile-lab-watchdog', String(WATCHDOG_GRACE_SECONDS)], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    });
  } catch {
    watchdog = undefined;
    return undefined;
  }
  watchdog = w;
  w.on('error', () => {
    if (watchdog === w) watchdog = undefined;
  });
  w.on('exit', () => {
    if (watchdog === w) watchdog = undefined;
  });
  // A dead watchdog makes writes fail with EPIPE: the next registration starts a new one.
  w.stdin?.on('error', () => {
    if (watchdog === w) watchdog = undefined;
  });
  w.unref();
  (w.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  for (const g of protectedGroups.keys()) w.stdin?.write(`+${g}\n`);
  return w;
}

/**
 * Registers the process group `pgid` (a leader spawned with `detached: true`) with this process's watchdog:
 * if this process dies before the registration is disposed, the group gets SIGINT, SIGTERM after
 * {@link WATCHDOG_GRACE_SECONDS}, then SIGKILL. Dispose the registration once the group is gone. Never throws: without `sh`
 * the group is simply not watched.
 */
export function protectProcessGroup(pgid: number | undefined): Disposable {
  if (pgid === undefined || !Number.isSafeInteger(pgid) || pgid <= 1) return toDisposable(() => {});
  const n = protectedGroups.get(pgid) ?? 0;
  protectedGroups.set(pgid, n + 1);
  if (n === 0) send(`+${pgid}`);
  return toDisposable(() => {
    const left = (protectedGroups.get(pgid) ?? 1) - 1;
    if (left > 0) {
      protectedGroups.set(pgid, left);
      return;
    }
    protectedGroups.delete(pgid);
    if (watchdog) send(`-${pgid}`);
  });
}

/** The pid of this process's watchdog, if one runs (for tests and diagnostics). */
export function watchdogPid(): number | undefined {
  return watchdog?.pid;
}

/** The process groups currently protected (for tests). */
export function protectedProcessGroups(): number[] {
  return [...protectedGroups.keys()];
}
