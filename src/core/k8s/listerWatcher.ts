import { INITIAL_EVENTS_END_ANNOTATION, type ListerWatcher, type ListOptions, type WatchEvent, type WatchOptions } from '../cache/interfaces.ts';
import { ApiError } from './client.ts';
import type { GroupVersionResource, KubeList, KubeObject } from './objects.ts';
import { resourcePath } from './paths.ts';
import type { Response } from 'undici';
import { ListBodyParser, ListBodySyntaxError } from './listStream.ts';
import type { ManagedFieldsByBytes } from './managedFieldsBytes.ts';
import { bodyReadError, isTransportClosed, readText, toApiError, type KubeTransport, type TransportRequest } from './transport.ts';

export interface KubeListerWatcherOptions {
  transport: KubeTransport;
  resource: GroupVersionResource;
  /** Only this namespace; default: every namespace (or a cluster-scoped resource). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

type Query = NonNullable<TransportRequest['query']>;

/**
 * The query of a LIST. The bound selectors win over per-call ones. Empty
 * values are left out by the transport, so RV "" means "unset" (a consistent
 * read) while RV "0" is sent.
 */
export function listQuery(options: ListOptions, bound: { labelSelector?: string; fieldSelector?: string } = {}): Query {
  return {
    resourceVersion: options.resourceVersion,
    resourceVersionMatch: options.resourceVersionMatch,
    limit: options.limit,
    continue: options.continue,
    labelSelector: bound.labelSelector ?? options.labelSelector,
    fieldSelector: bound.fieldSelector ?? options.fieldSelector,
  };
}

/** The query of a streaming WATCH (`watch=1`), or of a WatchList (`sendInitialEvents=true`, `resourceVersionMatch=NotOlderThan`). */
export function watchQuery(options: WatchOptions, bound: { labelSelector?: string; fieldSelector?: string } = {}): Query {
  return {
    watch: 1,
    resourceVersion: options.resourceVersion,
    allowWatchBookmarks: options.allowWatchBookmarks ? true : undefined,
    timeoutSeconds: options.timeoutSeconds,
    labelSelector: bound.labelSelector ?? options.labelSelector,
    fieldSelector: bound.fieldSelector ?? options.fieldSelector,
    // WatchList: the server accepts resourceVersionMatch on a watch only together with sendInitialEvents.
    ...(options.sendInitialEvents ? { sendInitialEvents: true, resourceVersionMatch: options.resourceVersionMatch } : {}),
  };
}

/**
 * Splits newline-delimited JSON watch events out of byte chunks. Lines may be
 * cut anywhere across chunks, including inside a UTF-8 sequence; blank lines
 * are skipped; a line that is not a watch event throws (the stream is unusable).
 *
 * Events are parsed one at a time, when taken ({@link next}): a large chunk (a
 * burst of events that arrived together) is not parsed in one go, so a reader
 * can hand over and yield between events.
 *
 * Lines are split on their bytes (a newline byte never occurs inside a UTF-8
 * sequence) and each is decoded whole, as `Response.text()` would decode the
 * stream: a BOM at the very start of the stream is dropped, invalid sequences
 * become U+FFFD. With {@link managedFieldsBytes} set, an event's object's
 * `managedFields` values whose bytes were seen before are not parsed: the event
 * holds the shared, deeply frozen value of equal content instead (the same
 * {@link ManagedFieldsByBytes} the LIST parser uses, with the same checks and
 * the same fallback to parsing the line as it is).
 */
export class WatchEventSplitter<T extends KubeObject = KubeObject> {
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  /** Bytes not yet split: buf[start, end). */
  private buf = new Uint8Array(64 << 10);
  private start = 0;
  private end_ = 0;
  /** Where the search for the next newline resumes (bytes before it, from start, hold none). */
  private searchFrom = 0;
  /** Whether the stream's first bytes were looked at for a BOM. */
  private bomChecked = false;
  /** Bytes of the lines taken so far (events and blank lines), for pacing readers. */
  consumed = 0;
  /** See the class comment; undefined: every line is parsed as it is. May be changed between events. */
  managedFieldsBytes: ManagedFieldsByBytes | undefined;

  constructor(managedFieldsBytes?: ManagedFieldsByBytes) {
    this.managedFieldsBytes = managedFieldsBytes;
  }

  /** Adds bytes; their complete events are then taken with {@link next}. */
  write(chunk: Uint8Array): void {
    const pending = this.end_ - this.start;
    if (this.buf.length - this.end_ < chunk.length) {
      if (this.start > 0 && this.buf.length - pending >= chunk.length) {
        this.buf.copyWithin(0, this.start, this.end_);
      } else {
        const grown = new Uint8Array(Math.max(this.buf.length * 2, pending + chunk.length));
        grown.set(this.buf.subarray(this.start, this.end_));
        this.buf = grown;
      }
      this.searchFrom -= this.start;
      this.start = 0;
      this.end_ = pending;
    }
    this.buf.set(chunk, this.end_);
    this.end_ += chunk.length;
    if (!this.bomChecked && this.end_ - this.start >= 3) this.dropBom();
  }

  /** The next complete event, or undefined until more bytes are written. Throws on a line that is not an event. */
  next(): WatchEvent<T> | undefined {
    const buf = this.buf;
    for (;;) {
      const nl = this.searchFrom < this.end_ ? Buffer.from(buf.buffer, buf.byteOffset, this.end_).indexOf(0x0a, this.searchFrom) : -1;
      if (nl < 0) {
        this.searchFrom = this.end_;
        if (this.start === this.end_) this.start = this.end_ = this.searchFrom = 0;
        return undefined;
      }
      if (!this.bomChecked) this.dropBom();
      const from = this.start;
      this.start = this.searchFrom = nl + 1;
      this.consumed += nl + 1 - from;
      if (nl === from) continue;
      const ev = this.parse(buf.subarray(from, nl));
      if (ev !== undefined) return ev;
    }
  }

  /** All complete events in `chunk` (and what was pending before it). */
  push(chunk: Uint8Array): WatchEvent<T>[] {
    this.write(chunk);
    const out: WatchEvent<T>[] = [];
    for (let ev = this.next(); ev !== undefined; ev = this.next()) out.push(ev);
    return out;
  }

  /**
   * The events still pending when the stream ended, the last one possibly without a final newline. A last fragment
   * that is JSON cut short (the body ended cleanly mid-event) is dropped, as client-go's decoder ends the watch
   * without an error on its unexpected EOF and the reflector re-watches from the last RV; a complete line that is
   * not an event still throws BadWatchEvent.
   */
  end(): WatchEvent<T>[] {
    const out: WatchEvent<T>[] = [];
    for (let ev = this.next(); ev !== undefined; ev = this.next()) out.push(ev);
    if (!this.bomChecked) this.dropBom();
    const rest = this.buf.subarray(this.start, this.end_);
    this.start = this.end_ = this.searchFrom = 0;
    if (rest.length > 0) {
      let ev: WatchEvent<T> | undefined;
      try {
        ev = this.parse(rest);
      } catch (e) {
        if (isTruncatedJson(this.decoder.decode(rest))) return out; // looked at only when the line fails
        throw e;
      }
      if (ev !== undefined) out.push(ev);
    }
    return out;
  }

  /** A stream that starts with a UTF-8 BOM: the BOM is not part of the first line (TextDecoder's default). */
  private dropBom(): void {
    this.bomChecked = true;
    const b = this.buf;
    const s = this.start;
    if (this.end_ - s >= 3 && b[s] === 0xef && b[s + 1] === 0xbb && b[s + 2] === 0xbf) {
      this.start += 3;
      this.searchFrom = Math.max(this.searchFrom, this.start);
      this.consumed += 3;
    }
  }

  /** The event on one line (without its newline); undefined for a blank line. */
  private parse(line: Uint8Array): WatchEvent<T> | undefined {
    if (line[0] !== 0x7b /* { */) {
      const text = this.decoder.decode(line);
      return text.trim() === '' ? undefined : parseLine<T>(text);
    }
    const reuse = this.managedFieldsBytes;
    const sub = reuse?.substitute(line, line.length);
    if (sub) {
      let ev: WatchEvent<T> | undefined;
      try {
        ev = JSON.parse(this.decoder.decode(sub.bytes)) as WatchEvent<T>;
      } catch {
        ev = undefined; // parsed again as it is below, which reports the error
      }
      if (ev && typeof ev === 'object' && typeof ev.type === 'string' && typeof ev.object === 'object' && ev.object !== null && reuse!.restore([ev.object], sub)) {
        return ev;
      }
    }
    return parseLine<T>(this.decoder.decode(line));
  }
}

/** Error codes (on the error or anywhere in its `cause` chain) that mean "the connection ended". */
const EOF_CODES = new Set([
  'ECONNRESET', // connection reset by peer
  'EPIPE', // write on a broken connection
  'ETIMEDOUT',
  'ECONNABORTED',
  'UND_ERR_SOCKET', // undici: "other side closed" (EOF mid-body)
  'UND_ERR_BODY_TIMEOUT',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_STREAM_CANCEL',
  'ERR_HTTP2_SESSION_ERROR',
]);
const EOF_MESSAGES = /\b(unexpected EOF|connection reset by peer|use of closed network connection|other side closed|socket hang up|GOAWAY|premature close)\b|^EOF$|timed? ?out/i;

/**
 * client-go `net.IsProbableEOF(err) || net.IsTimeout(err)`, for Node/undici
 * errors: EOF, unexpected EOF, a reset or closed connection, HTTP/2 GOAWAY, or
 * a timeout, judged on the error and every `cause` under it. While a watch
 * body is being read, these end the watch cleanly instead of failing it.
 */
export function isProbableEOF(e: unknown): boolean {
  let cur: unknown = e;
  for (let depth = 0; cur !== undefined && cur !== null && depth < 8; depth++) {
    const x = cur as { code?: unknown; message?: unknown; name?: unknown; cause?: unknown };
    if (typeof x.code === 'string' && EOF_CODES.has(x.code)) return true;
    if (x.name === 'TimeoutError') return true;
    if (typeof x.message === 'string' && EOF_MESSAGES.test(x.message)) return true;
    cur = x.cause;
  }
  return false;
}

/** {@link WatchEventSplitter} over an async byte stream. */
export async function* parseWatchStream<T extends KubeObject = KubeObject>(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<WatchEvent<T>> {
  const splitter = new WatchEventSplitter<T>();
  for await (const chunk of chunks) yield* splitter.push(chunk);
  yield* splitter.end();
}

/**
 * Whether `text` is the start of a JSON value cut short (what Go's decoder reports as io.ErrUnexpectedEOF): JSON.parse
 * fails at its very end. Text that fails before its end (garbage, a complete value followed by more) is not.
 */
export function isTruncatedJson(text: string): boolean {
  const trimmed = text.trimEnd();
  if (trimmed === '') return false;
  try {
    JSON.parse(trimmed);
    return false;
  } catch (e) {
    const message = (e as Error).message;
    if (/end of JSON input/i.test(message)) return true;
    const at = /at position (\d+)/.exec(message);
    return at !== null && Number(at[1]) >= trimmed.length;
  }
}

function parseLine<T extends KubeObject>(line: string): WatchEvent<T> {
  let ev: WatchEvent<T>;
  try {
    ev = JSON.parse(line) as WatchEvent<T>;
  } catch (e) {
    throw new ApiError(500, 'BadWatchEvent', `malformed watch event (${(e as Error).message}): ${line.slice(0, 200)}`);
  }
  if (!ev || typeof ev.type !== 'string' || typeof ev.object !== 'object' || ev.object === null) {
    throw new ApiError(500, 'BadWatchEvent', `malformed watch event: ${line.slice(0, 200)}`);
  }
  return ev;
}

/** What identifies a continued page: its token and page size (continued pages carry no RV; selectors are bound). */
function aheadKey(options: ListOptions): string {
  return `${options.limit ?? ''}\u0000${options.continue ?? ''}`;
}

/** Bytes handed to the list parser at once: one JSON.parse of complete items per slice at most this long. */
const PARSE_SLICE_BYTES = 64 << 10;
/**
 * Bytes parsed (and prepared by `onItem`) between two yields to the event loop, so that a long list body that has
 * already arrived (its chunks then resolve as microtasks) does not hold the thread: a few milliseconds of work.
 */
const YIELD_EVERY_BYTES = 256 << 10;

/**
 * Bytes of watch events handed over between two yields to the event loop: some 40 events of 1.5 KB, a few
 * milliseconds of parsing and storing.
 */
const WATCH_YIELD_BYTES = 64 << 10;

/** Lets timers, I/O and other tasks run (a macrotask turn), then resumes. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A LIST request on the wire: its answer's headers (the body is read by whoever takes it). */
interface PageRequest {
  readonly res: Promise<Response>;
  /** The signal the request was sent with. */
  readonly signal: AbortSignal;
  /** Releases what links the request to callers' signals (after its body was read or given up). */
  release(): void;
}

/**
 * client-go's ListWatch for one resource over a {@link KubeTransport}: any
 * GroupVersionResource, namespaced or cluster-scoped, optionally narrowed to
 * a namespace and label/field selectors (fixed for the instance).
 *
 * Contract (see {@link ListerWatcher}): `list` resolves with the parsed list
 * or throws an ApiError carrying the HTTP `code` (0 when the server was not
 * reached). `watch` opens the stream when iteration starts, yields events as
 * they arrive, ends when the server closes the stream, and throws the signal's
 * reason once `signal` aborts; an HTTP failure (including 410 Gone) throws an
 * ApiError with `code`. A stream that breaks mid-way with a probable EOF or a
 * timeout ({@link isProbableEOF}: reset, EOF, GOAWAY…) ends like a server
 * close, dropping a half-received event (client-go StreamWatcher); any other
 * read failure throws an ApiError (code 0, reason StreamBroken). Breaking out
 * of the iteration releases the connection. Events are parsed one at a time as
 * they are taken, and the stream yields to the event loop after about 64 KiB of
 * events ({@link WATCH_YIELD_BYTES}): a burst that arrived at once is handed
 * over in slices, in order; an abort during such a pause ends the stream with
 * the signal's reason before anything more is handed over.
 */
export class KubeListerWatcher implements ListerWatcher<KubeObject> {
  private readonly transport: KubeTransport;
  private readonly path: string;
  private readonly bound: { labelSelector?: string; fieldSelector?: string };

  constructor(options: KubeListerWatcherOptions) {
    this.transport = options.transport;
    this.path = resourcePath(options.resource, options.namespace || undefined);
    this.bound = { labelSelector: options.labelSelector || undefined, fieldSelector: options.fieldSelector || undefined };
  }

  /**
   * LIST one page (or the whole list), parsed while it streams in: the body's items are parsed as their bytes
   * arrive ({@link ListBodyParser}) and each is handed to `onItem` at once, so parsing and what `onItem` does
   * overlap the transfer. The result is what parsing the whole body would give (items replaced by what `onItem`
   * returned); a body that is not JSON throws ApiError 500 BadList, a non-2xx answer the server's Status as an
   * ApiError with its code (410 included), a body cut off an ApiError code 0 (or the abort reason /
   * {@link transportClosedError}). The work between two turns of the event loop is bounded (about 256 KiB of body).
   * With `managedFieldsBytes`, items' managedFields values whose bytes were seen before are not parsed but
   * replaced by the shared value of equal content ({@link ManagedFieldsByBytes}).
   *
   * Paging is pipelined: when a paged call (`limit` set) learns the page's continue token (from the list
   * metadata: before the items for typed lists, after them for unstructured ones), the request for the next
   * page is sent at once, so the server prepares and sends it while this page is still parsed. That answer is
   * handed, unchanged, to the next `list` call with exactly that token and limit (errors included: an expired
   * token still throws its 410 there); any other call discards it and aborts it. At most one page is ahead;
   * `signal` aborts it too. What callers get is the same as without the pipeline, page for page.
   */
  async list(
    options: ListOptions,
    signal: AbortSignal,
    onItem?: (item: KubeObject) => KubeObject,
    managedFieldsBytes?: ManagedFieldsByBytes,
  ): Promise<KubeList<KubeObject>> {
    const page = this.takeAhead(options, signal) ?? this.request(options, signal);
    const what = { method: 'GET', path: this.path, signal: page.signal } as const;
    try {
      const res = await page.res;
      if (res.status < 200 || res.status >= 300) throw toApiError(res.status, await readText(res, what, this.transport), `GET ${this.path}`, { path: this.path });
      return await this.readList(res, options, signal, page.signal, onItem, managedFieldsBytes);
    } catch (e) {
      // The caller's abort wins over how the request ended because of it.
      if (signal.aborted) throw signal.reason ?? e;
      throw e;
    } finally {
      page.release();
    }
  }

  /** The next page, requested before the caller asked (see {@link list}). */
  private ahead: { key: string; res: Promise<Response>; abort: AbortController; unlink: () => void } | undefined;

  /** Streams and parses a 2xx LIST answer (see {@link list}). */
  private async readList(
    res: Response,
    options: ListOptions,
    signal: AbortSignal,
    requestSignal: AbortSignal,
    onItem: ((item: KubeObject) => KubeObject) | undefined,
    managedFieldsBytes: ManagedFieldsByBytes | undefined,
  ): Promise<KubeList<KubeObject>> {
    const what = { method: 'GET', path: this.path, signal: requestSignal } as const;
    let aheadSent = false;
    const parser = new ListBodyParser<KubeObject>({
      onItem,
      managedFieldsBytes,
      onMetadata: (md) => {
        const token = md?.continue;
        if (!options.limit || typeof token !== 'string' || token === '' || aheadSent || signal.aborted) return;
        aheadSent = true;
        this.sendAhead({ ...options, resourceVersion: undefined, resourceVersionMatch: undefined, continue: token }, signal);
      },
    });
    const reader = res.body?.getReader();
    let done = reader === undefined;
    try {
      let sinceYield = 0;
      while (reader) {
        let r: ReadableStreamReadResult<Uint8Array>;
        try {
          r = await reader.read();
        } catch (e) {
          done = true;
          throw bodyReadError(e, what, this.transport);
        }
        if (r.done) {
          done = true;
          break;
        }
        const chunk = r.value;
        for (let at = 0; at < chunk.length; at += PARSE_SLICE_BYTES) {
          parser.push(at === 0 && chunk.length <= PARSE_SLICE_BYTES ? chunk : chunk.subarray(at, at + PARSE_SLICE_BYTES));
          sinceYield += Math.min(PARSE_SLICE_BYTES, chunk.length - at);
          if (sinceYield >= YIELD_EVERY_BYTES) {
            sinceYield = 0;
            await yieldToEventLoop();
            if (signal.aborted) throw signal.reason;
          }
        }
      }
      return parser.end() as KubeList<KubeObject>;
    } catch (e) {
      if (aheadSent) this.dropAhead();
      if (e instanceof ListBodySyntaxError) throw new ApiError(500, 'BadList', `GET ${this.path}: the answer is not JSON (${e.message})`);
      throw e;
    } finally {
      if (!done) await reader?.cancel().catch(() => {});
    }
  }

  /** Sends a LIST request with the caller's signal. */
  private request(options: ListOptions, signal: AbortSignal): PageRequest {
    const res = this.transport.send({ method: 'GET', path: this.path, query: listQuery(options, this.bound), signal });
    return { res, signal, release: () => {} };
  }

  private sendAhead(options: ListOptions, signal: AbortSignal): void {
    this.dropAhead();
    const abort = new AbortController();
    const onAbort = () => abort.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const res = this.transport.send({ method: 'GET', path: this.path, query: listQuery(options, this.bound), signal: abort.signal });
    res.catch(() => {}); // observed by the call that takes it; a dropped one is nobody's error
    this.ahead = { key: aheadKey(options), res, abort, unlink: () => signal.removeEventListener('abort', onAbort) };
  }

  /** The page requested ahead when `options` continue it, now linked to the taking call's `signal`. */
  private takeAhead(options: ListOptions, signal: AbortSignal): PageRequest | undefined {
    const a = this.ahead;
    if (!a) return undefined;
    if (options.continue && a.key === aheadKey(options) && !a.abort.signal.aborted) {
      this.ahead = undefined;
      a.unlink();
      const onAbort = () => a.abort.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      if (signal.aborted) onAbort();
      return { res: a.res, signal: a.abort.signal, release: () => signal.removeEventListener('abort', onAbort) };
    }
    this.dropAhead();
    return undefined;
  }

  private dropAhead(): void {
    const a = this.ahead;
    if (!a) return;
    this.ahead = undefined;
    a.unlink();
    a.abort.abort(new Error('list page requested ahead was not needed'));
  }

  /**
   * A WATCH (see the class comment). With `managedFieldsBytes` and `sendInitialEvents` (a WatchList), the initial
   * events' managedFields values whose bytes were seen before are not parsed but replaced by the shared value of
   * equal content ({@link ManagedFieldsByBytes}), as {@link list} does, up to the bookmark that ends the initial
   * events; later events are parsed as they are.
   */
  watch(options: WatchOptions, signal: AbortSignal, managedFieldsBytes?: ManagedFieldsByBytes): AsyncIterable<WatchEvent<KubeObject>> {
    return { [Symbol.asyncIterator]: () => this.stream(options, signal, options.sendInitialEvents ? managedFieldsBytes : undefined) };
  }

  private async *stream(options: WatchOptions, signal: AbortSignal, managedFieldsBytes: ManagedFieldsByBytes | undefined): AsyncGenerator<WatchEvent<KubeObject>> {
    const res = await this.transport.send({ method: 'GET', path: this.path, query: watchQuery(options, this.bound), signal });
    if (res.status < 200 || res.status >= 300) {
      let text = '';
      try {
        text = await res.text();
      } catch {
        // the status is what matters
      }
      throw toApiError(res.status, text, `WATCH ${this.path}`, { path: this.path });
    }
    const body = res.body;
    if (!body) return;
    const reader = body.getReader();
    const splitter = new WatchEventSplitter<KubeObject>(managedFieldsBytes);
    let done = false;
    let yieldedAt = 0;
    try {
      // One generator level and one await per chunk: a chunk often carries several events.
      for (;;) {
        let r: ReadableStreamReadResult<Uint8Array>;
        try {
          r = await reader.read();
        } catch (e) {
          done = true;
          if (signal.aborted) throw signal.reason;
          // The transport was disposed (the connection is gone on purpose): its own error, not a broken stream.
          if (isTransportClosed(e)) throw e;
          // client-go StreamWatcher: a probable EOF or a timeout while reading is an ordinary end of
          // the watch (the reflector re-watches from the last RV); a half-received event is dropped.
          if (isProbableEOF(e)) return;
          const cause = (e as { cause?: { code?: string; message?: string } }).cause;
          throw new ApiError(0, 'StreamBroken', `watch stream of ${this.path} broke: ${cause?.code ?? cause?.message ?? (e as Error).message}`, {
            cause: cause?.code ?? (e as Error).message,
          });
        }
        if (r.done) {
          done = true;
          break;
        }
        // Events are parsed and handed over one at a time; after about WATCH_YIELD_BYTES of them the stream yields
        // to the event loop: a burst that arrived at once (its reads then resolve without waiting) is parsed,
        // stored and delivered in slices of a few milliseconds, in order, instead of in one long task.
        splitter.write(r.value);
        for (let ev = splitter.next(); ev !== undefined; ev = splitter.next()) {
          if (splitter.managedFieldsBytes && ev.type === 'BOOKMARK' && ev.object?.metadata?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true') {
            splitter.managedFieldsBytes = undefined; // the initial events ended
          }
          yield ev;
          if (splitter.consumed - yieldedAt >= WATCH_YIELD_BYTES) {
            yieldedAt = splitter.consumed;
            await yieldToEventLoop();
            if (signal.aborted) throw signal.reason;
          }
        }
      }
      for (const ev of splitter.end()) yield ev;
    } finally {
      if (!done) await reader.cancel().catch(() => {});
    }
  }
}
