/**
 * Maps controller journal entries to Event Log rows (one line each, with a
 * level, the key to filter on and the object to reveal). Pure (no `vscode`),
 * unit-tested in test/unit/host-free/webview/journalView.test.ts.
 */
import type { ControlEntry, JournalEntry } from '../../core/journal/journal.ts';
import { JOURNAL_ENTRY_KINDS, queueTransitionText, rvAfterText } from '../../core/journal/journal.ts';
import { deleteFoundGone, writeErrorText, writeTargetText, writeWarningsText } from '../../core/journal/writeText.ts';
import { startingTrigger, type EnqueueReason } from '../../core/controller/keyState.ts';
import type { ObjectKey } from '../../core/k8s/keys.ts';
import type { LogEntryView, LogFilter, LogLevelView } from '../../shared/protocol.ts';
import { matchesFilter, normalizeFilter } from '../../shared/protocol.ts';
import { formatDuration } from '../views/format.ts';
import { outcomeSummary, priorityLabel, reasonSummary } from '../views/presentation.ts';

/** The kinds of entry the journal produces (the Event Log's kind filter). */
export const EVENT_LOG_KINDS: readonly string[] = JOURNAL_ENTRY_KINDS;

import { resourceIdFromGvrString } from '../../core/k8s/objects.ts';

/** Re-exported for the views that name a journal entry's resource. */
export { resourceIdFromGvrString };

function levelOf(e: JournalEntry): LogLevelView {
  switch (e.kind) {
    case 'warning':
      return 'warn';
    case 'write':
      return e.error && !deleteFoundGone(e) ? 'error' : e.warnings?.length ? 'warn' : 'info';
    case 'reconcileEnd':
      return e.outcome.kind === 'error' || e.outcome.kind === 'terminal' ? 'error' : e.outcome.kind === 'cancelled' ? 'warn' : 'info';
    default:
      return 'info';
  }
}

/** Whose reconcile (of `controller`) wrote the object version a cause names; see Session.writtenByIn. */
export type WrittenByLookup = (r: EnqueueReason, controller: string | undefined) => ObjectKey | undefined;

function summaryOf(e: JournalEntry, writtenBy?: WrittenByLookup): { summary: string; detail?: string } {
  switch (e.kind) {
    case 'informer': {
      const what = `${e.initial ? 'initial ' : ''}${e.event} ${resourceIdFromGvrString(e.resource)} ${e.objectKey}${e.resourceVersion ? ` rv ${e.resourceVersion}` : ''}${e.generation !== undefined ? ` gen ${e.generation}` : ''}`;
      const effect = e.filteredBy ? `filtered by ${e.filteredBy}` : e.enqueued.length ? `→ enqueued ${e.enqueued.join(', ')}` : '→ nothing enqueued';
      return { summary: `${what} ${effect}`, ...(e.role !== 'primary' ? { detail: `${e.role} resource` } : {}) };
    }
    case 'queue': {
      const due = e.dueAt !== undefined ? ` (${e.waitKind ?? 'wait'}, due in ${formatDuration(e.dueAt - e.at)})` : '';
      const prio = e.priority !== undefined ? ` · ${priorityLabel(e.priority)}` : '';
      return { summary: `${queueTransitionText(e.transition)}${due}${prio}` };
    }
    case 'reconcileStart': {
      // A cause that this controller's own write made says whose ("…(rv 12, this key's own write)").
      const say = (t: EnqueueReason) => reasonSummary(t, e.at, e.key, writtenBy?.(t, e.controller));
      const first = startingTrigger(e.triggers, e.at);
      const why = first ? say(first) : 'no recorded trigger';
      const more = e.triggers.length > 1 ? ` (+${e.triggers.length - 1} more)` : '';
      return {
        summary: `reconcile #${e.attempt}${e.via === 'step' ? ' (step)' : ''}${e.priority !== undefined && e.priority !== 0 ? ` at ${priorityLabel(e.priority)}` : ''} started: ${why}${more}`,
        ...(e.triggers.length > 1 ? { detail: e.triggers.map(say).join('\n') } : {}),
      };
    }
    case 'reconcileEnd':
      return { summary: outcomeSummary(e.outcome, e.durationMs) };
    case 'write': {
      const target = `${resourceIdFromGvrString(e.resource)} ${writeTargetText(e.objectKey, e.subresource)}`;
      const rv = e.resourceVersionBefore || e.resourceVersionAfter ? ` rv ${e.resourceVersionBefore ?? '∅'}→${rvAfterText(e, '∅')}` : '';
      return { summary: `${e.verb} ${target}${rv}${e.dryRun ? ' (dry-run)' : ''}${e.error ? ` ${writeErrorText(e)}` : ''}${e.warnings?.length ? ` — ${writeWarningsText(e.warnings)}` : ''}` };
    }
    case 'warning':
      return { summary: `${e.code}: ${e.message}`, ...(e.details ? { detail: JSON.stringify(e.details) } : {}) };
    case 'control': {
      const name = USER_ACTION_NAMES[e.action];
      return { summary: name ? `${name} (${e.automatic ? 'automatic' : 'your action'})${e.detail ? `: ${e.detail}` : ''}` : `${e.action}${e.detail ? `: ${e.detail}` : ''}` };
    }
  }
}

/**
 * Tells whether a journal's rows need their controller's name ({@link toLogEntryView}'s `labelControllers`): once
 * entries of two controllers were seen. The person's own actions ("reconcile-lab") are no controller. Fed every
 * entry as it is appended (and a snapshot's entries), it only turns on.
 */
export class ControllerLabelling {
  private readonly seen = new Set<string>();

  /** Notes the controllers of `entries`; returns whether rows are labelled from now on. */
  note(entries: Iterable<JournalEntry>): boolean {
    if (this.seen.size < 2) for (const e of entries) if (e.controller !== undefined && e.controller !== 'reconcile-lab') this.seen.add(e.controller);
    return this.labelled;
  }

  get labelled(): boolean {
    return this.seen.size >= 2;
  }
}

/** The names people know the actions by (the commands' titles), for entries of a person's actions. */
export const USER_ACTION_NAMES: Partial<Record<ControlEntry['action'], string>> = {
  step: 'Step Reconcile',
  reconcileNow: 'Reconcile Now',
  resetBackoff: 'Reset Backoff',
  enqueue: 'Enqueue',
  stripFinalizers: 'Strip Finalizers',
  delete: 'Delete',
  dryRun: 'Dry-Run Reconcile',
};

/**
 * One row per entry. `primaryResource` ("plural.group", or the resource of an
 * entry's controller) names the object of entries that carry only a reconcile
 * key (queue, reconcile, control); `writtenBy` lets a reconcile's start say which
 * of its causes its controller's own writes made. A control entry's summary
 * always starts with its controller's name (`[planter] Step Reconcile …`);
 * with `labelControllers` (the journal holds entries of several controllers:
 * the built-in loop's and a Go program's, or two controllers of one program)
 * every entry's does, so that one controller's queue or informer line is not
 * read as another's (`[lab] add configmaps … → nothing enqueued` beside
 * `[schedule] queued`).
 */
export function toLogEntryView(
  e: JournalEntry,
  primaryResource: string | undefined | ((controller: string | undefined) => string | undefined),
  writtenBy?: WrittenByLookup,
  labelControllers = false,
): LogEntryView {
  const { summary, detail } = summaryOf(e, writtenBy);
  let key = e.key;
  let resource = typeof primaryResource === 'function' ? primaryResource(e.controller) : primaryResource;
  if (e.kind === 'informer' || e.kind === 'write') {
    // The row names the object the entry is about when it is the reconciled key itself.
    if (key === undefined || key === e.objectKey) {
      key = e.objectKey;
      resource = resourceIdFromGvrString(e.resource);
    }
  }
  return {
    seq: e.seq,
    time: e.at,
    kind: e.kind,
    level: levelOf(e),
    ...(key !== undefined ? { key } : {}),
    ...(key !== undefined && resource !== undefined ? { resource } : {}),
    summary: e.controller && (e.kind === 'control' || labelControllers) ? `[${e.controller}] ${summary}` : summary,
    ...(detail !== undefined ? { detail } : {}),
  };
}

/** The journal entries whose rows match `filter`, as JSON Lines (the raw entries, one per line). */
export function exportJsonLines(entries: readonly JournalEntry[], filter: LogFilter, primaryResource: string | undefined): { text: string; count: number } {
  const f = normalizeFilter(filter);
  let text = '';
  let count = 0;
  for (const e of entries) {
    if (!matchesFilter(toLogEntryView(e, primaryResource), f)) continue;
    text += JSON.stringify(e) + '\n';
    count++;
  }
  return { text, count };
}
