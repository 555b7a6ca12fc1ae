import type { ReconcileLab } from '../reconcileLab.ts';
import { keyOf, type CommandResult } from './args.ts';

/**
 * Show Timeline: opens (or reveals) the per-key Timeline webview. Argument: a Resources or Work Queue element, or
 * `{ key }` (the Event Log's buttons): the timeline scrolls to that key's lane and highlights it; without one
 * it shows every lane. Resolves to the key it focused.
 */
export function showTimeline(lab: ReconcileLab, arg: unknown): CommandResult<{ key?: string; connected: boolean }> {
  const key = keyOf(arg);
  lab.timeline.show(key);
  return { ok: true, ...(key ? { key } : {}), connected: lab.session !== undefined };
}
