import type { ListerWatcher, ListOptions, WatchEvent, WatchOptions } from '../cache/interfaces.ts';
import { ApiError } from './client.ts';
import type { GroupVersionResource, KubeList, KubeObject } from './objects.ts';
import { resourcePath } from './paths.ts';
import { isTransportClosed, readText, toApiError, type KubeTransport, type TransportRequest } from './transport.ts';

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
 */
export class WatchEventSplitter<T extends KubeObject = KubeObject> {
  private readonly decoder = new TextDecoder();
  private pending = '';

  /** The complete events in `chunk` (and what was pending before it). */
  push(chunk: Uint8Array): WatchEvent<T>[] {
    const text = this.pending + this.decoder.decode(chunk, { stream: true });
    const out: WatchEvent<T>[] = [];
    let start = 0;
    let nl: number;
    while ((nl = text.indexOf('\n', start)) >= 0) {
      if (nl > start) {
        const line = text.slice(start, nl);
        if (line.trim() !== '') out.push(parseLine<T>(line));
      }
      start = nl + 1;
    }
    this.pending = start === 0 ? text : text.slice(start);
    return out;
  }

  /** The last event when the stream ended without a final newline. */
  end(): WatchEvent<T>[] {
    const rest = this.pending + this.decoder.decode();
    this.pending = '';
    return rest.trim() === '' ? [] : [parseLine<T>(rest)];
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

/** A LIST answer as received: status and body text, not parsed yet. */
interface PageText {
  status: number;
  text: string;
}

/** What identifies a continued page: its token and page size (continued pages carry no RV; selectors are bound). */
function aheadKey(options: ListOptions): string {
  return `${options.limit ?? ''}\u0000${options.continue ?? ''}`;
}

/**
 * The continue token of a LIST answer without parsing it: list metadata is
 * either first (typed lists) or last (unstructured lists, keys in order), so
 * only the head and tail of the text are looked at. A guess, checked against
 * the parsed answer by the caller; undefined when none is seen.
 */
export function peekContinue(text: string): string | undefined {
  const near = 4096;
  const re = /"continue":"([^"\\]*)"/;
  const head = re.exec(text.length > near ? text.slice(0, near) : text);
  if (head) return head[1] || undefined;
  if (text.length <= near) return undefined;
  const tail = re.exec(text.slice(text.length - near));
  return tail?.[1] || undefined;
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
 * of the iteration releases the connection.
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
   * LIST one page (or the whole list). Paging is pipelined: when a paged
   * answer (`limit` set) carries a continue token, the request for the next
   * page is sent before this page is parsed, so the server prepares and sends
   * it while we parse. That answer is handed, unchanged, to the next `list`
   * call with exactly that token and limit (errors included: an expired token
   * still throws its 410 there); any other call discards it and aborts it.
   * At most one page is ahead; `signal` aborts it too. What callers get is
   * the same as without the pipeline, page for page.
   */
  async list(options: ListOptions, signal: AbortSignal): Promise<KubeList<KubeObject>> {
    const ahead = this.takeAhead(options);
    const page = await (ahead ?? this.fetchPage(options, signal));
    if (page.status < 200 || page.status >= 300) throw toApiError(page.status, page.text, `GET ${this.path}`);
    const token = options.limit ? peekContinue(page.text) : undefined;
    if (token !== undefined && !signal.aborted) this.sendAhead({ ...options, resourceVersion: undefined, resourceVersionMatch: undefined, continue: token }, signal);
    let list: KubeList<KubeObject>;
    try {
      list = JSON.parse(page.text) as KubeList<KubeObject>;
    } catch (e) {
      this.dropAhead();
      throw new ApiError(500, 'BadList', `GET ${this.path}: the answer is not JSON (${(e as Error).message})`);
    }
    // The peek is a guess; the parsed token is the truth (a wrong guess costs one discarded request).
    if (this.ahead && this.ahead.key !== aheadKey({ ...options, continue: list.metadata?.continue })) this.dropAhead();
    return list;
  }

  /** The next page, requested before the caller asked (see {@link list}). */
  private ahead: { key: string; page: Promise<PageText>; abort: AbortController; unlink: () => void } | undefined;

  private async fetchPage(options: ListOptions, signal: AbortSignal): Promise<PageText> {
    const req = { method: 'GET', path: this.path, query: listQuery(options, this.bound), signal } as const;
    const res = await this.transport.send(req);
    return { status: res.status, text: await readText(res, req, this.transport) };
  }

  private sendAhead(options: ListOptions, signal: AbortSignal): void {
    this.dropAhead();
    const abort = new AbortController();
    const onAbort = () => abort.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const page = this.fetchPage(options, abort.signal);
    page.catch(() => {}); // observed by the call that takes it; a dropped one is nobody's error
    this.ahead = { key: aheadKey(options), page, abort, unlink: () => signal.removeEventListener('abort', onAbort) };
  }

  private takeAhead(options: ListOptions): Promise<PageText> | undefined {
    const a = this.ahead;
    if (!a) return undefined;
    if (options.continue && a.key === aheadKey(options) && !a.abort.signal.aborted) {
      this.ahead = undefined;
      a.unlink();
      return a.page;
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

  watch(options: WatchOptions, signal: AbortSignal): AsyncIterable<WatchEvent<KubeObject>> {
    return { [Symbol.asyncIterator]: () => this.stream(options, signal) };
  }

  private async *stream(options: WatchOptions, signal: AbortSignal): AsyncGenerator<WatchEvent<KubeObject>> {
    const res = await this.transport.send({ method: 'GET', path: this.path, query: watchQuery(options, this.bound), signal });
    if (res.status < 200 || res.status >= 300) {
      let text = '';
      try {
        text = await res.text();
      } catch {
        // the status is what matters
      }
      throw toApiError(res.status, text, `WATCH ${this.path}`);
    }
    const body = res.body;
    if (!body) return;
    const reader = body.getReader();
    const splitter = new WatchEventSplitter<KubeObject>();
    let done = false;
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
        const events = splitter.push(r.value);
        for (let i = 0; i < events.length; i++) yield events[i]!;
      }
      for (const ev of splitter.end()) yield ev;
    } finally {
      if (!done) await reader.cancel().catch(() => {});
    }
  }
}
