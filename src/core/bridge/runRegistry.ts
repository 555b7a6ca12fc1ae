/**
 * Which controller programs the editor windows of this user on this machine have launched (Run Controller…), so a
 * window can tell that another one already runs the same program. code-server keeps a closed browser tab's window
 * (its extension host, and so the program it launched) alive for a while; a new window that runs the program again
 * would otherwise have two instances reconciling the same objects, each unaware of the other.
 *
 * One small JSON file per launched program in a 0700 directory of the user's (`<tmpdir>/reconcile-lab-runs-<uid>`),
 * removed when the window stops the program. A record counts only while both its window's process and its program
 * are alive (a file left by a window that crashed is removed when read). Nothing here stops anything by itself.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Clock } from '../clock.ts';
import { sleep } from '../clock.ts';
import type { Disposable } from '../lifecycle.ts';

/** One program a window launched. */
export interface RunRecord {
  /** The launching window's process (its extension host). */
  readonly ownerPid: number;
  /** The program's pid, also its process group (the launcher starts it as a group leader). */
  readonly pid: number;
  /** The directory it runs in (what identifies "the same program"). */
  readonly cwd: string;
  /** The command line, for people. */
  readonly command: string;
  /** When it started (ms since the epoch). */
  readonly startedAt: number;
}

/** The registry's default directory. */
export function defaultRunRegistryDir(): string {
  return join(tmpdir(), `reconcile-lab-runs-${typeof process.getuid === 'function' ? process.getuid() : 'user'}`);
}

/** Whether a process exists (a process of another user counts as existing). */
export function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class RunRegistry {
  private readonly dir: string;
  private readonly ownPid: number;

  /** `ownPid`: this window's process (tests pass another to play a second window). */
  constructor(dir: string = defaultRunRegistryDir(), ownPid: number = process.pid) {
    this.dir = dir;
    this.ownPid = ownPid;
  }

  private prefix(cwd: string): string {
    return createHash('sha256').update(resolve(cwd)).digest('hex').slice(0, 16);
  }

  /** Records a program this window launched; disposing the result removes the record (when the window stops it). */
  record(r: Omit<RunRecord, 'ownerPid'>): Disposable {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = join(this.dir, `${this.prefix(r.cwd)}.${this.ownPid}.${r.pid}.json`);
    writeFileSync(file, JSON.stringify({ ...r, cwd: resolve(r.cwd), ownerPid: this.ownPid }), { mode: 0o600 });
    return { dispose: () => rmSync(file, { force: true }) };
  }

  /**
   * The programs other windows launched in `cwd` that still run (their window's process alive too), oldest first.
   * Records whose window or program is gone are removed.
   */
  others(cwd: string): RunRecord[] {
    const prefix = `${this.prefix(cwd)}.`;
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.startsWith(prefix) && n.endsWith('.json'));
    } catch {
      return [];
    }
    const out: RunRecord[] = [];
    for (const n of names) {
      const file = join(this.dir, n);
      let r: RunRecord;
      try {
        r = JSON.parse(readFileSync(file, 'utf8')) as RunRecord;
      } catch {
        continue;
      }
      if (r.ownerPid === this.ownPid) continue;
      if (!processAlive(r.ownerPid) || !processAlive(r.pid)) {
        rmSync(file, { force: true });
        continue;
      }
      if (r.cwd === resolve(cwd)) out.push(r);
    }
    return out.sort((a, b) => a.startedAt - b.startedAt);
  }
}

/**
 * Stops another window's program, the person's choice when a new run would clash with it: SIGINT to its process
 * group (as Ctrl+C: `go run` then removes its build directory), SIGTERM after half of `graceMs`, SIGKILL after
 * `graceMs`. Resolves once it is gone.
 */
export async function stopOtherRun(r: RunRecord, clock: Clock, graceMs = 5000): Promise<void> {
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-r.pid, s);
    } catch {
      try {
        process.kill(r.pid, s);
      } catch {
        // gone
      }
    }
  };
  signal('SIGINT');
  const deadline = clock.now() + graceMs;
  while (processAlive(r.pid) && clock.now() < deadline - graceMs / 2) await sleep(clock, 50);
  if (processAlive(r.pid)) signal('SIGTERM');
  while (processAlive(r.pid) && clock.now() < deadline) await sleep(clock, 50);
  if (processAlive(r.pid)) signal('SIGKILL');
  while (processAlive(r.pid) && clock.now() < deadline + 2000) await sleep(clock, 50);
}
