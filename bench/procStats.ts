// What the benchmarks read from /proc (Linux): the kube-apiserver process of a control plane and its CPU time.
import { readFileSync, readdirSync } from 'node:fs';

/** The kube-apiserver process serving `port` (found by its --secure-port flag); undefined when there is none (or no /proc). */
export function findApiServerPid(port: number): number | undefined {
  let dirs: string[];
  try {
    dirs = readdirSync('/proc');
  } catch {
    return undefined;
  }
  for (const d of dirs) {
    if (!/^\d+$/.test(d)) continue;
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    const args = cmd.split('\0');
    if (args.includes(`--secure-port=${port}`) && args.some((a) => a.startsWith('--etcd-servers='))) return Number(d);
  }
  return undefined;
}

/** The kube-apiserver process serving `port`; throws when there is none. */
export function apiServerPid(port: number): number {
  const pid = findApiServerPid(port);
  if (pid === undefined) throw new Error(`no kube-apiserver with --secure-port=${port} found in /proc`);
  return pid;
}

/** utime + stime of `pid` in seconds (all its threads). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
}
