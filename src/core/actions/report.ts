import { codeSpan, escapeMarkdown as md, fence } from '../text/markdown.ts';
import type { Clock } from '../clock.ts';
import { realClock } from '../clock.ts';
import type { CacheReader, Reconciler } from '../controller/reconcile.ts';
import { isNotFound, type KubeClient } from '../k8s/client.ts';
import type { WriteRecord } from '../k8s/dynamicClient.ts';
import { rvAfterText, writeDeletedText } from '../journal/journal.ts';
import { keyOf, splitKey, type ObjectKey } from '../k8s/keys.ts';
import type { GroupVersionResource, KubeObject } from '../k8s/objects.ts';
import type { Logger } from '../log.ts';
import { rfc3339 } from '../reconcilers/conditions.ts';
import { canExplain } from '../reconcilers/explain.ts';
import { createReconcileContext } from './context.ts';
import { noWritesText, plannedActions, resourceLabel } from './dryRun.ts';
import { yamlDiff } from './objectDiff.ts';
import { deleteFoundGone, writeText, writeWarningsText } from '../journal/writeText.ts';
import { describeOutcome, runOnce, type ReconcileOutcome } from './runOnce.ts';

export interface ReportAction {
  verb: WriteRecord['verb'];
  subresource?: string;
  resource: string;
  key: ObjectKey;
  dryRun: boolean;
  outcome: 'ok' | 'error';
  error?: string;
  resourceVersionBefore?: string;
  resourceVersionAfter?: string;
  /** The write removed the last finalizer of a Terminating object: it deleted the object (dry run: would). */
  deleted?: boolean;
  /** The server's warnings about the write (`unknown field "spec.x"`). */
  warnings?: string[];
  diff: string;
}

export interface ReportEntry {
  key: ObjectKey;
  /** What the reconciler wants, as it explains itself (only when {@link explained}). */
  desired?: unknown;
  /** What it saw before acting, as it explains itself (only when {@link explained}). */
  observed?: unknown;
  /**
   * The primary's spec and status before the pass, for a reconciler that does not explain itself ({@link explained}
   * false): they are not called desired and observed, which they are not (a JSON consumer would diff them as drift).
   */
  spec?: unknown;
  status?: unknown;
  /**
   * Unified YAML diff observed → desired ("" when they match). Only computed when the reconciler explains
   * itself: a spec and a status are different things, so comparing them would show every object as drift.
   */
  diff: string;
  /** True when desired/observed came from the reconciler's explain(); false: the primary's spec and status, not compared. */
  explained: boolean;
  notes: string[];
  /** Writes taken (or planned, in dry-run), in order. Empty: nothing to do (the idempotent case). */
  actions: ReportAction[];
  outcome: ReconcileOutcome;
  /** The requeue decision in words, with its reason. */
  requeue: string;
  /** The status written to the primary through /status (or planned), if any. */
  statusWritten?: unknown;
  /** The primary's resourceVersion before and after the pass (undefined: it did not exist). */
  resourceVersionBefore?: string;
  resourceVersionAfter?: string;
  durationMs: number;
}

export interface ReconcileReport {
  generatedAt: string;
  resource: string;
  reconciler: string;
  dryRun: boolean;
  entries: ReportEntry[];
  /**
   * `changed`, `unchanged` and `errors` partition the objects (they add up to `objects`): a pass that failed is an
   * error whatever it wrote; else it changed something when it made a write (attempted), and is unchanged when it
   * made none. `requeued` counts passes that asked to be looked at again after a delay, across that partition;
   * `writes` counts the writes that succeeded (or were planned).
   */
  totals: { objects: number; writes: number; changed: number; unchanged: number; requeued: number; errors: number };
}

async function rvOf(client: KubeClient, gvr: GroupVersionResource, key: ObjectKey, signal?: AbortSignal): Promise<KubeObject | undefined> {
  const { namespace, name } = splitKey(key);
  try {
    return await client.get(gvr, namespace, name, signal);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** One object's reconcile for {@link buildReport}: what the reconciler did (or, in a dry run, planned) for it. */
export interface ReportPass {
  outcome: ReconcileOutcome;
  durationMs: number;
  /** Writes taken (or planned), in order. */
  actions: ReportAction[];
  /** The status written (or planned) to the key's own object through /status, when the pass knows it. */
  statusWritten?: unknown;
  /** A status write to the key's own object succeeded but its body is not known: the object read after the pass has it. */
  wroteStatus?: boolean;
}

/** What a reconciler says it wants for a key apart from writing it ({@link buildReport}'s `explain`). */
export interface ReportExplanation {
  desired: unknown;
  observed: unknown;
  notes: string[];
}

/**
 * One reconcile pass over `keys` (default: every object of `primary` in `namespace`, sorted), in order, one key at a
 * time: for each, the primary's resourceVersion before, what was desired and observed (`explain`, when the
 * reconciler can say; else the primary's spec and status, not compared), the key's `pass` (its writes, outcome and
 * status), and the resourceVersion after. Requeue decisions are reported, not acted on. `pass` is called once per key,
 * after the previous one settled.
 */
export async function buildReport(o: {
  client: KubeClient;
  primary: GroupVersionResource;
  keys?: readonly ObjectKey[];
  namespace?: string;
  dryRun: boolean;
  /** The reconciler's name, as the report's header shows it. */
  reconciler: string;
  pass: (key: ObjectKey) => Promise<ReportPass>;
  explain?: (key: ObjectKey) => Promise<ReportExplanation>;
  clock?: Clock;
  signal?: AbortSignal;
}): Promise<ReconcileReport> {
  const clock = o.clock ?? realClock;
  const keys = o.keys ? [...o.keys] : (await o.client.list(o.primary, o.namespace, { signal: o.signal })).items.map((x) => keyOf(x)).sort();
  const entries: ReportEntry[] = [];
  for (const key of keys) {
    const before = await rvOf(o.client, o.primary, key, o.signal);
    let desired: unknown;
    let observed: unknown;
    let notes: string[] = [];
    let explained = false;
    if (o.explain) {
      try {
        ({ desired, observed, notes } = await o.explain(key));
        explained = true;
      } catch (e) {
        notes = [`explain failed: ${(e as Error).message}`];
      }
    }
    const pass = await o.pass(key);
    const after = await rvOf(o.client, o.primary, key, o.signal);
    const entry: ReportEntry = {
      key,
      ...(explained ? { desired, observed } : { spec: before?.spec, status: before?.status }),
      diff: explained ? yamlDiff(key, observed, desired, { volatile: true }) : '',
      explained,
      notes,
      actions: pass.actions,
      outcome: pass.outcome,
      requeue: describeOutcome(pass.outcome),
      resourceVersionBefore: before?.metadata.resourceVersion,
      resourceVersionAfter: after?.metadata.resourceVersion,
      durationMs: pass.durationMs,
    };
    if (pass.statusWritten !== undefined) entry.statusWritten = pass.statusWritten;
    else if (pass.wroteStatus && after) entry.statusWritten = after.status;
    entries.push(entry);
  }
  const failed = (e: ReportEntry) => e.outcome.kind === 'error' || e.outcome.kind === 'terminal';
  const totals = {
    objects: entries.length,
    writes: entries.reduce((n, e) => n + e.actions.filter((a) => a.outcome === 'ok').length, 0),
    // One of three per object: a failed pass is an error; else it changed something or left everything unchanged.
    changed: entries.filter((e) => !failed(e) && e.actions.length > 0).length,
    unchanged: entries.filter((e) => !failed(e) && e.actions.length === 0).length,
    requeued: entries.filter((e) => e.outcome.kind === 'requeueAfter').length,
    errors: entries.filter(failed).length,
  };
  return { generatedAt: rfc3339(clock.now()), resource: resourceLabel(o.primary), reconciler: o.reconciler, dryRun: o.dryRun, entries, totals };
}

/**
 * {@link buildReport} with a reconciler of this process: each key's reconciler runs directly (not through a queue),
 * through a client that records its writes (every write dryRun=All when `dryRun`), and explains itself when it can.
 */
export async function buildReconcileReport(o: {
  client: KubeClient;
  reconciler: Reconciler;
  primary: GroupVersionResource;
  keys?: readonly ObjectKey[];
  namespace?: string;
  dryRun: boolean;
  cache?: CacheReader;
  log?: Logger;
  clock?: Clock;
  signal?: AbortSignal;
  onWrite?: (w: WriteRecord) => void;
}): Promise<ReconcileReport> {
  const clock = o.clock ?? realClock;
  const reconciler = o.reconciler;
  return buildReport({
    ...o,
    reconciler: reconciler.name,
    ...(canExplain(reconciler)
      ? {
          explain: async (key: ObjectKey) => {
            const { namespace, name } = splitKey(key);
            const ex = await reconciler.explain(namespace ? { key, namespace, name } : { key, name }, createReconcileContext({ ...o, dryRun: true }));
            return { desired: ex.desired, observed: ex.observed, notes: ex.notes };
          },
        }
      : {}),
    pass: async (key) => {
      const run = await runOnce({ ...o, key, clock });
      const statusWrite = [...run.writes].reverse().find((w) => w.key === key && w.subresource === 'status' && w.outcome === 'ok' && w.gvr.resource === o.primary.resource);
      return {
        outcome: run.outcome,
        durationMs: run.durationMs,
        actions: plannedActions(run.writes).map((a) => {
          const r: ReportAction = { verb: a.verb, resource: a.resource, key: a.key, dryRun: a.record.dryRun, outcome: a.outcome, diff: a.diff };
          if (a.subresource) r.subresource = a.subresource;
          if (a.error) r.error = a.error;
          if (a.record.resourceVersionBefore) r.resourceVersionBefore = a.record.resourceVersionBefore;
          if (a.record.resourceVersionAfter) r.resourceVersionAfter = a.record.resourceVersionAfter;
          if (a.record.deleted) r.deleted = true;
          if (a.warnings) r.warnings = a.warnings;
          return r;
        }),
        ...(statusWrite ? { statusWritten: statusWrite.after?.status } : {}),
      };
    },
  });
}

/** The report as pretty JSON (stable field order). */
export function renderReportJson(report: ReconcileReport): string {
  return JSON.stringify(report, null, 2);
}

/** Why observed and desired are not diffed for a reconciler that does not explain itself. */
const NOT_COMPARED = '**Observed → desired:** not compared: only the built-in lab reconciler states what it wants apart from writing it, and an object\'s spec and status are different things, so they are not diffed. **Actions** are what this reconciler wrote (or, in a dry run, would write).';

/**
 * A write the server accepted that changes nothing (an update, patch or apply of an object already as desired: a
 * write every pass): live, its resourceVersion stayed; in a dry run, the planned object equals the current one (the
 * diff, volatile fields aside, is empty).
 */
export function changesNothing(a: ReportAction): boolean {
  if (a.outcome !== 'ok' || a.deleted || a.verb === 'create' || a.verb === 'delete') return false;
  return a.dryRun ? a.diff === '' : a.resourceVersionBefore !== undefined && a.resourceVersionBefore === a.resourceVersionAfter;
}

/**
 * What the report says after an action that changed nothing: a write repeated on every pass, to compare before
 * sending — except a server-side apply, which is meant to send the whole intent on every pass.
 */
export function noChangeText(a: Pick<ReportAction, 'verb' | 'dryRun'>): string {
  const was = `no change: the object already was as ${a.dryRun ? 'planned' : 'written'}`;
  return a.verb === 'apply' ? `${was} (a server-side apply, sent with the whole intent on every pass: the server stored nothing)` : `${was} (a write on every pass; compare before writing)`;
}

/** {@link deleteFoundGone} of a report action (its error only counts when it failed). */
function alreadyGone(a: ReportAction): boolean {
  return a.outcome === 'error' && deleteFoundGone(a);
}

/** The report as Markdown: a summary table, then one section per object. */
export function renderReportMarkdown(report: ReconcileReport): string {
  const out: string[] = [];
  const t = report.totals;
  const noOps = report.entries.reduce((n, e) => n + e.actions.filter(changesNothing).length, 0);
  out.push(`# Reconcile report: ${md(report.resource)}`);
  out.push('');
  out.push(`Reconciler ${codeSpan(report.reconciler)}, ${report.dryRun ? '**dry-run** (nothing persisted)' : 'live'}, ${report.generatedAt}. ` +
    `${t.objects} object(s): ${t.changed} ${report.dryRun ? 'with writes planned' : 'written to'}, ${t.unchanged} unchanged, ${t.errors} failed` +
    `${t.requeued ? `; ${t.requeued} of them asked to be requeued after a delay` : ''}. ` +
    `${t.writes} write(s)${report.dryRun ? ' planned' : ''}${noOps ? ` (${noOps} changing nothing)` : ''}.`);
  out.push('');
  out.push(`| Object | Actions | Requeue decision | ${report.dryRun ? 'Status it would write' : 'Status written'} | resourceVersion before → after |`);
  out.push('|---|---|---|---|---|');
  for (const e of report.entries) {
    const actions = e.actions.length ? e.actions.map((a) => md(writeText({ verb: a.verb, resource: a.resource, objectKey: a.key, subresource: a.subresource })) + (a.outcome === 'error' ? (alreadyGone(a) ? ' (not found: already gone)' : ' (failed)') : changesNothing(a) ? ' (no change)' : '')).join('<br>') : 'none';
    const rvs = e.resourceVersionBefore === undefined && e.resourceVersionAfter === undefined ? '(not found)' : `${md(e.resourceVersionBefore ?? '—')} → ${md(e.resourceVersionAfter ?? '(gone)')}`;
    out.push(`| ${codeSpan(e.key)} | ${actions} | ${md(e.requeue)} | ${e.statusWritten !== undefined ? 'yes' : 'no'} | ${rvs} |`);
  }
  // Said once for the whole report when no reconciler explained itself (not once per object).
  const unexplained = report.entries.length > 0 && report.entries.every((e) => !e.explained);
  if (unexplained) out.push('', NOT_COMPARED);
  for (const e of report.entries) {
    out.push('');
    out.push(`## ${md(e.key)}`);
    out.push('');
    for (const n of e.notes) out.push(`- ${md(n)}`);
    if (e.notes.length) out.push('');
    out.push(`**Requeue:** ${md(e.requeue)}`);
    out.push('');
    if (e.explained) out.push(e.diff ? `**Observed → desired:**\n\n${fence('diff', e.diff)}` : '**Observed → desired:** no difference (converged).', '');
    else if (!unexplained) out.push(NOT_COMPARED, '');
    if (e.actions.length === 0) out.push(`**Actions:** ${e.outcome.kind !== 'done' ? noWritesText(e.outcome) : e.resourceVersionBefore === undefined ? 'none (the object does not exist: the reconcile had nothing to do for it)' : 'none (already as desired; nothing written)'}.`);
    else {
      out.push('**Actions:**');
      out.push('');
      for (const a of e.actions) {
        out.push(`- ${md(writeText({ verb: a.verb, resource: a.resource, objectKey: a.key, subresource: a.subresource }))}${a.dryRun ? ' (dry-run)' : ''}: ${a.outcome === 'ok' ? `rv ${md(a.resourceVersionBefore ?? '—')} → ${md(rvAfterText(a, '—'))}${a.deleted ? ` (${writeDeletedText(a)})` : ''}${changesNothing(a) ? ` — ${noChangeText(a)}` : ''}` : `${alreadyGone(a) ? 'not found (already gone)' : 'failed'}: ${md(String(a.error))}`}${a.warnings ? ` — ⚠ ${md(writeWarningsText(a.warnings))}` : ''}`);
        if (a.diff) out.push('', fence('diff', a.diff), '');
      }
    }
    if (e.statusWritten !== undefined) {
      out.push('');
      out.push(`**${report.dryRun ? 'Status it would write (dry-run, not written)' : 'Status written'}:**\n\n${fence('json', JSON.stringify(e.statusWritten, null, 2))}`);
    }
  }
  return out.join('\n') + '\n';
}
