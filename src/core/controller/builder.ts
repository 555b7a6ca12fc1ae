import type { SharedIndexInformer } from '../cache/interfaces.ts';
import type { ObjectKey } from '../k8s/keys.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { createController, type Controller, type ControllerOptions, type SourceSpec, type WatchSpec } from './controller.ts';
import type { Predicate } from './predicate.ts';
import type { Reconciler } from './reconcile.ts';

export interface SourceOptions {
  /** All must pass for an event of this source to enqueue. */
  predicates?: readonly Predicate[];
  /**
   * Whether the controller's start waits for this source's informer to sync (default true, as controller-runtime
   * waits for every watch). False for a source the controller can run without (see {@link SourceSpec.waitForSync}).
   */
  waitForSync?: boolean;
}

/**
 * Builder facade over {@link createController} (controller-runtime
 * `builder.ControllerManagedBy(mgr).For(…).Owns(…).Watches(…).Complete(r)`).
 * It only collects sources and options; `build` validates them and returns a
 * stopped controller. Nothing starts (and no queue or timer exists) until
 * `controller.start()`.
 */
export interface ControllerBuilder {
  /** The reconciled resource. Required, exactly once. */
  for(informer: SharedIndexInformer, options?: SourceOptions): ControllerBuilder;
  /**
   * A child resource: its events enqueue the primary object named by the
   * child's ownerReference with `controller: true` whose kind and API group
   * match the primary resource.
   */
  owns(informer: SharedIndexInformer, options?: SourceOptions): ControllerBuilder;
  /** Another resource: `map` turns each of its objects into primary keys to reconcile. */
  watches(informer: SharedIndexInformer, map: (obj: KubeObject) => readonly ObjectKey[], options?: SourceOptions): ControllerBuilder;
  /** Predicates for the events of every source. */
  withEventFilter(...predicates: Predicate[]): ControllerBuilder;
  /** Overrides options given to {@link controllerBuilder}. */
  withOptions(options: Partial<ControllerOptions>): ControllerBuilder;
  build(reconciler: Reconciler): Controller;
}

/** Starts building a controller. `options.name` and `options.contextFactory` are required. */
export function controllerBuilder(options: ControllerOptions): ControllerBuilder {
  let opts: ControllerOptions = { ...options };
  let primary: SourceSpec | undefined;
  const owned: SourceSpec[] = [];
  const watched: WatchSpec[] = [];
  const filters: Predicate[] = [];
  const b: ControllerBuilder = {
    for(informer, o = {}) {
      if (primary) throw new Error(`controller ${opts.name}: for() was already called (${primary.informer.resource.resource})`);
      primary = { informer, ...(o.predicates ? { predicates: o.predicates } : {}) };
      return b;
    },
    owns(informer, o = {}) {
      owned.push({ informer, ...(o.predicates ? { predicates: o.predicates } : {}), ...(o.waitForSync === false ? { waitForSync: false } : {}) });
      return b;
    },
    watches(informer, map, o = {}) {
      watched.push({ informer, map, ...(o.predicates ? { predicates: o.predicates } : {}), ...(o.waitForSync === false ? { waitForSync: false } : {}) });
      return b;
    },
    withEventFilter(...ps) {
      filters.push(...ps);
      return b;
    },
    withOptions(o) {
      opts = { ...opts, ...o };
      return b;
    },
    build(reconciler) {
      if (!primary) throw new Error(`controller ${opts.name}: call for(primaryInformer) before build()`);
      return createController(opts, { primary, owned, watched, eventFilters: filters }, reconciler);
    },
  };
  return b;
}
