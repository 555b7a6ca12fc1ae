/**
 * Maps robustness-check results (src/core/checks/types.ts) to the results view's model (src/shared/checksProtocol.ts):
 * plain text the webview shows with `textContent`. Pure (no `vscode`), unit-tested in
 * test/unit/host-free/webview/checksView.test.ts.
 */
import { CHECK_KINDS, CHECK_TITLES, type CheckKind, type CheckReconcilerSpec, type CheckReport, type CheckResult, type CheckWrite, type Finding } from '../../core/checks/types.ts';
import type { ObjectKey } from '../../core/k8s/keys.ts';
import type { CheckResultView, ChecksJournalLine, ChecksViewModel, FindingView } from '../../shared/checksProtocol.ts';
import { entryKindLabel, entryKindTitle } from '../../shared/protocol.ts';
import { formatDuration, plural } from '../views/format.ts';
import { delayText } from '../../core/text/duration.ts';
import { toLogEntryView } from './journalView.ts';
import { rvAfterText } from '../../core/journal/journal.ts';
import { writeText, writeWarningsText } from '../../core/journal/writeText.ts';

/** What a run is about, for the title line. */
export interface ChecksRunInfo {
  readonly keys: readonly ObjectKey[];
  readonly checks: readonly CheckKind[];
  /** "lab reconciler", "module reconciler samples/buggy/x.ts", "Go controller planter": {@link reconcilerTitle}. */
  readonly reconciler: string;
  /** "reconcile-lab (local)". */
  readonly cluster: string;
}

/**
 * The checked reconciler as the title line names it: "lab reconciler", "exec reconciler ./r.sh", "module reconciler
 * samples/x.ts" (from the setting's text, `flag`), or "Go controller planter" with the name the program announced for
 * the controller the checks drive (just "Go controller" when none is known).
 */
export function reconcilerTitle(recipe: { readonly spec: CheckReconcilerSpec; readonly flag: string }, goController?: string): string {
  switch (recipe.spec.kind) {
    case 'lab':
      return 'lab reconciler';
    case 'exec':
      return `exec reconciler ${recipe.flag.slice('exec:'.length)}`;
    case 'module':
      return `module reconciler ${recipe.flag.slice('module:'.length)}`;
    case 'go':
      return goController ? `Go controller ${goController}` : 'Go controller';
  }
}

function titleOf(run: ChecksRunInfo): string {
  const what = run.keys.length === 1 ? run.keys[0]! : `${run.keys.length} keys`;
  return `Robustness checks of ${what} · ${run.reconciler} · cluster ${run.cluster}`;
}

/** One write as a line: "create configmaps ns/x-config rv ∅→12 ok". */
export function writeLine(w: CheckWrite): string {
  const rv = w.resourceVersionBefore || w.resourceVersionAfter ? ` rv ${w.resourceVersionBefore || '∅'}→${rvAfterText(w, '∅')}` : '';
  return `${writeText(w)}${rv} ${w.outcome === 'ok' ? 'ok' : `failed: ${w.error ?? 'error'}`}${w.warnings?.length ? ` ⚠ ${writeWarningsText(w.warnings)}` : ''}`;
}

function findingView(f: Finding, primaryResource: string | undefined): FindingView {
  const journal: ChecksJournalLine[] = f.journal.map((e) => {
    const v = toLogEntryView(e, primaryResource);
    return { time: v.time, kind: v.kind, kindLabel: entryKindLabel(v.kind), kindTitle: entryKindTitle(v.kind), level: v.level, ...(v.key !== undefined ? { key: v.key } : {}), summary: v.summary };
  });
  return {
    id: f.id,
    check: f.check,
    checkTitle: CHECK_TITLES[f.check] ?? f.check,
    severity: f.severity,
    key: f.key,
    title: f.title,
    explanation: f.explanation,
    perturbation: f.perturbation.description,
    diff: f.diff,
    writes: f.writes.map(writeLine),
    writeDiffs: f.writes.map((w) => w.diff),
    journal,
    reproduce: f.reproduce,
  };
}

function resultView(r: CheckResult, primaryResource: string | undefined): CheckResultView {
  return {
    check: r.check,
    checkTitle: CHECK_TITLES[r.check] ?? r.check,
    key: r.key,
    status: r.status,
    ...(r.message !== undefined ? { message: r.message } : {}),
    durationText: delayText(r.durationMs),
    findings: r.findings.map((f) => findingView(f, primaryResource)),
  };
}

/** The empty view (before the first run). */
export function emptyChecksModel(): ChecksViewModel {
  return {
    phase: 'empty',
    title: 'Robustness checks',
    status: 'Run "Reconcile Lab: Run Robustness Checks…" on an object of the loop (or from the palette for every key).',
    timings: '',
    results: [],
    notes: [],
    masked: [],
    canExport: false,
    canRerun: false,
  };
}

/** The id of a (key, check) pair in {@link runningChecksModel}'s `running` set. */
export function runningId(key: ObjectKey, check: CheckKind): string {
  return `${key}|${check}`;
}

/**
 * A run in progress: every (key, check) in request order, finished ones with their results, started ones (see
 * {@link runningId}) marked running, the rest pending. `step` is the harness's latest step message.
 */
export function runningChecksModel(run: ChecksRunInfo, finished: readonly CheckResult[], running: ReadonlySet<string>, step: string | undefined, primaryResource: string | undefined): ChecksViewModel {
  const done = new Map(finished.map((r) => [runningId(r.key, r.check), r]));
  const results: CheckResultView[] = [];
  for (const key of run.keys) {
    for (const check of run.checks) {
      const r = done.get(`${key}|${check}`);
      if (r) results.push(resultView(r, primaryResource));
      else results.push({ check, checkTitle: CHECK_TITLES[check] ?? check, key, status: running.has(runningId(key, check)) ? 'running' : 'pending', findings: [] });
    }
  }
  const total = run.keys.length * run.checks.length;
  const findings = finished.reduce((n, r) => n + r.findings.length, 0);
  return {
    phase: 'running',
    title: titleOf(run),
    status: `Running: ${finished.length} of ${total} check(s) done, ${plural(findings, 'finding')} so far${step ? ` · ${step}` : ''}`,
    timings: '',
    results,
    notes: [],
    masked: [],
    canExport: false,
    canRerun: false,
  };
}

/**
 * Results in the order the running view showed them (keys as requested, checks in {@link CHECK_KINDS} order), so
 * rows do not jump when a run finishes (the core reports convergence first: it comes from the reference runs).
 */
function inRunOrder(run: ChecksRunInfo, results: readonly CheckResult[]): CheckResult[] {
  const keyIndex = (k: ObjectKey) => {
    const i = run.keys.indexOf(k);
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  return [...results].sort((a, b) => keyIndex(a.key) - keyIndex(b.key) || CHECK_KINDS.indexOf(a.check) - CHECK_KINDS.indexOf(b.check));
}

/** A finished run. */
export function reportChecksModel(run: ChecksRunInfo, report: CheckReport, primaryResource: string | undefined): ChecksViewModel {
  const t = report.totals;
  const verdict = t.findings === 0 ? (t.errors === 0 ? 'no findings' : 'no findings, but some checks could not run') : `${plural(t.findings, 'finding')}`;
  const status = [
    `${report.aborted ? 'Cancelled' : 'Finished'} in ${formatDuration(report.durationMs)}: ${verdict}`,
    `${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped, ${t.errors} could not run`,
  ]
    .filter(Boolean)
    .join(' · ');
  return {
    phase: 'done',
    title: titleOf(run),
    status,
    timings: report.parts.map((p) => `${p.part} ${formatDuration(p.ms)}`).join(', '),
    results: inRunOrder(run, report.results).map((r) => resultView(r, primaryResource)),
    notes: report.notes,
    masked: report.masked.map((m) => `${m.path} (${m.reason === 'learned' ? 'differed between the two reference runs' : 'always volatile'})`),
    canExport: true,
    canRerun: true,
  };
}

/** The reproduce line of a finding of `report`, by id (the webview's copy button names the finding). */
export function reproduceOf(report: CheckReport | undefined, findingId: string): string | undefined {
  return report?.findings.find((f) => f.id === findingId)?.reproduce;
}

