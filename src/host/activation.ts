import * as vscode from 'vscode';
import { manifestTitles, registerCommands } from './commands/commandTable.ts';
import { readSettings } from './config.ts';
import { shouldAutoConnect, shouldShowViewsOnStart } from './connection/kubeconfigSource.ts';
import { ViewIds } from './ids.ts';
import { reportError } from './notify.ts';
import { createOutput } from './output.ts';
import { ReconcileLab } from './reconcileLab.ts';
import { issueArgumentToken, revokeArgumentToken } from './commands/privileged.ts';
import { watchStrayErrors } from './strayErrors.ts';
import { recentlyShown, shownMark, shownSince, type ShownText } from './ui.ts';
import { registerGoDebugging } from './goController/debugProvider.ts';

/**
 * What `activate` returns (the extension's `exports`) **only when the extension runs under its own test suite**
 * (`ExtensionMode.Test`): the live objects the extension-host tests inspect, the argument token that lets them
 * use the arguments which skip confirmations (src/host/commands/privileged.ts), and the texts shown to the
 * person. In every other mode `activate` returns nothing, so other extensions get no handle on the extension.
 */
export interface ReconcileLabApi {
  readonly lab: ReconcileLab;
  /** Put it in a command argument as `argumentToken` to use `confirmed`, `kubeconfig`, `path`, `exportTo`, …. */
  readonly argumentToken: string;
  /** The last texts shown in notifications, modals, quick picks, progress and status messages (as shown). */
  recentlyShown(): readonly ShownText[];
  /** A mark for shownSince (counts every text ever recorded). */
  shownMark(): number;
  /** The texts recorded after a mark from shownMark. */
  shownSince(mark: number): readonly ShownText[];
}

let current: ReconcileLab | undefined;

/**
 * Activation: builds the window's {@link ReconcileLab}, registers the commands
 * and, when asked (setting `reconcileLab.connection.autoConnect`, or env
 * RECONCILE_LAB_KUBECONFIG), connects in the background. Everything created is
 * owned by `context.subscriptions`.
 */
export function activateLab(context: vscode.ExtensionContext): ReconcileLabApi | undefined {
  const output = createOutput();
  context.subscriptions.push(output);
  try {
    const lab = new ReconcileLab(context, output);
    current = lab;
    context.subscriptions.push(lab, ...registerCommands(lab, manifestTitles(context.extension.packageJSON)), ...registerGoDebugging(lab, context.globalStorageUri.fsPath));
    // A module reconciler's errors that escape every reconcile (an unawaited call) are said, not only logged by VS Code.
    context.subscriptions.push(watchStrayErrors(output.log.child({ reconciler: 'module' }), context.extensionPath));
    output.log.info('Reconcile Lab activated', { version: String(context.extension.packageJSON.version ?? '?'), trusted: vscode.workspace.isTrusted });
    if (shouldAutoConnect(readSettings()['connection.autoConnect'], process.env)) {
      lab.connect().catch((e: unknown) => reportError(output.log, 'Reconcile Lab could not connect', e));
    }
    if (shouldShowViewsOnStart(process.env)) {
      void vscode.commands.executeCommand(`workbench.view.extension.${ViewIds.container}`).then(undefined, () => undefined);
      // npm run lab: an editor area with nothing open shows Get Started (what to try first), checked off as it goes.
      if (vscode.window.tabGroups.all.every((g) => g.tabs.length === 0)) lab.walkthrough.open().catch((e: unknown) => output.log.warn('could not open the walkthrough', { error: String(e) }));
    }
    if (context.extensionMode !== vscode.ExtensionMode.Test) return undefined;
    return { lab, argumentToken: issueArgumentToken(), recentlyShown, shownMark, shownSince };
  } catch (e) {
    // VS Code does not tell the person when activation fails: say it.
    reportError(output.log, 'Reconcile Lab failed to start', e);
    throw e;
  }
}

/** Closes the connection and waits for it: a local control plane started from this window is stopped. */
export async function deactivateLab(): Promise<void> {
  const lab = current;
  current = undefined;
  revokeArgumentToken();
  await lab?.shutdown();
}
