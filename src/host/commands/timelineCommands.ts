import type { JournalEntry } from '../../core/journal/journal.ts';
import { isRecord } from '../../core/record.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import { laneControllerOf } from '../webview/timelineView.ts';
import { keyOf, stringArg, type CommandResult } from './args.ts';

/**
 * Show Timeline: opens (or reveals) the per-key Timeline webview. Argument: a Resources or Work Queue element, or
 * `{ key }` (the Event Log's buttons): the timeline scrolls to that key's lane and highlights it; without one
 * it shows every lane. When the argument tells whose key it is ({@link timelineFocusController}) only that
 * controller's lane of the key is focused, not the other controllers' lanes of the same key. Resolves to the key
 * (and controller) it focused.
 */
export function showTimeline(lab: ReconcileLab, arg: unknown): CommandResult<{ key?: string; controller?: string; connected: boolean }> {
  const key = keyOf(arg);
  const s = lab.session;
  const controller = key === undefined ? undefined : timelineFocusController(arg, {
    entry: (seq) => s?.journal.get(seq),
    primaryResource: s?.primaryResource,
    shownController: s?.controller?.name,
  });
  lab.timeline.show(key, controller);
  return { ok: true, ...(key ? { key } : {}), ...(controller !== undefined ? { controller } : {}), connected: s !== undefined };
}

/** What {@link timelineFocusController} reads from the connection. */
export interface TimelineFocusContext {
  /** The journal entry `seq`, while the journal holds it. */
  entry(seq: number): JournalEntry | undefined;
  /** The resource of the controller the views show (its keys are the Work Queue's, and its objects' rows in Resources). */
  readonly primaryResource: string | undefined;
  /** The name the controller the views show journals its entries under. */
  readonly shownController: string | undefined;
}

/**
 * The controller whose lane of the argument's key Show Timeline focuses, or undefined for every lane of the key:
 *
 * - `{ controller: "name" }`: that controller (scripts, tests);
 * - `{ key, seq }` (the Event Log's detail pane and row menu): the controller of the journal entry `seq`, the lane
 *   it is drawn on (none for a person's own action, or an entry the journal no longer holds);
 * - a Work Queue row, or a Resources row of the shown controller's resource: the controller the views show;
 * - anything else (`{ key }`, the Event Log's key filter): none.
 */
export function timelineFocusController(arg: unknown, ctx: TimelineFocusContext): string | undefined {
  if (!isRecord(arg)) return undefined;
  const named = stringArg(arg, 'controller');
  if (named) return named;
  const seq = arg.seq;
  if (typeof seq === 'number' && Number.isSafeInteger(seq) && seq > 0) {
    const e = ctx.entry(seq);
    return e ? laneControllerOf(e) : undefined;
  }
  const row = arg.type === 'queueKey' || arg.type === 'object';
  if (row && ctx.primaryResource !== undefined && arg.resource === ctx.primaryResource) return ctx.shownController;
  return undefined;
}
