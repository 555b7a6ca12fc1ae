import { annotationChanged, generationChanged, labelChanged, labelSelector, resourceVersionChanged, type Predicate } from './predicate.ts';

/**
 * Predicates by name, for places where people cannot write code: the CLI's
 * `--predicate`, the extension's `reconcileLab.reconciler.predicates` and a
 * module reconciler's `export const predicates = ['generation-changed']`.
 *
 * Spec syntax (one predicate each; several specs must all pass):
 * - `generation-changed`: updates pass only when `metadata.generation` changed (status writes are dropped);
 * - `resource-version-changed`: updates pass only when the resourceVersion changed (drops resyncs);
 * - `label-changed`, `annotation-changed`: updates pass only when labels / annotations changed;
 * - `label-selector=k=v[,k2=v2…]`: events pass only for objects carrying every label pair.
 */
export const PREDICATE_SPECS: readonly string[] = ['generation-changed', 'resource-version-changed', 'label-changed', 'annotation-changed', 'label-selector=<key>=<value>[,…]'];

/** A bad spec, with the list of valid ones in its message. */
export class PredicateSpecError extends Error {
  constructor(message: string) {
    super(`${message} (predicates: ${PREDICATE_SPECS.join(', ')})`);
    this.name = 'PredicateSpecError';
  }
}

/** The predicate a spec names. Throws {@link PredicateSpecError} for an unknown or malformed spec. */
export function parsePredicateSpec(spec: string): Predicate {
  const s = spec.trim();
  switch (s) {
    case 'generation-changed':
      return generationChanged();
    case 'resource-version-changed':
      return resourceVersionChanged();
    case 'label-changed':
      return labelChanged();
    case 'annotation-changed':
      return annotationChanged();
  }
  if (s.startsWith('label-selector=')) {
    const body = s.slice('label-selector='.length);
    const matchLabels: Record<string, string> = {};
    for (const pair of body.split(',')) {
      const eq = pair.indexOf('=');
      const k = eq > 0 ? pair.slice(0, eq).trim() : '';
      const v = eq > 0 ? pair.slice(eq + 1).trim() : '';
      if (!k || !/^([A-Za-z0-9][-A-Za-z0-9_.]*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(k) || !/^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/.test(v)) {
        throw new PredicateSpecError(`bad label-selector "${body}": expected key=value pairs separated by commas`);
      }
      matchLabels[k] = v;
    }
    return labelSelector(matchLabels);
  }
  throw new PredicateSpecError(`unknown predicate "${s}"`);
}

/**
 * Predicates from a module's `predicates` export: each element a spec string or a predicate object
 * (`{ name, create, update, delete }`, e.g. from reconcile-lab's predicate.ts). Throws with the index of a bad one.
 */
export function predicatesFromExport(value: unknown, where: string): Predicate[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new PredicateSpecError(`${where}: "predicates" must be an array of predicate names or predicate objects`);
  return value.map((p, i) => {
    if (typeof p === 'string') {
      try {
        return parsePredicateSpec(p);
      } catch (e) {
        throw new PredicateSpecError(`${where}: predicates[${i}]: ${(e as Error).message.replace(/ \(predicates: .*\)$/, '')}`);
      }
    }
    const o = p as Partial<Predicate> | null;
    if (o && typeof o === 'object' && typeof o.create === 'function' && typeof o.update === 'function' && typeof o.delete === 'function') {
      return { name: typeof o.name === 'string' && o.name ? o.name : `predicates[${i}]`, create: o.create.bind(o), update: o.update.bind(o), delete: o.delete.bind(o) };
    }
    throw new PredicateSpecError(`${where}: predicates[${i}] is neither a predicate name nor an object with create/update/delete functions`);
  });
}
