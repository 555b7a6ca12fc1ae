import type { Clock } from '../clock.ts';
import type { Disposable } from '../lifecycle.ts';
import type { Logger } from '../log.ts';
import type { EventRecorder } from '../controller/reconcile.ts';
import { ApiError, type KubeClient } from './client.ts';
import type { GroupVersionResource, KubeObject } from './objects.ts';

export const EVENT_GVR: GroupVersionResource = { group: '', version: 'v1', resource: 'events' };

export interface KubeEventRecorderOptions {
  /** The client events are written with. Use the plain client, not a journaling/dry-run wrapper. */
  client: KubeClient;
  /** `source.component` and `reportingComponent` of every event, e.g. "reconcile-lab". */
  component: string;
  clock: Clock;
  log: Logger;
  /** While it returns true, events are logged but not sent (a dry-run must persist nothing). */
  suppress?: () => boolean;
}

interface Pending {
  obj: KubeObject;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/**
 * Records core/v1 Events against objects, as `kubectl describe` shows them.
 *
 * Contract: `event()` never throws and never blocks the reconciler; events are
 * sent in order, one at a time, in the background. Repeats of the same
 * (object uid, type, reason, message) are folded into one Event whose `count`
 * and `lastTimestamp` grow (client-go's EventCorrelator aggregates the same
 * way). A failed write is logged and dropped. A write the server refuses with
 * 403 Forbidden (a user without `create` on events there, as on a shared
 * cluster) is warned about once per namespace, naming the missing right; the
 * next refusals in that namespace are logged at debug level only (every event
 * is still sent: a right granted later takes effect), until one is accepted
 * there, which re-arms the warning. `dispose()` stops sending; what
 * is still queued is dropped, and `flush()` waits until the queue is empty.
 */
export interface KubeEventRecorder extends EventRecorder, Disposable {
  flush(): Promise<void>;
}

export function createKubeEventRecorder(o: KubeEventRecorderOptions): KubeEventRecorder {
  const queue: Pending[] = [];
  /** Correlation key → the Event already written for it. */
  const written = new Map<string, { namespace: string; name: string; count: number }>();
  let draining: Promise<void> | undefined;
  let disposed = false;
  let seq = 0;
  /** Namespaces whose event writes were refused (403) since the last accepted one: warned about once. */
  const refused = new Set<string>();

  const stamp = () => new Date(o.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');

  async function send(p: Pending): Promise<void> {
    const m = p.obj.metadata;
    const namespace = m.namespace || 'default';
    const corr = `${m.uid ?? m.name}|${p.type}|${p.reason}|${p.message}`;
    const prior = written.get(corr);
    if (prior) {
      prior.count++;
      await o.client.patch(EVENT_GVR, prior.namespace, prior.name, 'merge', { count: prior.count, lastTimestamp: stamp() });
      refused.delete(prior.namespace);
      return;
    }
    const name = `${m.name}.${o.clock.now().toString(16)}${(seq++).toString(16)}`;
    const now = stamp();
    await o.client.create(EVENT_GVR, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: p.obj.apiVersion,
        kind: p.obj.kind,
        name: m.name,
        namespace: m.namespace,
        uid: m.uid,
        resourceVersion: m.resourceVersion,
      },
      type: p.type,
      reason: p.reason,
      message: p.message.slice(0, 1024),
      source: { component: o.component },
      reportingComponent: o.component,
      reportingInstance: o.component,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
    refused.delete(namespace);
    written.set(corr, { namespace, name, count: 1 });
    if (written.size > 4096) written.delete(written.keys().next().value!);
  }

  function drain(): Promise<void> {
    draining ??= (async () => {
      while (queue.length > 0 && !disposed) {
        const p = queue.shift()!;
        try {
          await send(p);
        } catch (e) {
          const namespace = p.obj.metadata.namespace || 'default';
          if (e instanceof ApiError && e.code === 403) {
            if (refused.has(namespace)) {
              o.log.debug('could not record event', { reason: p.reason, object: p.obj.metadata.name, error: e.message });
            } else {
              refused.add(namespace);
              o.log.warn(`events are not recorded in namespace ${namespace}: the server refused to create one; later refusals there are not repeated`, { reason: p.reason, object: p.obj.metadata.name, error: e.message });
            }
          } else {
            o.log.warn('could not record event', { reason: p.reason, object: p.obj.metadata.name, error: (e as Error).message });
          }
        }
      }
      draining = undefined;
    })();
    return draining;
  }

  return {
    event(obj, type, reason, message) {
      if (disposed) return;
      o.log.debug('event', { type, reason, object: obj.metadata.name, message });
      if (o.suppress?.()) return;
      queue.push({ obj, type, reason, message });
      void drain();
    },
    async flush() {
      while (draining) await draining;
    },
    dispose() {
      disposed = true;
      queue.length = 0;
    },
  };
}
