import type { GroupVersionResource } from './objects.ts';

/**
 * REST paths for a resource: `/api/v1/...` for the core group,
 * `/apis/<group>/<version>/...` otherwise. Names are URI-encoded.
 */
export function resourcePath(gvr: GroupVersionResource, namespace?: string, name?: string, subresource?: string): string {
  let p = gvr.group ? `/apis/${gvr.group}/${gvr.version}` : `/api/${gvr.version}`;
  if (namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${gvr.resource}`;
  if (name) p += `/${encodeURIComponent(name)}`;
  if (subresource) {
    if (!name) throw new Error('a subresource needs an object name');
    p += `/${subresource}`;
  }
  return p;
}
