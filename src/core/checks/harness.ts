import { randomBytes } from 'node:crypto';
import { sleep, type Clock } from '../clock.ts';
import type { SharedIndexInformer } from '../cache/interfaces.ts';
import { InformerFactory } from '../cache/informerFactory.ts';
import { OWNER_UID_INDEX, ownerUidIndexFunc } from '../cache/indexFuncs.ts';
import { addModuleIndexes, type ModuleIndex } from '../reconcilers/moduleIndexes.ts';
import { journalingContextFactory } from '../actions/controllerContext.ts';
import { controllerBuilder } from '../controller/builder.ts';
import type { Controller, StepResult } from '../controller/controller.ts';
import type { Predicate } from '../controller/predicate.ts';
import type { Reconciler } from '../controller/reconcile.ts';
import type { JournalEntry } from '../journal/journal.ts';
import { ApiError, isAlreadyExists, isNotFound, type KubeClient } from '../k8s/client.ts';
import type { WriteRecord } from '../k8s/dynamicClient.ts';
import { keyFor, splitKey, type ObjectKey } from '../k8s/keys.ts';
import { KubeListerWatcher } from '../k8s/listerWatcher.ts';
import { resourceIdOfGvr, type GroupVersionResource, type KubeObject, type ResourceInfo } from '../k8s/objects.ts';
import type { KubeTransport } from '../k8s/transport.ts';
import type { Logger } from '../log.ts';
import { closestNames } from '../text/closest.ts';
import type { RawEndState } from './mask.ts';
import { NAMESPACE_KEY, specReferences, withExtraReferences, type CopiedReference, type SpecReference } from './references.ts';
import { crashingClient, FrozenListerWatcher, WithholdingInformer } from './perturb.ts';
import { SCRATCH_LABEL, SCRATCH_NAMESPACE_PREFIX } from './scratch.ts';
import { ownerAnnotation, SCRATCH_OWNER_ANNOTATION } from './leftovers.ts';
import { CheckFootprint, confinedClient } from './confinement.ts';

/**
 * The harness the checks run in: scratch namespaces, copies of the developer's object and what it depends on,
 * a real controller (informers, priority queue, workers, journal) over them, "settled" detection, end-state
 * snapshots and cleanup. Every controller run owns its informer factory and controller; {@link ControllerRun.stop}
 * disposes both.
 */

export const CONFIGMAPS: ResourceInfo = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true };
export const SECRETS: ResourceInfo = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true };
const NAMESPACES: GroupVersionResource = { group: '', version: 'v1', resource: 'namespaces' };
export { SCRATCH_LABEL } from './scratch.ts';

export interface HarnessEnv {
  transport: KubeTransport;
  client: KubeClient;
  primary: ResourceInfo;
  owned: ResourceInfo[];
  predicates: Predicate[];
  /** A module's own cache indexes, added to the primary's and the owned resources' informers of every run. */
  indexes?: readonly ModuleIndex[];
  /** The hot-loop warnings' advice on the generation-changed predicate (RunChecksOptions.predicateAdvice). */
  predicateAdvice?: string;
  /** The deadline of one reconcile of the built-in loop's runs (RunChecksOptions.reconcileTimeoutMs); default none. */
  reconcileTimeoutMs?: number;
  /** The built-in loop's reconciler (lab, exec, module); unused when {@link HarnessEnv.startRun} is set. */
  createReconciler?: () => Reconciler;
  /** Starts one run some other way (the developer's Go controller through the bridge: goRun.ts). */
  startRun?: StartRun;
  clock: Clock;
  log: Logger;
  quietMs: number;
  signal: AbortSignal;
  /** Secrets and ConfigMaps the person named to copy besides those the spec refers to ({@link dependenciesOf}). */
  copies?: readonly SpecReference[];
  /**
   * What the built-in loop's runs created outside their scratch namespaces, shared by every run of the checks
   * ({@link confinedClient}); without it each run has its own.
   */
  footprint?: CheckFootprint;
}

export function resourceLabelOf(gvr: GroupVersionResource): string {
  return resourceIdOfGvr(gvr);
}

/**
 * A fresh scratch namespace (labelled {@link SCRATCH_LABEL}, its owning process in {@link SCRATCH_OWNER_ANNOTATION}
 * so a later check can remove it if this process is killed: leftovers.ts); the caller deletes it with {@link deleteScratch}.
 */
export async function createScratchNamespace(env: HarnessEnv, purpose: string): Promise<string> {
  const name = `${SCRATCH_NAMESPACE_PREFIX}${randomBytes(4).toString('hex')}`;
  await env.client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [SCRATCH_LABEL]: 'true' }, annotations: { 'checks.reconcile-lab.dev/purpose': purpose, [SCRATCH_OWNER_ANNOTATION]: ownerAnnotation() } } }, { signal: env.signal });
  return name;
}

/**
 * The Secrets and ConfigMaps the primary depends on: those its spec refers to ({@link specReferences}: `secretRef`,
 * `configMapKeyRef`, `secretName`, volumes, `envFrom`, `valueFrom`, … at any depth, and the lab's `spec.dependsOn`),
 * then those the person named (`extra`: `--copy`, the setting checks.copy) that the spec does not.
 */
export function dependenciesOf(obj: KubeObject, extra: readonly SpecReference[] = []): Array<{ res: ResourceInfo } & SpecReference> {
  return withExtraReferences(specReferences(obj), extra).map((r) => ({ res: r.kind === 'Secret' ? SECRETS : CONFIGMAPS, ...r }));
}

function copyOf(src: KubeObject, namespace: string | undefined, name: string): KubeObject {
  const { metadata, status: _status, ...rest } = src;
  void _status;
  const annotations = { ...(metadata.annotations ?? {}) };
  delete annotations['kubectl.kubernetes.io/last-applied-configuration'];
  const copy: KubeObject = {
    ...structuredClone(rest),
    metadata: {
      name,
      ...(namespace ? { namespace } : {}),
      ...(metadata.labels ? { labels: { ...metadata.labels } } : {}),
      ...(Object.keys(annotations).length ? { annotations } : {}),
      ...(metadata.finalizers?.length ? { finalizers: [...metadata.finalizers] } : {}),
    },
  };
  return copy;
}

export interface ScratchCopy {
  /** The developer's key. */
  key: ObjectKey;
  /** The copy's key. */
  scratchKey: ObjectKey;
  /** The copy's namespace (undefined for a cluster-scoped copy). */
  namespace?: string;
  /** The run's scratch namespace (the copy's own, or the one a cluster-scoped copy's run writes in). */
  scratchNamespace: string;
  name: string;
  /** The global resourceVersion right after the copies were made (before any reconcile). */
  createdResourceVersion: string;
  /** The Secrets and ConfigMaps the spec refers to, and whether each was copied into the scratch namespace (and if not, why). */
  references: CopiedReference[];
  /** A cluster-scoped copy's spec fields that named a namespace, pointed at the scratch namespace ({@link redirectNamespaces}). */
  redirected: RedirectedField[];
}

/** A spec field of a cluster-scoped copy that named a namespace and names the scratch namespace in the copy. */
export interface RedirectedField {
  /** e.g. `spec.targetNamespace`. */
  path: string;
  /** The namespace the original names. */
  from: string;
}

/**
 * Points every non-empty string field of `spec` named {@link NAMESPACE_KEY} (at any depth) at `namespace`, in
 * place, and returns what it changed. A cluster-scoped object's controller writes its children where its spec says;
 * in a check run that must be the scratch namespace — the only one the run may write (and, for a Go program, read):
 * never the developer's real namespace. Lists of namespaces are left alone (one scratch namespace cannot stand for
 * several), and so is an empty value (the controller's own default applies).
 */
export function redirectNamespaces(spec: unknown, namespace: string, path = 'spec', out: RedirectedField[] = [], depth = 0): RedirectedField[] {
  if (depth > 64 || !spec || typeof spec !== 'object') return out;
  if (Array.isArray(spec)) {
    spec.forEach((x, i) => redirectNamespaces(x, namespace, `${path}[${i}]`, out, depth + 1));
    return out;
  }
  const rec = spec as Record<string, unknown>;
  for (const [k, v] of Object.entries(rec)) {
    if (NAMESPACE_KEY.test(k) && typeof v === 'string' && v !== '') {
      out.push({ path: `${path}.${k}`, from: v });
      rec[k] = namespace;
    } else redirectNamespaces(v, namespace, `${path}.${k}`, out, depth + 1);
  }
  return out;
}

/**
 * The report's note on the namespace fields of a cluster-scoped object's copies (undefined when none was changed).
 */
export function redirectedNote(key: string, fields: RedirectedField[]): string | undefined {
  if (!fields.length) return undefined;
  return `${key} is cluster-scoped: in its copies ${fields.map((f) => `${f.path} (${f.from})`).join(', ')} ${fields.length === 1 ? 'names' : 'name'} the run's scratch namespace instead, so its controller writes there and never in your namespace${fields.length === 1 ? '' : 's'}.`;
}

/**
 * Copies the developer's primary object (spec and metadata a person writes; not status, not its children) and the
 * Secrets and ConfigMaps of its namespace that its spec refers to ({@link dependenciesOf}) into `namespace`; every
 * call makes its own copies, which the namespace's deletion removes. A referenced object is not copied when it does
 * not exist (it stays missing, as in the original), names another namespace (never copied across namespaces), is
 * owned by the primary itself (a child its controller makes) or the primary is cluster-scoped; one the cluster
 * already made in the new namespace (`kube-root-ca.crt`) is kept as it is; a copy the server refuses is left missing. {@link ScratchCopy.references} says which, by name only: a Secret is read and
 * created through the client and never put into any message. For a cluster-scoped kind the copy gets the scratch
 * name `<namespace>-<name>` (labelled {@link SCRATCH_LABEL}).
 */
export async function copyInto(env: HarnessEnv, key: ObjectKey, namespace: string): Promise<ScratchCopy> {
  const { namespace: srcNs, name } = splitKey(key);
  const src = await env.client.get(env.primary, env.primary.namespaced ? srcNs : undefined, name, env.signal);
  const references: CopiedReference[] = [];
  for (const dep of dependenciesOf(src, env.copies)) {
    const { res, ...ref } = dep;
    // A cluster-scoped object's reference names its namespace (its copy's names the scratch namespace instead, see
    // redirectNamespaces); without one there is no namespace to look in.
    const from = env.primary.namespaced ? srcNs : ref.namespace;
    // A reference of no stated kind is copied only when it is found: one that cannot be looked up is not said.
    if (ref.guessed && (from === undefined || (env.primary.namespaced && ref.namespace !== undefined && ref.namespace !== srcNs))) continue;
    if (from === undefined) {
      references.push({ ...ref, outcome: 'clusterScoped' });
      continue;
    }
    if (env.primary.namespaced && ref.namespace !== undefined && ref.namespace !== srcNs) {
      references.push({ ...ref, outcome: 'otherNamespace' });
      continue;
    }
    // The primary itself (a ConfigMap that names itself) is copied below.
    if (res.resource === env.primary.resource && res.group === env.primary.group && ref.name === name) continue;
    try {
      const d = await env.client.get(res, from, ref.name, env.signal);
      if (src.metadata.uid && d.metadata.ownerReferences?.some((o) => o.uid === src.metadata.uid)) {
        references.push({ ...ref, outcome: 'owned' });
        continue;
      }
      await env.client.create(res, copyOf(d, namespace, ref.name), { signal: env.signal });
      references.push({ ...ref, outcome: 'copied' });
    } catch (e) {
      if (env.signal.aborted) throw e;
      // A reference of no stated kind that is no Secret (or no ConfigMap) is most likely of another kind: not said.
      if (isNotFound(e) && ref.guessed) continue;
      if (isNotFound(e)) references.push({ ...ref, outcome: 'missing', ...(await namedTypoSuggestions(env, res, from, ref)) });
      // The cluster made one in the new namespace itself (kube-root-ca.crt): the controller finds that one.
      else if (isAlreadyExists(e)) references.push({ ...ref, outcome: 'present' });
      // A Secret's error names no value (the server's message could quote one): its status and reason only.
      else if (e instanceof ApiError) references.push({ ...ref, outcome: 'failed', error: res === SECRETS ? `${e.code} ${e.reason}` : `${e.code} ${e.reason}: ${e.message.split('\n')[0]}` });
      else throw e;
    }
  }
  if (env.primary.namespaced) {
    const c = copyOf(src, namespace, name);
    const created = await env.client.create(env.primary, c, { signal: env.signal });
    return { key, scratchKey: keyFor(namespace, name), namespace, scratchNamespace: namespace, name, createdResourceVersion: created.metadata.resourceVersion ?? '', references, redirected: [] };
  }
  const scratchName = `${namespace}-${name}`;
  const c = copyOf(src, undefined, scratchName);
  c.metadata.labels = { ...(c.metadata.labels ?? {}), [SCRATCH_LABEL]: namespace };
  c.metadata.annotations = { ...(c.metadata.annotations ?? {}), [SCRATCH_OWNER_ANNOTATION]: ownerAnnotation() };
  const redirected = redirectNamespaces(c.spec, namespace);
  const created = await env.client.create(env.primary, c, { signal: env.signal });
  return { key, scratchKey: scratchName, scratchNamespace: namespace, name: scratchName, createdResourceVersion: created.metadata.resourceVersion ?? '', references, redirected };
}

/**
 * For a Secret or ConfigMap the person named to copy (`--copy`, the setting; not one the spec names) that does not
 * exist: the names of that kind in `namespace` it most likely meant, by name only. Empty when none is close or the
 * names cannot be listed (a user who may not list them gets the plain "not found").
 */
async function namedTypoSuggestions(env: HarnessEnv, res: GroupVersionResource, namespace: string, ref: SpecReference): Promise<{ suggestions?: string[] }> {
  if (ref.path.startsWith('spec')) return {};
  try {
    const names = (await env.client.list(res, namespace, { signal: env.signal })).items.map((o) => o.metadata.name ?? '').filter(Boolean);
    const close = closestNames(ref.name, names);
    return close.length ? { suggestions: close } : {};
  } catch (e) {
    if (env.signal.aborted) throw e;
    return {};
  }
}

/**
 * Merge-patches a scratch copy (a check's spec transition, an annotation). For a cluster-scoped copy the patch's
 * namespace fields are pointed at the run's scratch namespace first, as the copy's were ({@link redirectNamespaces}):
 * a transition never sends its controller to a real namespace.
 */
export function patchCopy(env: HarnessEnv, copy: ScratchCopy, patch: unknown): Promise<KubeObject> {
  let p = patch;
  if (!env.primary.namespaced && p && typeof p === 'object' && 'spec' in p) {
    p = structuredClone(p) as { spec: unknown };
    redirectNamespaces((p as { spec: unknown }).spec, copy.scratchNamespace);
  }
  return env.client.patch(env.primary, copy.namespace, copy.name, 'merge', p, { signal: env.signal });
}

/** The current global resourceVersion as the server reports it on a list of the primary resource. */
export async function currentResourceVersion(env: HarnessEnv, namespace: string | undefined): Promise<string> {
  const l = await env.client.list(env.primary, env.primary.namespaced ? namespace : undefined, { signal: env.signal });
  return l.metadata?.resourceVersion ?? '';
}

/**
 * The perturbations a run is started with. Each {@link StartRun} implements every one of them exactly, or
 * rejects (never runs unperturbed while the check believes it perturbs).
 */
export interface RunHooks {
  /** The copy's key; the run resolves only once its controller has seen it (queued or reconciled). */
  key?: ObjectKey;
  /** Stale cache: every informer lists at exactly this resourceVersion and does not watch until {@link CheckRun.thaw}. */
  freezeAt?: string;
  /**
   * With {@link freezeAt}: only the informers of these resources are frozen; the others list and watch as usual (a
   * child kind lags behind while the primary is current). Empty or undefined: every informer is frozen.
   */
  freezeOnly?: readonly GroupVersionResource[];
  /** Unobserved state: the update events of this key can be withheld ({@link CheckRun.withhold}). */
  withholdKey?: ObjectKey;
  /** Crash after write: after this many successful persisted writes every later write fails or blocks without reaching the server; `onCrash` is called at once. */
  crashAfterWrites?: number;
  onCrash?: () => void;
  startPaused?: boolean;
}

/** Starts a controller over `namespace` with a fresh cache, queue and reconciler (or process). */
export type StartRun = (env: HarnessEnv, namespace: string, hooks: RunHooks) => Promise<CheckRun>;

/** One write of a run, with the key whose reconcile made it. */
export interface RunWrite {
  record: WriteRecord;
  key: ObjectKey;
  at: number;
}

/**
 * One controller over the scratch copies, as the checks drive it: the built-in loop ({@link ControllerRun}) or
 * the developer's Go controller in its own process (goRun.ts).
 */
export interface CheckRun {
  readonly controller: Controller;
  /** Every persisted or failed write the reconciler made, in order, with `before`/`after` where known. */
  readonly writes: RunWrite[];
  /** Journal entries, kept here as they are appended. */
  readonly entries: JournalEntry[];
  /** Clock time of the last entry that is not a "waiting" queue transition. */
  lastActivity: number;
  /** Reconciles `key` once now (paused or not) and resolves when that reconcile and its writes are recorded. */
  stepKey(key: ObjectKey): Promise<StepResult>;
  /** Stale cache: the objects the frozen cache holds, by `resource.group/namespace/name`. */
  frozenView(): Promise<Map<string, KubeObject>>;
  /** Stale cache: lets the frozen informers watch from the frozen resourceVersion and catch up. */
  thaw(): Promise<void>;
  /** Unobserved state: from now on the key's update events are not delivered to the controller (the cache still updates). */
  withhold(): Promise<void>;
  /** Unobserved state: delivers one coalesced update; resolves with how many update events were withheld. */
  release(): Promise<number>;
  /** Stops the controller (or process) and disposes everything it owns (idempotent). */
  stop(): Promise<void>;
}

/** The key used in {@link CheckRun.frozenView}. */
export function viewKeyOf(r: { resource: string; group: string }, namespace: string | undefined, name: string | undefined): string {
  return `${r.resource}.${r.group}/${namespace ?? ''}/${name ?? ''}`;
}

/** One controller of the built-in loop over the scratch copies: its own informers, queue and journal. */
export class ControllerRun implements CheckRun {
  readonly controller: Controller;
  readonly factory: InformerFactory;
  readonly reconciler: Reconciler;
  frozen: FrozenListerWatcher[] = [];
  withholding: WithholdingInformer | undefined;
  /** Every write the reconciler made, in order, with the key it was reconciling. */
  readonly writes: RunWrite[] = [];
  /** Journal entries, kept here as they are appended (the journal is a ring buffer). */
  readonly entries: JournalEntry[] = [];
  lastActivity: number;
  private stopped = false;

  constructor(controller: Controller, factory: InformerFactory, reconciler: Reconciler, clock: Clock) {
    this.controller = controller;
    this.factory = factory;
    this.reconciler = reconciler;
    this.lastActivity = clock.now();
    controller.journal.onDidAppend((batch) => {
      for (const e of batch) {
        this.entries.push(e);
        if (e.kind !== 'queue' || e.transition !== 'waiting') this.lastActivity = e.at;
      }
    });
  }

  async stepKey(key: ObjectKey): Promise<StepResult> {
    const r = await this.controller.step({ key, force: true });
    this.controller.journal.flush();
    return r;
  }

  async frozenView(): Promise<Map<string, KubeObject>> {
    const view = new Map<string, KubeObject>();
    for (const inf of this.factory.list()) for (const o of inf.getIndexer().list()) view.set(viewKeyOf(inf.resource, o.metadata.namespace, o.metadata.name), o);
    return view;
  }

  async thaw(): Promise<void> {
    if (!this.frozen.length) throw new Error('thaw: this run was not started with a frozen cache');
    for (const f of this.frozen) f.thaw();
  }

  async withhold(): Promise<void> {
    if (!this.withholding) throw new Error('withhold: this run was not started with withholdKey');
    this.withholding.withhold();
  }

  async release(): Promise<number> {
    if (!this.withholding) throw new Error('release: this run was not started with withholdKey');
    const n = this.withholding.withheldCount;
    this.withholding.release();
    return n;
  }

  /** Stops the controller and disposes it, its informers and the reconciler (idempotent). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    try {
      await this.controller.stop();
    } finally {
      this.controller.journal.flush();
      this.controller.dispose();
      this.factory.dispose();
      (this.reconciler as Partial<{ dispose(): void }>).dispose?.();
    }
  }
}

/** Whether a run started with `hooks` freezes the informer of `r` ({@link RunHooks.freezeOnly}; false without a freeze). */
export function freezes(hooks: RunHooks, r: GroupVersionResource): boolean {
  if (hooks.freezeAt === undefined) return false;
  return !hooks.freezeOnly?.length || hooks.freezeOnly.some((f) => f.group === r.group && f.resource === r.resource);
}

/** Starts a controller over `namespace` (or the scratch copy, cluster-scoped): {@link HarnessEnv.startRun}, else the built-in loop. */
export function startRun(env: HarnessEnv, namespace: string, hooks: RunHooks = {}): Promise<CheckRun> {
  return env.startRun ? env.startRun(env, namespace, hooks) : startLoopRun(env, namespace, hooks);
}

/** The built-in loop with a fresh reconciler from {@link HarnessEnv.createReconciler}. */
export async function startLoopRun(env: HarnessEnv, namespace: string, hooks: RunHooks = {}): Promise<ControllerRun> {
  if (!env.createReconciler) throw new Error('no reconciler to check (createReconciler)');
  const frozen: FrozenListerWatcher[] = [];
  const factory = new InformerFactory({
    listerWatcherFactory: (resource, scope) => {
      const lw = new KubeListerWatcher({ transport: env.transport, resource, ...scope });
      if (hooks.freezeAt === undefined || !freezes(hooks, resource)) return lw;
      const f = new FrozenListerWatcher(lw, hooks.freezeAt);
      frozen.push(f);
      return f;
    },
    clock: env.clock,
    logger: env.log,
  });
  const reconciler = env.createReconciler();
  let run: ControllerRun | undefined;
  // A cluster-scoped primary has no namespace to scope to: its informer watches the copy alone (by name), or the
  // run would reconcile the developer's own objects of that kind.
  if (!env.primary.namespaced && hooks.key === undefined) throw new Error('a check run of a cluster-scoped resource needs the key of its copy');
  // Confined as a Go check instance is: writes in the scratch namespace, to the copy, and to what the check created.
  const confined = confinedClient(env.client, { namespace, ...(!env.primary.namespaced && hooks.key !== undefined ? { clusterCopy: { gvr: env.primary, name: hooks.key } } : {}), footprint: env.footprint ?? new CheckFootprint() });
  const client = hooks.crashAfterWrites !== undefined ? crashingClient(confined, hooks.crashAfterWrites, () => hooks.onCrash?.()) : confined;
  const inNs = (r: ResourceInfo) => (r.namespaced ? { namespace } : {});
  const primaryScope = env.primary.namespaced ? { namespace } : { fieldSelector: `metadata.name=${hooks.key}` };
  // The owner-UID index, as the editor's and the CLI's informers have it (ctx.cache.indexer(gvr).byIndex('ownerUid', uid)).
  const indexers = { [OWNER_UID_INDEX]: ownerUidIndexFunc };
  let primary: SharedIndexInformer<KubeObject> = factory.informerFor(env.primary, { ...primaryScope, indexers });
  const ownedInformers = env.owned.map((o) => factory.informerFor(o, { ...inNs(o), indexers }));
  if (env.indexes?.length) addModuleIndexes(env.indexes, [primary, ...ownedInformers]);
  let withholding: WithholdingInformer | undefined;
  if (hooks.withholdKey !== undefined) primary = withholding = new WithholdingInformer(primary, hooks.withholdKey);
  const builder = controllerBuilder({
    name: `check-${reconciler.name}`,
    clock: env.clock,
    log: env.log,
    startPaused: hooks.startPaused ?? false,
    cacheSyncTimeoutMs: 30_000,
    ...(env.reconcileTimeoutMs ? { reconcileTimeoutMs: env.reconcileTimeoutMs } : {}),
    ...(env.predicateAdvice !== undefined ? { hotLoop: { predicateAdvice: env.predicateAdvice } } : {}),
    contextFactory: journalingContextFactory({
      client,
      clock: env.clock,
      onWrite: (w, key) => run?.writes.push({ record: w, key, at: env.clock.now() }),
    }),
  }).for(primary, env.predicates.length ? { predicates: env.predicates } : {});
  for (const informer of ownedInformers) builder.owns(informer);
  const controller = builder.build(reconciler);
  run = new ControllerRun(controller, factory, reconciler, env.clock);
  run.frozen = frozen;
  run.withholding = withholding;
  try {
    factory.start();
    await controller.start();
    const st = controller.status();
    if (st.lastStartError) throw new Error(`the check's controller did not start: ${st.lastStartError}`);
  } catch (e) {
    await run.stop();
    throw e;
  }
  return run;
}

export interface SettleResult {
  settled: boolean;
  /** How long it took (or the bound). */
  ms: number;
}

/**
 * Waits until the run is settled: nothing in flight, nothing queued, no backoff retry pending, and no informer
 * event, reconcile or write for `quietMs` (a pending requeue-after is allowed: "look again later" is idle).
 * Resolves `settled: false` at `boundMs`.
 */
export async function settle(env: HarnessEnv, run: CheckRun, boundMs: number): Promise<SettleResult> {
  const start = env.clock.now();
  run.lastActivity = Math.max(run.lastActivity, start);
  for (;;) {
    if (env.signal.aborted) throw env.signal.reason;
    const now = env.clock.now();
    const snap = run.controller.snapshot();
    const busy = snap.status.inFlight > 0 || snap.queue.length > 0 || snap.waiting.some((w) => w.kind === 'backoff' && w.dueAt - now < boundMs);
    if (!busy && now - run.lastActivity >= env.quietMs) return { settled: true, ms: now - start };
    if (now - start >= boundMs) return { settled: false, ms: now - start };
    await sleep(env.clock, 50, env.signal);
  }
}

/** Every object of `resources` in `namespace` (cluster-scoped: the copy only), without the namespace's root CA ConfigMap. */
export async function snapshot(env: HarnessEnv, namespace: string, copy: ScratchCopy, resources: ResourceInfo[]): Promise<RawEndState> {
  const objects: RawEndState['objects'] = [];
  for (const r of resources) {
    if (!r.namespaced) {
      if (r.resource === env.primary.resource && r.group === env.primary.group) {
        try {
          objects.push({ resource: resourceLabelOf(r), object: await env.client.get(r, undefined, copy.name, env.signal) });
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }
      continue;
    }
    const l = await env.client.list(r, namespace, { signal: env.signal });
    for (const o of l.items) {
      if (r.resource === 'configmaps' && o.metadata.name === 'kube-root-ca.crt') continue;
      objects.push({ resource: resourceLabelOf(r), object: o });
    }
  }
  return { namespace, objects };
}

/**
 * Deletes a scratch namespace and what is in it: finalizers of the listed resources' objects are removed first (a
 * stopped check controller will never remove its own), then the objects and the namespace are deleted. For a
 * cluster-scoped primary the copy is deleted by name. Never throws: problems are returned as notes.
 */
export async function deleteScratch(env: Pick<HarnessEnv, 'client' | 'primary'>, namespace: string, resources: ResourceInfo[], clusterCopy?: string): Promise<string[]> {
  const notes: string[] = [];
  const signal = AbortSignal.timeout(30_000);
  const strip = async (r: ResourceInfo, ns: string | undefined, o: KubeObject) => {
    if (o.metadata.finalizers?.length) await env.client.patch(r, ns, o.metadata.name ?? '', 'merge', { metadata: { finalizers: null } }, { signal });
    await env.client.delete(r, ns, o.metadata.name ?? '', { signal });
  };
  for (const r of resources) {
    try {
      if (!r.namespaced) {
        if (clusterCopy && r.resource === env.primary.resource && r.group === env.primary.group) await strip(r, undefined, await env.client.get(r, undefined, clusterCopy, signal));
        continue;
      }
      for (const o of (await env.client.list(r, namespace, { signal })).items) await strip(r, namespace, o).catch((e) => { if (!isNotFound(e)) throw e; });
    } catch (e) {
      if (!isNotFound(e)) notes.push(`cleanup of ${resourceLabelOf(r)} in ${namespace}: ${(e as Error).message}`);
    }
  }
  try {
    await env.client.delete(NAMESPACES, undefined, namespace, { signal });
  } catch (e) {
    if (!isNotFound(e)) notes.push(`could not delete the scratch namespace ${namespace}: ${(e as Error).message} (delete it with kubectl delete ns ${namespace})`);
  }
  return notes;
}
