/**
 * Every identifier the manifest (package.json `contributes`) and the code
 * share: command ids, view ids, context keys, context values and URI schemes.
 * This module imports nothing (scripts/checkManifest.mjs loads it in plain
 * Node) and is the single source of those strings: code uses these constants,
 * never literals, and checkManifest verifies package.json against them in both
 * directions during `npm test`'s build phase.
 */

/** Command ids. Every one is registered in src/host/commands/commandTable.ts and declared in package.json. */
export const CommandIds = {
  connect: 'reconcileLab.connect',
  disconnect: 'reconcileLab.disconnect',
  startLocalControlPlane: 'reconcileLab.startLocalControlPlane',
  selectResources: 'reconcileLab.selectResources',
  chooseReconciler: 'reconcileLab.chooseReconciler',
  selectNamespaces: 'reconcileLab.selectNamespaces',
  startLoop: 'reconcileLab.startLoop',
  stopLoop: 'reconcileLab.stopLoop',
  pauseLoop: 'reconcileLab.pauseLoop',
  resumeLoop: 'reconcileLab.resumeLoop',
  stepReconcile: 'reconcileLab.stepReconcile',
  dryRunReconcile: 'reconcileLab.dryRunReconcile',
  reconcileNow: 'reconcileLab.reconcileNow',
  resetBackoff: 'reconcileLab.resetBackoff',
  inspectCache: 'reconcileLab.inspectCache',
  openYaml: 'reconcileLab.openYaml',
  revealSecret: 'reconcileLab.revealSecret',
  stripFinalizers: 'reconcileLab.stripFinalizers',
  exportReport: 'reconcileLab.exportReport',
  showEventLog: 'reconcileLab.showEventLog',
  showOutput: 'reconcileLab.showOutput',
  revealObject: 'reconcileLab.revealObject',
  runController: 'reconcileLab.runController',
  setUpGoBridge: 'reconcileLab.setUpGoBridge',
  installCrd: 'reconcileLab.installCrd',
  stopController: 'reconcileLab.stopController',
  deleteObject: 'reconcileLab.deleteObject',
  selectController: 'reconcileLab.selectController',
  runChecks: 'reconcileLab.runChecks',
  showChecks: 'reconcileLab.showChecks',
  showTimeline: 'reconcileLab.showTimeline',
  filterResources: 'reconcileLab.filterResources',
  clearResourcesFilter: 'reconcileLab.clearResourcesFilter',
  editObject: 'reconcileLab.editObject',
  applyObjectEdit: 'reconcileLab.applyObjectEdit',
  getStarted: 'reconcileLab.getStarted',
} as const;
export type CommandId = (typeof CommandIds)[keyof typeof CommandIds];

/**
 * The Get Started walkthrough (package.json `contributes.walkthroughs`). VS Code names it
 * `<publisher>.<name>#<id>`; scripts/checkManifest.mjs checks that it is declared and that its steps link declared
 * commands, context keys and views, and packaged images.
 */
export const WalkthroughIds = {
  gettingStarted: 'gettingStarted',
} as const;

/**
 * The walkthrough's steps (package.json step ids) and the context key each one completes on
 * (`onContext:<key>`, besides its commands). The keys are this window's progress (src/host/walkthrough.ts).
 */
export const WalkthroughSteps = {
  connect: 'reconcileLab.walkthrough.connected',
  views: 'reconcileLab.walkthrough.views',
  step: 'reconcileLab.walkthrough.stepped',
  eventLog: 'reconcileLab.walkthrough.eventLog',
  goController: 'reconcileLab.walkthrough.goController',
  checks: 'reconcileLab.walkthrough.checks',
} as const;
export type WalkthroughStep = keyof typeof WalkthroughSteps;

/** Tree views (in the `reconcileLab` activity-bar container) and the webview panel type. */
export const ViewIds = {
  container: 'reconcileLab',
  resources: 'reconcileLab.resources',
  queue: 'reconcileLab.queue',
  eventLogPanel: 'reconcileLab.eventLog',
  checksPanel: 'reconcileLab.checks',
  timelinePanel: 'reconcileLab.timeline',
} as const;

/** Context keys used in `when` clauses. */
export const ContextKeys = {
  /** true while a cluster connection is open. */
  connected: 'reconcileLab.connected',
  /** true while connecting (kubeconfig load, discovery, first sync). */
  connecting: 'reconcileLab.connecting',
  /** The reconcile loop: "stopped" | "running" | "paused". */
  loopState: 'reconcileLab.loopState',
  /**
   * true while the views show a controller (the built-in loop, or a Go controller): false when the connection built
   * no loop (the reconciler does not fit the resource, an untrusted workspace, …). The loop's buttons and menus need it.
   */
  loopAvailable: 'reconcileLab.loopAvailable',
  /** true while a local control plane started by this window is running. */
  localControlPlane: 'reconcileLab.localControlPlane',
  /** true while a Go controller launched by Run Controller runs. */
  goController: 'reconcileLab.goController',
  /**
   * true while the views show a Go controller (not the built-in loop): its loop lives in its program, so the views
   * offer Pause / Resume and Stop Controller for it, not Stop Reconcile Loop.
   */
  showsGoController: 'reconcileLab.showsGoController',
  /** true when a workspace folder is, or holds (up to 4 levels down), a Go module that requires controller-runtime. */
  goProject: 'reconcileLab.goProject',
  /** true when every controller module of {@link goProject} already requires the bridge (Set Up Go Bridge… is done). */
  goProjectBridged: 'reconcileLab.goProjectBridged',
  /** true while the Resources view shows only objects in some states (Filter Resources by State…). */
  resourcesFiltered: 'reconcileLab.resourcesFiltered',
  /** The Get Started walkthrough's progress in this window, one key per step (WalkthroughSteps). */
  walkthroughConnected: 'reconcileLab.walkthrough.connected',
  walkthroughViews: 'reconcileLab.walkthrough.views',
  walkthroughStepped: 'reconcileLab.walkthrough.stepped',
  walkthroughEventLog: 'reconcileLab.walkthrough.eventLog',
  walkthroughGoController: 'reconcileLab.walkthrough.goController',
  walkthroughChecks: 'reconcileLab.walkthrough.checks',
} as const;

/** Values of {@link ContextKeys.loopState}. */
export const LoopStates = ['stopped', 'running', 'paused'] as const;
export type LoopStateKey = (typeof LoopStates)[number];

/**
 * Tree item context values, `reconcileLab:<noun>[:<state>…]`. Menus match them
 * with regular expressions (`viewItem =~ /^reconcileLab:object:/`), so every
 * state of a noun shares its prefix.
 */
export const ContextValues = {
  kind: 'reconcileLab:kind',
  namespace: 'reconcileLab:namespace',
  /**
   * An object (also an owned child shown under its owner):
   * `reconcileLab:object:<live|terminating>[:finalizers][:primary][:backoff][:secret]`; `:primary` marks objects of
   * the resource the loop reconciles (the reconcile commands apply to them), `:backoff` primary objects whose key has
   * failures or waits in backoff (Reset Backoff applies to them), `:secret` core Secrets (Reveal Secret Values
   * applies to them).
   */
  objectPrefix: 'reconcileLab:object',
  finalizerGroup: 'reconcileLab:finalizers',
  finalizer: 'reconcileLab:finalizer',
  conditionGroup: 'reconcileLab:conditions',
  condition: 'reconcileLab:condition',
  eventGroup: 'reconcileLab:events',
  /** One Kubernetes Event: `reconcileLab:event[:warning|:normal]` (no suffix: the loading / none line). */
  event: 'reconcileLab:event',
  /** A work-queue key: `reconcileLab:queueItem:<queued|processing|backoff|requeueAfter|idle>[:backoff]` (`:backoff`: it has failures or waits in backoff; Reset Backoff applies). */
  queueItemPrefix: 'reconcileLab:queueItem',
  message: 'reconcileLab:message',
} as const;

/** URI schemes of the read-only virtual documents (YAML views, diff sides). */
export const Schemes = {
  object: 'reconcile-lab',
  /** Writable edit documents (Edit Spec as YAML…): saving applies them. */
  edit: 'reconcile-lab-edit',
} as const;

/** The output channel (a LogOutputChannel) name. */
export const OUTPUT_CHANNEL_NAME = 'Reconcile Lab';
