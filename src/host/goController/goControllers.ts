import * as vscode from 'vscode';
import { join, relative } from 'node:path';
import { readFileSync } from 'node:fs';
import * as ui from '../ui.ts';
import { DisposableStore, toDisposable } from '../../core/lifecycle.ts';
import { BridgeHub } from '../../core/bridge/bridgeHub.ts';
import { DebuggeeWatch } from '../../core/bridge/debuggeeWatch.ts';
import { leaseHolderReader } from '../../core/bridge/leaseWait.ts';
import { livenessLabel, type GoProcess } from '../../core/bridge/goProcess.ts';
import { defaultGoLaunch, describeExit, kubeconfigReplacedNote, launchSpecOf, type LaunchedProcess, type LaunchSpec, type ProcessExit } from '../../core/bridge/launcher.ts';
import { GoProgramExitError, programExitHint, runGoController } from '../../core/bridge/runGoController.ts';
import type { RemoteController } from '../../core/bridge/remoteController.ts';
import { controllerModuleChoices, findControllerModules, findGoMod, goExitDetails, moduleOf, type GoCompileError, readBridgeInGoMod, uninstalledKindProblem, unservedKind, unservedKindInOutput } from '../../core/bridge/goModule.ts';
import { CRD_RESOURCE, crdManifestsFor, distinctCrds, findCrdManifests, type CrdManifest } from '../../core/k8s/crdManifests.ts';
import { dirname } from 'node:path';
import { installCrdsOnChoice } from '../commands/crdCommands.ts';
import { RunRegistry, stopOtherRun, type RunRecord } from '../../core/bridge/runRegistry.ts';
import { fail, type Failure } from '../commands/args.ts';
import { readSettings, writeSetting } from '../config.ts';
import { isViewNode } from '../views/viewNodes.ts';
import { CommandIds, ContextKeys } from '../ids.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import type { Session } from '../session/session.ts';

/** One announced controller of one Go process. */
export interface GoControllerRef {
  readonly process: GoProcess;
  readonly controller: RemoteController;
}

/** What Run Controller runs, after settings and the command's argument were applied. */
export interface RunRequest {
  spec: LaunchSpec;
  /** No command line was set or passed: the program is {@link defaultGoLaunch}'s guess. */
  defaulted: boolean;
  /** Give up waiting for the first controller after this long (a cold `go run` compiles for a minute or more). */
  waitMs: number;
  /**
   * When to say why no controller was announced yet (runGoController's notice; default 20 s). Only a command
   * argument sets it (the extension-host suite, so it need not wait 20 s); no setting does.
   */
  noticeAfterMs?: number;
}

const OUTPUT_NAME = 'Reconcile Lab: Go Controller';
const RUN_WITHOUT_WEBHOOKS = 'Run Without Webhooks';
const SHOW_OUTPUT = 'Show Output';
const INSTALL_CRD = 'Install CRD';
const INSTALL_CRDS = 'Install CRDs';
/**
 * How long a kind the launched program's output names as not served waits before it is told: long enough for the
 * bridge's announcement of a controller reconciling that kind (sent as the controller starts, before its sources
 * first log) to arrive on a busy machine, short against controller-runtime's 10 s between those log lines.
 */
const UNSERVED_OUTPUT_GRACE_MS = 2_000;
/** How long such a kind waits at most for Run Controller…'s launch to end (its first controllers announced). */
const UNSERVED_OUTPUT_LAUNCH_WAIT_MS = 30_000;

/**
 * The developer's Go controllers in this window: the bridge (one
 * {@link BridgeHub} per connection, with the connection's journal), the
 * program launched by **Run Controller…** (at most one; stopped on Stop
 * Controller, on disconnect and when the window closes) and processes started
 * elsewhere (F5 under the Go extension with `"reconcileLab": true`) that dial
 * the same bridge. The controller shown is attached to the session
 * ({@link Session.useController}), so the views and loop commands act on it.
 */
export class GoControllers implements vscode.Disposable {
  private readonly lab: ReconcileLab;
  private hub: BridgeHub | undefined;
  private hubSession: Session | undefined;
  private hubStore = new DisposableStore();
  private launched: LaunchedProcess | undefined;
  /** The bridge process that announced the launched program's first controller (removed from the hub when the program is stopped). */
  private launchedGo: GoProcess | undefined;
  private shown: GoControllerRef | undefined;
  private output: vscode.OutputChannel | undefined;
  private readonly store = new DisposableStore();
  /** Debug sessions (type go, reconcileLab: true) and whether each reports its debuggee stopped. */
  private readonly debugSessions = new Map<string, { stopped: boolean; pid?: number }>();
  /**
   * The programs among whose controllers the person chose in Show Controller… (a controller, or the built-in loop):
   * a later announcement of theirs never switches the views away from that choice (a manager announces its
   * controllers in any order, and the first it set up would otherwise replace the one the person picked).
   */
  private readonly chosenAmong = new WeakSet<GoProcess>();
  /** "<instance>/<controller>" of the controllers already told their kind's CRD is not installed (once per run). */
  private readonly saidUninstalled = new Set<string>();
  /** "<instance>/<controller>" whose debugging hazards (leader election, ReconciliationTimeout) were told: once each. */
  private readonly saidDebugging = new Set<string>();
  /** The module directory picked in {@link chooseModule} (this window only). */
  private pickedModule: string | undefined;
  /** What the last Run Controller… ran (for {@link restartLaunched}). */
  private lastRun: { session: Session; req: RunRequest } | undefined;
  /** While Run Controller… waits for the program's first controller (its announcements come before run resolves). */
  private launching = false;
  /**
   * "<group>/<kind>" the program Run Controller… launched last cannot watch because the cluster does not serve them
   * (its announcements, and controller-runtime's "no matches for kind" in its output): told once per run each, and
   * what a CRD installed meanwhile restarts it for.
   */
  private unservedInRun = new Set<string>();
  /** The CRDs (`<plural>.<group>`) offered by an Install CRD(s) notification not answered yet (see tellUnserved). */
  private offeredCrds = new Set<string>();
  /**
   * "<group>/<kind>" the launched program's output named as not served, waiting out {@link UNSERVED_OUTPUT_GRACE_MS}
   * (reset with {@link unservedInRun} at each run).
   */
  private pendingUnserved = new Set<string>();
  /** The programs every window of this user launched (see runRegistry.ts); this window records its own there. */
  private readonly runs = new RunRegistry();

  /**
   * The compile errors of the last Run Controller… whose program did not build, in the Problems panel (source
   * `go build`): set when the run fails, cleared when the next run starts; a file's are dropped as soon as it is
   * edited (they would point at lines that moved).
   */
  readonly buildErrors: vscode.DiagnosticCollection;

  constructor(lab: ReconcileLab) {
    this.lab = lab;
    this.buildErrors = this.store.add(vscode.languages.createDiagnosticCollection('reconcile-lab-go-build'));
    this.store.add(vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.contentChanges.length && this.buildErrors.has(e.document.uri)) this.buildErrors.delete(e.document.uri);
    }));
    this.store.add(lab.onDidChangeSession((s) => {
      if (s !== this.hubSession) void this.teardown();
      // The welcome (shown while not connected) must be right when it appears, whatever the file watcher saw.
      if (!s) this.refreshGoProject();
    }));
    this.store.add(toDisposable(() => void this.teardown()));
    // The welcome views offer Run Controller… to a workspace with a controller module: kept current as folders and
    // go.mod files come and go, and read again at each disconnect (when the welcome shows).
    this.store.add(vscode.workspace.onDidChangeWorkspaceFolders(() => this.refreshGoProject()));
    const goMods = this.store.add(vscode.workspace.createFileSystemWatcher('**/go.mod'));
    this.store.add(goMods.onDidCreate(() => this.refreshGoProject()));
    this.store.add(goMods.onDidChange(() => this.refreshGoProject()));
    this.store.add(goMods.onDidDelete(() => this.refreshGoProject()));
    this.refreshGoProject();
  }

  /**
   * Sets {@link ContextKeys.goProject}: whether a workspace folder is, or holds, a controller module (the bounded
   * search of findControllerModules).
   */
  refreshGoProject(): boolean {
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const modules = folders.length > 0 ? findControllerModules(folders) : [];
    this.lab.contextKeys.set(ContextKeys.goProject, modules.length > 0);
    // Set Up Go Bridge… is offered only while a controller module does not require the bridge yet.
    this.lab.contextKeys.set(ContextKeys.goProjectBridged, modules.length > 0 && modules.every((dir) => goModRequiresBridge(dir)));
    return modules.length > 0;
  }

  /** The bridge of the current connection, if one was started. */
  get bridge(): BridgeHub | undefined {
    return this.hub;
  }

  /** The program Run Controller launched, while it runs (or after it exited, until the next run or stop). */
  get launchedProcess(): LaunchedProcess | undefined {
    return this.launched;
  }

  /**
   * "<group>/<kind>" the launched program's output named as not served that wait to be told (or dropped when a
   * controller's announcement told them): see onUnservedInOutput.
   */
  get unservedPending(): readonly string[] {
    return [...this.pendingUnserved];
  }

  /** The Go controller the views show. */
  get current(): GoControllerRef | undefined {
    return this.shown;
  }

  /** Every controller of every connected Go process. */
  get all(): readonly GoControllerRef[] {
    return this.hub?.controllers ?? [];
  }

  /** The bridge for `session` (started on first use; one per connection). */
  async ensureBridge(session: Session): Promise<BridgeHub> {
    if (this.hub && this.hubSession === session) return this.hub;
    await this.teardown();
    const hub = await BridgeHub.start({ clock: this.lab.clock, journal: session.journal, log: this.lab.log.child({ bridge: 'go' }) });
    this.hub = hub;
    this.hubSession = session;
    const st = (this.hubStore = new DisposableStore());
    st.add(hub);
    st.add(hub.onDidAddController((c) => this.onController(c)));
    st.add(hub.onDidChange(() => this.onHubChange()));
    this.lab.log.info('bridge listening for Go controllers', { address: hub.listener.address });
    return hub;
  }

  /**
   * The bridge's environment for a process of this connection, plus KUBECONFIG
   * when the connection uses an explicit kubeconfig file (the Go program then
   * talks to the same cluster). Holds the secret token: never log it.
   */
  processEnv(session: Session, hub: BridgeHub): Record<string, string> {
    return { ...(session.kubeconfigPath ? { KUBECONFIG: session.kubeconfigPath } : {}), ...hub.env() };
  }

  /**
   * The controller modules the person may mean when neither `reconcileLab.goController.cwd` nor the argument names a
   * directory and the first workspace folder is not inside a Go module (a repository with its operator in a
   * subdirectory, with or without a go.work at its root; several operators side by side, a multi-root workspace): every directory in or below the workspace
   * folders whose go.mod requires controller-runtime (or the bridge). Empty when the folder is a module (it is the
   * default then) or a directory is configured.
   */
  moduleChoices(arg?: unknown): string[] {
    const a = (typeof arg === 'object' && arg !== null ? arg : {}) as Record<string, unknown>;
    if (typeof a.cwd === 'string' || readSettings()['goController.cwd'].trim()) return [];
    return controllerModuleChoices((vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath));
  }

  /**
   * Settles which module the Go commands use when {@link moduleChoices} offers several and none was picked in this
   * window: a person (no argument, or a view's row) picks one, remembered until the window closes; a scripted call is refused with the
   * modules found. Undefined when nothing needs choosing or the pick was made; a failure otherwise (`cancelled` when
   * the person dismissed the pick).
   */
  async chooseModule(arg: unknown, purpose: string): Promise<Failure | undefined> {
    const choices = this.moduleChoices(arg);
    if (choices.length < 2 || (this.pickedModule !== undefined && choices.includes(this.pickedModule))) return undefined;
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    const shown = (dir: string) => (folder && (dir === folder || dir.startsWith(`${folder}/`)) ? relative(folder, dir) || '.' : dir);
    if (arg !== undefined && !isViewNode(arg)) {
      return fail('invalidArgument', `The workspace holds ${choices.length} controller modules (${choices.map(shown).join(', ')}): set reconcileLab.goController.cwd to the one to use, or pass cwd.`);
    }
    const items = choices.map((dir) => ({ label: shown(dir), description: moduleOf(dir) ?? '', dir }));
    const picked = await ui.pick(items, {
      title: `Reconcile Lab: ${purpose}`,
      placeHolder: 'Which Go module is your controller? (kept until the window closes; reconcileLab.goController.cwd sets it for good)',
    });
    if (!picked) return fail('cancelled', 'No Go module chosen.');
    this.pickedModule = picked.dir;
    return undefined;
  }

  /** What Run Controller would run: the settings, overridden by a command argument's fields. */
  runRequest(arg: unknown): RunRequest {
    const settings = readSettings();
    const a = (typeof arg === 'object' && arg !== null ? arg : {}) as Record<string, unknown>;
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const cwdSetting = typeof a.cwd === 'string' ? a.cwd : settings['goController.cwd'].trim();
    // No directory configured and the folder is not a module: the one controller module below it, or the one picked.
    const choices = cwdSetting ? [] : this.moduleChoices(arg);
    const found = choices.length === 1 ? choices[0] : this.pickedModule !== undefined && choices.includes(this.pickedModule) ? this.pickedModule : undefined;
    const cwd = cwdSetting ? (cwdSetting.startsWith('/') || !folder ? cwdSetting : `${folder}/${cwdSetting}`) : (found ?? folder);
    const commandLine = typeof a.command === 'string' ? a.command : settings['goController.command'].trim();
    const extraArgs = Array.isArray(a.args) ? a.args.filter((x): x is string => typeof x === 'string') : settings['goController.args'];
    const envIn = typeof a.env === 'object' && a.env !== null ? (a.env as Record<string, unknown>) : settings['goController.env'];
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(envIn ?? {})) if (typeof v === 'string') env[k] = v;
    const base = commandLine ? launchSpecOf(commandLine) : defaultGoLaunch(cwd);
    const spec: LaunchSpec = { command: base.command, args: [...base.args, ...extraArgs], env, ...(cwd ? { cwd } : {}) };
    const waitMs = typeof a.waitMs === 'number' && a.waitMs > 0 ? a.waitMs : 300_000;
    const noticeAfterMs = typeof a.noticeAfterMs === 'number' && a.noticeAfterMs > 0 ? a.noticeAfterMs : undefined;
    return { spec, waitMs, defaulted: !commandLine, ...(noticeAfterMs !== undefined ? { noticeAfterMs } : {}) };
  }

  /**
   * Launches the program with the bridge's environment and resolves with the
   * controller shown in the views (one reconciling the primary resource, else
   * the first the program sets up: runGoController), or rejects with its exit
   * and last output lines when it ends first. A previous launch is stopped
   * first.
   */
  async run(session: Session, req: RunRequest, signal?: AbortSignal, onNotice?: (message: string) => void): Promise<GoControllerRef> {
    await this.stopLaunched();
    const hub = await this.ensureBridge(session);
    this.lastRun = { session, req };
    this.unservedInRun = new Set();
    this.pendingUnserved = new Set();
    const unserved = this.unservedInRun;
    const out = this.outputChannel();
    out.appendLine(`$ ${[req.spec.command, ...req.spec.args].join(' ')}${req.spec.cwd ? `   (in ${req.spec.cwd})` : ''}`);
    const replaced = kubeconfigReplacedNote(req.spec.env, session.kubeconfigPath, 'reconcileLab.goController.env');
    if (replaced) {
      out.appendLine(`[Reconcile Lab] ${replaced}`);
      void ui.warn(`Reconcile Lab: ${replaced}`);
    }
    this.lab.contextKeys.set(ContextKeys.goController, true);
    this.lab.walkthrough.mark('goController');
    this.buildErrors.clear();
    let r;
    this.launching = true;
    try {
      r = await runGoController({
        hub,
        spec: req.spec,
        clock: this.lab.clock,
        log: this.lab.log.child({ goController: req.spec.command }),
        env: session.kubeconfigPath ? { KUBECONFIG: session.kubeconfigPath } : {},
        waitMs: req.waitMs,
        ...(req.noticeAfterMs !== undefined ? { noticeAfterMs: req.noticeAfterMs } : {}),
        // The notice names the Lease the program waits for and its holder, read through the connection.
        leaseHolder: leaseHolderReader(session.client, this.lab.clock),
        onOutput: (line) => {
          out.appendLine(line);
          const k = unservedKindInOutput(line);
          if (k && this.unservedInRun === unserved) this.onUnservedInOutput(k, unserved);
        },
        onNotice: (message) => {
          out.appendLine(`[Reconcile Lab] ${message}`);
          onNotice?.(message);
        },
        ...(signal ? { signal } : {}),
      });
    } catch (e) {
      this.lab.contextKeys.set(ContextKeys.goController, false);
      if (e instanceof GoProgramExitError) this.showBuildErrors(e.compileErrors);
      throw e;
    } finally {
      this.launching = false;
    }
    const p = r.launched;
    this.launched = p;
    this.launchedGo = r.process;
    this.hubStore.add(p);
    // Other windows (a closed code-server tab's window lives on for a while) see that this one runs the program.
    if (p.pid !== undefined) {
      try {
        const rec = this.runs.record({ pid: p.pid, cwd: req.spec.cwd ?? process.cwd(), command: [req.spec.command, ...req.spec.args].join(' '), startedAt: this.lab.clock.now() });
        this.hubStore.add(rec);
        void p.exited.then(() => rec.dispose());
      } catch (e) {
        this.lab.log.warn('could not record the run for other windows', { error: (e as Error).message });
      }
    }
    void p.exited.then((e) => {
      out.appendLine(`[${describeExit(e)}]`);
      if (this.launched === p) {
        this.lab.contextKeys.set(ContextKeys.goController, false);
        this.lab.renderStatus();
        this.tellExitedByItself(p, e, req);
      }
    });
    // onController has seen every announcement so far and shows the best of this program's controllers (one
    // reconciling the primary resource, else the first the program sets up): keep it.
    const shown = this.shown;
    if (shown && shown.process === r.process) return shown;
    const ref = { process: r.process, controller: r.controller };
    this.show(ref);
    return ref;
  }

  /**
   * The program Run Controller… launched ended by itself after it announced its controllers (not stopped by
   * Reconcile Lab): says so with how it ended and what its last output lines say ({@link programExitHint}: a
   * webhook server without a certificate — controller-runtime may start it after the bridge announced the
   * controllers —, a CRD whose cache never synced, leader election without a namespace…), instead of a Work Queue
   * view that only reads "exited". A program whose webhooks ENABLE_WEBHOOKS turns off is offered Run Without
   * Webhooks, as when it ends before announcing: it writes the setting and runs Run Controller… again.
   */
  private tellExitedByItself(p: LaunchedProcess, e: ProcessExit, req: RunRequest): void {
    const tail = p.failureTail(15);
    const dir = req.spec.cwd ?? process.cwd();
    const details = goExitDetails(tail, dir);
    const hint = programExitHint(tail, dir, details);
    const command = [req.spec.command, ...req.spec.args].join(' ');
    const webhooks = details.webhookCert !== undefined && details.readsEnableWebhooks === true && req.spec.env?.ENABLE_WEBHOOKS !== 'false';
    const own = details.programExitCode !== undefined && req.spec.args[0] === 'run' && !e.signal && e.code === 1 ? ` Your program itself exited with code ${details.programExitCode}.` : '';
    const how = describeExit(e);
    const text = `Reconcile Lab: your Go program (${command}) ${how.startsWith('killed') ? `was ${how}` : how} after it started its controllers.${own} ${hint ?? `Its last output is in the output "${OUTPUT_NAME}".`}`;
    this.lab.log.warn('the Go program Run Controller… launched ended by itself', { exit: describeExit(e) });
    const buttons = webhooks ? [RUN_WITHOUT_WEBHOOKS, SHOW_OUTPUT] : [SHOW_OUTPUT];
    void ui.error(text, ...buttons).then(async (choice) => {
      if (choice === SHOW_OUTPUT) this.outputChannel().show(true);
      if (choice === RUN_WITHOUT_WEBHOOKS) {
        await writeSetting('goController.env', { ...readSettings()['goController.env'], ENABLE_WEBHOOKS: 'false' });
        await vscode.commands.executeCommand(CommandIds.runController);
      }
    });
  }

  /**
   * {@link run} under a cancellable progress notification that says what the launch waits for (Run Controller…, and
   * the restart after Install CRD).
   */
  runWithProgress(session: Session, req: RunRequest): Thenable<GoControllerRef> {
    const command = [req.spec.command, ...req.spec.args].join(' ');
    return ui.progress(
      { location: vscode.ProgressLocation.Notification, title: `Reconcile Lab: starting ${command} (a first build takes a while)…`, cancellable: true, recordMessages: true },
      (p, token) => {
        const ac = new AbortController();
        token.onCancellationRequested(() => ac.abort(new Error('Run Controller cancelled')));
        // What the launch is waiting for, in the notification itself (also in the output channel).
        return this.run(session, req, ac.signal, (message) => p.report({ message }));
      },
    );
  }

  /**
   * What the program Run Controller… launched waits for among `kinds` ("<group>/<kind>"): its controllers that
   * announced one of them as not served, and the kinds its output said it cannot watch (an owned or watched custom
   * resource). Empty when no launched program runs.
   */
  launchedWaitingForCrd(kinds: ReadonlySet<string>): string[] {
    const go = this.launchedGo;
    if (!go || go.liveness === 'exited' || !this.launched) return [];
    const controllers = this.all
      .filter((c) => {
        const a = c.controller.announcement;
        return c.process === go && uninstalledKindProblem(c.controller.name, a) !== undefined && kinds.has(`${a.group ?? ''}/${a.kind ?? ''}`);
      })
      .map((c) => c.controller.name);
    const watched = [...this.unservedInRun].filter((k) => kinds.has(k) && !this.all.some((c) => c.process === go && `${c.controller.announcement.group ?? ''}/${c.controller.announcement.kind ?? ''}` === k));
    return [...controllers, ...watched.map((k) => `the watch of ${k.split('/')[1]}`)];
  }

  /**
   * Runs what the last Run Controller… ran again, in the same connection (after Install CRD… installed a kind its
   * controllers were waiting for: controller-runtime's cache and the bridge's announcement find the kind only at
   * start). Undefined when nothing was launched in this connection.
   */
  async restartLaunched(): Promise<GoControllerRef | undefined> {
    const last = this.lastRun;
    if (!last || last.session !== this.hubSession || last.session !== this.lab.session) return undefined;
    return this.runWithProgress(last.session, last.req);
  }

  /**
   * Where CustomResourceDefinition manifests of the developer's project are looked for: the workspace folders and the
   * module of the last Run Controller… (its go.mod's directory, which may lie outside them).
   */
  crdSearchRoots(): string[] {
    const roots = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const cwd = this.lastRun?.req.spec.cwd;
    const goMod = cwd ? findGoMod(cwd) : undefined;
    const moduleDir = goMod ? dirname(goMod) : cwd;
    if (moduleDir && !roots.some((r) => moduleDir === r || moduleDir.startsWith(`${r}/`))) roots.push(moduleDir);
    return roots;
  }

  /** Programs other editor windows of this user launched in `cwd` and still run (see runRegistry.ts). */
  otherRuns(cwd: string | undefined): RunRecord[] {
    try {
      return this.runs.others(cwd ?? process.cwd());
    } catch {
      return [];
    }
  }

  /** Stops another window's program (the person chose to, before running it here). */
  stopOtherRun(r: RunRecord): Promise<void> {
    this.lab.log.info('stopping the program another window launched', { pid: r.pid, window: r.ownerPid, command: r.command });
    return stopOtherRun(r, this.lab.clock);
  }

  /** Stops the launched program (its whole process group) and goes back to the built-in loop. */
  async stop(): Promise<{ exit?: string }> {
    const exit = await this.stopLaunched();
    if (this.shown) this.hide();
    return exit ? { exit } : {};
  }

  /** Puts `errors` (a failed build's) into the Problems panel, one entry per error at its line and column. */
  private showBuildErrors(errors: readonly GoCompileError[]): void {
    const byFile = new Map<string, vscode.Diagnostic[]>();
    for (const x of errors) {
      const at = new vscode.Position(Math.max(0, x.line - 1), Math.max(0, x.column - 1));
      const d = new vscode.Diagnostic(new vscode.Range(at, at), x.message, vscode.DiagnosticSeverity.Error);
      d.source = 'go build';
      byFile.set(x.file, [...(byFile.get(x.file) ?? []), d]);
    }
    this.buildErrors.set([...byFile].map(([file, list]) => [vscode.Uri.file(file), list]));
  }

  /** Shows `ref` in the views (the built-in loop is paused meanwhile). */
  show(ref: GoControllerRef): void {
    const s = this.hubSession;
    if (!s) return;
    this.shown = ref;
    s.useController(ref.controller, () => this.describe(ref));
    this.warnAboutDebugging(ref);
    this.lab.renderStatus();
  }

  /**
   * The person's choice in Show Controller…: `ref` shown, or the built-in loop for undefined; kept against later
   * announcements of the programs connected now (see chosenAmong). A program connected later is shown as usual.
   */
  choose(ref: GoControllerRef | undefined): void {
    for (const r of this.all) this.chosenAmong.add(r.process);
    if (ref) this.show(ref);
    else this.hideShown();
  }

  /** "Go controller widget · pid 1234 · stopped in the debugger" */
  describe(ref: GoControllerRef): string {
    const requests = ref.controller.announcement.requestType;
    return `Go controller ${ref.controller.name}${requests ? ` (requests ${requests})` : ''} · pid ${ref.process.pid} · ${livenessLabel(ref.process.liveness)}`;
  }

  // ---- debugging ---------------------------------------------------------------------------------------------------

  /** A Go debug session with `"reconcileLab": true` started / stopped / reported its debuggee stopped or running. */
  debugState(sessionId: string, state: { stopped?: boolean; pid?: number; ended?: boolean }): void {
    if (state.ended) this.debugSessions.delete(sessionId);
    else {
      const cur = this.debugSessions.get(sessionId) ?? { stopped: false };
      this.debugSessions.set(sessionId, { stopped: state.stopped ?? cur.stopped, ...(state.pid ?? cur.pid ? { pid: state.pid ?? cur.pid } : {}) });
    }
    this.applyDebugState();
  }

  /**
   * Watches the program of a debug session starting now (F5 with `"reconcileLab": true`) and tells, once, why the
   * views show nothing when it announced no controller after 20 s of running (see {@link DebuggeeWatch}): the
   * leader-election lease it waits for, with the holder read from the connection's cluster, or that it never
   * connected. Owned here (disposed with the connection's bridge); the caller drives it from the debug adapter's
   * events and disposes it when the session ends. Undefined when no bridge runs (the session is not connected).
   */
  watchDebuggee(o: { name: string; leaderElection?: { flag: string; why: string } }): Pick<DebuggeeWatch, 'start' | 'setPid' | 'setStopped' | 'output' | 'dispose'> | undefined {
    const hub = this.hub;
    const session = this.hubSession;
    if (!hub || !session) return undefined;
    const watch = new DebuggeeWatch({
      clock: this.lab.clock,
      hub,
      name: o.name,
      ...(o.leaderElection ? { leaderElection: o.leaderElection } : {}),
      leaseHolder: leaseHolderReader(session.client, this.lab.clock),
      onNotice: (message) => {
        this.lab.log.info('the debugged program shows nothing yet', { session: o.name });
        void ui.warn(message);
      },
    });
    const owned = this.hubStore.add(toDisposable(() => watch.dispose()));
    return {
      start: () => watch.start(),
      setPid: (pid) => watch.setPid(pid),
      setStopped: (stopped) => watch.setStopped(stopped),
      output: (text) => watch.output(text),
      dispose: () => {
        this.hubStore.delete(owned);
        watch.dispose();
      },
    };
  }

  /** A silent process reads "stopped in the debugger" while a debug session reports its debuggee stopped (matched by pid when the adapter told it). */
  private applyDebugState(): void {
    for (const p of this.hub?.processes ?? []) {
      let stopped = false;
      for (const d of this.debugSessions.values()) if (d.stopped && (d.pid === undefined || d.pid === p.pid)) stopped = true;
      p.setDebuggerStopped(stopped);
    }
  }

  /**
   * Tells, once per program instance and controller, what makes a breakpoint in the debugged program costly: only for
   * a program a debug session runs (matched by pid once the adapter told it, as applyDebugState does), not for one
   * Run Controller… launched beside it, and not again each time Show Controller… shows it.
   */
  private warnAboutDebugging(ref: GoControllerRef): void {
    const debugged = [...this.debugSessions.values()].some((d) => d.pid === undefined || d.pid === ref.process.pid);
    const said = `${ref.process.instance}/${ref.controller.name}`;
    if (!debugged || this.saidDebugging.has(said)) return;
    const a = ref.controller.announcement;
    const issues: string[] = [];
    if (a.leaderElection) issues.push('leader election is on: a breakpoint held longer than the lease (15 s by default) loses leadership — pause or step in Reconcile Lab instead (the lease keeps being renewed), or run with leader election off while debugging');
    if (a.reconciliationTimeoutMs) issues.push(`a ReconciliationTimeout of ${a.reconciliationTimeoutMs} ms is set: a breakpoint inside Reconcile cancels its context after that long`);
    if (!issues.length) return;
    this.saidDebugging.add(said);
    void ui.warn(`Reconcile Lab: debugging ${ref.controller.name}: ${issues.join('; ')}.`);
  }

  // ---- internals ---------------------------------------------------------------------------------------------------

  private onController(c: GoControllerRef): void {
    // Show the first controller, or the one reconciling the connection's primary resource, or replace one that is gone.
    // Of one program's controllers, the first it sets up (its manager announces them in any order) unless the shown
    // one reconciles the primary resource and c does not.
    const s = this.hubSession;
    const cur = this.shown;
    const resource = c.controller.resourceId;
    if (s && resource) s.noteControllerResource(c.controller.name, resource);
    // The connection's own resource (its built-in loop's), not the views' current one: showing a controller makes its
    // resource the views', and the first announced would then always look like the one reconciling it.
    const primary = (x: GoControllerRef | undefined) => x !== undefined && s?.builtInPrimaryResource !== undefined && x.controller.resourceId === s.builtInPrimaryResource;
    const place = (x: GoControllerRef) => x.controller.announcement.order ?? Number.POSITIVE_INFINITY;
    const better = primary(c) && !primary(cur);
    const earlier = cur !== undefined && cur.process === c.process && primary(c) === primary(cur) && place(c) < place(cur);
    // The person chose among this program's controllers (or the built-in loop): their choice stays.
    const chosen = this.chosenAmong.has(c.process);
    if (!cur ? !chosen : cur.process.liveness === 'exited' || (!chosen && (better || earlier))) this.show(c);
    // A kind whose CRD is not installed: say so now, not when controller-runtime's cache sync timeout ends the program.
    const uninstalled = uninstalledKindProblem(c.controller.name, c.controller.announcement);
    const said = `${c.process.instance}/${c.controller.name}`;
    const kindId = `${c.controller.announcement.group ?? ''}/${c.controller.announcement.kind ?? ''}`;
    const ofRun = this.launching || this.launchedGo === c.process;
    if (uninstalled && !this.saidUninstalled.has(said) && !(ofRun && this.unservedInRun.has(kindId))) {
      this.saidUninstalled.add(said);
      if (ofRun) this.unservedInRun.add(kindId);
      this.offerCrd(c, uninstalled);
    }
    // The Work Queue view names the controllers it does not show, with their pause state and queue: keep it current.
    // (The shown one's status is followed by the view itself.)
    this.hubStore.add(c.controller.onDidChangeStatus(() => {
      if (this.shown?.controller !== c.controller) this.lab.renderStatus();
    }));
    this.applyDebugState();
  }

  /**
   * Tells that `c`'s kind is not served, and offers to install its CRD when the project holds a manifest for it
   * (see {@link crdOffer}; the same as Reconcile Lab: Install CRD… for those manifests).
   */
  private offerCrd(c: GoControllerRef, uninstalled: string): void {
    const a = c.controller.announcement;
    this.tellUnserved(
      `Reconcile Lab: ${uninstalled}, then run the controller again. Until then its cache waits for that kind, and controller-runtime stops the program when its cache sync timeout (2 minutes by default) ends.`,
      this.crdOffer(c),
      a,
    );
  }

  /**
   * The program Run Controller… launched (run `run`) logged that its cache cannot watch `k` (controller-runtime's "no
   * matches for kind", every 10 s per kind): an owned or watched custom resource whose CRD is missing, or a
   * controller's own kind. Told once per run, with the same offer as for a controller's own kind — after
   * {@link UNSERVED_OUTPUT_GRACE_MS}: the log line and the controller's announcement (sent on the bridge's socket as
   * the controller starts, just before its sources log) race, and a controller's own kind is told by
   * {@link onController} in its words ("the Go controller beacon reconciles Beacon"), whichever arrived first.
   */
  private onUnservedInOutput(k: { kind: string; group: string; version?: string }, run: Set<string>): void {
    const id = `${k.group}/${k.kind}`;
    if (run.has(id) || this.pendingUnserved.has(id)) return;
    const pending = this.pendingUnserved;
    pending.add(id);
    const since = this.lab.clock.now();
    const wait = () => {
      const timer = this.lab.clock.setTimeout(() => {
        this.hubStore.delete(cancel);
        if (this.unservedInRun !== run || run.has(id)) return void pending.delete(id); // another run since, or told
        // Run Controller… still waits for the program's first controllers: their announcements are on the way.
        if (this.launching && this.lab.clock.now() - since < UNSERVED_OUTPUT_LAUNCH_WAIT_MS) return void wait();
        pending.delete(id);
        run.add(id);
        this.tellUnservedInOutput(k);
      }, UNSERVED_OUTPUT_GRACE_MS);
      const cancel = this.hubStore.add(toDisposable(() => this.lab.clock.clearTimeout(timer)));
    };
    wait();
  }

  private tellUnservedInOutput(k: { kind: string; group: string; version?: string }): void {
    const what = `${k.kind}${k.group || k.version ? ` (${k.group ? `${k.group}/` : ''}${k.version ?? ''})` : ''}`;
    this.tellUnserved(
      `Reconcile Lab: your Go program watches ${what}, a kind the cluster does not serve (controller-runtime: "if kind is a CRD, it should be installed before calling Start"): install its CRD (a kubebuilder project: make install, or kubectl apply -f config/crd/bases), then run the controller again. Until then controller-runtime stops the program when its cache sync timeout (2 minutes by default) ends.`,
      this.kindOffer(`your Go program watches ${what}, a kind the cluster does not serve`, k, true),
      k,
    );
  }

  /**
   * Shows `plain`, or the offer to install CRDs when there is one. An offer whose CRDs are all in one already shown
   * and not answered yet (two controllers of a project whose CRDs are all missing: each offer names the other's CRD
   * too, as `make install` applies them together) is not shown again: one Install CRDs installs them all, and a
   * second notification would go on offering CRDs just installed.
   */
  private tellUnserved(plain: string, offered: Promise<{ manifests: CrdManifest[]; text: string; button: string } | undefined>, k: { kind?: string; group?: string }): void {
    const s = this.hubSession;
    void offered.then(
      (offer) => {
        if (!offer || !s) return void ui.warn(plain);
        const names = offer.manifests.map((m) => m.name);
        if (names.every((n) => this.offeredCrds.has(n))) {
          this.lab.log.info('not offering the CRDs again: a notification shown offers them all', { crds: names.join(', ') });
          return;
        }
        for (const n of names) this.offeredCrds.add(n);
        void ui.warn(offer.text, offer.button).then((choice) => {
          for (const n of names) this.offeredCrds.delete(n);
          return choice === offer.button ? installCrdsOnChoice(this.lab, offer.manifests, s) : undefined;
        });
      },
      (e: unknown) => {
        this.lab.log.warn('looking for CRD manifests failed', { kind: `${k.kind ?? ''}.${k.group ?? ''}`, error: (e as Error).message });
        void ui.warn(plain);
      },
    );
  }

  /**
   * What to offer for `c`, whose kind the cluster does not serve: see {@link kindOffer}. Undefined when its kind is
   * served or the project holds no manifest for it.
   */
  crdOffer(c: GoControllerRef): Promise<{ manifests: CrdManifest[]; text: string; button: string } | undefined> {
    const a = c.controller.announcement;
    const unserved = unservedKind(c.controller.name, a);
    if (!unserved || !a.kind) return Promise.resolve(undefined);
    return this.kindOffer(unserved, { kind: a.kind, group: a.group ?? '', ...(a.version ? { version: a.version } : {}) }, this.launching || this.launchedGo === c.process);
  }

  /**
   * The offer for a kind the cluster does not serve: the first manifest of the project defining it (see
   * findCrdManifests: a kubebuilder project's config/crd/bases first), plus the other CRDs of the same directory the
   * cluster lacks too — as `make install` installs a project's CRDs together, so the next kind the program watches
   * (an owned or watched custom resource) is not missing after the restart. Undefined when the project holds no
   * manifest for the kind. `ours`: the program is the one Run Controller… launched (restarted after the install; one
   * started elsewhere is told to restart).
   */
  private async kindOffer(unserved: string, k: { kind: string; group: string; version?: string }, ours: boolean): Promise<{ manifests: CrdManifest[]; text: string; button: string } | undefined> {
    const s = this.hubSession;
    if (!s) return undefined;
    const found = findCrdManifests(this.crdSearchRoots());
    const manifest = crdManifestsFor(found, k)[0];
    if (!manifest) return undefined;
    const siblings = distinctCrds(found).filter((m) => m.name !== manifest.name && dirname(m.file) === dirname(manifest.file));
    const missing = (
      await Promise.all(
        siblings.slice(0, 50).map((m) =>
          s.client.get(CRD_RESOURCE, undefined, m.name).then(
            () => undefined,
            (e: unknown) => ((e as { code?: number }).code === 404 ? m : undefined),
          ),
        ),
      )
    ).filter((m): m is CrdManifest => m !== undefined);
    const folder = vscode.workspace.workspaceFolders?.find((f) => manifest.file.startsWith(`${f.uri.fsPath}/`))?.uri.fsPath;
    const shown = (file: string) => (folder && file.startsWith(`${folder}/`) ? relative(folder, file) : file);
    const what = missing.length
      ? `Install CRDs applies ${manifest.name} and the other CRDs of ${shown(dirname(manifest.file))} this cluster lacks (${missing.map((m) => m.name).join(', ')})`
      : `Install CRD applies ${manifest.name} from ${shown(manifest.file)}`;
    // The manifest is at hand: the action first, the background after it.
    return {
      manifests: [manifest, ...missing],
      button: missing.length ? INSTALL_CRDS : INSTALL_CRD,
      text: `Reconcile Lab: ${unserved}: its CRD is not installed. ${what} to the cluster of context ${s.contextName}${ours ? ' and restarts the controller' : ''}. (Until the kind is served the program's cache waits for it, and controller-runtime stops the program when its cache sync timeout, 2 minutes by default, ends.)`,
    };
  }

  private onHubChange(): void {
    this.applyDebugState();
    this.lab.renderStatus();
  }

  /** Shows the built-in loop again (a Go process keeps running). */
  hideShown(): void {
    if (this.shown) this.hide();
  }

  private hide(): void {
    this.shown = undefined;
    this.hubSession?.useController(undefined);
    this.lab.renderStatus();
  }

  private async stopLaunched(): Promise<string | undefined> {
    const p = this.launched;
    if (!p) return undefined;
    const go = this.launchedGo;
    this.launched = undefined;
    this.launchedGo = undefined;
    const e = await p.stop();
    p.dispose();
    this.lab.contextKeys.set(ContextKeys.goController, false);
    // The program is gone, but its connection's end may not have been read yet (then it is not 'exited' below):
    // its controllers must not stay listed next to the next run's.
    if (go) this.hub?.remove(go);
    for (const proc of this.hub?.processes ?? []) if (proc.liveness === 'exited') this.hub?.remove(proc);
    return describeExit(e);
  }

  private outputChannel(): vscode.OutputChannel {
    this.output ??= this.store.add(vscode.window.createOutputChannel(OUTPUT_NAME));
    return this.output;
  }

  private async teardown(): Promise<void> {
    const hadShown = this.shown;
    this.shown = undefined;
    await this.stopLaunched().catch(() => undefined);
    this.hubStore.dispose();
    this.hub = undefined;
    if (hadShown && this.hubSession) this.hubSession.useController(undefined);
    this.hubSession = undefined;
    this.lab.contextKeys.set(ContextKeys.goController, false);
  }

  dispose(): void {
    this.store.dispose();
  }
}

/** Whether the go.mod in `dir` requires the bridge module (false when it cannot be read). */
function goModRequiresBridge(dir: string): boolean {
  const path = join(dir, 'go.mod');
  try {
    return readBridgeInGoMod(path, readFileSync(path, 'utf8')).requires;
  } catch {
    return false;
  }
}
