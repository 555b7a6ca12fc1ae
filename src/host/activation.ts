import * as vscode from 'vscode';
import { registerCommands } from './commands/commandTable.ts';
import { readSettings } from './config.ts';
import { shouldAutoConnect } from './connection/kubeconfigSource.ts';
import { reportError } from './notify.ts';
import { createOutput } from './output.ts';
import { ReconcileLab } from './reconcileLab.ts';

/**
 * What `activate` returns (the extension's `exports`): the live objects the
 * extension-host tests inspect. Not a stable API for other extensions.
 */
export interface ReconcileLabApi {
  readonly lab: ReconcileLab;
}

let current: ReconcileLab | undefined;

/**
 * Activation: builds the window's {@link ReconcileLab}, registers the commands
 * and, when asked (setting `reconcileLab.connection.autoConnect`, or env
 * RECONCILE_LAB_KUBECONFIG), connects in the background. Everything created is
 * owned by `context.subscriptions`.
 */
export function activateLab(context: vscode.ExtensionContext): ReconcileLabApi {
  const output = createOutput();
  context.subscriptions.push(output);
  try {
    const lab = new ReconcileLab(context, output);
    current = lab;
    context.subscriptions.push(lab, ...registerCommands(lab));
    output.log.info('Reconcile Lab activated', { version: String(context.extension.packageJSON.version ?? '?'), trusted: vscode.workspace.isTrusted });
    if (shouldAutoConnect(readSettings()['connection.autoConnect'], process.env)) {
      lab.connect().catch((e: unknown) => reportError(output.log, 'Reconcile Lab could not connect', e));
    }
    return { lab };
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
  await lab?.shutdown();
}
