// A module reconciler for Reconcile Lab: the lab scenario (Widget → child ConfigMap) in TypeScript.
// Run it with:  reconcile-lab run --reconciler module:samples/module-reconciler.ts
// Contract: export reconcile(request, ctx) → Result. Throw to retry with backoff; throw an error with
// `terminal = true` to stop retrying; return { requeueAfterMs, reason } for "not ready yet, look again later".
// The file is reloaded automatically when it (or anything it imports) changes.
import type { ReconcileContext, Request, Result } from '../src/core/controller/reconcile.ts';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

interface Spec {
  data?: Record<string, string>;
  dependsOn?: Array<{ kind: 'ConfigMap' | 'Secret'; name: string }>;
}

async function getOrUndefined(ctx: ReconcileContext, gvr: typeof CONFIGMAPS, ns: string | undefined, name: string) {
  try {
    return await ctx.client.get(gvr, ns, name, ctx.signal);
  } catch (e) {
    if ((e as { code?: number }).code === 404) return undefined;
    throw e;
  }
}

function sameData(a: unknown, b: Record<string, string>): boolean {
  const x = (a ?? {}) as Record<string, string>;
  return Object.keys(x).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => x[k] === v);
}

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  // 1. Observe: the latest Widget (level-based: we get only the key).
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget || widget.metadata.deletionTimestamp) return {}; // owned children are garbage-collected
  const spec = (widget.spec ?? {}) as Spec;

  // 2. Dependencies: missing is "not yet", not an error.
  for (const dep of spec.dependsOn ?? []) {
    const gvr = dep.kind === 'Secret' ? { group: '', version: 'v1', resource: 'secrets' } : CONFIGMAPS;
    if (!(await getOrUndefined(ctx, gvr, request.namespace, dep.name))) {
      return { requeueAfterMs: 10_000, reason: `waiting for ${dep.kind} ${dep.name}` };
    }
  }

  // 3. Compare and act idempotently: create when missing, update only when different.
  const desired = spec.data ?? {};
  const name = `${request.name}-module`;
  const child = await getOrUndefined(ctx, CONFIGMAPS, request.namespace, name);
  if (!child) {
    await ctx.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name,
        namespace: request.namespace,
        ownerReferences: [{ apiVersion: widget.apiVersion!, kind: widget.kind!, name: request.name, uid: widget.metadata.uid!, controller: true, blockOwnerDeletion: true }],
      },
      data: desired,
    }, { signal: ctx.signal });
    ctx.log.info('created child', { name });
  } else if (!sameData(child.data, desired)) {
    await ctx.client.update(CONFIGMAPS, { ...child, data: desired }, { signal: ctx.signal });
    ctx.log.info('updated child', { name });
  }

  // 4. Report: write status only when it changed (a status write is a watch event, too).
  const status = { observedGeneration: widget.metadata.generation, childName: name };
  const current = (widget.status ?? {}) as Record<string, unknown>;
  if (current.observedGeneration !== status.observedGeneration || current.childName !== status.childName) {
    await ctx.client.updateStatus(ctx.primary, { ...widget, status: { ...current, ...status } }, { signal: ctx.signal });
  }
  return {};
}
