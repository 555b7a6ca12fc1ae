// Helpers shared by the buggy samples (not a reconciler itself).
import type { ReconcileContext } from '../../src/core/controller/reconcile.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';

export const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

/** The object, or undefined when it does not exist. */
export async function getOrUndefined(ctx: ReconcileContext, gvr: typeof CONFIGMAPS, ns: string | undefined, name: string): Promise<KubeObject | undefined> {
  try {
    return await ctx.client.get(gvr, ns, name, ctx.signal);
  } catch (e) {
    if ((e as { code?: number }).code === 404) return undefined;
    throw e;
  }
}

/** A controller ownerReference to `owner`. */
export function ownerRef(owner: KubeObject) {
  return [{ apiVersion: owner.apiVersion!, kind: owner.kind!, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true }];
}

/**
 * The child ConfigMap `name` of `widget` with `data`, done right: created (owned by the widget) when missing,
 * updated when its data differs, left alone otherwise. For samples whose bug is elsewhere.
 */
export async function ensureChild(ctx: ReconcileContext, widget: KubeObject, name: string, data: Record<string, string>): Promise<void> {
  const child = await getOrUndefined(ctx, CONFIGMAPS, widget.metadata.namespace, name);
  if (!child) {
    await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: widget.metadata.namespace, ownerReferences: ownerRef(widget) }, data }, { signal: ctx.signal });
  } else if (JSON.stringify((child as { data?: unknown }).data ?? {}) !== JSON.stringify(data)) {
    await ctx.client.update(CONFIGMAPS, { ...child, data }, { signal: ctx.signal });
  }
}
