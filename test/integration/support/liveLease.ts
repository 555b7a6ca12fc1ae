import type { KubeClient } from '../../../src/core/k8s/client.ts';

const LEASES = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };

/** A Lease's time as client-go writes it (RFC 3339 with microseconds). */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * A leader-election Lease held by another, *running* instance: created with its holder and renewed every second
 * (a running client-go leader renews every RetryPeriod, 2 s with controller-runtime's defaults) until `release`.
 * Reconcile Lab tells a holder that stopped renewing (nothing to stop) from a live one (leaseWait.ts), so a Lease
 * written once reads as a stopped holder's. `release` stops renewing and deletes the Lease; it never rejects.
 */
export async function holdLease(
  client: Pick<KubeClient, 'create' | 'patch' | 'delete'>,
  lease: { namespace: string; name: string; holder: string; durationSeconds: number },
): Promise<{ release(): Promise<void> }> {
  const now = microTime(Date.now());
  await client.create(LEASES, {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: lease.name, namespace: lease.namespace },
    spec: { holderIdentity: lease.holder, leaseDurationSeconds: lease.durationSeconds, acquireTime: now, renewTime: now },
  });
  let renewing: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    renewing = client.patch(LEASES, lease.namespace, lease.name, 'merge', { spec: { renewTime: microTime(Date.now()) } }).catch(() => undefined);
  }, 1000);
  return {
    async release() {
      clearInterval(timer);
      await renewing;
      await client.delete(LEASES, lease.namespace, lease.name).catch(() => undefined);
    },
  };
}
