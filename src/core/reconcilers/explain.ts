import type { KubeObject } from '../k8s/objects.ts';
import type { ReconcileContext, Reconciler, Request } from '../controller/reconcile.ts';

/**
 * What a reconciler wants versus what it sees, for one request, computed
 * without writing anything. Reports and dry-runs show it as a diff.
 */
export interface Explanation {
  /** The desired state of what the reconciler manages (e.g. the child object), or undefined when nothing is wanted. */
  desired?: KubeObject | Record<string, unknown>;
  /** The observed state of the same thing, or undefined when it does not exist. */
  observed?: KubeObject | Record<string, unknown>;
  /** Human notes (e.g. "dependency ConfigMap x is missing"). */
  notes: string[];
}

/** A reconciler that can explain itself. Optional: reports fall back to the primary's spec/status. */
export interface ExplainingReconciler extends Reconciler {
  explain(request: Request, ctx: ReconcileContext): Promise<Explanation>;
}

export function canExplain(r: Reconciler): r is ExplainingReconciler {
  return typeof (r as Partial<ExplainingReconciler>).explain === 'function';
}
