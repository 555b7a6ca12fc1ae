import { changesNothing, noWritesText, unchangedWriteNote } from '../../core/actions/dryRun.ts';
import type { ReconcileOutcome } from '../../core/actions/runOnce.ts';
import { describeDryRunOutcome, dryRunFailureHead } from '../../core/actions/runOnce.ts';
import { writeTargetText, writeWarningsText } from '../../core/journal/writeText.ts';
import { escapeMarkdown as md, fence } from '../../core/text/markdown.ts';
import { delayText } from '../../core/text/duration.ts';

/** One planned write of a dry-run, as the result view lists it. */
export interface DryRunWriteView {
  verb: string;
  /** "configmaps" or "widgets.lab.reconcile.dev". */
  resource: string;
  /** The written object's key (a generateName create: its prefix, as written). */
  key: string;
  subresource?: string;
  /** The server's refusal of the dry-run write, when it refused it. */
  error?: string;
  /** Unified diff current → planned ("" when the write changes nothing, or it was refused). */
  diff: string;
  warnings?: readonly string[];
}

/**
 * A dry-run reconcile for the result view, whichever reconciler ran it: the built-in loop's (lab, exec, module) or a
 * Go controller's through the bridge. Every text from the cluster or the reconciler is escaped ({@link md}) or fenced.
 */
export interface DryRunView {
  key: string;
  /** Who reconciled: "lab", "exec:…", "module:…", "Go controller widget". */
  reconciler: string;
  resource: string;
  context: string;
  /**
   * An exec program: only writes made through Reconcile Lab's client are dry and listed; what the program writes
   * itself is neither (said first, as a warning).
   */
  exec: boolean;
  outcome: ReconcileOutcome;
  durationMs?: number;
  writes: readonly DryRunWriteView[];
  /** The status the reconciler would write to the primary, when the loop took it apart from the writes. */
  statusDiff?: string;
  /** A reconciler's own notes on desired versus observed. */
  notes?: readonly string[];
}

/** The result view's Markdown for a dry-run reconcile: one layout and one wording for every kind of reconciler. */
export function renderDryRun(v: DryRunView): string {
  const target = (w: DryRunWriteView) => md(`${w.verb} ${w.resource} ${writeTargetText(w.key, w.subresource)}`);
  const out: string[] = [`# Dry-run reconcile of ${md(v.key)}`, ''];
  out.push(`Reconciler: ${md(v.reconciler)} · resource ${md(v.resource)} · context ${md(v.context)}`, '');
  if (v.exec) {
    out.push(
      '**Warning:** this is an exec reconciler. Writes it made through Reconcile Lab\'s client were sent with dryRun=All,',
      'but writes the program makes itself (kubectl, its own client) are neither captured here nor guaranteed to be dry:',
      'they are only dry if the program honours RECONCILE_DRY_RUN / "dryRun" (the shipped sample passes --dry-run=server).',
      '',
    );
  } else {
    out.push('Every write was sent with dryRun=All: the server validated and answered, nothing was stored.', '');
  }
  const took = v.durationMs !== undefined ? ` (the reconcile took ${delayText(v.durationMs)})` : '';
  const o = v.outcome;
  // An error (a panic's stack, a file:line) is shown verbatim in a block: escaped, it would read "backup\_controller.go\:61"
  // in the document's source, and fenced it can become neither a link nor HTML in a preview either.
  if (o.kind === 'error' || o.kind === 'terminal') out.push('## Outcome', '', `${md(dryRunFailureHead(o))}${took}:`, '', fence('text', o.error), '');
  else out.push('## Outcome', '', `${md(describeDryRunOutcome(o))}${took}`, '');
  out.push(`## Planned writes (${v.writes.length})`, '');
  if (v.writes.length === 0) {
    // Only a pass that ended done found the state as desired; a failed one may have failed before its first write.
    const why = noWritesText(v.outcome);
    const sentence = `${why[0]!.toUpperCase()}${why.slice(1)}.`;
    if (v.exec) out.push(`None through Reconcile Lab's client (writes the program makes itself are not visible here).${v.outcome.kind === 'done' ? '' : ` ${sentence}`}`);
    else out.push(v.outcome.kind === 'done' ? 'None: the observed state already matches the desired state (idempotent pass).' : sentence);
  }
  for (const w of v.writes) {
    out.push(`- ${target(w)}${w.error ? ` — REJECTED: ${md(w.error)}` : changesNothing({ verb: w.verb, diff: w.diff }) ? ` — ${md(unchangedWriteNote(w.verb))}` : ''}${w.warnings?.length ? ` — ⚠ ${md(writeWarningsText(w.warnings))}` : ''}`);
  }
  if (v.statusDiff !== undefined) out.push('', '## Status it would write', '', fence('diff', v.statusDiff || '(unchanged)'));
  if (v.notes) {
    out.push('', '## Desired vs observed');
    if (v.notes.length) out.push('', ...v.notes.map((n) => `- ${md(n)}`));
  }
  for (const w of v.writes) {
    if (w.diff && !w.error) out.push('', `## ${target(w)}`, '', fence('diff', w.diff));
  }
  return out.join('\n') + '\n';
}
