// BUGGY on purpose (caught by the "stale cache" check): the child ConfigMap is versioned by a hash of the spec
// (`<widget>-<hash>`, a common pattern for immutable config) and old versions are deleted. The desired name comes
// from the CACHED Widget, but the children to delete are listed from the SERVER: when the cache lags behind a spec
// change, the controller deletes the current child (it looks "old" from the stale spec).
//   reconcile-lab check <ns>/<widget> --reconciler module:samples/buggy/stale-cache-delete.ts
// Fix: decide deletions from the same view you read the spec from (both from the cache), and delete with a uid or
// resourceVersion precondition.
import { createHash } from 'node:crypto';
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { CONFIGMAPS, getOrUndefined, ownerRef } from './common.ts';

// The state change the checks should drive: a spec change (the server moves on while the cache stays behind).
export const checkTransitions = [{ spec: { data: { version: '2' } } }];

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = ctx.cache.get(ctx.primary, request.key) ?? (await getOrUndefined(ctx, ctx.primary, request.namespace, request.name));
  if (!widget || widget.metadata.deletionTimestamp) return {};
  const data = (widget.spec as { data?: Record<string, string> })?.data ?? {};
  const want = `${request.name}-${createHash('sha256').update(JSON.stringify(data)).digest('hex').slice(0, 8)}`;
  // BUG: a live list mixed with a cached spec.
  const children = (await ctx.client.list(CONFIGMAPS, request.namespace, { labelSelector: `lab.reconcile.dev/widget=${request.name}`, signal: ctx.signal })).items;
  if (!children.some((c) => c.metadata.name === want)) {
    await ctx.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: want, namespace: request.namespace, labels: { 'lab.reconcile.dev/widget': request.name }, ownerReferences: ownerRef(widget) },
      data,
    }, { signal: ctx.signal });
  }
  for (const c of children) {
    if (c.metadata.name !== want) await ctx.client.delete(CONFIGMAPS, request.namespace, c.metadata.name!, { signal: ctx.signal });
  }
  const status = (widget.status ?? {}) as Record<string, unknown>;
  if (status.childName !== want || status.observedGeneration !== widget.metadata.generation) {
    await ctx.client.updateStatus(ctx.primary, { ...widget, status: { ...status, childName: want, observedGeneration: widget.metadata.generation } }, { signal: ctx.signal });
  }
  return {};
}
