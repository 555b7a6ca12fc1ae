/**
 * The Event Log's detail pane for one journal entry: the whole message, the
 * cause, the patch body and the object's diff before → after for a write, and
 * the reconcile the entry belongs to with its other entries. Pure (no
 * `vscode`), unit-tested in test/unit/host-free/webview/entryDetail.test.ts.
 *
 * Everything returned is plain text; Secret values are masked in patches and
 * diffs. Long texts are cut at {@link MAX_TEXT} characters (the pane says so).
 */
import { yamlDiff } from '../../core/actions/objectDiff.ts';
import { queueTransitionText, writeDeletedText, type Journal, type JournalEntry } from '../../core/journal/journal.ts';
import { maskSecret as maskSecretObject, maskSecretBody } from '../../core/k8s/secretMask.ts';
import { entryKindLabel, type DetailField, type EntryDetailView } from '../../shared/protocol.ts';
import { formatDuration } from '../views/format.ts';
import { outcomeSummary, priorityLabel, reasonSummary } from '../views/presentation.ts';
import { resourceIdFromGvrString, toLogEntryView, USER_ACTION_NAMES } from './journalView.ts';
import { writeTargetText } from '../../core/journal/writeText.ts';

/** Longest patch, diff or message text sent to the pane. */
export const MAX_TEXT = 100_000;
/** At most this many entries of the reconcile are listed. */
const MAX_RELATED = 200;

/** What the builder reads from the journal. */
export type DetailSource = Pick<Journal, 'get' | 'writeDetail' | 'writeDetailMayBeDropped' | 'reconcileOf'>;

function cut(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}\n… (${(text.length - MAX_TEXT).toLocaleString('en-US')} more characters not shown)` : text;
}

/**
 * A copy of a Secret whose data and stringData values (and last-applied annotation) are masked; other values
 * are returned as they are (src/core/k8s/secretMask.ts).
 */
export function maskSecret(obj: unknown): unknown {
  return maskSecretObject(obj);
}

/** A write's patch body masked: whole Secret bodies when the write went to `secrets`, which need not carry a kind. */
function maskPatch(resource: string, patch: unknown): unknown {
  return resourceIdFromGvrString(resource) === 'secrets' ? maskSecretBody(patch) : maskSecretObject(patch);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function field(label: string, value: string | number | undefined): DetailField[] {
  return value === undefined || value === '' ? [] : [{ label, value: String(value) }];
}

/** A time field: ISO UTC as its text (and `suffix`), its epoch ms for the page to show in local time too. */
function timeField(label: string, ms: number | undefined, suffix = ''): DetailField[] {
  return ms === undefined ? [] : [{ label, value: `${iso(ms)}${suffix}`, at: ms }];
}

function fieldsOf(e: JournalEntry): DetailField[] {
  const f: DetailField[] = [...timeField('Time', e.at), ...field('Entry', `#${e.seq} · ${entryKindLabel(e.kind)} (${e.kind})`), ...field('Key', e.key), ...field('Controller', e.controller)];
  switch (e.kind) {
    case 'informer':
      f.push(
        ...field('Event', `${e.initial ? 'initial ' : ''}${e.event}`),
        ...field('Object', `${resourceIdFromGvrString(e.resource)} ${e.objectKey}`),
        ...field('Source', e.role),
        ...field('resourceVersion', e.resourceVersion),
        ...field('generation', e.generation),
        ...field('Enqueued', e.enqueued.join(', ') || 'nothing'),
        ...field('Filtered by', e.filteredBy),
      );
      break;
    case 'queue':
      f.push(...field('Transition', queueTransitionText(e.transition) === e.transition ? e.transition : `${queueTransitionText(e.transition)} (${e.transition})`), ...field('Waits for', e.waitKind), ...timeField('Due', e.dueAt, e.dueAt !== undefined ? ` (after ${formatDuration(e.dueAt - e.at)})` : ''), ...field('Priority', e.priority !== undefined ? priorityLabel(e.priority) : undefined));
      break;
    case 'reconcileStart':
      f.push(...field('Reconcile', `#${e.attempt}`), ...field('Run by', e.via === 'step' ? 'a step' : 'a worker'), ...field('generation', e.generation), ...field('Priority', e.priority !== undefined ? priorityLabel(e.priority) : undefined));
      break;
    case 'reconcileEnd':
      f.push(...field('Outcome', outcomeSummary(e.outcome, e.durationMs)), ...field('Duration', formatDuration(e.durationMs)));
      if ((e.outcome.kind === 'error' || e.outcome.kind === 'requeue') && e.outcome.retryAt !== undefined) f.push(...timeField('Retry at', e.outcome.retryAt));
      if (e.outcome.kind === 'error' && e.outcome.failures !== undefined) f.push(...field('Failures in a row', e.outcome.failures));
      break;
    case 'write':
      f.push(
        ...field('Verb', e.verb),
        ...field('Object', `${resourceIdFromGvrString(e.resource)} ${writeTargetText(e.objectKey, e.subresource)}`),
        ...field('resourceVersion', e.resourceVersionBefore || e.resourceVersionAfter ? `${e.resourceVersionBefore ?? '∅'} → ${e.resourceVersionAfter ?? '∅'}` : undefined),
        ...field('Deleted', writeDeletedText(e)),
        ...field('Dry run', e.dryRun ? 'yes: sent with dryRun=All, nothing was stored' : undefined),
        ...field('Server warnings', e.warnings?.length ? e.warnings.join('\n') + (e.warnings.some((w) => w.startsWith('unknown field')) ? '\n(the server dropped each unknown field: it is not in the resource\'s schema, so a misspelt field or one the CRD does not declare is never stored)' : '') : undefined),
        ...field('Made by', e.controller === 'reconcile-lab' ? 'you, through Reconcile Lab' : undefined),
      );
      break;
    case 'warning':
      f.push(...field('Code', e.code));
      break;
    case 'control': {
      const name = USER_ACTION_NAMES[e.action];
      f.push(...field('Action', name ?? e.action), ...field('By', name ? (e.automatic ? 'Reconcile Lab, on its own' : 'you') : undefined));
      break;
    }
  }
  return f;
}

function messageOf(e: JournalEntry): string | undefined {
  switch (e.kind) {
    case 'reconcileEnd':
      return 'message' in e.outcome ? e.outcome.message : 'reason' in e.outcome && e.outcome.reason ? e.outcome.reason : undefined;
    case 'write':
      return e.error;
    case 'warning':
      return e.details ? `${e.message}\n\n${JSON.stringify(e.details, null, 2)}` : e.message;
    case 'control':
      return e.detail;
    default:
      return undefined;
  }
}

/** How far back a dry-run write looks for the Dry-Run Reconcile it belongs to. */
const DRY_RUN_SCAN_LIMIT = 2_000;

/**
 * The person's Dry-Run Reconcile an entry belongs to: the `dryRun` control entry itself, or a dry-run write after it
 * of the same key and controller (the host records the action, then the planned writes). The span is that control
 * entry and the dry-run writes of the key that follow it, up to the next control entry of the key. Undefined for
 * anything else, or when the control entry is no longer retained.
 */
function dryRunSpan(journal: DetailSource, e: JournalEntry): { start: JournalEntry; entries: JournalEntry[] } | undefined {
  const isAction = e.kind === 'control' && e.action === 'dryRun';
  if (!isAction && !(e.kind === 'write' && e.dryRun)) return undefined;
  const same = (x: JournalEntry) => x.key === e.key && x.controller === e.controller;
  let start: JournalEntry | undefined = isAction ? e : undefined;
  for (let s = e.seq - 1, n = 0; !start && n < DRY_RUN_SCAN_LIMIT; s--, n++) {
    const x = journal.get(s);
    if (!x) break;
    if (!same(x)) continue;
    if (x.kind === 'control') {
      if (x.action !== 'dryRun') return undefined;
      start = x;
    } else if (!(x.kind === 'write' && x.dryRun)) return undefined;
  }
  if (!start) return undefined;
  const entries: JournalEntry[] = [start];
  for (let s = start.seq + 1, n = 0; entries.length < MAX_RELATED && n < DRY_RUN_SCAN_LIMIT; s++, n++) {
    const x = journal.get(s);
    if (!x) break;
    if (!same(x)) continue;
    if (!(x.kind === 'write' && x.dryRun)) break;
    entries.push(x);
  }
  return { start, entries };
}

/** The detail of entry `seq`, or undefined when the journal no longer holds it. */
export function entryDetail(journal: DetailSource, seq: number, primaryResource: string | undefined): EntryDetailView | undefined {
  const e = journal.get(seq);
  if (!e) return undefined;
  const row = toLogEntryView(e, primaryResource);
  const span = journal.reconcileOf(seq);
  const message = messageOf(e);
  let cause: string[] | undefined;
  if (e.kind === 'informer') cause = [e.filteredBy ? `dropped by the predicate ${e.filteredBy}` : e.enqueued.length ? `enqueued ${e.enqueued.join(', ')}` : 'enqueued nothing'];
  else if (span && span.start.kind === 'reconcileStart') {
    const start = span.start;
    cause = start.triggers.length ? start.triggers.map((t) => reasonSummary(t, start.at)) : ['no recorded trigger'];
  }
  const detail: {
    -readonly [K in keyof EntryDetailView]: EntryDetailView[K];
  } = {
    seq: e.seq,
    time: e.at,
    kind: e.kind,
    level: row.level,
    ...(row.key !== undefined ? { key: row.key } : {}),
    ...(row.resource !== undefined ? { resource: row.resource } : {}),
    title: row.summary,
    fields: fieldsOf(e),
    ...(message ? { message: cut(message) } : {}),
    ...(cause ? { cause } : {}),
  };
  if (e.kind === 'write') {
    const w = journal.writeDetail(seq);
    if (!w) {
      detail.diffNote = journal.writeDetailMayBeDropped(seq)
        ? 'The patch body and the objects before and after are kept for the newest writes only: this write\'s were dropped.'
        : `This write was journaled without its body or objects: ${e.dryRun ? 'its controller sent none' : 'a Go controller\'s live writes carry none (only a Patch\'s body, never a Secret\'s)'}. Dry-Run Reconcile of ${row.key ?? 'the key'} shows what a reconcile writes, with each object's diff.`;
    } else {
      if (w.patch !== undefined) {
        const patch = maskPatch(e.resource, w.patch);
        detail.patch = cut(typeof patch === 'string' ? patch : JSON.stringify(patch, null, 2));
        if (w.patchType) detail.patchType = w.patchType;
      }
      if (!e.error) {
        const label = `${resourceIdFromGvrString(e.resource)}/${writeTargetText(e.objectKey, e.subresource)}`;
        const after = e.verb === 'delete' && !(w.after as { metadata?: { deletionTimestamp?: string } } | undefined)?.metadata?.deletionTimestamp ? undefined : w.after;
        // yamlDiff masks Secret values itself; a changed one shows as "*** (before)" / "*** (after)".
        detail.diff = cut(yamlDiff(label, w.before, after, { volatile: true, beforeName: 'before', afterName: e.dryRun ? 'after (dry run, not stored)' : 'after' }));
      }
    }
  }
  const dry = span ? undefined : dryRunSpan(journal, e);
  if (dry) {
    detail.cause ??= ['you ran Dry-Run Reconcile: the reconciler ran once with every write sent as dryRun=All, and nothing was stored'];
    detail.reconcile = {
      label: `Dry-Run Reconcile of ${dry.start.key ?? ''} (your action; nothing was stored)`,
      entries: dry.entries.map((x) => ({ seq: x.seq, time: x.at, kind: x.kind, summary: toLogEntryView(x, primaryResource).summary })),
    };
  }
  if (span) {
    const end = span.end;
    const start = span.start;
    const attempt = start.kind === 'reconcileStart' ? ` #${start.attempt}` : '';
    const how = end && end.kind === 'reconcileEnd' ? outcomeSummary(end.outcome, end.durationMs) : 'still running';
    detail.reconcile = {
      label: `Reconcile${attempt} of ${start.key ?? ''}: ${how}`,
      entries: span.entries.slice(0, MAX_RELATED).map((x) => {
        const v = toLogEntryView(x, primaryResource);
        return { seq: x.seq, time: x.at, kind: x.kind, summary: v.summary };
      }),
    };
  }
  return detail;
}
