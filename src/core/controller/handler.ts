import { keyFor, keyOf, type ObjectKey } from '../k8s/keys.ts';
import { groupOf, type KubeObject } from '../k8s/objects.ts';

/**
 * Event handlers (controller-runtime `pkg/handler`): they turn one informer
 * event into the keys to enqueue. They only compute keys; predicates, reasons
 * and the queue are the controller's business.
 */

/** The keys an event enqueues. `objects` holds the event's object(s): for an update, old then new. */
export type KeyMapper = (objects: readonly KubeObject[]) => ObjectKey[];

/** The object's own key (EnqueueRequestForObject): the newest object of the event. */
export function enqueueForObject(): KeyMapper {
  return (objects) => {
    const o = objects[objects.length - 1];
    return o?.metadata.name ? [keyOf(o)] : [];
  };
}

/** Identifies the owner type for {@link enqueueForOwner}. */
export interface OwnerType {
  /** API group of the owner ("" for the core group). */
  group: string;
  kind: string;
  /** Whether the owner resource is namespaced (its key then uses the child's namespace). */
  namespaced: boolean;
}

/**
 * The keys of the owners of `obj` that are its **controller** (an
 * ownerReference with `controller: true`) and of the owner type (matching
 * kind and API group; the version is ignored). A namespaced owner lives in the
 * child's namespace; a cluster-scoped child cannot have a namespaced owner.
 */
export function controllerOwnerKeys(obj: KubeObject, owner: OwnerType): ObjectKey[] {
  const keys: ObjectKey[] = [];
  for (const ref of obj.metadata.ownerReferences ?? []) {
    if (ref.controller !== true || ref.kind !== owner.kind || groupOf(ref.apiVersion) !== owner.group || !ref.name) continue;
    if (owner.namespaced) {
      if (!obj.metadata.namespace) continue;
      keys.push(keyFor(obj.metadata.namespace, ref.name));
    } else {
      keys.push(ref.name);
    }
  }
  return keys;
}

/**
 * Enqueues the controlling owner (EnqueueRequestForOwner with OnlyControllerOwner).
 * For an update, owners of both the old and the new object are enqueued, so
 * an owner losing its child hears about it.
 */
export function enqueueForOwner(owner: OwnerType): KeyMapper {
  return (objects) => dedupe(objects.flatMap((o) => controllerOwnerKeys(o, owner)));
}

/**
 * Enqueues the keys a map function returns (EnqueueRequestsFromMapFunc); for
 * an update, both objects are mapped. A throwing map function enqueues nothing
 * (the controller reports the error).
 */
export function enqueueMapped(map: (obj: KubeObject) => readonly ObjectKey[]): KeyMapper {
  return (objects) => dedupe(objects.flatMap((o) => [...map(o)]));
}

function dedupe(keys: ObjectKey[]): ObjectKey[] {
  return keys.length < 2 ? keys : [...new Set(keys)];
}
