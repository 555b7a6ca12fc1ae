/**
 * Pure helpers of the robustness-check command (no `vscode`): is this the local control plane, and the CLI flags
 * that reproduce a run. Unit-tested in test/unit/host-free/checksCluster.test.ts.
 */
import type { ReconcilerRecipe } from '../session/session.ts';

/**
 * Whether a connection is the local control plane this project starts: one this window started (it owns it), or a
 * loopback server under the context name the project's kubeconfig uses ("reconcile-lab", written by
 * src/core/controlplane/localControlPlane.ts for `npm run lab` and the tests). Anything else must be confirmed by
 * name before checks run on it.
 */
export function isLocalControlPlane(contextName: string, server: string, ownedByWindow: boolean): boolean {
  if (ownedByWindow) return true;
  let host: string;
  try {
    host = new URL(server).hostname;
  } catch {
    return false;
  }
  const loopback = host === 'localhost' || host === '[::1]' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
  return loopback && contextName === 'reconcile-lab';
}

/** `s` quoted for a POSIX shell when it needs it. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The CLI flags that select this connection's reconciler, resource and cluster (for the reproduce lines). */
export function reproduceFlagsOf(recipe: ReconcilerRecipe, resource: string, kubeconfigPath: string | undefined, context: string): string {
  return [
    `--reconciler ${shellQuote(recipe.flag)}`,
    `--resource ${shellQuote(resource)}`,
    ...(kubeconfigPath ? [`--kubeconfig ${shellQuote(kubeconfigPath)}`] : []),
    `--context ${shellQuote(context)}`,
  ].join(' ');
}

