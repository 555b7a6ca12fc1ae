// BUGGY on purpose (caught by the "deletion" check, crashed during the deletion): every Widget gets a stand — a
// ConfigMap `<widget>-stand` WITHOUT an ownerReference (nothing deletes it for us) — and a finalizer that guards its
// cleanup. On deletion the reconciler looks the stand up first and, when it is not there, returns "nothing to clean
// up" without removing its finalizer. The order is right (the stand goes first, the finalizer last), but the cleanup
// is not re-entrant: if the controller stops between the two writes, the next reconcile finds no stand, succeeds
// without writing, and the Widget stays Terminating forever.
//   reconcile-lab check <ns>/<widget> --check deletion --reconciler module:samples/buggy/cleanup-not-reentrant.ts
// Fix: treat "already gone" as success and go on to remove the finalizer.
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { CONFIGMAPS, getOrUndefined } from './common.ts';

export const FINALIZER = 'buggy.reconcile-lab.dev/stand';

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget) return {};
  const stand = `${request.name}-stand`;
  const finalizers = widget.metadata.finalizers ?? [];
  if (widget.metadata.deletionTimestamp) {
    if (!finalizers.includes(FINALIZER)) return {};
    // BUG: a stand already gone is taken for "nothing to do", and the finalizer stays.
    if (!(await getOrUndefined(ctx, CONFIGMAPS, request.namespace, stand))) return {};
    await ctx.client.delete(CONFIGMAPS, request.namespace, stand, { signal: ctx.signal });
    await ctx.client.patch(ctx.primary, request.namespace, request.name, 'merge', { metadata: { resourceVersion: widget.metadata.resourceVersion, finalizers: finalizers.filter((f) => f !== FINALIZER) } }, { signal: ctx.signal });
    return {};
  }
  if (!finalizers.includes(FINALIZER)) {
    // resourceVersion in a merge patch is a precondition: a stale view gets 409 and is retried.
    await ctx.client.patch(ctx.primary, request.namespace, request.name, 'merge', { metadata: { resourceVersion: widget.metadata.resourceVersion, finalizers: [...finalizers, FINALIZER] } }, { signal: ctx.signal });
    return {};
  }
  if (!(await getOrUndefined(ctx, CONFIGMAPS, request.namespace, stand))) {
    try {
      await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: stand, namespace: request.namespace, labels: { 'lab.reconcile.dev/stand-of': request.name } }, data: { widget: request.name } }, { signal: ctx.signal });
    } catch (e) {
      if ((e as { code?: number }).code !== 409) throw e; // already there
    }
  }
  return {};
}
