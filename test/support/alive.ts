import { readFileSync } from 'node:fs';

/**
 * Whether process `pid` still runs: it exists and is neither a zombie nor dead (`/proc/<pid>/stat`). A zombie is
 * a process that exited and was not reaped yet, so `kill(pid, 0)`, which succeeds on it, would call it alive.
 */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2)[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}
