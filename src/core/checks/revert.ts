import type { KubeObject } from '../k8s/objects.ts';
import { isRecord } from '../record.ts';

/**
 * The change that undoes the history check's transitions (Acto's recovery oracle: reverting the desired state must
 * bring back the state it had before).
 *
 * Contract:
 * - Pure: nothing here talks to a server; the inputs are not mutated, the patch shares no structure with them.
 * - Touches only what the transitions touched: the union of their JSON merge patches' keys, as a tree (a key that is
 *   an object in some transition is a subtree, otherwise a leaf), under top-level keys other than `status`,
 *   `apiVersion` and `kind`, and under `metadata` only `labels` and `annotations` (a person's fields; finalizers,
 *   ownerReferences and the rest are the controllers'). What a controller wrote elsewhere on the object is left alone.
 * - The result is a JSON merge patch (RFC 7386) that, applied to `current`, makes every touched path equal to
 *   `before`: a value `before` lacks is `null`, an object is patched key by key (its keys `before` lacks set to `null`),
 *   anything else is replaced by `before`'s value. Undefined when the touched paths already equal `before`.
 */
export function revertPatch(transitions: readonly unknown[], before: KubeObject, current: KubeObject): Record<string, unknown> | undefined {
  const touched: Tree = new Map();
  for (const t of transitions) {
    if (!isRecord(t)) continue;
    for (const [k, v] of Object.entries(t)) {
      if (k === 'status' || k === 'apiVersion' || k === 'kind') continue;
      if (k === 'metadata') {
        if (!isRecord(v)) continue;
        for (const m of ['labels', 'annotations']) {
          if (!(m in v)) continue;
          const meta = (touched.get('metadata') as Tree | undefined) ?? new Map();
          touched.set('metadata', meta);
          addTouched(meta, m, v[m]);
        }
        continue;
      }
      addTouched(touched, k, v);
    }
  }
  const patch = mergeDiff(restrict(current, touched), restrict(before, touched));
  return isRecord(patch) && Object.keys(patch).length ? patch : undefined;
}

/** Touched keys: `true` for a leaf, a subtree for a key that was an object in every transition that set it. */
type Tree = Map<string, Tree | true>;

function addTouched(tree: Tree, key: string, value: unknown): void {
  const existing = tree.get(key);
  if (!isRecord(value)) {
    tree.set(key, true);
    return;
  }
  if (existing === true) return; // a leaf in another transition: the whole value is compared
  const sub: Tree = existing ?? new Map();
  tree.set(key, sub);
  for (const [k, v] of Object.entries(value)) addTouched(sub, k, v);
}

/** `value` cut down to the touched paths (an object at a leaf is kept whole). */
function restrict(value: unknown, tree: Tree): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!isRecord(value)) return out;
  for (const [k, t] of tree) {
    if (!(k in value) || value[k] === undefined) continue;
    const v = value[k];
    out[k] = t === true || !isRecord(v) ? v : restrict(v, t);
  }
  return out;
}

/** The merge patch from `from` to `to` (undefined when equal). */
function mergeDiff(from: unknown, to: unknown): unknown {
  if (isRecord(from) && isRecord(to)) {
    const out: Record<string, unknown> = {};
    for (const k of new Set([...Object.keys(from), ...Object.keys(to)])) {
      if (!(k in to) || to[k] === undefined) {
        if (k in from && from[k] !== undefined) out[k] = null;
        continue;
      }
      const d = k in from ? mergeDiff(from[k], to[k]) : cloneForPatch(to[k]);
      if (d !== undefined) out[k] = d;
    }
    return Object.keys(out).length ? out : undefined;
  }
  if (JSON.stringify(from) === JSON.stringify(to)) return undefined;
  return cloneForPatch(to);
}

/** A deep copy of a value to set (`null` for one that is absent). */
function cloneForPatch(v: unknown): unknown {
  return v === undefined ? null : structuredClone(v);
}

