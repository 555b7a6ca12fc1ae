import { ApiError, type KubeClient } from '../../../src/core/k8s/client.ts';
import type { GroupVersionResource, KubeObject } from '../../../src/core/k8s/objects.ts';
import { createReconcileContext, staticCache } from '../../../src/core/actions/context.ts';
import type { ReconcileContext } from '../../../src/core/controller/reconcile.ts';
import { createLogger, type LogLevel } from '../../../src/core/log.ts';

export const WIDGETS: GroupVersionResource = { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets' };

/**
 * A deliberately small in-memory client for unit tests of code that only
 * reads one object and writes its status: get / updateStatus with
 * resourceVersion checks (409 on mismatch). Every other verb throws.
 */
export function statusOnlyClient(objects: KubeObject[]): KubeClient & { statusWrites: KubeObject[]; store: Map<string, KubeObject> } {
  const store = new Map(objects.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, structuredClone(o)]));
  const statusWrites: KubeObject[] = [];
  const unsupported = () => Promise.reject(new Error('not supported by statusOnlyClient'));
  return {
    store,
    statusWrites,
    async get(_gvr, ns, name) {
      const o = store.get(`${ns}/${name}`);
      if (!o) throw new ApiError(404, 'NotFound', `${name} not found`);
      return structuredClone(o);
    },
    async updateStatus(_gvr, obj) {
      const k = `${obj.metadata.namespace}/${obj.metadata.name}`;
      const cur = store.get(k);
      if (!cur) throw new ApiError(404, 'NotFound', 'not found');
      if (cur.metadata.resourceVersion !== obj.metadata.resourceVersion) throw new ApiError(409, 'Conflict', 'the object has been modified');
      const next = { ...cur, status: obj.status, metadata: { ...cur.metadata, resourceVersion: String(Number(cur.metadata.resourceVersion) + 1) } };
      store.set(k, next);
      statusWrites.push(structuredClone(next));
      return structuredClone(next);
    },
    list: unsupported,
    create: unsupported,
    update: unsupported,
    patch: unsupported,
    patchStatus: unsupported,
    apply: unsupported,
    delete: unsupported,
    discover: unsupported,
  };
}

export interface LogEntry {
  level: LogLevel;
  msg: string;
  fields: Record<string, unknown>;
}

export function testContext(client: KubeClient, options: { objects?: KubeObject[]; dryRun?: boolean; signal?: AbortSignal } = {}): { ctx: ReconcileContext; logs: LogEntry[] } {
  const logs: LogEntry[] = [];
  const ctx = createReconcileContext({
    client,
    primary: WIDGETS,
    dryRun: options.dryRun,
    cache: staticCache([{ gvr: WIDGETS, objects: options.objects ?? [] }]),
    log: createLogger((level, msg, fields) => logs.push({ level, msg, fields })),
    signal: options.signal,
  });
  return { ctx, logs };
}

export function widget(name: string, extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'lab.reconcile.dev/v1alpha1',
    kind: 'Widget',
    metadata: { name, namespace: 'ns1', uid: `uid-${name}`, resourceVersion: '10', generation: 1 },
    spec: { data: { a: '1' } },
    ...extra,
  };
}

/** Yields to the event loop until `cond()` holds (no timers involved; bounded by `turns`). */
export async function until(cond: () => boolean, turns = 10_000): Promise<void> {
  for (let i = 0; i < turns && !cond(); i++) await new Promise((r) => setImmediate(r));
  if (!cond()) throw new Error('condition never became true');
}
