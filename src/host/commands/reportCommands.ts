import * as vscode from 'vscode';
import { buildReconcileReport, renderReportJson, renderReportMarkdown, type ReconcileReport } from '../../core/actions/report.ts';
import { keyOf as keyOfObject } from '../../core/k8s/keys.ts';
import type { LogFilter } from '../../shared/protocol.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import { boolArg, fail, isFailure, stringArg, stringArrayArg, type CommandResult } from './args.ts';
import { requireSession } from './pickers.ts';
import * as ui from '../ui.ts';
import { refusePrivileged } from './privileged.ts';

/**
 * Export Reconcile Report: one reconcile pass over the loop's objects (dry-run
 * unless the person picks a live pass), recording for each what was desired
 * and observed, the writes, the requeue decision and the status, written as
 * Markdown (or JSON) and opened. Argument: `{ dryRun?, format?: "markdown" |
 * "json", path?, keys? }`; without `path` a save dialog asks.
 */
export async function exportReport(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ path: string; totals: ReconcileReport['totals'] }>> {
  // A path writes a file without the save dialog; dryRun: false writes to the cluster without the mode pick.
  const refused = refusePrivileged(arg, boolArg(arg, 'dryRun') === false ? ['path', 'dryRun'] : ['path']);
  if (refused) return refused;
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  if (!s.reconciler || !s.builtInPrimaryInfo || !s.builtInPrimaryResource) return fail(s.loopProblem?.reason === 'untrusted' ? 'untrusted' : 'noLoop', s.loopProblem?.message ?? 'No reconciler in this connection.');
  let dryRun = boolArg(arg, 'dryRun');
  if (dryRun === undefined) {
    if (arg !== undefined) dryRun = true;
    else {
      const pick = await ui.pick(
        [
          { label: 'Dry run', description: 'recommended', detail: 'Every write is sent with dryRun=All: the report shows what would change; nothing is stored.', dry: true },
          { label: 'Live pass', detail: 'The reconciler really writes (as one pass of the loop would), and the report records it.', dry: false },
        ],
        { title: 'Reconcile report: how should the pass run?' },
      );
      if (!pick) return fail('cancelled', 'No mode chosen.');
      dryRun = pick.dry;
    }
  }
  // A live pass reconciles outside the work queue: with workers running (or a step in flight) a key could be
  // reconciled twice at once, which the queue exists to prevent. Live reports need a paused, idle loop.
  const st = s.controller?.status();
  if (!dryRun && st && st.state !== 'stopped' && (!st.paused || st.inFlight > 0)) {
    return fail('loopRunning', 'Pause the reconcile loop (and let in-flight reconciles finish) before a live report, or choose a dry run: a live report reconciles outside the work queue and could run a key concurrently with a worker.');
  }
  const format = stringArg(arg, 'format') === 'json' ? 'json' : 'markdown';
  const keys = stringArrayArg(arg, 'keys') ?? s.list(s.builtInPrimaryResource).map((o) => keyOfObject(o)).sort();
  let path = stringArg(arg, 'path');
  if (!path) {
    const base = vscode.workspace.workspaceFolders?.[0]?.uri;
    const name = `reconcile-report.${format === 'json' ? 'json' : 'md'}`;
    const uri = await vscode.window.showSaveDialog({
      title: 'Save the reconcile report',
      filters: format === 'json' ? { JSON: ['json'] } : { Markdown: ['md'] },
      ...(base ? { defaultUri: vscode.Uri.joinPath(base, name) } : {}),
    });
    if (!uri) return fail('cancelled', 'No file chosen.');
    path = uri.fsPath;
  }
  const report = await ui.progress(
    { location: vscode.ProgressLocation.Notification, title: `Reconcile report over ${keys.length} object(s)${dryRun ? ' (dry run)' : ''}` },
    () =>
      buildReconcileReport({
        client: s.client,
        reconciler: s.reconciler!,
        primary: s.builtInPrimaryInfo!,
        keys,
        dryRun: dryRun!,
        cache: s.cacheReader(),
        log: lab.log,
        clock: lab.clock,
        onWrite: (w) => s.recordWrite(w, w.key),
      }),
  );
  const text = format === 'json' ? renderReportJson(report) : renderReportMarkdown(report);
  const uri = vscode.Uri.file(path);
  await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(text));
  lab.log.info('reconcile report written', { path, ...report.totals, dryRun: report.dryRun });
  if (boolArg(arg, 'open') !== false) await vscode.window.showTextDocument(uri, { preview: false });
  return { ok: true, path, totals: report.totals };
}

/**
 * Show Event Log: opens (or reveals) the journal webview. Argument
 * `{ exportTo: path, filter? }` exports the journal as JSON lines instead.
 */
export async function showEventLog(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ exported?: string }>> {
  const refused = refusePrivileged(arg, ['exportTo']);
  if (refused) return refused;
  const exportTo = stringArg(arg, 'exportTo');
  if (exportTo) {
    const filter = (typeof arg === 'object' && arg !== null && (arg as { filter?: LogFilter }).filter) || {};
    return { ok: true, exported: await lab.exportEventLog(filter, exportTo) };
  }
  lab.eventLog.show();
  return { ok: true };
}

export function showOutput(lab: ReconcileLab): CommandResult {
  lab.output.channel.show(true);
  return { ok: true };
}

/** Opens the Get Started walkthrough with what this window did checked off (WalkthroughProgress.open). */
export async function getStarted(lab: ReconcileLab): Promise<CommandResult> {
  await lab.walkthrough.open();
  return { ok: true };
}
