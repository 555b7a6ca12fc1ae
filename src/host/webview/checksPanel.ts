import * as vscode from 'vscode';
import type { Logger } from '../../core/log.ts';
import {
  CHECKS_PROTOCOL_VERSION,
  parseChecksWebviewMessage,
  type ChecksHostToWebview,
  type ChecksViewModel,
  type ChecksWebviewToHost,
} from '../../shared/checksProtocol.ts';
import { ViewIds } from '../ids.ts';
import { CHECKS_PAGE } from './html.ts';
import { WebviewPanelHost } from './webviewPanelHost.ts';
import { emptyChecksModel } from './checksView.ts';

/** The webview panel type of the results view (also its serializer id). */
export const CHECKS_PANEL_TYPE = ViewIds.checksPanel;

export interface ChecksPanelOptions {
  extensionUri: vscode.Uri;
  log: Logger;
  /** Copy the reproduce line of a finding; resolves to a notice for the webview. */
  onCopy: (findingId: string) => Promise<string>;
  /** Save the last report; resolves to a notice. */
  onExport: (format: 'json' | 'markdown') => Promise<string>;
  /** Run the last checks again. */
  onRerun: () => void;
  /** Reveal a key of the loop in the Resources view. */
  onReveal: (key: string) => void;
}

/**
 * The Robustness Checks results view: one webview panel per window, reused between runs (a new run replaces
 * what it shows). It owns its panel and the panel's listeners; `dispose()` releases them.
 *
 * Ordering as the Event Log's: nothing is posted before the webview says `ready`, which is answered with the whole
 * current model; later models are posted whole ({@link ChecksPanel.setModel}). The page is a fixed skeleton
 * (src/host/webview/html.ts) with the Event Log's CSP; the script fills it with `textContent` only.
 */
export class ChecksPanel implements vscode.Disposable {
  private readonly host: WebviewPanelHost<ChecksWebviewToHost, ChecksHostToWebview>;
  private model: ChecksViewModel = emptyChecksModel();
  private readonly options: ChecksPanelOptions;
  /** Models posted (for tests). */
  posted = 0;

  constructor(options: ChecksPanelOptions) {
    this.options = options;
    this.host = new WebviewPanelHost<ChecksWebviewToHost, ChecksHostToWebview>({
      viewType: CHECKS_PANEL_TYPE,
      title: 'Reconcile Lab: Robustness Checks',
      extensionUri: options.extensionUri,
      log: options.log,
      what: 'checks',
      script: 'checks.js',
      style: 'checks.css',
      page: CHECKS_PAGE,
      parse: parseChecksWebviewMessage,
      onMessage: (m) => this.onMessage(m),
    });
  }

  get isOpen(): boolean {
    return this.host.isOpen;
  }

  get isReady(): boolean {
    return this.host.isReady;
  }

  /** What the view shows now. */
  get current(): ChecksViewModel {
    return this.model;
  }

  /** Opens the panel (beside the editor), or reveals it. */
  show(preserveFocus = false): void {
    this.host.show(preserveFocus);
  }

  /** Replaces what the view shows. */
  setModel(model: ChecksViewModel): void {
    this.model = model;
    if (this.host.isReady) this.post({ type: 'update', model });
  }

  private onMessage(m: ChecksWebviewToHost): void {
    const notice = (p: Promise<string>) =>
      p.then(
        (text) => this.post({ type: 'notice', text }),
        (e: unknown) => this.post({ type: 'notice', text: `Failed: ${(e as Error).message}` }),
      );
    switch (m.type) {
      case 'ready':
        if (m.version !== CHECKS_PROTOCOL_VERSION) this.options.log.warn('checks webview speaks another protocol version', { webview: m.version, host: CHECKS_PROTOCOL_VERSION });
        this.host.markReady();
        this.post({ type: 'init', version: CHECKS_PROTOCOL_VERSION, model: this.model });
        return;
      case 'copy':
        void notice(this.options.onCopy(m.findingId));
        return;
      case 'export':
        void notice(this.options.onExport(m.format));
        return;
      case 'rerun':
        this.options.onRerun();
        return;
      case 'reveal':
        this.options.onReveal(m.key);
        return;
    }
  }

  private post(m: ChecksHostToWebview): void {
    if (!this.host.isOpen) return;
    if (m.type !== 'notice') this.posted++;
    this.host.post(m);
  }

  dispose(): void {
    this.host.dispose();
  }
}
