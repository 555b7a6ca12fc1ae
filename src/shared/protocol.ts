/**
 * The one message protocol between the extension host and its webviews: the
 * Event Log (below) and the per-key Timeline (further down, `timeline*`). Both sides import only this file (and no file here imports
 * anything), so the bundle boundary stays a set of plain JSON shapes.
 *
 * Handshake: the webview posts {@link WebviewReady} once its listener is
 * installed; the host posts nothing before it and answers with
 * {@link HostInit} (a snapshot). After that the host sends batched
 * {@link HostAppend}s. A webview reloaded by VS Code sends `ready` again and
 * gets a fresh snapshot, so no message can be lost between the two sides.
 */

/** Bumped when a message shape changes incompatibly; the host refuses a webview of another version. */
export const PROTOCOL_VERSION = 1;

/** Severity of an entry, chosen by the host from the journal entry's kind. */
export type LogLevelView = 'info' | 'warn' | 'error';

/**
 * One journal entry as the webview shows it: plain data, already formatted by
 * the host. `seq` increases strictly across the connection and identifies an
 * entry; `time` is epoch milliseconds.
 */
export interface LogEntryView {
  readonly seq: number;
  readonly time: number;
  /** The journal entry kind (e.g. "event", "enqueue", "reconcile", "error"); the webview filters on it. */
  readonly kind: string;
  readonly level: LogLevelView;
  /** The object key ("namespace/name" or "name"), when the entry concerns one object. */
  readonly key?: string;
  /** The resource of that object as "plural.group" ("pods" for the core group); with `key` it names the object. */
  readonly resource?: string;
  /** One line, the main text. */
  readonly summary: string;
  /** Further text shown on hover (error messages, diffs in short form). */
  readonly detail?: string;
}

/** How the Event Log names one journal entry kind to a person. */
export interface EntryKindText {
  /** A few words: the Kind column and the kind filter's option. */
  readonly label: string;
  /** What an entry of this kind is, for the label's tooltip. */
  readonly about: string;
}

/**
 * What the Event Log shows for each journal entry kind (its Kind column, its kind filter, the detail pane's list of
 * a reconcile's entries), in the order the filter lists them: the path of a change through a controller. The
 * internal names (the keys) stay what the journal, Export…, the CLI's `--json` lines and {@link LogFilter.kinds}
 * use; the webview shows a key only in a tooltip ({@link entryKindTitle}), so a person can map a label to what an
 * export says. A kind missing here (a newer journal's) reads as its internal name ({@link entryKindLabel}).
 */
export const ENTRY_KINDS: ReadonlyMap<string, EntryKindText> = new Map<string, EntryKindText>([
  ['informer', { label: 'Informer event', about: 'an add, update, delete or resync the controller\'s informer delivered, and what it enqueued' }],
  ['queue', { label: 'Work queue', about: 'a key added to, taken from, waiting in or done with the work queue' }],
  ['reconcileStart', { label: 'Reconcile started', about: 'a reconcile of a key began, with what queued it' }],
  ['reconcileEnd', { label: 'Reconcile finished', about: 'a reconcile ended, with its outcome (done, requeue, error…)' }],
  ['write', { label: 'API write', about: 'a create, update, patch, apply or delete a reconciler sent to the API server' }],
  ['warning', { label: 'Warning', about: 'a hot loop, an abandoned reconcile, a failing event handler…' }],
  ['control', { label: 'Action', about: 'the loop started, stopped, paused, resumed or stepped, or an action you took (Reconcile Now, Strip Finalizers…)' }],
]);

/** The label of the journal entry kind `kind` ({@link ENTRY_KINDS}); an unknown kind reads as itself. */
export function entryKindLabel(kind: string): string {
  return ENTRY_KINDS.get(kind)?.label ?? kind;
}

/** The tooltip of `kind`'s label: what such an entry is, and the internal name Export… and the CLI's --json use. */
export function entryKindTitle(kind: string): string {
  const text = ENTRY_KINDS.get(kind);
  const named = `"kind": "${kind}" in Export… and the CLI's --json lines`;
  return text ? `${text.label}: ${text.about}.\n${named}` : named;
}

/**
 * `kinds` without duplicates, in the order a kind filter lists them: the kinds of {@link ENTRY_KINDS} in its order,
 * then any other kind by name.
 */
export function orderEntryKinds(kinds: Iterable<string>): string[] {
  const known = [...ENTRY_KINDS.keys()];
  const rank = (k: string): number => {
    const i = known.indexOf(k);
    return i < 0 ? known.length : i;
  };
  return [...new Set(kinds)].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** The webview's filter; every field is optional and an empty one matches everything. */
export interface LogFilter {
  /** Substring of the entry's key. */
  readonly key?: string;
  /** Entry kinds to show; empty or absent means all kinds. */
  readonly kinds?: readonly string[];
  /** Case-insensitive substring of key, resource, summary or detail. */
  readonly text?: string;
}

/** Webview → host: the listener is installed; send me the snapshot. */
export interface WebviewReady {
  readonly type: 'ready';
  readonly version: number;
}

/** Webview → host: reveal the entry's object in the Resources view. */
export interface WebviewReveal {
  readonly type: 'reveal';
  readonly key: string;
  readonly resource?: string;
}

/** Webview → host: empty the journal view (the host clears its buffer and answers {@link HostCleared}). */
export interface WebviewClear {
  readonly type: 'clear';
}

/** Webview → host: export the entries that match `filter` as JSON lines. */
export interface WebviewExport {
  readonly type: 'export';
  readonly filter: LogFilter;
}

/** Webview → host: the entry `seq` was selected; answer with its {@link HostDetail}. */
export interface WebviewSelect {
  readonly type: 'select';
  readonly seq: number;
}

/** Webview → host: open the per-key Timeline, on `key` when given (and on the entry `seq`). */
export interface WebviewShowTimeline {
  readonly type: 'showTimeline';
  readonly key?: string;
  readonly seq?: number;
}

export type WebviewToHost = WebviewReady | WebviewReveal | WebviewClear | WebviewExport | WebviewSelect | WebviewShowTimeline;

/** One line of a detail pane: a label and its value (plain text). */
export interface DetailField {
  readonly label: string;
  /** The value as text; for a time, in ISO 8601 UTC (what a copy or an export keeps). */
  readonly value: string;
  /**
   * For a time: its epoch milliseconds. The page then shows it first in its own local time, as its rows show times
   * (the host may run elsewhere, in another time zone), followed by `value`.
   */
  readonly at?: number;
}

/** An entry of the same reconcile, listed in the detail pane (click selects it). */
export interface DetailRelated {
  readonly seq: number;
  readonly time: number;
  readonly kind: string;
  readonly summary: string;
}

/**
 * Everything the host knows about one journal entry, for the detail pane. All
 * text is plain (the webview puts it in the DOM with textContent only).
 */
export interface EntryDetailView {
  readonly seq: number;
  readonly time: number;
  readonly kind: string;
  readonly level: LogLevelView;
  readonly key?: string;
  readonly resource?: string;
  /** The entry's one-line summary, as in the list. */
  readonly title: string;
  readonly fields: readonly DetailField[];
  /** The whole message (error, warning), any length and number of lines. */
  readonly message?: string;
  /** Why it happened: the triggers of the reconcile, or what an informer event enqueued. */
  readonly cause?: readonly string[];
  /** For patch/apply writes: the body sent, pretty-printed, and its type. */
  readonly patch?: string;
  readonly patchType?: string;
  /** For writes: unified diff of the object before → after (secrets masked); "" when the write changed nothing. */
  readonly diff?: string;
  /** Why no patch/diff is shown for a write (older than the kept details, not recorded by the source). */
  readonly diffNote?: string;
  /** The reconcile the entry belongs to: a label and its entries (this one included). */
  readonly reconcile?: { readonly label: string; readonly entries: readonly DetailRelated[] };
}

/** Host → webview: the full current buffer (answer to `ready`, and after a reconnect). */
export interface HostInit {
  readonly type: 'init';
  readonly version: number;
  /** How many entries the webview keeps (setting reconcileLab.eventLog.size). */
  readonly capacity: number;
  readonly entries: readonly LogEntryView[];
  /**
   * Entries older than the first of the snapshot that are no longer held: dropped by the journal's ring buffer
   * (`reconcileLab.eventLog.size`) since it was last cleared, or beyond `capacity`. 0 while nothing was lost.
   */
  readonly older: number;
  /** Entry kinds the journal can produce, for the kind filter. */
  readonly kinds: readonly string[];
  /** Text of the connection line at the top ("Connected to kind-dev", "Not connected"). */
  readonly connection: string;
}

/**
 * Host → webview: entries appended since the last post, oldest first.
 * `dropped` counts entries the host discarded because the webview fell more
 * than `capacity` entries behind (they are still in the journal and export).
 */
export interface HostAppend {
  readonly type: 'append';
  readonly entries: readonly LogEntryView[];
  readonly dropped: number;
}

/** Host → webview: the buffer was cleared. */
export interface HostCleared {
  readonly type: 'cleared';
}

/** The connection line's text while no cluster is connected (host and webviews compare against it). */
export const NOT_CONNECTED = 'Not connected';

/**
 * What an empty Event Log or Timeline says, so a first look is never a blank pane: how to connect while
 * `connection` is {@link NOT_CONNECTED}; with entries hidden by a filter, that the filter hides them; else what makes
 * entries appear.
 */
export function emptyJournalText(connection: string, total: number, filtered: boolean): string {
  if (total > 0 && filtered) return 'No entry matches the filter.';
  if (connection === NOT_CONNECTED) return 'Not connected: run "Connect to Cluster…" or "Start Local Control Plane" (Reconcile Lab view or command palette).';
  return 'No entries yet: step or resume the loop, or change an object.';
}

/** Host → webview: the connection line changed. */
export interface HostConnection {
  readonly type: 'connection';
  readonly connection: string;
}

/** Host → webview: an export finished (or failed); shown as a transient notice. */
export interface HostNotice {
  readonly type: 'notice';
  readonly text: string;
}

/** Host → webview: the detail of the entry `seq` (undefined when the journal no longer holds it). */
export interface HostDetail {
  readonly type: 'detail';
  readonly seq: number;
  readonly detail?: EntryDetailView;
}

/** Host → webview: select the entry `seq` and show its detail (e.g. a mark clicked in the Timeline). */
export interface HostSelect {
  readonly type: 'select';
  readonly seq: number;
}

export type HostToWebview = HostInit | HostAppend | HostCleared | HostConnection | HostNotice | HostDetail | HostSelect;

/** What the webview persists through `setState` (and gets back after a reload). */
export interface EventLogViewState {
  readonly filter: LogFilter;
  readonly paused: boolean;
  /** True while the view sticks to the newest entry. */
  readonly follow: boolean;
  /** The selected entry, whose detail the view shows again after it was hidden and shown (it is rebuilt then). */
  readonly selected?: number;
}

/**
 * True when `entry` matches `filter`. Shared by the webview (rendering) and
 * the host (export), so both agree on what "the filtered log" is.
 * `text` must already be lower-cased by the caller ({@link normalizeFilter}).
 */
export function matchesFilter(entry: LogEntryView, filter: LogFilter): boolean {
  if (filter.key && !(entry.key ?? '').includes(filter.key)) return false;
  if (filter.kinds && filter.kinds.length > 0 && !filter.kinds.includes(entry.kind)) return false;
  if (filter.text) {
    const t = filter.text;
    if (
      !(entry.summary.toLowerCase().includes(t) ||
        (entry.key ?? '').toLowerCase().includes(t) ||
        (entry.resource ?? '').toLowerCase().includes(t) ||
        (entry.detail ?? '').toLowerCase().includes(t))
    ) {
      return false;
    }
  }
  return true;
}

/** Trims the filter's strings and lower-cases `text`; drops empty fields. */
export function normalizeFilter(filter: LogFilter): LogFilter {
  const key = filter.key?.trim();
  const text = filter.text?.trim().toLowerCase();
  const kinds = filter.kinds?.filter((k) => k.length > 0);
  return {
    ...(key ? { key } : {}),
    ...(text ? { text } : {}),
    ...(kinds && kinds.length > 0 ? { kinds } : {}),
  };
}

const isStr = (x: unknown): x is string => typeof x === 'string';
const isSeq = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x > 0;
const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * Validates a message from the webview before the host acts on it (the host
 * never trusts the shape of what a webview posts). Returns a well-formed
 * {@link WebviewToHost} (unknown fields dropped) or undefined.
 */
export function parseWebviewMessage(raw: unknown): WebviewToHost | undefined {
  if (!isObj(raw)) return undefined;
  switch (raw.type) {
    case 'ready':
      return typeof raw.version === 'number' ? { type: 'ready', version: raw.version } : undefined;
    case 'reveal':
      if (!isStr(raw.key) || raw.key.length === 0 || raw.key.length > 512) return undefined;
      if (raw.resource !== undefined && !isStr(raw.resource)) return undefined;
      return isStr(raw.resource) ? { type: 'reveal', key: raw.key, resource: raw.resource } : { type: 'reveal', key: raw.key };
    case 'clear':
      return { type: 'clear' };
    case 'select':
      return isSeq(raw.seq) ? { type: 'select', seq: raw.seq } : undefined;
    case 'showTimeline': {
      if (raw.key !== undefined && !(isStr(raw.key) && raw.key.length > 0 && raw.key.length <= 512)) return undefined;
      if (raw.seq !== undefined && !isSeq(raw.seq)) return undefined;
      return { type: 'showTimeline', ...(isStr(raw.key) ? { key: raw.key } : {}), ...(isSeq(raw.seq) ? { seq: raw.seq } : {}) };
    }
    case 'export': {
      const f = raw.filter;
      if (!isObj(f)) return undefined;
      if ((f.key !== undefined && !isStr(f.key)) || (f.text !== undefined && !isStr(f.text))) return undefined;
      if (f.kinds !== undefined && !(Array.isArray(f.kinds) && f.kinds.every(isStr))) return undefined;
      const filter: { key?: string; text?: string; kinds?: string[] } = {};
      if (isStr(f.key)) filter.key = f.key;
      if (isStr(f.text)) filter.text = f.text;
      if (Array.isArray(f.kinds)) filter.kinds = f.kinds as string[];
      return { type: 'export', filter };
    }
    default:
      return undefined;
  }
}

// ---- Timeline ---------------------------------------------------------------------------------------------------
//
// Handshake as for the Event Log: the timeline webview posts `timelineReady`, the host answers `timelineInit` (a
// snapshot of the journal as timeline entries), then batched `timelineAppend`s. The webview builds lanes and
// intervals itself from these entries (src/webview/timeline/model.ts), so a live journal needs no re-send.

/** What a journal entry is on the timeline. */
export type TimelineEntryType =
  /** An informer event of the key's object or one that enqueued it (a mark). */
  | 'event'
  /** The key entered the queue (starts a queue wait). */
  | 'queued'
  /** A worker took it (ends the queue wait). */
  | 'processing'
  /** A delayed add: backoff or requeue-after until `dueAt` (an interval). */
  | 'waiting'
  /** A delayed add ended early or became due. */
  | 'waitEnd'
  | 'reconcileStart'
  /** The reconcile ended with `outcome`. */
  | 'reconcileEnd'
  /** An API write (a mark; `dryRun`, `error`). */
  | 'write'
  /** A person's action or a debugger action on the key (a mark). */
  | 'action'
  | 'warning'
  /**
   * The queue of `controller` shut down (Stop, the Go program exited or disconnected): no lane of its own (key ''),
   * it ends every queue wait, backoff / requeue-after wait and running reconcile of that controller's keys.
   */
  | 'stopped';

/** One journal entry as the timeline needs it: a key (and its controller), a time, a type and a one-line label. */
export interface TimelineEntryView {
  readonly seq: number;
  readonly time: number;
  readonly key: string;
  readonly type: TimelineEntryType;
  readonly label: string;
  /** For reconcileEnd: the outcome kind (success, requeueAfter, error, requeue, terminal, cancelled). */
  readonly outcome?: string;
  /** For waiting: when the wait ends, and its kind. */
  readonly dueAt?: number;
  readonly wait?: 'backoff' | 'requeueAfter';
  readonly dryRun?: boolean;
  readonly error?: boolean;
  /**
   * The controller the entry belongs to (the built-in loop's name, a Go controller's): the timeline's lane is one key
   * of one controller, so two controllers' entries of the same key go on two lanes. Absent for an entry of no
   * controller (a person's action, a write made on their behalf): it goes on the key's lane a controller's entry last
   * went to. A `stopped` entry's ends that controller's intervals.
   */
  readonly controller?: string;
}

export interface TimelineWebviewReady {
  readonly type: 'timelineReady';
  readonly version: number;
}

/** Timeline → host: open the entry `seq` in the Event Log (selected, with its detail pane). */
export interface TimelineOpenEntry {
  readonly type: 'openEntry';
  readonly seq: number;
}

export type TimelineWebviewToHost = TimelineWebviewReady | TimelineOpenEntry;

/** Host → timeline: a snapshot (answer to ready, and after a reconnect or a clear). */
export interface TimelineHostInit {
  readonly type: 'timelineInit';
  readonly version: number;
  readonly entries: readonly TimelineEntryView[];
  /** Journal entries older than the snapshot that are no longer held (its ring buffer dropped them); 0: none. */
  readonly older: number;
  /** The key to scroll to and highlight, when the timeline was opened on one. */
  readonly focusKey?: string;
  /**
   * With {@link focusKey}: the controller whose lane of that key is meant (the caller knew it: a Work Queue row, an
   * Event Log entry, a Resources row of the shown controller). Absent: every lane of the key (one per controller).
   */
  readonly focusController?: string;
  readonly connection: string;
  /** The host's clock (epoch ms) when the snapshot was taken: "now" for open intervals. */
  readonly now: number;
}

export interface TimelineHostAppend {
  readonly type: 'timelineAppend';
  readonly entries: readonly TimelineEntryView[];
  readonly now: number;
}

/**
 * Host → timeline: scroll to and highlight `key` (opened again on another key): its lane of `controller` when given,
 * else every lane of it (see {@link TimelineHostInit.focusController}).
 */
export interface TimelineHostFocus {
  readonly type: 'timelineFocus';
  readonly key: string;
  readonly controller?: string;
}

export type TimelineHostToWebview = TimelineHostInit | TimelineHostAppend | TimelineHostFocus;

/** Validates a message from the timeline webview (see {@link parseWebviewMessage}). */
export function parseTimelineMessage(raw: unknown): TimelineWebviewToHost | undefined {
  if (!isObj(raw)) return undefined;
  switch (raw.type) {
    case 'timelineReady':
      return typeof raw.version === 'number' ? { type: 'timelineReady', version: raw.version } : undefined;
    case 'openEntry':
      return isSeq(raw.seq) ? { type: 'openEntry', seq: raw.seq } : undefined;
    default:
      return undefined;
  }
}
