import * as vscode from 'vscode';
import * as ui from '../ui.ts';
import { writeDiff } from '../../core/actions/objectDiff.ts';
import { renderDryRun } from './dryRunText.ts';
import { DRY_RUN_VIEW, showResultView } from './resultView.ts';
import { RemoteController, type RemoteDryRun } from '../../core/bridge/remoteController.ts';
import { writeTarget } from '../../core/bridge/causes.ts';
import { outcomeOfController as runOutcomeOf, type ReconcileOutcome as RunOutcome } from '../../core/actions/runOnce.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import type { Session } from '../session/session.ts';
import { boolArg, fail, isFailure, stringArg, type CommandResult, type Failure } from './args.ts';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { addBridgeToGoMod, BRIDGE_MODULE_PATH, bridgeProblemIn, controllerRuntimeNote, findGoMod, readBridgeInGoMod } from '../../core/bridge/goModule.ts';
import { requireSession, resolveTarget } from './pickers.ts';
import { controllerSetupLines, plainName, readModuleCode, type ManagerInCode } from '../../core/bridge/controllersInCode.ts';
import { refusePrivileged } from './privileged.ts';
import { GoProgramExitError } from '../../core/bridge/runGoController.ts';
import { ambiguousMainPackages } from '../../core/bridge/launcher.ts';
import { readSettings, writeSetting } from '../config.ts';
import { CommandIds } from '../ids.ts';
import { SettingsError } from '../notify.ts';
import { writeTargetText } from '../../core/journal/writeText.ts';

/**
 * Run Controller…: launches the developer's Go controller (settings
 * `reconcileLab.goController.*`, or `{ command, args, env, cwd, waitMs }` in
 * the argument) with the bridge's environment, waits for it to announce its
 * controller(s) and shows it in the views. `noticeAfterMs` (default 20 s): when the
 * progress notification says why no controller was announced yet. Trusted workspaces only: it runs
 * workspace code.
 */
export async function runController(
  lab: ReconcileLab,
  arg: unknown,
): Promise<CommandResult<{ pid: number; controller: string; controllers: string[]; command: string; stoppedOthers: number[]; webhooksTurnedOff: boolean }>> {
  if (!vscode.workspace.isTrusted) return refuseUntrusted(arg, 'Run Controller runs a program from this workspace, so it only runs in a trusted workspace.');
  const s = await sessionForRun(lab, arg);
  if (isFailure(s)) return s;
  // What to run is the person's setting; a command link or another extension may not name a program.
  const refused = refusePrivileged(arg, ['command', 'args', 'env', 'cwd', 'others', 'withoutWebhooks']);
  if (refused) return refused;
  const unsettled = await lab.go.chooseModule(arg, 'Run Controller…');
  if (unsettled) return unsettled;
  let req;
  try {
    req = lab.go.runRequest(arg);
  } catch (e) {
    return fail('invalidArgument', `reconcileLab.goController.command: ${(e as Error).message}`);
  }
  // No command set and cmd/ holds several programs (and the folder none of its own): `go run .` would only fail
  // with "no Go files"; the person picks one, kept as the command setting (the checks run it too).
  const programs = req.defaulted && req.spec.cwd ? ambiguousMainPackages(req.spec.cwd) : [];
  if (programs.length) {
    const problem = `${req.spec.cwd} has no main package of its own and its cmd/ holds ${programs.length} programs (${programs.join(', ')}), so Run Controller… cannot tell which one runs your controller`;
    if (arg !== undefined) return fail('invalidArgument', `${problem}. Set reconcileLab.goController.command, e.g. "go run ${programs[0]}".`);
    const picked = await ui.pick(programs.map((p) => ({ label: `go run ${p}` })), {
      title: 'Run Controller…: which program runs your controller?',
      placeHolder: `cmd/ holds ${programs.length} programs; the one you pick is saved as reconcileLab.goController.command in this workspace`,
    });
    if (!picked) return fail('cancelled', 'No program chosen: nothing was started.');
    await writeSetting('goController.command', picked.label);
    req = lab.go.runRequest(arg);
  }
  const command = [req.spec.command, ...req.spec.args].join(' ');
  // `go run` of a module that does not use the bridge would build, run and never connect: say so before.
  const unbridged = req.spec.command === 'go' && req.spec.cwd ? (bridgeProblemIn(req.spec.cwd) ?? unbridgedControllersIn(req.spec.cwd)) : undefined;
  if (unbridged) {
    if (arg !== undefined) return fail('invalidArgument', `${unbridged.problem}. Run Reconcile Lab: Set Up Go Bridge… first.`);
    const choice = await ui.warn(`Reconcile Lab: ${unbridged.problem}.`, SET_UP_BRIDGE, 'Run Anyway');
    if (choice === SET_UP_BRIDGE) return setUpGoBridge(lab, undefined) as Promise<CommandResult<never>>;
    if (choice !== 'Run Anyway') return fail('cancelled', unbridged.problem);
  }
  // Another window (often a closed code-server tab's, which lives on for a while) runs this program already: two
  // instances would reconcile the same objects.
  const stoppedOthers: number[] = [];
  const others = lab.go.otherRuns(req.spec.cwd);
  if (others.length) {
    const given = typeof arg === 'object' && arg !== null ? (arg as { others?: unknown }).others : undefined;
    let choice: string | undefined = given === 'stop' ? STOP_OTHER : given === 'keep' ? 'Run Anyway' : undefined;
    if (choice === undefined && arg === undefined) {
      const list = others.map((o) => `${o.command} (pid ${o.pid}, since ${new Date(o.startedAt).toLocaleTimeString()}, from the window whose extension host is pid ${o.ownerPid})`).join('; ');
      choice = await ui.warn(
        `Reconcile Lab: another editor window already runs this controller: ${list}. code-server keeps a closed tab's window, and the program it started, running for a while; two instances would reconcile the same objects.`,
        STOP_OTHER,
        'Run Anyway',
      );
      if (choice === undefined) return fail('cancelled', 'Another window runs this controller; nothing was started.');
    }
    if (choice === STOP_OTHER) {
      for (const o of others) {
        await lab.go.stopOtherRun(o);
        stoppedOthers.push(o.pid);
      }
    }
  }
  let ref;
  let webhooksTurnedOff = false;
  try {
    ref = await lab.go.runWithProgress(s, req);
  } catch (e) {
    const off = await offerWithoutWebhooks(lab, arg, req, e);
    if (off === 'no') throw fromSettings(arg, e);
    if (isFailure(off)) return off;
    webhooksTurnedOff = true;
    ref = await lab.go.runWithProgress(s, lab.go.runRequest(arg));
  }
  const controllers = lab.go.all.filter((c) => c.process === ref.process).map((c) => c.controller.name);
  // No transient status-bar note: the status bar's item already names the controller now shown (it read twice).
  return { ok: true, pid: ref.process.pid, controller: ref.controller.name, controllers, command, stoppedOthers, webhooksTurnedOff };
}

/**
 * A program that could not start or exited before announcing a controller, run with a command line the person set
 * (`reconcileLab.goController.command` or `.args`; not the default `go run`, not one passed by code): the error
 * also names those settings and where they are set, and offers to open them (see {@link SettingsError}) — a typo
 * there (`og run ./cmd`, `go rn ./cmd`) otherwise reads as a mystery command. A compile error of the program keeps
 * its own next step (Go to file:line); anything else is returned as it is.
 */
function fromSettings(arg: unknown, e: unknown): unknown {
  if (!(e instanceof GoProgramExitError) || e.details.location) return e;
  const given = typeof arg === 'object' && arg !== null ? (arg as Record<string, unknown>) : {};
  const config = vscode.workspace.getConfiguration('reconcileLab');
  const set: string[] = [];
  for (const [name, fromArg] of [['goController.command', given.command], ['goController.args', given.args]] as const) {
    if (fromArg !== undefined) continue;
    const i = config.inspect<unknown>(name);
    const [value, where] = i?.workspaceFolderValue !== undefined ? [i.workspaceFolderValue, 'the folder settings'] : i?.workspaceValue !== undefined ? [i.workspaceValue, 'the workspace settings'] : i?.globalValue !== undefined ? [i.globalValue, 'your user settings'] : [undefined, ''];
    if (value === undefined || (typeof value === 'string' && !value.trim()) || (Array.isArray(value) && !value.length)) continue;
    set.push(`reconcileLab.${name} ${JSON.stringify(value)} (${where})`);
  }
  if (!set.length) return e;
  const hint = `It ran ${set.join(' and ')}: check ${set.length === 1 ? 'it' : 'them'} in Settings${set.some((x) => x.includes('.command ')) ? ' (left empty, Run Controller… runs go run on your main package)' : ''}.`;
  return new SettingsError(`${e.message}\n${hint}`, 'reconcileLab.goController', e);
}

const RUN_WITHOUT_WEBHOOKS = 'Run Without Webhooks';

/**
 * A program that stopped because its webhook server found no serving certificate (a controller run outside the
 * cluster has none) and whose code registers its webhooks only when ENABLE_WEBHOOKS is not "false" (kubebuilder's
 * scaffold): the person is asked whether to run it without webhooks; yes adds ENABLE_WEBHOOKS=false to
 * `reconcileLab.goController.env` (workspace settings, so the next run does the same) and the caller runs it
 * again. A call from code says yes only with the privileged `withoutWebhooks: true`. 'no': not this case (the
 * caller rethrows); a failure: the person was told and declined; 'yes': the setting is written.
 */
async function offerWithoutWebhooks(lab: ReconcileLab, arg: unknown, req: { spec: { env?: Record<string, string> } }, e: unknown): Promise<'no' | 'yes' | Failure> {
  if (!(e instanceof GoProgramExitError) || e.details.webhookCert === undefined || !e.details.readsEnableWebhooks) return 'no';
  if (req.spec.env?.ENABLE_WEBHOOKS === 'false') return 'no';
  const problem = `the program stopped: its webhook server found no serving certificate (${e.details.webhookCert}), which a controller run outside the cluster does not have`;
  if (arg !== undefined) {
    if (boolArg(arg, 'withoutWebhooks') !== true) return 'no';
  } else {
    lab.log.error(`Run Controller… failed: ${e.message}`);
    const choice = await ui.error(
      `Reconcile Lab: ${problem}. Your program registers its webhooks only when ENABLE_WEBHOOKS is not "false" (kubebuilder's scaffold): run it without them? This adds ENABLE_WEBHOOKS=false to reconcileLab.goController.env in this workspace's settings.`,
      RUN_WITHOUT_WEBHOOKS,
      'Show Output',
    );
    if (choice === 'Show Output') void vscode.commands.executeCommand(CommandIds.showOutput);
    if (choice !== RUN_WITHOUT_WEBHOOKS) return fail('error', `${problem}; nothing else was started.`);
  }
  await writeSetting('goController.env', { ...readSettings()['goController.env'], ENABLE_WEBHOOKS: 'false' });
  return 'yes';
}

const SET_UP_BRIDGE = 'Set Up Go Bridge…';
const STOP_OTHER = 'Stop It and Run Here';

/**
 * Why a module whose go.mod is set up still would not show in the views: its code builds controllers (read by
 * readModuleCode) and no file calls bridge.Options (or bridge.NewQueue), so the program would connect and
 * announce nothing. Undefined when no controller is found in the code (a best-effort reading decides nothing) or the
 * queue is bridged anywhere.
 */
function unbridgedControllersIn(dir: string): { goMod: string; problem: string } | undefined {
  const goMod = findGoMod(dir);
  if (!goMod) return undefined;
  const code = readModuleCode(dirname(goMod));
  if (!code.controllers.length || code.usesBridgeQueue) return undefined;
  const names = code.controllers.map((c) => plainName(c.name) ?? plainName(c.nameExpr) ?? `${c.file}:${c.line}`);
  return {
    goMod,
    problem: `none of the controllers in your code (${names.join(', ')}) passes bridge.Options yet: the program would run, but the views would not show it (Set Up Go Bridge… shows the lines to add)`,
  };
}

/** The refusal of a command that runs workspace code in an untrusted workspace; a person who ran it is told, with a way to trust it. */
export function refuseUntrusted(arg: unknown, message: string): Failure {
  if (arg === undefined) {
    void ui.warn(`Reconcile Lab: ${message}`, 'Manage Workspace Trust').then((a) => {
      if (a) void vscode.commands.executeCommand('workbench.trust.manage');
    });
  }
  return fail('untrusted', message);
}

/**
 * Set Up Go Bridge…: makes the Go module of the controller (the go.mod governing `reconcileLab.goController.cwd`,
 * else the workspace folder) require the bridge package and replace it with the copy inside this extension
 * (`go mod edit`), then shows the lines to add to the program. A go.mod that already requires it with a replace
 * into an existing bridge module is left alone. Trusted workspaces only: it runs the go command in the workspace.
 * Argument `{ open: false }`: no document.
 */
export async function setUpGoBridge(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ goMod: string; bridgeDir: string; changed: boolean; controllerRuntime?: string }>> {
  if (!vscode.workspace.isTrusted) return refuseUntrusted(arg, 'Set Up Go Bridge runs the go command in this workspace, so it only runs in a trusted workspace.');
  const refused = refusePrivileged(arg, ['dir']);
  if (refused) return refused;
  const given = stringArg(arg, 'dir');
  if (given === undefined) {
    const unsettled = await lab.go.chooseModule(arg, 'Set Up Go Bridge…');
    if (unsettled) return unsettled;
  }
  const dir = given ?? lab.go.runRequest(undefined).spec.cwd;
  const goMod = dir ? findGoMod(dir) : undefined;
  if (!goMod) {
    const below = given === undefined ? ', and no go.mod below it requires sigs.k8s.io/controller-runtime' : '';
    const message = `No go.mod in ${dir ?? 'the workspace'} or above it${below}: open your controller's module (a kubebuilder project's root) or set reconcileLab.goController.cwd.`;
    if (arg === undefined) void ui.warn(`Reconcile Lab: ${message}`);
    return fail('notFound', message);
  }
  const bridgeDir = join(lab.extensionUri.fsPath, 'bridge');
  if (!existsSync(join(bridgeDir, 'go.mod'))) {
    const message = `This installation of Reconcile Lab has no bridge module in ${bridgeDir}: reinstall the extension, or point your go.mod at a checkout's bridge/ yourself (see the README, "Your Go controller").`;
    if (arg === undefined) void ui.warn(`Reconcile Lab: ${message}`);
    return fail('error', message);
  }
  const goModText = readFileSync(goMod, 'utf8');
  const code = readModuleCode(dirname(goMod));
  const before = readBridgeInGoMod(goMod, goModText);
  const versionNote = controllerRuntimeNote(goModText, readFileSync(join(bridgeDir, 'go.mod'), 'utf8'));
  const kept = before.requires && before.replace !== undefined && (before.replaceDir === undefined || existsSync(join(before.replaceDir, 'go.mod')));
  if (!kept) await addBridgeToGoMod(dirname(goMod), bridgeDir);
  const using = kept ? before.replace! : bridgeDir;
  const text = [
    `# The Reconcile Lab bridge in ${goMod}`,
    '',
    kept
      ? `Already set up: it requires \`${BRIDGE_MODULE_PATH}\`, replaced with \`${using}\`. Nothing was changed.`
      : `Added to go.mod: \`require ${BRIDGE_MODULE_PATH} v0.0.0\` and \`replace ${BRIDGE_MODULE_PATH} => ${using}\` (the copy inside this extension; run this command again after updating the extension).`,
    '',
    ...(versionNote ? [`> **controller-runtime:** ${versionNote}`, ''] : []),
    '## Then add to your program',
    '',
    '1. `cmd/main.go`: give the manager options to `bridge.Setup` before `ctrl.NewManager`:',
    ...managerSection(code.managers),
    '',
    '   ```go',
    '   import "github.com/reconcile-lab/reconcile-lab/bridge"',
    '',
    '   mgrOpts := ctrl.Options{Scheme: scheme /* … as before … */}',
    '   bridge.Setup(&mgrOpts) // write journal, dry run, why-queued',
    '   mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), mgrOpts)',
    '   ```',
    '',
    "2. Each controller's `SetupWithManager`: its queue and its reconciler, under the controller's name (`Named(…)`, else the lower-cased kind of `For`); its file imports `github.com/reconcile-lab/reconcile-lab/bridge` and `sigs.k8s.io/controller-runtime/pkg/controller`:",
    ...controllerSetupLines(code.controllers),
    '',
    '   ```go',
    '   return ctrl.NewControllerManagedBy(mgr).',
    '   \tFor(&v1.MyKind{}).',
    '   \tNamed("mykind").',
    '   \tWithOptions(bridge.Options(mgr, "mykind", controller.Options{})).',
    '   \tComplete(bridge.Wrap(mgr, "mykind", r, &v1.MyKind{}))',
    '   ```',
    '',
    '   A typed controller with a custom request type: `bridge.Options(mgr, "name", controller.TypedOptions[MyReq]{})` and `bridge.WrapTyped[MyReq](mgr, "name", r)`.',
    '',
    '3. `go mod tidy` (it fetches what the bridge needs; run it after the import is in), then **Reconcile Lab: Run Controller…**.',
    '',
    'Without Reconcile Lab (the variable RECONCILE_LAB_BRIDGE unset) every bridge call returns controller-runtime\'s own object: the program behaves exactly as before.',
    '',
  ].join('\n');
  if (boolArg(arg, 'open') !== false) await showResultView(lab.documents.view(BRIDGE_SETUP_VIEW, text));
  else lab.documents.view(BRIDGE_SETUP_VIEW, text);
  if (!kept) ui.statusMessage(`Reconcile Lab: the bridge is in ${goMod}`, 5000, 'check');
  if (versionNote && arg === undefined) void ui.warn(`Reconcile Lab: ${versionNote}`);
  return { ok: true, goMod, bridgeDir: using, changed: !kept, ...(versionNote ? { controllerRuntime: versionNote } : {}) };
}

/** Set Up Go Bridge…'s pointer to where the module builds its manager (readModuleCode); empty when none is found. */
function managerSection(found: readonly ManagerInCode[]): string[] {
  if (!found.length) return [];
  return ['', ...found.map((m) => `   - Found in your code: \`${m.file.replaceAll('`', '')}:${m.line}\`${m.setUp ? ' (bridge.Setup is already called in that file)' : ''}.`)];
}

/** The one reusable view of Set Up Go Bridge's instructions. */
const BRIDGE_SETUP_VIEW = 'Go bridge set-up.md';

/**
 * The session Run Controller… runs the program for: the current one, the connection under way, or, when the window
 * is not connected yet, a new connection with the settings (the kubeconfig and context Connect would start from;
 * the program, like `make run`, uses that same cluster). A connection that fails is the command's failure.
 */
async function sessionForRun(lab: ReconcileLab, arg: unknown): Promise<Session | Failure> {
  if (lab.session) return lab.session;
  try {
    return await ui.progress({ location: vscode.ProgressLocation.Notification, title: 'Reconcile Lab: connecting to the cluster to run your controller…' }, () => lab.sessionOrConnect());
  } catch (e) {
    const message = `could not connect to the cluster: ${(e as Error).message}`;
    if (arg === undefined) {
      void ui.error(`Reconcile Lab: ${message}`, 'Connect to Cluster…').then((c) => {
        if (c) void vscode.commands.executeCommand('reconcileLab.connect');
      });
    }
    return fail('notConnected', message);
  }
}

/** Stop Controller: stops the launched Go program (its process group) and shows the built-in loop again. */
export async function stopController(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ exit?: string }>> {
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  const r = await lab.go.stop();
  return { ok: true, ...r };
}

/** The Go controller the loop commands act on, when the session shows one. */
export function remoteOf(s: Session): RemoteController | undefined {
  return s.controller instanceof RemoteController ? s.controller : undefined;
}

/**
 * Dry-run through the Go process: its real Reconcile runs once for the key
 * with every write forced to DryRunAll; the planned writes come back with the
 * objects before and after, shown as a summary and diff editors.
 */
export async function remoteDryRun(
  lab: ReconcileLab,
  s: Session,
  c: RemoteController,
  arg: unknown,
): Promise<CommandResult<{ key: string; outcome: RunOutcome; actions: Array<{ verb: string; resource: string; key: string; subresource?: string; outcome: string; diff: string }>; summary: string }>> {
  const t = await resolveTarget(s, lab.clock.now(), arg, { primaryOnly: true, title: 'Dry-run the reconcile of which key?' });
  if (isFailure(t)) return t;
  // Under the controller's name: the process journals the planned writes under it (the Event Log ties them to this).
  s.recordAction('dryRun', t.key, `dry-run reconcile of ${t.key} in ${c.name} (every write dryRun=All)`, c.name);
  const r = await ui.progress({ location: vscode.ProgressLocation.Window, title: `Dry-run ${t.key} in ${c.name}` }, () => c.dryRun(t.key));
  const name = (w: RemoteDryRun['writes'][number]) => `${w.group ? `${w.resource}.${w.group}` : w.resource} ${writeTargetText(writeTarget(w), w.subresource)}`;
  const diffOf = (w: RemoteDryRun['writes'][number]) => (w.error ? '' : writeDiff(name(w), w));
  // The same view as the built-in loop's dry-run: one layout and wording whichever reconciler ran.
  const summary = renderDryRun({
    key: t.key,
    reconciler: `Go controller ${c.name}`,
    resource: s.primaryResource ?? '',
    context: s.contextName,
    exec: false,
    outcome: runOutcomeOf(r.outcome),
    durationMs: r.durationMs,
    writes: r.writes.map((w) => ({ verb: w.verb, resource: w.group ? `${w.resource}.${w.group}` : w.resource, key: writeTarget(w), ...(w.subresource ? { subresource: w.subresource } : {}), ...(w.error ? { error: w.error } : {}), diff: diffOf(w), ...(w.warnings?.length ? { warnings: w.warnings } : {}) })),
  });
  const uri = lab.documents.view(DRY_RUN_VIEW, summary);
  if (boolArg(arg, 'open') !== false) await showResultView(uri);
  return {
    ok: true,
    key: t.key,
    outcome: runOutcomeOf(r.outcome),
    actions: r.writes.map((w) => ({ verb: w.verb, resource: w.group ? `${w.resource}.${w.group}` : w.resource, key: writeTarget(w), ...(w.subresource ? { subresource: w.subresource } : {}), outcome: w.error ? 'error' : 'ok', diff: diffOf(w) })),
    summary,
  };
}

/**
 * Show Controller…: several controllers of one manager (and several processes) are several queues; this picks
 * the one the views show, or the built-in loop. Argument: `{ controller: "<name>" }` or `{ controller: null }`
 * for the built-in loop (scripts, tests); otherwise a quick pick.
 */
export async function selectController(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ shown: string }>> {
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  const all = lab.go.all;
  const a = typeof arg === 'object' && arg !== null ? (arg as Record<string, unknown>) : {};
  let choice: (typeof all)[number] | null | undefined;
  if ('controller' in a) {
    if (a.controller === null) choice = null;
    else {
      choice = all.find((c) => c.controller.name === a.controller && c.process.liveness !== 'exited');
      if (!choice) return fail('notFound', `No connected Go controller is named ${JSON.stringify(a.controller)} (known: ${all.map((c) => c.controller.name).join(', ') || 'none'}).`);
    }
  } else {
    // The one the views show now says so.
    const shownNow = (ref: (typeof all)[number] | null) => (ref ? s.controller === ref.controller : s.controller === s.builtInController);
    const items = [
      ...all.map((c) => ({ label: c.controller.name, description: `${c.controller.resourceId ?? 'resource unknown'} · ${lab.go.describe(c).replace(/^Go controller \S+ · /, '')}`, ref: c as (typeof all)[number] | null })),
      { label: "Reconcile Lab's loop", description: s.reconcilerDescription, ref: null },
    ].map((i) => (shownNow(i.ref) ? { ...i, description: `${i.description} · shown now` } : i));
    const picked = await ui.pick(items, { title: 'Show which controller in the views?' });
    if (!picked) return fail('cancelled', 'No controller chosen.');
    choice = picked.ref;
  }
  lab.go.choose(choice ?? undefined);
  return { ok: true, shown: s.controllerOrigin };
}
