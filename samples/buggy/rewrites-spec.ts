// BUGGY on purpose (caught by the "unobserved intermediate state" check, which also checks that a change a person
// made is still there once the controller settled): the reconciler "normalizes" the Widget's spec, writing lower-
// case values back into spec.data. Whoever set "Blue" finds "blue"; kubectl apply or a GitOps sync sets it back,
// and the two fight forever.
//   reconcile-lab check <ns>/<widget> --reconciler module:samples/buggy/rewrites-spec.ts
// Fix: never write your own object's spec; normalize when you read it, and report what you did in status.
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { getOrUndefined } from './common.ts';

// What a person changes during the check: a value with capitals.
export const checkTransitions = [{ spec: { data: { color: 'Blue' } } }];

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget || widget.metadata.deletionTimestamp) return {};
  const data = (widget.spec as { data?: Record<string, string> })?.data ?? {};
  const lower = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.toLowerCase()]));
  // BUG: the spec is the user's; the controller writes it back.
  if (Object.entries(data).some(([k, v]) => lower[k] !== v)) {
    await ctx.client.update(ctx.primary, { ...widget, spec: { ...(widget.spec as object), data: lower } }, { signal: ctx.signal });
  }
  return {};
}
