import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';

/**
 * A small Debug Adapter Protocol client for tests: starts `dlv dap`, speaks
 * Content-Length framed JSON over TCP, sends requests, awaits responses and
 * events. What VS Code's Go extension does when you press F5, minus the UI.
 */
export class DapClient {
  private seq = 1;
  private buf = Buffer.alloc(0);
  private readonly pending = new Map<number, { resolve: (b: unknown) => void; reject: (e: Error) => void; command: string }>();
  private readonly events: Array<{ event: string; body: Record<string, unknown> }> = [];
  private waiters: Array<{ event: string; pred: (b: Record<string, unknown>) => boolean; resolve: (b: Record<string, unknown>) => void }> = [];
  readonly output: string[] = [];

  readonly dlv: ChildProcess;
  private readonly socket: Socket;

  private constructor(dlv: ChildProcess, socket: Socket) {
    this.dlv = dlv;
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
  }

  /** Starts `dlv dap` on a free loopback port and connects. */
  static async start(dlvPath: string, env: NodeJS.ProcessEnv = process.env): Promise<DapClient> {
    const dlv = spawn(dlvPath, ['dap', '--listen=127.0.0.1:0'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const port = await new Promise<number>((resolve, reject) => {
      let text = '';
      const onData = (b: Buffer) => {
        text += b.toString();
        const m = /listening at:\s*127\.0\.0\.1:(\d+)/.exec(text);
        if (m) resolve(Number(m[1]));
      };
      dlv.stdout!.on('data', onData);
      dlv.stderr!.on('data', onData);
      dlv.once('exit', (code) => reject(new Error(`dlv dap exited (${code}): ${text}`)));
    });
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new DapClient(dlv, socket);
  }

  request<T = Record<string, unknown>>(command: string, args: Record<string, unknown> = {}): Promise<T> {
    const seq = this.seq++;
    const body = JSON.stringify({ seq, type: 'request', command, arguments: args });
    this.socket.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    return new Promise<T>((resolve, reject) => this.pending.set(seq, { resolve: resolve as (b: unknown) => void, reject, command }));
  }

  /** The next event named `event` (an earlier one not yet consumed counts) that matches `pred`. */
  nextEvent(event: string, pred: (b: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> {
    const i = this.events.findIndex((e) => e.event === event && pred(e.body));
    if (i >= 0) return Promise.resolve(this.events.splice(i, 1)[0]!.body);
    return new Promise((resolve) => this.waiters.push({ event, pred, resolve }));
  }

  /** Ends the session (killing the debuggee) and dlv. */
  async close(): Promise<void> {
    await Promise.race([this.request('disconnect', { terminateDebuggee: true }).catch(() => undefined), new Promise((r) => setTimeout(r, 3000))]);
    this.socket.destroy();
    try {
      process.kill(-this.dlv.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }

  private onData(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    for (;;) {
      const headerEnd = this.buf.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const m = /Content-Length: (\d+)/i.exec(this.buf.subarray(0, headerEnd).toString());
      if (!m) throw new Error('DAP: no Content-Length');
      const len = Number(m[1]);
      if (this.buf.length < headerEnd + 4 + len) return;
      const msg = JSON.parse(this.buf.subarray(headerEnd + 4, headerEnd + 4 + len).toString()) as Record<string, unknown>;
      this.buf = this.buf.subarray(headerEnd + 4 + len);
      this.dispatch(msg);
    }
  }

  private dispatch(msg: Record<string, unknown>): void {
    if (msg.type === 'response') {
      const p = this.pending.get(msg.request_seq as number);
      if (!p) return;
      this.pending.delete(msg.request_seq as number);
      if (msg.success) p.resolve(msg.body ?? {});
      else p.reject(new Error(`DAP ${p.command} failed: ${String(msg.message)} ${JSON.stringify(msg.body ?? {})}`));
      return;
    }
    if (msg.type === 'event') {
      const event = msg.event as string;
      const body = (msg.body ?? {}) as Record<string, unknown>;
      if (event === 'output') this.output.push(String(body.output ?? ''));
      const w = this.waiters.find((x) => x.event === event && x.pred(body));
      if (w) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(body);
      } else this.events.push({ event, body });
    }
  }
}
