import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import type { ResourceInfo } from '../../../src/core/k8s/objects.ts';
import { createLogger, type LogLevel, type Logger } from '../../../src/core/log.ts';

/**
 * Lets every pending promise chain run to completion: resolves in the next
 * macrotask, after the microtask queue has drained. No time passes on any
 * clock; nothing here sleeps.
 */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export const widgets: ResourceInfo = { group: 'lab.reconcile.dev', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };

export function widget(name: string, extra: { namespace?: string; labels?: Record<string, string>; spec?: unknown; finalizers?: string[] } = {}): KubeObject {
  return {
    apiVersion: 'lab.reconcile.dev/v1',
    kind: 'Widget',
    metadata: {
      name,
      namespace: extra.namespace ?? 'default',
      ...(extra.labels ? { labels: extra.labels } : {}),
      ...(extra.finalizers ? { finalizers: extra.finalizers } : {}),
      managedFields: [{ manager: 'test', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }],
    },
    spec: extra.spec ?? { size: 1 },
  };
}

export interface LogEntry {
  level: LogLevel;
  msg: string;
  fields: Record<string, unknown>;
}

/** A logger that keeps every entry for assertions. */
export function recordingLogger(): { logger: Logger; entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  return { logger: createLogger((level, msg, fields) => entries.push({ level, msg, fields })), entries };
}

/** A deterministic [0, 1) source: returns the given values in turn, then repeats the last. */
export function sequence(...values: number[]): () => number {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)]!;
}
