// BUGGY on purpose (caught by the "stale cache" check, one change behind): status is written from the CACHED Widget
// (so with the resourceVersion the cache holds) and a 409 Conflict is treated as final — a terminal error, never
// retried. With the common `generation-changed` predicate, a change that caused the conflict but did not bump the
// generation (a label, an annotation, another writer's status) never queues the key again: status stays stale
// forever (observedGeneration behind).
//   reconcile-lab check <ns>/<widget> --check staleCache --reconciler module:samples/buggy/conflict-gives-up.ts
// Fix: a Conflict means "read again and retry": return the error (the queue retries with backoff and reads the
// caught-up cache), or re-read the object, recompute and write again.
import { TerminalError, type ReconcileContext, type Request, type Result } from '../../src/core/controller/reconcile.ts';
import { getOrUndefined } from './common.ts';

export const predicates = ['generation-changed'];
// The change the checks drive: a spec change (new generation) that the status must follow.
export const checkTransitions = [{ spec: { data: { version: '2' } } }];

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = ctx.cache.get(ctx.primary, request.key) ?? (await getOrUndefined(ctx, ctx.primary, request.namespace, request.name));
  if (!widget || widget.metadata.deletionTimestamp) return {};
  const status = (widget.status ?? {}) as { observedGeneration?: number };
  if (status.observedGeneration === widget.metadata.generation) return {};
  try {
    await ctx.client.updateStatus(ctx.primary, { ...widget, status: { ...status, observedGeneration: widget.metadata.generation } }, { signal: ctx.signal });
  } catch (e) {
    // BUG: someone else changed the Widget since the cache saw it; giving up leaves the status stale.
    if ((e as { code?: number }).code === 409) throw new TerminalError(`status not written: the Widget changed meanwhile (${(e as Error).message})`, { cause: e });
    throw e;
  }
  return {};
}
