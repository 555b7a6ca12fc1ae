/**
 * Checks of the arguments a reconciler passes to its client (ctx.client), so that a call written another way
 * (`create(gvr, namespace, obj)`, a name where an object belongs) fails at once with the expected signature instead
 * of a TypeError deep inside Reconcile Lab (`Cannot read properties of undefined (reading 'name')`). Every check
 * throws a TypeError naming the method, its signature and what was passed; none does I/O.
 */

/** The client's methods and their signatures, as a reconciler calls them. */
export const CLIENT_SIGNATURES = {
  get: 'get(resource, namespace, name, signal?)',
  list: 'list(resource, namespace, { labelSelector?, fieldSelector?, signal? }?)',
  create: 'create(resource, object, { signal?, dryRun?, fieldManager? }?)',
  update: 'update(resource, object, options?)',
  updateStatus: 'updateStatus(resource, object, options?)',
  patch: "patch(resource, namespace, name, 'merge' | 'json' | 'strategic', patch, options?)",
  patchStatus: "patchStatus(resource, namespace, name, 'merge' | 'json' | 'strategic', patch, options?)",
  apply: 'apply(resource, object, { fieldManager, force?, signal? })',
  delete: 'delete(resource, namespace, name, options?)',
} as const;

export type ClientMethod = keyof typeof CLIENT_SIGNATURES;

/** A short rendering of a value for an error message (never more than 60 characters). */
function shown(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'object') return Array.isArray(v) ? 'an array' : `an object with ${Object.keys(v).slice(0, 4).join(', ') || 'no fields'}`;
  return `${typeof v} ${String(v).slice(0, 40)}`;
}

function fail(method: ClientMethod, what: string, got: unknown, hint = ''): never {
  throw new TypeError(`ctx.client.${CLIENT_SIGNATURES[method]}: ${what}, got ${shown(got)}${hint}`);
}

/** `resource` is a { group, version, resource } (ctx.primary, or one written out). */
export function checkResource(method: ClientMethod, gvr: unknown): void {
  const g = gvr as { group?: unknown; version?: unknown; resource?: unknown } | undefined;
  if (!g || typeof g !== 'object' || typeof g.resource !== 'string' || typeof g.version !== 'string' || (g.group !== undefined && typeof g.group !== 'string')) {
    fail(method, "the first argument is the resource, { group, version, resource } (ctx.primary, or e.g. { group: '', version: 'v1', resource: 'configmaps' })", gvr);
  }
}

/** `object` (create, update, updateStatus, apply) is an object with metadata naming it. */
export function checkObject(method: ClientMethod, obj: unknown): void {
  const o = obj as { metadata?: { name?: unknown; generateName?: unknown } } | undefined;
  if (!o || typeof o !== 'object' || Array.isArray(o) || !o.metadata || typeof o.metadata !== 'object') {
    fail(method, 'the second argument is the object itself, with its metadata (name, namespace)', obj, typeof obj === 'string' ? ' (the namespace goes in object.metadata.namespace)' : '');
  }
  const m = o!.metadata!;
  if (typeof m.name !== 'string' && !(method === 'create' && typeof m.generateName === 'string')) {
    fail(method, `the object needs metadata.name${method === 'create' ? ' (or metadata.generateName)' : ''}`, m.name);
  }
}

/** `namespace` and `name` (get, patch, delete): a namespace or undefined (cluster-scoped), and a name. */
export function checkNamespaceAndName(method: ClientMethod, namespace: unknown, name: unknown): void {
  if (namespace !== undefined && namespace !== null && typeof namespace !== 'string') fail(method, 'the second argument is the namespace (undefined for a cluster-scoped resource)', namespace);
  if (typeof name !== 'string' || name === '') fail(method, 'the third argument is the name', name);
}
