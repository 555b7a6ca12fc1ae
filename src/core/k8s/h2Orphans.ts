import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { constants as h2 } from 'node:http2';
import { toDisposable, type Disposable } from '../lifecycle.ts';

/**
 * Drains the HTTP/2 streams that Node makes for answers nobody asked for anymore, on the connections to our API
 * servers.
 *
 * Why: undici aborts a request by closing its HTTP/2 stream and destroying it at once. When the request's own
 * sending side has not finished yet, Node's `close()` waits for that to finish before it sends RST_STREAM, and the
 * immediate destroy means it never does: the server is not told, and answers. Node finds no stream for the answer's
 * HEADERS (the destroyed one left its map) and makes a new client stream for it, announced only by the session's
 * 'stream' event, which undici does not listen to. That stream is never read, so it never ends and stays in the
 * session, without an 'error' listener. When the session later goes down with an error (undici's close() ends with
 * ClientDestroyedError, a dropped connection with ECONNRESET, an idle timeout), Node destroys the stream with that
 * error and the process gets an uncaught exception: an extension host ends its test run, a CLI dies.
 *
 * What: while at least one lease is held, every stream Node makes from inbound HEADERS on a session that carries a
 * request to a leased authority ("host:port") gets an 'error' listener, is read, and is reset with CANCEL (the
 * RST_STREAM its request never sent: an orphaned watch would otherwise keep streaming), so Node destroys it quietly.
 * Only such streams are touched: nobody can hold them (the session has no 'stream' listener, or it is left alone),
 * and other sessions of the process are not looked at.
 *
 * The notice comes from Node's `http2.client.stream.created` diagnostics channel, which also reports the streams made
 * from inbound HEADERS (Node 24.9 does); a Node without that channel never calls in, and nothing changes.
 */
const STREAM_CREATED = 'http2.client.stream.created';

/** The part of a ClientHttp2Stream and its session used here. */
interface H2Stream {
  readonly session?: H2Session;
  on(event: 'error', listener: (e: unknown) => void): unknown;
  resume(): unknown;
  readonly destroyed?: boolean;
  close?(code: number): unknown;
}
interface H2Session {
  listenerCount(event: string): number;
}

/** Authorities with their lease counts; the channel is subscribed while this is not empty. */
const leases = new Map<string, number>();
/** Sessions seen carrying a request to a leased authority. */
const ours = new WeakSet<H2Session>();

function ignore(): void {}

function onStreamCreated(message: unknown): void {
  const { stream, headers } = (message ?? {}) as { stream?: H2Stream; headers?: Record<string, unknown> };
  const session = stream?.session;
  if (!stream || !session || !headers) return;
  if (headers[':status'] === undefined) {
    // A request this process sends.
    const authority = headers[':authority'];
    if (typeof authority === 'string' && leases.has(authority)) ours.add(session);
    return;
  }
  // A stream made from the server's HEADERS: an answer to a request whose stream is gone.
  if (!ours.has(session) || session.listenerCount('stream') > 0) return;
  stream.on('error', ignore);
  stream.resume();
  // After Node has finished setting the stream up (it is announced from the middle of that). A stream already gone
  // needs no reset; a reset that fails leaves it to the drain above (a throw here would be the uncaught exception
  // this module exists to prevent).
  process.nextTick(() => {
    if (stream.destroyed) return;
    try {
      stream.close?.(h2.NGHTTP2_CANCEL);
    } catch {
      // drained and listened to anyway
    }
  });
}

/**
 * Holds a lease on `authority` (a URL's `host`, e.g. "127.0.0.1:6443"): orphaned answers on the HTTP/2 sessions to it
 * are drained (see the module comment) until the returned Disposable is disposed. Leases are counted; the channel
 * subscription ends with the last one.
 */
export function drainOrphanedHttp2Answers(authority: string): Disposable {
  if (leases.size === 0) subscribe(STREAM_CREATED, onStreamCreated);
  leases.set(authority, (leases.get(authority) ?? 0) + 1);
  return toDisposable(() => {
    const n = (leases.get(authority) ?? 1) - 1;
    if (n > 0) leases.set(authority, n);
    else leases.delete(authority);
    if (leases.size === 0) unsubscribe(STREAM_CREATED, onStreamCreated);
  });
}
