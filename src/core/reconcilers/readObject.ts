import { isNotFound } from '../k8s/client.ts';
import { ResourceNotServedError } from '../k8s/dynamicClient.ts';
import { keyFor } from '../k8s/keys.ts';
import type { GroupVersionResource, KubeObject } from '../k8s/objects.ts';
import type { ReconcileContext } from '../controller/reconcile.ts';

/**
 * Reads an object the way a controller does: from the informer cache when the
 * controller watches `gvr` (possibly stale; undefined = not in the cache), and
 * otherwise with a GET (undefined = 404). The returned object MUST NOT be mutated.
 */
export async function readObject(ctx: Pick<ReconcileContext, 'cache' | 'client' | 'signal'>, gvr: GroupVersionResource, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
  if (ctx.cache.indexer(gvr)) return ctx.cache.get(gvr, keyFor(namespace, name));
  return readFresh(ctx, gvr, namespace, name);
}

/**
 * A GET that maps 404 to undefined, and so a resource the cluster no longer serves ({@link ResourceNotServedError}:
 * its CRD was deleted, and its objects with it). This is Reconcile Lab's own read (of an exec program's object, the
 * lab reconciler's, a status write's): a reconciler's own `ctx.client` calls still get that error, so that a typo in
 * a resource is not taken for a missing object.
 */
export async function readFresh(ctx: Pick<ReconcileContext, 'client' | 'signal'>, gvr: GroupVersionResource, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
  try {
    return await ctx.client.get(gvr, namespace, name, ctx.signal);
  } catch (e) {
    if (isNotFound(e) || e instanceof ResourceNotServedError) return undefined;
    throw e;
  }
}
