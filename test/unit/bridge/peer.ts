import { connect, type Socket } from 'node:net';
import { PROTOCOL } from '../../../src/core/bridge/protocol.ts';

/**
 * The Go side of the bridge, written for unit tests: a socket client that
 * speaks the protocol (hello, then any message the test sends) and records
 * what the editor sends back. Not a fake of the editor: the editor code under
 * test is real.
 */
export class Peer {
  readonly received: Array<Record<string, unknown>> = [];
  private buf = '';
  private waiters: Array<{ pred: (m: Record<string, unknown>) => boolean; resolve: (m: Record<string, unknown>) => void }> = [];
  private closedResolve!: () => void;
  readonly closed: Promise<void> = new Promise((r) => (this.closedResolve = r));
  readonly socket: Socket;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (s: string) => {
      this.buf += s;
      let i;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        const m = JSON.parse(line) as Record<string, unknown>;
        this.received.push(m);
        for (const w of this.waiters.slice()) {
          if (w.pred(m)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve(m);
          }
        }
      }
    });
    socket.on('close', () => this.closedResolve());
    socket.on('error', () => {});
  }

  /** Connects to `unix:///path` or `tcp://host:port`. */
  static async dial(address: string): Promise<Peer> {
    const socket = address.startsWith('unix://')
      ? connect(address.slice('unix://'.length))
      : connect(Number(new URL(address).port), new URL(address).hostname);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new Peer(socket);
  }

  /** Dials and says hello; resolves with the editor's answer (welcome or reject). */
  static async hello(address: string, token: string, over: Record<string, unknown> = {}): Promise<{ peer: Peer; answer: Record<string, unknown> }> {
    const peer = await Peer.dial(address);
    peer.send({ type: 'hello', protocol: PROTOCOL.version, token, pid: 4242, program: './cmd', goVersion: 'go1.26.0', controllerRuntime: 'v0.25.3', instance: 'inst-1', ...over });
    const answer = await peer.next((m) => m.type === 'welcome' || m.type === 'reject');
    return { peer, answer };
  }

  send(m: Record<string, unknown>): void {
    this.socket.write(JSON.stringify(m) + '\n');
  }

  raw(s: string): void {
    this.socket.write(s);
  }

  /** The next message (already received and not yet matched, or later) that matches. */
  next(pred: (m: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> {
    const seen = this.received.find(pred);
    if (seen) {
      this.received.splice(this.received.indexOf(seen), 1);
      return Promise.resolve(seen);
    }
    return new Promise((resolve) =>
      this.waiters.push({
        pred,
        resolve: (m) => {
          this.received.splice(this.received.indexOf(m), 1);
          resolve(m);
        },
      }),
    );
  }

  command(op?: string): Promise<Record<string, unknown>> {
    return this.next((m) => m.type === 'command' && (op === undefined || m.op === op));
  }

  close(): void {
    this.socket.end();
  }
}

/**
 * Resolves when `pred()` holds, checking after each macrotask turn (I/O-driven, no timers). The budget is in turns,
 * not time: 2,000 turns (a few ms) were once too few for a socket round trip on a loaded two-core CI machine, so it
 * is generous; a turn is cheap, and a condition that holds ends the wait at once.
 */
export async function until(pred: () => boolean, what: string, turns = 200_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (pred()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`never happened: ${what}`);
}
