import type { Clock } from '../clock.ts';
import { realClock } from '../clock.ts';
import { ApiError, isConflict, isNotFound, type JsonPatchOp, type KubeClient } from '../k8s/client.ts';
import { recordingClient, type SubresourceWriter, type WriteRecord } from '../k8s/dynamicClient.ts';
import { keyFor, type ObjectKey } from '../k8s/keys.ts';
import type { Condition, GroupVersionResource, KubeObject, ManagedFieldsEntry } from '../k8s/objects.ts';
import type { KeyState, ReconcileOutcome } from '../controller/keyState.ts';
import type { Logger } from '../log.ts';
import { nullLogger } from '../log.ts';

export const NAMESPACE_GVR: GroupVersionResource = { group: '', version: 'v1', resource: 'namespaces' };
const LEASE_GVR: GroupVersionResource = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };
const DEPLOYMENT_GVR: GroupVersionResource = { group: 'apps', version: 'v1', resource: 'deployments' };

/** The object changed between the moment it was read and the removal: nothing was written. */
export class ObjectChangedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ObjectChangedError';
  }
}

/** The named finalizer is not on the object: nothing was written. */
export class FinalizerNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FinalizerNotFoundError';
  }
}

/** A controller this process knows about directly (e.g. Reconcile Lab's own loop). */
export interface KnownController {
  name: string;
  /** Finalizers this controller adds and removes. */
  finalizers: readonly string[];
  /** Field managers it writes with. */
  managers?: readonly string[];
  /**
   * Also owns each finalizer that only its `managers` added (per the object's managedFields), whatever the name: an
   * exec or module reconciler of this session, whose finalizers Reconcile Lab cannot know by name while every write
   * it makes goes through Reconcile Lab's client. A finalizer another manager lists too (set at creation by a
   * manifest, then re-sent by the reconciler with its own) is not claimed.
   */
  ownsWhatItsManagersAdded?: boolean;
  /**
   * How to refer to it again once its `name` was given (the owner line says the name; evidence and consequence then
   * say e.g. "your reconciler"), so that a long name is said once. Default: `name`.
   */
  shortName?: string;
  running: boolean;
  /** Finer than `running`: a paused loop exists and removes its finalizer at its next reconcile (step / resume). */
  state?: 'running' | 'paused' | 'stopped';
  /**
   * Its last reconcile of the object, when known (this session's loop: the key's state), and only once it ended:
   * one that started after deletion was requested (or was triggered by the update that requested it) and ended
   * before the object was read with the finalizer still on it did not remove the finalizer.
   */
  lastReconcile?: LastReconcile;
}

/** A known controller's last finished reconcile of an object (clock times, epoch ms). */
export interface LastReconcile {
  startedAt: number;
  endedAt: number;
  /** Triggered by the update that set deletionTimestamp: it saw the deletion, whatever the clocks say. */
  sawDeletion?: boolean;
  outcome: ReconcileOutcome;
}

/** Whether a finalizer's owner runs; `paused`: it is this process's own loop, paused (it acts when stepped or resumed). */
export type Liveness = 'yes' | 'no' | 'unknown' | 'paused';

export interface FinalizerDiagnosis {
  finalizer: string;
  /** Where it sits: metadata.finalizers, or a Namespace's spec.finalizers. */
  location: 'metadata' | 'spec';
  /** The part before "/" (or the whole name for un-prefixed ones such as "kubernetes"). */
  domain: string;
  /** Best guess of the controller that owns it, in words. */
  probableOwner: string;
  /** Field managers whose managedFields entry lists this finalizer (who added it). */
  addedBy: string[];
  /** The {@link KnownController} (its name) that owns it, when one does. */
  knownOwner?: string;
  /** Whether that controller seems to be running, and why we think so. "unknown" when we cannot tell. */
  running: Liveness;
  evidence: string[];
  /**
   * Its known owner reconciled the object after deletion was requested and left this finalizer on it: `kept` (the
   * reconcile succeeded: its reconciler does not remove it, so waiting does not help), `failed` (an error: a retry
   * may), `requeued` (it asked to run again: a later run may).
   */
  leftByOwner?: 'kept' | 'failed' | 'requeued';
  /**
   * What goes wrong when it is removed by hand, as one clause that reads after "if removed:" (the editor's
   * confirmation and the CLI both put it there), e.g. `a volume still bound to a claim may be deleted: data loss`.
   */
  consequence: string;
}

export interface StuckDiagnosis {
  key: ObjectKey;
  resource: GroupVersionResource;
  kind?: string;
  uid?: string;
  resourceVersion?: string;
  terminating: boolean;
  deletionTimestamp?: string;
  /** How long ago deletion was requested (clock time), when terminating. */
  terminatingForMs?: number;
  finalizers: FinalizerDiagnosis[];
  /** For Namespaces: status conditions explaining the block (NamespaceContentRemaining, …). */
  conditions?: Condition[];
  /** One paragraph for a person. */
  summary: string;
}

interface WellKnown {
  owner: string;
  consequence: string;
  lease?: { namespace: string; name: string };
}

const KCM_LEASE = { namespace: 'kube-system', name: 'kube-controller-manager' };

const WELL_KNOWN: Record<string, WellKnown> = {
  kubernetes: { owner: 'the namespace controller (kube-controller-manager)', lease: KCM_LEASE, consequence: 'objects still in the namespace are not deleted; they stay readable but every write to them is rejected, so their controllers may loop' },
  foregroundDeletion: { owner: 'the garbage collector (kube-controller-manager)', lease: KCM_LEASE, consequence: 'the owner goes before its dependents: dependents are then deleted in the background instead of first' },
  orphan: { owner: 'the garbage collector (kube-controller-manager)', lease: KCM_LEASE, consequence: 'dependents are no longer orphaned: they will be garbage-collected with the owner' },
  'kubernetes.io/pvc-protection': { owner: 'the PVC protection controller (kube-controller-manager)', lease: KCM_LEASE, consequence: 'a volume still mounted by a pod may be deleted: data loss' },
  'kubernetes.io/pv-protection': { owner: 'the PV protection controller (kube-controller-manager)', lease: KCM_LEASE, consequence: 'a volume still bound to a claim may be deleted: data loss' },
  'customresourcecleanup.apiextensions.k8s.io': { owner: 'kube-apiserver (CRD instance cleanup)', consequence: 'the custom resources of this CRD are left in etcd without a definition' },
  'service.kubernetes.io/load-balancer-cleanup': { owner: 'the cloud-controller-manager (service controller)', consequence: 'the cloud load balancer is not deleted and keeps costing money' },
};

function domainOf(finalizer: string): string {
  const i = finalizer.indexOf('/');
  return i < 0 ? finalizer : finalizer.slice(0, i);
}

/** What {@link goKnownController} needs of a Go program connected through the bridge. */
export interface GoProgramInfo {
  /** The program's file name (the bridge's hello `program`): client-go's user agent starts with it, so the API
   * server records the program's writes under that field manager. */
  program: string;
  pid: number;
  /** The process ended (its finalizers are then nobody's in this session). */
  exited: boolean;
  /** Silent at a debugger breakpoint. */
  stoppedInDebugger: boolean;
  /**
   * Its controllers; `resource` is the one each reconciles ("plural.group"), when announced; `lastReconcile` its last
   * finished reconcile of the object's key, when it reconciles the object's resource and has one.
   */
  controllers: ReadonlyArray<{ name: string; paused: boolean; resource?: string; lastReconcile?: LastReconcile }>;
}

/**
 * The Go program as a {@link KnownController} of `obj`'s finalizers: those its field manager (its program name)
 * added, per `obj`'s managedFields; undefined when it added none. `resource` ("plural.group") is `obj`'s resource:
 * when some of the program's controllers reconcile it, they are the owners named, and their state counts (a
 * Deployment controller that runs does not remove the finalizer of a paused Gadget controller); else all of them.
 * Running when one of those controllers runs, paused when all are paused or it sits at a breakpoint (it acts once
 * stepped, resumed or continued), stopped once exited. The owners' newest last reconcile of the object (when one
 * reported it) is the known controller's `lastReconcile`: one after the delete that left the finalizer (kept, failed
 * or requeued) is said so, as for the built-in loop.
 */
export function goKnownController(p: GoProgramInfo, obj: KubeObject, resource?: string): KnownController | undefined {
  const finalizers = (obj.metadata.finalizers ?? []).filter((f) => managersOfFinalizer(obj.metadata.managedFields, f).includes(p.program));
  if (!finalizers.length) return undefined;
  const own = resource === undefined ? [] : p.controllers.filter((c) => c.resource === resource);
  const owners = own.length ? own : p.controllers;
  const names = owners.map((c) => c.name);
  const state = p.exited ? 'stopped' : p.stoppedInDebugger || !owners.some((c) => !c.paused) ? 'paused' : 'running';
  const last = owners.map((c) => c.lastReconcile).filter((r): r is LastReconcile => r !== undefined).sort((a, b) => b.startedAt - a.startedAt)[0];
  return { name: `the Go controller${names.length === 1 ? '' : 's'} ${names.join(', ') || p.program} (${p.program}, pid ${p.pid})`, shortName: 'your Go controller', finalizers, managers: [p.program], running: state === 'running', state, ...(last ? { lastReconcile: last } : {}) };
}

/**
 * This session's own loop as a {@link KnownController} of an object's finalizers: the lab reconciler owns its
 * finalizers by name; an exec or module reconciler (`reconcilerKind`), whose finalizers nobody can know by name, owns
 * those its field manager alone added to an object of the loop's resource (`primary`). Undefined when the loop owns
 * nothing there (no loop; another resource and no finalizer by name).
 */
export function loopKnownController(o: {
  name: string;
  /** The built-in loop's reconciler: `lab`, `exec` or `module` (any other kind claims nothing by manager). */
  reconcilerKind: string;
  ownFinalizers: readonly string[];
  fieldManager: string;
  state: 'running' | 'paused' | 'stopped';
  /** The object is of the loop's own resource. */
  primary: boolean;
  /** The loop's state of the object's key (its last reconcile), when the object is of the loop's resource. */
  keyState?: KeyState;
}): KnownController | undefined {
  const byManager = (o.reconcilerKind === 'exec' || o.reconcilerKind === 'module') && o.primary;
  if (!o.ownFinalizers.length && !byManager) return undefined;
  const last = o.primary ? lastReconcileOf(o.keyState) : undefined;
  return {
    name: `Reconcile Lab's ${o.name} loop`,
    shortName: 'your reconciler',
    finalizers: o.ownFinalizers,
    managers: [o.fieldManager],
    ...(byManager ? { ownsWhatItsManagersAdded: true } : {}),
    running: o.state === 'running',
    state: o.state,
    ...(last ? { lastReconcile: last } : {}),
  };
}

/**
 * A key's last finished reconcile, from its state: undefined while one runs (its outcome is the previous run's) or
 * before any ended.
 */
export function lastReconcileOf(ks: KeyState | undefined): LastReconcile | undefined {
  if (!ks || ks.phase === 'processing' || ks.lastStartedAt === undefined || ks.lastDurationMs === undefined || !ks.lastOutcome) return undefined;
  const sawDeletion = ks.lastTriggers.some((r) => 'deletionRequested' in r && r.deletionRequested === true);
  return { startedAt: ks.lastStartedAt, endedAt: ks.lastStartedAt + ks.lastDurationMs, ...(sawDeletion ? { sawDeletion } : {}), outcome: ks.lastOutcome };
}

/**
 * For a Terminating Namespace: what the namespace controller reports holding it (its True conditions, e.g.
 * `NamespaceFinalizersRemaining: … legacy.example.org/x in 1 resource instances`), and the advice that follows:
 * the objects left inside are what to look at, since releasing the namespace's own `kubernetes` finalizer leaves
 * them behind. Empty for other objects, or when nothing is reported.
 */
export function namespaceHoldLines(diag: Pick<StuckDiagnosis, 'conditions' | 'terminating'>): string[] {
  const held = (diag.conditions ?? []).filter((c) => c.type === 'NamespaceContentRemaining' || c.type === 'NamespaceFinalizersRemaining' || c.type.endsWith('Failure'));
  if (!diag.terminating || !held.length) return [];
  return [
    'The namespace controller reports:',
    ...held.map((c) => `   ${c.type}: ${c.message ?? c.reason ?? 'True'}`),
    'Objects still in the namespace keep it Terminating: let their owners remove their finalizers (or strip those), and the namespace goes by itself.',
  ];
}

/**
 * What to know before removing a finalizer from an object that is not being deleted (the CLI's note and the editor's
 * dialog say it in these words): nothing is stuck, and its controller puts the finalizer back.
 */
export function notDeletingNote(key: ObjectKey): string {
  return `${key} is not being deleted, so nothing is stuck. A finalizer removed now is added back by its controller at its next reconcile (while that controller runs); if it is not, the controller's cleanup will not run when the object is deleted.`;
}

/**
 * The known controller (of `known`) that owns `finalizer`: the one naming it, else one that owns what its field
 * managers alone added (`addedBy`: the managers whose managedFields entry lists it). The rule diagnoseStuck uses.
 */
export function knownOwnerOf(known: readonly KnownController[], finalizer: string, addedBy: readonly string[]): KnownController | undefined {
  return known.find((k) => k.finalizers.includes(finalizer)) ?? known.find((k) => k.ownsWhatItsManagersAdded && addedBy.length > 0 && addedBy.every((m) => (k.managers ?? []).includes(m)));
}

/** Field managers whose managedFields set lists `finalizer` under metadata.finalizers. */
export function managersOfFinalizer(managedFields: readonly ManagedFieldsEntry[] | undefined, finalizer: string): string[] {
  const key = `v:${JSON.stringify(finalizer)}`;
  const out: string[] = [];
  for (const m of managedFields ?? []) {
    const fins = ((m.fieldsV1 as Record<string, unknown> | undefined)?.['f:metadata'] as Record<string, unknown> | undefined)?.['f:finalizers'] as Record<string, unknown> | undefined;
    if (fins && key in fins && m.manager && !out.includes(m.manager)) out.push(m.manager);
  }
  return out;
}

function parseTime(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} d`;
}

/**
 * Whether `last` (a known owner's last finished reconcile) ran after deletion was requested at `deletionMs` and so
 * left the finalizer still on the object read now: when, relative to the delete, and what that means by how it
 * ended. Undefined when it may have run before the deletion (deletionTimestamp has one-second precision: a start
 * within that second counts only when the deletion's update triggered it), has not ended, or was cancelled.
 */
function leftAfterDeletion(last: LastReconcile | undefined, deletionMs: number, now: number): { kind: NonNullable<FinalizerDiagnosis['leftByOwner']>; when: string; meaning: string } | undefined {
  if (!last || last.endedAt > now || last.startedAt < deletionMs) return undefined;
  if (!last.sawDeletion && last.startedAt < deletionMs + 1000) return undefined;
  const d = last.startedAt - deletionMs;
  const when = d < 1000 ? 'right after' : `${ago(d)} after`;
  const o = last.outcome;
  switch (o.kind) {
    case 'success':
      return { kind: 'kept', when, meaning: 'its reconciler does not remove it (a bug to fix in the reconciler; stripping it skips that cleanup)' };
    case 'error':
      return { kind: 'failed', when, meaning: `that reconcile failed (${o.message}), and a retry removes the finalizer only once its cleanup succeeds: fix the failure (stripping it skips that cleanup)` };
    case 'terminal':
      return { kind: 'failed', when, meaning: `that reconcile failed with a terminal error (${o.message}), which is not retried until the object changes: fix the failure (stripping it skips that cleanup)` };
    case 'requeueAfter':
    case 'requeue':
      return {
        kind: 'requeued',
        when,
        meaning: `it asked to run again${o.kind === 'requeueAfter' ? ` in ${ago(o.afterMs)}` : ''}: a cleanup still waiting on something may remove it then; if every run leaves it, its reconciler does not remove it (a bug to fix in the reconciler)`,
      };
    default:
      return undefined;
  }
}

/** Names that would identify a controller's Lease or Deployment, from a finalizer domain and managers. */
function candidateNames(domain: string, managers: readonly string[]): string[] {
  const names = new Set<string>();
  for (const m of managers) {
    names.add(m.toLowerCase());
    // "manager" is kubebuilder's default binary name and matches everything; skip it.
    if (m === 'manager' || m === 'kubectl' || m.startsWith('kubectl-')) names.delete(m.toLowerCase());
  }
  if (domain.includes('.')) {
    names.add(domain.toLowerCase());
    names.add(domain.toLowerCase().replace(/\./g, '-'));
    const first = domain.split('.')[0]!.toLowerCase();
    if (first.length > 3 && !['example', 'legacy', 'kubernetes', 'k8s', 'io', 'com'].includes(first)) names.add(first);
  }
  return [...names].filter((n) => n.length > 3);
}

/**
 * Explains why an object is stuck (or would be, if deleted): its finalizers,
 * how long it has been terminating, who probably owns each finalizer (well-
 * known names, the finalizer's domain, and the field manager whose
 * managedFields entry added it), whether that controller seems to be running,
 * and what removing the finalizer by hand skips.
 *
 * Liveness is a best guess and says "unknown" when nothing visible decides it.
 * Evidence used: {@link KnownController}s given by the caller (our own loop);
 * writes by the adding manager after deletion was requested; a Lease whose
 * name matches (renewed within twice its duration → yes, older → no); a
 * Deployment whose name matches (ready replicas). A list the caller may not
 * do (403) is skipped, and the evidence of an "unknown" owner says which kind
 * was not looked at and the `kubectl auth can-i` line that checks the right.
 * Reads only; never writes.
 */
export async function diagnoseStuck(o: {
  client: KubeClient;
  gvr: GroupVersionResource;
  namespace?: string;
  name: string;
  clock?: Clock;
  knownControllers?: readonly KnownController[];
  signal?: AbortSignal;
}): Promise<StuckDiagnosis> {
  const clock = o.clock ?? realClock;
  const now = clock.now();
  const obj = await o.client.get(o.gvr, o.namespace, o.name, o.signal);
  const isNamespace = o.gvr.group === '' && o.gvr.resource === 'namespaces';
  const deletionMs = parseTime(obj.metadata.deletionTimestamp);

  let leases: KubeObject[] | undefined;
  let deployments: KubeObject[] | undefined;
  /** What could not be looked at, by resource id: the user may not list it (403), with the line that checks the right. */
  const unreadable = new Map<string, string>();
  const listQuietly = async (gvr: GroupVersionResource): Promise<KubeObject[]> => {
    try {
      return (await o.client.list(gvr, undefined, { signal: o.signal })).items;
    } catch (e) {
      if (e instanceof ApiError && e.code === 403) {
        const id = gvr.group ? `${gvr.resource}.${gvr.group}` : gvr.resource;
        unreadable.set(gvr.resource, `you may not list ${id} in all namespaces (check with: kubectl auth can-i list ${id} --all-namespaces)`);
      }
      return [];
    }
  };

  const entries: Array<{ finalizer: string; location: 'metadata' | 'spec' }> = [
    ...(obj.metadata.finalizers ?? []).map((f) => ({ finalizer: f, location: 'metadata' as const })),
    ...(isNamespace ? (((obj.spec as { finalizers?: string[] } | undefined)?.finalizers ?? []).map((f) => ({ finalizer: f, location: 'spec' as const }))) : []),
  ];

  const finalizers: FinalizerDiagnosis[] = [];
  for (const { finalizer, location } of entries) {
    const domain = domainOf(finalizer);
    const wk = WELL_KNOWN[finalizer];
    const addedBy = managersOfFinalizer(obj.metadata.managedFields, finalizer);
    const evidence: string[] = [];
    const votes: Liveness[] = [];
    const known = knownOwnerOf(o.knownControllers ?? [], finalizer, addedBy);
    const others = (o.knownControllers ?? []).filter((k) => k !== known);
    // A known loop that co-owns the list (it re-sent the finalizers with its own: its managedFields entry lists its
    // own finalizer too) did not add this one. Its manager listing this finalizer alone did add it: another
    // reconciler writing through the same client (an exec or module reconciler shares Reconcile Lab's manager).
    const coOwner = (m: string) => others.some((k) => (k.managers ?? []).includes(m) && k.finalizers.some((f) => f !== finalizer && managersOfFinalizer(obj.metadata.managedFields, f).includes(m)));
    const adders = addedBy.filter((m) => !coOwner(m));
    let probableOwner = wk?.owner ?? (known ? known.name : `the controller for "${domain}"`);
    if (!wk && !known && adders.length) probableOwner += ` (added by field manager ${adders.map((m) => `"${m}"`).join(', ')})`;
    else if (!wk && !known && location === 'metadata') evidence.push('no managedFields entry records who added this finalizer (it may have been set at creation by kubectl or a manifest)');
    if (!wk && !known) {
      for (const k of others.filter((x) => (x.managers ?? []).some((m) => adders.includes(m)))) {
        const m = (k.managers ?? []).find((x) => adders.includes(x))!;
        evidence.push(`"${m}" is the field manager ${k.name} writes with, but it does not own this finalizer: another reconciler writing through the same client added it (with Reconcile Lab: an exec or module reconciler); run that reconciler again and it can remove the finalizer after its cleanup`);
      }
    }

    let state: KnownController['state'] | undefined;
    let leftByOwner: FinalizerDiagnosis['leftByOwner'];
    // The owner line names a known controller; what follows refers to it by its short name.
    const ref = known ? (known.shortName ?? known.name) : undefined;
    if (known && ref) {
      state = known.state ?? (known.running ? 'running' : 'stopped');
      // Claimed through its field manager: say how we know, and that removing is its reconciler's job after cleanup.
      if (!known.finalizers.includes(finalizer)) evidence.push(`${addedBy.map((m) => `"${m}"`).join(', ')}, the field manager ${ref} writes with, added it (managedFields)`);
      const left = deletionMs !== undefined ? leftAfterDeletion(known.lastReconcile, deletionMs, now) : undefined;
      if (left) leftByOwner = left.kind;
      evidence.push(
        // A live object (not being deleted): its owner does not remove the finalizer; it adds it back if it goes.
        deletionMs === undefined
          ? state === 'running'
            ? `${ref} owns it and is running in this session: a finalizer removed now is added back at its next reconcile`
            : state === 'paused'
              ? `${ref} owns it and is paused in this session: a finalizer removed now is added back when the loop is stepped or resumed`
              : `${ref} owns it and is stopped in this session: a finalizer removed now is added back once it is started (or stepped)`
          : left
            ? `${ref} owns it (${state} in this session) and reconciled the object ${left.when} the delete was requested, and left the finalizer: ${left.meaning}`
            : state === 'running'
              ? `${ref} owns it and is running in this session: it removes the finalizer after its cleanup`
              : state === 'paused'
                ? `${ref} owns it and is paused in this session: step or resume the loop and it removes the finalizer itself`
                : `${ref} owns it and is stopped in this session: start it (or step) and it removes the finalizer itself`,
      );
      if (state === 'running') votes.push('yes');
    }
    // A known controller's state is first-hand: a write of its after deletion (e.g. a status update) decides nothing.
    if (deletionMs !== undefined && !known) {
      // A manager shared with a known controller writes for that one too: its writes prove nothing about this owner.
      const managers = new Set(adders.filter((m) => !others.some((k) => (k.managers ?? []).includes(m))));
      for (const m of obj.metadata.managedFields ?? []) {
        const t = parseTime(m.time);
        // Timestamps have one-second precision: only a strictly later second proves a write after deletion.
        if (m.manager && managers.has(m.manager) && t !== undefined && t > deletionMs) {
          evidence.push(`field manager "${m.manager}" wrote this object ${ago(now - t)} ago, after deletion was requested`);
          votes.push('yes');
        }
      }
    }
    const names = wk?.lease ? [] : candidateNames(domain, addedBy);
    if (wk?.lease || names.length) {
      leases ??= await listQuietly(LEASE_GVR);
      const matches = leases.filter((l) =>
        wk?.lease ? l.metadata.namespace === wk.lease.namespace && l.metadata.name === wk.lease.name : names.some((n) => (l.metadata.name ?? '').toLowerCase().includes(n)),
      );
      for (const l of matches) {
        const spec = (l.spec ?? {}) as { renewTime?: string; leaseDurationSeconds?: number; holderIdentity?: string };
        const renew = parseTime(spec.renewTime);
        const dur = (spec.leaseDurationSeconds ?? 15) * 1000;
        if (renew === undefined) continue;
        const fresh = now - renew <= 2 * dur;
        evidence.push(`Lease ${l.metadata.namespace}/${l.metadata.name} (holder ${spec.holderIdentity ?? '?'}) renewed ${ago(now - renew)} ago`);
        votes.push(fresh ? 'yes' : 'no');
      }
    }
    if (!wk && names.length) {
      deployments ??= await listQuietly(DEPLOYMENT_GVR);
      for (const d of deployments.filter((x) => names.some((n) => (x.metadata.name ?? '').toLowerCase().includes(n)))) {
        const ready = (d.status as { readyReplicas?: number } | undefined)?.readyReplicas ?? 0;
        evidence.push(`Deployment ${d.metadata.namespace}/${d.metadata.name} has ${ready} ready replica(s)`);
        votes.push(ready > 0 ? 'yes' : 'no');
      }
    }
    const running: Liveness = votes.includes('yes') ? 'yes' : state === 'paused' ? 'paused' : state === 'stopped' ? 'no' : votes.includes('no') ? 'no' : 'unknown';
    if (running === 'unknown') {
      // Only what was looked at is said to be absent: a list the user may not do (a namespaced Role on a shared
      // cluster) is named, so that "no Lease" is not read as "the controller is gone".
      const notLooked = [wk?.lease || names.length ? 'leases' : undefined, !wk && names.length ? 'deployments' : undefined].filter((r): r is string => r !== undefined && unreadable.has(r));
      const looked = [...(wk?.lease || names.length ? (notLooked.includes('leases') ? [] : ['Lease']) : []), ...(!wk && names.length ? (notLooked.includes('deployments') ? [] : ['Deployment']) : []), 'recent write'];
      evidence.push(`no visible sign of the owning controller (no matching ${looked.join(', ').replace(/, ([^,]*)$/, ' or $1')})`);
      for (const r of notLooked) evidence.push(`${r === 'leases' ? 'Leases' : 'Deployments'} not looked at: ${unreadable.get(r)}; the owner may be running unseen`);
    }
    finalizers.push({
      finalizer,
      location,
      domain,
      probableOwner,
      addedBy,
      ...(known ? { knownOwner: known.name } : {}),
      running,
      evidence,
      ...(leftByOwner ? { leftByOwner } : {}),
      consequence:
        wk?.consequence ??
        `${ref ?? `"${domain}"`} does not get to run its cleanup before deletion: external resources it manages (cloud resources, DNS records, database rows…) may be orphaned`,
    });
  }

  const key = keyFor(obj.metadata.namespace, obj.metadata.name ?? o.name);
  const kind = obj.kind;
  const terminating = deletionMs !== undefined;
  const diag: StuckDiagnosis = { key, resource: o.gvr, kind, uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion, terminating, finalizers, summary: '' };
  if (terminating) {
    diag.deletionTimestamp = obj.metadata.deletionTimestamp;
    diag.terminatingForMs = now - deletionMs;
  }
  if (isNamespace) diag.conditions = ((obj.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).filter((c) => c.status === 'True');
  const parts: string[] = [];
  parts.push(terminating ? `${kind ?? 'Object'} ${key} has been terminating for ${ago(diag.terminatingForMs ?? 0)}` : `${kind ?? 'Object'} ${key} is not being deleted`);
  if (finalizers.length === 0) parts.push('and has no finalizers');
  else {
    parts.push(`and ${terminating ? 'is held by' : 'has'} ${finalizers.length} finalizer${finalizers.length === 1 ? '' : 's'}: ${finalizers.map((f) => `${f.finalizer} (owner running: ${f.running})`).join(', ')}`);
    // A finalizer its owner's reconcile left after the delete does not go by waiting, stepping or starting it.
    const kept = finalizers.filter((f) => f.leftByOwner === 'kept');
    const dead = finalizers.filter((f) => f.running === 'no' && !kept.includes(f));
    const paused = finalizers.filter((f) => f.running === 'paused' && !kept.includes(f));
    if (terminating && kept.length) parts.push(`. ${kept.map((f) => f.finalizer).join(', ')} was left on by its owner's reconcile after the delete: its reconciler does not remove it, so waiting does not help; fix the reconciler`);
    if (terminating && paused.length) parts.push(`. ${paused.map((f) => f.finalizer).join(', ')} belongs to this session's paused loop: step or resume it instead of removing it by hand`);
    if (terminating && dead.length) parts.push(`. The owner of ${dead.map((f) => f.finalizer).join(', ')} appears to be down, which is why it is stuck`);
    if (terminating && finalizers.some((f) => f.running === 'yes' && !kept.includes(f))) parts.push('. A live owner may still finish on its own: prefer fixing or waiting for it');
  }
  // Sentences after the first start with ". …": no space before their period.
  diag.summary = parts.join(' ').replace(/ \. /g, '. ') + '.';
  return diag;
}

export interface RemoveFinalizersOptions {
  /** Must also implement {@link SubresourceWriter} to release Namespaces (PUT /finalize). */
  client: KubeClient & Partial<SubresourceWriter>;
  gvr: GroupVersionResource;
  namespace?: string;
  name: string;
  /** The finalizer to remove; undefined removes all of them. */
  finalizer?: string;
  /**
   * The resourceVersion the person saw when deciding (e.g. from {@link diagnoseStuck}). When it no longer
   * matches, nothing is written and {@link ObjectChangedError} is thrown. Default: the version read now.
   */
  expectedResourceVersion?: string;
  dryRun?: boolean;
  /** Receives every write (the journal / audit trail). */
  onWrite?: (w: WriteRecord) => void;
  clock?: Clock;
  log?: Logger;
  signal?: AbortSignal;
}

export interface RemoveFinalizersResult {
  key: ObjectKey;
  removed: string[];
  remaining: string[];
  /** True when the object no longer exists afterwards (it was terminating and nothing holds it any more). */
  deleted: boolean;
  dryRun: boolean;
  writes: WriteRecord[];
}

function changed(what: string, cause?: unknown): ObjectChangedError {
  return new ObjectChangedError(`${what} changed since it was read (another client or controller wrote it); nothing was removed — refresh and retry`, { cause });
}

/**
 * A JSON Patch whose op failed is answered 422 with this generic message and no causes (validation
 * failures carry field causes instead). Our patches only fail that way through their `test` ops.
 */
function isTestFailure(e: unknown): boolean {
  return e instanceof ApiError && e.code === 422 && /rejected our request due to an error in our request/.test(e.message);
}

/**
 * The finalizer escape hatch: removes one named finalizer, or all, from any
 * object, guarded so that a concurrent change fails instead of clobbering it.
 *
 * - `metadata.finalizers`: a JSON Patch `[test /metadata/resourceVersion, test /metadata/finalizers,
 *   replace /metadata/finalizers]`; a changed object fails the test (422) → {@link ObjectChangedError}. When patch
 *   is forbidden (403), a PUT of the object as read with only its finalizers edited and its resourceVersion as
 *   precondition (409 → {@link ObjectChangedError}); when that is forbidden too, the patch's 403 is thrown.
 * - A Namespace's `spec.finalizers` (e.g. "kubernetes"): PUT `/finalize` with the list edited and the
 *   resourceVersion as precondition (409 → {@link ObjectChangedError}).
 *
 * Every write goes through a recording client, so `onWrite` sees each one (dry-run included).
 * Removing a finalizer skips its owner's cleanup: call {@link diagnoseStuck} first and show its consequences.
 */
export async function removeFinalizers(o: RemoveFinalizersOptions): Promise<RemoveFinalizersResult> {
  const log = o.log ?? nullLogger;
  const writes: WriteRecord[] = [];
  const client = recordingClient(o.client, {
    dryRun: o.dryRun ?? false,
    clock: o.clock,
    log,
    onWrite: (w) => {
      writes.push(w);
      o.onWrite?.(w);
    },
  });
  const obj = await o.client.get(o.gvr, o.namespace, o.name, o.signal);
  const key = keyFor(obj.metadata.namespace, obj.metadata.name ?? o.name);
  const rv = obj.metadata.resourceVersion;
  if (o.expectedResourceVersion !== undefined && o.expectedResourceVersion !== rv) {
    throw changed(`${key} (resourceVersion ${o.expectedResourceVersion} → ${rv})`);
  }
  const isNamespace = o.gvr.group === '' && o.gvr.resource === 'namespaces';
  const metaFins = obj.metadata.finalizers ?? [];
  const specFins = isNamespace ? ((obj.spec as { finalizers?: string[] } | undefined)?.finalizers ?? []) : [];
  const pick = (list: string[]) => (o.finalizer === undefined ? list : list.filter((f) => f === o.finalizer));
  const fromMeta = pick(metaFins);
  const fromSpec = pick(specFins);
  if (fromMeta.length === 0 && fromSpec.length === 0) {
    const all = [...metaFins, ...specFins.map((f) => `${f} (spec)`)];
    throw new FinalizerNotFoundError(
      o.finalizer === undefined ? `${key} has no finalizers` : `${key} has no finalizer "${o.finalizer}" (present: ${all.join(', ') || 'none'})`,
    );
  }

  let current: KubeObject = obj;
  if (fromMeta.length) {
    const remaining = metaFins.filter((f) => !fromMeta.includes(f));
    const ops: JsonPatchOp[] = [
      { op: 'test', path: '/metadata/resourceVersion', value: rv },
      { op: 'test', path: '/metadata/finalizers', value: metaFins },
      { op: 'replace', path: '/metadata/finalizers', value: remaining },
    ];
    try {
      current = await client.patch(o.gvr, o.namespace, o.name, 'json', ops, { signal: o.signal });
    } catch (e) {
      if (isTestFailure(e) || isConflict(e)) throw changed(key, e);
      if (!(e instanceof ApiError && e.code === 403)) throw e;
      // A user who may update but not patch (a Role granting get/list/watch/update): PUT the object as read, with only
      // its finalizers edited and the resourceVersion read as precondition, so a change since fails (409) instead of
      // being overwritten. When update is forbidden too, the patch's 403 (which names the missing right) is thrown.
      try {
        current = await client.update(o.gvr, { ...obj, metadata: { ...obj.metadata, resourceVersion: rv, finalizers: remaining } }, { signal: o.signal });
      } catch (e2) {
        if (isConflict(e2)) throw changed(key, e2);
        if (e2 instanceof ApiError && e2.code === 403) throw e;
        throw e2;
      }
      log.info('patch forbidden: removed the finalizers with a guarded update', { key });
    }
    log.info('removed finalizers', { key, removed: fromMeta, dryRun: !!o.dryRun });
  }
  if (fromSpec.length) {
    if (!client.updateSubresource || !o.client.updateSubresource) throw new Error('this client cannot PUT a Namespace /finalize subresource');
    const base = o.dryRun ? obj : current;
    const body: KubeObject = { ...base, spec: { ...((base.spec as object) ?? {}), finalizers: specFins.filter((f) => !fromSpec.includes(f)) } };
    // In dry-run the metadata patch was not stored: the precondition is still the version read at first.
    body.metadata = { ...base.metadata, resourceVersion: o.dryRun ? rv : base.metadata.resourceVersion };
    try {
      current = await client.updateSubresource(o.gvr, body, 'finalize', { signal: o.signal });
    } catch (e) {
      if (isConflict(e)) throw changed(key, e);
      throw e;
    }
    log.info('finalized namespace', { key, removed: fromSpec, dryRun: !!o.dryRun });
  }

  let deleted = false;
  if (!o.dryRun && obj.metadata.deletionTimestamp) {
    try {
      await o.client.get(o.gvr, o.namespace, o.name, o.signal);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      deleted = true;
    }
  }
  const remaining = [...(current.metadata.finalizers ?? []), ...(isNamespace ? ((current.spec as { finalizers?: string[] } | undefined)?.finalizers ?? []) : [])];
  return { key, removed: [...fromMeta, ...fromSpec], remaining, deleted, dryRun: !!o.dryRun, writes };
}

/** An object of a Terminating namespace that still has finalizers: what keeps the namespace from going away. */
export interface HoldingObject {
  /** "plural.group" ("configmaps" for the core group). */
  resource: string;
  key: ObjectKey;
  finalizers: string[];
  /** True when its own deletion was requested (the namespace controller deletes everything in it). */
  terminating: boolean;
}

/**
 * The objects in `namespace` that still carry finalizers, found by listing every namespaced resource in `resources`
 * that may be listed (one list per resource, sequentially; a list refused or failing is skipped, it may be
 * `skipped`). For a Namespace stuck on `NamespaceFinalizersRemaining`: the condition names the finalizers and a
 * count, not the objects; these are the objects to look at (and strip, if their controller is gone) instead of the
 * namespace's own `kubernetes` finalizer. At most `limit` objects (default 20), in resource then key order. Reads only.
 */
export async function objectsHoldingNamespace(o: {
  client: KubeClient;
  resources: readonly (GroupVersionResource & { namespaced: boolean; verbs?: readonly string[] })[];
  namespace: string;
  limit?: number;
  signal?: AbortSignal;
}): Promise<{ objects: HoldingObject[]; skipped: string[] }> {
  const limit = o.limit ?? 20;
  const objects: HoldingObject[] = [];
  const skipped: string[] = [];
  const seen = new Set<string>();
  for (const r of o.resources) {
    if (!r.namespaced || r.resource.includes('/') || (r.verbs && !r.verbs.includes('list'))) continue;
    const id = r.group ? `${r.resource}.${r.group}` : r.resource;
    if (seen.has(id)) continue; // one version of each resource
    seen.add(id);
    let items: KubeObject[];
    try {
      items = (await o.client.list(r, o.namespace, { signal: o.signal })).items;
    } catch {
      skipped.push(id);
      continue;
    }
    for (const x of items) {
      const finalizers = x.metadata.finalizers ?? [];
      if (!finalizers.length) continue;
      objects.push({ resource: id, key: keyFor(o.namespace, x.metadata.name ?? ''), finalizers: [...finalizers], terminating: Boolean(x.metadata.deletionTimestamp) });
      if (objects.length >= limit) return { objects, skipped };
    }
  }
  return { objects, skipped };
}
