import { yamlDiff } from '../actions/objectDiff.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { LAST_APPLIED, MASK } from '../k8s/secretMask.ts';
import type { MaskedField } from './types.ts';

/**
 * End states of a run and how two of them are compared.
 *
 * A run's end state is every object of the compared resources in its scratch namespace (see harness.ts). Before two
 * end states are compared they are *normalized*, so that two correct runs of a deterministic reconciler compare
 * equal although every run copies into a different namespace and the server assigns new uids, resourceVersions and
 * timestamps:
 * - always volatile: uid, resourceVersion, creationTimestamp, managedFields, selfLink;
 * - `metadata.generation` counts the writes that changed the object's spec, so it tells the path, not the state: a
 *   child a correct controller created and then updated when the spec changed is at generation 2, the same child
 *   created with the final spec at 1. It becomes {@link GENERATION}, and so does an `observedGeneration` (of
 *   `status` or of a status condition) equal to it; one that lags keeps its number;
 * - fields the server assigns a new value for every object (a Service's cluster IPs and node ports, a claim's bound
 *   volume) become {@link ASSIGNED};
 * - the scratch namespace and the scratch copies' uids are replaced by placeholders wherever they occur in a string;
 * - RFC 3339 timestamps anywhere become `<timestamp>`;
 * - objects created with `generateName` are named `<generateName><generated #n>` in creation order, and their real
 *   names are replaced wherever they occur in a string;
 * - objects whose names the controller makes unique itself (a random or hashed ending of its own, not
 *   `generateName`) are named `<prefix><random #n>` the same way, by the {@link NameRule}s learned from the two
 *   reference runs ({@link learnGeneratedNames}).
 * Fields that still differ between two reference runs are *learned* as nondeterministic and masked too.
 */

/**
 * A naming scheme learned from two reference runs: objects of `resource` named `prefix` + `length` characters
 * (`[a-z0-9-]`), where the two runs chose different endings. `prefix` has the scratch namespace as `<scratch-ns>`.
 */
export interface NameRule {
  resource: string;
  prefix: string;
  length: number;
}

/** The shortest ending taken as generated (shorter differences, such as a counter, stay real differences). */
const MIN_GENERATED = 4;
const GENERATED_ENDING = /^[a-z0-9-]+$/;

/** An object's name with the scratch namespace replaced, as name rules see it. */
function ruleName(name: string, namespace: string | undefined): string {
  return namespace ? name.split(namespace).join('<scratch-ns>') : name;
}

/**
 * The names the reconciler made unique itself: in each resource, every object that exists in only one of two
 * reference runs (not created with `generateName`) is paired with one of the other run of the same name length
 * that shares the longest prefix ending in `-` or `.`; a pair whose endings after that prefix are at least
 * {@link MIN_GENERATED} characters of `[a-z0-9-]` gives a rule. Two runs of a deterministic reconciler give none.
 * The result is sorted and has no duplicates; pairing is greedy in name order (deterministic).
 */
export function learnGeneratedNames(a: RawEndState, b: RawEndState): NameRule[] {
  const names = (raw: RawEndState) => {
    const out = new Map<string, Set<string>>();
    for (const { resource, object } of raw.objects) {
      if (object.metadata.generateName || !object.metadata.name) continue;
      let set = out.get(resource);
      if (!set) out.set(resource, (set = new Set()));
      set.add(ruleName(object.metadata.name, raw.namespace));
    }
    return out;
  };
  const na = names(a);
  const nb = names(b);
  const rules = new Map<string, NameRule>();
  for (const [resource, setA] of na) {
    const setB = nb.get(resource) ?? new Set<string>();
    const onlyB = [...setB].filter((n) => !setA.has(n)).sort();
    for (const x of [...setA].filter((n) => !setB.has(n)).sort()) {
      let best: { i: number; prefix: string } | undefined;
      onlyB.forEach((y, i) => {
        if (y.length !== x.length) return;
        let common = 0;
        while (common < x.length && x[common] === y[common]) common++;
        const cut = Math.max(x.lastIndexOf('-', common - 1), x.lastIndexOf('.', common - 1)) + 1;
        if (cut <= 0 || x.length - cut < MIN_GENERATED) return;
        if (!GENERATED_ENDING.test(x.slice(cut)) || !GENERATED_ENDING.test(y.slice(cut))) return;
        if (!best || cut > best.prefix.length) best = { i, prefix: x.slice(0, cut) };
      });
      if (!best) continue;
      onlyB.splice(best.i, 1);
      const rule = { resource, prefix: best.prefix, length: x.length - best.prefix.length };
      rules.set(`${rule.resource}\0${rule.prefix}\0${rule.length}`, rule);
    }
  }
  return [...rules.values()].sort((p, q) => p.resource.localeCompare(q.resource) || p.prefix.localeCompare(q.prefix) || p.length - q.length);
}

/** The rule `name` (scratch namespace as `<scratch-ns>`) of `resource` follows, if any. */
function ruleOf(rules: readonly NameRule[], resource: string, name: string): NameRule | undefined {
  return rules.find((r) => r.resource === resource && name.length === r.prefix.length + r.length && name.startsWith(r.prefix) && GENERATED_ENDING.test(name.slice(r.prefix.length)));
}

/** "configmaps/name" → normalized object. */
export type EndState = Record<string, unknown>;

/** A raw end state: per resource label, the objects listed in the scratch namespace. */
export interface RawEndState {
  namespace?: string;
  objects: Array<{ resource: string; object: KubeObject }>;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** What `metadata.generation`, and an `observedGeneration` that caught up with it, read as in a normalized end state. */
export const GENERATION = '<metadata.generation>';

export const VOLATILE_FIELDS: readonly MaskedField[] = [
  { path: '*.metadata.uid', reason: 'volatile' },
  { path: '*.metadata.resourceVersion', reason: 'volatile' },
  { path: '*.metadata.creationTimestamp', reason: 'volatile' },
  { path: '*.metadata.managedFields', reason: 'volatile' },
  { path: '*.metadata.ownerReferences[].uid', reason: 'volatile' },
  { path: '*.metadata.generation (and an observedGeneration equal to it)', reason: 'volatile' },
  { path: '* (RFC 3339 timestamps)', reason: 'volatile' },
  { path: '*.metadata.name (generateName objects: numbered in creation order)', reason: 'volatile' },
  { path: '* (the scratch namespace name)', reason: 'volatile' },
  { path: 'services/*.spec.clusterIP, clusterIPs, ports[].nodePort, healthCheckNodePort (assigned by the server)', reason: 'volatile' },
  { path: 'persistentvolumeclaims/*.spec.volumeName (the volume it was bound to)', reason: 'volatile' },
];

/** What a field the API server assigns (a Service's cluster IP, a node port) reads as in a normalized end state. */
export const ASSIGNED = '<assigned by the server>';

/**
 * Masks, in `o` (a copy), the fields of built-in kinds the API server or a controller of the cluster fills in with a
 * value of its choosing for every new object: a Service's cluster IPs and node ports (unless the spec set them, both
 * runs get different ones: two correct runs differ there), a claim's bound volume. Only values present are masked,
 * so a controller that sets a fixed one and loses it still differs.
 */
function maskServerAssigned(resource: string, o: KubeObject): void {
  const spec = (o as { spec?: Record<string, unknown> }).spec;
  if (!spec || typeof spec !== 'object') return;
  const mask = (obj: Record<string, unknown>, key: string) => {
    const v = obj[key];
    if (v === undefined || v === null || v === '' || v === 'None') return; // "None": a headless Service, chosen by the spec
    obj[key] = Array.isArray(v) ? v.map(() => ASSIGNED) : ASSIGNED;
  };
  if (resource === 'services') {
    mask(spec, 'clusterIP');
    mask(spec, 'clusterIPs');
    mask(spec, 'healthCheckNodePort');
    if (Array.isArray(spec.ports)) for (const p of spec.ports) if (p && typeof p === 'object') mask(p as Record<string, unknown>, 'nodePort');
  } else if (resource === 'persistentvolumeclaims') {
    mask(spec, 'volumeName');
  }
}

function replaceAll(s: string, table: ReadonlyArray<[string, string]>): string {
  let out = s;
  for (const [from, to] of table) if (from && out.includes(from)) out = out.split(from).join(to);
  return out;
}

function deepMap(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === 'string') return RFC3339.test(value) ? '<timestamp>' : f(value);
  if (Array.isArray(value)) return value.map((v) => deepMap(v, f));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = deepMap(v, f);
    return out;
  }
  return value;
}

/** Replaces `metadata.generation` of `o` (a copy) and each `observedGeneration` equal to it by {@link GENERATION}. */
function maskGeneration(o: KubeObject): void {
  const generation = o.metadata.generation;
  if (typeof generation !== 'number') return;
  (o.metadata as unknown as Record<string, unknown>).generation = GENERATION;
  const status = (o as { status?: unknown }).status;
  if (!status || typeof status !== 'object') return;
  const st = status as Record<string, unknown>;
  if (st.observedGeneration === generation) st.observedGeneration = GENERATION;
  if (Array.isArray(st.conditions)) {
    for (const c of st.conditions) if (c && typeof c === 'object' && (c as Record<string, unknown>).observedGeneration === generation) (c as Record<string, unknown>).observedGeneration = GENERATION;
  }
}

/**
 * Normalizes a raw end state (see the module comment), with the name rules learned for the key (none: only
 * `generateName` objects are renamed). Deterministic: same input, same output.
 */
export function normalizeEndState(raw: RawEndState, rules: readonly NameRule[] = []): EndState {
  const sorted = [...raw.objects].sort((a, b) => {
    const ta = a.object.metadata.creationTimestamp ?? '';
    const tb = b.object.metadata.creationTimestamp ?? '';
    if (ta !== tb) return ta < tb ? -1 : 1;
    return Number(a.object.metadata.resourceVersion ?? 0) - Number(b.object.metadata.resourceVersion ?? 0);
  });
  const table: Array<[string, string]> = [];
  const counters = new Map<string, number>();
  const named = new Map<KubeObject, string>();
  for (const { resource, object } of sorted) {
    const gen = object.metadata.generateName;
    let name = object.metadata.name ?? '';
    if (gen && name.startsWith(gen) && name.length > gen.length) {
      const n = (counters.get(resource + '/' + gen) ?? 0) + 1;
      counters.set(resource + '/' + gen, n);
      name = `${gen}<generated #${n}>`;
      table.push([object.metadata.name!, name]);
    } else if (name && rules.length) {
      const rule = ruleOf(rules, resource, ruleName(name, raw.namespace));
      if (rule) {
        const n = (counters.get(`${resource}/${rule.prefix}/${rule.length}`) ?? 0) + 1;
        counters.set(`${resource}/${rule.prefix}/${rule.length}`, n);
        // The prefix keeps the real scratch namespace here; the table's namespace entry masks it like any string.
        name = `${name.slice(0, name.length - rule.length)}<random #${n}>`;
        table.push([object.metadata.name!, name]);
      }
    }
    named.set(object, name);
    if (object.metadata.uid) table.push([object.metadata.uid, `<uid of ${resource}/${name}>`]);
  }
  // Longer strings first, so a generated name that contains another is replaced whole.
  table.sort((a, b) => b[0].length - a[0].length);
  if (raw.namespace) table.push([raw.namespace, '<scratch-ns>']);
  const out: EndState = {};
  for (const { resource, object } of sorted) {
    const o = structuredClone(object) as KubeObject;
    const m = o.metadata as unknown as Record<string, unknown>;
    delete m.uid;
    delete m.resourceVersion;
    delete m.creationTimestamp;
    delete m.managedFields;
    delete m.selfLink;
    m.name = named.get(object);
    if (o.metadata.ownerReferences) for (const r of o.metadata.ownerReferences) (r as unknown as Record<string, unknown>).uid = replaceAll(r.uid, table);
    // A cluster-scoped copy's name carries the scratch namespace (`<scratch-ns>-<name>`): its key is masked as its
    // fields are, so the same object of two runs has the same key.
    const normalized = deepMap(o, (s) => replaceAll(s, table)) as KubeObject;
    maskGeneration(normalized); // after the replacements, which must not touch the marker
    maskServerAssigned(resource, normalized);
    out[`${resource}/${replaceAll(named.get(object) ?? '', table)}`] = normalized;
  }
  return out;
}

/** Flattens a JSON value into "a.b[0].c" → leaf value (empty objects / arrays are leaves). */
export function flatten(value: unknown, prefix = '', out: Map<string, unknown> = new Map()): Map<string, unknown> {
  if (Array.isArray(value)) {
    if (value.length === 0) out.set(prefix, []);
    value.forEach((v, i) => flatten(v, `${prefix}[${i}]`, out));
  } else if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) out.set(prefix, {});
    for (const [k, v] of entries) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else out.set(prefix, value);
  return out;
}

function pathKey(objectKey: string, path: string): string {
  return `${objectKey}::${path}`;
}

/**
 * The paths (object key + field path) whose values differ between two normalized end states, including objects
 * or fields present in only one of them. Used to learn nondeterministic fields from two reference runs.
 */
export function differingPaths(a: EndState, b: EndState): Set<string> {
  const out = new Set<string>();
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const fa = flatten(a[key]);
    const fb = flatten(b[key]);
    if (!(key in a) || !(key in b)) {
      out.add(pathKey(key, '*'));
      continue;
    }
    for (const p of new Set([...fa.keys(), ...fb.keys()])) if (JSON.stringify(fa.get(p)) !== JSON.stringify(fb.get(p))) out.add(pathKey(key, p));
  }
  return out;
}

/** The learned masks, as the report lists them. */
export function maskedFieldsOf(learned: ReadonlySet<string>): MaskedField[] {
  return [...learned].sort().map((p) => ({ path: p.replace('::', ': '), reason: 'learned' as const }));
}

/** `state` with every learned path replaced by "<masked: differs between reference runs>". */
export function applyMasks(state: EndState, learned: ReadonlySet<string>): EndState {
  const out: EndState = {};
  for (const [key, obj] of Object.entries(state)) {
    if (learned.has(pathKey(key, '*'))) {
      out[key] = '<masked: present in only one reference run>';
      continue;
    }
    const copy = structuredClone(obj);
    for (const p of learned) {
      if (!p.startsWith(key + '::')) continue;
      setPath(copy, p.slice(key.length + 2), '<masked: differs between reference runs>');
    }
    out[key] = copy;
  }
  return out;
}

function setPath(root: unknown, path: string, value: unknown): void {
  const parts = path.match(/[^.[\]]+/g) ?? [];
  let cur = root as Record<string, unknown>;
  for (let i = 0; i < parts.length - 1; i++) {
    const next = cur?.[parts[i]!];
    if (!next || typeof next !== 'object') return;
    cur = next as Record<string, unknown>;
  }
  if (cur && typeof cur === 'object' && parts.length) {
    const last = parts[parts.length - 1]!;
    if (last in cur) cur[last] = value;
  }
}

/**
 * A value of an end-state difference as text: JSON, "(absent)", "the object's metadata.generation" for an
 * observedGeneration equal to it ({@link GENERATION}), or {@link MASK} for a Secret's (`secrets/…`)
 * data / stringData values and its last-applied annotation, which repeats them (the path still says what differs).
 */
function shownValue(key: string, path: string, v: unknown): string {
  if (v === undefined) return '(absent)';
  if (v === GENERATION) return "the object's metadata.generation";
  if (key.startsWith('secrets/') && (/^(data|stringData)([.[]|$)/.test(path) || path.startsWith(`metadata.annotations.${LAST_APPLIED}`))) return MASK;
  return JSON.stringify(v);
}

/** How {@link compareEndStates} names its two sides (a check whose two runs are not a reference and a perturbation). */
export interface EndStateNames {
  /** After a value of the first end state: "in the reference". */
  reference: string;
  /** After a value of the second: "after the perturbation". */
  perturbed: string;
  /** Where an object exists only (or is missing): "in the perturbed run". */
  perturbedRun: string;
}

const DEFAULT_NAMES: EndStateNames = { reference: 'in the reference', perturbed: 'after the perturbation', perturbedRun: 'in the perturbed run' };

/**
 * The differences of two masked end states: the object keys and paths that differ (empty: equal), each with both
 * values (a Secret's values as {@link MASK}).
 */
export function compareEndStates(reference: EndState, perturbed: EndState, learned: ReadonlySet<string>, names: EndStateNames = DEFAULT_NAMES): string[] {
  const a = applyMasks(reference, learned);
  const b = applyMasks(perturbed, learned);
  const out: string[] = [];
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (!(key in a)) {
      out.push(`${key}: exists only ${names.perturbedRun}`);
      continue;
    }
    if (!(key in b)) {
      out.push(`${key}: missing ${names.perturbedRun}`);
      continue;
    }
    const fa = flatten(a[key]);
    const fb = flatten(b[key]);
    for (const p of [...new Set([...fa.keys(), ...fb.keys()])].sort()) {
      if (JSON.stringify(fa.get(p)) !== JSON.stringify(fb.get(p))) out.push(`${key}: ${p}: ${shownValue(key, p, fa.get(p))} ${names.reference}, ${shownValue(key, p, fb.get(p))} ${names.perturbed}`);
    }
  }
  return out;
}

/** A unified YAML diff of two masked end states, reference (---) → perturbed (+++); "" when equal. */
export function endStateDiff(reference: EndState, perturbed: EndState, learned: ReadonlySet<string>): string {
  const a = applyMasks(reference, learned);
  const b = applyMasks(perturbed, learned);
  const parts: string[] = [];
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const d = yamlDiff(key, a[key], b[key], { beforeName: 'reference', afterName: 'perturbed' });
    if (d) parts.push(d);
  }
  return parts.join('\n');
}
