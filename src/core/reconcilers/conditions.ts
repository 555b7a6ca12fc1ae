import type { Condition } from '../k8s/objects.ts';

/** Kubernetes timestamps are RFC 3339 with second precision. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Returns a copy of `conditions` with `next` set, following apimachinery's
 * `meta.SetStatusCondition`: `lastTransitionTime` changes only when `status`
 * changes (so re-asserting the same condition is a no-op), other fields are
 * overwritten, and the order of existing conditions is kept. Never mutates input.
 */
export function setCondition(conditions: readonly Condition[] | undefined, next: Omit<Condition, 'lastTransitionTime'>, nowMs: number): Condition[] {
  const list = (conditions ?? []).map((c) => ({ ...c }));
  const i = list.findIndex((c) => c.type === next.type);
  if (i < 0) {
    list.push({ ...next, lastTransitionTime: rfc3339(nowMs) });
    return list;
  }
  const prev = list[i]!;
  const lastTransitionTime = prev.status === next.status && prev.lastTransitionTime ? prev.lastTransitionTime : rfc3339(nowMs);
  list[i] = { ...prev, ...next, lastTransitionTime };
  return list;
}
