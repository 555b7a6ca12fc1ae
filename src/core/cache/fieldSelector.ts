/**
 * Field selectors in the Kubernetes string syntax (`fields.ParseSelector`): terms `field=value`, `field==value`
 * or `field!=value` joined by commas (all must hold); in a value, `\,`, `\=` and `\\` stand for `,`, `=` and `\`
 * (as `fields.EscapeValue` writes them). An empty selector matches everything.
 *
 * Which fields a selector may name depends on the resource (the API server's field label conversion); every
 * resource supports `metadata.name` and `metadata.namespace`. {@link FieldSelector.matchesKey} evaluates those two
 * from an object's key and says `undefined` (not known here) when a term names any other field.
 */

/** A field selector that does not parse (the message quotes it and says what is wrong). */
export class FieldSelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FieldSelectorError';
  }
}

/** One term of a field selector: `field=value` (`==` too) or `field!=value`, the value unescaped. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

/** A parsed field selector: its terms, all of which must hold. */
export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  /** True when the selector has no term (matches everything). */
  readonly empty: boolean;
  /**
   * Whether an object with this namespace ("" for a cluster-scoped one) and name matches; undefined when a term
   * names a field other than metadata.name / metadata.namespace.
   */
  matchesKey(namespace: string, name: string): boolean | undefined;
}

/** Splits on separators not escaped by a backslash; keeps the escapes (they are undone per value). */
function splitUnescaped(input: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!;
    if (c === '\\' && i + 1 < input.length) {
      cur += c + input[i + 1];
      i++;
    } else if (c === sep) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  return parts;
}

function unescapeValue(v: string, input: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (c === '\\') {
      const n = v[i + 1];
      if (n !== '\\' && n !== ',' && n !== '=') throw new FieldSelectorError(`invalid escape sequence in field selector ${JSON.stringify(input)}`);
      out += n;
      i++;
    } else if (c === ',' || c === '=') throw new FieldSelectorError(`unescaped ${c} in a value of field selector ${JSON.stringify(input)}`);
    else out += c;
  }
  return out;
}

/** Parses a field selector; throws {@link FieldSelectorError} on bad syntax (a term without an operator). */
export function parseFieldSelector(input: string): FieldSelector {
  const reqs: FieldRequirement[] = [];
  if (input.trim() !== '') {
    for (const term of splitUnescaped(input, ',')) {
      // The operator is the first unescaped "!=", "==" or "=" (fields.ParseSelector tries them in that order).
      let m: { at: number; op: '!=' | '==' | '=' } | undefined;
      for (let i = 0; i < term.length && !m; i++) {
        if (term[i] === '\\') {
          i++;
          continue;
        }
        if (term.startsWith('!=', i)) m = { at: i, op: '!=' };
        else if (term.startsWith('==', i)) m = { at: i, op: '==' };
        else if (term[i] === '=') m = { at: i, op: '=' };
      }
      if (!m) throw new FieldSelectorError(`invalid field selector ${JSON.stringify(input)}: term ${JSON.stringify(term)} has no =, == or !=`);
      const field = term.slice(0, m.at).trim();
      if (field === '') throw new FieldSelectorError(`invalid field selector ${JSON.stringify(input)}: a term has no field`);
      reqs.push({ field, operator: m.op === '!=' ? '!=' : '=', value: unescapeValue(term.slice(m.at + m.op.length), input) });
    }
  }
  return {
    requirements: reqs,
    empty: reqs.length === 0,
    matchesKey(namespace, name) {
      let all = true;
      for (const r of reqs) {
        const v = r.field === 'metadata.name' ? name : r.field === 'metadata.namespace' ? namespace : undefined;
        if (v === undefined) return undefined;
        if ((v === r.value) !== (r.operator === '=')) all = false;
      }
      return all;
    },
  };
}
