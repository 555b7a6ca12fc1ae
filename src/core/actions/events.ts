import type { KubeTransport } from '../k8s/transport.ts';
import type { KubeObject } from '../k8s/objects.ts';

/**
 * The Kubernetes Events about one object, as `kubectl describe` shows them.
 *
 * core/v1 Events and events.k8s.io/v1 Events are one resource stored once and
 * served through both APIs, so one LIST of core/v1 finds the events recorded
 * through either: an events.k8s.io event reads there with `note` as
 * `message`, `regarding` as `involvedObject`, `reportingController` as
 * `reportingComponent` and its repetitions in `series`. This module reads
 * both shapes into one.
 */
export interface ObjectEvent {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  /** How many times it happened (core `count`, or an events.k8s.io `series.count`); at least 1. */
  readonly count: number;
  /** When it last happened (ISO time), when the event says. */
  readonly lastSeen?: string;
  readonly firstSeen?: string;
  /** Who reported it: `reportingComponent` (events.k8s.io `reportingController`) or `source.component`. */
  readonly source: string;
  /** events.k8s.io `action`, when set. */
  readonly action?: string;
  /** The Event object's name (namespace/name), to find it with kubectl. */
  readonly name: string;
}

interface RawEvent {
  metadata?: { name?: string; namespace?: string; creationTimestamp?: string };
  involvedObject?: { uid?: string; name?: string; namespace?: string; kind?: string };
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  series?: { count?: number; lastObservedTime?: string };
  reportingComponent?: string;
  source?: { component?: string; host?: string };
  action?: string;
}

/** One Event object (either API's shape, as served by core/v1) as an {@link ObjectEvent}. */
export function toObjectEvent(e: RawEvent): ObjectEvent {
  const count = Math.max(1, e.series?.count ?? e.count ?? 1);
  const lastSeen = e.series?.lastObservedTime || e.lastTimestamp || e.eventTime || e.metadata?.creationTimestamp || undefined;
  const firstSeen = e.firstTimestamp || e.eventTime || e.metadata?.creationTimestamp || undefined;
  return {
    type: e.type || 'Normal',
    reason: e.reason || '',
    message: e.message || '',
    count,
    ...(lastSeen ? { lastSeen } : {}),
    ...(firstSeen ? { firstSeen } : {}),
    source: e.reportingComponent || e.source?.component || '',
    ...(e.action ? { action: e.action } : {}),
    name: `${e.metadata?.namespace ? `${e.metadata.namespace}/` : ''}${e.metadata?.name ?? ''}`,
  };
}

/** Newest first, at most `limit`. */
function newestFirst(events: ObjectEvent[], limit: number): ObjectEvent[] {
  return events.sort((a, b) => (b.lastSeen ?? '').localeCompare(a.lastSeen ?? '')).slice(0, limit);
}

/**
 * Lists the Events whose involved object is `obj` (matched by kind, name and
 * namespace on the server, then by uid here, so an older object of the same
 * name does not lend its events), newest first. Events of a cluster-scoped
 * object are looked up in every namespace (recorders put them in `default`).
 * Reads only; throws the API error when the LIST fails.
 */
export async function listObjectEvents(transport: KubeTransport, obj: KubeObject, options: { signal?: AbortSignal; limit?: number } = {}): Promise<ObjectEvent[]> {
  const { name, namespace, uid } = obj.metadata;
  if (!name) return [];
  const selector = [`involvedObject.name=${name}`, ...(obj.kind ? [`involvedObject.kind=${obj.kind}`] : []), ...(namespace ? [`involvedObject.namespace=${namespace}`] : [])].join(',');
  const path = namespace ? `/api/v1/namespaces/${encodeURIComponent(namespace)}/events` : '/api/v1/events';
  const list = await transport.json<{ items?: RawEvent[] }>({ method: 'GET', path, query: { fieldSelector: selector }, ...(options.signal ? { signal: options.signal } : {}) });
  const mine = (list.items ?? []).filter((e) => !uid || !e.involvedObject?.uid || e.involvedObject.uid === uid);
  return newestFirst(mine.map(toObjectEvent), options.limit ?? 50);
}
