// BUGGY on purpose (caught by the "history independence" check, in its restart run): the child ConfigMap is named
// after spec.data.profile, and when the profile changes the reconciler deletes the child it remembers having made —
// remembered in memory. A controller that was down while the profile changed (a restart, a leader failover, an
// upgrade) starts with an empty memory: it makes the new child and never deletes the old one, which stays for good
// (it is owned by the Widget, so the garbage collector keeps it while the Widget exists). A controller that watched
// the change, or a Widget created with the new profile, ends with one child: only a restart shows the bug.
//   reconcile-lab check <ns>/<widget> --reconciler module:samples/buggy/remembers-old-child.ts
// Fix: find the children in the cluster (by label or ownerReference) and delete those the current spec no longer
// wants; never from what the process remembers.
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { CONFIGMAPS, getOrUndefined, ownerRef } from './common.ts';

// The change the checks drive: a new profile, so a new child name.
export const checkTransitions = [{ spec: { data: { profile: 'large' } } }];

/** key → the name of the child this process made last. BUG: lost on restart. */
const made = new Map<string, string>();

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget || widget.metadata.deletionTimestamp) return {};
  const data = (widget.spec as { data?: Record<string, string> })?.data ?? {};
  const name = `${request.name}-${data.profile ?? 'standard'}`;
  const child = await getOrUndefined(ctx, CONFIGMAPS, request.namespace, name);
  if (!child) {
    await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: request.namespace, labels: { 'lab.reconcile.dev/widget': request.name }, ownerReferences: ownerRef(widget) }, data }, { signal: ctx.signal });
  } else if (JSON.stringify(child.data ?? {}) !== JSON.stringify(data)) {
    await ctx.client.update(CONFIGMAPS, { ...child, data }, { signal: ctx.signal });
  }
  // BUG: the old child is known only from memory.
  const old = made.get(request.key);
  if (old && old !== name && (await getOrUndefined(ctx, CONFIGMAPS, request.namespace, old))) {
    await ctx.client.delete(CONFIGMAPS, request.namespace, old, { signal: ctx.signal });
  }
  made.set(request.key, name);
  const status = (widget.status ?? {}) as { childName?: string; observedGeneration?: number };
  if (status.childName !== name || status.observedGeneration !== widget.metadata.generation) {
    await ctx.client.updateStatus(ctx.primary, { ...widget, status: { childName: name, observedGeneration: widget.metadata.generation } }, { signal: ctx.signal });
  }
  return {};
}
