import type { WriteRecord } from '../k8s/dynamicClient.ts';
import type { GroupVersionResource } from '../k8s/objects.ts';
import type { EndState, RawEndState } from './mask.ts';

/**
 * The child-drift check's pure part (the check itself is in runChecks.ts): which children the check changes behind
 * the controller's back, and how. A level-based controller watches the objects it creates (controller-runtime's
 * `Owns`, a mapped `Watches`) and puts back whatever someone else deletes or changes: the classic bugs are a
 * missing `Owns`, a predicate that drops the children's events (`WithEventFilter(GenerationChangedPredicate{})`
 * applies to every watch, and a ConfigMap's generation never moves), and a reconcile that skips its work because its
 * status says it is done.
 *
 * Invariants: only objects the controller itself created in the scratch namespace are targets (never the primary,
 * never an object the check copied in); a child whose name the end state renumbers (`generateName`, or a name the
 * reconciler makes unique itself) is not a target, since a recreated one gets a new name by design; at most
 * {@link MAX_DRIFT_TARGETS}, in creation order.
 */

/** At most this many children are deleted (and changed) per key: each costs one or two settles. */
export const MAX_DRIFT_TARGETS = 3;

/** What the check appends to a changed value. */
export const DRIFT_SUFFIX = '-drifted';

export interface DriftTarget {
  gvr: GroupVersionResource;
  /** "configmaps", "deployments.apps": the resource as end states and findings name it. */
  resource: string;
  namespace: string;
  name: string;
  /** The child's key in the normalized end state ("configmaps/widget-ready"). */
  endKey: string;
  uid: string;
  /** The child's kind ("ConfigMap"), from the controller's create. */
  kind: string;
  /**
   * The child carries no ownerReference with `controller: true` (when the controller created it and as it settled):
   * `Owns` (and Reconcile Lab's loop) map a child's events to its object through that reference only, so none of its
   * events queue a reconcile.
   */
  noController: boolean;
  /**
   * The change made after the delete was put back (ConfigMaps with data only: other kinds carry fields the server
   * defaults, which a controller that patches only its own fields rightly leaves alone, and a Secret's data is often
   * written once on purpose, credentials a person may rotate): a JSON merge patch and the field it changes.
   */
  change?: { path: string; patch: unknown };
}

/**
 * Kinds the check never deletes: Events (a record, not desired state), and objects that run to completion (Jobs,
 * Pods): a finished one is removed by design (a Job's ttlSecondsAfterFinished), and a controller that ran it once
 * and recorded that in status rightly does not run it again.
 */
const skipped = (gvr: GroupVersionResource) => gvr.resource === 'events' || (gvr.group === 'batch' && gvr.resource === 'jobs') || (gvr.group === '' && gvr.resource === 'pods');

/**
 * Whether write `w` made its object: a create, or a server-side apply of an object that was not there before it
 * (no `before`, no resourceVersion before: controller-runtime's `client.Apply` and a module's apply create what is
 * missing, the usual way a modern controller makes its children).
 */
export function createdBy(w: WriteRecord): boolean {
  return w.verb === 'create' || (w.verb === 'apply' && !w.before && !w.resourceVersionBefore);
}

/**
 * The children to change: created by the controller ({@link createdBy}; `creates`: its ok, non-dry-run writes, in order) in the
 * scratch namespace, still present in the settled state `raw` (normalized as `end`), under a name normalization
 * keeps, whose data field `learned` (paths that differed between the reference runs, "key::path") does not mask.
 */
export function driftTargets(creates: readonly WriteRecord[], raw: RawEndState, end: EndState, primary: GroupVersionResource, resourceLabel: (gvr: GroupVersionResource) => string, learned: ReadonlySet<string>): DriftTarget[] {
  const out: DriftTarget[] = [];
  for (const w of creates) {
    if (out.length >= MAX_DRIFT_TARGETS) break;
    if (!createdBy(w) || w.subresource || w.dryRun || w.outcome !== 'ok' || skipped(w.gvr)) continue;
    if (w.gvr.group === primary.group && w.gvr.resource === primary.resource) continue;
    const name = w.after?.metadata.name ?? w.name;
    if (!raw.namespace || w.namespace !== raw.namespace || !name || w.after?.metadata.generateName) continue;
    const resource = resourceLabel(w.gvr);
    const present = raw.objects.find((o) => o.resource === resource && o.object.metadata.name === name);
    if (!present) continue;
    const endKey = `${resource}/${name.split(raw.namespace).join('<scratch-ns>')}`;
    if (!(endKey in end) || learned.has(`${endKey}::*`) || out.some((t) => t.endKey === endKey)) continue;
    const target: DriftTarget = { gvr: w.gvr, resource, namespace: raw.namespace, name, endKey, uid: present.object.metadata.uid ?? '', kind: w.after?.kind ?? present.object.kind ?? '', noController: !present.object.metadata.ownerReferences?.some((r) => r.controller === true) };
    const change = dataChange(w.gvr, present.object as { data?: unknown }, (path) => learned.has(`${endKey}::${path}`));
    if (change) target.change = change;
    out.push(target);
  }
  return out;
}

/**
 * The objects the controller created (`creates`: its ok, non-dry-run writes, in order) outside the scratch namespace
 * `scratchNs` — cluster-scoped ones (a Namespace per tenant) or in another namespace — which the check never
 * changes, as `resource namespace/name` (`namespaces tenant-x`, `configmaps tenant-x/info`): at most `limit`, then
 * a count. The primary, subresource writes and Events are left out. Empty when every child is in the scratch
 * namespace.
 */
export function createsOutsideScratch(creates: readonly WriteRecord[], scratchNs: string, primary: GroupVersionResource, resourceLabel: (gvr: GroupVersionResource) => string, limit = 3): string[] {
  const names: string[] = [];
  for (const w of creates) {
    if (!createdBy(w) || w.subresource || w.dryRun || w.outcome !== 'ok' || w.gvr.resource === 'events') continue;
    if (w.gvr.group === primary.group && w.gvr.resource === primary.resource) continue;
    if ((w.namespace ?? '') === scratchNs) continue;
    const name = w.after?.metadata.name ?? w.name;
    const text = `${resourceLabel(w.gvr)} ${w.namespace ? `${w.namespace}/` : ''}${name}`;
    if (!names.includes(text)) names.push(text);
  }
  return names.length > limit ? [...names.slice(0, limit), `${names.length - limit} more`] : names;
}

/**
 * The cause to name first for a child that was not put back when it has no controller ownerReference: its events
 * reach no reconcile, whatever the controller watches. `go`: a controller-runtime program (`Owns` with
 * `SetControllerReference`, or `Watches` with a map function for a child kept without an owner on purpose, e.g. one a
 * finalizer cleans up); otherwise Reconcile Lab's loop, which maps a child by that reference only. Undefined when the
 * child has one (the usual causes then apply).
 */
export function unownedChildCause(t: Pick<DriftTarget, 'resource' | 'name' | 'kind' | 'noController'>, go: boolean, owns: string): string | undefined {
  if (!t.noController) return undefined;
  const label = `${t.resource}/${t.name}`;
  return go
    ? `${label} has no ownerReference with controller: true, so \`${owns}\` maps none of its events to the object and nothing queues a reconcile when it changes. Set one when you create it (\`controllerutil.SetControllerReference(obj, child, r.Scheme())\`); for a child kept without an owner on purpose (one your finalizer deletes), watch it with \`${owns.replace(/^Owns\(/, 'Watches(').replace(/\)$/, ', handler.EnqueueRequestsFromMapFunc(…))')}\` mapping it back to its object (by name or a label).`
    : `${label} has no ownerReference with controller: true, so Reconcile Lab's loop, which maps a child's events to its object through that reference, is not told when it changes: give it one (\`ownerReferences: [{ apiVersion, kind, name, uid, controller: true }]\` of the object).`;
}

/**
 * A change of a ConfigMap's data: the first key (in sorted order) not masked, its value with {@link DRIFT_SUFFIX}
 * appended. Undefined for other kinds (Secrets included), empty data and an `immutable` ConfigMap.
 */
export function dataChange(gvr: GroupVersionResource, object: { data?: unknown }, masked: (path: string) => boolean): DriftTarget['change'] | undefined {
  if (gvr.group !== '' || gvr.resource !== 'configmaps') return undefined;
  // Immutable: the server refuses the change, and nobody else can make it.
  if ((object as { immutable?: unknown }).immutable === true) return undefined;
  const data = object.data;
  if (!data || typeof data !== 'object') return undefined;
  const key = Object.keys(data).sort().find((k) => typeof (data as Record<string, unknown>)[k] === 'string' && !masked(`data.${k}`));
  if (key === undefined) return undefined;
  const value = (data as Record<string, string>)[key]!;
  return { path: `data.${key}`, patch: { data: { [key]: value + DRIFT_SUFFIX } } };
}

/**
 * The `Owns` line a controller-runtime controller would need for the child's kind, as Go code in the package names a
 * kubebuilder project uses (`corev1`, `appsv1`, `networkingv1`: the group's first label and the version):
 * `Owns(&appsv1.Deployment{})`. A kind that is not known gives the ConfigMap example.
 */
export function ownsHint(t: Pick<DriftTarget, 'gvr' | 'kind'>): string {
  const pkg = `${t.gvr.group === '' ? 'core' : t.gvr.group.split('.')[0]!.replace(/[^a-z0-9]/g, '')}${t.gvr.version}`;
  return `Owns(&${pkg}.${t.kind || 'ConfigMap'}{})`;
}
