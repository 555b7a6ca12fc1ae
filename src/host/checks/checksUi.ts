import * as vscode from 'vscode';
import { runChecks } from '../../core/checks/runChecks.ts';
import { renderCheckJson, renderCheckMarkdown } from '../../core/checks/render.ts';
import type { GoCheckTarget } from '../../core/checks/goRun.ts';
import { CHECK_TITLES, type CheckClusterInfo, type CheckKind, type CheckReport, type CheckResult } from '../../core/checks/types.ts';
import { DisposableStore } from '../../core/lifecycle.ts';
import type { ObjectKey } from '../../core/k8s/keys.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import { readSettings } from '../config.ts';
import { settingsPredicateAdvice, type ReconcilerRecipe, type Session } from '../session/session.ts';
import * as ui from '../ui.ts';
import { ChecksPanel } from '../webview/checksPanel.ts';
import { copiesFromSetting, reproduceFlagsOf } from './cluster.ts';
import { emptyChecksModel, reconcilerTitle, reportChecksModel, reproduceOf, runningChecksModel, runningId, type ChecksRunInfo } from '../webview/checksView.ts';

/** One run's request, kept for Run Again. */
export interface ChecksRequest {
  readonly keys: readonly ObjectKey[];
  readonly checks: readonly CheckKind[];
  /** The cluster name the person typed to confirm a cluster that is not the local control plane. */
  readonly confirmCluster?: string;
}

/**
 * The extension side of the robustness checks: runs them (with progress and cancellation) for the current
 * connection, keeps the last request and report (Run Again, Export, Copy) and drives the one results view.
 * Owns the panel and an in-flight run, which is aborted (its scratch namespaces are still cleaned up by the
 * harness) on dispose and when the connection goes away.
 */
export class ChecksUi implements vscode.Disposable {
  readonly panel: ChecksPanel;
  private readonly store = new DisposableStore();
  private running: AbortController | undefined;
  private last: { request: ChecksRequest; report?: CheckReport; primaryResource: string } | undefined;
  private readonly lab: ReconcileLab;

  constructor(lab: ReconcileLab) {
    this.lab = lab;
    this.panel = this.store.add(
      new ChecksPanel({
        extensionUri: lab.extensionUri,
        log: lab.log,
        onCopy: (id) => this.copyReproduce(id),
        onExport: (format) => this.export(format),
        onRerun: () => {
          const req = this.last?.request;
          if (req) void vscode.commands.executeCommand('reconcileLab.runChecks', { keys: [...req.keys], checks: [...req.checks], rerun: true });
        },
        onReveal: (key) => {
          void vscode.commands.executeCommand('reconcileLab.revealObject', { key, resource: this.lab.session?.primaryResource });
        },
      }),
    );
    this.store.add(lab.onDidChangeSession(() => this.running?.abort(new Error('the connection closed'))));
  }

  get isRunning(): boolean {
    return this.running !== undefined;
  }

  /** The last finished report, if any. */
  get lastReport(): CheckReport | undefined {
    return this.last?.report;
  }

  /** The last request (for Run Again: the same keys and checks). */
  get lastRequest(): ChecksRequest | undefined {
    return this.last?.request;
  }

  /** Opens the results view. */
  show(): void {
    this.panel.show();
  }

  /**
   * Runs `request` on the session's reconciler with a cancellable progress notification, showing results as they
   * come in the results view. Resolves with the report (also when cancelled: `aborted` is set); rejects when the
   * harness refuses or fails before running (the view says why).
   */
  async run(s: Session, recipe: ReconcilerRecipe, cluster: CheckClusterInfo, request: ChecksRequest, go?: GoCheckTarget): Promise<CheckReport> {
    if (this.running) throw new Error('Robustness checks are already running; cancel them first (the progress notification).');
    const copies = copiesFromSetting(readSettings()['checks.copy']);
    const primary = s.primaryInfo!;
    const primaryResource = s.primaryResource!;
    const info: ChecksRunInfo = { keys: request.keys, checks: request.checks, reconciler: reconcilerTitle(recipe, go?.controller), cluster: `${cluster.name}${cluster.local ? ' (local)' : ''}` };
    this.last = { request, primaryResource };
    const finished: CheckResult[] = [];
    const runningNow = new Set<string>();
    let step: string | undefined;
    const refresh = () => this.panel.setModel(runningChecksModel(info, finished, runningNow, step, primaryResource));
    refresh();
    this.panel.show(true);
    const abort = new AbortController();
    this.running = abort;
    const total = request.keys.length * request.checks.length;
    try {
      const report = await ui.progress(
        { location: vscode.ProgressLocation.Notification, title: `Robustness checks of ${info.keys.length === 1 ? info.keys[0] : `${info.keys.length} keys`}`, cancellable: true },
        async (progress, token) => {
          const sub = token.onCancellationRequested(() => abort.abort(new Error('cancelled')));
          try {
            // A module's predicates and checkTransitions as the file exports them now (edited since the connect).
            let exported: Awaited<ReturnType<NonNullable<ReconcilerRecipe['current']>>> | undefined;
            if (!go && recipe.current) {
              try {
                exported = await recipe.current();
              } catch (e) {
                this.lab.log.warn('the reconciler module\'s predicates and checkTransitions could not be read again; the checks use those read at connect', { error: (e as Error).message });
              }
            }
            const predicates = exported ? exported.predicates : recipe.predicates;
            const exportedTransitions = exported ? exported.checkTransitions : recipe.checkTransitions;
            const indexes = exported ? exported.indexes : recipe.indexes;
            // A module's export wins; else the setting (any reconciler, a Go controller's included).
            const fromSetting = go !== undefined || !exportedTransitions?.length;
            const transitions = fromSetting ? readSettings()['checks.transitions'] : exportedTransitions;
            return await runChecks(
              {
                transport: s.transport,
                client: s.client,
                cluster,
                ...(request.confirmCluster !== undefined ? { confirmCluster: request.confirmCluster } : {}),
                primary,
                owned: s.resources.filter((r) => r.id !== primaryResource).map((r) => r.info),
                ...(go ? { go: { ...go, onOutput: (line: string) => this.lab.log.debug('go check instance', { line }) } } : { createReconciler: () => recipe.create() }),
                reconcilerSpec: recipe.spec,
                keys: [...request.keys],
                checks: [...request.checks],
                ...(!go && predicates?.length ? { predicates: [...predicates] } : {}),
                ...(!go && recipe.reconcileTimeoutMs ? { reconcileTimeoutMs: recipe.reconcileTimeoutMs } : {}),
                ...(!go && indexes?.length ? { indexes: [...indexes] } : {}),
                ...(!go ? { predicateAdvice: settingsPredicateAdvice(recipe.spec.kind === 'module' ? recipe.spec.path : undefined) } : {}),
                ...(transitions?.length ? { transitions: [...transitions] } : {}),
                ...(copies.length ? { copies: copies.map((c) => ({ kind: c.kind, name: c.name, path: 'setting reconcileLab.checks.copy' })) } : {}),
                reproduceFlags: reproduceFlagsOf(recipe, primaryResource, s.kubeconfigPath, s.contextName, fromSetting ? transitions : [], copies.map((c) => c.spec)),
                clock: this.lab.clock,
                log: this.lab.log.child({ checks: primaryResource }),
              },
              {
                report: (e) => {
                  switch (e.kind) {
                    case 'checkStarted':
                      runningNow.add(runningId(e.key, e.check));
                      step = undefined;
                      progress.report({ message: e.key });
                      break;
                    case 'step':
                      step = e.message;
                      progress.report({ message: `${e.check ? `${CHECK_TITLES[e.check]} · ` : ''}${e.key}: ${e.message}` });
                      break;
                    case 'checkFinished':
                      finished.push(e.result);
                      runningNow.delete(runningId(e.result.key, e.result.check));
                      progress.report({ increment: 100 / Math.max(1, total) });
                      break;
                    default:
                      return;
                  }
                  refresh();
                },
              },
              abort.signal,
            );
          } finally {
            sub.dispose();
          }
        },
      );
      this.last = { request, report, primaryResource };
      this.panel.setModel(reportChecksModel(info, report, primaryResource));
      const t = report.totals;
      this.lab.log.info('robustness checks finished', { keys: report.keys.length, findings: t.findings, passed: t.passed, failed: t.failed, skipped: t.skipped, errors: t.errors, ms: report.durationMs, aborted: report.aborted });
      return report;
    } catch (e) {
      const message = (e as Error)?.message ?? String(e);
      this.panel.setModel({ ...emptyChecksModel(), title: `Robustness checks of ${info.keys.join(', ')}`, status: `The checks could not run: ${message}`, canRerun: true });
      throw e;
    } finally {
      this.running = undefined;
    }
  }

  /** Cancels a run in progress (its cleanup still runs). */
  cancel(): void {
    this.running?.abort(new Error('cancelled'));
  }

  /** Copies the reproduce line of a finding of the last report (the webview's Copy button); resolves to a notice. */
  async copyReproduce(findingId: string): Promise<string> {
    const text = reproduceOf(this.last?.report, findingId);
    if (!text) return 'That finding is no longer shown.';
    await vscode.env.clipboard.writeText(text);
    return 'Copied the reproduce command.';
  }

  /** Saves the last report as JSON or Markdown (a save dialog asks where, unless `path` is given). */
  async export(format: 'json' | 'markdown', path?: string): Promise<string> {
    const last = this.last;
    if (!last?.report) return 'Nothing to export yet: run the checks first.';
    let uri = path ? vscode.Uri.file(path) : undefined;
    if (!uri) {
      const base = vscode.workspace.workspaceFolders?.[0]?.uri;
      const name = `robustness-checks.${format === 'json' ? 'json' : 'md'}`;
      uri = await vscode.window.showSaveDialog({
        title: 'Save the robustness check results',
        filters: format === 'json' ? { JSON: ['json'] } : { Markdown: ['md'] },
        ...(base ? { defaultUri: vscode.Uri.joinPath(base, name) } : {}),
      });
    }
    if (!uri) return 'Export cancelled.';
    // The same output as `reconcile-lab check --json / --markdown`.
    const text = format === 'json' ? `${renderCheckJson(last.report)}\n` : renderCheckMarkdown(last.report);
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(text));
    this.lab.log.info('exported robustness check results', { path: uri.fsPath, format });
    return `Exported to ${uri.fsPath}.`;
  }

  dispose(): void {
    this.running?.abort(new Error('the extension is shutting down'));
    this.store.dispose();
  }
}

