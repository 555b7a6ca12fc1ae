// BUGGY on purpose (caught by the "history independence" check, when the change is reverted): the child ConfigMap's
// data is spec.data merged into what the child already holds, so a key added to spec.data reaches the child, but a
// key removed from spec.data stays in the child for good. Adding the key looks right (a Widget created with it gets
// the same child), so only turning the change back shows the bug: the state before the change does not come back.
//   reconcile-lab check <ns>/<widget> --reconciler module:samples/buggy/never-prunes-keys.ts
// (the checks' own schema-derived change adds a key to spec.data too; this module gives its own, as
// --transition '{"spec":{"data":{"tier":"gold"}}}' would).
// Fix: build the child's whole data from the current spec and replace it, rather than merging into it.
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { CONFIGMAPS, getOrUndefined, ownerRef } from './common.ts';

// The change the checks drive (and revert): a key added to spec.data.
export const checkTransitions = [{ spec: { data: { tier: 'gold' } } }];

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget || widget.metadata.deletionTimestamp) return {};
  const name = `${request.name}-settings`;
  const desired = (widget.spec as { data?: Record<string, string> })?.data ?? {};
  const child = await getOrUndefined(ctx, CONFIGMAPS, request.namespace, name);
  if (!child) {
    await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: request.namespace, ownerReferences: ownerRef(widget) }, data: desired }, { signal: ctx.signal });
  } else {
    // BUG: merged into the child's data, so a key spec.data no longer has is never removed.
    const data = { ...((child as { data?: Record<string, string> }).data ?? {}), ...desired };
    if (JSON.stringify(data) !== JSON.stringify((child as { data?: unknown }).data ?? {})) {
      await ctx.client.update(CONFIGMAPS, { ...child, data }, { signal: ctx.signal });
    }
  }
  const status = (widget.status ?? {}) as { childName?: string; observedGeneration?: number };
  if (status.childName !== name || status.observedGeneration !== widget.metadata.generation) {
    await ctx.client.updateStatus(ctx.primary, { ...widget, status: { childName: name, observedGeneration: widget.metadata.generation } }, { signal: ctx.signal });
  }
  return {};
}
