import type { EnqueueReason, KeyBrief, KeyCounts, KeyState } from '../../core/controller/keyState.ts';
import type { ReflectorState } from '../../core/cache/interfaces.ts';
import type { Event } from '../../core/event.ts';
import type { ObjectKey } from '../../core/k8s/keys.ts';
import type { KubeObject, ResourceInfo } from '../../core/k8s/objects.ts';
import type { KeyConvergence } from '../../core/checks/convergence.ts';

/**
 * What the tree views read: a connection's informer caches and its
 * controller's per-key state, by resource id ("plural.group", "configmaps"
 * for the core group). Implemented by the connection session over core
 * objects; the views never change anything through it. Objects returned are
 * the caches' own: callers MUST NOT mutate them.
 */
export interface ViewModel {
  /** The watched resources, in display order. */
  readonly resources: readonly WatchedResourceView[];
  /** The resource the loop reconciles (its keys are the work-queue keys), if a loop exists. */
  readonly primaryResource: string | undefined;
  /**
   * False when the connection built no loop for {@link primaryResource} (the reconciler does not fit it, an untrusted
   * workspace): its objects are then not reconciled and have no queue state or convergence. Undefined counts as true.
   */
  readonly loopAvailable?: boolean;
  /**
   * Who reconciles {@link primaryResource} in the views' words: "the loop" (the built-in loop) or "Go controller
   * widget" (a Go controller the views show); undefined when {@link loopAvailable} is false. Undefined counts as
   * "the loop".
   */
  readonly reconciledBy?: string;
  /** The cached object, from whichever namespace informer holds it. */
  get(resource: string, key: ObjectKey): KubeObject | undefined;
  /** Every cached object of a resource (all watched namespaces). */
  list(resource: string): KubeObject[];
  /** Cached objects (of any watched resource, in the watched namespaces) whose ownerReferences name `uid`. */
  ownedBy(uid: string): Array<{ resource: string; object: KubeObject }>;
  /** The work-queue state of a key of the primary resource. */
  keyState(key: ObjectKey): KeyState | undefined;
  /**
   * The key whose reconcile, by the controller the views show, wrote the object version an event cause names (the
   * `resourceVersion` of an informer / owned / watch reason); undefined when no journaled write of that controller
   * made it. Looked up when shown: the watch event often arrives before the write's answer is journaled.
   */
  writtenBy?(reason: EnqueueReason): ObjectKey | undefined;
  /** Live convergence of a key of the primary resource (converged / changing / flapping), when tracked. */
  convergence?(key: ObjectKey): KeyConvergence | undefined;
  /**
   * Why the shown controller never reconciles this key of the primary resource (a Go controller whose manager's
   * cache watches other namespaces: "outside beacon's cache (namespaces team-a, team-b)"); undefined otherwise.
   * Such a row is shown without queue state and without the commands that reconcile a key.
   */
  outsideController?(key: ObjectKey): string | undefined;
  /** Every key the controller has seen. */
  keyStates(): KeyState[];
  /** Every key the controller has seen, briefly (phase, wait, failed, warned), unordered: cheap for 10,000 keys. */
  keyBriefs(): readonly KeyBrief[];
  /** The keys waiting in the queue, in hand-out order (only the first `limit`, when given: cheap for a long queue). */
  queuedKeys(limit?: number): ObjectKey[];
  /** How many keys are queued / processing / in backoff / waiting to requeue (kept up to date, O(1)). */
  keyCounts?(): KeyCounts;
  /**
   * The briefs of the keys that are not idle, or failed, or warned, unordered (cheap: not every key); without the
   * queued ones when `withoutQueued` (a listing takes those from {@link queuedKeys}, their number from {@link keyCounts}).
   */
  listedKeyBriefs?(withoutQueued?: boolean): readonly KeyBrief[];
  /** The keys of the primary resource whose live convergence is flapping now (cheap: not every key). */
  flappingKeys?(): ObjectKey[];
  /** Fires (possibly in bursts of thousands) when a cached object or a key's state changed. */
  readonly onDidChange: Event<ViewChange>;
}

export interface WatchedResourceView {
  readonly id: string;
  readonly info: ResourceInfo;
  /** Combined state of its informers: the worst one (backoff > listing > watching). */
  readonly state: ReflectorState;
  readonly synced: boolean;
}

export type ViewChange =
  /**
   * A cached object changed. `rowOnly`: only the rows showing this object can look different (an update that kept
   * its ownerReferences and its deletion state: no list, count or parent changed); otherwise (an add, a delete, or
   * unknown) lists around it may have changed too.
   */
  | { readonly type: 'object'; readonly resource: string; readonly key: ObjectKey; readonly rowOnly?: boolean }
  | { readonly type: 'key'; readonly key: ObjectKey }
  | { readonly type: 'resources' };

