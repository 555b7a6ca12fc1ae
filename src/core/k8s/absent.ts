import { isNotFound, type KubeClient } from './client.ts';
import { keyFor } from './keys.ts';
import type { GroupVersionResource } from './objects.ts';
import { closestNames } from '../text/closest.ts';

const NAMESPACES: GroupVersionResource = { group: '', version: 'v1', resource: 'namespaces' };

const didYouMean = (names: readonly string[]) => (names.length ? ` (did you mean ${names.join(' or ')}?)` : '');

/** Names of a list, or none when it cannot be read (RBAC, a transient error): a suggestion is a help, never a failure. */
async function namesQuietly(client: KubeClient, gvr: GroupVersionResource, namespace: string | undefined): Promise<string[]> {
  try {
    return (await client.list(gvr, namespace)).items.map((o) => o.metadata.name ?? '').filter(Boolean);
  } catch {
    return [];
  }
}

/** Keys ("namespace/name") of the objects named `name` in other namespaces than `namespace` (at most 3), or none when they cannot be read. */
async function sameNameElsewhere(client: KubeClient, gvr: GroupVersionResource, namespace: string, name: string): Promise<string[]> {
  try {
    const items = (await client.list(gvr, undefined, { fieldSelector: `metadata.name=${name}` })).items;
    return items.filter((o) => o.metadata.namespace && o.metadata.namespace !== namespace).slice(0, 3).map((o) => keyFor(o.metadata.namespace, name));
  } catch {
    return [];
  }
}

/**
 * When namespace `ns` does not exist: one sentence saying so, with the existing namespaces a typo most likely meant.
 * Undefined when it exists, or when it cannot be told (no permission to read it: say nothing rather than guess).
 */
export async function missingNamespaceNote(client: KubeClient, ns: string): Promise<string | undefined> {
  try {
    await client.get(NAMESPACES, undefined, ns);
    return undefined;
  } catch (e) {
    if (!isNotFound(e)) return undefined;
  }
  return `namespace "${ns}" does not exist${didYouMean(closestNames(ns, await namesQuietly(client, NAMESPACES, undefined)))}`;
}

/**
 * When the object `name` (in `namespace`, for a namespaced resource) is not on the server: one sentence saying so
 * (its namespace missing, or the names of that resource a typo most likely meant, else the same name in other
 * namespaces). Undefined when it exists or
 * cannot be read. Reconciling an absent key is legitimate (a deleted object), so callers print this as a note.
 */
export async function missingObjectNote(client: KubeClient, gvr: GroupVersionResource, resourceName: string, namespace: string | undefined, name: string): Promise<string | undefined> {
  try {
    await client.get(gvr, namespace, name);
    return undefined;
  } catch (e) {
    if (!isNotFound(e)) return undefined;
  }
  if (namespace !== undefined) {
    const ns = await missingNamespaceNote(client, namespace);
    if (ns) return `${resourceName} ${keyFor(namespace, name)} does not exist: ${ns}`;
  }
  const similar = closestNames(name, await namesQuietly(client, gvr, namespace)).map((n) => keyFor(namespace, n));
  // A bare name is taken in the default namespace: the object may well be in another one.
  if (!similar.length && namespace !== undefined) similar.push(...(await sameNameElsewhere(client, gvr, namespace, name)));
  return `${resourceName} ${keyFor(namespace, name)} does not exist on the server${didYouMean(similar)}`;
}
