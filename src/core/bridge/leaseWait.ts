import { sleep, type Clock } from '../clock.ts';
import type { KubeClient } from '../k8s/client.ts';
import type { GroupVersionResource } from '../k8s/objects.ts';

/** Where a program's client-go leader election waits: the Lease it tries to acquire. */
export interface LeaseRef {
  readonly namespace: string;
  readonly name: string;
}

/**
 * client-go's leaderelection log line as it starts to wait for the lease, in its forms: klog's format string (client-go
 * before v0.35: `attempting to acquire leader lease <ns>/<name>...`) and the structured message with a `lock` value
 * (`"Attempting to acquire leader lease..." lock="<ns>/<name>"` in klog's text, `{"lock": "<ns>/<name>"}` through
 * controller-runtime's zap logger, JSON). Groups 1–2 or 3–4: the namespace and the name.
 */
const ACQUIRING = /attempting to acquire leader lease(?: ([a-z0-9.-]+)\/([a-z0-9.-]+?)\.{3}|.*?\block"?\s*[:=]\s*"?([a-z0-9.-]+)\/([a-z0-9.-]+))/i;
/** client-go's log line once the lease is held (either form). */
const ACQUIRED = /successfully acquired lease/i;

/** The longest unfinished line kept between chunks (a line longer than this is read by its end). */
const PARTIAL_CHARS = 4096;

/**
 * Reads a controller program's output for client-go's leader-election lines: which Lease it is waiting to acquire,
 * forgotten once it logs that it acquired it. What Run Controller…, `reconcile-lab run --go` and F5 (DebuggeeWatch)
 * name when a program announces no controller: with leader election on, controller-runtime starts its controllers
 * only after it holds the lease.
 *
 * Contracts: feed it either whole lines ({@link line}) or chunks of output split anywhere ({@link write}), not both for
 * one stream. The last lease line wins.
 */
export class LeaseWaitReader {
  private current: LeaseRef | undefined;
  private partial = '';

  /** The Lease the program waits for: the last one it logged it attempts to acquire, unless it logged it acquired one since. */
  get lease(): LeaseRef | undefined {
    return this.current;
  }

  /** One whole line of output (without its line break). */
  line(text: string): void {
    if (ACQUIRED.test(text)) this.current = undefined;
    const m = ACQUIRING.exec(text);
    if (m) this.current = { namespace: (m[1] ?? m[3])!, name: (m[2] ?? m[4])! };
  }

  /** Output in chunks as it comes (a debug adapter's `output` events): lines are read once their line break came. */
  write(text: string): void {
    const lines = (this.partial + text).split(/\r?\n/);
    this.partial = (lines.pop() ?? '').slice(-PARTIAL_CHARS);
    for (const l of lines) this.line(l);
  }
}

const LEASE_GVR: GroupVersionResource = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };

/** Who holds a Lease, and how recently it renewed it. */
export interface LeaseHolder {
  /** `spec.holderIdentity` (client-go's identity of the holder, e.g. `laptop_1a2b3c4d-…`), made safe for a message. */
  readonly identity: string;
  /**
   * How long before the read the holder last renewed the Lease (now − `spec.renewTime`); absent without a renewTime,
   * and when a second read saw it renewed (a live holder whose clock is behind ours).
   */
  readonly renewedAgoMs?: number;
  /** `spec.leaseDurationSeconds` in milliseconds; absent when unset. */
  readonly durationMs?: number;
}

/**
 * A holder that has not renewed its Lease for this long has stopped (or lost the cluster): a running client-go leader
 * renews every RetryPeriod (2 s under controller-runtime's defaults) and gives up after RenewDeadline (10 s).
 */
export const LEASE_UNRENEWED_MS = 5000;

/**
 * Whether `holder` has stopped renewing its Lease ({@link LEASE_UNRENEWED_MS} or more since its last renewal): most
 * often an earlier run of the same program whose manager did not give the lease back when it stopped (controller-runtime
 * releases it on exit only with `LeaderElectionReleaseOnCancel`), so the lease is only waiting to expire.
 */
export function leaseUnrenewed(holder: LeaseHolder | undefined): boolean {
  return holder?.renewedAgoMs !== undefined && holder.renewedAgoMs >= LEASE_UNRENEWED_MS;
}

/**
 * What a notice says about the holder of an unrenewed Lease (see {@link leaseUnrenewed}), after "is held by": its
 * identity, how long it has not renewed it, why that means a stopped holder, and that the wait ends by itself — with
 * nothing to stop. client-go takes over a Lease another identity holds only once it has seen the Lease unchanged for
 * its whole duration, counted from when *it* first read it (its own clock, never the holder's renewTime), so however
 * long ago the holder stopped, the program waits that duration from its first try. `turnOff`: how to run without
 * leader election (`run with --leader-elect=false`).
 */
export function unrenewedLeaseText(holder: LeaseHolder, turnOff: string): string {
  const s = (ms: number) => `${Math.max(0, Math.round(ms / 1000))} s`;
  const duration = holder.durationMs !== undefined ? ` (${s(holder.durationMs)})` : '';
  return `${holder.identity}, which has not renewed it for ${s(holder.renewedAgoMs ?? 0)} (a running manager renews it every few seconds, every 2 s with controller-runtime's defaults): its holder has stopped without giving the lease back, most likely an earlier run of your program (an earlier command of this CLI, Run Controller…, make run), whose manager gives it back on exit only with LeaderElectionReleaseOnCancel: true in its options. There is nothing to stop: client-go takes the lease over once it has seen it unrenewed for its whole duration${duration}, counted from this program's first try, however long ago the holder stopped — so every run waits that long until this lease is given back. To skip the wait, ${turnOff} (leader election is not needed to debug a controller), or set LeaderElectionReleaseOnCancel: true.`;
}

/** How long the reader waits before it reads an unrenewed-looking Lease again: more than controller-runtime's 2 s RetryPeriod. */
export const LEASE_RECHECK_MS = 2500;

/**
 * Reads who holds a Lease through `client` (the connection's): its `spec.holderIdentity` (control characters shown as
 * `?`, cut to 253 characters) with how long ago it was renewed (`spec.renewTime`, against `clock`) and its
 * `spec.leaseDurationSeconds`; undefined when it has no holder or the Lease cannot be read (missing, forbidden,
 * unreachable). Never rejects. renewTime is written by the holder's clock, not ours: a Lease that looks unrenewed
 * ({@link LEASE_UNRENEWED_MS}) is read again after {@link LEASE_RECHECK_MS}, and when its renewTime or holder changed
 * meanwhile the holder is live and the answer has no `renewedAgoMs`. `signal`: the caller's lifetime; aborted during
 * that wait, the timer is cleared and the answer is undefined.
 */
export function leaseHolderReader(client: Pick<KubeClient, 'get'>, clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>): (lease: LeaseRef, signal?: AbortSignal) => Promise<LeaseHolder | undefined> {
  const read = async (lease: LeaseRef): Promise<{ holder: LeaseHolder; renewTime: unknown } | undefined> => {
    try {
      const l = await client.get(LEASE_GVR, lease.namespace, lease.name);
      const spec = (l.spec ?? {}) as { holderIdentity?: unknown; renewTime?: unknown; leaseDurationSeconds?: unknown };
      const holder = spec.holderIdentity;
      // Cluster text for a message: no control characters (a terminal's escapes), no more than a name's length.
      if (typeof holder !== 'string' || !holder) return undefined;
      const identity = holder.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?').slice(0, 253);
      const renewed = typeof spec.renewTime === 'string' ? Date.parse(spec.renewTime) : NaN;
      const duration = spec.leaseDurationSeconds;
      return {
        renewTime: spec.renewTime,
        holder: {
          identity,
          ...(Number.isFinite(renewed) ? { renewedAgoMs: clock.now() - renewed } : {}),
          ...(typeof duration === 'number' && Number.isFinite(duration) ? { durationMs: duration * 1000 } : {}),
        },
      };
    } catch {
      return undefined;
    }
  };
  return async (lease, signal) => {
    const first = await read(lease);
    if (!first || !leaseUnrenewed(first.holder)) return first?.holder;
    // The wait is the caller's: aborted (the run or the session ended), its timer is cleared and nothing is read again.
    try {
      await sleep(clock, LEASE_RECHECK_MS, signal);
    } catch {
      return undefined;
    }
    const again = await read(lease);
    if (!again) return undefined;
    if (again.renewTime === first.renewTime && again.holder.identity === first.holder.identity) return again.holder;
    // Renewed (or taken) meanwhile: a live holder, whatever its clock says.
    const { renewedAgoMs: _skewed, ...live } = again.holder;
    return live;
  };
}
