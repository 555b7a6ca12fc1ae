import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Private temp dirs owned by one process, and the sweep that removes what a crashed run left behind.
 *
 * {@link createOwnedTempDir} makes a 0700 dir under the system temp dir and writes an owner record
 * (`.reconcile-lab-owner`: this pid and, on Linux, its start time, so a recycled pid is not taken for the
 * owner). Before that it sweeps the dirs with the same prefix: a dir whose owner is gone is a leftover of a
 * run that died without cleaning up (SIGKILL, power loss, a crash before its exit hook), and is removed,
 * together with any process still running from it (a process of this user whose command line names the dir,
 * e.g. an etcd whose `--data-dir` is inside it). A dir without an owner record (a run older than this
 * record) is a leftover when no process names it and it was not touched for {@link UNOWNED_GRACE_MS}.
 * Dirs of other users and of live owners are never touched.
 */

export const OWNER_FILE = '.reconcile-lab-owner';
/** How old a dir without an owner record must be before the sweep removes it. */
export const UNOWNED_GRACE_MS = 10 * 60_000;

interface OwnerRecord {
  pid: number;
  /** Field 22 of /proc/<pid>/stat (start time in clock ticks after boot); absent off Linux. */
  start?: string;
}

function procStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function ownerAlive(o: OwnerRecord): boolean {
  try {
    process.kill(o.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (o.start === undefined) return true;
  const now = procStart(o.pid);
  return now === undefined || now === o.start;
}

function readOwner(dir: string): OwnerRecord | undefined {
  try {
    const o = JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8')) as OwnerRecord;
    return Number.isSafeInteger(o.pid) && o.pid > 0 ? o : undefined;
  } catch {
    return undefined;
  }
}

/** Pids of this user's processes whose command line mentions `dir` (Linux /proc; [] elsewhere). */
export function processesUsing(dir: string): number[] {
  const uid = process.getuid?.();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      if (uid !== undefined && statSync(`/proc/${e}`).uid !== uid) continue;
      const cmdline = readFileSync(`/proc/${e}/cmdline`, 'utf8');
      if (cmdline.split('\0').some((arg) => arg === dir || arg.includes(`${dir}/`) || arg.endsWith(`=${dir}`))) found.push(Number(e));
    } catch {
      // gone meanwhile, or not readable
    }
  }
  return found;
}

/**
 * Removes the leftovers (see the module comment) among `<tmp>/<prefix>*`; returns the dirs removed. Never
 * throws.
 */
export function removeLeftoverTempDirs(prefix: string, root = tmpdir()): string[] {
  const uid = process.getuid?.();
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => n.startsWith(prefix));
  } catch {
    return removed;
  }
  for (const n of names) {
    const dir = join(root, n);
    try {
      const st = statSync(dir);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      const owner = readOwner(dir);
      if (owner) {
        if (ownerAlive(owner)) continue;
      } else if (Date.now() - st.mtimeMs < UNOWNED_GRACE_MS || processesUsing(dir).length > 0) {
        continue;
      }
      for (const pid of processesUsing(dir)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // raced with its owner or another sweep: leave it
    }
  }
  return removed;
}

/**
 * Sweeps leftovers of `prefix`, then creates `<tmp>/<prefix>XXXXXX` (0700) owned by this process. The caller
 * removes it when done; if this process dies first, the next call with the same prefix removes it.
 */
export function createOwnedTempDir(prefix: string, options: { onLeftoverRemoved?: (dir: string) => void } = {}): string {
  for (const d of removeLeftoverTempDirs(prefix)) options.onLeftoverRemoved?.(d);
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o700);
  const start = procStart(process.pid);
  writeFileSync(join(dir, OWNER_FILE), JSON.stringify({ pid: process.pid, ...(start !== undefined ? { start } : {}) }), { mode: 0o600 });
  return dir;
}
