import type { Clock, TimerHandle } from '../clock.ts';
import type { Event } from '../event.ts';
import type { Disposable } from '../lifecycle.ts';
import { LeaseWaitReader, leaseUnrenewed, unrenewedLeaseText, type LeaseHolder, type LeaseRef } from './leaseWait.ts';

export type { LeaseRef };

/** The subset of a bridge hub a {@link DebuggeeWatch} reads: its processes and their controllers' announcements. */
export interface DebuggeeHub {
  readonly processes: ReadonlyArray<{ readonly pid: number; readonly controllers: readonly unknown[] }>;
  readonly onDidAddController: Event<{ readonly process: { readonly pid: number } }>;
}

export interface DebuggeeWatchOptions {
  clock: Clock;
  /** The bridge the debugged program dials (the connection's). */
  hub: DebuggeeHub;
  /** The launch configuration's name, for people. */
  name: string;
  /**
   * The leader-election flag when the configuration looks to turn it on (`--leader-elect` in its args, or the
   * program's flag defaulting to true), with why, for people ("--leader-elect", or "the --leader-elect flag defined in
   * cmd/main.go:7 defaults to true"). Undefined when it looks off or unknown.
   */
  leaderElection?: { flag: string; why: string };
  /** The holder of `lease` (its spec.holderIdentity), read from the cluster (leaseWait.ts's leaseHolderReader); undefined when it cannot be read. */
  leaseHolder?: (lease: LeaseRef, signal?: AbortSignal) => Promise<LeaseHolder | undefined>;
  /** Told at most once: why the debugged program shows nothing in the views yet. */
  onNotice: (message: string) => void;
  /** How long the program runs (not stopped in the debugger) without announcing a controller before the notice. Default 20 s. */
  noticeAfterMs?: number;
}

/**
 * Why a program debugged with Reconcile Lab (F5) shows nothing in the views: a debug session has no progress
 * notification to say so, as Run Controller… has (runGoController's notice). Watches one debug session's program and
 * tells once, {@link DebuggeeWatchOptions.noticeAfterMs} of running time after it started, when no process that
 * connected to the hub since (the debuggee's pid, once the adapter told it) announced a controller: the leader-election
 * lease it waits for (read from its output, with the holder when it can be read), or that it connected and announced
 * nothing, or that it never connected.
 *
 * Contracts:
 *   - Time counts only while the debuggee runs: from {@link start} (the adapter's `initialized` event: the program is
 *     built and launched), paused while the debugger reports it stopped (a breakpoint is not a hang) and resumed from
 *     where it was on continue. Nothing is told while it is stopped.
 *   - Told at most once; never once a controller of the debuggee was announced; never after {@link dispose} (the
 *     session ended), even when the lease holder's read resolves later.
 *   - Owns its timer and its hub subscription; dispose releases both.
 */
export class DebuggeeWatch implements Disposable {
  private readonly o: DebuggeeWatchOptions;
  private readonly noticeAfterMs: number;
  /** The hub's processes when the session started: theirs are not the debuggee's. */
  private readonly before: ReadonlySet<object>;
  private readonly subscription: Disposable;
  private pid: number | undefined;
  private started = false;
  private stopped = false;
  /** Running time counted before the current run (ms). */
  private ranMs = 0;
  /** When the current run began (clock time), while running. */
  private runningSince: number | undefined;
  private timer: TimerHandle | undefined;
  /** Told, or no longer to be told (a controller announced, or disposed). */
  private done = false;
  private disposed = false;
  /** Aborted at dispose: a read of the lease holder still waiting (leaseHolderReader) stops then. */
  private readonly lifetime = new AbortController();
  private readonly leases = new LeaseWaitReader();

  constructor(o: DebuggeeWatchOptions) {
    this.o = o;
    this.noticeAfterMs = o.noticeAfterMs ?? 20_000;
    this.before = new Set(o.hub.processes);
    this.subscription = o.hub.onDidAddController((c) => {
      if (this.isDebuggee(c.process)) this.finish();
    });
  }

  /** The debuggee was launched (the adapter's `initialized` event): running time starts to count (unless stopped). */
  start(): void {
    if (this.started || this.done) return;
    this.started = true;
    if (!this.stopped) this.resume();
  }

  /** The adapter told the debuggee's pid (its `process` event): only that process is the debuggee from now on. */
  setPid(pid: number): void {
    this.pid = pid;
  }

  /** The debugger reports the debuggee stopped (true: a breakpoint, a pause, a step) or running again (false). */
  setStopped(stopped: boolean): void {
    if (this.done || stopped === this.stopped) return;
    this.stopped = stopped;
    if (!this.started) return;
    if (stopped) this.pause();
    else this.resume();
  }

  /** Output of the debuggee (the adapter's `output` events, in any chunks): read for client-go's lease lines. */
  output(text: string): void {
    if (this.done) return;
    this.leases.write(text);
  }

  private isDebuggee(p: { readonly pid: number }): boolean {
    return !this.before.has(p) && (this.pid === undefined || p.pid === this.pid);
  }

  private resume(): void {
    if (this.done || this.runningSince !== undefined) return;
    this.runningSince = this.o.clock.now();
    this.timer = this.o.clock.setTimeout(() => this.due(), Math.max(0, this.noticeAfterMs - this.ranMs));
  }

  private pause(): void {
    if (this.runningSince === undefined) return;
    this.ranMs += this.o.clock.now() - this.runningSince;
    this.runningSince = undefined;
    if (this.timer !== undefined) this.o.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private due(): void {
    this.timer = undefined;
    if (this.done || this.stopped) return;
    const mine = this.o.hub.processes.filter((p) => this.isDebuggee(p));
    if (mine.some((p) => p.controllers.length > 0)) return this.finish();
    this.finish();
    const lease = this.leases.lease;
    if (!lease) return this.o.onNotice(this.message(mine.map((p) => p.pid)));
    const holder = this.o.leaseHolder ? this.o.leaseHolder(lease, this.lifetime.signal).catch(() => undefined) : Promise.resolve(undefined);
    void holder.then((h) => {
      // The session ended while the lease was read: nothing to say any more.
      if (!this.disposed) this.o.onNotice(this.leaseMessage(lease, h));
    });
  }

  private message(pids: readonly number[]): string {
    const le = this.o.leaderElection;
    if (pids.length) {
      const wait = le
        ? ` Leader election looks enabled (${le.why}): its controllers start only after it wins the lease, and another instance of your program holding it (Run Controller…, make run in a terminal, the operator deployed in this cluster) keeps it waiting until that one stops and the lease expires. Stop the other instance, or debug with ${le.flag}=false in the configuration's args (leader election is not needed to debug a controller).`
        : '';
      return `Reconcile Lab: the debug session "${this.o.name}" connected (pid ${pids.join(', ')}) but announced no controller yet: each controller needs WithOptions(bridge.Options(mgr, name, …)) in its SetupWithManager; its queue is announced when the manager starts the controller (after winning leader election when that is on).${wait}`;
    }
    return `Reconcile Lab: the debug session "${this.o.name}" has not connected to Reconcile Lab yet: a program that never calls bridge.Setup or bridge.Options never connects (Set Up Go Bridge… adds the bridge to its go.mod), and one that stops or waits before it sets up its manager connects only then. Its output is in the Debug Console.`;
  }

  private leaseMessage(lease: LeaseRef, holder: LeaseHolder | undefined): string {
    const flag = this.o.leaderElection?.flag ?? '--leader-elect';
    if (holder && leaseUnrenewed(holder)) {
      return `Reconcile Lab: the debug session "${this.o.name}" is waiting for the leader-election lease ${lease.namespace}/${lease.name}, held by ${unrenewedLeaseText(holder, `debug with ${flag}=false in the configuration's args`)}`;
    }
    return `Reconcile Lab: the debug session "${this.o.name}" is waiting for the leader-election lease ${lease.namespace}/${lease.name}${holder ? `, held by ${holder.identity}` : ''}: its controllers start only once it wins the lease, so the views show nothing yet. Another instance of your program holds it (Run Controller…, make run in a terminal, the operator deployed in this cluster) and keeps it until that one stops and the lease expires. Stop the other instance, or debug with ${flag}=false in the configuration's args (leader election is not needed to debug a controller).`;
  }

  /** Stops watching: no notice will come. */
  private finish(): void {
    this.done = true;
    this.pause();
    this.subscription.dispose();
  }

  dispose(): void {
    this.disposed = true;
    this.lifetime.abort();
    this.finish();
  }
}
