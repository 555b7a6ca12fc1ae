/**
 * Pure helpers of the robustness-check command (no `vscode`): is this the local control plane, and the CLI flags
 * that reproduce a run. Unit-tested in test/unit/host-free/checksCluster.test.ts.
 */
import { isLocalControlPlane } from '../../core/checks/cluster.ts';
import { reproduceFlags, shellQuote } from '../../core/checks/reproduce.ts';
import type { ReconcilerRecipe } from '../session/session.ts';

/**
 * Whether a connection is the local control plane this project starts: one this window started (it owns it), or
 * what the CLI recognises as such (src/core/checks/cluster.ts: the kubeconfig cluster "reconcile-lab" on a loopback
 * address). Anything else must be confirmed by name before checks run on it.
 */
export function isLocalConnection(clusterName: string | undefined, server: string, ownedByWindow: boolean): boolean {
  return ownedByWindow || isLocalControlPlane(clusterName, server);
}

export { shellQuote };

/** The CLI flags that select this connection's reconciler, resource, cluster and predicates, and the transitions the `checks.transitions` setting gave (for the reproduce lines). */
export function reproduceFlagsOf(recipe: ReconcilerRecipe, resource: string, kubeconfigPath: string | undefined, context: string, transitions: readonly unknown[] = []): string {
  return reproduceFlags({
    transitions,
    ...(recipe.spec.kind === 'go' ? { go: recipe.spec.command } : { reconciler: recipe.flag }),
    resource,
    ...(kubeconfigPath ? { kubeconfig: kubeconfigPath } : {}),
    context,
    ...(recipe.spec.kind === 'go' ? {} : { predicates: recipe.predicateSpecs ?? [] }),
  });
}
