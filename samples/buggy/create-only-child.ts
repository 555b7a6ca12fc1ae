// BUGGY on purpose (caught by the "history independence" check): the child ConfigMap is created from spec.data when
// it is missing and never updated afterwards, so a Widget whose data changed keeps the old child, while a Widget
// created with the new data gets the new one: the end state depends on the path, not on the current spec.
//   reconcile-lab check <ns>/<widget> --reconciler module:samples/buggy/create-only-child.ts
// Fix: compare the desired child with the observed one on every reconcile and update it when they differ.
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { CONFIGMAPS, getOrUndefined, ownerRef } from './common.ts';

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget || widget.metadata.deletionTimestamp) return {};
  const name = `${request.name}-settings`;
  const data = (widget.spec as { data?: Record<string, string> })?.data ?? {};
  // BUG: only a missing child is written; a changed spec never reaches an existing one.
  if (!(await getOrUndefined(ctx, CONFIGMAPS, request.namespace, name))) {
    await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: request.namespace, ownerReferences: ownerRef(widget) }, data }, { signal: ctx.signal });
  }
  // The status is kept current on every pass (so only the child shows the bug).
  const status = (widget.status ?? {}) as { childName?: string; observedGeneration?: number };
  if (status.childName !== name || status.observedGeneration !== widget.metadata.generation) {
    await ctx.client.updateStatus(ctx.primary, { ...widget, status: { childName: name, observedGeneration: widget.metadata.generation } }, { signal: ctx.signal });
  }
  return {};
}
