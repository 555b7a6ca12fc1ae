import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { isNotFound, type KubeClient } from '../k8s/client.ts';
import type { GroupVersionResource, KubeObject, ResourceInfo } from '../k8s/objects.ts';
import { nullLogger, type Logger } from '../log.ts';
import { deleteScratch, SCRATCH_LABEL } from './harness.ts';

/**
 * Leftovers of checks whose process was killed (SIGKILL, a crash, a closed terminal) before it could delete its
 * scratch namespaces and cluster-scoped copies: a later check finds them by {@link SCRATCH_LABEL} and removes those
 * whose owning process is gone.
 *
 * Every scratch namespace and cluster-scoped copy carries {@link SCRATCH_OWNER_ANNOTATION}: the owner's hostname,
 * pid and process start time. An owner is gone only when it ran on this machine and no process with that pid and
 * start time exists (a reused pid has another start time). Leftovers of a process on another machine are never
 * removed — that run may be alive (two checks can run against one cluster from different machines), and nothing
 * here can tell — and neither are objects without the annotation (an older version's, or not ours).
 */

/** Annotation naming the check process that owns a scratch namespace or copy: JSON {@link ScratchOwner}. */
export const SCRATCH_OWNER_ANNOTATION = 'checks.reconcile-lab.dev/owner';

export interface ScratchOwner {
  host: string;
  pid: number;
  /** The process start time: `proc:<clock ticks after boot>` (Linux /proc), else `ms:<epoch ms>` (approximate). */
  start: string;
}

/** What can be known about processes on this machine; injected so the cleanup can be tested. */
export interface ProcessProbe {
  readonly hostname: string;
  /** The owner record of this process. */
  self(): ScratchOwner;
  /** Whether a process with this pid and start time (see {@link ScratchOwner.start}) exists on this machine. */
  isAlive(pid: number, start: string): boolean;
}

function procStart(pid: number | 'self'): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime), counted after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = fields[19];
    return ticks && /^\d+$/.test(ticks) ? `proc:${ticks}` : undefined;
  } catch {
    return undefined;
  }
}

/** The real {@link ProcessProbe} of this machine. */
export const localProcessProbe: ProcessProbe = {
  hostname: hostname(),
  self() {
    return { host: hostname(), pid: process.pid, start: procStart('self') ?? `ms:${Math.round(Date.now() - process.uptime() * 1000)}` };
  },
  isAlive(pid, start) {
    try {
      process.kill(pid, 0);
    } catch (e) {
      // EPERM: it exists, owned by someone else.
      if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
    }
    if (start.startsWith('proc:')) {
      const now = procStart(pid);
      // /proc unreadable for it: alive as far as we can tell.
      return now === undefined || now === start;
    }
    return true;
  },
};

/** The annotation value for {@link SCRATCH_OWNER_ANNOTATION}. */
export function ownerAnnotation(probe: ProcessProbe = localProcessProbe): string {
  return JSON.stringify(probe.self());
}

function parseOwner(o: KubeObject): ScratchOwner | undefined {
  const raw = o.metadata.annotations?.[SCRATCH_OWNER_ANNOTATION];
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as Partial<ScratchOwner>;
    if (typeof v.host === 'string' && typeof v.pid === 'number' && typeof v.start === 'string') return { host: v.host, pid: v.pid, start: v.start };
  } catch {
    // not ours to judge
  }
  return undefined;
}

/** Whether the owner recorded on a scratch object is known to be gone (never true for another machine's). */
export function ownerGone(o: KubeObject, probe: ProcessProbe = localProcessProbe): boolean {
  const owner = parseOwner(o);
  if (!owner || owner.host !== probe.hostname) return false;
  return !probe.isAlive(owner.pid, owner.start);
}

const NAMESPACES: GroupVersionResource = { group: '', version: 'v1', resource: 'namespaces' };

export interface LeftoverCleanup {
  /** The scratch namespaces (and with them their cluster-scoped copies) removed. */
  removed: string[];
  /** Cluster-scoped copies removed whose namespace was already gone. */
  removedCopies: string[];
  /** Problems met while removing (the cleanup never throws for them). */
  notes: string[];
  /** One line for the person, or undefined when nothing was left over. */
  message: string | undefined;
}

/**
 * Finds scratch namespaces (and cluster-scoped copies of `primary`) left by check processes on this machine that are
 * gone, and deletes them as {@link deleteScratch} does: finalizers of the `resources` objects stripped, then the
 * objects and the namespace deleted. Namespaces already being deleted are left to finish. Never touches a live run's objects, nor another machine's. Never throws for a
 * failed deletion (see {@link LeftoverCleanup.notes}); a failed list of namespaces rejects.
 */
export async function cleanupLeftovers(
  env: { client: KubeClient; primary: ResourceInfo; resources: ResourceInfo[]; log?: Logger; signal?: AbortSignal },
  probe: ProcessProbe = localProcessProbe,
): Promise<LeftoverCleanup> {
  const log = env.log ?? nullLogger;
  const namespaces = (await env.client.list(NAMESPACES, undefined, { labelSelector: SCRATCH_LABEL, ...(env.signal ? { signal: env.signal } : {}) })).items;
  const copies = env.primary.namespaced ? [] : (await env.client.list(env.primary, undefined, { labelSelector: SCRATCH_LABEL, ...(env.signal ? { signal: env.signal } : {}) })).items;
  const existing = new Set(namespaces.map((n) => n.metadata.name ?? ''));
  const removed: string[] = [];
  const removedCopies: string[] = [];
  const notes: string[] = [];
  for (const ns of namespaces) {
    const name = ns.metadata.name ?? '';
    // Already being deleted: its objects' finalizers were stripped before (by its run, or an earlier cleanup).
    if (ns.metadata.deletionTimestamp || !ownerGone(ns, probe)) continue;
    const copy = copies.find((c) => c.metadata.labels?.[SCRATCH_LABEL] === name)?.metadata.name;
    notes.push(...(await deleteScratch(env, name, env.resources, copy)));
    removed.push(name);
  }
  // A cluster-scoped copy whose run died between deleting it and its namespace, or before the namespace existed.
  for (const c of copies) {
    const ns = c.metadata.labels?.[SCRATCH_LABEL] ?? '';
    if (existing.has(ns) || c.metadata.deletionTimestamp || !ownerGone(c, probe)) continue;
    const name = c.metadata.name ?? '';
    try {
      if (c.metadata.finalizers?.length) await env.client.patch(env.primary, undefined, name, 'merge', { metadata: { finalizers: null } });
      await env.client.delete(env.primary, undefined, name);
      removedCopies.push(name);
    } catch (e) {
      if (!isNotFound(e)) notes.push(`could not delete the leftover copy ${name}: ${(e as Error).message}`);
    }
  }
  const n = removed.length + removedCopies.length;
  const message = n
    ? `Removed ${removed.length ? `${removed.length} scratch namespace(s) (${removed.join(', ')})` : ''}${removed.length && removedCopies.length ? ' and ' : ''}${removedCopies.length ? `${removedCopies.length} copy(ies) (${removedCopies.join(', ')})` : ''} left by an earlier check on this machine that was killed before it could clean up.`
    : undefined;
  if (message) log.info(message);
  for (const note of notes) log.warn(note);
  return { removed, removedCopies, notes, message };
}
