// BUGGY on purpose (caught by the "deletion" check): the reconciler adds a finalizer to every Widget but ignores
// deletionTimestamp, so nothing ever removes the finalizer: a deleted Widget stays "Terminating" forever (and so
// does a namespace being deleted around it).
//   reconcile-lab check <ns>/<widget> --check deletion --reconciler module:samples/buggy/never-removes-finalizer.ts
// Fix: when deletionTimestamp is set, clean up what the finalizer protects (already gone is success), remove the
// finalizer from the latest object, and return.
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { CONFIGMAPS, getOrUndefined, ownerRef } from './common.ts';

export const FINALIZER = 'buggy.reconcile-lab.dev/cleanup';

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  // BUG: a Terminating Widget is simply skipped, so the finalizer added below is never removed.
  if (!widget || widget.metadata.deletionTimestamp) return {};
  if (!(widget.metadata.finalizers ?? []).includes(FINALIZER)) {
    // resourceVersion in a merge patch is a precondition: a stale view gets 409 and is retried.
    await ctx.client.patch(ctx.primary, request.namespace, request.name, 'merge', { metadata: { resourceVersion: widget.metadata.resourceVersion, finalizers: [...(widget.metadata.finalizers ?? []), FINALIZER] } }, { signal: ctx.signal });
    return {};
  }
  const name = `${request.name}-config`;
  if (!(await getOrUndefined(ctx, CONFIGMAPS, request.namespace, name))) {
    const data = (widget.spec as { data?: Record<string, string> })?.data ?? {};
    await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: request.namespace, ownerReferences: ownerRef(widget) }, data }, { signal: ctx.signal });
  }
  return {};
}
