import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import { nullLogger } from '../log.ts';
import { ApiError, isNotFound, type KubeClient, type PatchType, type WriteOptions } from './client.ts';
import { keyFor, type ObjectKey } from './keys.ts';
import { checkNamespaceAndName, checkObject, checkResource } from './clientArgs.ts';
import { deletedByWrite, type GroupVersionResource, type KubeList, type KubeObject, type ResourceInfo } from './objects.ts';
import { resourcePath } from './paths.ts';
import { closestNames } from '../text/closest.ts';
import type { KubeTransport, TransportRequest } from './transport.ts';

/**
 * Writes to a named subresource with PUT (e.g. a Namespace's `/finalize`),
 * which {@link KubeClient} has no verb for. Kept separate so the shared
 * KubeClient contract stays small.
 */
export interface SubresourceWriter {
  /** PUTs `obj` to `<object>/<subresource>`; `obj.metadata.resourceVersion` is the optimistic-lock precondition. */
  updateSubresource(gvr: GroupVersionResource, obj: KubeObject, subresource: string, options?: WriteOptions): Promise<KubeObject>;
}

/** The dynamic client's full surface: every KubeClient verb plus subresource PUT. */
export type DynamicKubeClient = KubeClient & SubresourceWriter;

export interface DynamicClientOptions {
  /** Default `fieldManager` for writes that do not name one. */
  fieldManager?: string;
  /** Page size for `list` (the client follows `continue` tokens until the end). Default 500. */
  pageSize?: number;
  log?: Logger;
}

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

/**
 * A {@link KubeClient} over any resource, speaking REST through a
 * {@link KubeTransport}. Reads always go to the server; `dryRun` sends
 * `dryRun=All`; every failure is an {@link ApiError} (code 0 when the server
 * was not reached). The client holds no resources of its own.
 */
export function createDynamicClient(transport: KubeTransport, options: DynamicClientOptions = {}): DynamicKubeClient {
  const pageSize = options.pageSize ?? 500;
  const log = options.log ?? nullLogger;

  const writeQuery = (o?: WriteOptions, extra?: Record<string, string | boolean | undefined>): TransportRequest['query'] => ({
    dryRun: o?.dryRun ? 'All' : undefined,
    fieldManager: o?.fieldManager ?? options.fieldManager,
    ...extra,
  });

  const nameOf = (obj: KubeObject): string => {
    const name = obj.metadata?.name;
    if (!name) throw new ApiError(0, 'Invalid', 'the object has no metadata.name');
    return name;
  };

  /**
   * Runs a write to `<object>/<subresource>`. The API server answers 404 both when the object is gone and when its
   * resource has no such subresource (a CRD without `subresources.status`): on a 404 the object is read, and when it
   * exists the 404 is rethrown (still a 404) with a message that says which of the two it was.
   */
  async function explainMissingSubresource(gvr: GroupVersionResource, namespace: string | undefined, name: string, subresource: string, signal: AbortSignal | undefined, write: () => Promise<KubeObject>): Promise<KubeObject> {
    try {
      return await write();
    } catch (e) {
      if (!isNotFound(e)) throw e;
      try {
        await client.get(gvr, namespace, name, signal);
      } catch {
        throw e; // the object is gone (or cannot be read): the server's 404 as it is
      }
      const label = gvr.group ? `${gvr.resource}.${gvr.group}` : gvr.resource;
      throw new ApiError(
        404,
        'NotFound',
        `${label} ${keyFor(namespace, name)} exists, but ${label} has no /${subresource} subresource (its CRD does not declare subresources.${subresource}): write .${subresource} with an update or patch of the object itself${subresource === 'status' ? ' (that bumps metadata.generation: leave observedGeneration out of such a status, it could never catch up)' : ''}, or add the subresource to the CRD`,
        (e as ApiError).details,
      );
    }
  }

  const client: DynamicKubeClient = {
    get(gvr, namespace, name, signal) {
      return transport.json<KubeObject>({ method: 'GET', path: resourcePath(gvr, namespace, name), signal });
    },

    async list(gvr, namespace, o) {
      const items: KubeObject[] = [];
      let cont: string | undefined;
      let last: KubeList | undefined;
      do {
        last = await transport.json<KubeList>({
          method: 'GET',
          path: resourcePath(gvr, namespace),
          query: { labelSelector: o?.labelSelector, fieldSelector: o?.fieldSelector, limit: pageSize, continue: cont },
          signal: o?.signal,
        });
        items.push(...(last.items ?? []));
        cont = last.metadata?.continue || undefined;
      } while (cont);
      return { apiVersion: last.apiVersion, kind: last.kind, metadata: { resourceVersion: last.metadata?.resourceVersion }, items };
    },

    create(gvr, obj, o) {
      return transport.json<KubeObject>({ method: 'POST', path: resourcePath(gvr, obj.metadata.namespace), query: writeQuery(o), body: obj, signal: o?.signal, onWarnings: o?.onWarnings });
    },

    update(gvr, obj, o) {
      return transport.json<KubeObject>({ method: 'PUT', path: resourcePath(gvr, obj.metadata.namespace, nameOf(obj)), query: writeQuery(o), body: obj, signal: o?.signal, onWarnings: o?.onWarnings });
    },

    updateStatus(gvr, obj, o) {
      return client.updateSubresource(gvr, obj, 'status', o);
    },

    updateSubresource(gvr, obj, subresource, o) {
      const name = nameOf(obj);
      return explainMissingSubresource(gvr, obj.metadata.namespace, name, subresource, o?.signal, () =>
        transport.json<KubeObject>({
          method: 'PUT',
          path: resourcePath(gvr, obj.metadata.namespace, name, subresource),
          query: writeQuery(o),
          body: obj,
          signal: o?.signal,
          onWarnings: o?.onWarnings,
        }),
      );
    },

    patch(gvr, namespace, name, type, patch, o) {
      const send = () =>
        transport.json<KubeObject>({
          method: 'PATCH',
          path: resourcePath(gvr, namespace, name, o?.subresource),
          query: writeQuery(o),
          body: patch,
          contentType: PATCH_CONTENT_TYPES[type],
          signal: o?.signal,
          onWarnings: o?.onWarnings,
        });
      return o?.subresource ? explainMissingSubresource(gvr, namespace, name, o.subresource, o.signal, send) : send();
    },

    patchStatus(gvr, namespace, name, type, patch, o) {
      return client.patch(gvr, namespace, name, type, patch, { ...o, subresource: 'status' });
    },

    apply(gvr, obj, o) {
      return transport.json<KubeObject>({
        method: 'PATCH',
        path: resourcePath(gvr, obj.metadata.namespace, nameOf(obj)),
        // JSON is YAML: the apply content type accepts a JSON body.
        query: writeQuery(o, { fieldManager: o.fieldManager, force: o.force ? true : undefined }),
        body: obj,
        contentType: 'application/apply-patch+yaml',
        signal: o.signal,
        onWarnings: o.onWarnings,
      });
    },

    async delete(gvr, namespace, name, o) {
      const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
      if (o?.preconditions) body.preconditions = o.preconditions;
      if (o?.dryRun) body.dryRun = ['All'];
      const res = await transport.json<KubeObject | { kind?: string }>({
        method: 'DELETE',
        path: resourcePath(gvr, namespace, name),
        query: { dryRun: o?.dryRun ? 'All' : undefined },
        body,
        signal: o?.signal,
        onWarnings: o?.onWarnings,
      });
      if (res && typeof res === 'object' && res.kind !== 'Status' && 'metadata' in res) return res as KubeObject;
      return undefined;
    },

    async discover(signal) {
      const groupVersions: Array<{ group: string; version: string; preferred: boolean }> = [];
      const core = await transport.json<{ versions?: string[] }>({ method: 'GET', path: '/api', signal });
      for (const v of core.versions ?? []) groupVersions.push({ group: '', version: v, preferred: v === core.versions?.[0] });
      const groups = await transport.json<{ groups?: Array<{ name: string; versions: Array<{ version: string }>; preferredVersion?: { version: string } }> }>({ method: 'GET', path: '/apis', signal });
      for (const g of groups.groups ?? []) {
        const preferred = g.preferredVersion?.version ?? g.versions[0]?.version;
        for (const v of g.versions) groupVersions.push({ group: g.name, version: v.version, preferred: v.version === preferred });
      }
      const lists = await Promise.all(
        groupVersions.map(async (gv) => {
          const path = gv.group ? `/apis/${gv.group}/${gv.version}` : `/api/${gv.version}`;
          try {
            const rl = await transport.json<{ resources?: Array<{ name: string; kind: string; namespaced: boolean; verbs?: string[] }> }>({ method: 'GET', path, signal });
            return { gv, resources: rl.resources ?? [] };
          } catch (e) {
            // An unavailable aggregated API must not hide every other group (kubectl behaves the same way).
            log.warn('discovery failed for a group version', { groupVersion: path, error: (e as Error).message });
            return { gv, resources: [] };
          }
        }),
      );
      const preferredFirst: ResourceInfo[] = [];
      const others: ResourceInfo[] = [];
      for (const { gv, resources } of lists) {
        const subs = new Map<string, string[]>();
        for (const r of resources) {
          const slash = r.name.indexOf('/');
          if (slash > 0) {
            const parent = r.name.slice(0, slash);
            subs.set(parent, [...(subs.get(parent) ?? []), r.name.slice(slash + 1)]);
          }
        }
        for (const r of resources) {
          if (r.name.includes('/') || !r.verbs?.includes('list')) continue;
          const info: ResourceInfo = { group: gv.group, version: gv.version, resource: r.name, kind: r.kind, namespaced: r.namespaced };
          info.subresources = subs.get(r.name) ?? [];
          (gv.preferred ? preferredFirst : others).push(info);
        }
      }
      return [...preferredFirst, ...others];
    },
  };
  return client;
}

/** The write verbs a {@link WriteRecord} can carry. */
export type WriteVerb = 'create' | 'update' | 'patch' | 'apply' | 'delete';

/**
 * One write sent through a {@link recordingClient}, reported after the server
 * answered (successfully or not). `before` is the server's object read just
 * before the write (undefined when it did not exist or could not be read);
 * `after` is the server's answer (for a dry-run: what would have been stored).
 */
export interface WriteRecord {
  verb: WriteVerb;
  /** "status", "finalize", … when the write targeted a subresource. */
  subresource?: string;
  gvr: GroupVersionResource;
  namespace?: string;
  name: string;
  key: ObjectKey;
  dryRun: boolean;
  patchType?: PatchType;
  /** The patch body, for patch/apply. */
  patch?: unknown;
  resourceVersionBefore?: string;
  resourceVersionAfter?: string;
  /** The write (update, patch or apply) removed the last finalizer of a Terminating object: the server deleted it
   * (dry run: would delete it); `resourceVersionAfter` is then its last resourceVersion ({@link deletedByWrite}). */
  deleted?: boolean;
  /**
   * The resourceVersion precondition the write carried, when it carried one: an update's `metadata.resourceVersion`,
   * a merge or strategic-merge patch's `metadata.resourceVersion`, a JSON patch's `test` of `/metadata/resourceVersion`.
   * Undefined for an unconditional write. When it equals `before`'s resourceVersion the writer had read the latest
   * object (a stale copy would have got 409 Conflict).
   */
  sentResourceVersion?: string;
  before?: KubeObject;
  after?: KubeObject;
  outcome: 'ok' | 'error';
  error?: { code: number; reason: string; message: string };
  /** The server's warnings about the write (HTTP `Warning` headers, e.g. `unknown field "spec.x"`). */
  warnings?: string[];
  /** Clock time at which the write started, and its duration. */
  startedAt: number;
  durationMs: number;
}

/** The resourceVersion precondition of an update's object or a patch's body ({@link WriteRecord.sentResourceVersion}). */
export function sentResourceVersionOf(body: unknown, patchType?: PatchType): string | undefined {
  if (patchType === 'json') {
    const ops = Array.isArray(body) ? (body as Array<{ op?: unknown; path?: unknown; value?: unknown }>) : [];
    const test = ops.find((op) => op?.op === 'test' && op.path === '/metadata/resourceVersion');
    return typeof test?.value === 'string' && test.value ? test.value : undefined;
  }
  const rv = (body as { metadata?: { resourceVersion?: unknown } } | null | undefined)?.metadata?.resourceVersion;
  return typeof rv === 'string' && rv ? rv : undefined;
}

/** A recorded write's error as views show it: "409 Conflict: …"; an error with no HTTP answer (code 0) has no code. */
export function writeErrorText(e: { readonly code: number; readonly reason: string; readonly message: string }): string {
  return `${e.code ? `${e.code} ` : ''}${e.reason}: ${e.message}`;
}

/**
 * A call of a reconciler's client (ctx.client) on a resource the cluster does not serve: a typo in the
 * `{ group, version, resource }` it passed (`secret` for `secrets`, the kind, a wrong group or version), or a CRD not
 * installed. The API server answers such a call with 404, as it answers for a missing object, so a reconciler that
 * treats 404 as "gone" or "missing" would go on as if the object did not exist; this error has no `code` (as
 * controller-runtime's client answers a kind it cannot map with a NoKindMatchError, which IsNotFound does not match), and
 * its message names the resource and what the cluster does serve.
 */
export class ResourceNotServedError extends Error {
  readonly gvr: GroupVersionResource;
  constructor(message: string, gvr: GroupVersionResource, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ResourceNotServedError';
    this.gvr = gvr;
  }
}

/**
 * Whether `e` is a 404 about the request's path rather than a named object: no metav1.Status ("404 page not found")
 * or one that names no object (`the server could not find the requested resource`). A missing object's (or
 * namespace's) 404 always names it in `details.name`.
 */
function pathNotFound(e: unknown): boolean {
  if (!isNotFound(e)) return false;
  const details = (e as ApiError).details as { name?: unknown } | undefined;
  return !details || typeof details !== 'object' || typeof details.name !== 'string' || details.name === '';
}

/**
 * The message of a {@link ResourceNotServedError} for `method` on `gvr`, from what discovery lists (`served`): the
 * same resource in another version, the plural of a kind or singular given (`secret`, `Secret`), a close name in the
 * group, or that the group is not served at all (its CRD to install).
 */
export function resourceNotServedMessage(method: string, gvr: GroupVersionResource, served: readonly ResourceInfo[]): string {
  const label = `{ group: '${gvr.group}', version: '${gvr.version}', resource: '${gvr.resource}' }`;
  const lead = `ctx.client.${method}: the cluster does not serve ${label}`;
  const fix = (r: ResourceInfo) => `{ group: '${r.group}', version: '${r.version}', resource: '${r.resource}' }`;
  const name = gvr.resource.toLowerCase();
  const inGroup = served.filter((r) => r.group === gvr.group);
  const sameName = inGroup.filter((r) => r.resource === gvr.resource);
  if (sameName.length) return `${lead}: API group ${gvr.group || 'core'} serves ${gvr.resource} in ${[...new Set(sameName.map((r) => r.version))].join(', ')} (did you mean ${fix(sameName[0]!)}?)`;
  const byKind = inGroup.filter((r) => r.kind.toLowerCase() === name || r.resource === `${name}s` || r.resource === `${name}es`);
  const near = byKind.length ? byKind : inGroup.filter((r) => closestNames(name, [r.resource]).length > 0);
  if (near.length) return `${lead} (did you mean ${fix(near.find((r) => r.version === gvr.version) ?? near[0]!)}? resource is the lower-case plural, as kubectl api-resources lists it)`;
  const elsewhere = served.filter((r) => r.resource === name || r.kind.toLowerCase() === name);
  if (elsewhere.length) return `${lead} (did you mean ${[...new Set(elsewhere.map(fix))].slice(0, 3).join(' or ')}?)`;
  if (!inGroup.length && gvr.group) return `${lead}: no API group ${gvr.group} is served. Install its CustomResourceDefinition (kubectl apply -f <your CRD>.yaml), or check the group with kubectl api-resources`;
  return `${lead}: check the name with kubectl api-resources${gvr.group ? ` --api-group=${gvr.group}` : ''}`;
}

export interface RecordingClientOptions {
  /** When true every write is sent with dryRun=All, whatever the caller asked. */
  dryRun: boolean;
  /** Called once per write, after the server answered. A throwing listener is logged, never breaks the write. */
  onWrite?: (record: WriteRecord) => void;
  /** Read the object before each update/patch/delete so the record carries `before` (one extra GET). Default true. */
  captureBefore?: boolean;
  clock?: Clock;
  log?: Logger;
}

/**
 * Wraps a client so that every write is reported to `onWrite` and, in dry-run
 * mode, is forced to `dryRun=All` (as controller-runtime's DryRunClient does):
 * a reconciler run through it in dry-run mode cannot persist anything, even if
 * it passes `dryRun: false`. Reads pass through unchanged.
 *
 * The wrapper holds no resources. `updateSubresource` is forwarded when the
 * inner client has it and rejects otherwise.
 */
export function recordingClient(inner: KubeClient, options: RecordingClientOptions): DynamicKubeClient {
  const captureBefore = options.captureBefore ?? true;
  const clock = options.clock;
  const log = options.log ?? nullLogger;
  const force = <O extends WriteOptions | undefined>(o: O): O => (options.dryRun ? ({ ...(o ?? {}), dryRun: true } as O) : o);
  // The write's options with its record's warning sink added; the caller's own onWarnings is still called.
  const warned = <O extends WriteOptions>(o: O | undefined, sink: (ws: readonly string[]) => void): O =>
    ({
      ...(o ?? {}),
      onWarnings: (ws: readonly string[]) => {
        sink(ws);
        o?.onWarnings?.(ws);
      },
    }) as O;

  async function readBefore(gvr: GroupVersionResource, namespace: string | undefined, name: string, signal?: AbortSignal): Promise<KubeObject | undefined> {
    if (!captureBefore) return undefined;
    try {
      return await inner.get(gvr, namespace, name, signal);
    } catch (e) {
      if (!isNotFound(e)) log.debug('could not read the object before a write', { name, error: (e as Error).message });
      return undefined;
    }
  }

  async function record<T extends KubeObject | undefined>(
    base: Omit<WriteRecord, 'outcome' | 'startedAt' | 'durationMs' | 'key' | 'dryRun' | 'before' | 'after' | 'resourceVersionBefore' | 'resourceVersionAfter'>,
    dryRun: boolean,
    before: KubeObject | undefined,
    write: (onWarnings: (warnings: readonly string[]) => void) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const startedAt = clock?.now() ?? 0;
    const rec: WriteRecord = {
      ...base,
      key: keyFor(base.namespace, base.name),
      dryRun,
      before,
      resourceVersionBefore: before?.metadata.resourceVersion,
      outcome: 'ok',
      startedAt,
      durationMs: 0,
    };
    try {
      const after = await write((ws) => {
        rec.warnings = [...(rec.warnings ?? []), ...ws];
      });
      rec.after = after;
      rec.resourceVersionAfter = after?.metadata?.resourceVersion;
      // A create with metadata.generateName: the record names the object the server made ("soil-2rnzn", also in a
      // dry run), not the prefix it was asked with ("soil-"); a refused create keeps the prefix.
      if (rec.verb === 'create' && after?.metadata?.name && after.metadata.name !== rec.name) {
        rec.name = after.metadata.name;
        rec.key = keyFor(rec.namespace, rec.name);
      }
      if (rec.verb !== 'create' && rec.verb !== 'delete' && deletedByWrite(after)) rec.deleted = true;
      return after;
    } catch (e) {
      rec.outcome = 'error';
      const message = (e as Error)?.message ?? String(e);
      // The caller's signal aborted the request (a stopped loop, a reconcile timeout): no answer came, so whether the
      // server applied the write is unknown; say that rather than an error code 0.
      rec.error =
        e instanceof ApiError ? { code: e.code, reason: e.reason, message: e.message }
        : signal?.aborted && e === signal.reason ? { code: 0, reason: 'Cancelled', message: `cancelled before the server answered (${message}): it may or may not have been applied` }
        : e instanceof ResourceNotServedError ? { code: 0, reason: 'NotServed', message }
        : { code: 0, reason: 'Error', message };
      throw e;
    } finally {
      rec.durationMs = clock ? clock.now() - startedAt : 0;
      try {
        options.onWrite?.(rec);
      } catch (err) {
        log.error('a write listener threw', { error: (err as Error)?.message ?? String(err) });
      }
    }
  }

  /**
   * Runs `call`; a 404 about the path rather than an object ({@link pathNotFound}) on a resource discovery does not
   * list (and it lists others) becomes a {@link ResourceNotServedError}. Any other failure (and a 404 of a served
   * resource: a missing object, a missing subresource) is rethrown as it is.
   */
  async function served<T>(method: string, gvr: GroupVersionResource, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      if (!pathNotFound(e)) throw e;
      let list: ResourceInfo[];
      try {
        list = await inner.discover(signal);
      } catch {
        throw e; // discovery failed too: the server's answer as it is
      }
      // Nothing discovered (discovery refused, a client that cannot discover): no grounds to say it is not served.
      if (!list.length || list.some((r) => r.group === gvr.group && r.version === gvr.version && r.resource === gvr.resource)) throw e;
      throw new ResourceNotServedError(resourceNotServedMessage(method, gvr, list), gvr, { cause: e });
    }
  }

  const wrapped: DynamicKubeClient = {
    get: async (gvr, namespace, name, signal) => {
      checkResource('get', gvr);
      checkNamespaceAndName('get', namespace, name);
      return served('get', gvr, signal, () => inner.get(gvr, namespace, name, signal));
    },
    list: async (gvr, namespace, o) => {
      checkResource('list', gvr);
      return served('list', gvr, o?.signal, () => inner.list(gvr, namespace, o));
    },
    discover: (signal) => inner.discover(signal),

    async create(gvr, obj, o) {
      checkResource('create', gvr);
      checkObject('create', obj);
      const opts = force(o);
      const name = obj.metadata.name ?? obj.metadata.generateName ?? '';
      return record({ verb: 'create', gvr, namespace: obj.metadata.namespace, name }, !!opts?.dryRun, undefined, (w) => served('create', gvr, o?.signal, () => inner.create(gvr, obj, warned(opts, w))), o?.signal);
    },
    async update(gvr, obj, o) {
      checkResource('update', gvr);
      checkObject('update', obj);
      const opts = force(o);
      const before = await readBefore(gvr, obj.metadata.namespace, obj.metadata.name ?? '', o?.signal);
      return record({ verb: 'update', gvr, namespace: obj.metadata.namespace, name: obj.metadata.name ?? '', sentResourceVersion: sentResourceVersionOf(obj) }, !!opts?.dryRun, before, (w) => served('update', gvr, o?.signal, () => inner.update(gvr, obj, warned(opts, w))), o?.signal);
    },
    async updateStatus(gvr, obj, o) {
      checkResource('updateStatus', gvr);
      checkObject('updateStatus', obj);
      const opts = force(o);
      const before = await readBefore(gvr, obj.metadata.namespace, obj.metadata.name ?? '', o?.signal);
      return record({ verb: 'update', subresource: 'status', gvr, namespace: obj.metadata.namespace, name: obj.metadata.name ?? '', sentResourceVersion: sentResourceVersionOf(obj) }, !!opts?.dryRun, before, (w) => served('updateStatus', gvr, o?.signal, () => inner.updateStatus(gvr, obj, warned(opts, w))), o?.signal);
    },
    async updateSubresource(gvr, obj, subresource, o) {
      const sub = (inner as Partial<SubresourceWriter>).updateSubresource;
      if (!sub) throw new ApiError(0, 'NotSupported', 'the underlying client cannot write subresources');
      const opts = force(o);
      const before = await readBefore(gvr, obj.metadata.namespace, obj.metadata.name ?? '', o?.signal);
      return record({ verb: 'update', subresource, gvr, namespace: obj.metadata.namespace, name: obj.metadata.name ?? '', sentResourceVersion: sentResourceVersionOf(obj) }, !!opts?.dryRun, before, (w) => sub.call(inner, gvr, obj, subresource, warned(opts, w)), o?.signal);
    },
    async patch(gvr, namespace, name, type, patch, o) {
      checkResource('patch', gvr);
      checkNamespaceAndName('patch', namespace, name);
      const opts = force(o);
      const before = await readBefore(gvr, namespace, name, o?.signal);
      return record({ verb: 'patch', subresource: o?.subresource, gvr, namespace, name, patchType: type, patch, sentResourceVersion: sentResourceVersionOf(patch, type) }, !!opts?.dryRun, before, (w) => served('patch', gvr, o?.signal, () => inner.patch(gvr, namespace, name, type, patch, warned(opts, w))), o?.signal);
    },
    async patchStatus(gvr, namespace, name, type, patch, o) {
      checkResource('patchStatus', gvr);
      checkNamespaceAndName('patchStatus', namespace, name);
      const opts = force(o);
      const before = await readBefore(gvr, namespace, name, o?.signal);
      return record({ verb: 'patch', subresource: 'status', gvr, namespace, name, patchType: type, patch, sentResourceVersion: sentResourceVersionOf(patch, type) }, !!opts?.dryRun, before, (w) => served('patchStatus', gvr, o?.signal, () => inner.patchStatus(gvr, namespace, name, type, patch, warned(opts, w))), o?.signal);
    },
    async apply(gvr, obj, o) {
      checkResource('apply', gvr);
      checkObject('apply', obj);
      const opts = force(o);
      const before = await readBefore(gvr, obj.metadata.namespace, obj.metadata.name ?? '', o.signal);
      return record({ verb: 'apply', gvr, namespace: obj.metadata.namespace, name: obj.metadata.name ?? '', patch: obj }, opts.dryRun === true, before, (w) => served('apply', gvr, o?.signal, () => inner.apply(gvr, obj, warned(opts, w))), o?.signal);
    },
    async delete(gvr, namespace, name, o) {
      checkResource('delete', gvr);
      checkNamespaceAndName('delete', namespace, name);
      const opts = force(o);
      const before = await readBefore(gvr, namespace, name, o?.signal);
      return record({ verb: 'delete', gvr, namespace, name }, !!opts?.dryRun, before, (w) => served('delete', gvr, o?.signal, () => inner.delete(gvr, namespace, name, warned(opts, w))), o?.signal);
    },
  };
  return wrapped;
}
