import { ApiError, isConflict, isNotFound } from '../k8s/client.ts';
import type { GroupVersionResource, KubeObject } from '../k8s/objects.ts';
import type { ReconcileContext } from '../controller/reconcile.ts';
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

/**
 * Writes `compute(obj)` to the object's `/status` subresource **only when it
 * differs** from the stored status, so that a no-op reconcile produces no watch
 * event (the self-trigger loop the lab warns about). A resource without the
 * status subresource (a CRD that does not declare it) answers 404 on `/status`
 * while the object exists: then the status is written with an update of the
 * object (same resourceVersion guard and conflict policy).
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
  gvr: GroupVersionResource,
  obj: KubeObject,
  compute: (current: KubeObject) => unknown,
  options: { maxAttempts?: number } = {},
): Promise<StatusWriteResult> {
  const maxAttempts = options.maxAttempts ?? 3;
  let current = obj;
  let conflicts = 0;
  let viaObject = false;
  for (let attempt = 1; ; attempt++) {
    const desired = compute(current);
    if (jsonEqual(current.status ?? undefined, desired)) return { written: false, status: desired, conflicts, object: current };
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
        current = fresh;
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
