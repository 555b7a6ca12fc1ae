import * as vscode from 'vscode';
import type { Logger } from '../../core/log.ts';
import { DisposableStore } from '../../core/lifecycle.ts';
import {
  CHECKS_PROTOCOL_VERSION,
  parseChecksWebviewMessage,
  type ChecksHostToWebview,
  type ChecksViewModel,
  type ChecksWebviewToHost,
} from '../../shared/checksProtocol.ts';
import { ViewIds } from '../ids.ts';
import { createNonce, renderChecksHtml } from './html.ts';
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
  private panel: vscode.WebviewPanel | undefined;
  private panelStore = new DisposableStore();
  private ready = false;
  private model: ChecksViewModel = emptyChecksModel();
  private readonly options: ChecksPanelOptions;
  private readonly store = new DisposableStore();
  /** Models posted (for tests). */
  posted = 0;

  constructor(options: ChecksPanelOptions) {
    this.options = options;
    this.store.add(
      vscode.window.registerWebviewPanelSerializer(CHECKS_PANEL_TYPE, {
        deserializeWebviewPanel: async (panel) => {
          this.adopt(panel);
        },
      }),
    );
  }

  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  get isReady(): boolean {
    return this.ready;
  }

  /** What the view shows now. */
  get current(): ChecksViewModel {
    return this.model;
  }

  /** Opens the panel (beside the editor), or reveals it. */
  show(preserveFocus = false): void {
    if (this.panel) {
      this.panel.reveal(undefined, preserveFocus);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      CHECKS_PANEL_TYPE,
      'Reconcile Lab: Robustness Checks',
      { viewColumn: vscode.ViewColumn.Active, preserveFocus },
      { enableScripts: true, localResourceRoots: this.resourceRoots() },
    );
    this.adopt(panel);
  }

  /** Replaces what the view shows. */
  setModel(model: ChecksViewModel): void {
    this.model = model;
    if (this.ready) this.post({ type: 'update', model });
  }

  private resourceRoots(): vscode.Uri[] {
    return [vscode.Uri.joinPath(this.options.extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(this.options.extensionUri, 'media')];
  }

  private adopt(panel: vscode.WebviewPanel): void {
    this.panelStore.dispose();
    this.panelStore = new DisposableStore();
    this.panel = panel;
    this.ready = false;
    panel.iconPath = vscode.Uri.joinPath(this.options.extensionUri, 'media', 'icon.svg');
    const webview = panel.webview;
    webview.options = { enableScripts: true, localResourceRoots: this.resourceRoots() };
    const nonce = createNonce();
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.options.extensionUri, 'dist', 'webview', 'checks.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.options.extensionUri, 'media', 'checks.css'));
    this.panelStore.add(
      webview.onDidReceiveMessage((raw: unknown) => {
        const m = parseChecksWebviewMessage(raw);
        if (m) this.onMessage(m);
        else this.options.log.warn('ignored a malformed message from the checks webview');
      }),
    );
    this.panelStore.add(
      panel.onDidDispose(() => {
        if (this.panel !== panel) return;
        this.panel = undefined;
        this.ready = false;
      }),
    );
    // A hidden webview is discarded; it says `ready` again when shown.
    this.panelStore.add(
      panel.onDidChangeViewState(() => {
        if (!panel.visible) this.ready = false;
      }),
    );
    webview.html = renderChecksHtml(webview, nonce, script, style);
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
        this.ready = true;
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
    if (!this.panel) return;
    if (m.type !== 'notice') this.posted++;
    this.panel.webview.postMessage(m).then(undefined, (e: unknown) => this.options.log.debug('checks post failed', { error: String(e) }));
  }

  dispose(): void {
    this.panelStore.dispose();
    this.panel?.dispose();
    this.panel = undefined;
    this.store.dispose();
  }
}
