import * as vscode from 'vscode';
import { CommandIds, type CommandId } from '../ids.ts';
import { errorMessage, reportError } from '../notify.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import { fail, isFailure, type CommandResult } from './args.ts';
import * as ui from '../ui.ts';
import { isViewNode } from '../views/viewNodes.ts';
import { connect, disconnect, selectNamespaces, selectResources, startLocal } from './connectionCommands.ts';
import { pauseLoop, reconcileNow, resetBackoff, resumeLoop, startLoop, stepReconcile, stopLoop } from './loopCommands.ts';
import { deleteObject, dryRunReconcileCommand, inspectCache, openYaml, revealObject, revealSecret, stripFinalizers } from './objectCommands.ts';
import { exportReport, getStarted, showEventLog, showOutput } from './reportCommands.ts';
import { runController, selectController, setUpGoBridge, stopController } from './goControllerCommands.ts';
import { runChecksCommand, showChecks } from './checkCommands.ts';
import { installCrdCommand } from './crdCommands.ts';
import { showTimeline } from './timelineCommands.ts';
import { clearResourcesFilter, filterResources } from './treeCommands.ts';
import { applyObjectEdit, editObject } from './editCommands.ts';
import { chooseReconciler } from './reconcilerCommands.ts';

type Handler = (lab: ReconcileLab, arg: unknown) => Promise<CommandResult> | CommandResult;

/** Every command of the manifest and its handler; the Record type makes a missing handler a type error. */
export const commandTable: Record<CommandId, Handler> = {
  [CommandIds.connect]: connect,
  [CommandIds.disconnect]: disconnect,
  [CommandIds.startLocalControlPlane]: startLocal,
  [CommandIds.selectResources]: selectResources,
  [CommandIds.chooseReconciler]: chooseReconciler,
  [CommandIds.selectNamespaces]: selectNamespaces,
  [CommandIds.startLoop]: startLoop,
  [CommandIds.stopLoop]: stopLoop,
  [CommandIds.pauseLoop]: pauseLoop,
  [CommandIds.resumeLoop]: resumeLoop,
  [CommandIds.stepReconcile]: stepReconcile,
  [CommandIds.dryRunReconcile]: dryRunReconcileCommand,
  [CommandIds.reconcileNow]: reconcileNow,
  [CommandIds.resetBackoff]: resetBackoff,
  [CommandIds.inspectCache]: inspectCache,
  [CommandIds.openYaml]: openYaml,
  [CommandIds.revealSecret]: revealSecret,
  [CommandIds.stripFinalizers]: stripFinalizers,
  [CommandIds.exportReport]: exportReport,
  [CommandIds.showEventLog]: showEventLog,
  [CommandIds.showOutput]: showOutput,
  [CommandIds.revealObject]: revealObject,
  [CommandIds.runController]: runController,
  [CommandIds.setUpGoBridge]: setUpGoBridge,
  [CommandIds.installCrd]: installCrdCommand,
  [CommandIds.stopController]: stopController,
  [CommandIds.deleteObject]: deleteObject,
  [CommandIds.selectController]: selectController,
  [CommandIds.runChecks]: runChecksCommand,
  [CommandIds.showChecks]: showChecks,
  [CommandIds.showTimeline]: showTimeline,
  [CommandIds.filterResources]: filterResources,
  [CommandIds.clearResourcesFilter]: clearResourcesFilter,
  [CommandIds.editObject]: editObject,
  [CommandIds.applyObjectEdit]: applyObjectEdit,
  [CommandIds.getStarted]: getStarted,
};

/**
 * Titles for error notifications ("Dry-Run Reconcile failed: …"): the command's title in the manifest (`titles`,
 * what the palette and menus show: "Start Reconcile Loop failed", not "Start Loop failed"), without a trailing
 * ellipsis; else words made from its id.
 */
export function titleOf(id: CommandId, titles?: ReadonlyMap<string, string>): string {
  const title = titles?.get(id);
  if (title) return title.replace(/(…|\.\.\.)$/, '');
  const name = id.slice('reconcileLab.'.length);
  return name.replace(/([A-Z])/g, ' $1').replace(/^./, (c) => c.toUpperCase());
}

/** The commands' titles of the manifest (`contributes.commands`), by id. */
export function manifestTitles(packageJSON: unknown): Map<string, string> {
  const commands = (packageJSON as { contributes?: { commands?: unknown } } | undefined)?.contributes?.commands;
  const titles = new Map<string, string>();
  if (Array.isArray(commands)) for (const c of commands as Array<{ command?: unknown; title?: unknown }>) if (typeof c.command === 'string' && typeof c.title === 'string') titles.set(c.command, c.title);
  return titles;
}

/** Whether a notification or a modal dialog was shown since `mark` (from ui.shownMark). */
function toldSince(mark: number): boolean {
  return ui.shownSince(mark).some((t) => t.kind === 'info' || t.kind === 'warning' || t.kind === 'error' || t.kind === 'modal');
}

/**
 * Registers every command. A handler that throws is reported (notification +
 * details in the output channel) and the command resolves to a failure
 * result; it never rejects, so callers (menus, tests) always get a result.
 * A command a person ran (from the palette, a key binding or a view's button:
 * no argument; or from a row's menu: the row) never fails silently: when its
 * handler returns a failure other than `cancelled` and showed nothing itself,
 * the failure's message is shown as a warning. A call from code (a plain
 * argument object) gets the failure as its result only.
 * VS Code passes the clicked element first and, for multi-select, the
 * selection second; only the first argument is used.
 */
export function registerCommands(lab: ReconcileLab, titles?: ReadonlyMap<string, string>): vscode.Disposable[] {
  return (Object.entries(commandTable) as Array<[CommandId, Handler]>).map(([id, handler]) =>
    vscode.commands.registerCommand(id, async (arg?: unknown) => {
      const mark = ui.shownMark();
      try {
        const r = await handler(lab, arg);
        if (!isFailure(r)) lab.walkthrough.commandSucceeded(id);
        if (isFailure(r) && r.reason !== 'cancelled' && (arg === undefined || isViewNode(arg)) && !toldSince(mark)) void ui.warn(`Reconcile Lab: ${r.message}`);
        return r;
      } catch (e) {
        if ((e as Error)?.name === 'AbortError' || /cancelled/.test(errorMessage(e))) return fail('cancelled', errorMessage(e));
        reportError(lab.log, `${titleOf(id, titles)} failed`, e);
        return fail('error', errorMessage(e));
      }
    }),
  );
}
