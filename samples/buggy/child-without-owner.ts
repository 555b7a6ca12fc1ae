// BUGGY on purpose (caught by the "deletion" check): the child ConfigMap is created without an ownerReference and
// no finalizer deletes it, so when the Widget is deleted the child stays for good (the garbage collector only
// removes objects whose ownerReferences name a deleted owner).
//   reconcile-lab check <ns>/<widget> --reconciler module:samples/buggy/child-without-owner.ts
// Fix: set the owner on the child (ownerReferences / controllerutil.SetControllerReference).
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { CONFIGMAPS, getOrUndefined } from './common.ts';

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget || widget.metadata.deletionTimestamp) return {};
  const name = `${request.name}-settings`;
  const data = (widget.spec as { data?: Record<string, string> })?.data ?? {};
  const child = await getOrUndefined(ctx, CONFIGMAPS, request.namespace, name);
  if (!child) {
    // BUG: no ownerReferences.
    await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: request.namespace }, data }, { signal: ctx.signal });
  } else if (JSON.stringify(child.data ?? {}) !== JSON.stringify(data)) {
    await ctx.client.update(CONFIGMAPS, { ...child, data }, { signal: ctx.signal });
  }
  const status = (widget.status ?? {}) as { childName?: string; observedGeneration?: number };
  if (status.childName !== name || status.observedGeneration !== widget.metadata.generation) {
    await ctx.client.updateStatus(ctx.primary, { ...widget, status: { childName: name, observedGeneration: widget.metadata.generation } }, { signal: ctx.signal });
  }
  return {};
}
