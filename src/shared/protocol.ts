/**
 * The one message protocol between the extension host and the Event Log
 * webview. Both sides import only this file (and no file here imports
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

export type WebviewToHost = WebviewReady | WebviewReveal | WebviewClear | WebviewExport;

/** Host → webview: the full current buffer (answer to `ready`, and after a reconnect). */
export interface HostInit {
  readonly type: 'init';
  readonly version: number;
  /** How many entries the webview keeps (setting reconcileLab.eventLog.size). */
  readonly capacity: number;
  readonly entries: readonly LogEntryView[];
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

export type HostToWebview = HostInit | HostAppend | HostCleared | HostConnection | HostNotice;

/** What the webview persists through `setState` (and gets back after a reload). */
export interface EventLogViewState {
  readonly filter: LogFilter;
  readonly paused: boolean;
  /** True while the view sticks to the newest entry. */
  readonly follow: boolean;
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
