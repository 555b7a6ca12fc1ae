import type { Clock } from '../clock.ts';
import { realClock } from '../clock.ts';
import { isAlreadyExists, isNotFound, type JsonPatchOp } from '../k8s/client.ts';
import type { Condition, GroupVersionResource, KubeObject, OwnerReference } from '../k8s/objects.ts';
import { TerminalError, type ReconcileContext, type Request, type Result } from '../controller/reconcile.ts';
import { setCondition } from './conditions.ts';
import type { Explanation, ExplainingReconciler } from './explain.ts';
import { jsonEqual } from './jsonEqual.ts';
import { readFresh, readObject } from './readObject.ts';
import { writeStatusIfChanged } from './statusWriter.ts';

/** The lab's custom resource (samples/crd.yaml). */
export const LAB_GROUP = 'lab.reconcile.dev';
export const WIDGET_GVR: GroupVersionResource = { group: LAB_GROUP, version: 'v1alpha1', resource: 'widgets' };
export const WIDGET_KIND = 'Widget';
/** The finalizer the lab reconciler adds to every Widget and removes after cleanup. */
export const LAB_FINALIZER = 'lab.reconcile.dev/cleanup';
/** Labels the reconciler owns on the child ConfigMap. */
export const LAB_MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const LAB_WIDGET_LABEL = 'lab.reconcile.dev/widget';
export const CONFIGMAP_GVR: GroupVersionResource = { group: '', version: 'v1', resource: 'configmaps' };
export const SECRET_GVR: GroupVersionResource = { group: '', version: 'v1', resource: 'secrets' };

export interface WidgetSpec {
  data?: Record<string, string>;
  dependsOn?: Array<{ kind: 'ConfigMap' | 'Secret'; name: string }>;
}

export interface WidgetStatus {
  observedGeneration?: number;
  childName?: string;
  conditions?: Condition[];
}

export interface LabReconcilerOptions {
  clock?: Clock;
  /** Delay of the requeue asked for while a dependency is missing. Default 15 s. */
  dependencyRequeueMs?: number;
  /** Status writes retried after a 409 before the conflict is returned to the queue. Default 3. */
  maxStatusAttempts?: number;
}

/**
 * True for the lab's own Widget resource: plural `widgets` in the group `lab.reconcile.dev` or a subgroup of it
 * (`<anything>.lab.reconcile.dev`: the test suites install copies of samples/crd.yaml under unique groups).
 */
export function isLabWidgetResource(r: { readonly group: string; readonly resource: string }): boolean {
  return r.resource === WIDGET_GVR.resource && (r.group === LAB_GROUP || r.group.endsWith(`.${LAB_GROUP}`));
}

/**
 * Why the lab reconciler must not run on `r`, or undefined for its own Widget resource. On any other resource
 * it would add its finalizer to those objects, rewrite their `<name>-config` ConfigMaps and take ownership of
 * them, so the CLI and the extension refuse to build the loop, and {@link createLabReconciler} refuses too.
 */
export function labResourceProblem(r: { readonly group: string; readonly resource: string }): string | undefined {
  if (isLabWidgetResource(r)) return undefined;
  const id = r.group ? `${r.resource}.${r.group}` : r.resource;
  return `The lab reconciler only reconciles its own Widget resource (widgets.${LAB_GROUP}), not ${id}: on other objects it would add its finalizer and take over their "<name>-config" ConfigMaps. Choose a reconciler for ${id} (exec or module), or reconcile widgets.${LAB_GROUP}.`;
}

/** The child ConfigMap's name for a Widget. */
export function childNameOf(widgetName: string): string {
  return `${widgetName}-config`;
}

/** True when `child` has a controller ownerReference pointing at `owner`. */
export function isControlledBy(child: KubeObject, owner: KubeObject): boolean {
  return (child.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === owner.metadata.uid);
}

/**
 * The JSON Patch that removes **every** occurrence of `finalizer` from `obj` (the API server accepts duplicates),
 * keeping the order of the others, as controller-runtime's `controllerutil.RemoveFinalizer` does: a `test` of the
 * resourceVersion read, then, from the last occurrence to the first (so earlier indexes stay valid), a `test` that
 * the index still holds `finalizer` and its `remove`. A stale read fails a test (422) and is retried. Empty when
 * `obj` does not carry `finalizer`.
 */
export function removeFinalizerOps(obj: KubeObject, finalizer: string): JsonPatchOp[] {
  const at: number[] = [];
  (obj.metadata.finalizers ?? []).forEach((f, i) => {
    if (f === finalizer) at.push(i);
  });
  if (at.length === 0) return [];
  const ops: JsonPatchOp[] = [{ op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion }];
  for (const i of at.reverse()) {
    ops.push({ op: 'test', path: `/metadata/finalizers/${i}`, value: finalizer }, { op: 'remove', path: `/metadata/finalizers/${i}` });
  }
  return ops;
}

function controllerRefOf(obj: KubeObject): OwnerReference | undefined {
  return (obj.metadata.ownerReferences ?? []).find((r) => r.controller === true);
}

/** The desired child ConfigMap of `widget` (the reconciler's "desired" side). */
export function desiredChildOf(widget: KubeObject): KubeObject {
  const spec = (widget.spec ?? {}) as WidgetSpec;
  const name = widget.metadata.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: childNameOf(name),
      namespace: widget.metadata.namespace,
      labels: { [LAB_MANAGED_BY_LABEL]: 'reconcile-lab', [LAB_WIDGET_LABEL]: name },
      ownerReferences: [
        {
          apiVersion: widget.apiVersion ?? `${WIDGET_GVR.group}/${WIDGET_GVR.version}`,
          kind: widget.kind ?? WIDGET_KIND,
          name,
          uid: widget.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: { ...(spec.data ?? {}) },
  };
}

/** The fields of `observed` the reconciler owns, shaped like {@link desiredChildOf}, for comparison and diffs. */
export function managedViewOf(observed: KubeObject, desired: KubeObject): KubeObject {
  const labels: Record<string, string> = {};
  for (const k of Object.keys(desired.metadata.labels ?? {})) {
    const v = observed.metadata.labels?.[k];
    if (v !== undefined) labels[k] = v;
  }
  const ref = controllerRefOf(observed);
  return {
    apiVersion: observed.apiVersion ?? 'v1',
    kind: observed.kind ?? 'ConfigMap',
    metadata: {
      name: observed.metadata.name,
      namespace: observed.metadata.namespace,
      labels,
      ownerReferences: ref ? [ref] : [],
    },
    data: { ...((observed.data as Record<string, string> | undefined) ?? {}) },
  };
}

/** What differs between the observed child and the desired one; empty when they match. */
export function childDrift(observed: KubeObject, desired: KubeObject): string[] {
  const out: string[] = [];
  const view = managedViewOf(observed, desired);
  if (!jsonEqual(view.data, desired.data)) out.push('data');
  if (!jsonEqual(view.metadata.labels, desired.metadata.labels)) out.push('labels');
  const want = desired.metadata.ownerReferences?.[0];
  const have = view.metadata.ownerReferences?.[0];
  if (!have || have.uid !== want?.uid) out.push('ownerReference');
  return out;
}

/**
 * The built-in lab reconciler (the seeds' scenario). For a Widget it:
 * 1. returns at once when the Widget is gone (nothing to do; the GC removes owned children);
 * 2. on deletion, runs idempotent cleanup (deletes the child ConfigMap it controls; already gone is success)
 *    and removes {@link LAB_FINALIZER};
 * 3. adds {@link LAB_FINALIZER} when missing (merge patch carrying resourceVersion: 409 if stale);
 * 4. when a `spec.dependsOn` ConfigMap/Secret is missing, sets Ready=False/DependencyMissing and asks for a
 *    delayed requeue with that reason (not an error, so the backoff does not grow);
 * 5. creates the child when missing, updates it only when its managed fields differ, and otherwise writes
 *    nothing (the child's resourceVersion stays the same: the idempotency proof);
 * 6. writes status (observedGeneration, childName, Ready) through `/status` only when it changed; a 409 is
 *    retried after re-reading (see {@link writeStatusIfChanged}), then returned as an error for the queue.
 *
 * The Widget is read from the cache when the controller watches widgets, otherwise with a GET; children and
 * dependencies likewise. A child owned by another controller is a TerminalError (no retry until something changes).
 */
export function createLabReconciler(options: LabReconcilerOptions = {}): ExplainingReconciler {
  const clock = options.clock ?? realClock;
  const dependencyRequeueMs = options.dependencyRequeueMs ?? 15_000;
  const maxStatusAttempts = options.maxStatusAttempts ?? 3;

  async function missingDependencies(ctx: ReconcileContext, widget: KubeObject): Promise<string[]> {
    const spec = (widget.spec ?? {}) as WidgetSpec;
    const missing: string[] = [];
    for (const dep of spec.dependsOn ?? []) {
      const gvr = dep.kind === 'Secret' ? SECRET_GVR : CONFIGMAP_GVR;
      const found = await readObject(ctx, gvr, widget.metadata.namespace, dep.name);
      if (!found) missing.push(`${dep.kind} ${widget.metadata.namespace}/${dep.name}`);
    }
    return missing;
  }

  function statusFor(widget: KubeObject, ready: Omit<Condition, 'type' | 'lastTransitionTime'>): (current: KubeObject) => WidgetStatus {
    return (current) => {
      const prev = (current.status ?? {}) as WidgetStatus;
      // The generation this reconcile acted on (the status writer never retries across a spec change).
      const generation = widget.metadata.generation;
      const next: WidgetStatus = { ...prev, observedGeneration: generation, childName: childNameOf(current.metadata.name ?? '') };
      next.conditions = setCondition(prev.conditions, { type: 'Ready', ...ready, observedGeneration: generation }, clock.now());
      return next;
    };
  }

  async function writeStatus(ctx: ReconcileContext, widget: KubeObject, ready: Omit<Condition, 'type' | 'lastTransitionTime'>): Promise<void> {
    const r = await writeStatusIfChanged(ctx, ctx.primary, widget, statusFor(widget, ready), { maxAttempts: maxStatusAttempts });
    if (r.conflicts > 0) ctx.log.info('status write conflicted; re-read and retried', { conflicts: r.conflicts, written: r.written });
  }

  async function finalize(ctx: ReconcileContext, widget: KubeObject): Promise<Result> {
    const ns = widget.metadata.namespace;
    const childName = childNameOf(widget.metadata.name ?? '');
    // Cleanup must be idempotent: "already gone" is success, or the finalizer would never come off.
    const child = await readFresh(ctx, CONFIGMAP_GVR, ns, childName);
    if (child && isControlledBy(child, widget)) {
      try {
        await ctx.client.delete(CONFIGMAP_GVR, ns, childName, { preconditions: { uid: child.metadata.uid }, signal: ctx.signal });
        ctx.log.info('cleanup: deleted the child ConfigMap', { child: childName });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    } else {
      ctx.log.debug('cleanup: nothing to delete', { child: childName, present: !!child });
    }
    // Remove our finalizer from the latest object, guarded by `test` ops so a concurrent change fails (422) and is retried.
    const fresh = await readFresh(ctx, ctx.primary, ns, widget.metadata.name ?? '');
    if (!fresh) return {};
    const ops = removeFinalizerOps(fresh, LAB_FINALIZER);
    if (ops.length === 0) return {};
    try {
      await ctx.client.patch(ctx.primary, ns, fresh.metadata.name ?? '', 'json', ops, { signal: ctx.signal });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    ctx.recorder.event(widget, 'Normal', 'CleanedUp', `Cleaned up ConfigMap ${childName} and removed finalizer ${LAB_FINALIZER}`);
    return {};
  }

  async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
    const problem = labResourceProblem(ctx.primary);
    if (problem) throw new TerminalError(problem);
    let widget = await readObject(ctx, ctx.primary, request.namespace, request.name);
    if (!widget) return {};
    if (widget.kind !== undefined && widget.kind !== WIDGET_KIND) throw new TerminalError(`The lab reconciler only reconciles Widgets, not a ${widget.kind}.`);
    if (widget.metadata.deletionTimestamp) {
      if (!(widget.metadata.finalizers ?? []).includes(LAB_FINALIZER)) return {};
      return finalize(ctx, widget);
    }
    if (!(widget.metadata.finalizers ?? []).includes(LAB_FINALIZER)) {
      // resourceVersion in a merge patch is a precondition: a stale read gets 409 and the queue retries.
      widget = await ctx.client.patch(
        ctx.primary,
        request.namespace,
        request.name,
        'merge',
        { metadata: { finalizers: [...(widget.metadata.finalizers ?? []), LAB_FINALIZER], resourceVersion: widget.metadata.resourceVersion } },
        { signal: ctx.signal },
      );
    }

    const missing = await missingDependencies(ctx, widget);
    if (missing.length > 0) {
      const message = `waiting for ${missing.join(', ')}`;
      await writeStatus(ctx, widget, { status: 'False', reason: 'DependencyMissing', message });
      return { requeueAfterMs: dependencyRequeueMs, reason: `DependencyMissing: ${message}` };
    }

    const desired = desiredChildOf(widget);
    const childName = desired.metadata.name!;
    let observed = await readObject(ctx, CONFIGMAP_GVR, request.namespace, childName);
    let action: 'created' | 'updated' | 'unchanged' = 'unchanged';
    if (!observed) {
      try {
        await ctx.client.create(CONFIGMAP_GVR, desired, { signal: ctx.signal });
        action = 'created';
      } catch (e) {
        // A stale cache said "missing": read the server's copy and compare it instead.
        if (!isAlreadyExists(e)) throw e;
        observed = await readFresh(ctx, CONFIGMAP_GVR, request.namespace, childName);
        if (!observed) throw e;
      }
    }
    if (observed) {
      const owner = controllerRefOf(observed);
      if (owner && owner.uid !== widget.metadata.uid) {
        const message = `ConfigMap ${childName} is controlled by ${owner.kind} ${owner.name} (uid ${owner.uid})`;
        await writeStatus(ctx, widget, { status: 'False', reason: 'ChildConflict', message });
        throw new TerminalError(message);
      }
      const drift = childDrift(observed, desired);
      if (drift.length > 0) {
        const others = (observed.metadata.ownerReferences ?? []).filter((r) => r.uid !== widget!.metadata.uid);
        const merged: KubeObject = {
          ...observed,
          metadata: {
            ...observed.metadata,
            labels: { ...(observed.metadata.labels ?? {}), ...desired.metadata.labels },
            ownerReferences: [...others, ...(desired.metadata.ownerReferences ?? [])],
          },
          data: desired.data,
        };
        delete merged.metadata.managedFields;
        await ctx.client.update(CONFIGMAP_GVR, merged, { signal: ctx.signal });
        action = 'updated';
        ctx.log.info('child drifted; updated', { child: childName, drift });
      }
    }
    if (action !== 'unchanged') ctx.recorder.event(widget, 'Normal', action === 'created' ? 'ChildCreated' : 'ChildUpdated', `ConfigMap ${childName} ${action}`);
    await writeStatus(ctx, widget, { status: 'True', reason: 'Reconciled', message: `ConfigMap ${childName} matches spec.data` });
    return {};
  }

  async function explain(request: Request, ctx: ReconcileContext): Promise<Explanation> {
    const problem = labResourceProblem(ctx.primary);
    if (problem) return { notes: [problem] };
    const widget = await readObject(ctx, ctx.primary, request.namespace, request.name);
    if (!widget) return { notes: ['the Widget does not exist: nothing to do'] };
    const notes: string[] = [];
    const childName = childNameOf(request.name);
    const child = await readFresh(ctx, CONFIGMAP_GVR, request.namespace, childName);
    if (widget.metadata.deletionTimestamp) {
      notes.push(`being deleted since ${widget.metadata.deletionTimestamp}`);
      if ((widget.metadata.finalizers ?? []).includes(LAB_FINALIZER)) notes.push(`cleanup will delete ConfigMap ${childName} and remove ${LAB_FINALIZER}`);
      return { desired: undefined, observed: child ? managedViewOf(child, desiredChildOf(widget)) : undefined, notes };
    }
    if (!(widget.metadata.finalizers ?? []).includes(LAB_FINALIZER)) notes.push(`finalizer ${LAB_FINALIZER} will be added`);
    const missing = await missingDependencies(ctx, widget);
    if (missing.length) notes.push(`dependency missing: ${missing.join(', ')} (delayed requeue, child not written)`);
    const desired = desiredChildOf(widget);
    if (!child) notes.push(`ConfigMap ${childName} does not exist`);
    else {
      const drift = childDrift(child, desired);
      notes.push(drift.length ? `ConfigMap ${childName} differs in: ${drift.join(', ')}` : `ConfigMap ${childName} matches`);
    }
    return { desired, observed: child ? managedViewOf(child, desired) : undefined, notes };
  }

  return { name: 'lab', reconcile, explain };
}
