import type { KubeObject } from '../k8s/objects.ts';
import { NAMESPACE_KEY, specReferences } from './references.ts';
import { isRecord } from '../record.ts';

/**
 * Spec changes for the history-independence check, derived from a custom resource's OpenAPI v3 schema (Acto's idea:
 * mutate the desired state within what the schema admits), when the developer gave none.
 *
 * Contract:
 * - Deterministic: the same schema and object give the same change (fields visited in sorted order, no randomness).
 * - Only fields the object already sets are changed, only scalar leaves (string, integer, number, boolean) and the
 *   string values of a string map (`additionalProperties: {type: string}`); arrays, `x-kubernetes-preserve-unknown-fields`
 *   trees without properties, `x-kubernetes-int-or-string`, and strings with a `pattern` or `format` are left alone
 *   (a valid different value cannot be told), and so are references to Secrets and ConfigMaps (references.ts: a
 *   renamed reference would only make both runs wait for an object that does not exist), whatever a key ending in
 *   `Ref` or `Refs` holds (a reference to an object of any kind: `credentialsRef`, `issuerRef`), and fields naming a
 *   namespace (`namespace`, `<prefix>Namespace`). An `enum` gives its next value; bounds (`minimum`/`maximum`,
 *   `exclusiveMinimum`/`exclusiveMaximum`, `maxLength`) are honoured.
 * - One key is also added to the first string map met (Acto adds entries too: a controller that merges a map into its
 *   child and never prunes it only shows when the key is taken away again, which the history check does), named
 *   {@link ADDED_KEY} with value {@link ADDED_VALUE}, listed first among the fields as `<path>.<key> (added)`; not to a
 *   map whose name says it selects (`selector`, `matchLabels`, `nodeSelector`: adding there changes what is selected,
 *   not a setting), nor to one at its `maxProperties`, nor to one whose values have a `pattern`, `format` or `enum`.
 *   It does not count towards the limit below.
 * - At most {@link MAX_MUTATED_FIELDS} fields, as ONE JSON merge patch of `spec`, plus their dotted paths for the report;
 *   when more could change, enums come first, then booleans, then numbers, then free strings (a mode or a switch is
 *   likelier to change what the controller does than a name), each kind in sorted order; the chosen ones are listed
 *   in sorted order.
 * - Nothing here talks to a server: a change the server still rejects (a CEL rule, a webhook) is the caller's to report.
 */
export type SpecMutation = { patch: { spec: Record<string, unknown> }; fields: string[]; parts: SpecMutationPart[] } | { skipped: string };

/** One changed field of a {@link SpecMutation} as a merge patch of its own (to try the fields one by one when the server refuses them together). */
export interface SpecMutationPart {
  field: string;
  patch: { spec: Record<string, unknown> };
}

/** The subset of a JSON schema (structural, as apiextensions.k8s.io/v1 stores it) that the mutation reads. */
export interface OpenApiSchema {
  type?: string;
  properties?: Record<string, OpenApiSchema>;
  additionalProperties?: OpenApiSchema | boolean;
  items?: OpenApiSchema;
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  maxLength?: number;
  minLength?: number;
  maxProperties?: number;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
}

export const MAX_MUTATED_FIELDS = 3;

/** The key {@link deriveSpecMutation} adds to a string map, and its value. */
export const ADDED_KEY = 'reconcile-lab-added';
export const ADDED_VALUE = 'added';
const SELECTING_MAP = /selector$|^matchLabels$/i;

/** The changed value of one scalar field, or undefined when no valid different value can be told. */
export function mutateScalar(schema: OpenApiSchema, value: unknown): unknown {
  if (schema['x-kubernetes-int-or-string']) return undefined;
  if (schema.enum?.length) {
    const i = schema.enum.findIndex((v) => v === value);
    if (schema.enum.length < 2) return undefined;
    return schema.enum[(i + 1) % schema.enum.length];
  }
  switch (schema.type) {
    case 'boolean':
      return typeof value === 'boolean' ? !value : undefined;
    case 'integer':
    case 'number': {
      if (typeof value !== 'number') return undefined;
      const step = schema.type === 'integer' ? 1 : Number.isInteger(value) ? 1 : value / 2 || 1;
      const fits = (v: number) =>
        (schema.maximum === undefined || (schema.exclusiveMaximum ? v < schema.maximum : v <= schema.maximum)) &&
        (schema.minimum === undefined || (schema.exclusiveMinimum ? v > schema.minimum : v >= schema.minimum));
      if (fits(value + step)) return value + step;
      if (fits(value - step)) return value - step;
      return undefined;
    }
    case 'string': {
      if (typeof value !== 'string' || schema.pattern !== undefined || schema.format !== undefined) return undefined;
      const max = schema.maxLength ?? Infinity;
      const changed = `${value}-changed`;
      if (changed.length <= max) return changed;
      // Too long: the same length (or the minimum), last character changed.
      const base = value.length > 0 ? value.slice(0, Math.min(value.length, max)) : 'x'.repeat(Math.max(1, schema.minLength ?? 1));
      if (base.length > max || base.length < (schema.minLength ?? 0)) return undefined;
      const last = base[base.length - 1] === 'x' ? 'y' : 'x';
      return base.slice(0, -1) + last;
    }
    default:
      return undefined;
  }
}

/**
 * One merge patch of `spec` changing up to {@link MAX_MUTATED_FIELDS} scalar fields the object sets, chosen from
 * `specSchema` (the schema of `spec`); `{skipped}` with the reason when there is none.
 */
export function deriveSpecMutation(specSchema: OpenApiSchema | undefined, object: KubeObject): SpecMutation {
  const spec = (object as { spec?: unknown }).spec;
  if (!specSchema) return { skipped: 'the resource publishes no schema for spec' };
  if (!isRecord(spec)) return { skipped: 'the object has no spec' };
  // A reference's name (and the rest of a `{name, key, namespace}` reference object) is left alone.
  const refs = specReferences(object).map((r) => r.path);
  const isReference = (p: string) => refs.some((r) => p === r || (r.endsWith('.name') && p.startsWith(r.slice(0, -'name'.length))));
  const found: Candidate[] = [];
  const added: Candidate[] = [];
  walk(specSchema, spec, 'spec', [], found, added, isReference);
  // The settings most likely to change what the controller does come first (a mode, a switch, a size), then free
  // text; in the order met among equals. Reported and patched in the order met.
  const chosen = new Set([...found].sort((a, b) => a.rank - b.rank || a.order - b.order).slice(0, MAX_MUTATED_FIELDS));
  const picked = [...added.slice(0, 1), ...found.filter((c) => chosen.has(c))];
  if (!picked.length) return { skipped: 'no spec field the schema lets us change safely (set scalar fields only; arrays, patterns, formats and references to other objects are left alone)' };
  const parts = picked.map((c) => ({ field: c.field, patch: { spec: nest(c.segments, c.value) } }));
  return { patch: { spec: mergeParts(parts).spec as Record<string, unknown> }, fields: picked.map((c) => c.field), parts };
}

/** A field {@link walk} could change: its path below `spec`, the new value, and how much a change of it is worth. */
interface Candidate {
  field: string;
  segments: string[];
  value: unknown;
  /** 0 an enum, 1 a boolean, 2 a number, 3 a string: the lower, the likelier a different behaviour. */
  rank: number;
  order: number;
}

function nest(segments: readonly string[], value: unknown): Record<string, unknown> {
  let one: unknown = value;
  for (const seg of [...segments].reverse()) one = { [seg]: one };
  return one as Record<string, unknown>;
}

/** A key holding a reference to another object (`credentialsRef`, `issuerRef`, `sourceRefs`): renaming it points at nothing. */
const OBJECT_REF_KEY = /Refs?$/;

function walk(schema: OpenApiSchema, value: Record<string, unknown>, path: string, segments: readonly string[], found: Candidate[], added: Candidate[], isReference: (path: string) => boolean): void {
  const visit = (name: string, s: OpenApiSchema) => {
    const v = value[name];
    if (v === undefined || v === null) return;
    const p = `${path}.${name}`;
    // An object reference of any kind (`…Ref`: another object's name, kind, namespace) is left alone, like a Secret's.
    if (OBJECT_REF_KEY.test(name) && isSchema(s) && (s.type === 'object' || s.type === 'string' || s.properties)) return;
    if (s.type === 'object' || (s.type === undefined && (s.properties || isSchema(s.additionalProperties)))) {
      if (isRecord(v)) walk(s, v, p, [...segments, name], found, added, isReference);
      return;
    }
    // A field naming a namespace is like a reference: another valid value cannot be told (and a cluster-scoped
    // copy's is pointed at its scratch namespace whatever it says).
    if (s.type === 'array' || s.type === undefined || isReference(p) || NAMESPACE_KEY.test(name)) return;
    const changed = mutateScalar(s, v);
    if (changed === undefined || changed === v) return;
    const rank = s.enum?.length ? 0 : s.type === 'boolean' ? 1 : s.type === 'integer' || s.type === 'number' ? 2 : 3;
    found.push({ field: p, segments: [...segments, name], value: changed, rank, order: found.length });
  };
  if (schema.properties) for (const name of Object.keys(schema.properties).sort()) visit(name, schema.properties[name]!);
  else if (isSchema(schema.additionalProperties)) {
    const s = schema.additionalProperties;
    const mapName = segments[segments.length - 1] ?? '';
    const addable = s.type === 'string' && !s.pattern && !s.format && !s.enum && !SELECTING_MAP.test(mapName) && !(ADDED_KEY in value) &&
      (schema.maxProperties === undefined || Object.keys(value).length < schema.maxProperties) && !added.length;
    if (addable) added.push({ field: `${path}.${ADDED_KEY} (added)`, segments: [...segments, ADDED_KEY], value: ADDED_VALUE, rank: -1, order: 0 });
    for (const name of Object.keys(value).sort()) visit(name, s);
  }
}

function isSchema(v: unknown): v is OpenApiSchema {
  return typeof v === 'object' && v !== null;
}

/**
 * The schema of `spec` for `version` of the CustomResourceDefinition object `crd` (undefined when it has none, e.g.
 * `x-kubernetes-preserve-unknown-fields` at the top).
 */
export function specSchemaOf(crd: KubeObject, version: string): OpenApiSchema | undefined {
  const versions = ((crd as { spec?: { versions?: Array<{ name?: string; schema?: { openAPIV3Schema?: OpenApiSchema } }> } }).spec?.versions) ?? [];
  const v = versions.find((x) => x.name === version);
  return v?.schema?.openAPIV3Schema?.properties?.spec;
}

/**
 * The merge patches of `parts` as one. Their paths are distinct leaves (a derived mutation never touches a field
 * twice), so a deep merge loses nothing; the result shares no object with `parts`.
 */
export function mergeParts(parts: readonly SpecMutationPart[]): Record<string, unknown> {
  const merge = (into: Record<string, unknown>, from: Record<string, unknown>) => {
    for (const [k, v] of Object.entries(from)) {
      const cur = into[k];
      if (isRecord(v) && isRecord(cur)) merge(cur, v);
      else into[k] = structuredClone(v);
    }
  };
  const out: Record<string, unknown> = {};
  for (const p of parts) merge(out, p.patch);
  return out;
}
