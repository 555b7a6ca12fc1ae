import { isAbsolute, resolve } from 'node:path';
import type { Clock } from '../../core/clock.ts';
import { Emitter } from '../../core/event.ts';
import { DisposableStore, toDisposable, type Disposable } from '../../core/lifecycle.ts';
import type { Logger } from '../../core/log.ts';
import { waitForCacheSync } from '../../core/cache/waitForCacheSync.ts';
import { onInitialListRefused, type RefusedList } from '../../core/cache/refusedList.ts';
import { InformerFactory } from '../../core/cache/informerFactory.ts';
import { stripManagedFields } from '../../core/cache/sharedIndexInformer.ts';
import { OWNER_UID_INDEX, ownerUidIndexFunc } from '../../core/cache/indexFuncs.ts';
import type { ReflectorState, SharedIndexInformer } from '../../core/cache/interfaces.ts';
import { isTombstone } from '../../core/cache/interfaces.ts';
import { informerCacheReader } from '../../core/controller/cacheReader.ts';
import { controllerBuilder } from '../../core/controller/builder.ts';
import { journalingContextFactory, journalWriteOf } from '../../core/actions/controllerContext.ts';
import { createKubeEventRecorder } from '../../core/k8s/eventRecorder.ts';
import type { Controller, ControllerStatus } from '../../core/controller/controller.ts';
import { RemoteController } from '../../core/bridge/remoteController.ts';
import { unservedKind } from '../../core/bridge/goModule.ts';
import type { EnqueueReason, KeyBrief, KeyCounts, KeyState } from '../../core/controller/keyState.ts';
import { predicateFuncs, type Predicate } from '../../core/controller/predicate.ts';
import type { CacheReader, Reconciler } from '../../core/controller/reconcile.ts';
import { discoverResources, isBuiltInGroup, meantResourceIds, oneVersionPerResource, resourceInfoFromCrd, type DiscoveredResource } from '../../core/k8s/discovery.ts';
import { createDynamicClient, type DynamicKubeClient, type WriteRecord } from '../../core/k8s/dynamicClient.ts';
import { keyOf, type ObjectKey } from '../../core/k8s/keys.ts';
import { loadKubeConfig } from '../../core/k8s/kubeconfig.ts';
import { resourceIdOfGvr, type GroupVersionResource, type KubeObject, type ResourceInfo } from '../../core/k8s/objects.ts';
import { KubeTransport } from '../../core/k8s/transport.ts';
import { Journal } from '../../core/journal/journal.ts';
import { WriteIndex } from '../../core/journal/writeIndex.ts';
import { notScratchCopies } from '../../core/checks/scratch.ts';
import { reconcilerTitle } from '../webview/checksView.ts';
import { createExecReconciler } from '../../core/reconcilers/execReconciler.ts';
import { CONFIGMAP_GVR, LAB_FINALIZER, WIDGET_GVR, createLabReconciler, labResourceProblem } from '../../core/reconcilers/labReconciler.ts';
import { createModuleReconciler, moduleExtensionProblem, ModuleReconcilerError, type ModuleControllerConfig } from '../../core/reconcilers/moduleReconciler.ts';
import { addModuleIndexes, type ModuleIndex } from '../../core/reconcilers/moduleIndexes.ts';
import { editorStrayClaim } from '../strayErrors.ts';
import { parsePredicateSpec } from '../../core/controller/predicateSpec.ts';
import type { SettingKey, Settings } from '../settings.ts';
import { type ViewChange, type ViewModel, type WatchedResourceView } from '../views/viewModel.ts';
import { splitCommandLine } from '../../core/reconcilers/commandLine.ts';
import { ConvergenceTracker, type KeyConvergence } from '../../core/checks/convergence.ts';
import type { CheckReconcilerSpec } from '../../core/checks/types.ts';

const CRD_GVR: GroupVersionResource = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };
const NAMESPACES_GVR: GroupVersionResource = { group: '', version: 'v1', resource: 'namespaces' };
/** How long connecting waits for the informers' initial lists. */
const SYNC_TIMEOUT_MS = 60_000;
/**
 * Without a built-in loop, how long the connect waits for the custom resources watched only because of the default
 * (every one) before it shows what it has: one the server cannot list must not hold the window for a minute.
 */
const IMPLICIT_SYNC_WAIT_MS = 10_000;
/** The field manager of every write the extension makes. */
export const FIELD_MANAGER = 'reconcile-lab';

export interface SessionOptions {
  /** A kubeconfig file; undefined: the kubectl default (KUBECONFIG, several files, or ~/.kube/config). */
  kubeconfigPath?: string;
  /** The context; undefined: the kubeconfig's current context. */
  context?: string;
  /** The settings, read once: a session never changes what it watches (reconnect to apply new settings). */
  settings: Settings;
  /** Whether the workspace is trusted: exec and module reconcilers are only built when it is. */
  trusted: boolean;
  /** The first workspace folder: the exec reconciler's cwd and the base of a relative module path. */
  workspaceFolder?: string;
  clock: Clock;
  log: Logger;
  /** Something this session owns and stops when it closes (the local control plane it connects to). */
  owned?: { readonly description: string; stop(): Promise<void> };
  signal?: AbortSignal;
}

/** How to make a fresh reconciler like the loop's (for the robustness checks, which restart it), and what it is. */
export interface ReconcilerRecipe {
  readonly spec: CheckReconcilerSpec;
  /** The setting's text for people and reproduce lines: "lab", "exec:./r.sh", "module:samples/x.ts". */
  readonly flag: string;
  create(): Reconciler;
  /** The loop's predicates (the setting's and a module's exported ones): the checks' controllers use them too. */
  readonly predicates?: readonly Predicate[];
  /** The setting `reconcileLab.reconciler.predicates` as typed (a module's own are read from the module again). */
  readonly predicateSpecs?: readonly string[];
  /** A module's `checkTransitions` export: the unobserved-state and stale-cache transitions. */
  readonly checkTransitions?: readonly unknown[];
  /**
   * A module's predicates (the setting's first) and `checkTransitions` as the file exports them now: the module is
   * loaded afresh, so a check run picks up an edited export without a reconnect. Rejects when the module does not
   * load (the caller keeps the values read at connect).
   */
  readonly current?: () => Promise<{ predicates: Predicate[]; checkTransitions?: unknown[]; indexes?: ModuleIndex[] }>;
  /** A module's `indexes` export: its own cache indexes, which the checks' runs add too. */
  readonly indexes?: readonly ModuleIndex[];
  /**
   * The loop's reconcile deadline (a module's `options.reconcileTimeoutMs`, else the setting
   * `reconcileLab.workQueue.reconcileTimeoutSeconds`; 0 none): the checks' runs abort ctx.signal after it too.
   */
  readonly reconcileTimeoutMs?: number;
}

/** Why the loop is not available, for the person: what to do about it. */
export interface LoopProblem {
  readonly reason: 'untrusted' | 'noPrimary' | 'config';
  readonly message: string;
  /** The setting to fix, when one setting is wrong (offered as "Open Settings"). */
  readonly setting?: SettingKey;
}

/** A loop configuration problem that one setting causes: the loop problem names it, so the UI can open it. */
class LoopSettingError extends Error {
  readonly setting: SettingKey;
  constructor(setting: SettingKey, message: string) {
    super(message);
    this.name = 'LoopSettingError';
    this.setting = setting;
  }
}

interface Watched {
  readonly id: string;
  readonly info: ResourceInfo;
  readonly informer: SharedIndexInformer;
}

/**
 * How to turn on the generation-changed predicate in the editor, completing the hot-loop warning's "turn on the
 * generation-changed predicate: …" (the setting, or the module's own export when the reconciler is a module).
 */
export function settingsPredicateAdvice(modulePath?: string): string {
  return `add "generation-changed" to the setting reconcileLab.reconciler.predicates and reconnect${modulePath ? `, or add export const predicates = ['generation-changed'] to ${modulePath}` : ''}`;
}

/** Parses a resource id "plural.group" ("configmaps" for the core group). */
export function parseResourceId(id: string): { resource: string; group: string } {
  const i = id.indexOf('.');
  return i < 0 ? { resource: id, group: '' } : { resource: id.slice(0, i), group: id.slice(i + 1) };
}

/**
 * One cluster connection and everything that lives as long as it: the
 * transport and client, the informers of the watched resources, the journal,
 * the controller with its reconciler (when one can run here), and whatever it
 * was given to own (a local control plane). {@link close} releases all of it,
 * in reverse order of acquisition; nothing outlives it.
 *
 * Wiring only: what to watch comes from the settings, how to list, watch,
 * queue, reconcile and act comes from core. This module imports no `vscode`.
 *
 * Namespaces: none listed → cluster-wide informers; one → informers scoped to
 * it; several → cluster-wide informers whose events and views are filtered to
 * those namespaces (the controller gets a namespace event filter).
 */
export class Session implements ViewModel, Disposable {
  readonly contextName: string;
  /** The kubeconfig cluster entry's name of the current context (the local control plane's is "reconcile-lab"). */
  readonly clusterName: string | undefined;
  readonly server: string;
  /** The kubeconfig file connected with; undefined: the kubectl default. */
  readonly kubeconfigPath: string | undefined;
  readonly transport: KubeTransport;
  readonly client: DynamicKubeClient;
  readonly journal: Journal;
  /** The journal's persisted writes by object version (see {@link writtenBy}). */
  private readonly writes = new WriteIndex();
  /** What discovery found at connect, and again at each {@link learnResources}. */
  get discovered(): readonly DiscoveredResource[] {
    return this.discoveredNow;
  }
  private discoveredNow: readonly DiscoveredResource[];
  /** Resource ids defined by CustomResourceDefinitions (at connect, plus those {@link learnResources} found). */
  get customResources(): ReadonlySet<string> {
    return this.customNow;
  }
  private readonly customNow: Set<string>;
  /** Resource ids the settings asked for that the server does not serve. */
  readonly unknownResources: readonly string[];
  /** The built-in loop's controller (undefined when no loop could be built here). */
  readonly builtInController: Controller | undefined;
  readonly reconciler: Reconciler | undefined;
  /** Makes fresh reconcilers like {@link reconciler} (undefined when no loop could be built). */
  readonly reconcilerRecipe: ReconcilerRecipe | undefined;
  readonly loopProblem: LoopProblem | undefined;
  /** The built-in loop's resource ("plural.group"), fixed at connect (reconcileLab.reconciler.resource). */
  readonly builtInPrimaryResource: string | undefined;
  readonly builtInPrimaryInfo: ResourceInfo | undefined;
  /** Finalizers our own reconciler adds (for the stuck diagnosis). */
  readonly ownFinalizers: readonly string[];
  readonly settings: Settings;
  readonly owned: SessionOptions['owned'];
  /** Live convergence of the loop's keys (converged / changing / flapping); undefined without a loop resource. */
  readonly convergenceTracker: ConvergenceTracker | undefined;

  private readonly watched: Watched[];
  private readonly factory: InformerFactory;
  /** The namespaces of reconcileLab.namespaces (trimmed, no duplicates); empty: every namespace. */
  readonly namespaces: readonly string[];
  /** The kubeconfig context's namespace, when it names one (offered when a cluster-wide list is refused). */
  contextNamespace: string | undefined;
  /**
   * An initial list the server refused while connecting (RBAC 403, or 401): the connect stopped waiting for the
   * caches at once (the loop did not start) and the host says what to do. Undefined when every list went through.
   */
  refusedList: RefusedList | undefined;
  private readonly namespaceFilter: ReadonlySet<string> | undefined;
  private readonly store = new DisposableStore();
  private readonly changeEmitter = new Emitter<ViewChange>();
  readonly onDidChange = this.changeEmitter.event;
  private readonly log: Logger;
  private readonly clock: Clock;
  private closing: Promise<void> | undefined;
  /**
   * A controller running elsewhere (a Go process through the bridge) shown instead of the built-in loop; `primary`:
   * the watch of the resource it announced, when this cluster serves it; `unserved`: it announced a kind or resource
   * the cluster does not serve (its CRD is not installed).
   */
  private external: { controller: Controller; origin: () => string; primary?: Watched; unserved?: true } | undefined;
  private readonly controllerResources = new Map<string, string>();
  private keySub: Disposable | undefined;
  /** The labels this session lends the shown Go controller (RemoteController.setObjectLabels); gone on close. */
  private labelsLink: Disposable | undefined;
  /** Follows the shown Go controller's cached resources (watched here too), until another controller is shown. */
  private cachedLink: Disposable | undefined;
  /**
   * The controller's key briefs and queue order as of the last key-state change: every view refresh, the status bar
   * and Step's target read them, so that a refresh lists 10,000 keys once, not once per reader. Emptied on every
   * key-state change (a queue transition is one) and when the controller shown changes.
   */
  private keyCache: { briefs?: readonly KeyBrief[]; queued?: readonly ObjectKey[]; listed?: readonly KeyBrief[]; listedUnqueued?: readonly KeyBrief[] } = {};
  private readonly controllerEmitter = new Emitter<void>();
  /** The controller the views and loop commands act on changed (see {@link useController}). */
  readonly onDidChangeController = this.controllerEmitter.event;

  private constructor(parts: {
    options: SessionOptions;
    contextName: string;
    clusterName: string | undefined;
    transport: KubeTransport;
    client: DynamicKubeClient;
    journal: Journal;
    discovered: DiscoveredResource[];
    customResources: ReadonlySet<string>;
    unknownResources: string[];
    watched: Watched[];
    namespaceFilter: ReadonlySet<string> | undefined;
    factory: InformerFactory;
    controller: Controller | undefined;
    reconciler: (Reconciler & Partial<Disposable>) | undefined;
    recipe: ReconcilerRecipe | undefined;
    loopProblem: LoopProblem | undefined;
    primary: Watched | undefined;
    ownFinalizers: string[];
    store: DisposableStore;
  }) {
    const o = parts.options;
    this.settings = o.settings;
    this.log = o.log;
    this.clock = o.clock;
    this.owned = o.owned;
    this.contextName = parts.contextName;
    this.clusterName = parts.clusterName;
    this.transport = parts.transport;
    this.server = parts.transport.server;
    this.kubeconfigPath = o.kubeconfigPath;
    this.client = parts.client;
    this.journal = parts.journal;
    this.discoveredNow = parts.discovered;
    this.customNow = new Set(parts.customResources);
    this.unknownResources = parts.unknownResources;
    this.watched = parts.watched;
    this.namespaceFilter = parts.namespaceFilter;
    this.builtInController = parts.controller;
    this.reconciler = parts.reconciler;
    this.reconcilerRecipe = parts.recipe;
    this.loopProblem = parts.loopProblem;
    this.builtInPrimaryResource = parts.primary?.id;
    this.builtInPrimaryInfo = parts.primary?.info;
    this.factory = parts.factory;
    this.namespaces = [...new Set(o.settings.namespaces.map((n) => n.trim()).filter(Boolean))];
    this.ownFinalizers = parts.ownFinalizers;
    this.convergenceTracker = parts.primary
      ? this.store.add(new ConvergenceTracker({ clock: o.clock, keyState: (k) => this.controller?.keyState(k) }))
      : undefined;
    // Acquired resources were collected in `parts.store` while connecting: they are ours now.
    this.store.add(parts.store);
    // Whose write made the version an event names (writtenBy). A write's answer is often journaled after the watch
    // event it caused queued a key: the writer's row is refreshed then, so its reasons say "this key's own write".
    for (const e of this.journal.entries({ kinds: ['write'] })) this.writes.note(e);
    this.store.add(this.journal.onDidAppend((batch) => {
      for (const e of batch) {
        const w = this.writes.note(e);
        if (w?.key !== undefined && this.controller && w.controller === this.controller.name) this.changeEmitter.fire({ type: 'key', key: w.key });
      }
    }));
    this.store.add(this.changeEmitter);
    this.store.add(this.controllerEmitter);
    this.store.add(toDisposable(() => this.keySub?.dispose()));
    this.store.add(toDisposable(() => this.labelsLink?.dispose()));
    this.store.add(toDisposable(() => this.cachedLink?.dispose()));
  }

  /**
   * The resource ("plural.group") of the controller the views show: the shown Go controller's (its keys are that
   * resource's objects: the tree marks them, Step this key and Dry-Run take them) when it announced one this
   * cluster serves; none while it announced one the cluster does not serve (its CRD not installed yet: the built-in
   * loop's objects are not its keys, so no kind reads "reconciled by" it and no Widget is stepped in it); the
   * built-in loop's otherwise.
   */
  get primaryResource(): string | undefined {
    if (this.external?.unserved) return undefined;
    return this.external?.primary?.id ?? this.builtInPrimaryResource;
  }

  /**
   * The resource of the keys in `controller`'s journal entries: a Go controller's announced resource (see
   * {@link noteControllerResource}), else the built-in loop's.
   */
  resourceOfController(controller: string | undefined): string | undefined {
    return (controller !== undefined ? this.controllerResources.get(controller) : undefined) ?? this.builtInPrimaryResource;
  }

  /** Records the resource a controller running elsewhere (a Go controller) reconciles, for {@link resourceOfController}. */
  noteControllerResource(controller: string, resource: string): void {
    this.controllerResources.set(controller, resource);
  }

  /** The {@link ResourceInfo} of {@link primaryResource}. */
  get primaryInfo(): ResourceInfo | undefined {
    if (this.external?.unserved) return undefined;
    return this.external?.primary?.info ?? this.builtInPrimaryInfo;
  }

  /** Whether the views show an external controller (a Go program) rather than the built-in loop. */
  get showsExternal(): boolean {
    return this.external !== undefined;
  }

  /** The controller the views and the loop commands act on: an external one while set, else the built-in loop. */
  get controller(): Controller | undefined {
    return this.external?.controller ?? this.builtInController;
  }

  /**
   * Where {@link controller} runs, for people: the reconciler first, then "Reconcile Lab's loop" ("module reconciler
   * src/reconciler.ts · Reconcile Lab's loop", "lab sample reconciler · …"), or the external origin (read live:
   * "Go … pid 123 · connected"). The person's own code comes first: "built-in" read as "not my code".
   */
  get controllerOrigin(): string {
    if (this.external) return this.external.origin();
    if (!this.builtInController) return 'no loop';
    return `${this.reconcilerDescription} · Reconcile Lab's loop`;
  }

  /** The built-in loop's reconciler in words: "lab sample reconciler", "exec reconciler ./r.sh", "module reconciler x.ts". */
  get reconcilerDescription(): string {
    const recipe = this.reconcilerRecipe;
    if (!recipe) return this.reconciler?.name ?? 'reconciler';
    // The checks view's words for the same reconciler; the lab one is the sample here (the header has room to say so).
    return recipe.spec.kind === 'lab' ? 'lab sample reconciler' : reconcilerTitle(recipe);
  }

  /**
   * Shows `controller` (running elsewhere, e.g. a Go process) instead of the
   * built-in loop, which is paused so that two controllers do not reconcile the
   * same objects; `undefined` goes back to the built-in loop (left paused).
   * The session does not own an external controller.
   */
  useController(controller: Controller | undefined, origin: () => string = () => 'external controller'): void {
    if (controller && this.builtInController && this.builtInController !== controller) this.builtInController.pause();
    const resourceId = controller && 'resourceId' in controller ? (controller as { resourceId?: unknown }).resourceId : undefined;
    const primary = typeof resourceId === 'string' ? this.watch(resourceId) : undefined;
    if (controller && typeof resourceId === 'string') this.noteControllerResource(controller.name, resourceId);
    if (controller instanceof RemoteController && primary) controller.setResourceNamespaced(primary.info.namespaced);
    this.labelsLink?.dispose();
    this.labelsLink = undefined;
    this.cachedLink?.dispose();
    this.cachedLink = undefined;
    const unserved = (typeof resourceId === 'string' && !primary) || (controller instanceof RemoteController && unservedKind(controller.name, controller.announcement) !== undefined);
    this.external = controller ? { controller, origin, ...(primary ? { primary } : {}), ...(unserved ? { unserved: true as const } : {}) } : undefined;
    // A Go controller refuses to add by hand an object its cache's label selector leaves out: the labels it
    // checks are those of this session's informer of its resource (every namespace the informer holds), until
    // another controller is shown or the session closes (the controller may outlive it: a reconnect).
    if (controller instanceof RemoteController) {
      this.labelsLink = controller.setObjectLabels((key) => {
        const resource = this.primaryResource;
        const obj = resource ? this.find(resource)?.informer.getIndexer().getByKey(key) : undefined;
        return obj ? (obj.metadata.labels ?? {}) : undefined;
      });
      // What the program caches (its For, Owns and Watches resources) is watched here too, so the Resources view
      // shows the controller's children under their owners and their events in the Event Log, whatever
      // reconcileLab.resources lists. Only added, never dropped while the session lasts.
      const watchCached = () => {
        for (const id of controller.cachedResources) if (!this.find(id)) this.watch(id);
      };
      watchCached();
      this.cachedLink = controller.onDidChangeCachedResources(watchCached);
    }
    this.wireController();
    this.controllerEmitter.fire();
    this.changeEmitter.fire({ type: 'resources' });
  }

  private wireController(): void {
    this.keySub?.dispose();
    this.keyCache = {};
    // The key only: the views read the state they show when they refresh (no KeyState built per change).
    this.keySub = this.controller?.onDidChangeKey((key) => {
      this.keyCache = {};
      this.changeEmitter.fire({ type: 'key', key });
    });
  }

  /**
   * Connects: loads the kubeconfig (exec plugins and KUBECONFIG lists
   * included), discovers resources, creates and runs the informers, builds the
   * controller (started paused: the queue fills, nothing is reconciled until a
   * step or resume) and resolves once the caches synced or their sync failed
   * visibly. On failure everything acquired is released and the error thrown.
   */
  static async connect(o: SessionOptions): Promise<Session> {
    const store = new DisposableStore();
    try {
      const kc = loadKubeConfig({ ...(o.kubeconfigPath ? { path: o.kubeconfigPath } : {}), ...(o.context ? { context: o.context } : {}) });
      const contextName = kc.getCurrentContext();
      const clusterName = kc.getCurrentCluster()?.name;
      const transport = store.add(new KubeTransport(kc));
      const log = o.log.child({ context: contextName });
      const client = createDynamicClient(transport, { fieldManager: FIELD_MANAGER, log });
      const discovered = await discoverResources(transport, { signal: o.signal, logger: log });
      const preferred = oneVersionPerResource(discovered, (r) => r.verbs.includes('list') && r.verbs.includes('watch'));
      const byId = new Map(preferred.map((r) => [resourceIdOfGvr(r), r]));

      // What to watch: the listed resources, or every custom resource; plus what the reconciler needs.
      const unknownResources: string[] = [];
      const wanted: ResourceInfo[] = [];
      const want = (r: ResourceInfo | undefined) => {
        if (r && !wanted.some((w) => resourceIdOfGvr(w) === resourceIdOfGvr(r))) wanted.push(r);
      };
      // Custom resources are the ones a CRD defines. A user who may not list CRDs (a namespaced Role on a shared
      // cluster) gets those of discovery outside Kubernetes' own API groups instead, so that the default (every custom
      // resource) still shows their kinds; one they may not list either shows not synced and stops nothing.
      const crds = await client.list(CRD_GVR, undefined, { signal: o.signal }).catch((e: unknown) => {
        if (o.signal?.aborted) throw e;
        log.warn('cannot list CustomResourceDefinitions; custom resources are taken from discovery (groups outside Kubernetes\' own)', { error: (e as Error).message });
        return undefined;
      });
      const customResources = new Set(
        crds
          ? crds.items
              .map((c) => {
                try {
                  return resourceIdOfGvr(resourceInfoFromCrd(c));
                } catch {
                  return undefined;
                }
              })
              .filter((x): x is string => x !== undefined)
          : preferred.filter((r) => !isBuiltInGroup(r.group)).map((r) => resourceIdOfGvr(r)),
      );
      if (o.settings.resources.length) {
        for (const id of o.settings.resources) {
          const r = byId.get(id.trim());
          if (r) want(r);
          else unknownResources.push(id);
        }
      } else {
        for (const id of [...customResources].sort()) want(byId.get(id));
      }

      // The reconciler and its resources.
      const settings = o.settings;
      let loopProblem: LoopProblem | undefined;
      let reconciler: (Reconciler & Partial<Disposable>) | undefined;
      let recipe: ReconcilerRecipe | undefined;
      /** What a module reconciler exports besides reconcile(): predicates and controller options. */
      let moduleConfig: ModuleControllerConfig | undefined;
      let modulePath: string | undefined;
      let predicates: Predicate[] = [];
      let primaryInfo: ResourceInfo | undefined;
      const ownedInfos: ResourceInfo[] = [];
      const ownFinalizers: string[] = [];
      const kind = settings['reconciler.kind'];
      const explicitPrimary = settings['reconciler.resource'].trim();
      if (explicitPrimary) {
        primaryInfo = byId.get(explicitPrimary);
        if (!primaryInfo) {
          // "orders", "Order", "orders.shop.example.org/v1": the setting takes plural.group exactly; name the one meant.
          const meant = meantResourceIds(explicitPrimary, preferred);
          loopProblem = { reason: 'noPrimary', setting: 'reconciler.resource', message: `The reconciled resource "${explicitPrimary}" (reconcileLab.reconciler.resource) is not served by ${transport.server}.${meant.length ? ` Did you mean ${meant.map((m) => `"${m}"`).join(' or ')}? The setting takes plural.group, as kubectl api-resources lists it.` : ''}` };
        }
      } else if (kind === 'lab') {
        primaryInfo = byId.get(resourceIdOfGvr(WIDGET_GVR));
        if (!primaryInfo) loopProblem = { reason: 'noPrimary', message: 'The built-in lab reconciler needs the Widget custom resource (samples/crd.yaml of Reconcile Lab): apply it, then reconnect; or show your own Go controller instead (Run Controller…), or reconcile your own resource with an exec program or a JS/TS module (Choose Reconciler…).' };
      } else {
        // No reconciled resource set: the one custom resource watched is it; of several, guessing would run the
        // person's reconciler on a kind it was not written for, so none is taken and they are named.
        const custom = wanted.filter((w) => w.group !== '');
        if (custom.length === 1) primaryInfo = custom[0];
        else if (custom.length === 0) loopProblem = { reason: 'noPrimary', message: 'No custom resource is watched, so there is nothing to reconcile: set reconcileLab.reconciler.resource.' };
        else {
          const ids = custom.map((w) => `"${resourceIdOfGvr(w)}"`);
          loopProblem = {
            reason: 'noPrimary',
            message: `${custom.length} custom resources are watched (${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', …' : ''}) and reconcileLab.reconciler.resource is not set: set it to the one the reconciler reconciles (Choose Reconciler… asks), or list only that one in reconcileLab.resources.`,
          };
        }
      }
      // VS Code hands out a setting's value even when it is not one of the declared enum values: a kind that is none
      // of the three must not fall through to the module reconciler (which runs workspace code). It is said before
      // a missing resource: which resource to reconcile depends on the kind.
      if ((!loopProblem || loopProblem.reason === 'noPrimary') && kind !== 'lab' && kind !== 'exec' && kind !== 'module') {
        const near = (['lab', 'exec', 'module'] as const).find((k) => String(kind).trim().toLowerCase().startsWith(k.slice(0, 3)));
        loopProblem = {
          reason: 'config',
          message: `reconcileLab.reconciler.kind is ${JSON.stringify(kind)}, which is not a reconciler kind: use "lab" (built in), "exec" (a program per reconcile) or "module" (a JS/TS module)${near ? ` — did you mean "${near}"?` : ''}`,
        };
      }
      if (!loopProblem && kind === 'lab' && primaryInfo) {
        const problem = labResourceProblem(primaryInfo);
        if (problem) loopProblem = { reason: 'config', message: `${problem} (reconcileLab.reconciler.kind / reconcileLab.reconciler.resource)` };
      }
      if (!loopProblem && (kind === 'exec' || kind === 'module') && !o.trusted) {
        loopProblem = {
          reason: 'untrusted',
          message: `The ${kind} reconciler runs code from this workspace, so it only runs in a trusted workspace. Trust the workspace (Workspaces: Manage Workspace Trust) or set reconcileLab.reconciler.kind to "lab".`,
        };
      }
      if (!loopProblem) {
        try {
          if (kind === 'lab') {
            reconciler = createLabReconciler({ clock: o.clock });
            recipe = { spec: { kind: 'lab' }, flag: 'lab', create: () => createLabReconciler({ clock: o.clock }) };
            const cm = byId.get(resourceIdOfGvr(CONFIGMAP_GVR));
            if (cm) ownedInfos.push(cm);
            ownFinalizers.push(LAB_FINALIZER);
          } else if (kind === 'exec') {
            const argv = splitCommandLine(settings['reconciler.command']);
            if (argv.length === 0) throw new Error('reconcileLab.reconciler.command is empty: set the program to run for each reconcile.');
            const execOptions = {
              command: argv,
              ...(o.workspaceFolder ? { cwd: o.workspaceFolder } : {}),
              ...(o.kubeconfigPath ? { kubeconfigPath: o.kubeconfigPath } : {}),
              context: contextName,
              timeoutMs: Math.max(0, settings['reconciler.execTimeoutSeconds']) * 1000,
              timeoutSetting: 'reconcileLab.reconciler.execTimeoutSeconds',
              clock: o.clock,
            };
            reconciler = createExecReconciler(execOptions);
            recipe = { spec: { kind: 'exec', command: argv }, flag: `exec:${settings['reconciler.command'].trim()}`, create: () => createExecReconciler(execOptions) };
          } else {
            const p = settings['reconciler.modulePath'].trim();
            if (!p) throw new Error('reconcileLab.reconciler.modulePath is empty: set the module that exports reconcile(request, ctx).');
            // A name no loader takes (reconciler.ts.bak) gets no loop, rather than one failing every reconcile.
            const badName = moduleExtensionProblem(p);
            if (badName) throw new Error(`reconcileLab.reconciler.modulePath: ${badName}.`);
            const path = isAbsolute(p) || !o.workspaceFolder ? p : resolve(o.workspaceFolder, p);
            const moduleReconciler = createModuleReconciler({
              path,
              log: log.child({ reconciler: 'module' }), claimStray: editorStrayClaim,
            });
            reconciler = moduleReconciler;
            modulePath = p;
            recipe = { spec: { kind: 'module', path }, flag: `module:${p}`, create: () => createModuleReconciler({ path, log: log.child({ reconciler: 'module' }), claimStray: editorStrayClaim }) };
            try {
              moduleConfig = await moduleReconciler.controllerConfig();
            } catch (e) {
              // Misspelt predicates/options/checkTransitions exports are a configuration problem (the CLI's usage
              // error): no loop is built rather than one running without the predicates or options it was given.
              if (e instanceof ModuleReconcilerError && e.kind === 'config') {
                throw new Error(`reconcileLab.reconciler.modulePath: ${e.message}. Fix the module's exports, then reconnect.`);
              }
              // No such file (a typo in the setting): the CLI's usage error too. No loop, rather than one whose every
              // reconcile fails with "not found" while the views show the module as if it were fine.
              if (e instanceof ModuleReconcilerError && e.kind === 'not-found') {
                throw new LoopSettingError('reconciler.modulePath', `reconcileLab.reconciler.modulePath "${p}": ${e.message}. Fix the setting, then reconnect.`);
              }
              // A module that does not load yet (a compile error, a missing reconcile export) still gets its loop: each
              // reconcile reports the problem and a fixed file is picked up; only its exported predicates/options wait for a reconnect.
              log.warn('the reconciler module\'s predicates and options could not be read; reconnect after fixing it', { error: (e as Error).message });
            }
          }
          // Every built-in reconciler owns ConfigMaps (as the CLI's run, step and check do): the children an exec
          // or module reconciler writes are watched, listed under their owner, and their changes queue it.
          if (kind !== 'lab') {
            const cm = byId.get(resourceIdOfGvr(CONFIGMAP_GVR));
            if (cm && (!primaryInfo || resourceIdOfGvr(primaryInfo) !== resourceIdOfGvr(cm))) ownedInfos.push(cm);
          }
          // A resource a module's index is on is watched (as a child, as the CLI does) and waited for, so the index
          // holds every object of it before the first reconcile.
          for (const x of moduleConfig?.indexes ?? []) {
            const info = byId.get(x.resourceId);
            if (!info) throw new LoopSettingError('reconciler.modulePath', `reconcileLab.reconciler.modulePath: ${modulePath}: the index "${x.name}" is on ${x.resourceId}, which ${transport.server} does not serve. Fix the module's indexes export, then reconnect.`);
            if (info !== primaryInfo && !ownedInfos.includes(info)) ownedInfos.push(info);
          }
          predicates = settings['reconciler.predicates'].map((spec) => {
            try {
              return parsePredicateSpec(spec);
            } catch (e) {
              throw new Error(`reconcileLab.reconciler.predicates: ${(e as Error).message}`);
            }
          });
          const settingPredicates = [...predicates];
          predicates.push(...(moduleConfig?.predicates ?? []));
          if (recipe) {
            const spec = recipe.spec;
            recipe = {
              ...recipe,
              predicates: [...predicates],
              predicateSpecs: [...settings['reconciler.predicates']],
              ...(moduleConfig?.checkTransitions?.length ? { checkTransitions: moduleConfig.checkTransitions } : {}),
              ...(moduleConfig?.indexes.length ? { indexes: moduleConfig.indexes } : {}),
              reconcileTimeoutMs: moduleConfig?.options.reconcileTimeoutMs ?? Math.max(0, settings['workQueue.reconcileTimeoutSeconds']) * 1000,
              ...(spec.kind === 'module'
                ? {
                    current: async () => {
                      const probe = createModuleReconciler({ path: spec.path, log: log.child({ reconciler: 'module' }), claimStray: editorStrayClaim });
                      try {
                        const cfg = await probe.controllerConfig();
                        return {
                          predicates: [...settingPredicates, ...cfg.predicates],
                          ...(cfg.checkTransitions?.length ? { checkTransitions: [...cfg.checkTransitions] } : {}),
                          ...(cfg.indexes.length ? { indexes: cfg.indexes } : {}),
                        };
                      } finally {
                        probe.dispose();
                      }
                    },
                  }
                : {}),
            };
          }
        } catch (e) {
          // A configuration problem found after the reconciler was made (a bad predicate setting, a module's bad
          // exports) builds no loop: the reconciler made for it is let go here, so the problem is never shown beside
          // a loop running without the configuration it was given.
          loopProblem = { reason: 'config', message: (e as Error).message, ...(e instanceof LoopSettingError ? { setting: e.setting } : {}) };
          recipe = undefined;
          try {
            reconciler?.dispose?.();
          } catch (disposeError) {
            log.warn('letting go of the reconciler failed', { error: (disposeError as Error).message });
          }
          reconciler = undefined;
        }
      }
      if (reconciler?.dispose) store.add(reconciler as Disposable);
      if (primaryInfo) want(primaryInfo);
      for (const r of ownedInfos) want(r);

      // Informers: one per resource, scoped to the namespace when exactly one is listed.
      const namespaces = [...new Set(o.settings.namespaces.map((n) => n.trim()).filter(Boolean))];
      const namespaceFilter = namespaces.length > 1 ? new Set(namespaces) : undefined;
      const factory = store.add(
        new InformerFactory({
          transport,
          clock: o.clock,
          logger: log,
          defaultResyncPeriodMs: Math.max(0, o.settings['informer.resyncPeriodSeconds']) * 1000,
          ...(o.settings['informer.dropManagedFields'] ? { transform: stripManagedFields } : {}),
          watchList: o.settings['informer.watchList'],
        }),
      );
      const watched: Watched[] = wanted.map((info) => ({
        id: resourceIdOfGvr(info),
        info,
        informer: factory.informerFor(info, {
          ...(info.namespaced && namespaces.length === 1 ? { namespace: namespaces[0] } : {}),
          indexers: { [OWNER_UID_INDEX]: ownerUidIndexFunc },
        }),
      }));

      // A module's own indexes, on informers that have not started yet (each resource they are on is watched: above).
      if (reconciler && moduleConfig?.indexes.length) addModuleIndexes(moduleConfig.indexes, watched.map((w) => w.informer));

      const journal = store.add(new Journal({ clock: o.clock, capacity: Math.max(100, o.settings['eventLog.size']) }));
      const primary = primaryInfo ? watched.find((w) => w.id === resourceIdOfGvr(primaryInfo!)) : undefined;
      // What the connect waits for: the primary, the reconciler's own children and the resources the settings name.
      // A resource watched only because of the default (every custom resource) is not waited for by the loop and
      // only for IMPLICIT_SYNC_WAIT_MS without one.
      const needed = new Set([...ownedInfos.map(resourceIdOfGvr), ...o.settings.resources.map((r) => r.trim()), ...(primary ? [primary.id] : [])]);
      let controller: Controller | undefined;
      if (reconciler && primary) {
        const b = controllerBuilder({
          name: reconciler.name,
          clock: o.clock,
          log: log.child({ controller: reconciler.name }),
          journal,
          // A module's exported options come with its code and win over the settings.
          maxConcurrentReconciles: moduleConfig?.options.maxConcurrentReconciles ?? Math.max(1, Math.floor(o.settings['workQueue.maxConcurrentReconciles'])),
          reconcileTimeoutMs: moduleConfig?.options.reconcileTimeoutMs ?? Math.max(0, o.settings['workQueue.reconcileTimeoutSeconds']) * 1000,
          workQueue: moduleConfig?.options.workQueue ?? (o.settings['workQueue.kind'] === 'client-go' ? 'client-go' : 'priority'),
          hotLoop: {
            predicateAdvice: settingsPredicateAdvice(modulePath),
          },
          // Another writer undoing this loop's writes shows as a warning on the key (from managedFields).
          fieldFight: { ownManager: FIELD_MANAGER },
          startPaused: true,
          cacheSyncTimeoutMs: SYNC_TIMEOUT_MS,
          // Every write is journaled with the resourceVersion before (one GET) and after; Kubernetes Events
          // go through the plain client and are not sent while a dry-run is in progress.
          contextFactory: journalingContextFactory({
            client,
            clock: o.clock,
            recorder: store.add(createKubeEventRecorder({ client, component: 'reconcile-lab', clock: o.clock, log })),
          }),
        }).for(primary.informer, predicates.length ? { predicates } : {});
        // Children map to their owners from every watched resource. The start waits only for what the loop needs:
        // the primary, the reconciler's own children and what the settings name; a resource watched only because it
        // is a custom resource (the default: every one) joins when it syncs, so one the server cannot list (a broken
        // conversion webhook, a missing APIService) does not keep the loop from starting.
        for (const w of watched) if (w !== primary) b.owns(w.informer, needed.has(w.id) ? {} : { waitForSync: false });
        if (namespaceFilter) b.withEventFilter(namespacePredicate(namespaceFilter));
        // The robustness checks' scratch copies are theirs alone (a loop watching every namespace would queue each).
        b.withEventFilter(notScratchCopies());
        controller = store.add(b.build(reconciler));
      }

      factory.start();
      const session = new Session({
        options: o,
        contextName,
        clusterName,
        transport,
        client,
        journal,
        discovered,
        customResources,
        unknownResources,
        watched,
        namespaceFilter,
        factory,
        controller,
        reconciler,
        recipe,
        loopProblem,
        primary,
        ownFinalizers,
        store,
      });
      session.wire();
      session.contextNamespace = kc.getContextObject(contextName)?.namespace || undefined;
      // A list the server refuses (a user with namespaced rights watching every namespace) is not waited out for the
      // cache-sync timeout (two minutes): the waiting ends at once and the host says what to do (refusedList). Only
      // what the connect needs counts (the loop's resources and those the settings name): a custom resource watched
      // because of the default (every one) that this user may not list (another team's kind on a shared cluster) is
      // shown not synced, as one the server cannot list is, and stops nothing.
      const refused = new AbortController();
      const refusedWatch = onInitialListRefused(
        watched.filter((w) => needed.has(w.id)).map((w) => ({ informer: w.informer, ...(w.info.namespaced && namespaces.length === 1 ? { namespace: namespaces[0] } : {}) })),
        (r) => {
          session.refusedList = r;
          log.error('the server refused an initial list', { resource: resourceIdOfGvr(r.resource), namespace: r.namespace ?? '(all)', code: r.code, error: r.error });
          refused.abort(new Error('list refused'));
          if (controller) void controller.stop();
        },
      );
      try {
        if (controller) {
          // start() waits for the caches; it resolves paused (startPaused). A sync failure is reported, not thrown.
          await controller.start().catch((e: unknown) => log.error('the reconcile loop did not start', { error: session.refusedList ? `the server refused to list ${resourceIdOfGvr(session.refusedList.resource)}` : (e as Error).message }));
        } else {
          const stop = [refused.signal, ...(o.signal ? [o.signal] : [])];
          const neededInformers = watched.filter((w) => needed.has(w.id)).map((w) => w.informer);
          const implicit = watched.filter((w) => !needed.has(w.id)).map((w) => w.informer);
          const synced =
            (await waitForCacheSync(o.clock, neededInformers, { signal: AbortSignal.any([AbortSignal.timeout(SYNC_TIMEOUT_MS), ...stop]) })) &&
            (await waitForCacheSync(o.clock, implicit, { signal: AbortSignal.any([AbortSignal.timeout(IMPLICIT_SYNC_WAIT_MS), ...stop]) }));
          if (!synced && !o.signal?.aborted && !refused.signal.aborted) {
            const late = watched.filter((w) => !w.informer.hasSynced()).map((w) => w.id);
            log.warn('the informer caches did not sync in time; the views fill in as they do', { notSynced: late.join(', ') });
          }
        }
      } finally {
        refusedWatch.dispose();
      }
      return session;
    } catch (e) {
      try {
        store.dispose();
      } catch (disposeError) {
        o.log.warn('cleanup after a failed connect failed', { error: (disposeError as Error).message });
      }
      if (o.owned) await o.owned.stop().catch(() => {});
      throw e;
    }
  }

  /**
   * Runs discovery again, after a CustomResourceDefinition was installed while connected (Install CRD…): the
   * resources it serves are then known here (a Go controller started afterwards is watched as usual), and when the
   * connection watches every custom resource (no reconcileLab.resources) the `customResources` given are watched from
   * now on. Resources are only added, never dropped. Resolves with the ids newly served.
   */
  async learnResources(customResources: readonly string[] = [], signal?: AbortSignal): Promise<string[]> {
    const before = new Set(this.discoveredNow.map((d) => resourceIdOfGvr(d)));
    this.discoveredNow = await discoverResources(this.transport, { ...(signal ? { signal } : {}), logger: this.log });
    const added = [...new Set(this.discoveredNow.map((d) => resourceIdOfGvr(d)))].filter((id) => !before.has(id));
    for (const id of customResources) this.customNow.add(id);
    if (!this.settings.resources.length) for (const id of customResources) if (!this.find(id)) this.watch(id, true);
    this.changeEmitter.fire({ type: 'resources' });
    return added;
  }

  /**
   * The watched resource `id` ("plural.group"), watching it from now on when this cluster serves it and it is not
   * watched yet (a Go controller's resource, e.g. deployments.apps); undefined when the cluster does not serve it.
   */
  private watch(id: string, amongCustom = false): Watched | undefined {
    const found = this.find(id);
    if (found) return found;
    const info = oneVersionPerResource(this.discovered, (d) => d.verbs.includes('list') && d.verbs.includes('watch') && resourceIdOfGvr(d) === id)[0];
    if (!info) {
      this.log.warn('the shown controller\'s resource is not served by this cluster', { resource: id });
      return undefined;
    }
    const w: Watched = {
      id,
      info,
      informer: this.factory.informerFor(info, {
        ...(info.namespaced && this.namespaces.length === 1 ? { namespace: this.namespaces[0] } : {}),
        indexers: { [OWNER_UID_INDEX]: ownerUidIndexFunc },
      }),
    };
    // A custom resource learned later (Install CRD…) takes its place in the custom resources' id order, as at connect,
    // rather than at the end of a long list.
    const at = amongCustom ? this.watched.findIndex((x) => this.customNow.has(x.id) && x.id > id) : -1;
    if (at >= 0) this.watched.splice(at, 0, w);
    else this.watched.push(w);
    this.wireWatched(w);
    this.changeEmitter.fire({ type: 'resources' });
    return w;
  }

  /** Subscribes the views' change stream to the informers and the controller. */
  private wire(): void {
    this.wireConvergence();
    for (const w of this.watched) this.wireWatched(w);
    this.wireController();
  }

  /** Refreshes the views on every change of `w`'s objects and informer state. */
  private wireWatched(w: Watched): void {
    const fire = (obj: KubeObject, rowOnly?: boolean) => {
      if (this.inScope(obj)) this.changeEmitter.fire(rowOnly ? { type: 'object', resource: w.id, key: keyOf(obj), rowOnly } : { type: 'object', resource: w.id, key: keyOf(obj) });
    };
    this.store.add(
      w.informer.addEventHandler({
        onAdd: fire,
        onUpdate: (old, obj) => fire(obj, sameLayout(old, obj)),
        onDelete: (obj) => fire(isTombstone(obj) ? obj.obj : obj),
      }),
    );
    this.store.add(w.informer.onDidChangeState(() => this.changeEmitter.fire({ type: 'resources' })));
  }

  /**
   * Feeds the convergence tracker: the primary objects, the children they control (a controller ownerReference of
   * the primary kind, in any watched resource) and the journal; its changes refresh the keys in the views.
   */
  private wireConvergence(): void {
    const t = this.convergenceTracker;
    const primary = this.builtInPrimaryInfo;
    if (!t || !primary) return;
    const primaryApiGroup = primary.group;
    this.store.add(this.journal.onDidAppend((batch) => t.observeJournal(batch)));
    this.store.add(t.onDidChange((keys) => {
      for (const key of keys) this.changeEmitter.fire({ type: 'key', key });
    }));
    for (const w of this.watched) {
      const isPrimary = w.id === this.builtInPrimaryResource;
      const feed = (obj: KubeObject, gone: boolean) => {
        if (!this.inScope(obj) || !obj.metadata.name) return;
        if (isPrimary) {
          t.observePrimary(keyOf(obj), gone ? undefined : obj);
          return;
        }
        for (const ref of obj.metadata.ownerReferences ?? []) {
          if (ref.controller !== true || ref.kind !== primary.kind) continue;
          const group = ref.apiVersion.includes('/') ? ref.apiVersion.slice(0, ref.apiVersion.indexOf('/')) : '';
          if (group !== primaryApiGroup) continue;
          const ownerKey = primary.namespaced ? `${obj.metadata.namespace ?? ''}/${ref.name}` : ref.name;
          t.observeOwned(ownerKey, `${obj.kind ?? w.info.kind} ${keyOf(obj)}`, gone ? undefined : obj);
        }
      };
      this.store.add(
        w.informer.addEventHandler({
          onAdd: (obj) => feed(obj, false),
          onUpdate: (_old, obj) => feed(obj, false),
          onDelete: (obj) => feed(isTombstone(obj) ? obj.obj : obj, true),
        }),
      );
    }
  }

  /** See {@link ViewModel.writtenBy}: the key of the shown controller's reconcile whose write made the version `r` names. */
  writtenBy(r: EnqueueReason): ObjectKey | undefined {
    const c = this.controller;
    return c ? this.writes.reconcileKeyOf(r, c.name) : undefined;
  }

  /** The key of `controller`'s reconcile whose write made the version `r` names (the Event Log: an entry's own controller). */
  writtenByIn(r: EnqueueReason, controller: string | undefined): ObjectKey | undefined {
    return controller === undefined ? undefined : this.writes.reconcileKeyOf(r, controller);
  }

  /** The live convergence of a key of the loop's resource (undefined: not tracked, e.g. no such object). */
  convergence(key: ObjectKey): KeyConvergence | undefined {
    // Without a loop nothing reconciles the objects: "changing" or "converged" would describe a loop that is not there.
    return this.controller ? this.convergenceTracker?.get(key) : undefined;
  }

  /** See {@link ViewModel.loopAvailable}: a controller (the built-in loop or a shown Go controller) exists. */
  get loopAvailable(): boolean {
    return this.controller !== undefined;
  }

  /** See {@link ViewModel.reconciledBy}. */
  get reconciledBy(): string | undefined {
    if (!this.controller) return undefined;
    return this.external ? `${this.external.controller instanceof RemoteController ? 'Go controller' : 'controller'} ${this.external.controller.name}` : 'the loop';
  }

  private inScope(obj: KubeObject): boolean {
    return !this.namespaceFilter || !obj.metadata.namespace || this.namespaceFilter.has(obj.metadata.namespace);
  }

  private find(resource: string): Watched | undefined {
    return this.watched.find((w) => w.id === resource);
  }

  // ---- ViewModel ---------------------------------------------------------------------------------------------

  get resources(): WatchedResourceView[] {
    return this.watched.map((w) => ({ id: w.id, info: w.info, state: w.informer.state as ReflectorState, synced: w.informer.hasSynced() }));
  }

  get(resource: string, key: ObjectKey): KubeObject | undefined {
    const obj = this.find(resource)?.informer.getIndexer().getByKey(key);
    return obj && this.inScope(obj) ? obj : undefined;
  }

  list(resource: string): KubeObject[] {
    const all = this.find(resource)?.informer.getIndexer().list() ?? [];
    return this.namespaceFilter ? all.filter((o) => this.inScope(o)) : all;
  }

  ownedBy(uid: string): Array<{ resource: string; object: KubeObject }> {
    const out: Array<{ resource: string; object: KubeObject }> = [];
    // Only objects in the watched namespaces, as get and list: a cluster-scoped owner's children may live in any
    // namespace, and one outside them would be a row that nothing else in the views knows ("not in cache").
    for (const w of this.watched) for (const object of w.informer.getIndexer().byIndex(OWNER_UID_INDEX, uid)) if (this.inScope(object)) out.push({ resource: w.id, object });
    return out;
  }

  keyState(key: ObjectKey): KeyState | undefined {
    return this.controller?.keyState(key);
  }

  outsideController(key: ObjectKey): string | undefined {
    const c = this.controller;
    if (!(c instanceof RemoteController)) return undefined;
    const resource = this.primaryResource;
    const obj = resource ? this.get(resource, key) : undefined;
    return c.outsideCache(key, obj ? (obj.metadata.labels ?? {}) : undefined);
  }

  keyStates(): KeyState[] {
    return this.controller ? [...this.controller.snapshot().keys] : [];
  }

  keyBriefs(): readonly KeyBrief[] {
    return (this.keyCache.briefs ??= this.controller?.keyBriefs() ?? []);
  }

  queuedKeys(limit?: number): ObjectKey[] {
    if (limit !== undefined) return this.controller?.queuedKeys(limit) ?? [];
    return [...(this.keyCache.queued ??= this.controller?.queuedKeys() ?? [])];
  }

  keyCounts(): KeyCounts {
    return this.controller?.keyCounts() ?? { queued: 0, processing: 0, backoff: 0, requeueAfter: 0 };
  }

  listedKeyBriefs(withoutQueued?: boolean): readonly KeyBrief[] {
    if (withoutQueued) return (this.keyCache.listedUnqueued ??= this.controller?.listedKeyBriefs(true) ?? []);
    return (this.keyCache.listed ??= this.controller?.listedKeyBriefs() ?? []);
  }

  flappingKeys(): ObjectKey[] {
    return this.convergenceTracker?.flappingKeys() ?? [];
  }

  // ---- for commands ------------------------------------------------------------------------------------------

  /** The watched resource's discovery info. */
  info(resource: string): ResourceInfo | undefined {
    return this.find(resource)?.info ?? oneVersionPerResource(this.discovered, (d) => resourceIdOfGvr(d) === resource)[0];
  }

  /** A CacheReader over every watched informer (for dry-runs and reports run beside the loop). */
  cacheReader(): CacheReader {
    return informerCacheReader(this.watched.map((w) => w.informer));
  }

  /** "running" | "paused" | "stopped" for the UI ("stopped" also while starting or stopping, and with no loop). */
  loopState(): 'running' | 'paused' | 'stopped' {
    const s: ControllerStatus | undefined = this.controller?.status();
    if (!s || s.state !== 'running') return 'stopped';
    return s.paused ? 'paused' : 'running';
  }

  /** Names of the namespaces on the server (for the namespace picker). */
  async listNamespaces(signal?: AbortSignal): Promise<string[]> {
    const list = await this.client.list(NAMESPACES_GVR, undefined, { signal });
    return list.items.map((n) => n.metadata.name ?? '').filter(Boolean).sort();
  }

  /**
   * Records an action a person took through the editor (strip finalizers, delete, dry-run) as a named control
   * entry of the journal, before the writes it causes ({@link Session.recordWrite}). The entry belongs to
   * `controller` when the action runs in one (a Go controller's Dry-Run Reconcile: its planned writes come back
   * under its name, so the Event Log ties them to the action and names the key's object of that controller's
   * resource); otherwise, and by default, to the person ("reconcile-lab", like the writes made on their behalf).
   */
  recordAction(action: 'stripFinalizers' | 'delete' | 'dryRun', key: ObjectKey, detail?: string, controller = 'reconcile-lab'): void {
    this.journal.append({ kind: 'control', action, controller, key, ...(detail ? { detail } : {}) });
  }

  /** Records a write made on the person's behalf (finalizer removal) in the journal: the audit trail. */
  recordWrite(w: WriteRecord, key: ObjectKey): void {
    this.journal.recordWrite(journalWriteOf(w, 'reconcile-lab', key));
  }

  /**
   * Releases everything (controller, informers, journal, reconciler) and stops
   * what it owns unless `keepOwned` (a reconnect hands it to the next session).
   * Idempotent: later calls return the first call's promise.
   */
  close(options: { keepOwned?: boolean } = {}): Promise<void> {
    this.closing ??= (async () => {
      try {
        if (this.builtInController) await this.builtInController.stop().catch((e: unknown) => this.log.warn('stopping the loop failed', { error: (e as Error).message }));
      } finally {
        try {
          this.store.dispose();
        } catch (e) {
          this.log.warn('releasing the connection failed', { error: (e as Error).message });
        }
        if (this.owned && !options.keepOwned) {
          this.log.info(`stopping ${this.owned.description}`);
          await this.owned.stop().catch((e: unknown) => this.log.error(`stopping ${this.owned!.description} failed`, { error: (e as Error).message }));
        }
      }
    })();
    return this.closing;
  }

  dispose(): void {
    void this.close();
  }

  /** A Disposable that closes the session (for a DisposableStore of the extension). */
  asDisposable(): Disposable {
    return toDisposable(() => this.dispose());
  }
}

function namespacePredicate(namespaces: ReadonlySet<string>): Predicate {
  const ok = (o: KubeObject) => !o.metadata.namespace || namespaces.has(o.metadata.namespace);
  return predicateFuncs('namespaces', { create: (e) => ok(e.object), update: (e) => ok(e.objectNew), delete: (e) => ok(e.object) });
}

/** A client write record as a journal write entry of `controller` reconciling `key`. */

/**
 * True when an update changed nothing that is shown outside the object's own rows: the same ownerReferences (which
 * decide where it is listed as an owned child and whether its owners have children) and the same deletion state
 * (counted on the kind and namespace rows). Views then refresh only the rows of this object.
 */
export function sameLayout(old: KubeObject, obj: KubeObject): boolean {
  if (Boolean(old.metadata.deletionTimestamp) !== Boolean(obj.metadata.deletionTimestamp)) return false;
  if (old.metadata.namespace !== obj.metadata.namespace || old.metadata.uid !== obj.metadata.uid) return false;
  const a = old.metadata.ownerReferences ?? [];
  const b = obj.metadata.ownerReferences ?? [];
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i]!.uid !== b[i]!.uid || Boolean(a[i]!.controller) !== Boolean(b[i]!.controller) || a[i]!.kind !== b[i]!.kind || a[i]!.name !== b[i]!.name) return false;
  }
  return true;
}
