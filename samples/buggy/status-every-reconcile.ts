// BUGGY on purpose (caught by the "convergence" check): the Ready condition's message carries the time of the
// reconcile, so every reconcile writes a new status; that write is a watch event that queues the Widget again:
// a hot loop that never goes idle although nothing changes.
//   reconcile-lab check <ns>/<widget> --reconciler module:samples/buggy/status-every-reconcile.ts
// Fix: write status only when it differs, and keep per-pass values (times, counters) out of it.
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { CONFIGMAPS, getOrUndefined, ownerRef } from './common.ts';

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget || widget.metadata.deletionTimestamp) return {};
  const name = `${request.name}-config`;
  const data = (widget.spec as { data?: Record<string, string> })?.data ?? {};
  if (!(await getOrUndefined(ctx, CONFIGMAPS, request.namespace, name))) {
    await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: request.namespace, ownerReferences: ownerRef(widget) }, data }, { signal: ctx.signal });
  }
  // BUG: a value that changes on every pass, written unconditionally.
  const ready = { type: 'Ready', status: 'True', reason: 'Reconciled', message: `reconciled at ${new Date().toISOString()}`, lastTransitionTime: '2026-01-01T00:00:00Z' };
  await ctx.client.updateStatus(ctx.primary, { ...widget, status: { childName: name, observedGeneration: widget.metadata.generation, conditions: [ready] } }, { signal: ctx.signal });
  return {};
}
