import type { SharedIndexInformer } from '../cache/interfaces.ts';
import type { GroupVersionResource } from '../k8s/objects.ts';
import type { CacheReader } from './reconcile.ts';

/**
 * A {@link CacheReader} over the informers a controller watches. A resource is
 * found by group and resource name (any served version of it hits the same
 * cache). Never a network call; objects MUST NOT be mutated.
 */
export function informerCacheReader(informers: readonly SharedIndexInformer[]): CacheReader {
  const find = (gvr: GroupVersionResource) =>
    informers.find((i) => i.resource.group === gvr.group && i.resource.resource === gvr.resource && i.resource.version === gvr.version) ??
    informers.find((i) => i.resource.group === gvr.group && i.resource.resource === gvr.resource);
  return {
    indexer: (gvr) => find(gvr)?.getIndexer(),
    get: (gvr, key) => find(gvr)?.getIndexer().getByKey(key),
  };
}
