/** The kubeconfig cluster name the local control plane writes (src/core/controlplane/localControlPlane.ts). */
export const LOCAL_CLUSTER_NAME = 'reconcile-lab';

/**
 * True for this project's local control plane: the kubeconfig's cluster is named {@link LOCAL_CLUSTER_NAME} and
 * its server is on a loopback address. Anything else needs the developer to confirm the cluster by name.
 */
export function isLocalControlPlane(clusterName: string | undefined, server: string | undefined): boolean {
  if (clusterName !== LOCAL_CLUSTER_NAME || !server) return false;
  try {
    const host = new URL(server).hostname.replace(/^\[|\]$/g, '');
    return host === '127.0.0.1' || host === 'localhost' || host === '::1';
  } catch {
    return false;
  }
}
