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

/**
 * Reads who holds a Lease through `client` (the connection's): its `spec.holderIdentity` (client-go's identity of the
 * holder, e.g. `laptop_1a2b3c4d-…`; control characters shown as `?`, cut to 253 characters), undefined when it has
 * none or the Lease cannot be read (missing, forbidden, unreachable). Never rejects.
 */
export function leaseHolderReader(client: Pick<KubeClient, 'get'>): (lease: LeaseRef) => Promise<string | undefined> {
  return async (lease) => {
    try {
      const l = await client.get(LEASE_GVR, lease.namespace, lease.name);
      const holder = (l.spec as { holderIdentity?: unknown } | undefined)?.holderIdentity;
      // Cluster text for a message: no control characters (a terminal's escapes), no more than a name's length.
      return typeof holder === 'string' && holder ? holder.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?').slice(0, 253) : undefined;
    } catch {
      return undefined;
    }
  };
}
