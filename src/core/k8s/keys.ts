import type { KubeObject } from './objects.ts';

/**
 * Object keys in client-go's MetaNamespaceKeyFunc form: "namespace/name" for
 * namespaced objects and "name" for cluster-scoped ones. Keys are what the
 * work queue carries and what a reconciler receives (never the object).
 */
export type ObjectKey = string;

export function keyOf(obj: KubeObject): ObjectKey {
  const { namespace, name } = obj.metadata;
  if (!name) throw new Error('object has no metadata.name');
  return namespace ? `${namespace}/${name}` : name;
}

/**
 * A key cut to at most `max` characters (`max` ≥ 3), keeping its start and its end around one "…"
 * ("ns/very-lo…name-b"): a name may have 253 characters, and long names of one kind often differ only at the end.
 * A key that fits is returned unchanged. For display only (the status bar cuts at 48, the CLI's run summary at
 * 60); never for lookups, and JSON output keeps whole keys.
 */
export function shortKey(key: string, max = 48): string {
  if (key.length <= max) return key;
  const head = Math.ceil((max - 1) / 2);
  const tail = max - 1 - head;
  return `${key.slice(0, head)}…${key.slice(key.length - tail)}`;
}

export function keyFor(namespace: string | undefined, name: string): ObjectKey {
  return namespace ? `${namespace}/${name}` : name;
}

/**
 * Why `name` cannot be an object name or namespace in a REST path, or undefined when it can. As the API
 * server's ValidatePathSegmentName: not empty, not `.` or `..` (a URL would climb to the parent: `…/configmaps/..`
 * is the namespace itself), no `/` and no `%`.
 */
export function pathSegmentProblem(name: string): string | undefined {
  if (name === '') return 'an empty name';
  if (name === '.' || name === '..') return `the name ${JSON.stringify(name)} (it may not be "." or "..")`;
  if (name.includes('/') || name.includes('%')) return `the name ${JSON.stringify(name)} (it may not contain "/" or "%")`;
  return undefined;
}

/** Splits a key; throws on a key with more than one "/" and on a part that is "." or "..". */
export function splitKey(key: ObjectKey): { namespace?: string; name: string } {
  const parts = key.split('/');
  for (const p of parts) {
    const problem = p ? pathSegmentProblem(p) : undefined;
    if (problem) throw new Error(`unexpected key ${JSON.stringify(key)}: ${problem}`);
  }
  if (parts.length === 1 && parts[0]) return { name: parts[0] };
  if (parts.length === 2 && parts[0] && parts[1]) return { namespace: parts[0], name: parts[1] };
  throw new Error(`unexpected key format: ${JSON.stringify(key)}`);
}
