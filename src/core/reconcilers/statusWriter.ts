import { ApiError, isConflict, isNotFound } from '../k8s/client.ts';
import type { GroupVersionResource, KubeObject } from '../k8s/objects.ts';
import { TerminalError, type ReconcileContext } from '../controller/reconcile.ts';
import { jsonEqual } from './jsonEqual.ts';
import { readFresh } from './readObject.ts';

export interface StatusWriteResult {
  /** True when a write was sent (and accepted). False: the status was already as desired. */
  written: boolean;
  /** The status that is now stored (or would be, in dry-run). */
  status: unknown;
  /** Writes that failed with 409 Conflict and were retried after a re-read. */
  conflicts: number;
  /** The object after the write (or as re-read), when known. */
  object?: KubeObject;
}

/** The first `observedGeneration` a status carries (top level, or a condition's), as a path; undefined when none. */
function observedGenerationField(status: unknown): string | undefined {
  if (!status || typeof status !== 'object') return undefined;
  const st = status as { observedGeneration?: unknown; conditions?: unknown };
  if (typeof st.observedGeneration === 'number') return 'status.observedGeneration';
  if (Array.isArray(st.conditions)) {
    const i = st.conditions.findIndex((c) => c && typeof c === 'object' && typeof (c as { observedGeneration?: unknown }).observedGeneration === 'number');
    if (i >= 0) return `status.conditions[${i}].observedGeneration`;
  }
  return undefined;
}

/**
 * The refusal of a status written with the object (no status subresource) that carries an observedGeneration: the
 * update bumps metadata.generation, so it could never catch up, and each write starts the next reconcile (a hot loop
 * the generation hides). Undefined when the status has none.
 */
function observedGenerationRefusal(gvr: GroupVersionResource, obj: KubeObject, status: unknown): TerminalError | undefined {
  const loop = observedGenerationField(status);
  if (!loop) return undefined;
  const name = `${gvr.group ? `${gvr.resource}.${gvr.group}` : gvr.resource} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
  return new TerminalError(
    `${name}: ${gvr.resource} has no status subresource (its CRD does not declare subresources.status), so the status is written with an update of the whole object, which bumps metadata.generation: ${loop} could never equal it and every write would start another reconcile. Add "subresources: { status: {} }" to the CRD's version (status writes then leave the generation alone), or leave ${loop} out of the status. Nothing was written.`,
  );
}

/**
 * Writes `compute(obj)` to the object's `/status` subresource **only when it
 * differs** from the stored status, so that a no-op reconcile produces no watch
 * event (the self-trigger loop the lab warns about). A resource without the
 * status subresource (a CRD that does not declare it) has its status written
 * with an update of the object (same resourceVersion guard and conflict
 * policy): at once when `gvr.subresources` (from discovery) lacks "status",
 * else after `/status` answered 404 while the object exists (not known up
 * front: that refused write is in the journal too). There, a status carrying an `observedGeneration`
 * (top level or in a condition) is refused with a {@link TerminalError} and nothing is written: the update bumps
 * `metadata.generation`, so it could never catch up, and every write would start another reconcile.
 *
 * Conflict policy: a 409 (the object changed since it was read, e.g. a stale
 * cache copy) is handled by re-reading the object from the server and
 * recomputing, up to `maxAttempts` writes in total; after that the conflict is
 * thrown so the work queue retries with backoff. `compute` must be a pure
 * function of the object it is given. An object that vanished while retrying
 * counts as nothing to write. When the re-read object has another
 * `metadata.generation` (its spec changed meanwhile), the status computed for
 * the old spec must not be written for the new one: the conflict is thrown at
 * once, so the whole reconcile runs again against the new spec.
 */
export async function writeStatusIfChanged(
  ctx: Pick<ReconcileContext, 'client' | 'signal'>,
  gvr: GroupVersionResource & { readonly subresources?: readonly string[] },
  obj: KubeObject,
  compute: (current: KubeObject) => unknown,
  options: { maxAttempts?: number } = {},
): Promise<StatusWriteResult> {
  const maxAttempts = options.maxAttempts ?? 3;
  let current = obj;
  let conflicts = 0;
  // Discovery says the resource has no status subresource: no /status write that can only be refused.
  let viaObject = gvr.subresources !== undefined && !gvr.subresources.includes('status');
  for (let attempt = 1; ; attempt++) {
    const desired = compute(current);
    if (jsonEqual(current.status ?? undefined, desired)) return { written: false, status: desired, conflicts, object: current };
    if (viaObject) {
      const refused = observedGenerationRefusal(gvr, current, desired);
      if (refused) throw refused;
    }
    try {
      const after = viaObject
        ? await ctx.client.update(gvr, { ...current, status: desired }, { signal: ctx.signal })
        : await ctx.client.updateStatus(gvr, { ...current, status: desired }, { signal: ctx.signal });
      return { written: true, status: desired, conflicts, object: after };
    } catch (e) {
      if (isNotFound(e) && !viaObject) {
        // 404 from /status: the object is gone, or its resource has no status subresource (then status is an
        // ordinary part of the object and is written with an update of it, guarded by its resourceVersion).
        const fresh = await readFresh(ctx, gvr, current.metadata.namespace, current.metadata.name ?? '');
        if (!fresh) throw e;
        viaObject = true;
        if (fresh.metadata.generation !== obj.metadata.generation) {
          throw new ApiError(409, 'Conflict', `${fresh.metadata.name}: the spec changed (generation ${obj.metadata.generation} → ${fresh.metadata.generation}) before its status was written; reconciling again`);
        }
        current = fresh; // the loop's next pass checks its status for an observedGeneration before writing
        attempt--;
        continue;
      }
      if (!isConflict(e) || attempt >= maxAttempts) throw e;
      conflicts++;
      const fresh = await readFresh(ctx, gvr, current.metadata.namespace, current.metadata.name ?? '');
      if (!fresh) return { written: false, status: desired, conflicts };
      if (fresh.metadata.generation !== obj.metadata.generation) throw e;
      current = fresh;
    }
  }
}
