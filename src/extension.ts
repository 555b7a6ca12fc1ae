import * as vscode from 'vscode';
import type { ReconcileLabApi } from './host/activation.ts';

export type { ReconcileLabApi } from './host/activation.ts';

/**
 * The oldest Node the extension can run on: `@kubernetes/client-node` 2.x uses
 * undici 8, which needs Node >= 22.19. VS Code's extension host runs on the Node
 * of its Electron (1.100 had Node 20.19, 1.101 moved to Node 22), so the manifest
 * asks for a VS Code whose Node is new enough, and this guard explains the
 * problem instead of failing with an import error in a host that is too old.
 */
export const MIN_NODE: readonly [number, number] = [22, 19];

export function nodeIsSupported(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
}

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
