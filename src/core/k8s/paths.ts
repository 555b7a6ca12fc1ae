import { pathSegmentProblem } from './keys.ts';
import type { GroupVersionResource } from './objects.ts';

/**
 * REST paths for a resource: `/api/v1/...` for the core group,
 * `/apis/<group>/<version>/...` otherwise. Names are URI-encoded; a name or namespace of `.` or `..` (or with
 * `/` or `%`) throws, so no path can climb to another resource.
 */
export function resourcePath(gvr: GroupVersionResource, namespace?: string, name?: string, subresource?: string): string {
  for (const [what, v] of [['namespace', namespace], ['name', name]] as const) {
    const problem = v ? pathSegmentProblem(v) : undefined;
    if (problem) throw new Error(`refusing the ${what} ${JSON.stringify(v)}: ${problem}`);
  }
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
