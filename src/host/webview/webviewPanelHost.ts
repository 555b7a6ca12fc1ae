import * as vscode from 'vscode';
import type { Logger } from '../../core/log.ts';
import { DisposableStore } from '../../core/lifecycle.ts';
import { createNonce, renderWebviewPage, type WebviewPage } from './html.ts';

export interface WebviewPanelHostOptions<FromWebview> {
  /** The panel's view type, also its serializer's: a panel VS Code restores after a reload is adopted. */
  readonly viewType: string;
  /** The tab title. */
  readonly title: string;
  readonly extensionUri: vscode.Uri;
  readonly log: Logger;
  /** The webview's name in log lines ("event log" → "ignored a malformed message from the event log webview"). */
  readonly what: string;
  /** The page's script bundle, `dist/webview/<script>`. */
  readonly script: string;
  /** The page's stylesheet, `media/<style>`. */
  readonly style: string;
  /** The page skeleton (html.ts). */
  readonly page: WebviewPage;
  /** The typed protocol's parser: a message it refuses (undefined) is logged and dropped. */
  readonly parse: (raw: unknown) => FromWebview | undefined;
  /** Each parsed message from the webview. */
  readonly onMessage: (m: FromWebview) => void;
  /**
   * The webview stopped listening: it was hidden (a hidden webview is discarded, no retainContextWhenHidden; it
   * says it is ready again when shown) or closed. Owners drop what they meant to post.
   */
  readonly onNotReady?: () => void;
}

/**
 * One webview panel of a kind per window, as the Event Log, the Timeline and the Checks results use it: creates or
 * reveals it, renders its page (CSP, nonce: {@link renderWebviewPage}) with scripts allowed only from
 * `dist/webview` and `media`, routes the webview's messages through the protocol's parser, and tracks whether the
 * webview is ready to receive (its owner calls {@link markReady} on the webview's own ready message; hiding or
 * closing the panel clears it). `post` sends only while a panel exists. `dispose()` releases the serializer, the
 * panel's listeners and the panel.
 */
export class WebviewPanelHost<FromWebview, ToWebview> implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  /** Listeners of the current panel; replaced with each panel. */
  private panelStore = new DisposableStore();
  private ready = false;
  private readonly store = new DisposableStore();
  private readonly o: WebviewPanelHostOptions<FromWebview>;

  constructor(options: WebviewPanelHostOptions<FromWebview>) {
    this.o = options;
    this.store.add(
      vscode.window.registerWebviewPanelSerializer(options.viewType, {
        deserializeWebviewPanel: async (panel) => {
          this.adopt(panel);
        },
      }),
    );
  }

  /** A panel exists (visible or not). */
  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  /** The webview said it is ready and has not been hidden or closed since. */
  get isReady(): boolean {
    return this.ready;
  }

  /** The webview said it is ready (its protocol's ready message). */
  markReady(): void {
    this.ready = true;
  }

  /** Opens the panel in the active column, or reveals it; returns whether it was open already. */
  show(preserveFocus = false): boolean {
    if (this.panel) {
      this.panel.reveal(undefined, preserveFocus);
      return true;
    }
    const panel = vscode.window.createWebviewPanel(
      this.o.viewType,
      this.o.title,
      { viewColumn: vscode.ViewColumn.Active, preserveFocus },
      { enableScripts: true, localResourceRoots: this.resourceRoots() },
    );
    this.adopt(panel);
    return false;
  }

  /** Posts `m` when a panel exists (a failed post is logged at debug level); false when there is none. */
  post(m: ToWebview): boolean {
    if (!this.panel) return false;
    this.panel.webview.postMessage(m).then(undefined, (e: unknown) => this.o.log.debug(`${this.o.what} post failed`, { error: String(e) }));
    return true;
  }

  private resourceRoots(): vscode.Uri[] {
    return [vscode.Uri.joinPath(this.o.extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(this.o.extensionUri, 'media')];
  }

  private adopt(panel: vscode.WebviewPanel): void {
    this.panelStore.dispose();
    this.panelStore = new DisposableStore();
    this.panel = panel;
    this.ready = false;
    panel.iconPath = vscode.Uri.joinPath(this.o.extensionUri, 'media', 'icon.svg');
    const webview = panel.webview;
    webview.options = { enableScripts: true, localResourceRoots: this.resourceRoots() };
    const nonce = createNonce();
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.o.extensionUri, 'dist', 'webview', this.o.script));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.o.extensionUri, 'media', this.o.style));
    this.panelStore.add(
      webview.onDidReceiveMessage((raw: unknown) => {
        const m = this.o.parse(raw);
        if (m) this.o.onMessage(m);
        else this.o.log.warn(`ignored a malformed message from the ${this.o.what} webview`);
      }),
    );
    this.panelStore.add(
      panel.onDidDispose(() => {
        if (this.panel !== panel) return;
        this.panel = undefined;
        this.ready = false;
        this.o.onNotReady?.();
      }),
    );
    this.panelStore.add(
      panel.onDidChangeViewState(() => {
        if (!panel.visible) {
          this.ready = false;
          this.o.onNotReady?.();
        }
      }),
    );
    webview.html = renderWebviewPage(webview, nonce, script, style, this.o.page);
  }

  dispose(): void {
    this.panelStore.dispose();
    this.panel?.dispose();
    this.panel = undefined;
    this.ready = false;
    this.store.dispose();
  }
}
