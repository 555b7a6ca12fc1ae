import * as vscode from 'vscode';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Event } from '../../core/event.ts';
import type { Logger } from '../../core/log.ts';
import { DisposableStore, type Disposable } from '../../core/lifecycle.ts';
import { type TimelineEntryView, type TimelineHostToWebview, type TimelineWebviewToHost, NOT_CONNECTED, PROTOCOL_VERSION, parseTimelineMessage } from '../../shared/protocol.ts';
import { ViewIds } from '../ids.ts';
import { TIMELINE_PAGE } from './html.ts';
import { WebviewPanelHost } from './webviewPanelHost.ts';

/** What the timeline shows: one connection's journal as timeline entries. */
export interface TimelineSource {
  snapshot(): readonly TimelineEntryView[];
  readonly onDidAppend: Event<readonly TimelineEntryView[]>;
  /** The journal was cleared (the webview gets an empty snapshot). */
  readonly onDidClear: Event<void>;
  /** Entries appended since the journal was last cleared that it no longer holds. */
  dropped(): number;
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
  private readonly host: WebviewPanelHost<TimelineWebviewToHost, TimelineHostToWebview>;
  private sourceStore = new DisposableStore();
  /** The journal subscription, held only while the webview is ready (see onNotReady). */
  private appendSubscription: Disposable | undefined;
  private source: TimelineSource | undefined;
  private connection = NOT_CONNECTED;
  private pending: TimelineEntryView[] = [];
  private focusKey: string | undefined;
  /** The controller whose lane of {@link focusKey} is meant; undefined: every lane of the key. */
  private focusController: string | undefined;
  private timer: TimerHandle | undefined;
  private readonly options: TimelinePanelOptions;
  /** For tests: snapshots and batches posted, and the last focus sent (its key, and its controller when it named one). */
  readonly posted = { inits: 0, batches: 0, entries: 0, focus: undefined as string | undefined, focusController: undefined as string | undefined };

  constructor(options: TimelinePanelOptions) {
    this.options = options;
    this.host = new WebviewPanelHost<TimelineWebviewToHost, TimelineHostToWebview>({
      viewType: ViewIds.timelinePanel,
      title: 'Reconcile Lab: Timeline',
      extensionUri: options.extensionUri,
      log: options.log,
      what: 'timeline',
      script: 'timeline.js',
      style: 'timeline.css',
      page: TIMELINE_PAGE,
      parse: parseTimelineMessage,
      onMessage: (m) => this.onMessage(m),
      onNotReady: () => {
        this.pending = [];
        this.cancelFlush();
        // Listens to the journal only while the webview is ready: a closed panel maps nothing.
        this.appendSubscription?.dispose();
        this.appendSubscription = undefined;
      },
    });
  }

  get isOpen(): boolean {
    return this.host.isOpen;
  }

  get isReady(): boolean {
    return this.host.isReady;
  }

  private get ready(): boolean {
    return this.host.isReady;
  }

  /**
   * Opens the panel (or reveals it), scrolled to `key` when given: to its lane of `controller` when that is given too
   * (the other controllers' lanes of the key are not highlighted), else to every lane of it. Without a key the last
   * focus stays.
   */
  show(key?: string, controller?: string): void {
    if (key !== undefined) {
      this.focusKey = key;
      this.focusController = controller;
    }
    const wasOpen = this.host.show();
    if (wasOpen && key !== undefined && this.ready) this.post({ type: 'timelineFocus', key, ...(controller !== undefined ? { controller } : {}) });
  }

  setSource(source: TimelineSource | undefined, connection: string): void {
    this.sourceStore.dispose();
    this.sourceStore = new DisposableStore();
    this.source = source;
    this.connection = connection;
    this.pending = [];
    this.appendSubscription = undefined; // disposed with the store
    if (source) this.sourceStore.add(source.onDidClear(() => this.ready && this.postInit()));
    if (this.ready) this.postInit();
  }

  private onMessage(m: TimelineWebviewToHost): void {
    switch (m.type) {
      case 'timelineReady':
        if (m.version !== PROTOCOL_VERSION) this.options.log.warn('timeline webview speaks another protocol version', { webview: m.version, host: PROTOCOL_VERSION });
        this.host.markReady();
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
    if (this.source && !this.appendSubscription) {
      const source = this.source;
      this.appendSubscription = this.sourceStore.add(source.onDidAppend((entries) => this.enqueue(entries)));
    }
    const entries = this.source?.snapshot() ?? [];
    this.posted.focus = this.focusKey;
    this.posted.focusController = this.focusKey !== undefined ? this.focusController : undefined;
    this.post({
      type: 'timelineInit',
      version: PROTOCOL_VERSION,
      entries,
      older: this.source?.dropped() ?? 0,
      ...(this.focusKey !== undefined ? { focusKey: this.focusKey, ...(this.focusController !== undefined ? { focusController: this.focusController } : {}) } : {}),
      connection: this.connection,
      now: this.options.clock.now(),
    });
  }

  private enqueue(entries: readonly TimelineEntryView[]): void {
    if (!this.host.isOpen || !this.ready) return;
    for (const e of entries) this.pending.push(e);
    if (this.pending.length > MAX_PENDING) this.pending.splice(0, this.pending.length - MAX_PENDING);
    if (this.timer === undefined) this.timer = this.options.clock.setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    this.timer = undefined;
    if (!this.host.isOpen || !this.ready || this.pending.length === 0) return;
    const entries = this.pending;
    this.pending = [];
    this.post({ type: 'timelineAppend', entries, now: this.options.clock.now() });
  }

  private cancelFlush(): void {
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private post(m: TimelineHostToWebview): void {
    if (!this.host.isOpen) return;
    if (m.type === 'timelineInit') this.posted.inits++;
    if (m.type === 'timelineAppend') this.posted.batches++;
    if (m.type === 'timelineInit' || m.type === 'timelineAppend') this.posted.entries += m.entries.length;
    if (m.type === 'timelineFocus') {
      this.posted.focus = m.key;
      this.posted.focusController = m.controller;
    }
    this.host.post(m);
  }

  dispose(): void {
    this.cancelFlush();
    this.sourceStore.dispose();
    this.host.dispose();
  }
}
