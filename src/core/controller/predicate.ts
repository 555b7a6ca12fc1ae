import type { KubeObject } from '../k8s/objects.ts';
import { labelSelectorFromSpec, parseLabelSelector, type LabelSelector, type LabelSelectorSpec } from '../cache/labelSelector.ts';

/**
 * Event filters (controller-runtime `pkg/predicate`). A predicate decides
 * whether an informer event may enqueue work; it never changes what the
 * cache stores. Events not filtered still go through the level-based
 * reconcile: predicates only save work.
 *
 * Requeue-after and backoff retries never pass through predicates: they are
 * the controller's own requests.
 */

export interface CreateEvent {
  readonly object: KubeObject;
  /** Delivered as part of the informer's initial list. */
  readonly isInInitialList: boolean;
}

export interface UpdateEvent {
  readonly objectOld: KubeObject;
  readonly objectNew: KubeObject;
  /** A periodic resync (the informer replays its cache: same resourceVersion on both sides). */
  readonly isResync: boolean;
}

export interface DeleteEvent {
  readonly object: KubeObject;
  /** The informer missed the delete; `object` is the last state it had (client-go DeletedFinalStateUnknown). */
  readonly deleteStateUnknown: boolean;
}

export interface Predicate {
  /** Shown in the journal when the predicate drops an event. */
  readonly name: string;
  create(e: CreateEvent): boolean;
  update(e: UpdateEvent): boolean;
  delete(e: DeleteEvent): boolean;
}

/** Builds a predicate from optional callbacks; a missing callback lets its events pass (controller-runtime `Funcs`). */
export function predicateFuncs(
  name: string,
  fns: { create?: (e: CreateEvent) => boolean; update?: (e: UpdateEvent) => boolean; delete?: (e: DeleteEvent) => boolean },
): Predicate {
  return {
    name,
    create: fns.create ?? (() => true),
    update: fns.update ?? (() => true),
    delete: fns.delete ?? (() => true),
  };
}

export interface GenerationChangedOptions {
  /**
   * Opt-in: let periodic resyncs (and relist updates whose resourceVersion did
   * not change) through. Default false, as controller-runtime's
   * GenerationChangedPredicate, which drops every update whose generation did
   * not change: resyncs then no longer reach the controller, so it loses its
   * periodic self-healing; pass true to keep it.
   */
  passResync?: boolean;
}

/**
 * controller-runtime GenerationChangedPredicate: an update passes only when
 * `metadata.generation` changed, i.e. the spec changed. Status writes (which
 * do not bump generation on resources with a status subresource), resyncs and
 * relist updates with an unchanged generation are dropped; create and delete
 * pass. Caveats (as in controller-runtime): some built-in types bump
 * generation for other changes too, and the controller no longer reacts to
 * someone else overwriting status (requeue-after still reaches it; resyncs
 * only with `passResync`).
 */
export function generationChanged(options: GenerationChangedOptions = {}): Predicate {
  const passResync = options.passResync ?? false;
  return predicateFuncs(passResync ? 'generationChanged(passResync)' : 'generationChanged', {
    // An absent generation is 0, as Go's GetGeneration() reads it.
    update: (e) => (passResync && e.isResync) || (e.objectOld.metadata.generation ?? 0) !== (e.objectNew.metadata.generation ?? 0),
  });
}

/** Updates pass only when `metadata.resourceVersion` changed: drops resyncs and no-op relist updates. */
export function resourceVersionChanged(): Predicate {
  return predicateFuncs('resourceVersionChanged', {
    // An absent resourceVersion is "", as Go's GetResourceVersion() reads it.
    update: (e) => (e.objectOld.metadata.resourceVersion ?? '') !== (e.objectNew.metadata.resourceVersion ?? ''),
  });
}

/** Updates pass only when the labels changed. */
export function labelChanged(): Predicate {
  return predicateFuncs('labelChanged', {
    update: (e) => !sameStringMap(e.objectOld.metadata.labels, e.objectNew.metadata.labels),
  });
}

/** Updates pass only when the annotations changed. */
export function annotationChanged(): Predicate {
  return predicateFuncs('annotationChanged', {
    update: (e) => !sameStringMap(e.objectOld.metadata.annotations, e.objectNew.metadata.annotations),
  });
}

/**
 * controller-runtime LabelSelectorPredicate: events pass only for objects
 * (for an update: the new object) that the selector matches. The selector is
 * a `metav1.LabelSelector` (`matchLabels` AND `matchExpressions` with In,
 * NotIn, Exists, DoesNotExist), a plain map of labels (`matchLabels` alone),
 * or the string syntax (`app=web,tier in (fe,be),!legacy`). An empty selector
 * matches everything. Throws a LabelSelectorError for an invalid selector
 * (e.g. In without values), so a bad filter fails when it is built.
 */
export function labelSelector(selector: LabelSelectorSpec | Readonly<Record<string, string>> | string): Predicate {
  const sel: LabelSelector =
    typeof selector === 'string' ? parseLabelSelector(selector) : isSelectorSpec(selector) ? labelSelectorFromSpec(selector) : labelSelectorFromSpec({ matchLabels: { ...selector } });
  const matches = (o: KubeObject) => sel.matches(o.metadata.labels);
  return {
    name: `labelSelector(${sel.toString()})`,
    create: (e) => matches(e.object),
    update: (e) => matches(e.objectNew),
    delete: (e) => matches(e.object),
  };
}

function isSelectorSpec(x: LabelSelectorSpec | Readonly<Record<string, string>>): x is LabelSelectorSpec {
  const s = x as { matchLabels?: unknown; matchExpressions?: unknown };
  return (typeof s.matchLabels === 'object' && s.matchLabels !== null) || Array.isArray(s.matchExpressions);
}

/** Passes when every predicate passes (true for none). */
export function and(...ps: Predicate[]): Predicate {
  return {
    name: `and(${ps.map((p) => p.name).join(', ')})`,
    create: (e) => ps.every((p) => p.create(e)),
    update: (e) => ps.every((p) => p.update(e)),
    delete: (e) => ps.every((p) => p.delete(e)),
  };
}

/** Passes when any predicate passes (false for none). */
export function or(...ps: Predicate[]): Predicate {
  return {
    name: `or(${ps.map((p) => p.name).join(', ')})`,
    create: (e) => ps.some((p) => p.create(e)),
    update: (e) => ps.some((p) => p.update(e)),
    delete: (e) => ps.some((p) => p.delete(e)),
  };
}

/** Passes when `p` does not. */
export function not(p: Predicate): Predicate {
  return {
    name: `not(${p.name})`,
    create: (e) => !p.create(e),
    update: (e) => !p.update(e),
    delete: (e) => !p.delete(e),
  };
}

function sameStringMap(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  const ea = Object.entries(a ?? {});
  if (ea.length !== Object.keys(b ?? {}).length) return false;
  return ea.every(([k, v]) => (b ?? {})[k] === v);
}
