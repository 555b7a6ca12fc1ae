/**
 * Maps journal entries to timeline entries (one lane per key of each controller). Pure (no
 * `vscode`), unit-tested in test/unit/host-free/webview/timelineModel.test.ts.
 */
import type { JournalEntry } from '../../core/journal/journal.ts';
import type { TimelineEntryView } from '../../shared/protocol.ts';
import { SCRATCH_COPY_FILTER } from '../../core/checks/scratch.ts';
import { toLogEntryView } from './journalView.ts';

/**
 * The timeline entries of one journal entry (none for entries without a key and for transitions the timeline
 * does not draw; two for a wait that became due: it ends and the key is queued). Labels are the Event Log's
 * summaries, so a mark reads like its row.
 */
export function toTimelineEntries(e: JournalEntry, primaryResource: string | undefined): TimelineEntryView[] {
  // Every entry names its controller (its lane is that controller's lane of the key), but a person's own actions and
  // the writes made on their behalf ("reconcile-lab"): those go on the key's lane of the controller last seen.
  const c = laneControllerOf(e);
  const controller = c !== undefined ? { controller: c } : {};
  // A queue that shut down (Stop, a Go program that exited or disconnected) ends its keys' open intervals.
  if (e.key === undefined && ((e.kind === 'queue' && e.transition === 'shutdown') || (e.kind === 'control' && e.action === 'stop'))) {
    return [{ seq: e.seq, time: e.at, key: '', type: 'stopped', label: toLogEntryView(e, primaryResource).summary, ...controller }];
  }
  // A robustness check's scratch copy is no key of the loop's: its events, dropped by the loop's filter, get no lane.
  if (e.kind === 'informer' && e.filteredBy === SCRATCH_COPY_FILTER) return [];
  const key = e.key ?? (e.kind === 'informer' ? (e.enqueued[0] ?? (e.role === 'primary' ? e.objectKey : undefined)) : undefined);
  if (key === undefined) return [];
  const base = { seq: e.seq, time: e.at, key, label: toLogEntryView(e, primaryResource).summary, ...controller };
  switch (e.kind) {
    case 'informer':
      return [{ ...base, type: 'event' }];
    case 'queue':
      switch (e.transition) {
        case 'queued':
        case 'deferred':
        case 'requeued':
          return [{ ...base, type: 'queued' }];
        case 'processing':
          return [{ ...base, type: 'processing' }];
        case 'waiting':
          return [{ ...base, type: 'waiting', ...(e.dueAt !== undefined ? { dueAt: e.dueAt } : {}), ...(e.waitKind ? { wait: e.waitKind } : {}) }];
        case 'ready':
          return [{ ...base, type: 'waitEnd' }, { ...base, type: 'queued' }];
        case 'waitCancelled':
          return [{ ...base, type: 'waitEnd' }];
        default:
          return [];
      }
    case 'reconcileStart':
      return [{ ...base, type: 'reconcileStart' }];
    case 'reconcileEnd':
      return [{ ...base, type: 'reconcileEnd', outcome: e.outcome.kind, ...(e.outcome.kind === 'error' || e.outcome.kind === 'terminal' ? { error: true } : {}) }];
    case 'write':
      return [{ ...base, type: 'write', ...(e.dryRun ? { dryRun: true } : {}), ...(e.error ? { error: true } : {}) }];
    case 'control':
      return [{ ...base, type: 'action' }];
    case 'warning':
      return [{ ...base, type: 'warning' }];
  }
}

/**
 * The controller whose lane of its key `e` goes on: its controller, but none for a person's own actions and the writes
 * made on their behalf (see {@link toTimelineEntries}).
 */
export function laneControllerOf(e: JournalEntry): string | undefined {
  return e.controller !== undefined && !isPersonController(e.controller) ? e.controller : undefined;
}

/** Whether `controller` is a person's (Reconcile Lab acting for them: "reconcile-lab", the CLI's "reconcile-lab …"), no controller's. */
function isPersonController(controller: string): boolean {
  return controller === 'reconcile-lab' || controller.startsWith('reconcile-lab ');
}

/** Every timeline entry of `entries`, in order. */
export function toTimeline(entries: readonly JournalEntry[], primaryResource: string | undefined): TimelineEntryView[] {
  const out: TimelineEntryView[] = [];
  for (const e of entries) for (const t of toTimelineEntries(e, primaryResource)) out.push(t);
  return out;
}
