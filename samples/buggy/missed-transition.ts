// BUGGY on purpose (caught by the "unobserved intermediate state" check): the child counts maintenance windows by
// remembering, in memory, the mode it saw last and counting each change INTO "maintenance". A watch may skip
// intermediate states (events coalesce, a restarted controller sees only the latest), so when it never sees
// mode=maintenance the count stays wrong forever.
//   reconcile-lab check <ns>/<widget> --reconciler module:samples/buggy/missed-transition.ts
// Fix: derive everything from the current state (record what must be remembered in status, written when it happens,
// or compute it from the object itself); never from transitions seen in memory.
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { CONFIGMAPS, getOrUndefined, ownerRef } from './common.ts';

// The state changes the checks drive: into maintenance, then back to normal.
export const checkTransitions = [{ spec: { data: { mode: 'maintenance' } } }, { spec: { data: { mode: 'normal' } } }];

function sameData(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const x = a ?? {};
  return Object.keys(x).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => x[k] === v);
}

const lastMode = new Map<string, string | undefined>();

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget || widget.metadata.deletionTimestamp) return {};
  const data = (widget.spec as { data?: Record<string, string> })?.data ?? {};
  const name = `${request.name}-windows`;
  const child = await getOrUndefined(ctx, CONFIGMAPS, request.namespace, name);
  let windows = Number((child?.data as Record<string, string> | undefined)?.maintenanceWindows ?? '0');
  // BUG: an edge detected in memory.
  if (lastMode.has(request.key) && lastMode.get(request.key) !== 'maintenance' && data.mode === 'maintenance') windows++;
  lastMode.set(request.key, data.mode);
  const desired = { ...data, maintenanceWindows: String(windows) };
  if (!child) {
    await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: request.namespace, ownerReferences: ownerRef(widget) }, data: desired }, { signal: ctx.signal });
  } else if (!sameData(child.data as Record<string, string> | undefined, desired)) {
    await ctx.client.update(CONFIGMAPS, { ...child, data: desired }, { signal: ctx.signal });
  }
  return {};
}
