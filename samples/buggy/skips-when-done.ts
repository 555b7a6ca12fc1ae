// BUGGY on purpose (caught by the "child drift" check): the reconcile returns early when status.observedGeneration
// already equals metadata.generation, as if "this generation is done" meant "its children are as I left them".
// A spec change (a new generation) is reconciled in full, so every other check passes; but a child deleted or
// edited by someone else queues the Widget (the child is owned and watched), and the reconcile skips it: the child
// stays missing or changed until the next spec change.
//   reconcile-lab check <ns>/<widget> --reconciler module:samples/buggy/skips-when-done.ts
// Fix: compare the observed children with the desired ones on every pass; observedGeneration reports what was
// reconciled, it does not decide whether to look.
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { ensureChild, getOrUndefined } from './common.ts';

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget || widget.metadata.deletionTimestamp) return {};
  const status = (widget.status ?? {}) as { childName?: string; observedGeneration?: number };
  // BUG: the generation says nothing about the children.
  if (status.observedGeneration === widget.metadata.generation) return {};
  const name = `${request.name}-settings`;
  const data = (widget.spec as { data?: Record<string, string> })?.data ?? {};
  await ensureChild(ctx, widget, name, data);
  await ctx.client.updateStatus(ctx.primary, { ...widget, status: { childName: name, observedGeneration: widget.metadata.generation } }, { signal: ctx.signal });
  return {};
}
