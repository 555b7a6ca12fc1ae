import { isNativeError } from 'node:util/types';
import { maskSecret } from '../k8s/secretMask.ts';

/** How many characters of a thrown string, or of a thrown object's JSON, a message shows. */
const SHOWN_CHARS = 80;

function short(text: string): string {
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text;
}

/**
 * Whether `e` is an Error, also one made in another realm (a `vm` context, a worker's structured clone): only then
 * does it carry a message and a stack of its own.
 */
export function isErrorValue(e: unknown): e is Error {
  return e instanceof Error || isNativeError(e);
}

/**
 * A thrown value that is not an Error, for a message, on one line: a string quoted and cut to 80 characters
 * (`the string "not ready"`), a number, boolean or bigint as written, null and undefined by name, an object or array
 * as its JSON cut to 80 characters with a Secret's values masked (`the object {"code":1}`), one JSON cannot show (a
 * cycle, a function) by its constructor's name. Never throws; shows nothing a getter computes beyond what
 * JSON.stringify reads.
 */
export function thrownValueText(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return `the string ${JSON.stringify(short(v))}`;
    case 'number':
    case 'boolean':
      return `the ${typeof v} ${String(v)}`;
    case 'bigint':
      return `the bigint ${short(String(v))}n`;
    case 'undefined':
      return 'undefined';
    case 'symbol':
      return `a symbol${v.description ? ` (${JSON.stringify(short(v.description))})` : ''}`;
    case 'function':
      return `a function${v.name ? ` (${short(v.name)})` : ''}`;
  }
  if (v === null) return 'null';
  const what = Array.isArray(v) ? 'the array' : 'the object';
  let json: string | undefined;
  try {
    json = JSON.stringify(maskSecret(v), (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
  } catch {
    json = undefined; // a cycle, a throwing toJSON or getter
  }
  if (json !== undefined) return `${what} ${short(json)}`;
  let name: string | undefined;
  try {
    const ctor = (Object.getPrototypeOf(v) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    name = typeof ctor === 'string' && ctor ? ctor : undefined;
  } catch {
    name = undefined;
  }
  return `an object${name ? ` (${short(name)})` : ''} that JSON cannot show`;
}

/**
 * The message for a reconciler that threw `v`, not an Error (`throw 'not ready'`, `throw { code: 1 }`): what it threw
 * ({@link thrownValueText}) and how to keep the message and stack. Still a failed reconcile: retried with backoff.
 */
export function nonErrorThrowMessage(v: unknown): string {
  return `reconcile() threw ${thrownValueText(v)}, which is not an Error: throw an Error (new Error('…')) so the message and stack are kept (it is still a failed reconcile, retried with backoff)`;
}
