import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../clock.ts';
import { Emitter, type Event } from '../event.ts';
import type { Disposable } from '../lifecycle.ts';
import { nullLogger, type Logger } from '../log.ts';
import { acceptConnection, HandshakeRefusedError, type BridgeConnection } from './connection.ts';
import { PROTOCOL } from './protocol.ts';

export interface BridgeListenerOptions {
  clock: Clock;
  log?: Logger;
  /** `unix` (default: a socket in a fresh 0700 directory) or `tcp` (127.0.0.1, a free port). */
  transport?: 'unix' | 'tcp';
  /** Whether controllers start paused (sent in welcome). Read at each handshake. Default true. */
  startPaused?: () => boolean;
  silentAfterMs?: number;
  handshakeTimeoutMs?: number;
  maxLineBytes?: number;
}

/** A refused handshake: why, and the pid the process gave in its hello (absent when it sent no usable hello). */
export interface BridgeRefusal {
  readonly reason: string;
  readonly pid?: number;
}

/**
 * The editor's end of the bridge: listens for Go processes, checks their
 * hello (protocol version, token) and hands out {@link BridgeConnection}s.
 *
 * Security: the token is 32 random bytes (hex), generated per listener and
 * given only through {@link BridgeListener.env}; a unix socket lives in a
 * fresh directory with mode 0700 (only this user can connect), a TCP listener
 * binds 127.0.0.1 only. The token is never logged.
 *
 * Lifetime: {@link dispose} closes the server and every connection and
 * removes the socket directory.
 */
export class BridgeListener implements Disposable {
  /** `unix:///abs/path.sock` or `tcp://127.0.0.1:PORT`. */
  readonly address: string;
  private readonly token: string;
  private readonly server: Server;
  private readonly dir: string | undefined;
  private readonly connections = new Set<BridgeConnection>();
  private readonly sockets = new Set<Socket>();
  private readonly connectEmitter = new Emitter<BridgeConnection>();
  private readonly refusedEmitter = new Emitter<BridgeRefusal>();
  private disposed = false;
  /** A process completed the handshake. */
  readonly onDidConnect: Event<BridgeConnection> = this.connectEmitter.event;
  /** A connection was refused (wrong token, protocol, no hello): the reason, and the pid of its hello if any. */
  readonly onDidRefuse: Event<BridgeRefusal> = this.refusedEmitter.event;

  private readonly o: BridgeListenerOptions;

  private constructor(server: Server, address: string, token: string, dir: string | undefined, o: BridgeListenerOptions) {
    this.o = o;
    this.server = server;
    this.address = address;
    this.token = token;
    this.dir = dir;
    server.on('connection', (socket) => this.accept(socket));
  }

  /** Starts listening. */
  static async listen(o: BridgeListenerOptions): Promise<BridgeListener> {
    const token = randomBytes(32).toString('hex');
    const server = createServer();
    if ((o.transport ?? 'unix') === 'tcp') {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      const port = (server.address() as AddressInfo).port;
      return new BridgeListener(server, `tcp://127.0.0.1:${port}`, token, undefined, o);
    }
    const dir = mkdtempSync(join(tmpdir(), 'rlab-bridge-'));
    chmodSync(dir, 0o700);
    const path = join(dir, 'bridge.sock');
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(path, () => resolve());
      });
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    return new BridgeListener(server, `unix://${path}`, token, dir, o);
  }

  /** The environment a process needs to connect (contains the secret token: never log it). */
  env(): Record<string, string> {
    return { [PROTOCOL.env.address]: this.address, [PROTOCOL.env.token]: this.token };
  }

  /** Open connections. */
  get open(): readonly BridgeConnection[] {
    return [...this.connections];
  }

  private accept(socket: Socket): void {
    if (this.disposed) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    acceptConnection(socket, {
      token: this.token,
      clock: this.o.clock,
      log: this.o.log ?? nullLogger,
      paused: this.o.startPaused?.() ?? true,
      ...(this.o.silentAfterMs !== undefined ? { silentAfterMs: this.o.silentAfterMs } : {}),
      ...(this.o.handshakeTimeoutMs !== undefined ? { handshakeTimeoutMs: this.o.handshakeTimeoutMs } : {}),
      ...(this.o.maxLineBytes !== undefined ? { maxLineBytes: this.o.maxLineBytes } : {}),
    }).then(
      (conn) => {
        if (this.disposed) {
          conn.dispose();
          return;
        }
        this.connections.add(conn);
        conn.onDidChangeLiveness((l) => {
          if (l === 'closed') this.connections.delete(conn);
        });
        this.connectEmitter.fire(conn);
      },
      (e: Error) => {
        (this.o.log ?? nullLogger).warn(e.message);
        this.refusedEmitter.fire({ reason: e.message, ...(e instanceof HandshakeRefusedError && e.pid !== undefined ? { pid: e.pid } : {}) });
      },
    );
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const c of [...this.connections]) c.dispose();
    for (const s of [...this.sockets]) s.destroy();
    this.server.close();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.connectEmitter.dispose();
    this.refusedEmitter.dispose();
  }
}
