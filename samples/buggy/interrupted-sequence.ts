// BUGGY on purpose (caught by the "crash after write" check): status is written only in the branch that creates
// the child, right after the create. If the controller stops between the two writes, the restarted controller
// finds the child, skips the branch, and the Widget never gets its status.
//   reconcile-lab check <ns>/<widget> --reconciler module:samples/buggy/interrupted-sequence.ts
// Fix: make every step depend on the observed state, not on the branch taken: write the status whenever it
// differs from what it should be.
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { CONFIGMAPS, getOrUndefined, ownerRef } from './common.ts';

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget || widget.metadata.deletionTimestamp) return {};
  const name = `${request.name}-data`;
  const data = (widget.spec as { data?: Record<string, string> })?.data ?? {};
  if (!(await getOrUndefined(ctx, CONFIGMAPS, request.namespace, name))) {
    await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: request.namespace, ownerReferences: ownerRef(widget) }, data }, { signal: ctx.signal });
    // BUG: only reached when the create happened in this very reconcile.
    await ctx.client.updateStatus(ctx.primary, { ...widget, status: { childName: name, observedGeneration: widget.metadata.generation } }, { signal: ctx.signal });
  }
  return {};
}
