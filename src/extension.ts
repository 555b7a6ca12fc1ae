import * as vscode from 'vscode';
import type { ReconcileLabApi } from './host/activation.ts';

export type { ReconcileLabApi } from './host/activation.ts';

/**
 * VS Code's extension host runs on the Node of its Electron (1.100 had Node 20.19, 1.101 moved to Node 22), so the
 * manifest asks for a VS Code whose Node is new enough ({@link MIN_NODE}), and activation explains the problem
 * instead of failing with an import error in a host that is too old.
 */
export { MIN_NODE, nodeIsSupported } from './core/nodeVersion.ts';
import { MIN_NODE, nodeIsSupported } from './core/nodeVersion.ts';

let lab: typeof import('./host/activation.ts') | undefined;

/**
 * Activation. Everything that needs the Kubernetes client is loaded only after
 * the Node version check, so an unsupported host gets a clear message.
 */
export async function activate(context: vscode.ExtensionContext): Promise<ReconcileLabApi | undefined> {
  if (!nodeIsSupported(process.versions.node)) {
    void vscode.window.showErrorMessage(
      `Reconcile Lab needs Node ${MIN_NODE.join('.')} or newer in the extension host (this one runs Node ${process.versions.node}). Update VS Code to a version that ships it (1.108 or newer).`,
    );
    return undefined;
  }
  lab = await import('./host/activation.ts');
  return lab.activateLab(context);
}

export async function deactivate(): Promise<void> {
  await lab?.deactivateLab();
}
