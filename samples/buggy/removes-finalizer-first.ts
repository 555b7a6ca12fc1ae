// BUGGY on purpose (caught by the "deletion" check, crashed during the deletion): every Widget gets a registry
// entry — a ConfigMap `<widget>-registry` WITHOUT an ownerReference (like a record in an external system: nothing
// deletes it for us) — and a finalizer that is meant to guarantee the entry's cleanup. On deletion the reconciler
// removes its finalizer FIRST and deletes the entry after. If the controller stops between the two writes, the
// Widget is already gone (no finalizer left), nothing reconciles it again, and the entry is left behind forever.
//   reconcile-lab check <ns>/<widget> --check deletion --reconciler module:samples/buggy/removes-finalizer-first.ts
// Fix: clean up first (treat "already gone" as success), remove the finalizer last.
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { CONFIGMAPS, getOrUndefined } from './common.ts';

export const FINALIZER = 'buggy.reconcile-lab.dev/registry';

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget) return {};
  const entry = `${request.name}-registry`;
  const finalizers = widget.metadata.finalizers ?? [];
  if (widget.metadata.deletionTimestamp) {
    if (!finalizers.includes(FINALIZER)) return {};
    // BUG: the finalizer comes off before the cleanup is done; a crash right here loses the cleanup.
    await ctx.client.patch(ctx.primary, request.namespace, request.name, 'merge', { metadata: { resourceVersion: widget.metadata.resourceVersion, finalizers: finalizers.filter((f) => f !== FINALIZER) } }, { signal: ctx.signal });
    try {
      await ctx.client.delete(CONFIGMAPS, request.namespace, entry, { signal: ctx.signal });
    } catch (e) {
      if ((e as { code?: number }).code !== 404) throw e;
    }
    return {};
  }
  if (!finalizers.includes(FINALIZER)) {
    // resourceVersion in a merge patch is a precondition: a stale view gets 409 and is retried.
    await ctx.client.patch(ctx.primary, request.namespace, request.name, 'merge', { metadata: { resourceVersion: widget.metadata.resourceVersion, finalizers: [...finalizers, FINALIZER] } }, { signal: ctx.signal });
    return {};
  }
  if (!(await getOrUndefined(ctx, CONFIGMAPS, request.namespace, entry))) {
    try {
      await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: entry, namespace: request.namespace, labels: { 'lab.reconcile.dev/registry-of': request.name } }, data: { widget: request.name } }, { signal: ctx.signal });
    } catch (e) {
      if ((e as { code?: number }).code !== 409) throw e; // already registered
    }
  }
  return {};
}
