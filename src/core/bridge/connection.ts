import { timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Clock, TimerHandle } from '../clock.ts';
import { Emitter, type Event } from '../event.ts';
import type { Disposable } from '../lifecycle.ts';
import { nullLogger, type Logger } from '../log.ts';
import { LineDecoder } from './framing.ts';
import { PROTOCOL, ProtocolError, TransitionFrames, encode, parseFromGo, type CommandMessage, type FromGo, type FromGoLine, type HelloMessage, type ReplyMessage } from './protocol.ts';

/**
 * One accepted connection from a Go process, after a successful handshake.
 *
 * Liveness (the one rule that matters under a debugger): a process stopped at
 * a Delve breakpoint sends nothing, not even pings, while its socket stays
 * open. So silence is never death:
 * - `connected`: a message arrived within `silentAfterMs`;
 * - `silent`: the socket is open but nothing arrived for `silentAfterMs`
 *   (stopped in the debugger, or not responding) — commands still wait;
 * - `closed`: the socket closed: the process exited (or dropped the
 *   connection; a reconnect of the same `instance` is a new connection).
 *
 * A command's reply timeout rejects that one request with
 * {@link BridgeNotRespondingError}; it never closes the connection.
 */
export type Liveness = 'connected' | 'silent' | 'closed';

export interface HandshakeOptions {
  /** The secret the process must present in hello. */
  token: string;
  clock: Clock;
  log?: Logger;
  /** Sent in welcome: start every controller paused. */
  paused: boolean;
  /** A connection that sends no valid hello in time is closed. Default 10 s. */
  handshakeTimeoutMs?: number;
  /** Silence longer than this makes the connection `silent`. Default 3 s (the Go side pings every second). */
  silentAfterMs?: number;
  maxLineBytes?: number;
}

/** A request got no reply in time. The process may be stopped in the debugger: it is NOT declared dead. */
export class BridgeNotRespondingError extends Error {
  readonly timeoutMs: number;
  constructor(op: string, timeoutMs: number) {
    super(`the controller process did not answer "${op}" within ${timeoutMs} ms: it is not responding (stopped in the debugger?)`);
    this.name = 'BridgeNotRespondingError';
    this.timeoutMs = timeoutMs;
  }
}

/** The connection closed before the reply arrived. */
export class BridgeClosedError extends Error {
  constructor(what: string) {
    super(`the controller process disconnected ${what}`);
    this.name = 'BridgeClosedError';
  }
}

interface Pending {
  readonly op: string;
  readonly onReply?: (r: ReplyMessage) => void;
  readonly resolve: (r: ReplyMessage) => void;
  readonly reject: (e: Error) => void;
  timer?: TimerHandle;
  cleanup?: () => void;
}

export class BridgeConnection implements Disposable {
  readonly hello: HelloMessage;
  private readonly socket: Socket;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly silentAfterMs: number;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private lastHeardAt: number;
  private livenessValue: Liveness = 'connected';
  private checkTimer: TimerHandle | undefined;
  /** This connection's key ids of the transitions frames. */
  private readonly frames = new TransitionFrames();
  private readonly messageEmitter = new Emitter<FromGo>();
  private readonly livenessEmitter = new Emitter<Liveness>();
  private readonly errorEmitter = new Emitter<string>();
  /** Every valid message after the handshake except replies (those resolve their request). */
  readonly onMessage: Event<FromGo> = this.messageEmitter.event;
  readonly onDidChangeLiveness: Event<Liveness> = this.livenessEmitter.event;
  /** A line that was not a valid message (it is skipped; the connection stays up). */
  readonly onProtocolError: Event<string> = this.errorEmitter.event;
  /** Invalid lines received so far. */
  protocolErrors = 0;

  /** @internal use {@link acceptConnection}. */
  constructor(socket: Socket, hello: HelloMessage, o: HandshakeOptions) {
    this.socket = socket;
    this.hello = hello;
    this.clock = o.clock;
    this.log = (o.log ?? nullLogger).child({ pid: hello.pid, instance: hello.instance });
    this.silentAfterMs = o.silentAfterMs ?? 3000;
    this.lastHeardAt = o.clock.now();
    this.scheduleCheck();
  }

  get liveness(): Liveness {
    return this.livenessValue;
  }

  /** @internal called by the handshake with each line after hello. */
  receive(line: string): void {
    if (this.livenessValue === 'closed') return;
    let msg: FromGoLine;
    try {
      msg = parseFromGo(line);
    } catch (e) {
      this.protocolErrors++;
      const message = e instanceof ProtocolError ? e.message : String(e);
      this.log.warn('bridge: invalid message skipped', { error: message });
      this.errorEmitter.fire(message);
      this.heard();
      return;
    }
    this.heard();
    if (msg.type === 'reply') {
      const p = this.pending.get(msg.id);
      if (!p) {
        this.log.debug('bridge: a reply nobody waits for (late, after a timeout?)', { id: msg.id });
        return;
      }
      this.settle(msg.id);
      try {
        p.onReply?.(msg);
      } catch (e) {
        this.log.warn('bridge: a reply handler failed', { op: p.op, error: (e as Error).message });
      }
      p.resolve(msg);
      return;
    }
    if (msg.type === 'hello') {
      this.protocolErrors++;
      this.errorEmitter.fire('hello sent twice on one connection (ignored)');
      return;
    }
    if (msg.type === 'transitions') {
      // One frame, many transitions: each is delivered as the queue message it stands for, in order.
      const { messages, problems } = this.frames.expand(msg);
      for (const p of problems) {
        this.protocolErrors++;
        this.log.warn('bridge: invalid transition skipped', { error: p });
        this.errorEmitter.fire(p);
      }
      for (const q of messages) this.messageEmitter.fire(q);
      return;
    }
    this.messageEmitter.fire(msg);
  }

  /** @internal the socket reported an oversized line. */
  oversize(bytes: number): void {
    this.protocolErrors++;
    this.heard();
    this.errorEmitter.fire(`a line of more than ${bytes} bytes was skipped (over the size limit)`);
  }

  /**
   * Sends a command and resolves with its reply (whether `ok` or not).
   * Rejects with {@link BridgeNotRespondingError} after `timeoutMs` (none when
   * undefined: a step may sit at a breakpoint for minutes), with
   * {@link BridgeClosedError} when the connection closes first, or with the
   * signal's reason when `signal` aborts (the command is not withdrawn).
   * `onReply` runs synchronously when the reply is read, before any line
   * after it is handled (the promise settles only a microtask later, after
   * the rest of the chunk): a caller that rebuilds state from a reply does it
   * there, so the messages that follow the reply apply on top of it.
   */
  request(cmd: Omit<CommandMessage, 'type' | 'id'>, options: { timeoutMs?: number; signal?: AbortSignal; onReply?: (r: ReplyMessage) => void } = {}): Promise<ReplyMessage> {
    if (this.livenessValue === 'closed') return Promise.reject(new BridgeClosedError(`before "${cmd.op}" was sent`));
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    const id = this.nextId++;
    return new Promise<ReplyMessage>((resolve, reject) => {
      const p: Pending = { op: cmd.op, resolve, reject, ...(options.onReply ? { onReply: options.onReply } : {}) };
      this.pending.set(id, p);
      if (options.timeoutMs !== undefined) {
        const ms = options.timeoutMs;
        p.timer = this.clock.setTimeout(() => {
          this.settle(id);
          reject(new BridgeNotRespondingError(cmd.op, ms));
        }, ms);
      }
      if (options.signal) {
        const signal = options.signal;
        const onAbort = () => {
          this.settle(id);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        p.cleanup = () => signal.removeEventListener('abort', onAbort);
      }
      this.write(encode({ type: 'command', id, ...cmd }));
    });
  }

  /** Closes the socket (the process sees EOF). Pending requests reject. Idempotent. */
  dispose(): void {
    this.socket.destroy();
    this.closed();
  }

  /** @internal the socket closed. */
  closed(): void {
    if (this.livenessValue === 'closed') return;
    if (this.checkTimer !== undefined) this.clock.clearTimeout(this.checkTimer);
    this.checkTimer = undefined;
    for (const [id, p] of [...this.pending]) {
      this.settle(id);
      p.reject(new BridgeClosedError(`while "${p.op}" waited for its reply`));
    }
    this.setLiveness('closed');
    this.messageEmitter.dispose();
    this.errorEmitter.dispose();
    this.livenessEmitter.dispose();
  }

  private settle(id: number): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (p.timer !== undefined) this.clock.clearTimeout(p.timer);
    p.cleanup?.();
  }

  private write(line: string): void {
    if (this.socket.destroyed) return;
    this.socket.write(line);
  }

  private heard(): void {
    this.lastHeardAt = this.clock.now();
    if (this.livenessValue === 'silent') this.setLiveness('connected');
  }

  private scheduleCheck(): void {
    const period = Math.max(50, Math.floor(this.silentAfterMs / 3));
    this.checkTimer = this.clock.setTimeout(() => {
      if (this.livenessValue === 'closed') return;
      if (this.livenessValue === 'connected' && this.clock.now() - this.lastHeardAt >= this.silentAfterMs) this.setLiveness('silent');
      this.scheduleCheck();
    }, period);
  }

  private setLiveness(l: Liveness): void {
    if (this.livenessValue === l) return;
    this.livenessValue = l;
    this.log.info(`bridge: ${l}`);
    this.livenessEmitter.fire(l);
  }
}

/**
 * Runs the handshake on a freshly accepted socket: the first line must be a
 * valid hello with this protocol version and the listener's token; the
 * editor answers welcome and resolves the connection, or answers reject (and
 * closes) and rejects with the reason. Never throws synchronously.
 */
export function acceptConnection(socket: Socket, o: HandshakeOptions): Promise<BridgeConnection> {
  return new Promise((resolve, reject) => {
    let conn: BridgeConnection | undefined;
    let done = false;
    const timer = o.clock.setTimeout(() => fail(`no hello within ${o.handshakeTimeoutMs ?? 10_000} ms`, false), o.handshakeTimeoutMs ?? 10_000);
    // The pid the refused process said in its hello (a refusal is then attributable to one launched program).
    let helloPid: number | undefined;
    const fail = (reason: string, tell: boolean) => {
      if (done) return;
      done = true;
      o.clock.clearTimeout(timer);
      if (tell && !socket.destroyed) socket.end(encode({ type: 'reject', reason }));
      else socket.destroy();
      // Give a rejected peer a moment to read the reason, then make sure the socket is gone.
      o.clock.setTimeout(() => socket.destroy(), 1000);
      reject(new HandshakeRefusedError(`bridge handshake refused: ${reason}`, helloPid));
    };
    const decoder = new LineDecoder({
      maxLineBytes: o.maxLineBytes,
      onOversize: (bytes) => (conn ? conn.oversize(bytes) : fail(`hello larger than ${bytes} bytes`, true)),
      onLine: (line) => {
        if (conn) {
          conn.receive(line);
          return;
        }
        if (done) return;
        let msg: FromGoLine;
        try {
          const loose = JSON.parse(line) as { pid?: unknown };
          if (typeof loose?.pid === 'number' && Number.isSafeInteger(loose.pid) && loose.pid > 0) helloPid = loose.pid;
        } catch {
          // not JSON: parseFromGo says so
        }
        try {
          msg = parseFromGo(line);
        } catch (e) {
          fail((e as Error).message, true);
          return;
        }
        if (msg.type !== 'hello') return fail(`the first message must be hello, got ${msg.type}`, true);
        if (msg.protocol !== PROTOCOL.version) return fail(`protocol version ${msg.protocol} is not supported (this editor speaks ${PROTOCOL.version})`, true);
        if (!tokenMatches(msg.token, o.token)) return fail('wrong token', true);
        done = true;
        o.clock.clearTimeout(timer);
        conn = new BridgeConnection(socket, msg, o);
        socket.write(encode({ type: 'welcome', protocol: PROTOCOL.version, paused: o.paused }));
        resolve(conn);
      },
    });
    socket.on('data', (chunk: Buffer) => decoder.push(chunk));
    socket.on('error', (e) => (o.log ?? nullLogger).debug('bridge socket error', { error: e.message }));
    socket.on('close', () => {
      if (conn) conn.closed();
      else fail('closed before hello', false);
    });
  });
}

/** A refused handshake: the reason, and the pid the process gave in its hello when it got that far. */
export class HandshakeRefusedError extends ProtocolError {
  readonly pid: number | undefined;
  constructor(message: string, pid: number | undefined) {
    super(message);
    this.name = 'HandshakeRefusedError';
    this.pid = pid;
  }
}

function tokenMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
