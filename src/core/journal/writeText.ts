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
 * How Reconcile Lab names one write, in every place it shows one: the CLI's journal lines, dry-run plans and audit
 * lines, the reconcile report, the robustness checks' titles, explanations and reports, and the editor's views. One
 * form everywhere, with the subresource after the object as in its API path (and as the Event Log shows writes):
 * "update widgets.lab.reconcile.dev ns/w/status", "create configmaps ns/w-config" (never a version: given a `gvr`,
 * the name comes from it).
 */
export function writeText(w: { readonly verb: string; readonly resource: string; readonly objectKey: string; readonly subresource?: string | undefined; readonly gvr?: { readonly group: string; readonly resource: string } | undefined }): string {
  // A journal entry's `resource` keeps the version ("widgets.v1alpha1.lab.reconcile.dev"); its `gvr` names it as the
  // views and flags do.
  return `${w.verb} ${w.gvr ? resourceIdOfGvr(w.gvr) : w.resource} ${w.objectKey}${w.subresource ? `/${w.subresource}` : ''}`;
}
