import type { Clock } from '../clock.ts';
import { Emitter, type Event } from '../event.ts';
import { DisposableStore, type Disposable } from '../lifecycle.ts';
import type { Logger } from '../log.ts';
import type { Journal } from '../journal/journal.ts';
import { BridgeClosedError, type BridgeConnection } from './connection.ts';
import { writeRecordOf } from './causes.ts';
import type { CommandOp, FromGo, HelloMessage, ReplyMessage, WriteMessage } from './protocol.ts';
import { RemoteController, type RemoteEndpoint } from './remoteController.ts';

/**
 * How a Go process looks from the editor:
 * - `connected`: its socket is open and it talks (pings at least every second);
 * - `stoppedInDebugger`: socket open, silent, and a debug session reports it stopped (a breakpoint);
 * - `notResponding`: socket open, silent, no debugger says why (a breakpoint of another debugger, a hang);
 * - `exited`: its socket closed (it exited, or dropped the connection; the same `instance` may reconnect).
 * Never "dead" while the socket is open.
 */
export type ProcessLiveness = 'connected' | 'stoppedInDebugger' | 'notResponding' | 'exited';

/** Words for people. */
export function livenessLabel(l: ProcessLiveness): string {
  switch (l) {
    case 'connected':
      return 'connected';
    case 'stoppedInDebugger':
      return 'stopped in the debugger';
    case 'notResponding':
      return 'not responding (stopped in a debugger?)';
    case 'exited':
      return 'exited';
  }
}

export interface GoProcessOptions {
  journal: Journal;
  clock: Clock;
  log: Logger;
  commandTimeoutMs?: number;
}

/**
 * One run of a Go program (identified by its `instance`), across reconnects
 * of its bridge connection, with one {@link RemoteController} per controller
 * it announced. Routes the process's messages to its controllers and its
 * commands to the current connection.
 */
export class GoProcess implements RemoteEndpoint, Disposable {
  readonly instance: string;
  private helloValue: HelloMessage;
  private conn: BridgeConnection | undefined;
  private connStore = new DisposableStore();
  private readonly controllersByName = new Map<string, RemoteController>();
  private debuggerStopped = false;
  private readonly o: GoProcessOptions;
  private readonly changeEmitter = new Emitter<void>();
  private cachedResourcesValue: readonly string[] = [];
  private readonly cachedResourcesEmitter = new Emitter<void>();
  /** Fires when {@link cachedResources} changes (an informers message). */
  readonly onDidChangeCachedResources: Event<void> = this.cachedResourcesEmitter.event;
  private readonly controllerEmitter = new Emitter<RemoteController>();
  private readonly protocolErrorEmitter = new Emitter<string>();
  private readonly writeEmitter = new Emitter<WriteMessage>();
  /** Every write message as it came (with the object bodies a check instance sends; the journal keeps no bodies). */
  readonly onDidWrite: Event<WriteMessage> = this.writeEmitter.event;
  /** Liveness, the connection or the controller list changed. */
  readonly onDidChange: Event<void> = this.changeEmitter.event;
  /** A controller was announced for the first time. */
  readonly onDidAddController: Event<RemoteController> = this.controllerEmitter.event;
  /** An invalid line arrived (skipped). */
  readonly onProtocolError: Event<string> = this.protocolErrorEmitter.event;
  private disposed = false;

  constructor(conn: BridgeConnection, o: GoProcessOptions) {
    this.o = o;
    this.instance = conn.hello.instance;
    this.helloValue = conn.hello;
    this.attach(conn);
  }

  /** The resources the program's cache has informers for ("plural.version.group"), as it last said. */
  get cachedResources(): readonly string[] {
    return this.cachedResourcesValue;
  }

  get hello(): HelloMessage {
    return this.helloValue;
  }

  get pid(): number {
    return this.helloValue.pid;
  }

  get description(): string {
    return `Go process ${this.helloValue.pid} (${this.helloValue.program})`;
  }

  get connected(): boolean {
    return this.conn !== undefined && this.conn.liveness !== 'closed';
  }

  get liveness(): ProcessLiveness {
    const l = this.conn?.liveness ?? 'closed';
    if (l === 'closed') return 'exited';
    if (l === 'connected') return 'connected';
    return this.debuggerStopped ? 'stoppedInDebugger' : 'notResponding';
  }

  get controllers(): readonly RemoteController[] {
    return [...this.controllersByName.values()];
  }

  /**
   * A debugger told us whether this process is stopped (a DAP `stopped` /
   * `continued` event). Only refines how silence is shown; never closes anything.
   */
  setDebuggerStopped(stopped: boolean): void {
    if (this.debuggerStopped === stopped) return;
    this.debuggerStopped = stopped;
    this.changeEmitter.fire();
  }

  /** A (re)connection of this instance: it replaces the previous one. */
  attach(conn: BridgeConnection): void {
    if (this.disposed) {
      conn.dispose();
      return;
    }
    const previous = this.conn;
    this.connStore.dispose();
    this.connStore = new DisposableStore();
    this.conn = conn;
    this.helloValue = conn.hello;
    previous?.dispose();
    this.connStore.add(conn.onMessage((m) => this.route(m)));
    this.connStore.add(conn.onProtocolError((e) => this.protocolErrorEmitter.fire(e)));
    this.connStore.add(
      conn.onDidChangeLiveness((l) => {
        if (l === 'closed' && this.conn === conn) for (const c of this.controllersByName.values()) c.disconnected();
        this.changeEmitter.fire();
      }),
    );
    this.changeEmitter.fire();
  }

  request(cmd: { op: CommandOp; controller: string; key?: string; force?: boolean; resource?: string }, options: { timeoutMs?: number; onReply?: (r: ReplyMessage) => void } = {}): Promise<ReplyMessage> {
    if (!this.conn) return Promise.reject(new BridgeClosedError(`before "${cmd.op}" was sent`));
    return this.conn.request(cmd, options);
  }

  private route(m: FromGo): void {
    switch (m.type) {
      case 'controller': {
        const existing = this.controllersByName.get(m.name);
        if (existing) {
          existing.announce(m);
          void existing.resync();
          this.changeEmitter.fire();
          return;
        }
        const c = new RemoteController({
          announce: m,
          endpoint: this,
          journal: this.o.journal,
          clock: this.o.clock,
          log: this.o.log,
          ...(this.o.commandTimeoutMs !== undefined ? { commandTimeoutMs: this.o.commandTimeoutMs } : {}),
        });
        this.controllersByName.set(m.name, c);
        void c.resync();
        this.controllerEmitter.fire(c);
        this.changeEmitter.fire();
        return;
      }
      case 'queue':
        return this.withController(m.controller, m.type, (c) => c.onQueue(m));
      case 'reconcileStart':
        return this.withController(m.controller, m.type, (c) => c.onReconcileStart(m));
      case 'reconcileEnd':
        return this.withController(m.controller, m.type, (c) => c.onReconcileEnd(m));
      case 'write': {
        if (this.writeEmitter.hasListeners) this.writeEmitter.fire(m);
        const c = m.controller !== undefined ? this.controllersByName.get(m.controller) : undefined;
        if (c) c.onWrite(m);
        else this.o.journal.recordWrite(writeRecordOf(m.write, m.controller, m.key));
        return;
      }
      case 'informers':
        this.cachedResourcesValue = [...m.resources];
        this.cachedResourcesEmitter.fire();
        return;
      case 'ping':
      case 'hello':
      case 'reply':
        return;
    }
  }

  private withController(name: string, what: string, fn: (c: RemoteController) => void): void {
    const c = this.controllersByName.get(name);
    if (!c) {
      this.protocolErrorEmitter.fire(`${what} for controller "${name}", which was never announced (ignored)`);
      return;
    }
    try {
      fn(c);
    } catch (e) {
      // A message that breaks our bookkeeping is reported, never a crash of the editor.
      this.o.log.error('bridge: handling a message failed', { what, controller: name, error: (e as Error).message });
      this.protocolErrorEmitter.fire(`${what}: ${(e as Error).message}`);
    }
  }

  /** Closes the connection and releases the controllers (the process itself is owned by its launcher). */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.connStore.dispose();
    this.conn?.dispose();
    for (const c of this.controllersByName.values()) c.dispose();
    this.changeEmitter.dispose();
    this.controllerEmitter.dispose();
    this.protocolErrorEmitter.dispose();
    this.writeEmitter.dispose();
    this.cachedResourcesEmitter.dispose();
  }
}
