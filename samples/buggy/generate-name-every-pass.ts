// BUGGY on purpose (caught by the "run twice" check, and by deletion: its reports have no ownerReference): every reconcile creates a new "report" ConfigMap with
// generateName, so reconciling an unchanged Widget again adds one more object each time.
//   reconcile-lab check <ns>/<widget> --reconciler module:samples/buggy/generate-name-every-pass.ts
// Fix: give the child a name derived from the owner (or find it by label) and create it only when it is missing.
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { CONFIGMAPS, getOrUndefined } from './common.ts';

// Only spec changes trigger a reconcile (the report has no ownerReference, so its events do not either).
export const predicates = ['generation-changed'];

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget || widget.metadata.deletionTimestamp) return {};
  // BUG: a new object on every pass.
  await ctx.client.create(CONFIGMAPS, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { generateName: `${request.name}-report-`, namespace: request.namespace, labels: { 'lab.reconcile.dev/widget': request.name } },
    data: { ...((widget.spec as { data?: Record<string, string> })?.data ?? {}) },
  }, { signal: ctx.signal });
  return {};
}
