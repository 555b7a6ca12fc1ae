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
 *   renamed reference would only make both runs wait for an object that does not exist), and fields naming a namespace
 *   (`namespace`, `<prefix>Namespace`). An `enum` gives its next value; bounds (`minimum`/`maximum`,
 *   `exclusiveMinimum`/`exclusiveMaximum`, `maxLength`) are honoured.
 * - One key is also added to the first string map met (Acto adds entries too: a controller that merges a map into its
 *   child and never prunes it only shows when the key is taken away again, which the history check does), named
 *   {@link ADDED_KEY} with value {@link ADDED_VALUE}, listed first among the fields as `<path>.<key> (added)`; not to a
 *   map whose name says it selects (`selector`, `matchLabels`, `nodeSelector`: adding there changes what is selected,
 *   not a setting), nor to one at its `maxProperties`, nor to one whose values have a `pattern`, `format` or `enum`.
 *   It does not count towards the limit below.
 * - At most {@link MAX_MUTATED_FIELDS} fields, as ONE JSON merge patch of `spec`, plus their dotted paths for the report.
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
  const fields: string[] = [];
  // A reference's name (and the rest of a `{name, key, namespace}` reference object) is left alone.
  const refs = specReferences(object).map((r) => r.path);
  const isReference = (p: string) => refs.some((r) => p === r || (r.endsWith('.name') && p.startsWith(r.slice(0, -'name'.length))));
  const parts: SpecMutationPart[] = [];
  const patch = walk(specSchema, spec, 'spec', [], fields, parts, isReference);
  if (!patch || !fields.length) return { skipped: 'no spec field the schema lets us change safely (set scalar fields only; arrays, patterns and formats are left alone)' };
  return { patch: { spec: patch }, fields, parts };
}

function walk(schema: OpenApiSchema, value: Record<string, unknown>, path: string, segments: readonly string[], fields: string[], parts: SpecMutationPart[], isReference: (path: string) => boolean): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  const visit = (name: string, s: OpenApiSchema) => {
    if (fields.filter((f) => !f.endsWith(' (added)')).length >= MAX_MUTATED_FIELDS) return;
    const v = value[name];
    if (v === undefined || v === null) return;
    const p = `${path}.${name}`;
    if (s.type === 'object' || (s.type === undefined && (s.properties || isSchema(s.additionalProperties)))) {
      if (!isRecord(v)) return;
      const inner = walk(s, v, p, [...segments, name], fields, parts, isReference);
      if (inner) out[name] = inner;
      return;
    }
    // A field naming a namespace is like a reference: another valid value cannot be told (and a cluster-scoped
    // copy's is pointed at its scratch namespace whatever it says).
    if (s.type === 'array' || s.type === undefined || isReference(p) || NAMESPACE_KEY.test(name)) return;
    const changed = mutateScalar(s, v);
    if (changed === undefined || changed === v) return;
    out[name] = changed;
    fields.push(p);
    let one: Record<string, unknown> = { [name]: changed };
    for (const seg of [...segments].reverse()) one = { [seg]: one };
    parts.push({ field: p, patch: { spec: one } });
  };
  if (schema.properties) for (const name of Object.keys(schema.properties).sort()) visit(name, schema.properties[name]!);
  else if (isSchema(schema.additionalProperties)) {
    const s = schema.additionalProperties;
    const mapName = segments[segments.length - 1] ?? '';
    const addable = s.type === 'string' && !s.pattern && !s.format && !s.enum && !SELECTING_MAP.test(mapName) && !(ADDED_KEY in value) &&
      (schema.maxProperties === undefined || Object.keys(value).length < schema.maxProperties) && !fields.some((f) => f.endsWith(' (added)'));
    if (addable) {
      out[ADDED_KEY] = ADDED_VALUE;
      const field = `${path}.${ADDED_KEY} (added)`;
      fields.unshift(field);
      let one: Record<string, unknown> = { [ADDED_KEY]: ADDED_VALUE };
      for (const seg of [...segments].reverse()) one = { [seg]: one };
      parts.unshift({ field, patch: { spec: one } });
    }
    for (const name of Object.keys(value).sort()) visit(name, s);
  }
  return Object.keys(out).length ? out : undefined;
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
