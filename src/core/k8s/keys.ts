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

export function keyFor(namespace: string | undefined, name: string): ObjectKey {
  return namespace ? `${namespace}/${name}` : name;
}

/** Splits a key; throws on a key with more than one "/". */
export function splitKey(key: ObjectKey): { namespace?: string; name: string } {
  const parts = key.split('/');
  if (parts.length === 1) return { name: parts[0]! };
  if (parts.length === 2 && parts[0] && parts[1]) return { namespace: parts[0], name: parts[1] };
  throw new Error(`unexpected key format: ${JSON.stringify(key)}`);
}
