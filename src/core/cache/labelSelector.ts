/**
 * Label selectors in the Kubernetes string syntax (`labels.Parse`):
 * `a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (x,y)`, `a notin (x,y)`, `a>1`, `a<1`,
 * joined by commas (all must hold). `!=` and `notin` also match objects that
 * lack the key, as on the server. An empty selector matches everything.
 */

export type SelectorOperator = 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

/** One requirement. `=`/`==` are `in` with one value, `!=` is `notin` with one value. */
export interface Requirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  readonly values: readonly string[];
}

export interface LabelSelector {
  readonly requirements: readonly Requirement[];
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
  /** True when the selector has no requirement (matches everything). */
  readonly empty: boolean;
  toString(): string;
}

/** The wire form of a selector in a resource spec (metav1.LabelSelector). */
export interface LabelSelectorSpec {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }>;
}

export class LabelSelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LabelSelectorError';
  }
}

const KEY = /^([A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

function requirementMatches(r: Requirement, labels: Readonly<Record<string, string>> | undefined): boolean {
  const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = has ? labels![r.key]! : undefined;
  switch (r.operator) {
    case 'in':
      return has && r.values.includes(v!);
    case 'notin':
      return !has || !r.values.includes(v!);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || !/^-?\d+$/.test(v!)) return false;
      const n = Number(v);
      const bound = Number(r.values[0]);
      return r.operator === 'gt' ? n > bound : n < bound;
    }
  }
}

function requirementToString(r: Requirement): string {
  switch (r.operator) {
    case 'in':
      return r.values.length === 1 ? `${r.key}=${r.values[0]}` : `${r.key} in (${r.values.join(',')})`;
    case 'notin':
      return r.values.length === 1 ? `${r.key}!=${r.values[0]}` : `${r.key} notin (${r.values.join(',')})`;
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'gt':
      return `${r.key}>${r.values[0]}`;
    case 'lt':
      return `${r.key}<${r.values[0]}`;
  }
}

function makeSelector(requirements: Requirement[]): LabelSelector {
  return {
    requirements,
    empty: requirements.length === 0,
    matches: (labels) => requirements.every((r) => requirementMatches(r, labels)),
    toString: () => requirements.map(requirementToString).join(','),
  };
}

/** Matches everything. */
export const everything: LabelSelector = makeSelector([]);

function checkKey(key: string, input: string): string {
  if (!KEY.test(key) || key.length > 317) throw new LabelSelectorError(`invalid label key ${JSON.stringify(key)} in selector ${JSON.stringify(input)}`);
  return key;
}

function checkValue(value: string, input: string): string {
  if (!VALUE.test(value) || value.length > 63) throw new LabelSelectorError(`invalid label value ${JSON.stringify(value)} in selector ${JSON.stringify(input)}`);
  return value;
}

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(input: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(input.slice(start, i));
      start = i + 1;
    }
    if (depth < 0) throw new LabelSelectorError(`unbalanced ")" in selector ${JSON.stringify(input)}`);
  }
  if (depth !== 0) throw new LabelSelectorError(`unbalanced "(" in selector ${JSON.stringify(input)}`);
  parts.push(input.slice(start));
  return parts;
}

/** Parses a selector string; throws {@link LabelSelectorError} on bad syntax. */
export function parseLabelSelector(input: string): LabelSelector {
  const trimmed = input.trim();
  if (trimmed === '') return everything;
  const reqs: Requirement[] = [];
  for (const raw of splitTopLevel(trimmed)) {
    const part = raw.trim();
    if (part === '') throw new LabelSelectorError(`empty requirement in selector ${JSON.stringify(input)}`);
    let m: RegExpMatchArray | null;
    if ((m = part.match(/^!\s*([^\s=!<>()]+)$/))) {
      reqs.push({ key: checkKey(m[1]!, input), operator: '!', values: [] });
    } else if ((m = part.match(/^([^\s=!<>()]+)\s+(in|notin)\s*\(([^()]*)\)$/))) {
      // As labels.Parse: an empty set is an error ("for 'in', 'notin' operators, values set can't be empty").
      if (m[3]!.trim() === '') throw new LabelSelectorError(`"${m[2]}" needs at least one value in selector ${JSON.stringify(input)}`);
      const values = m[3]!.split(',').map((v) => checkValue(v.trim(), input));
      reqs.push({ key: checkKey(m[1]!, input), operator: m[2] as 'in' | 'notin', values: [...new Set(values)] });
    } else if ((m = part.match(/^([^\s=!<>()]+)\s*(==|=|!=)\s*([^\s=!<>(),]*)$/))) {
      const value = checkValue(m[3]!, input);
      reqs.push({ key: checkKey(m[1]!, input), operator: m[2] === '!=' ? 'notin' : 'in', values: [value] });
    } else if ((m = part.match(/^([^\s=!<>()]+)\s*([<>])\s*(-?\d+)$/))) {
      reqs.push({ key: checkKey(m[1]!, input), operator: m[2] === '>' ? 'gt' : 'lt', values: [m[3]!] });
    } else if ((m = part.match(/^([^\s=!<>()]+)$/))) {
      reqs.push({ key: checkKey(m[1]!, input), operator: 'exists', values: [] });
    } else {
      throw new LabelSelectorError(`cannot parse requirement ${JSON.stringify(part)} in selector ${JSON.stringify(input)}`);
    }
  }
  return makeSelector(reqs);
}

/** Builds a selector from a resource's `metav1.LabelSelector` (matchLabels AND matchExpressions). */
export function labelSelectorFromSpec(spec: LabelSelectorSpec): LabelSelector {
  const reqs: Requirement[] = [];
  for (const [k, v] of Object.entries(spec.matchLabels ?? {})) reqs.push({ key: k, operator: 'in', values: [v] });
  for (const e of spec.matchExpressions ?? []) {
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (!e.values || e.values.length === 0) throw new LabelSelectorError(`operator ${e.operator} on ${e.key} needs values`);
        reqs.push({ key: e.key, operator: e.operator === 'In' ? 'in' : 'notin', values: [...e.values] });
        break;
      case 'Exists':
      case 'DoesNotExist':
        // As metav1.LabelSelectorAsSelector: Exists / DoesNotExist take no values.
        if (e.values && e.values.length > 0) throw new LabelSelectorError(`operator ${e.operator} on ${e.key} takes no values`);
        reqs.push({ key: e.key, operator: e.operator === 'Exists' ? 'exists' : '!', values: [] });
        break;
      default:
        throw new LabelSelectorError(`unknown selector operator ${JSON.stringify((e as { operator: unknown }).operator)}`);
    }
  }
  return makeSelector(reqs);
}
