import { type KubeConfig, RequestContext, HttpMethod } from '@kubernetes/client-node';
import { fetch, type Dispatcher, type Response } from 'undici';
import type { ApiStatus } from '../cache/interfaces.ts';
import { ApiError } from './client.ts';
import { drainOrphanedHttp2Answers } from './h2Orphans.ts';
import { isSecretPath, maskSecretText } from './secretMask.ts';
import { forbiddenHint } from './forbidden.ts';

export { forbiddenHint } from './forbidden.ts';
import { Emitter, type Event } from '../event.ts';
import type { Disposable } from '../lifecycle.ts';

export interface TransportRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path from the server root, e.g. "/apis/lab.reconcile.dev/v1alpha1/widgets". */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** JSON-serialisable body (or a string sent as is). */
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  /** {@link json} passes the answer's warnings ({@link parseWarningHeaders}) here, when it has any. */
  onWarnings?: (warnings: readonly string[]) => void;
}

/**
 * The texts of the warnings in an HTTP `Warning` header value, as client-go's ParseWarningHeaders reads them: each
 * warning is `<code> <agent> "<text>"` (an optional quoted date after it), several in one value separated by commas;
 * only code 299 (a "miscellaneous persistent warning", what kube-apiserver sends) is kept, and a malformed value
 * yields what was read before it. Duplicates are dropped, order kept.
 */
export function parseWarningHeaders(value: string | null | undefined): string[] {
  const out: string[] = [];
  if (!value) return out;
  const re = /\s*(\d{3}) +(\S+) +"((?:[^"\\]|\\.)*)"(?: +"[^"]*")?\s*(,|$)/y;
  let m: RegExpExecArray | null;
  while (re.lastIndex < value.length && (m = re.exec(value))) {
    const text = m[3]!.replace(/\\(.)/g, '$1');
    if (m[1] === '299' && text && !out.includes(text)) out.push(text);
    if (m[4] === '') break;
  }
  return out;
}

/** client-go rest client `maxRetries` for answers with Retry-After. */
const MAX_RETRY_AFTER_ATTEMPTS = 10;

/** The Retry-After wait (ms) of a 429 / 5xx answer, as client-go's checkWait reads it (whole seconds); undefined: no retry. */
export function retryAfterMs(res: { status: number; headers: { get(name: string): string | null } }): number | undefined {
  if (res.status !== 429 && res.status < 500) return undefined;
  const h = res.headers.get('retry-after');
  if (h === null || !/^\d+$/.test(h.trim())) return undefined;
  return Number(h.trim()) * 1000;
}

function abortableDelay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The error of every request the transport's {@link KubeTransport.dispose} ended (or refused afterwards). */
export function transportClosedError(): ApiError {
  return new ApiError(0, 'Closed', 'the connection to the API server was closed');
}

/** True for the error a request gets because its transport was disposed (see {@link KubeTransport.dispose}). */
export function isTransportClosed(e: unknown): boolean {
  return e instanceof ApiError && e.code === 0 && e.reason === 'Closed';
}

/** Failures of a request sent on a connection the server had already closed (nothing was answered). */
const STALE_CONNECTION_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * Whether a request that failed before any response is sent once more, at once, on a fresh connection (as Go's
 * net/http and its HTTP/2 transport do):
 * - a GET on a pooled connection the server dropped (`ECONNRESET`, `EPIPE`, undici's socket error): idempotent;
 * - any request, a write too, that undici put on an HTTP/2 session the server had already ended with GOAWAY (an
 *   idle session: kube-apiserver ends them after its idle timeout; the client had not yet read the GOAWAY, e.g.
 *   after its event loop was blocked or the machine slept) or on a connection undici closed as idle before the
 *   request was written: such a request never reached the server (RFC 9113 §6.8: a stream the GOAWAY did not
 *   cover was not processed), so sending it again cannot apply it twice.
 */
export function sendAgainOnFreshConnection(method: string, cause: { code?: string; message?: string } | undefined): boolean {
  const code = cause?.code ?? '';
  if (method === 'GET' && STALE_CONNECTION_CODES.has(code)) return true;
  return code === 'UND_ERR_INFO' && /"GOAWAY" frame received|socket idle timeout/.test(cause?.message ?? '');
}

/** A change in whether the API server can be reached ({@link KubeTransport.onDidChangeReachability}). */
export type Reachability = { reachable: false; error: string } | { reachable: true };

/**
 * The HTTP seam to one cluster, built on `@kubernetes/client-node`'s
 * KubeConfig: it applies TLS, client certificates, bearer tokens and exec
 * credential plugins exactly as the library does, and sends the request with
 * the library's undici dispatcher. Credentials never appear in errors.
 */
export class KubeTransport {
  readonly kubeConfig: KubeConfig;
  readonly server: string;
  /**
   * One connection pool for the transport's life. client-node builds a new
   * undici Agent on every `applySecurityAuthentication` call, which would mean
   * a TLS handshake per request; the first one is kept and reused (its TLS
   * options come from the kubeconfig and do not change), while headers, and so
   * rotating bearer tokens from exec plugins, are still applied per request.
   */
  private dispatcher: Dispatcher | undefined;
  private disposed = false;
  /**
   * Aborted by {@link dispose} before the pool closes: every request (and the body it is still reading) is
   * linked to it, so none is left on a dispatcher that is being destroyed (undici would fail it with
   * ClientDestroyedError, an error no caller expects).
   */
  private readonly closing = new AbortController();
  /**
   * Held from construction until the pool has closed: an aborted request can leave Node an HTTP/2 stream for its
   * answer that nobody reads, which would fail the process when the pool's close destroys the session with an error
   * (see h2Orphans.ts).
   */
  private readonly orphans: Disposable;
  /** Why the server could not be reached, from the first failed connection until it answers again. */
  private unreachableSince: { error: string } | undefined;
  private readonly reachability = new Emitter<Reachability>();
  /**
   * Fires when requests begin to fail because the server cannot be reached (connection refused or reset, DNS, TLS:
   * an ApiError code 0 before any answer), once, and when it answers again (any HTTP status), once. A front-end
   * says so on these transitions instead of a line per retry; informers keep retrying with their backoff meanwhile.
   */
  readonly onDidChangeReachability: Event<Reachability> = this.reachability.event;

  constructor(kubeConfig: KubeConfig) {
    this.kubeConfig = kubeConfig;
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster?.server) throw new Error('kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/+$/, '');
    this.orphans = drainOrphanedHttp2Answers(new URL(this.server).host);
  }

  /** True once {@link dispose} ran. */
  get isDisposed(): boolean {
    return this.disposed;
  }

  url(path: string, query?: TransportRequest['query']): string {
    const u = new URL(this.server + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') u.searchParams.set(k, String(v));
    return u.toString();
  }

  /**
   * Sends a request and returns the raw response (the body is not read). Network failures become ApiError code 0.
   * A GET that fails on a dropped keep-alive connection before any response, and any request that undici put on an
   * HTTP/2 session the server had already ended (GOAWAY), is sent once more ({@link sendAgainOnFreshConnection});
   * a GET answered 429 / 5xx with Retry-After is sent again after that wait, up to 10 times (client-go rest
   * client). `signal` aborts the waits too. A request still in flight (or reading its body) when the transport
   * is disposed fails with {@link transportClosedError} ({@link isTransportClosed}), as does any later one.
   */
  async send(req: TransportRequest): Promise<Response> {
    if (this.disposed) throw transportClosedError();
    const url = this.url(req.path, req.query);
    const ctx = new RequestContext(url, req.method as HttpMethod);
    await this.kubeConfig.applySecurityAuthentication(ctx);
    if (this.disposed) throw transportClosedError();
    // The caller's signal and the transport's: aborting either aborts the request and its body.
    const signal = req.signal ? AbortSignal.any([req.signal, this.closing.signal]) : this.closing.signal;
    req = { ...req, signal };
    this.dispatcher ??= ctx.getDispatcher() as Dispatcher | undefined;
    const headers: Record<string, string> = { ...ctx.getHeaders(), Accept: 'application/json' };
    let body: string | undefined;
    if (req.body !== undefined) {
      body = typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
      headers['Content-Type'] = req.contentType ?? 'application/json';
    }
    for (let retryAfterAttempts = 0; ; retryAfterAttempts++) {
      const res = await this.fetchOnce(url, req, headers, body);
      // client-go's rest client: a 429 or 5xx answer carrying Retry-After (seconds) was not processed;
      // it waits that long and sends the request again, up to 10 times. Done here for GETs (list,
      // watch, get): e.g. kube-apiserver answers 503 with Retry-After: 5 while it starts up.
      const wait = req.method === 'GET' && retryAfterAttempts < MAX_RETRY_AFTER_ATTEMPTS ? retryAfterMs(res) : undefined;
      if (wait === undefined) return res;
      await res.body?.cancel().catch(() => {});
      await abortableDelay(wait, req.signal);
    }
  }

  private async fetchOnce(url: string, req: TransportRequest, headers: Record<string, string>, body: string | undefined): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await fetch(url, { method: req.method, headers, body, dispatcher: this.dispatcher, signal: req.signal });
        if (this.unreachableSince) {
          this.unreachableSince = undefined;
          this.reachability.fire({ reachable: true });
        }
        return res;
      } catch (e) {
        if (req.signal?.aborted) throw req.signal.reason ?? e;
        if (this.disposed) throw transportClosedError();
        const cause = (e as { cause?: { code?: string; message?: string } }).cause;
        // A pooled keep-alive connection the server dropped (it restarted, or closed it idle) fails
        // before any response: an idempotent GET is sent once more at once, on a fresh connection, as
        // Go's net/http does for requests on a reused connection. Without this, the first watch after
        // kube-apiserver went away fails with ECONNRESET instead of "connection refused", and the
        // informer relists where client-go retries the watch.
        if (attempt === 0 && sendAgainOnFreshConnection(req.method, cause)) continue;
        const detail = cause?.code ?? cause?.message ?? (e as Error).message;
        const error = new ApiError(0, 'Unreachable', `Cannot reach the API server at ${this.server} (${unreachableDetail(detail, this.server)}).`, { cause: detail });
        if (!this.unreachableSince) {
          this.unreachableSince = { error: error.message };
          this.reachability.fire({ reachable: false, error: error.message });
        }
        throw error;
      }
    }
  }

  /**
   * Ends every request in flight first (each fails with {@link transportClosedError}, open watches end), then
   * closes the connection pool, which then has nothing left to fail with undici's ClientDestroyedError; later
   * requests fail with the same closed error. The pool's close ends its HTTP/2 sessions with that error, which
   * reaches the streams Node made for answers to aborted requests: those are drained (h2Orphans.ts) until the close
   * has finished, so none fails the process. Idempotent.
   */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.reachability.dispose();
    this.closing.abort(transportClosedError());
    if (!this.dispatcher) {
      this.orphans.dispose();
      return;
    }
    // Graceful: the aborted requests leave the pool as their streams are reset; a rejection here can only be
    // ClientDestroyedError for a pool already destroyed, which is what dispose wants.
    void this.dispatcher
      .close()
      .catch(() => {})
      .finally(() => this.orphans.dispose());
  }

  /**
   * Sends a request and parses the JSON answer; a non-2xx answer throws an {@link ApiError} with the server's
   * Status. A body cut off by {@link dispose} throws {@link transportClosedError}; by anything else, an ApiError
   * code 0 (never undici's own error).
   */
  async json<T>(req: TransportRequest): Promise<T> {
    const res = await this.send(req);
    const text = await readText(res, req, this);
    if (req.onWarnings) {
      const warnings = parseWarningHeaders(res.headers.get('warning'));
      if (warnings.length) req.onWarnings(warnings);
    }
    if (res.status >= 200 && res.status < 300) {
      return (text ? JSON.parse(text) : undefined) as T;
    }
    throw toApiError(res.status, text, `${req.method} ${req.path}`, req);
  }
}

/**
 * What follows "Cannot reach the API server at <server>" for `detail`, the cause fetch gave (`ECONNREFUSED`, …), with
 * what undici's connect timeout means.
 * fetch's "bad port" is said for a person: fetch never connects to the ports the Fetch standard blocks (6000, 6665–6669,
 * 10080, …), where kubectl, which is not bound by that list, reaches the same server.
 */
export function unreachableDetail(detail: string, server: string): string {
  // undici's own code for its connect timeout, which covers the TLS handshake too: say what it means.
  if (detail === 'UND_ERR_CONNECT_TIMEOUT') return `${detail}: the connection and its TLS handshake did not complete in time; nothing answers there, a firewall drops the packets, or the port is not a TLS server`;
  if (detail !== 'bad port') return detail;
  let port = '';
  try {
    port = new URL(server).port;
  } catch {
    // not a URL: the port stays unnamed
  }
  return `bad port: Node's fetch, which Reconcile Lab connects with, never connects to port ${port || 'of this URL'} (the Fetch standard blocks it as another protocol's), even where kubectl reaches it; serve the API server on another port, e.g. 6443`;
}

/**
 * The whole body of `res` (an answer to `req` sent through `transport`) as text. When reading fails: the caller's
 * abort reason if it aborted, {@link transportClosedError} if the transport was disposed meanwhile, otherwise an
 * ApiError code 0 naming the cause (never undici's own error).
 */
export async function readText(res: Response, req: Pick<TransportRequest, 'method' | 'path' | 'signal'>, transport: { readonly isDisposed?: boolean }): Promise<string> {
  try {
    return await res.text();
  } catch (e) {
    throw bodyReadError(e, req, transport);
  }
}

/**
 * The error to throw for `e`, a failure while reading the body of the answer to `req` (see {@link readText}): the
 * caller's abort reason if it aborted, {@link transportClosedError} if the transport was disposed, otherwise an
 * ApiError code 0 (reason Unreachable) naming the cause.
 */
export function bodyReadError(e: unknown, req: Pick<TransportRequest, 'method' | 'path' | 'signal'>, transport: { readonly isDisposed?: boolean }): unknown {
  if (req.signal?.aborted) return req.signal.reason ?? e;
  if (transport.isDisposed) return transportClosedError();
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return new ApiError(0, 'Unreachable', `${req.method} ${req.path}: the answer was cut off (${cause?.code ?? cause?.message ?? (e as Error).message}).`, { cause: cause?.code ?? (e as Error).message });
}

/**
 * Builds an ApiError from a failed response body (a metav1.Status when the server sent one). For a request to
 * Secrets (`request.path`), the server's message and its causes are {@link maskSecretText masked}: a refused write
 * quotes the Secret's values, and the message reaches journals, notifications and the CLI's output.
 */
export function toApiError(code: number, body: string, what: string, request?: Pick<TransportRequest, 'path' | 'body'>): ApiError {
  let status: ApiStatus | undefined;
  try {
    status = JSON.parse(body) as ApiStatus;
  } catch {
    // not JSON: keep the text
  }
  const reason = status?.reason ?? httpReason(code);
  const message = status?.message ?? (body.trim().slice(0, 300) || `HTTP ${code}`);
  const hint = code === 403 ? forbiddenHint(message) : code === 401 ? UNAUTHORIZED_HINT : code === 404 && !status ? NO_SUCH_PATH_HINT : '';
  if (request && isSecretPath(request.path)) {
    const details = status?.details as { causes?: Array<{ message?: string }> } | undefined;
    const masked = details?.causes ? { ...details, causes: details.causes.map((c) => (typeof c.message === 'string' ? { ...c, message: maskSecretText(c.message, request.body) } : c)) } : details;
    return new ApiError(code, reason, `${what}: ${maskSecretText(message, request.body)}${hint}`, masked);
  }
  return new ApiError(code, reason, `${what}: ${message}${hint}`, status?.details);
}

/**
 * What a 404 without a metav1.Status means ("404 page not found"): no object is missing, the server serves no such
 * resource path — a CRD deleted, or a version removed from its served versions while connected.
 */
export const NO_SUCH_PATH_HINT = ' (the server serves no such resource path: its CustomResourceDefinition was deleted, or this version is no longer among its served versions; reconnect to use a served version)';

/** What a 401 means for a person (the server's own message is a bare "Unauthorized"). */
export const UNAUTHORIZED_HINT = '. The server did not accept the credentials of the kubeconfig\'s user (an expired or revoked token, a client certificate it does not trust, or a credential plugin that failed): renew them and try again';

function httpReason(code: number): string {
  switch (code) {
    case 401: return 'Unauthorized';
    case 403: return 'Forbidden';
    case 404: return 'NotFound';
    case 409: return 'Conflict';
    case 410: return 'Expired';
    case 422: return 'Invalid';
    case 429: return 'TooManyRequests';
    default: return code >= 500 ? 'InternalError' : 'Unknown';
  }
}
