import * as vscode from 'vscode';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Event } from '../../core/event.ts';
import type { Logger } from '../../core/log.ts';
import { DisposableStore, type Disposable } from '../../core/lifecycle.ts';
import { type TimelineEntryView, type TimelineHostToWebview, type TimelineWebviewToHost, PROTOCOL_VERSION, parseTimelineMessage } from '../../shared/protocol.ts';
import { ViewIds } from '../ids.ts';
import { createNonce, renderTimelineHtml } from './html.ts';

/** What the timeline shows: one connection's journal as timeline entries. */
export interface TimelineSource {
  snapshot(): readonly TimelineEntryView[];
  readonly onDidAppend: Event<readonly TimelineEntryView[]>;
  /** The journal was cleared (the webview gets an empty snapshot). */
  readonly onDidClear: Event<void>;
}

export interface TimelinePanelOptions {
  extensionUri: vscode.Uri;
  clock: Clock;
  log: Logger;
  /** A mark was clicked: open its entry in the Event Log. */
  onOpenEntry: (seq: number) => void;
}

/** Posts are batched like the Event Log's: at most one every FLUSH_MS. */
const FLUSH_MS = 50;
/** A hidden-then-shown webview gets a fresh snapshot, so pending entries beyond this are dropped meanwhile. */
const MAX_PENDING = 100_000;

/**
 * The per-key Timeline webview panel (one per window). Owns its panel, its
 * subscription to the current source and its flush timer; `dispose()`
 * releases all of them. Same ordering rules as the Event Log: nothing is
 * posted before `timelineReady`, which is answered with a snapshot; entries
 * follow in journal order, batched.
 */
export class TimelinePanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private panelStore = new DisposableStore();
  private sourceStore = new DisposableStore();
  private source: TimelineSource | undefined;
  private connection = 'Not connected';
  private ready = false;
  private pending: TimelineEntryView[] = [];
  private focusKey: string | undefined;
  private timer: TimerHandle | undefined;
  private readonly options: TimelinePanelOptions;
  private readonly store = new DisposableStore();
  /** For tests: snapshots and batches posted, and the last focus key sent. */
  readonly posted = { inits: 0, batches: 0, entries: 0, focus: undefined as string | undefined };

  constructor(options: TimelinePanelOptions) {
    this.options = options;
    this.store.add(
      vscode.window.registerWebviewPanelSerializer(ViewIds.timelinePanel, {
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

  /** Opens the panel (or reveals it), scrolled to `key` when given. */
  show(key?: string): void {
    if (key !== undefined) this.focusKey = key;
    if (this.panel) {
      this.panel.reveal(undefined, false);
      if (key !== undefined && this.ready) this.post({ type: 'timelineFocus', key });
      return;
    }
    const panel = vscode.window.createWebviewPanel(ViewIds.timelinePanel, 'Reconcile Lab: Timeline', vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: this.resourceRoots(),
    });
    this.adopt(panel);
  }

  setSource(source: TimelineSource | undefined, connection: string): void {
    this.sourceStore.dispose();
    this.sourceStore = new DisposableStore();
    this.source = source;
    this.connection = connection;
    this.pending = [];
    if (source) {
      this.sourceStore.add(source.onDidAppend((entries) => this.enqueue(entries)));
      this.sourceStore.add(source.onDidClear(() => this.ready && this.postInit()));
    }
    if (this.ready) this.postInit();
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
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.options.extensionUri, 'dist', 'webview', 'timeline.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.options.extensionUri, 'media', 'timeline.css'));
    this.panelStore.add(
      webview.onDidReceiveMessage((raw: unknown) => {
        const m = parseTimelineMessage(raw);
        if (m) this.onMessage(m);
        else this.options.log.warn('ignored a malformed message from the timeline webview');
      }),
    );
    this.panelStore.add(
      panel.onDidDispose(() => {
        if (this.panel !== panel) return;
        this.panel = undefined;
        this.ready = false;
        this.pending = [];
        this.cancelFlush();
      }),
    );
    this.panelStore.add(
      panel.onDidChangeViewState(() => {
        if (!panel.visible) {
          this.ready = false;
          this.pending = [];
          this.cancelFlush();
        }
      }),
    );
    webview.html = renderTimelineHtml(webview, nonce, script, style);
  }

  private onMessage(m: TimelineWebviewToHost): void {
    switch (m.type) {
      case 'timelineReady':
        if (m.version !== PROTOCOL_VERSION) this.options.log.warn('timeline webview speaks another protocol version', { webview: m.version, host: PROTOCOL_VERSION });
        this.ready = true;
        this.postInit();
        return;
      case 'openEntry':
        this.options.onOpenEntry(m.seq);
        return;
    }
  }

  private postInit(): void {
    this.pending = [];
    this.cancelFlush();
    const entries = this.source?.snapshot() ?? [];
    this.posted.focus = this.focusKey;
    this.post({
      type: 'timelineInit',
      version: PROTOCOL_VERSION,
      entries,
      ...(this.focusKey !== undefined ? { focusKey: this.focusKey } : {}),
      connection: this.connection,
      now: this.options.clock.now(),
    });
  }

  private enqueue(entries: readonly TimelineEntryView[]): void {
    if (!this.panel || !this.ready) return;
    for (const e of entries) this.pending.push(e);
    if (this.pending.length > MAX_PENDING) this.pending.splice(0, this.pending.length - MAX_PENDING);
    if (this.timer === undefined) this.timer = this.options.clock.setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    this.timer = undefined;
    if (!this.panel || !this.ready || this.pending.length === 0) return;
    const entries = this.pending;
    this.pending = [];
    this.post({ type: 'timelineAppend', entries, now: this.options.clock.now() });
  }

  private cancelFlush(): void {
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private post(m: TimelineHostToWebview): void {
    if (!this.panel) return;
    if (m.type === 'timelineInit') this.posted.inits++;
    if (m.type === 'timelineAppend') this.posted.batches++;
    if (m.type === 'timelineInit' || m.type === 'timelineAppend') this.posted.entries += m.entries.length;
    if (m.type === 'timelineFocus') this.posted.focus = m.key;
    this.panel.webview.postMessage(m).then(undefined, (e: unknown) => this.options.log.debug('timeline post failed', { error: String(e) }));
  }

  dispose(): void {
    this.cancelFlush();
    this.sourceStore.dispose();
    this.panelStore.dispose();
    this.panel?.dispose();
    this.panel = undefined;
    this.store.dispose();
  }
}
