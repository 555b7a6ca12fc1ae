import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import * as vscode from 'vscode';
import { realClock, type Clock } from '../core/clock.ts';
import { Emitter } from '../core/event.ts';
import { DisposableStore, toDisposable } from '../core/lifecycle.ts';
import type { Logger } from '../core/log.ts';
import { NOT_CONNECTED, type LogEntryView, type LogFilter } from '../shared/protocol.ts';
import { readSettings, readSettingProblems, onDidChangeSettings } from './config.ts';
import { WalkthroughProgress } from './walkthrough.ts';
import { ContextKeyWriter } from './contextKeys.ts';
import { listObjectEvents } from '../core/actions/events.ts';
import { stateFilterLabel } from './views/stateFilter.ts';
import { ObjectDocuments } from './documents/objectDocuments.ts';
import { EditDocuments } from './documents/editDocuments.ts';
import { editNotes, offerConflictChoices } from './commands/editCommands.ts';
import { CommandIds, ContextKeys, Schemes, ViewIds } from './ids.ts';
import { missingNamespaceNote } from '../core/k8s/absent.ts';
import { withMeantResource } from '../core/k8s/discovery.ts';
import { refusedListMessage } from '../core/cache/refusedList.ts';
import { watchServerOutages } from '../core/k8s/reachability.ts';
import { errorMessage } from './notify.ts';
import type { Output } from './output.ts';
import { resolveKubeconfigSource, withSettingHint, type KubeconfigSource } from './connection/kubeconfigSource.ts';
import { Session, type SessionOptions } from './session/session.ts';
import { clampSettings, ConnectionScopedSettings, SETTINGS_SECTION, type SettingKey, type Settings } from './settings.ts';
import { ignoredRestrictedSettings, ignoredSettingsNotice, reconnectPromptOf, type IgnoredSetting } from './ignoredSettings.ts';
import { StatusBar } from './statusBar.ts';
import * as ui from './ui.ts';
import { QueueTreeProvider } from './views/queueTree.ts';
import { ResourcesTreeProvider, type ResourceNode } from './views/resourcesTree.ts';
import type { QueueNode } from './views/queueTree.ts';
import { EventLogPanel, type EventLogSource } from './webview/eventLogPanel.ts';
import { GoControllers } from './goController/goControllers.ts';
import type { ObjectKey } from '../core/k8s/keys.ts';
import type { EnqueueReason } from '../core/controller/keyState.ts';
import { otherControllersNote, pausedQueueMessage, selectedKeyOf, selectionAfter, stepTargetOf, stepTargetText, type SelectableNode, type StepSelection, type StepTarget } from './views/stepTarget.ts';
import { MessageThrottle, VIEW_MESSAGE_INTERVAL_MS } from './views/messageThrottle.ts';
import { Ticker } from './views/ticker.ts';
import { ControllerLabelling, EVENT_LOG_KINDS, exportJsonLines, toLogEntryView } from './webview/journalView.ts';
import { entryDetail } from './webview/entryDetail.ts';
import { ChecksUi } from './checks/checksUi.ts';
import { TimelinePanel, type TimelineSource } from './webview/timelinePanel.ts';
import { toTimeline } from './webview/timelineView.ts';
import type { TimelineEntryView } from '../shared/protocol.ts';
import { loopProblemActions } from './session/loopProblemActions.ts';

/** What a connect asks for; every field is optional (defaults: the settings). */
export interface ConnectRequest {
  /** A kubeconfig file (overrides the setting and RECONCILE_LAB_KUBECONFIG). */
  kubeconfig?: string;
  context?: string;
  /** Overrides of settings for this connection only (tests, scripts). */
  overrides?: Partial<Settings>;
  /** Owned by the session: stopped when it closes (the local control plane). */
  owned?: SessionOptions['owned'];
  /** A label for progress messages. */
  label?: string;
}

/** Global-state key of the kubeconfig file chosen in the Connect picker. */
const REMEMBERED_KUBECONFIG = 'reconcileLab.chosenKubeconfig';

/** While a view is visible, relative times ("Terminating 12s", "retry in 3s") are re-rendered this often. */
export const TICK_MS = 1000;

/**
 * The extension for one window: the views, the status bar, the event log,
 * the virtual documents, the context keys, and the current connection
 * ({@link Session}). Two lifetimes, two buckets: `store` lives as long as the
 * extension; `connection` as long as one session, and is replaced on each
 * connect. Shows core state and calls core; decides nothing about clusters.
 */
export class ReconcileLab implements vscode.Disposable {
  readonly log: Logger;
  readonly output: Output;
  readonly clock: Clock;
  readonly documents: ObjectDocuments;
  /** Writable edit documents (Edit Spec as YAML…): saving one applies it. */
  readonly edits: EditDocuments;
  readonly resourcesTree: ResourcesTreeProvider;
  readonly queueTree: QueueTreeProvider;
  readonly resourcesView: vscode.TreeView<ResourceNode>;
  readonly queueView: vscode.TreeView<QueueNode>;
  /** The Work Queue view's message, at most every VIEW_MESSAGE_INTERVAL_MS (see MessageThrottle: it froze the view). */
  private readonly queueMessage: MessageThrottle;
  readonly eventLog: EventLogPanel;
  /** The per-key Timeline webview (Show Timeline). */
  readonly timeline: TimelinePanel;
  readonly statusBar: StatusBar;
  readonly contextKeys = new ContextKeyWriter();
  readonly extensionUri: vscode.Uri;
  /** The Get Started walkthrough's progress in this window (Reconcile Lab: Get Started opens it). */
  readonly walkthrough: WalkthroughProgress;
  /** The developer's Go controllers (Run Controller…, Debug with Reconcile Lab) and their bridge. */
  readonly go: GoControllers;
  /** Run Robustness Checks… and its results view. */
  readonly checks: ChecksUi;
  /** Where the kubeconfig chosen with "Choose a Kubeconfig File…" is kept across window reloads. */
  private readonly memento: vscode.Memento;

  private readonly store = new DisposableStore();
  private connection = new DisposableStore();
  private current: Session | undefined;
  private connecting: Promise<Session> | undefined;
  /**
   * The restricted settings the workspace sets that VS Code ignored for the current connection (Restricted Mode),
   * read from the folder's .vscode/settings.json at connect; empty in a trusted workspace.
   */
  ignoredWorkspaceSettings: readonly IgnoredSetting[] = [];
  private connectAbort: AbortController | undefined;
  private readonly sessionEmitter = new Emitter<Session | undefined>();
  /** The loop key selected in the Resources or Work Queue view (the latest selection wins), for Step. */
  private selected: StepSelection | undefined;
  /** The one timer of relative times: it runs only while a view is visible and a connection is open. */
  readonly ticker: Ticker;
  /** Fires after a session is attached (connected) or detached (undefined). */
  readonly onDidChangeSession = this.sessionEmitter.event;

  constructor(context: vscode.ExtensionContext, output: Output, clock: Clock = realClock) {
    this.output = output;
    this.log = output.log;
    this.clock = clock;
    this.extensionUri = context.extensionUri;
    this.walkthrough = new WalkthroughProgress(this.contextKeys, context.extension.id);
    this.memento = context.globalState;
    this.documents = this.store.add(new ObjectDocuments());
    this.store.add(vscode.workspace.registerTextDocumentContentProvider(Schemes.object, this.documents));
    this.edits = this.store.add(new EditDocuments());
    this.store.add(vscode.workspace.registerFileSystemProvider(Schemes.edit, this.edits, { isCaseSensitive: true }));
    this.store.add(this.edits.onDidNotApply((e) => offerConflictChoices(this, e.uri, e.result)));
    this.store.add(editNotes(this));
    this.resourcesTree = this.store.add(new ResourcesTreeProvider(clock));
    this.queueTree = this.store.add(new QueueTreeProvider(clock));
    this.resourcesView = this.store.add(
      vscode.window.createTreeView(ViewIds.resources, { treeDataProvider: this.resourcesTree, showCollapseAll: true, canSelectMany: false }),
    );
    this.queueView = this.store.add(vscode.window.createTreeView(ViewIds.queue, { treeDataProvider: this.queueTree }));
    this.queueMessage = this.store.add(new MessageThrottle(clock, VIEW_MESSAGE_INTERVAL_MS, (text) => {
      this.queueView.message = text;
    }));
    this.statusBar = this.store.add(new StatusBar());
    this.ticker = this.store.add(new Ticker(clock, TICK_MS, () => this.tick()));
    for (const [view, name] of [[this.resourcesView, 'resources'], [this.queueView, 'queue']] as const) {
      this.store.add(view.onDidChangeVisibility((e) => {
        this.updateTicker();
        if (e.visible) this.walkthrough.mark('views');
      }));
      if (view.visible) this.walkthrough.mark('views');
      this.store.add(
        (view as vscode.TreeView<SelectableNode>).onDidChangeSelection((e) => {
          const primary = this.current?.primaryResource;
          const other = name === 'resources' ? this.queueView : this.resourcesView;
          // An emptied selection in one view does not undo a selection made later in the other; an emptied one in
          // the view that made it (its row left the Work Queue) falls back to the other view's selection.
          this.selected = selectionAfter(
            this.selected,
            { view: name, key: selectedKeyOf(e.selection[0], primary), emptied: e.selection.length === 0 },
            selectedKeyOf((other as vscode.TreeView<SelectableNode>).selection[0], primary),
          );
          this.renderStatus();
        }),
      );
    }
    this.eventLog = this.store.add(
      new EventLogPanel({
        extensionUri: context.extensionUri,
        clock,
        log: this.log,
        // Read on every batch of entries (thousands a second): the setting, kept until it changes.
        capacity: () => (this.eventLogSize ??= readSettings()['eventLog.size']),
        onReveal: (key, resource) => {
          void vscode.commands.executeCommand('reconcileLab.revealObject', { key, resource: resource ?? this.current?.primaryResource });
        },
        onExport: (filter) => this.exportEventLog(filter),
        detail: (seq) => (this.current ? entryDetail(this.current.journal, seq, this.current.primaryResource) : undefined),
        onShowTimeline: (key, seq) => {
          void vscode.commands.executeCommand('reconcileLab.showTimeline', { ...(key ? { key } : {}), ...(seq !== undefined ? { seq } : {}) });
        },
      }),
    );
    this.timeline = this.store.add(
      new TimelinePanel({
        extensionUri: context.extensionUri,
        clock,
        log: this.log,
        onOpenEntry: (seq) => this.eventLog.selectEntry(seq),
      }),
    );
    this.store.add(this.queueTree.onDidChangeCounts(() => this.renderStatus()));
    this.store.add(onDidChangeSettings((keys) => this.onSettingsChanged(keys)));
    this.store.add(
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.askToReconnect('trust')),
    );
    this.store.add(toDisposable(() => this.connection.dispose()));
    this.go = this.store.add(new GoControllers(this));
    this.checks = this.store.add(new ChecksUi(this));
    this.store.add(this.sessionEmitter);
    this.setDisconnectedState();
  }

  /** The connected session, if any. */
  get session(): Session | undefined {
    return this.current;
  }

  get isConnecting(): boolean {
    return this.connecting !== undefined;
  }

  /** Where a connect without an explicit kubeconfig reads from. */
  kubeconfigSource(explicit?: string): KubeconfigSource {
    return resolveKubeconfigSource(explicit, readSettings()['connection.kubeconfig'], process.env, process.env.HOME ?? '~', this.rememberedKubeconfig());
  }

  /** The kubeconfig file chosen earlier in the Connect picker, while it still exists. */
  rememberedKubeconfig(): string | undefined {
    const path = this.memento.get<string>(REMEMBERED_KUBECONFIG);
    return path && existsSync(path) ? path : undefined;
  }

  /** Remembers (global state, survives a window reload) the kubeconfig file chosen in the Connect picker; undefined forgets it. */
  async rememberKubeconfig(path: string | undefined): Promise<void> {
    await this.memento.update(REMEMBERED_KUBECONFIG, path);
  }

  /**
   * Connects (replacing any current connection), with progress and
   * cancellation in a notification. Rejects with the connect error (the
   * caller reports it); a cancelled connect rejects with an AbortError.
   */
  async connect(req: ConnectRequest = {}): Promise<Session> {
    if (this.connecting) {
      this.connectAbort?.abort(new Error('superseded by a new connect'));
      await this.connecting.catch(() => {});
    }
    await this.disconnect();
    const settings = clampSettings({ ...readSettings(), ...(req.overrides ?? {}) });
    this.ignoredWorkspaceSettings = await readIgnoredWorkspaceSettings();
    // Mistyped, out-of-range or unknown values are replaced silently by the readers: say what applies instead.
    const problems = readSettingProblems();
    if (problems.length) {
      this.log.warn('settings adjusted', { problems });
      void ui.warn(`Reconcile Lab: ${problems.join('; ')}.`, 'Open Settings').then((a) => {
        if (a === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', SETTINGS_SECTION);
      });
    }
    const source = this.kubeconfigSource(req.kubeconfig);
    const context = req.context ?? (settings['connection.context'] || undefined);
    const target = req.label ?? context ?? source.description;
    const abort = new AbortController();
    const trustedAtConnect = vscode.workspace.isTrusted;
    this.connectAbort = abort;
    this.contextKeys.set(ContextKeys.connecting, true);
    this.statusBar.update({ kind: 'connecting', target });
    this.log.info('connecting', { kubeconfig: source.description, context: context ?? '(current)' });
    const p = Promise.resolve(
      ui.progress(
        { location: vscode.ProgressLocation.Notification, title: `Reconcile Lab: connecting to ${target}`, cancellable: true },
        async (_progress, token) => {
          const sub = token.onCancellationRequested(() => abort.abort(new Error('connect cancelled')));
          try {
            return await Session.connect({
              ...(source.path ? { kubeconfigPath: source.path } : {}),
              ...(context ? { context } : {}),
              settings,
              trusted: trustedAtConnect,
              ...(vscode.workspace.workspaceFolders?.[0] ? { workspaceFolder: vscode.workspace.workspaceFolders[0].uri.fsPath } : {}),
              clock: this.clock,
              log: this.log,
              ...(req.owned ? { owned: req.owned } : {}),
              signal: abort.signal,
            });
          } finally {
            sub.dispose();
          }
        },
      ),
    );
    this.connecting = p;
    try {
      const session = await p;
      if (abort.signal.aborted) {
        await session.close();
        throw abort.signal.reason;
      }
      this.attach(session, trustedAtConnect);
      this.namespacesChecked = this.noteMissingNamespaces(session);
      this.noteRefusedList(session);
      return session;
    } catch (e) {
      this.setDisconnectedState();
      throw withSettingHint(e, source);
    } finally {
      if (this.connecting === p) this.connecting = undefined;
      if (this.connectAbort === abort) this.connectAbort = undefined;
      this.contextKeys.set(ContextKeys.connecting, false);
    }
  }

  /**
   * The current session; else the connection under way; else a new connection with the settings (the kubeconfig
   * and context the Connect command would start from). Rejects when that connection fails.
   */
  async sessionOrConnect(): Promise<Session> {
    if (this.current) return this.current;
    if (this.connecting) return this.connecting;
    return this.connect();
  }

  /** While the current connection's API server cannot be reached: what the status bar's tooltip says about it. */
  private serverAway: string | undefined;

  /** Settles once the last connection's reconcileLab.namespaces were checked (and a missing one named). */
  namespacesChecked: Promise<void> = Promise.resolve();

  /**
   * Says when reconcileLab.namespaces names a namespace the cluster does not have (a typo watches nothing there and
   * the views stay empty without a word), with the namespace a typo most likely meant. Reads only; silent when it
   * cannot tell (no permission to read namespaces).
   */
  private async noteMissingNamespaces(session: Session): Promise<void> {
    const notes: string[] = [];
    for (const ns of session.namespaces) {
      const note = await missingNamespaceNote(session.client, ns).catch(() => undefined);
      if (note) notes.push(note);
    }
    if (!notes.length || this.current !== session) return;
    void ui.warn(`Reconcile Lab: reconcileLab.namespaces: ${notes.join('; ')}. Nothing of it is watched until it exists.`, 'Choose Namespaces…').then((choice) => {
      if (choice) void vscode.commands.executeCommand(CommandIds.selectNamespaces);
    });
  }

  /**
   * Says, with Choose Namespaces… as the button, when the server refused an initial list while connecting (a user
   * whose rights are namespaced, watching every namespace): which list, in which scope, the missing right, and the
   * namespace to pick (the context's first). The connection stays up: the views show what could be listed.
   */
  private noteRefusedList(session: Session): void {
    const r = session.refusedList;
    if (!r) return;
    const text = refusedListMessage(r, {
      restrict: (ns) => `Choose Namespaces… and pick ${ns}`,
      ...(session.contextNamespace ? { contextNamespace: session.contextNamespace } : {}),
      context: session.contextName,
    });
    void ui.warn(`Reconcile Lab: ${text}${session.controller ? ' The reconcile loop did not start.' : ''}`, 'Choose Namespaces…').then((choice) => {
      if (choice) void vscode.commands.executeCommand(CommandIds.selectNamespaces);
    });
  }

  /** Reconnects with the current settings to the same kubeconfig and context. */
  async reconnect(): Promise<Session | undefined> {
    const s = this.current;
    if (!s) return undefined;
    // A control plane we own must survive the reconnect: hand it to the new session.
    const owned = s.owned;
    this.detach();
    await s.close({ keepOwned: true });
    return this.connect({ ...(s.kubeconfigPath ? { kubeconfig: s.kubeconfigPath } : {}), context: s.contextName, ...(owned ? { owned } : {}) });
  }

  /**
   * Settings a command writes on the person's behalf (Choose Reconciler…, Choose Watched Resources…): runs `write`,
   * then reconnects when connected, so the change applies at once. While it runs, the "settings changed: reconnect?"
   * prompt is not offered for the settings it writes (the reconnect follows anyway).
   */
  async applySettings(write: () => Promise<void>): Promise<void> {
    this.applyingSettings++;
    try {
      await write();
      if (this.current) await this.reconnect();
    } finally {
      this.applyingSettings--;
    }
  }

  /** How many {@link applySettings} calls are running (each reconnects itself: no prompt meanwhile). */
  private applyingSettings = 0;

  /** Closes the current connection (and stops a control plane it owns). */
  async disconnect(): Promise<void> {
    const s = this.current;
    if (!s) return;
    this.detach();
    this.log.info('disconnected', { context: s.contextName });
    await s.close();
  }

  /** Wires a new session into the views, the status bar, the event log and the context keys. */
  private attach(session: Session, trusted: boolean): void {
    this.current = session;
    this.connectedTrusted = trusted;
    const c = (this.connection = new DisposableStore());
    this.resourcesTree.setEventSource((_resource, obj) => listObjectEvents(session.transport, obj));
    this.resourcesTree.setModel(session);
    this.queueTree.setModel(session);
    this.documents.setResolver((resource, key) => session.get(resource, key));
    this.edits.setClient(session.client);
    c.add(
      session.onDidChange((ch) => {
        if (ch.type === 'object') this.documents.objectChanged(ch.resource, ch.key);
        // Resources watched later (a Go controller's, a CRD installed while connected): the message follows.
        else if (ch.type === 'resources' && this.current === session) this.resourcesView.message = ui.viewMessage(this.resourcesMessage(session));
      }),
    );
    // The server going away and coming back: said once each (output and status bar), not a line per retry.
    c.add(
      watchServerOutages(session.transport, this.clock, (n) => {
        if (this.current !== session) return;
        this.serverAway = n.kind === 'away' ? n.text : undefined;
        if (n.kind === 'away') this.log.warn(n.text);
        else this.log.info(n.text);
        this.renderStatus();
      }),
    );
    c.add(toDisposable(() => (this.serverAway = undefined)));
    // A module reconciler's code changed: the keys backing off because of it (a compile error, a throw) are retried
    // now rather than after a wait that grows to minutes; a key that fails again backs off further.
    const spec = session.reconcilerRecipe?.spec;
    if (spec?.kind === 'module') {
      const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(dirname(spec.path)), '*.{ts,mts,cts,js,mjs,cjs}'), false, false, true);
      const changed = (uri: vscode.Uri) => {
        if (this.current !== session) return;
        const keys = session.builtInController?.retryBackoffsNow?.(`reconciler module ${basename(uri.fsPath)} changed`) ?? [];
        if (keys.length) this.log.info('reconciler module changed: keys in backoff retried now', { file: uri.fsPath, keys: keys.length });
      };
      c.add(watcher);
      c.add(watcher.onDidChange(changed));
      c.add(watcher.onDidCreate(changed));
    }
    const source = journalSource(session);
    c.add(source);
    this.eventLog.setSource(source, `Connected to ${session.contextName} (${session.server})`);
    const timeline = timelineSource(session);
    c.add(timeline);
    this.timeline.setSource(timeline, `Connected to ${session.contextName} (${session.server})`);
    // The controller shown can change (a Go controller replaces the built-in loop): follow its status.
    let statusSub = session.controller?.onDidChangeStatus(() => this.renderStatus());
    c.add(toDisposable(() => statusSub?.dispose()));
    c.add(
      session.onDidChangeController(() => {
        statusSub?.dispose();
        statusSub = session.controller?.onDidChangeStatus(() => this.renderStatus());
        this.queueTree.refresh();
        this.resourcesTree.refresh();
        this.renderStatus();
      }),
    );
    this.selected = undefined;
    this.updateTicker();
    this.contextKeys.set(ContextKeys.connected, true);
    this.walkthrough.mark('connect');
    this.contextKeys.set(ContextKeys.localControlPlane, Boolean(session.owned));
    this.renderStatus();
    this.resourcesView.message = ui.viewMessage(this.resourcesMessage(session));
    this.log.info('connected', {
      context: session.contextName,
      server: session.server,
      resources: session.resources.map((r) => r.id),
      reconciler: session.reconciler?.name ?? 'none',
      primary: session.primaryResource ?? 'none',
    });
    this.sessionEmitter.fire(session);
    if (session.loopProblem) {
      // No lab CRD in a workspace of the person's own controller: offer to run that instead.
      // A wrong setting (a module path that names no file): open that setting.
      const setting = session.loopProblem.setting;
      void ui.warn(`Reconcile Lab: the built-in reconcile loop is not available. ${session.loopProblem.message}`, ...loopProblemActions(session.loopProblem, vscode.workspace.isTrusted)).then((a) => {
        if (a === 'Manage Workspace Trust') void vscode.commands.executeCommand('workbench.trust.manage');
        else if (a === 'Run Controller…') void vscode.commands.executeCommand('reconcileLab.runController');
        else if (a === 'Choose Reconciler…') void vscode.commands.executeCommand('reconcileLab.chooseReconciler');
        else if (a === 'Open Settings' && setting) void vscode.commands.executeCommand('workbench.action.openSettings', `${SETTINGS_SECTION}.${setting}`);
      });
    }
    if (session.unknownResources.length) {
      void ui.warn(`Reconcile Lab: ${session.server} does not serve ${session.unknownResources.map((id) => withMeantResource(id, session.discovered)).join(', ')} (reconcileLab.resources).`);
    }
    // Restricted Mode ignores the workspace's restricted settings: say so, or a module the folder chooses would be
    // silently replaced by the lab reconciler on the user's resources.
    const ignored = ignoredSettingsNotice(this.ignoredWorkspaceSettings);
    if (ignored) {
      this.log.warn('workspace settings ignored in Restricted Mode', { settings: this.ignoredWorkspaceSettings.map((x) => x.key) });
      void ui.warn(`Reconcile Lab: ${ignored}`, 'Manage Workspace Trust').then((a) => {
        if (a === 'Manage Workspace Trust') void vscode.commands.executeCommand('workbench.trust.manage');
      });
    }
  }

  private detach(): void {
    if (!this.current) return;
    this.current = undefined;
    this.connection.dispose();
    this.resourcesTree.setEventSource(undefined);
    this.resourcesTree.setModel(undefined);
    this.queueTree.setModel(undefined);
    this.documents.setResolver(undefined);
    this.edits.setClient(undefined);
    this.eventLog.setSource(undefined, NOT_CONNECTED);
    this.timeline.setSource(undefined, NOT_CONNECTED);
    this.selected = undefined;
    this.updateTicker();
    this.setDisconnectedState();
    this.sessionEmitter.fire(undefined);
  }

  private setDisconnectedState(): void {
    if (this.current) return;
    this.contextKeys.set(ContextKeys.connected, false);
    this.contextKeys.set(ContextKeys.loopState, 'stopped');
    this.contextKeys.set(ContextKeys.loopAvailable, false);
    this.contextKeys.set(ContextKeys.showsGoController, false);
    this.contextKeys.set(ContextKeys.localControlPlane, false);
    this.resourcesView.message = undefined;
    this.queueMessage.setNow(undefined);
    this.resourcesView.description = undefined;
    this.queueView.description = undefined;
    this.statusBar.update({ kind: 'disconnected' });
  }

  private resourcesMessage(s: Session): string | undefined {
    if (s.resources.length === 0) return 'No resources are watched: choose some with "Choose Watched Resources…", or install your CRDs (Reconcile Lab: Install CRD… applies those of this workspace).';
    if (s.unknownResources.length) {
      const names = s.unknownResources.map((id) => withMeantResource(id, s.discovered)).join(', ');
      return `Not served by the cluster: ${names}. Install ${s.unknownResources.length === 1 ? 'its CRD' : 'their CRDs'} (Reconcile Lab: Install CRD… applies those of this workspace), or choose other resources with "Choose Watched Resources…".`;
    }
    return undefined;
  }

  /** Runs the ticker exactly while a view is visible and a connection is open. */
  private updateTicker(): void {
    this.ticker.setActive(Boolean(this.current) && (this.resourcesView.visible || this.queueView.visible));
  }

  /**
   * One tick: re-render the rows that show a relative time (a Terminating age, a due retry or requeue, a reconcile
   * in progress), those rows only. Row and tooltip are built in one getTreeItem call with one `now` and one formatter.
   */
  private tick(): void {
    const s = this.current;
    if (!s) return;
    const waiting = s.controller ? s.controller.status().waiting > 0 || s.controller.status().inFlight > 0 : false;
    const terminating = waiting || s.resources.some((r) => s.list(r.id).some((o) => o.metadata.deletionTimestamp));
    if (waiting || terminating) {
      // Only the rows that show a time: a whole-view refresh each second would keep dropping the rows' elements in
      // VS Code's extension host, and a context-menu command picked meanwhile would lose its row (see refreshTimes).
      if (this.queueView.visible) this.queueTree.refreshTimes();
      if (this.resourcesView.visible) this.resourcesTree.refreshTimes();
    }
  }

  /**
   * What Step Reconcile without an argument (title button, F10, palette) acts on: the loop key selected in the
   * Resources or Work Queue view, else the head of the queue.
   */
  stepTarget(): StepTarget | undefined {
    const s = this.current;
    if (!s?.controller) return undefined;
    const primary = s.primaryResource;
    return stepTargetOf(this.selected?.key, s.queuedKeys(1), (k) => Boolean(s.keyState(k) || (primary && s.get(primary, k))));
  }

  /** Updates the loop context key and the status bar from the current state. */
  renderStatus(): void {
    const s = this.current;
    if (!s) return;
    const loop = s.loopState();
    // The shown Go program exited (Stop in an F5 session, a crash): its controller stays shown ("· exited"), but
    // nothing in this window starts or steps it again: no Start / Step buttons, no "Step: starts the loop".
    const exited = this.go.current !== undefined && s.controller === this.go.current.controller && this.go.current.process.liveness === 'exited' ? this.go.current : undefined;
    this.contextKeys.set(ContextKeys.loopState, loop);
    this.contextKeys.set(ContextKeys.loopAvailable, Boolean(s.controller) && !exited);
    this.contextKeys.set(ContextKeys.showsGoController, s.showsExternal);
    // Say which key Step acts on, next to the Step button (view descriptions) and in the status bar.
    const step = s.controller && loop !== 'running' && !exited ? stepTargetText(this.stepTarget(), loop === 'stopped') : undefined;
    // Descriptions are made inert, not recorded as shown messages (they change with every queue transition).
    const filter = this.resourcesTree.filter.size ? `Filter: ${stateFilterLabel(this.resourcesTree.filter)}` : undefined;
    const description = [filter, step].filter((x) => x !== undefined).join(' · ');
    this.resourcesView.description = description ? ui.inert(description) : undefined;
    this.statusBar.update({
      kind: 'connected',
      context: s.contextName,
      server: s.server,
      loop,
      loopAvailable: Boolean(s.controller),
      counts: this.queueTree.counts(),
      resources: s.resources.length,
      ...(this.go.current && s.controller === this.go.current.controller ? { external: s.controllerOrigin } : {}),
      ...(step ? { step } : {}),
      ...(this.serverAway ? { unreachable: this.serverAway } : {}),
    });
    const c = this.queueTree.counts();
    const parts = [
      c.queued ? `${c.queued} queued` : '',
      c.processing ? `${c.processing} processing` : '',
      c.backoff ? `${c.backoff} in backoff` : '',
      c.requeueAfter ? `${c.requeueAfter} waiting to requeue` : '',
    ].filter(Boolean);
    const queueKind = s.controller?.status().workQueue;
    const counts = `${parts.length ? parts.join(', ') : 'nothing queued'}${queueKind ? ` (${queueKind === 'priority' ? 'priority queue: higher priority first, the initial list at -100' : 'client-go queue: FIFO'})` : ''}`;
    // Which controller the views show: the built-in loop or a Go process (pid, connected / stopped in the debugger);
    // and which key Step acts on.
    this.queueView.description = ui.inert([s.controllerOrigin, step].filter(Boolean).join(' · '));
    // The built-in loop's problem is not the shown Go controller's.
    const problem = s.showsExternal ? undefined : s.loopProblem;
    // The other controllers of connected Go programs: one shown at a time, the others keep their own pause state.
    const shown = s.controller;
    const others = otherControllersNote(this.go.all
      .filter((r) => r.controller !== shown && r.process.liveness !== 'exited' && r.controller.status().state === 'running')
      .map((r) => {
        const st = r.controller.status();
        return { name: r.controller.name, paused: st.paused, queued: st.queueLength, processing: st.inFlight, waiting: st.waiting };
      }));
    const main = problem
      ? problem.message
      : exited
        ? exitedControllerMessage(exited.controller.name, exited.process.pid)
        : loop === 'stopped'
        ? 'The loop is stopped: start it, or step one reconcile.'
        : loop === 'paused'
          ? pausedQueueMessage(this.stepTarget(), counts)
          : `Running: ${counts}.`;
    this.queueMessage.set(ui.viewMessage(others ? `${main} ${others}` : main));
  }

  /** The Event Log's size setting, read once per change of the settings (undefined: read it again). */
  private eventLogSize: number | undefined;

  private onSettingsChanged(keys: readonly SettingKey[]): void {
    if (keys.includes('eventLog.size')) this.eventLogSize = undefined;
    const s = this.current;
    if (keys.includes('eventLog.size') && s) {
      s.journal.resize(Math.max(100, readSettings()['eventLog.size']));
      this.eventLog.resend();
    }
    this.askToReconnect(keys);
  }

  /** Whether the current connection was made in a trusted workspace (set when it is attached). */
  private connectedTrusted = true;
  /** The connection a trust prompt was shown for: one per connection, though trust fires a settings change too. */
  private trustPromptedFor: Session | undefined;

  /** Offers a reconnect after settings changed or trust was granted, in words fitting why ({@link reconnectPromptOf}). */
  private askToReconnect(changed: readonly SettingKey[] | 'trust'): void {
    const s = this.current;
    if (!s || (changed !== 'trust' && this.applyingSettings > 0)) return;
    const prompt = reconnectPromptOf({ changed, connectedTrusted: this.connectedTrusted, trustedNow: vscode.workspace.isTrusted, waitingForTrust: s.loopProblem?.reason === 'untrusted' || this.ignoredWorkspaceSettings.length > 0, connectionScoped: ConnectionScopedSettings });
    if (!prompt || (prompt.trust && this.trustPromptedFor === s)) return;
    if (prompt.trust) this.trustPromptedFor = s;
    this.log.info('asking to reconnect', { reason: prompt.trust ? 'workspace trusted' : 'settings changed' });
    void ui.info(prompt.message, 'Reconnect').then((c) => {
      if (c && this.current === s) this.reconnect().catch((e: unknown) => this.log.error('reconnect failed', { error: errorMessage(e) }));
    });
  }

  /** Asks where to save and writes the journal entries matching `filter` as JSON lines. Resolves to a notice. */
  async exportEventLog(filter: LogFilter, path?: string): Promise<string> {
    const s = this.current;
    if (!s) return 'Not connected: nothing to export.';
    const { text, count } = exportJsonLines(s.journal.entries(), filter, s.primaryResource);
    let uri: vscode.Uri | undefined = path ? vscode.Uri.file(path) : undefined;
    if (!uri) {
      const base = vscode.workspace.workspaceFolders?.[0]?.uri;
      uri = await vscode.window.showSaveDialog({
        title: 'Export the event log as JSON lines',
        filters: { 'JSON Lines': ['jsonl'] },
        ...(base ? { defaultUri: vscode.Uri.joinPath(base, 'reconcile-lab-journal.jsonl') } : {}),
      });
    }
    if (!uri) return 'Export cancelled.';
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(text));
    this.log.info('exported the event log', { path: uri.fsPath, entries: count });
    return `Exported ${count} entries to ${uri.fsPath}.`;
  }

  /** Closes the connection and waits for it (a control plane it owns is stopped). */
  async shutdown(): Promise<void> {
    this.connectAbort?.abort(new Error('the extension is shutting down'));
    await this.connecting?.catch(() => {});
    await this.disconnect();
  }

  dispose(): void {
    void this.shutdown();
    this.store.dispose();
  }
}

/**
 * The Work Queue view's message while the Go program of the shown controller has exited: what is shown, and the
 * ways to go on (its queue cannot be started or stepped from here; it starts only with its program).
 */
export function exitedControllerMessage(controller: string, pid: number | undefined): string {
  return `Your Go program${pid !== undefined ? ` (pid ${pid})` : ''} exited, and its controller ${controller}'s queue with it. Run Controller… (or F5) runs it again; Show Controller… shows Reconcile Lab's loop.`;
}

/** The event log's view of a session's journal. */
function journalSource(session: Session): EventLogSource & { dispose(): void } {
  const emitter = new Emitter<readonly LogEntryView[]>();
  // Each entry's key is an object of its controller's resource (a Go controller's, or the built-in loop's).
  const primary = (controller: string | undefined) => session.resourceOfController(controller);
  const writtenBy = (r: EnqueueReason, controller: string | undefined) => session.writtenByIn(r, controller);
  // Once two controllers share the journal (the built-in loop's and a Go program's), every row names its own.
  const labels = new ControllerLabelling();
  const sub = session.journal.onDidAppend((batch) => {
    const labelled = labels.note(batch);
    if (emitter.hasListeners) emitter.fire(batch.map((e) => toLogEntryView(e, primary, writtenBy, labelled)));
  });
  return {
    snapshot: () => {
      const entries = session.journal.entries();
      const labelled = labels.note(entries);
      return { length: entries.length, slice: (start: number, end: number) => entries.slice(start, end).map((e) => toLogEntryView(e, primary, writtenBy, labelled)) };
    },
    onDidAppend: emitter.event,
    kinds: EVENT_LOG_KINDS,
    dropped: () => session.journal.dropped,
    clear: () => session.journal.clear(),
    dispose: () => {
      sub.dispose();
      emitter.dispose();
    },
  };
}

/** The timeline's view of a session's journal. */
function timelineSource(session: Session): TimelineSource & { dispose(): void } {
  const emitter = new Emitter<readonly TimelineEntryView[]>();
  const primary = session.primaryResource;
  const sub = session.journal.onDidAppend((batch) => {
    if (!emitter.hasListeners) return;
    const entries = toTimeline(batch, primary);
    if (entries.length) emitter.fire(entries);
  });
  return {
    snapshot: () => toTimeline(session.journal.entries(), primary),
    onDidAppend: emitter.event,
    onDidClear: session.journal.onDidClear,
    dropped: () => session.journal.dropped,
    dispose: () => {
      sub.dispose();
      emitter.dispose();
    },
  };
}

/** The restricted settings the first workspace folder's .vscode/settings.json sets while the workspace is untrusted. */
async function readIgnoredWorkspaceSettings(): Promise<IgnoredSetting[]> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (vscode.workspace.isTrusted || !folder) return [];
  try {
    const bytes = await vscode.workspace.fs.readFile(vscode.Uri.joinPath(folder.uri, '.vscode', 'settings.json'));
    return ignoredRestrictedSettings(new TextDecoder().decode(bytes));
  } catch {
    return []; // no settings file
  }
}
