import { isNotFound } from '../k8s/client.ts';
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

/** A GET that maps 404 to undefined. */
export async function readFresh(ctx: Pick<ReconcileContext, 'client' | 'signal'>, gvr: GroupVersionResource, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
  try {
    return await ctx.client.get(gvr, namespace, name, ctx.signal);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}
