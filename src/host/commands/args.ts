/**
 * Command arguments and results. Every command accepts one optional argument
 * and resolves to a {@link CommandResult}, so it is scriptable (and testable
 * from the extension-host suite) exactly as it is clickable:
 *
 * - from a tree: the element itself (it carries `resource` and `key`);
 * - from code: `{ key: "namespace/name", resource: "plural.group", … }` plus
 *   command-specific fields;
 * - from the palette: nothing, and the command asks (a quick pick).
 *
 * A modal confirmation (strip finalizers) is skipped only when the argument
 * says `{ confirmed: true }`: an explicit opt-in meant for tests and scripts.
 */
import type { ObjectKey } from '../../core/k8s/keys.ts';
import { isRecord } from '../../core/record.ts';

/** A command that did not do its job, and why. */
export interface Failure {
  readonly ok: false;
  readonly reason: FailureReason;
  readonly message: string;
}

export type CommandResult<T extends object = object> = ({ readonly ok: true } & T) | Failure;

export type FailureReason = 'cancelled' | 'notConnected' | 'noLoop' | 'notFound' | 'invalidArgument' | 'untrusted' | 'loopRunning' | 'conflict' | 'error';

export function fail(reason: FailureReason, message: string): Failure {
  return { ok: false, reason, message };
}

export function isFailure(x: unknown): x is Failure {
  return typeof x === 'object' && x !== null && (x as { ok?: unknown }).ok === false;
}

/** The object a command acts on. */
export interface ObjectTarget {
  readonly resource: string;
  readonly key: ObjectKey;
  /** A finalizer, when the argument was a finalizer element or named one. */
  readonly finalizer?: string;
}

/** The object target of an argument (a tree element or `{ key, resource }`), if it names one. */
export function targetOf(arg: unknown): ObjectTarget | undefined {
  if (!isRecord(arg)) return undefined;
  const key = arg.key;
  const resource = arg.resource;
  if (typeof key !== 'string' || !key || typeof resource !== 'string' || !resource) return undefined;
  const finalizer = typeof arg.finalizer === 'string' && arg.finalizer ? arg.finalizer : undefined;
  return { resource, key, ...(finalizer ? { finalizer } : {}) };
}

/** A key given without a resource (`{ key }`): commands on the loop's keys accept it. */
export function keyOf(arg: unknown): ObjectKey | undefined {
  if (!isRecord(arg)) return undefined;
  return typeof arg.key === 'string' && arg.key ? arg.key : undefined;
}

export function boolArg(arg: unknown, name: string): boolean | undefined {
  if (!isRecord(arg)) return undefined;
  const v = arg[name];
  return typeof v === 'boolean' ? v : undefined;
}

export function stringArg(arg: unknown, name: string): string | undefined {
  if (!isRecord(arg)) return undefined;
  const v = arg[name];
  return typeof v === 'string' ? v : undefined;
}

export function stringArrayArg(arg: unknown, name: string): string[] | undefined {
  if (!isRecord(arg)) return undefined;
  const v = arg[name];
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
}

/** True only for an explicit `{ confirmed: true }`. */
export function isConfirmed(arg: unknown): boolean {
  return boolArg(arg, 'confirmed') === true;
}

/**
 * What the object picker's input suggests typing, from the keys it offers: `namespace/name` when every offered
 * object is namespaced, `name` when every one is cluster-scoped (their keys have no slash), both otherwise.
 */
export function keyPlaceholder(keys: readonly string[]): string {
  const namespaced = keys.filter((k) => k.includes('/')).length;
  return namespaced === keys.length ? 'namespace/name' : namespaced === 0 ? 'name' : 'namespace/name, or name for a cluster-scoped object';
}
