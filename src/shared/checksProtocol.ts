/**
 * The one message protocol between the extension host and the Robustness Checks results webview (the sibling of
 * ./protocol.ts, which is the Event Log's). Both sides import only this file, and this file imports nothing, so
 * the bundle boundary stays a set of plain JSON shapes.
 *
 * Handshake as the Event Log's: the webview posts {@link ChecksReady} once its listener is installed; the host
 * posts nothing before it and answers with {@link ChecksInit} (the whole current state). While a run goes on the
 * host posts {@link ChecksUpdate}s, each again the whole state (a run has at most a few hundred results, so there
 * is no incremental protocol to get wrong). A webview reloaded by VS Code sends `ready` again.
 *
 * Everything in a view model is text the host already formatted; the webview puts it in the DOM with
 * `textContent` only. Cluster and workspace text (names, messages, diffs, journals) never becomes markup.
 */

/** Bumped when a message shape changes incompatibly. */
export const CHECKS_PROTOCOL_VERSION = 1;

/** One journal line of a perturbed run. */
export interface ChecksJournalLine {
  /** Epoch ms. */
  readonly time: number;
  /** The journal entry kind's internal name ("informer", "write", "reconcileStart", …), as Export… and `--json` name it. */
  readonly kind: string;
  /**
   * The kind as the Event Log names it ("Reconcile started", "API write", …): the host fills it from the Event Log's
   * table (`entryKindLabel` in ./protocol.ts), so both views use one set of words; the webview prints this, not `kind`.
   */
  readonly kindLabel: string;
  /** The label's tooltip (`entryKindTitle` in ./protocol.ts): what such an entry is, and its internal name. */
  readonly kindTitle: string;
  readonly level: 'info' | 'warn' | 'error';
  readonly key?: string;
  readonly summary: string;
}

/** One finding, formatted. */
export interface FindingView {
  readonly id: string;
  readonly check: string;
  readonly checkTitle: string;
  readonly severity: 'error' | 'warning';
  readonly key: string;
  readonly title: string;
  readonly explanation: string;
  /** What the check did in the perturbed run. */
  readonly perturbation: string;
  /** Unified diff reference → perturbed end state ("" when the finding is about writes). */
  readonly diff: string;
  /** One line per write the finding is about. */
  readonly writes: readonly string[];
  /** Diffs of those writes (before → after), in the same order ("" when none). */
  readonly writeDiffs: readonly string[];
  readonly journal: readonly ChecksJournalLine[];
  /** The command line that reproduces this finding (copy button). */
  readonly reproduce: string;
}

/** One check of one key. */
export interface CheckResultView {
  readonly check: string;
  readonly checkTitle: string;
  readonly key: string;
  readonly status: 'passed' | 'failed' | 'skipped' | 'error' | 'running' | 'pending';
  readonly message?: string;
  readonly durationText?: string;
  readonly findings: readonly FindingView[];
}

/** What the view shows: nothing yet, a run in progress (with what finished), or a finished run. */
export interface ChecksViewModel {
  readonly phase: 'empty' | 'running' | 'done';
  /** "Robustness checks of reconcile-lab/widget-ready · lab reconciler · cluster reconcile-lab (local)". */
  readonly title: string;
  /** A line under the title: totals, or the current step while running. */
  readonly status: string;
  /** A finished run's time per run and step ("reference run 1 1.2s, …"), shown below the results, not in the status line; empty while running. */
  readonly timings: string;
  /** One entry per (key, check), in run order; pending ones included while running. */
  readonly results: readonly CheckResultView[];
  /** Notes of the run (limits, cleanup problems), and the masked fields. */
  readonly notes: readonly string[];
  readonly masked: readonly string[];
  /** Whether Export… and Run Again have something to act on. */
  readonly canExport: boolean;
  readonly canRerun: boolean;
}

/** Webview → host: listening; send the state. */
export interface ChecksReady {
  readonly type: 'ready';
  readonly version: number;
}

/** Webview → host: copy the reproduce command of this finding to the clipboard (the host looks it up). */
export interface ChecksCopy {
  readonly type: 'copy';
  readonly findingId: string;
}

/** Webview → host: save the last report as JSON or Markdown. */
export interface ChecksExport {
  readonly type: 'export';
  readonly format: 'json' | 'markdown';
}

/** Webview → host: run the same checks on the same keys again. */
export interface ChecksRerun {
  readonly type: 'rerun';
}

/** Webview → host: reveal a key of the loop in the Resources view. */
export interface ChecksReveal {
  readonly type: 'reveal';
  readonly key: string;
}

export type ChecksWebviewToHost = ChecksReady | ChecksCopy | ChecksExport | ChecksRerun | ChecksReveal;

/** Host → webview: the whole state (answer to `ready`). */
export interface ChecksInit {
  readonly type: 'init';
  readonly version: number;
  readonly model: ChecksViewModel;
}

/** Host → webview: the state changed (a check finished, the run ended). */
export interface ChecksUpdate {
  readonly type: 'update';
  readonly model: ChecksViewModel;
}

/** Host → webview: a transient notice ("Copied", "Exported to …"). */
export interface ChecksNotice {
  readonly type: 'notice';
  readonly text: string;
}

export type ChecksHostToWebview = ChecksInit | ChecksUpdate | ChecksNotice;

const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * Validates a message from the webview before the host acts on it. Returns a well-formed
 * {@link ChecksWebviewToHost} (unknown fields dropped) or undefined.
 */
export function parseChecksWebviewMessage(raw: unknown): ChecksWebviewToHost | undefined {
  if (!isObj(raw)) return undefined;
  switch (raw.type) {
    case 'ready':
      return typeof raw.version === 'number' ? { type: 'ready', version: raw.version } : undefined;
    case 'copy':
      return typeof raw.findingId === 'string' && raw.findingId.length > 0 && raw.findingId.length <= 1024 ? { type: 'copy', findingId: raw.findingId } : undefined;
    case 'export':
      return raw.format === 'json' || raw.format === 'markdown' ? { type: 'export', format: raw.format } : undefined;
    case 'rerun':
      return { type: 'rerun' };
    case 'reveal':
      return typeof raw.key === 'string' && raw.key.length > 0 && raw.key.length <= 512 ? { type: 'reveal', key: raw.key } : undefined;
    default:
      return undefined;
  }
}
