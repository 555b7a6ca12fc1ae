// BUGGY on purpose (caught by the "deletion" check): the Widget is read with a plain get, so when it is gone the
// 404 is thrown. Deleting a Widget queues its key once more (its delete event); that reconcile has nothing to do,
// but it fails, and a failing key is retried with backoff for as long as the controller runs — for an object that
// will never come back. Everything else is right: the child is compared and updated, status written on change.
//   reconcile-lab check <ns>/<widget> --reconciler module:samples/buggy/fails-when-gone.ts
// Fix: treat a 404 on the first read as "nothing to do" (controller-runtime: client.IgnoreNotFound(err)).
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { ensureChild } from './common.ts';

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  // BUG: a Widget that is gone throws its 404 out of the reconcile.
  const widget = await ctx.client.get(ctx.primary, request.namespace, request.name, ctx.signal);
  if (widget.metadata.deletionTimestamp) return {};
  const name = `${request.name}-settings`;
  const data = (widget.spec as { data?: Record<string, string> })?.data ?? {};
  await ensureChild(ctx, widget, name, data);
  const status = (widget.status ?? {}) as { childName?: string; observedGeneration?: number };
  if (status.childName !== name || status.observedGeneration !== widget.metadata.generation) {
    await ctx.client.updateStatus(ctx.primary, { ...widget, status: { childName: name, observedGeneration: widget.metadata.generation } }, { signal: ctx.signal });
  }
  return {};
}
