// BUGGY on purpose (caught by the "stale cache" check): the reconciler looks for its child in the informer cache
// and creates one with generateName when the cache has none. A cache lags behind the controller's own writes, so a
// reconcile that runs before the create shows up in it (a status write re-queues the key at once) makes a second
// child. On a fast local cluster this rarely happens; the check makes it happen every time by reconciling from a
// cache frozen before the controller's first write.
//   reconcile-lab check <ns>/<widget> --reconciler module:samples/buggy/cached-child-lookup.ts
// Fix: give the child a name derived from the owner (the server then answers AlreadyExists), or list the children
// from the server (ctx.client.list) before creating one.
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { CONFIGMAPS, getOrUndefined, ownerRef } from './common.ts';

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget || widget.metadata.deletionTimestamp) return {};
  // BUG: the cache may not hold the child this controller created a moment ago.
  const children = (ctx.cache.indexer(CONFIGMAPS)?.list() ?? []).filter((c) => c.metadata.namespace === request.namespace && c.metadata.labels?.['lab.reconcile.dev/widget'] === request.name);
  if (children.length === 0) {
    await ctx.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { generateName: `${request.name}-cache-`, namespace: request.namespace, labels: { 'lab.reconcile.dev/widget': request.name }, ownerReferences: ownerRef(widget) },
      data: (widget.spec as { data?: Record<string, string> })?.data ?? {},
    }, { signal: ctx.signal });
  }
  const status = widget.status as { observedGeneration?: number } | undefined;
  if (status?.observedGeneration !== widget.metadata.generation) {
    await ctx.client.updateStatus(ctx.primary, { ...widget, status: { ...(widget.status ?? {}), observedGeneration: widget.metadata.generation } }, { signal: ctx.signal });
  }
  return {};
}
