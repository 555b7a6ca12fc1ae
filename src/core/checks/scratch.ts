import { predicateFuncs, type Predicate } from '../controller/predicate.ts';
import type { KubeObject } from '../k8s/objects.ts';

/** Label on every scratch namespace and cluster-scoped copy, so leftovers can be found (`kubectl get ns -l …`). */
export const SCRATCH_LABEL = 'checks.reconcile-lab.dev/scratch';

/** The start of every scratch namespace's name (`rl-check-` and 8 hex digits): no object of yours lives there. */
export const SCRATCH_NAMESPACE_PREFIX = 'rl-check-';

/**
 * Whether `obj` belongs to a robustness check's scratch copies: it lives in a scratch namespace, or is one (or a
 * cluster-scoped copy) carrying {@link SCRATCH_LABEL}. Pure.
 */
export function isScratchObject(obj: Pick<KubeObject, 'metadata'>): boolean {
  return Boolean(obj.metadata.labels?.[SCRATCH_LABEL]) || Boolean(obj.metadata.namespace?.startsWith(SCRATCH_NAMESPACE_PREFIX));
}

/** The filter's name, as an event it drops reads in the journal: "filtered by robustness-check scratch copy". */
export const SCRATCH_COPY_FILTER = 'robustness-check scratch copy';

/**
 * An event filter for the loops a person runs (the editor's built-in loop, the CLI's run and step): the checks'
 * scratch copies are not theirs to reconcile. A loop that watches every namespace otherwise queues every copy a
 * running check makes (and each one's delete when the check cleans up), and reconciling them would spoil what the
 * check compares. Never used for the checks' own controllers, which reconcile exactly those copies.
 */
export function notScratchCopies(): Predicate {
  const ok = (o: KubeObject) => !isScratchObject(o);
  return predicateFuncs(SCRATCH_COPY_FILTER, { create: (e) => ok(e.object), update: (e) => ok(e.objectNew), delete: (e) => ok(e.object) });
}
