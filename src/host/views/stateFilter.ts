/**
 * The Resources view's state filter: which objects to show by what state
 * they are in. Pure (no `vscode`): unit-tested in
 * test/unit/host-free/views/stateFilter.test.ts.
 *
 * Contract: an empty filter shows everything; a non-empty one shows a
 * top-level object when it is in ANY of the chosen states (a union, as
 * "show me what needs attention"). Owned children, finalizers and conditions
 * of a shown object are always shown. Queue states exist only for objects of
 * the loop's resource; other objects never match them.
 */
import type { KeyState } from '../../core/controller/keyState.ts';
import { conditionOf, observedGenerationOf, type KubeObject } from '../../core/k8s/objects.ts';
import type { KeyConvergence } from '../../core/checks/convergence.ts';
import { convergenceContextOf, convergenceLabel } from './presentation.ts';

export type ObjectStateFilter = 'terminating' | 'backoff' | 'notReady' | 'notObserved' | 'warning' | 'flapping' | 'converged';

export interface StateFilterChoice {
  readonly state: ObjectStateFilter;
  readonly label: string;
  readonly detail: string;
}

/** The choices, in the order the picker shows them. */
export const STATE_FILTER_CHOICES: readonly StateFilterChoice[] = [
  { state: 'terminating', label: 'Terminating', detail: 'deletion requested (deletionTimestamp set), held by finalizers' },
  { state: 'backoff', label: 'Failing / backoff', detail: 'the last reconcile failed, or the key waits for a backoff retry' },
  { state: 'notReady', label: 'Not ready', detail: 'a Ready condition that is False or Unknown' },
  { state: 'notObserved', label: 'Spec not observed', detail: 'status.observedGeneration behind metadata.generation' },
  { state: 'warning', label: 'Warning', detail: 'a hot loop, or another field manager fighting this loop over a field' },
  { state: 'flapping', label: 'Flapping', detail: 'the loop keeps changing objects of the key back to an earlier state (live convergence)' },
  { state: 'converged', label: 'Converged', detail: 'live convergence says converged: reconciled, no changes for a while, nothing pending' },
];

export function isStateFilter(x: unknown): x is ObjectStateFilter {
  return typeof x === 'string' && STATE_FILTER_CHOICES.some((c) => c.state === x);
}

/** The label of a state, for the view's description ("Filter: Terminating, Not ready"). */
export function stateFilterLabel(states: Iterable<ObjectStateFilter>): string {
  const set = new Set(states);
  return STATE_FILTER_CHOICES.filter((c) => set.has(c.state))
    .map((c) => c.label)
    .join(', ');
}

/**
 * The fallback for {@link inState} `converged` when the live convergence tracker has no entry for the key:
 * its key ran
 * and its last outcome was a success, nothing is queued, processing or
 * waiting, and (when the object reports one) its status observed the
 * current generation and its Ready condition is True.
 */
export function isConverged(obj: KubeObject, key: KeyState | undefined): boolean {
  if (!key || key.reconciles === 0 || key.lastOutcome?.kind !== 'success') return false;
  if (key.phase !== 'idle' || key.waiting || key.warning) return false;
  if (obj.metadata.deletionTimestamp) return false;
  const observed = observedGenerationOf(obj);
  if (observed !== undefined && obj.metadata.generation !== undefined && observed < obj.metadata.generation) return false;
  const ready = conditionOf(obj, 'Ready');
  return !ready || ready.status === 'True';
}

/**
 * Whether the object is in one state. `key`: its work-queue state and `convergence`: its live convergence (from
 * src/core/checks/convergence.ts), both only for objects of the loop's resource. `converged` matches exactly the rows
 * whose description says converged.
 */
export function inState(state: ObjectStateFilter, obj: KubeObject, key: KeyState | undefined, convergence?: KeyConvergence): boolean {
  switch (state) {
    case 'terminating':
      return Boolean(obj.metadata.deletionTimestamp);
    case 'backoff':
      return Boolean(key && (key.phase === 'backoff' || key.waiting?.kind === 'backoff' || key.lastOutcome?.kind === 'error' || key.lastOutcome?.kind === 'terminal'));
    case 'notReady': {
      const ready = conditionOf(obj, 'Ready');
      return Boolean(ready && ready.status !== 'True');
    }
    case 'notObserved': {
      const observed = observedGenerationOf(obj);
      const gen = obj.metadata.generation;
      // The delete's own +1 (see presentObject) is no spec waiting to be observed.
      if (obj.metadata.deletionTimestamp && observed !== undefined && gen === observed + 1) return false;
      return observed !== undefined && gen !== undefined && observed < gen;
    }
    case 'warning':
      return Boolean(key?.warning);
    case 'flapping':
      return convergence?.state === 'flapping';
    case 'converged':
      // The row's word decides (presentation.ts): not a queued or running key, not a Not Ready one waiting on its own
      // requeue-after, not a Terminating one ("no progress").
      return convergence ? convergenceLabel(convergence, convergenceContextOf(key, obj))?.startsWith('converged') === true : isConverged(obj, key);
  }
}

/** The filter contract above: empty shows all, otherwise any chosen state. */
export function matchesFilter(filter: ReadonlySet<ObjectStateFilter>, obj: KubeObject, key: KeyState | undefined, convergence?: KeyConvergence): boolean {
  if (filter.size === 0) return true;
  for (const s of filter) if (inState(s, obj, key, convergence)) return true;
  return false;
}
