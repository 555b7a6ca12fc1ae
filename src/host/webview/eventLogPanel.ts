import * as vscode from 'vscode';
import type { Clock, TimerHandle } from '../../core/clock.ts';
import type { Event } from '../../core/event.ts';
import type { Logger } from '../../core/log.ts';
import type { Disposable } from '../../core/lifecycle.ts';
import {
  type EntryDetailView,
  type HostToWebview,
  type LogEntryView,
  type LogFilter,
  type WebviewToHost,
  NOT_CONNECTED,
  PROTOCOL_VERSION,
  parseWebviewMessage,
} from '../../shared/protocol.ts';
import { ViewIds } from '../ids.ts';
import { EVENT_LOG_PAGE } from './html.ts';
import { WebviewPanelHost } from './webviewPanelHost.ts';

/** A list read in pieces (an array is one): the snapshot's entries are made as they are posted. */
export interface SnapshotList<T> {
  readonly length: number;
  slice(start: number, end: number): T[];
}

/** What the panel shows: one connection's journal, already mapped to view entries. */
export interface EventLogSource {
  /** Entries held now, oldest first (at most the journal's capacity); mapped to view entries as they are read. */
  snapshot(): SnapshotList<LogEntryView>;
  /** New entries, oldest first, as they are appended. */
  readonly onDidAppend: Event<readonly LogEntryView[]>;
  /** Entry kinds the journal can produce. */
  readonly kinds: readonly string[];
  /** Entries appended since the journal was last cleared that it no longer holds (its ring buffer dropped them). */
  dropped(): number;
  /** Empties the journal. */
  clear(): void;
}

export interface EventLogPanelOptions {
  extensionUri: vscode.Uri;
  clock: Clock;
  log: Logger;
  /** How many entries the webview keeps (setting reconcileLab.eventLog.size). */
  capacity: () => number;
  /** Reveal an entry's object in the Resources view. */
  onReveal: (key: string, resource: string | undefined) => void;
  /** Export the entries matching `filter`; resolves to a notice for the webview. */
  onExport: (filter: LogFilter) => Promise<string>;
  /** The detail pane of entry `seq` (undefined when the journal no longer holds it). */
  detail: (seq: number) => EntryDetailView | undefined;
  /** Open the Timeline (on `key`, at entry `seq`, when given). */
  onShowTimeline: (key: string | undefined, seq: number | undefined) => void;
}

/** Posts are batched: at most one every FLUSH_MS, so 1,000 entries/s become ~20 messages/s. */
const FLUSH_MS = 50;

/**
 * The snapshot sent on `ready` goes in messages of at most this many entries, one per task of the extension host's
 * event loop (a full journal of 10,000 entries mapped and posted at once held it for a third of a second; VS Code
 * serialises each message in this process in one go: 1,000 entries took 0.15–0.35 s at load ≈ 8).
 */
export const SNAPSHOT_CHUNK = 250;

/**
 * The Event Log webview panel (one per window). Owns its panel, the
 * subscription to the current source and the flush timer; `dispose()`
 * releases all of them.
 *
 * Ordering: nothing is posted before the webview says `ready`; `ready` is
 * answered with a snapshot and pending entries are dropped (they are in it);
 * afterwards entries are posted in journal order, batched. The snapshot is
 * posted in pieces ({@link SNAPSHOT_CHUNK}: `init` with the oldest, then
 * `append`s, one per task); live entries wait until the last piece is out.
 * The panel listens to its source only while the webview is ready: a closed
 * panel costs the journal nothing. When the webview
 * falls more than `capacity` entries behind (hidden panel), the oldest pending
 * ones are skipped and counted in `dropped`.
 */
export class EventLogPanel implements vscode.Disposable {
  private readonly host: WebviewPanelHost<WebviewToHost, HostToWebview>;
  private sourceSubscription: Disposable | undefined;
  private source: EventLogSource | undefined;
  private connection = NOT_CONNECTED;
  private pending: LogEntryView[] = [];
  private dropped = 0;
  /** An entry to select once the webview is ready (selectEntry before the panel loaded). */
  private pendingSelect: number | undefined;
  /** The entry the webview selected last and the detail sent for it (for tests). */
  selectedSeq: number | undefined;
  lastDetail: EntryDetailView | undefined;
  private timer: TimerHandle | undefined;
  /** The next piece of the snapshot, while one is being sent. */
  private snapshotTimer: TimerHandle | undefined;
  private readonly options: EventLogPanelOptions;
  /** Messages posted to the webview, for tests (`type` and entry count only). */
  readonly posted = { batches: 0, entries: 0 };

  constructor(options: EventLogPanelOptions) {
    this.options = options;
    this.host = new WebviewPanelHost<WebviewToHost, HostToWebview>({
      viewType: ViewIds.eventLogPanel,
      title: 'Reconcile Lab: Event Log',
      extensionUri: options.extensionUri,
      log: options.log,
      what: 'event log',
      script: 'eventLog.js',
      style: 'eventLog.css',
      page: EVENT_LOG_PAGE,
      parse: parseWebviewMessage,
      onMessage: (m) => this.onMessage(m),
      onNotReady: () => {
        this.pending = [];
        this.cancelFlush();
        this.cancelSnapshot();
        this.unsubscribe();
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

  /** Opens the panel, or reveals it when it is open. */
  show(): void {
    this.host.show();
  }

  /** Opens (or reveals) the panel with entry `seq` selected and its detail pane shown. */
  selectEntry(seq: number): void {
    this.show();
    if (this.ready) this.post({ type: 'select', seq });
    else this.pendingSelect = seq;
  }

  /** Switches to another connection's journal (or none); the webview gets a fresh snapshot. */
  setSource(source: EventLogSource | undefined, connection: string): void {
    this.unsubscribe();
    this.cancelSnapshot();
    this.source = source;
    this.connection = connection;
    this.pending = [];
    this.dropped = 0;
    if (this.ready) this.postInit();
  }

  private onMessage(m: WebviewToHost): void {
    switch (m.type) {
      case 'ready':
        if (m.version !== PROTOCOL_VERSION) {
          this.options.log.warn('event log webview speaks another protocol version', { webview: m.version, host: PROTOCOL_VERSION });
        }
        this.host.markReady();
        this.postInit();
        if (this.pendingSelect !== undefined) this.post({ type: 'select', seq: this.pendingSelect });
        this.pendingSelect = undefined;
        return;
      case 'select':
        this.selectedSeq = m.seq;
        this.lastDetail = this.source ? this.options.detail(m.seq) : undefined;
        this.post({ type: 'detail', seq: m.seq, ...(this.lastDetail ? { detail: this.lastDetail } : {}) });
        return;
      case 'showTimeline':
        this.options.onShowTimeline(m.key, m.seq);
        return;
      case 'reveal':
        this.options.onReveal(m.key, m.resource);
        return;
      case 'clear':
        this.cancelSnapshot();
        this.source?.clear();
        this.pending = [];
        this.dropped = 0;
        this.post({ type: 'cleared' });
        return;
      case 'export':
        this.options.onExport(m.filter).then(
          (text) => this.post({ type: 'notice', text }),
          (e: unknown) => this.post({ type: 'notice', text: `Export failed: ${(e as Error).message}` }),
        );
        return;
    }
  }

  /** Sends a fresh snapshot (e.g. after the capacity setting changed). */
  resend(): void {
    if (this.ready) this.postInit();
  }

  /** Posts the connection line change without resending entries. */
  setConnectionText(text: string): void {
    this.connection = text;
    if (this.ready) this.post({ type: 'connection', connection: text });
  }

  private postInit(): void {
    this.pending = [];
    this.dropped = 0;
    this.cancelFlush();
    this.cancelSnapshot();
    // Entries appended from now on are after the snapshot: they wait in `pending` until it has been sent.
    this.unsubscribe();
    const source = this.source;
    if (source) this.sourceSubscription = source.onDidAppend((entries) => this.enqueue(entries));
    const capacity = this.options.capacity();
    const snapshot: SnapshotList<LogEntryView> = source?.snapshot() ?? [];
    const from = Math.max(0, snapshot.length - capacity);
    let next = Math.min(snapshot.length, from + SNAPSHOT_CHUNK);
    this.post({
      type: 'init',
      version: PROTOCOL_VERSION,
      capacity,
      entries: snapshot.slice(from, next),
      older: (source?.dropped() ?? 0) + from,
      kinds: source?.kinds ?? [],
      connection: this.connection,
    });
    const sendNext = () => {
      this.snapshotTimer = undefined;
      if (!this.host.isOpen || !this.ready) return;
      const end = Math.min(snapshot.length, next + SNAPSHOT_CHUNK);
      this.post({ type: 'append', entries: snapshot.slice(next, end), dropped: 0 });
      next = end;
      if (next < snapshot.length) this.snapshotTimer = this.options.clock.setTimeout(sendNext, 0);
      else if (this.pending.length > 0) this.scheduleFlush();
    };
    if (next < snapshot.length) this.snapshotTimer = this.options.clock.setTimeout(sendNext, 0);
  }

  private cancelSnapshot(): void {
    if (this.snapshotTimer !== undefined) this.options.clock.clearTimeout(this.snapshotTimer);
    this.snapshotTimer = undefined;
  }

  private unsubscribe(): void {
    this.sourceSubscription?.dispose();
    this.sourceSubscription = undefined;
  }

  private scheduleFlush(): void {
    if (this.timer === undefined) this.timer = this.options.clock.setTimeout(() => this.flush(), FLUSH_MS);
  }

  private enqueue(entries: readonly LogEntryView[]): void {
    if (!this.host.isOpen || !this.ready) return; // the snapshot sent on `ready` will contain them
    for (const e of entries) this.pending.push(e);
    const capacity = this.options.capacity();
    if (this.pending.length > capacity) {
      const skip = this.pending.length - capacity;
      this.pending.splice(0, skip);
      this.dropped += skip;
    }
    this.scheduleFlush();
  }

  private flush(): void {
    this.timer = undefined;
    if (!this.host.isOpen || !this.ready || this.pending.length === 0) return;
    if (this.snapshotTimer !== undefined) return; // after the snapshot's last piece (it schedules the flush)
    const entries = this.pending;
    const dropped = this.dropped;
    this.pending = [];
    this.dropped = 0;
    this.post({ type: 'append', entries, dropped });
  }

  private cancelFlush(): void {
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private post(m: HostToWebview): void {
    if (!this.host.isOpen) return;
    if (m.type === 'append' || m.type === 'init') {
      this.posted.batches++;
      this.posted.entries += m.entries.length;
    }
    this.host.post(m);
  }

  dispose(): void {
    this.cancelFlush();
    this.cancelSnapshot();
    this.sourceSubscription?.dispose();
    this.host.dispose();
  }
}
