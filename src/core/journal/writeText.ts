import { resourceIdOfGvr } from '../k8s/objects.ts';

/**
 * The server's warnings about one write, as every view shows them after the write: "server warning: unknown field
 * \"spec.replicsa\"" (several joined with "; "); '' when there are none. The text is the server's, shown as text.
 */
export function writeWarningsText(warnings: readonly string[] | undefined): string {
  if (!warnings?.length) return '';
  return `server warning${warnings.length > 1 ? 's' : ''}: ${warnings.join('; ')}`;
}

/**
 * The object one write went to, as every place that names a write shows it: the object's key ("ns/w", or "acme"
 * for a cluster-scoped object), then the subresource in parentheses ("ns/w (status)", "acme (status)"). Never
 * "acme/status", which reads as the object `status` in namespace `acme`.
 */
export function writeTargetText(objectKey: string, subresource?: string | undefined): string {
  return subresource ? `${objectKey} (${subresource})` : objectKey;
}

/**
 * How Reconcile Lab names one write, in every place it shows one: the CLI's journal lines, dry-run plans and audit
 * lines, the reconcile report, the robustness checks' titles, explanations and reports, and the editor's views. One
 * form everywhere, the object as {@link writeTargetText} names it: "update widgets.lab.reconcile.dev ns/w (status)",
 * "update tenants.infra.example.dev acme (status)", "create configmaps ns/w-config" (never a version: given a
 * `gvr`, the name comes from it).
 */
export function writeText(w: { readonly verb: string; readonly resource: string; readonly objectKey: string; readonly subresource?: string | undefined; readonly gvr?: { readonly group: string; readonly resource: string } | undefined }): string {
  // A journal entry's `resource` keeps the version ("widgets.v1alpha1.lab.reconcile.dev"); its `gvr` names it as the
  // views and flags do.
  return `${w.verb} ${w.gvr ? resourceIdOfGvr(w.gvr) : w.resource} ${writeTargetText(w.objectKey, w.subresource)}`;
}

/**
 * Whether a failed write is a delete the server answered NotFound: the object was gone already, which a reconciler
 * that deletes idempotently ignores (`client.IgnoreNotFound`, a module's 404), so no view calls it a failure (the
 * reconcile's own outcome says whether the reconciler did). Read from the error text: a journal entry keeps no status
 * code.
 */
export function deleteFoundGone(w: { readonly verb: string; readonly error?: string | undefined }): boolean {
  return w.verb === 'delete' && w.error !== undefined && /\bnot ?found\b|\b404\b/i.test(w.error);
}

/** How a failed write's error reads after the write: "failed: …", or "not found (already gone): …" ({@link deleteFoundGone}). */
export function writeErrorText(w: { readonly verb: string; readonly error?: string | undefined }): string {
  return `${deleteFoundGone(w) ? 'not found (already gone)' : 'failed'}: ${w.error ?? 'error'}`;
}

/**
 * Whether a write that changed nothing (resourceVersion unchanged) is an idle server-side apply, which neither the
 * run-twice check nor convergence counts as a wasted write: a server-side apply (`client.Apply`,
 * `Patch(…, client.Apply)`, a module's `apply`) is meant to send the whole intent on every pass — the server merges it, stores nothing when nothing differs and sends no watch event, so comparing
 * first would only add a read. Not when the server warned that it dropped fields of it (`unknown field`): what the
 * controller applies is then never stored (the run-twice check's droppedFieldsNote).
 */
export function isIdleApply(w: { readonly verb: string; readonly warnings?: readonly string[] | undefined }): boolean {
  return w.verb === 'apply' && !(w.warnings ?? []).some((t) => /^unknown field "/.test(t));
}
