/**
 * Pure helpers of the robustness-check command (no `vscode`): is this the local control plane, and the CLI flags
 * that reproduce a run. Unit-tested in test/unit/host-free/checksCluster.test.ts.
 */
import { isLocalControlPlane } from '../../core/checks/cluster.ts';
import { reproduceFlags, shellQuote } from '../../core/checks/reproduce.ts';
import { parseCopySpec } from '../../core/checks/references.ts';
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

/**
 * The CLI flags that select this connection's reconciler, resource, cluster, predicates and reconcile deadline, and the
 * transitions and copies the `checks.transitions` and `checks.copy` settings gave (for the reproduce lines).
 */
export function reproduceFlagsOf(recipe: ReconcilerRecipe, resource: string, kubeconfigPath: string | undefined, context: string, transitions: readonly unknown[] = [], copies: readonly string[] = []): string {
  return reproduceFlags({
    transitions,
    copies,
    ...(recipe.spec.kind === 'go' ? { go: recipe.spec.command } : { reconciler: recipe.flag }),
    resource,
    ...(kubeconfigPath ? { kubeconfig: kubeconfigPath } : {}),
    context,
    ...(recipe.spec.kind === 'go' ? {} : { predicates: recipe.predicateSpecs ?? [] }),
    // The loop's deadline (a module's options.reconcileTimeoutMs, else the setting) applies to the checks' runs: the
    // CLI's check takes it as --reconcile-timeout (a Go program's own ReconciliationTimeout needs no flag).
    ...(recipe.spec.kind !== 'go' && recipe.reconcileTimeoutMs ? { reconcileTimeoutMs: recipe.reconcileTimeoutMs } : {}),
  });
}

/**
 * The setting `reconcileLab.checks.copy` read as the checks' extra copies; throws naming the setting and the entry
 * when one is not `secret/<name>` or `configmap/<name>` (nothing runs with a part of what was asked).
 */
export function copiesFromSetting(value: readonly unknown[]): Array<{ kind: 'Secret' | 'ConfigMap'; name: string; spec: string }> {
  return value.map((v) => {
    if (typeof v !== 'string') throw new Error(`The setting reconcileLab.checks.copy has ${JSON.stringify(v)}: each entry is a text, secret/<name> or configmap/<name>.`);
    try {
      return { ...parseCopySpec(v), spec: v.trim() };
    } catch (e) {
      throw new Error(`The setting reconcileLab.checks.copy: ${(e as Error).message}.`);
    }
  });
}
