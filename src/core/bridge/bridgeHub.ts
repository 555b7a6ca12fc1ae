import type { Clock } from '../clock.ts';
import { Emitter, type Event } from '../event.ts';
import { DisposableStore, type Disposable } from '../lifecycle.ts';
import { nullLogger, type Logger } from '../log.ts';
import type { Journal } from '../journal/journal.ts';
import type { BridgeConnection } from './connection.ts';
import { GoProcess } from './goProcess.ts';
import { BridgeListener, type BridgeListenerOptions } from './listener.ts';
import type { RemoteController } from './remoteController.ts';

export interface BridgeHubOptions extends Omit<BridgeListenerOptions, 'log'> {
  /** Where every remote controller journals (the session's journal). */
  journal: Journal;
  log?: Logger;
  commandTimeoutMs?: number;
}

/**
 * The editor side of the bridge, whole: a {@link BridgeListener}, the Go
 * processes that connected to it ({@link GoProcess}, one per `instance`, kept
 * across reconnects) and their controllers. Several controllers of one
 * manager are several {@link RemoteController}s (several queues).
 *
 * Owns everything it made: {@link dispose} closes every connection, the
 * listener and its socket directory. It does not own the processes'
 * lifetimes (see ProcessLauncher).
 */
export class BridgeHub implements Disposable {
  readonly listener: BridgeListener;
  private readonly o: BridgeHubOptions;
  private readonly log: Logger;
  private readonly byInstance = new Map<string, GoProcess>();
  private readonly store = new DisposableStore();
  private readonly processEmitter = new Emitter<GoProcess>();
  private readonly controllerEmitter = new Emitter<{ process: GoProcess; controller: RemoteController }>();
  private readonly changeEmitter = new Emitter<void>();
  /** A new process instance connected. */
  readonly onDidAddProcess: Event<GoProcess> = this.processEmitter.event;
  /** A process announced a new controller. */
  readonly onDidAddController: Event<{ process: GoProcess; controller: RemoteController }> = this.controllerEmitter.event;
  /** Anything about the processes changed (liveness, controllers, reconnect). */
  readonly onDidChange: Event<void> = this.changeEmitter.event;

  private constructor(listener: BridgeListener, o: BridgeHubOptions) {
    this.listener = listener;
    this.o = o;
    this.log = o.log ?? nullLogger;
    this.store.add(listener);
    this.store.add(listener.onDidConnect((conn) => this.onConnect(conn)));
    this.store.add(this.processEmitter);
    this.store.add(this.controllerEmitter);
    this.store.add(this.changeEmitter);
  }

  static async start(o: BridgeHubOptions): Promise<BridgeHub> {
    const listener = await BridgeListener.listen({ ...o, log: o.log ?? nullLogger });
    return new BridgeHub(listener, o);
  }

  /** The environment to give a process (address and secret token: never log it). */
  env(): Record<string, string> {
    return this.listener.env();
  }

  get processes(): readonly GoProcess[] {
    return [...this.byInstance.values()];
  }

  /** Every controller of every process, in announcement order per process. */
  get controllers(): ReadonlyArray<{ process: GoProcess; controller: RemoteController }> {
    return this.processes.flatMap((process) => process.controllers.map((controller) => ({ process, controller })));
  }

  /** The process with this pid, if one connected. */
  processByPid(pid: number): GoProcess | undefined {
    return this.processes.find((p) => p.pid === pid);
  }

  /**
   * Resolves with the first controller (already announced or announced later)
   * that `accept` accepts; rejects when `signal` aborts.
   */
  waitForController(accept: (c: { process: GoProcess; controller: RemoteController }) => boolean = () => true, signal?: AbortSignal): Promise<{ process: GoProcess; controller: RemoteController }> {
    const now = this.controllers.find(accept);
    if (now) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const sub = this.onDidAddController((c) => {
        if (!accept(c)) return;
        sub.dispose();
        signal?.removeEventListener('abort', onAbort);
        resolve(c);
      });
      const onAbort = () => {
        sub.dispose();
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Forgets a process (after it exited): closes its connection and drops its controllers. */
  remove(p: GoProcess): void {
    if (this.byInstance.get(p.instance) !== p) return;
    this.byInstance.delete(p.instance);
    this.store.delete(p);
    p.dispose();
    this.changeEmitter.fire();
  }

  private onConnect(conn: BridgeConnection): void {
    const existing = this.byInstance.get(conn.hello.instance);
    if (existing) {
      this.log.info('bridge: process reconnected', { pid: conn.hello.pid, instance: conn.hello.instance });
      existing.attach(conn);
      return;
    }
    const p = this.store.add(
      new GoProcess(conn, {
        journal: this.o.journal,
        clock: this.o.clock,
        log: this.log,
        ...(this.o.commandTimeoutMs !== undefined ? { commandTimeoutMs: this.o.commandTimeoutMs } : {}),
      }),
    );
    this.byInstance.set(p.instance, p);
    p.onDidAddController((controller) => this.controllerEmitter.fire({ process: p, controller }));
    p.onDidChange(() => this.changeEmitter.fire());
    p.onProtocolError((e) => this.log.warn(`bridge: ${p.description}: ${e}`));
    this.log.info('bridge: process connected', { pid: conn.hello.pid, program: conn.hello.program, controllerRuntime: conn.hello.controllerRuntime });
    this.processEmitter.fire(p);
    this.changeEmitter.fire();
  }

  dispose(): void {
    this.byInstance.clear();
    this.store.dispose();
  }
}
