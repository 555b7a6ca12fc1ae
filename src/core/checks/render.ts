import { codeSpan, escapeMarkdown as md, fence } from '../text/markdown.ts';
import { rvAfterText } from '../journal/journal.ts';
import { CHECK_TITLES, type CheckReport, type CheckResult, type Finding } from './types.ts';
import { writeText, writeWarningsText } from '../journal/writeText.ts';

/**
 * The check report for people (text for a terminal, Markdown like the reconcile report) and machines (JSON).
 * Cluster- and workspace-provided text is escaped for Markdown; the terminal renderer's caller strips control
 * characters (the CLI does for every line it prints).
 */

const STATUS_WORD: Record<CheckResult['status'], string> = { passed: 'passed', failed: 'FAILED', skipped: 'skipped', error: 'ERROR' };

function indent(text: string, pad: string): string {
  return text.split('\n').map((l) => pad + l).join('\n');
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The report as pretty JSON. */
export function renderCheckJson(report: CheckReport): string {
  return JSON.stringify(report, null, 2);
}

function summaryLine(r: CheckReport): string {
  const t = r.totals;
  return `${t.findings} finding(s): ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped, ${t.errors} could not run — ${seconds(r.durationMs)}${r.aborted ? ' (aborted)' : ''}`;
}

/** Text for a terminal: per key, one line per check, then each finding with its explanation, writes and diff. */
export function renderCheckText(r: CheckReport, options: { verbose?: boolean } = {}): string {
  const out: string[] = [];
  // The built-in one is named once ("the lab reconciler", not "the lab reconciler lab"); others by what they run.
  const reconciler = r.reconciler === r.reconcilerKind ? `the ${r.reconcilerKind} reconciler` : `the ${r.reconcilerKind} reconciler ${r.reconciler}`;
  out.push(`Robustness checks of ${r.resource} with ${reconciler} on ${r.cluster.name}${r.cluster.local ? ' (local control plane)' : ''}; every run used copies in scratch namespaces.`);
  for (const key of r.keys) {
    out.push('', `${key}`);
    const ofKey = r.results.filter((x) => x.key === key);
    for (const [i, res] of ofKey.entries()) {
      // A reason shared by several checks of the key (its reference run failed: each says so, with the program's last
      // lines) is printed once; the others point at it.
      const first = res.status === 'error' && res.message ? ofKey.find((x, j) => j < i && x.status === 'error' && x.message === res.message) : undefined;
      const message = first ? `the same as ${CHECK_TITLES[first.check]} above` : res.message ?? '';
      out.push(`  ${STATUS_WORD[res.status].padEnd(7)} ${CHECK_TITLES[res.check].padEnd(30)} ${message} (${seconds(res.durationMs)})`);
    }
    for (const f of r.findings.filter((x) => x.key === key)) out.push('', ...findingText(f, options.verbose ?? false));
  }
  const unsteady = unsteadyFields(r);
  if (unsteady.length) out.push('', `note: ${unsteadyNote(unsteady)}`);
  for (const n of r.notes) out.push('', `note: ${n}`);
  out.push('', summaryLine(r));
  if (r.parts.length) out.push(`time: ${r.parts.map((p) => `${p.part} ${seconds(p.ms)}`).join(', ')}`);
  return out.join('\n') + '\n';
}

/**
 * The fields the two reference runs (nothing perturbed) left different, so no check compared them: the learned masks
 * without the generated-name rules (a `generateName` child is named differently each run by design).
 */
export function unsteadyFields(r: Pick<CheckReport, 'masked'>): string[] {
  return r.masked.filter((m) => m.reason === 'learned' && !/: metadata\.name$/.test(m.path)).map((m) => m.path);
}

/** The text report's note on {@link unsteadyFields} (not empty): what they are, why it matters, how to look. */
export function unsteadyNote(paths: readonly string[]): string {
  const shown = paths.length > 8 ? `${paths.slice(0, 8).join(', ')} and ${paths.length - 8} more (--markdown lists all)` : paths.join(', ');
  return `The two reference runs (the same spec, nothing perturbed) ended differently in ${shown}, so no check compared ${paths.length === 1 ? 'it' : 'them'}. A controller that ends differently on the same input writes something nondeterministic (a timestamp, a random value: harmless) or races with itself (it acted on a stale read of its own write, e.g. appended twice): reconcile-lab run on the object shows each write as it happens.`;
}

function findingText(f: Finding, verbose: boolean): string[] {
  const out = [`  ${f.severity === 'error' ? '✗' : '!'} [${CHECK_TITLES[f.check]}] ${f.title}`];
  out.push(indent(f.explanation, '      '));
  out.push(`      perturbation: ${f.perturbation.description}`);
  for (const w of f.writes.slice(0, verbose ? 50 : 6)) {
    out.push(`      write: ${writeText(w)}${w.outcome === 'error' ? ` — failed: ${w.error}` : ` (rv ${w.resourceVersionBefore ?? '—'} → ${rvAfterText(w, '—')})`}${w.warnings?.length ? ` ⚠ ${writeWarningsText(w.warnings)}` : ''}`);
  }
  if (f.writes.length > (verbose ? 50 : 6)) out.push(`      … ${f.writes.length - (verbose ? 50 : 6)} more write(s) (--json has all)`);
  if (f.diff) out.push('      end state, reference → perturbed:', indent(f.diff, '        '));
  out.push(`      reproduce: ${f.reproduce}`);
  return out;
}

/** Markdown, like the reconcile report: a summary table, then one section per finding. */
export function renderCheckMarkdown(r: CheckReport): string {
  const out: string[] = [];
  out.push(`# Robustness checks: ${md(r.resource)}`, '');
  out.push(`Reconciler ${codeSpan(r.reconciler)} (${r.reconcilerKind}) on ${codeSpan(r.cluster.name)}${r.cluster.local ? ' (local control plane)' : ''}, ${r.generatedAt}. ${md(summaryLine(r))}.`, '');
  out.push('| Key | Check | Result | Details | Time |', '|---|---|---|---|---|');
  for (const res of r.results) out.push(`| ${codeSpan(res.key)} | ${CHECK_TITLES[res.check]} | ${STATUS_WORD[res.status]} | ${md(res.message ?? '')} | ${seconds(res.durationMs)} |`);
  for (const f of r.findings) {
    out.push('', `## ${f.severity === 'error' ? 'Error' : 'Warning'}: ${md(f.title)}`, '');
    out.push(`**Key** ${codeSpan(f.key)} · **check** ${CHECK_TITLES[f.check]}`, '');
    out.push(md(f.explanation), '');
    out.push(`**Perturbation:** ${md(f.perturbation.description)}`, '');
    if (f.writes.length) {
      out.push('**Writes:**', '');
      for (const w of f.writes) out.push(`- ${md(writeText(w))}${w.outcome === 'error' ? ` failed: ${md(w.error ?? '')}` : `, rv ${md(w.resourceVersionBefore ?? '—')} → ${md(rvAfterText(w, '—'))}`}${w.warnings?.length ? ` — ⚠ ${md(writeWarningsText(w.warnings))}` : ''}`);
      out.push('');
    }
    if (f.diff) out.push('**End state, reference → perturbed:**', '', fence('diff', f.diff), '');
    out.push(`**Reproduce:** ${codeSpan(f.reproduce)}`);
    if (f.journal.length) {
      out.push('', `<details><summary>Journal of the perturbed run (${f.journal.length} entries)</summary>`, '', fence('json', f.journal.map((e) => JSON.stringify(e)).join('\n')), '', '</details>');
    }
  }
  if (r.notes.length) out.push('', '## Notes', '', ...r.notes.map((n) => `- ${md(n)}`));
  out.push('', '## Masked before comparing', '', ...r.masked.map((m) => `- ${md(m.path)} (${m.reason === 'learned' ? 'differed between the two reference runs' : 'always volatile'})`));
  if (r.parts.length) out.push('', '## Time', '', '| Part | Time |', '|---|---|', ...r.parts.map((p) => `| ${md(p.part)} | ${seconds(p.ms)} |`));
  return out.join('\n') + '\n';
}
