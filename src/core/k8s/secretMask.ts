/**
 * Secret values stay out of what Reconcile Lab shows (YAML documents, diffs, dry-run plans, reports, the CLI's
 * output) unless the person asks for one Secret explicitly. A Secret's `data` and `stringData` values, and its
 * `kubectl.kubernetes.io/last-applied-configuration` annotation (which repeats them), are replaced by
 * {@link MASK}; in a before/after pair a value that changed shows as `*** (before)` / `*** (after)`, as
 * `kubectl diff` does, so a diff still says which keys changed without saying what they hold. Keys stay visible.
 *
 * Only the displayed copy is masked: comparisons (cache vs server) use the real objects. Pure; never mutates
 * its input.
 */

export const MASK = '***';
export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * A core/v1 Secret (or something claiming to be one). Items of a LIST come without `kind`: an object without
 * one is taken for a Secret when it has a string `type` and `data` or `stringData`, as every stored Secret has
 * (the server defaults `type` to Opaque) and no other core kind does. Erring towards masking is the safe side.
 */
export function isSecret(value: unknown): boolean {
  if (!isObj(value)) return false;
  if (value.kind === 'Secret') return value.apiVersion === undefined || value.apiVersion === 'v1';
  return value.kind === undefined && typeof value.type === 'string' && ('data' in value || 'stringData' in value);
}

function maskMap(mine: unknown, other: unknown, side: 'before' | 'after' | undefined): unknown {
  if (!isObj(mine)) return mine;
  const out: Obj = {};
  for (const [k, v] of Object.entries(mine)) {
    const same = side === undefined || (isObj(other) && Object.prototype.hasOwnProperty.call(other, k) && other[k] === v);
    out[k] = same ? MASK : `${MASK} (${side})`;
  }
  return out;
}

function maskOne(value: unknown, other: unknown, side: 'before' | 'after' | undefined): unknown {
  if (!isSecret(value)) return value;
  const o = { ...(value as Obj) };
  const otherObj = isSecret(other) ? (other as Obj) : undefined;
  for (const field of ['data', 'stringData']) {
    if (field in o) o[field] = maskMap(o[field], otherObj?.[field], side);
  }
  const meta = o.metadata;
  if (isObj(meta) && isObj(meta.annotations) && LAST_APPLIED in meta.annotations) {
    const mine = meta.annotations[LAST_APPLIED];
    const theirs = isObj(otherObj?.metadata) ? (otherObj.metadata as Obj).annotations : undefined;
    const same = side === undefined || (isObj(theirs) && theirs[LAST_APPLIED] === mine);
    o.metadata = { ...meta, annotations: { ...meta.annotations, [LAST_APPLIED]: same ? MASK : `${MASK} (${side})` } };
  }
  return o;
}

/** `value` with its Secret values masked (a copy; anything that is not a Secret is returned as is). */
export function maskSecret<T>(value: T): T {
  return maskOne(value, undefined, undefined) as T;
}

/**
 * Both sides of a comparison masked; a value that differs between them (or exists on one side only) is
 * marked `*** (before)` / `*** (after)`.
 */
export function maskSecretPair<A, B>(before: A, after: B): [A, B] {
  return [maskOne(before, after, 'before') as A, maskOne(after, before, 'after') as B];
}

/**
 * A body known to be about a Secret (a patch or apply body sent to the `secrets` resource, which may carry no
 * `kind`): its `data` / `stringData` values and last-applied annotation masked. Strings (a JSON patch as text)
 * and arrays (JSON patch operations) are masked whole, since their values may be Secret data.
 */
export function maskSecretBody(body: unknown): unknown {
  if (typeof body === 'string' || Array.isArray(body)) return MASK;
  if (!isObj(body)) return body;
  const out = maskOne({ ...body, kind: 'Secret', apiVersion: 'v1' }, undefined, undefined) as Obj;
  for (const k of ['kind', 'apiVersion']) {
    if (k in body) out[k] = body[k];
    else delete out[k];
  }
  return out;
}

// The API paths of core/v1 Secrets: the collection (all namespaces or one) and one Secret (and its subresources).
const SECRET_PATH = /^\/api\/v1\/(?:namespaces\/[^/?]+\/)?secrets(?:[/?]|$)/;

/** Whether `path`, an API request path (query allowed), addresses core/v1 Secrets. */
export function isSecretPath(path: string): boolean {
  return SECRET_PATH.test(path);
}

// A field error's value as the API server quotes it (Go's %q: a double-quoted string with backslash escapes), or any
// other rendering of a value (%v of a map or a slice) up to the field error's next ": " or the end.
const INVALID_VALUE = /(Invalid value: )(?:"(?:[^"\\]|\\.)*"|[^:"][^]*?(?=: |$))/g;
// Long base64 / hex runs (with a digit, or mixed case): a Secret's `data` value the message carries some other way.
const LONG_OPAQUE = /[A-Za-z0-9+/=_-]{20,}/g;

/**
 * The text of an API server's error about a request to Secrets (a write the server refused: a 422 quotes the whole
 * patched object, every value of the Secret with it) with the values masked: every field error's quoted value
 * (`Invalid value: "***"`), each value `body` (the request body sent, as an object or JSON text) carries in `data` /
 * `stringData` — as sent, base64-encoded (stringData) and decoded (data) — and long base64-looking runs. Over-masks
 * on purpose (a uid in the message may become `***`); keeps the field paths, reasons and the request line. A long run
 * is judged without the public strings in it (the body's `metadata.name`, `namespace` and `generateName`, shown
 * unmasked everywhere else), so `Secret "db-eu-1-credentials" is invalid` keeps the name; a known value is masked
 * even inside one. Pure.
 */
export function maskSecretText(text: string, body?: unknown): string {
  const known = new Set<string>();
  let b = body;
  if (typeof b === 'string') {
    try {
      b = JSON.parse(b);
    } catch {
      b = undefined;
    }
  }
  const add = (v: string) => {
    if (v.length >= 3) known.add(v);
  };
  if (isObj(b)) {
    for (const field of ['data', 'stringData'] as const) {
      const m = b[field];
      if (!isObj(m)) continue;
      for (const v of Object.values(m)) {
        if (typeof v !== 'string') continue;
        add(v);
        if (field === 'stringData') add(Buffer.from(v, 'utf8').toString('base64'));
        else add(Buffer.from(v, 'base64').toString('utf8'));
      }
    }
  }
  const publicNames: string[] = [];
  const meta = isObj(b) ? b['metadata'] : undefined;
  if (isObj(meta)) {
    for (const f of ['name', 'namespace', 'generateName'] as const) {
      const v = meta[f];
      if (typeof v === 'string' && v.length >= 3) publicNames.push(v);
    }
  }
  let out = text.replace(INVALID_VALUE, (_m, head: string) => `${head}"${MASK}"`);
  for (const v of [...known].sort((x, y) => y.length - x.length)) out = out.split(v).join(MASK);
  return out.replace(LONG_OPAQUE, (run) => {
    const rest = publicNames.reduce((r, p) => r.split(p).join(''), run);
    return /[0-9]/.test(rest) || (/[A-Z]/.test(rest) && /[a-z]/.test(rest)) ? MASK : run;
  });
}
