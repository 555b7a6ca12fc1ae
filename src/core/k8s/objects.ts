/**
 * The subset of the Kubernetes object model the core relies on. Objects are
 * plain JSON as the API server sends them; the core never requires typed
 * client classes.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  subresource?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown' | string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

/**
 * True when `answer`, the server's answer to a successful update, patch or apply, says that the write deleted the
 * object: it is Terminating (deletionTimestamp set) with no finalizers left and no grace period pending — the API
 * server's own condition for deleting an object during an update. The answer then carries the object's last
 * resourceVersion (the one before the write), so "rv N → N" alone would read as a no-op. A Pod in graceful
 * termination (deletionGracePeriodSeconds > 0) is not deleted by an update and does not count.
 */
export function deletedByWrite(answer: KubeObject | undefined): boolean {
  const m = answer?.metadata;
  if (!m?.deletionTimestamp || (m.finalizers?.length ?? 0) > 0) return false;
  return !m.deletionGracePeriodSeconds;
}

/** Any Kubernetes object. `spec` and `status` are opaque to the core. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: unknown;
  [extra: string]: unknown;
}

/** A list response (`metadata.resourceVersion` and `continue` drive the reflector). */
export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** Identifies a REST collection: group ("" for core), version, plural resource. */
export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** A GVR plus what discovery says about it. */
export interface ResourceInfo extends GroupVersionResource {
  kind: string;
  namespaced: boolean;
  /**
   * Subresources the server offers, e.g. "status", "finalize" ([] when discovery listed none: a CRD without
   * `subresources.status` has no "status"). Undefined: not known (a resource named by hand, not discovered).
   */
  subresources?: string[];
}

/**
 * "plural.group" ("configmaps" for the core group): how Reconcile Lab names a resource to people (views, CLI lines,
 * settings, flags). {@link gvrToString} keeps the version, for the journal's records and logs.
 */
export function resourceIdOfGvr(gvr: { readonly group: string; readonly resource: string }): string {
  return gvr.group ? `${gvr.resource}.${gvr.group}` : gvr.resource;
}

/** {@link gvrToString}'s form back to {@link resourceIdOfGvr}'s: "widgets.v1alpha1.lab.reconcile.dev" → "widgets.lab.reconcile.dev"; "configmaps.v1" → "configmaps". */
export function resourceIdFromGvrString(s: string): string {
  const parts = s.split('.');
  if (parts.length <= 2) return parts[0] ?? s;
  return [parts[0], ...parts.slice(2)].join('.');
}

export function gvrToString(gvr: GroupVersionResource): string {
  return gvr.group ? `${gvr.resource}.${gvr.version}.${gvr.group}` : `${gvr.resource}.${gvr.version}`;
}

export function apiVersionOf(gvr: GroupVersionResource): string {
  return gvr.group ? `${gvr.group}/${gvr.version}` : gvr.version;
}

/** The group of an `apiVersion` string ("apps/v1" → "apps", "v1" → ""). */
export function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/** The object's condition of `type`, if any. */
export function conditionOf(obj: KubeObject, type: string): Condition | undefined {
  const conds = (obj.status as { conditions?: Condition[] } | undefined)?.conditions;
  return Array.isArray(conds) ? conds.find((c) => c.type === type) : undefined;
}

/** `status.observedGeneration`, when the object reports one. */
export function observedGenerationOf(obj: KubeObject): number | undefined {
  const og = (obj.status as { observedGeneration?: unknown } | undefined)?.observedGeneration;
  return typeof og === 'number' ? og : undefined;
}
