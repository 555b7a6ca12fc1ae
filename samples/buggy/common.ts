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
