import { realClock } from '../../../src/core/clock.ts';
import { BridgeHub } from '../../../src/core/bridge/bridgeHub.ts';
import { runGoController, type RunGoControllerOptions, type RunningGoController } from '../../../src/core/bridge/runGoController.ts';
import { Journal } from '../../../src/core/journal/journal.ts';

/** A fresh bridge and the journal it writes to. */
export interface FreshBridge {
  hub: BridgeHub;
  journal: Journal;
}

/**
 * The Go programs an integration suite launches, each on a bridge of its own (a fresh {@link BridgeHub} on the real
 * clock with its own synchronous journal, so a test reads only its program's entries).
 *
 * Contract: every hub made by {@link bridge} or {@link launch} and every program {@link launch} started is owned
 * here until {@link dispose}, which the suite calls from its `after`: it stops every program (gracefully, then
 * killed), then disposes every hub, so no process, socket or listener outlives the suite — also when a test failed
 * half-way.
 */
export class GoLaunches {
  private readonly running: RunningGoController[] = [];
  private readonly hubs: BridgeHub[] = [];

  /** A fresh bridge, owned here (for a program started another way, e.g. under Delve with `hub.env()`). */
  async bridge(o: { silentAfterMs?: number } = {}): Promise<FreshBridge> {
    const journal = new Journal({ clock: realClock, capacity: 50_000, delivery: 'sync' });
    const hub = await BridgeHub.start({ clock: realClock, journal, ...o });
    this.hubs.push(hub);
    return { hub, journal };
  }

  /**
   * Launches `command args` with `KUBECONFIG=kubeconfigPath` on a fresh bridge; resolves once a controller `accept`
   * takes (default: the first) is announced, within two minutes (the program is welcomed paused). Rejects as
   * {@link runGoController} does; the program and the hub are owned here either way.
   */
  async launch(o: { kubeconfigPath: string; command: string; args: string[]; accept?: RunGoControllerOptions['accept'] }): Promise<FreshBridge & { r: RunningGoController }> {
    const { hub, journal } = await this.bridge();
    const r = await runGoController({
      hub,
      spec: { command: o.command, args: o.args },
      clock: realClock,
      env: { KUBECONFIG: o.kubeconfigPath },
      waitMs: 120_000,
      ...(o.accept ? { accept: o.accept } : {}),
    });
    this.running.push(r);
    return { hub, journal, r };
  }

  /** Stops every launched program, then disposes every hub. */
  async dispose(): Promise<void> {
    for (const r of this.running.splice(0)) await r.launched.stop();
    for (const h of this.hubs.splice(0)) h.dispose();
  }
}
