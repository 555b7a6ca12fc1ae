// A user with namespaced RBAC rights only, on a test cluster: a ServiceAccount bound to a Role, with a token from
// the TokenRequest API, and a kubeconfig that uses that token. Shared by the CLI's integration tests and the
// extension-host suite.
import type { KubeTransport } from '../../../src/core/k8s/transport.ts';

/** One rule of a Role. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/**
 * Creates ServiceAccount `name` in `namespace`, a Role `name` with `rules` and its RoleBinding, and returns a token
 * for the ServiceAccount (TokenRequest, valid for an hour). The caller owns the namespace (deleting it removes all).
 */
export async function namespacedUserToken(admin: KubeTransport, namespace: string, rules: PolicyRule[], name = 'dev'): Promise<string> {
  const post = (path: string, body: unknown) => admin.json({ method: 'POST', path, body });
  await post(`/api/v1/namespaces/${namespace}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
  await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules });
  await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  });
  const tr = await post(`/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
  return (tr as { status: { token: string } }).status.token;
}

/** The cluster entry of a kubeconfig: its server and CA (a file or inline data). */
export interface ClusterEndpoint {
  server: string;
  caFile?: string;
  caData?: string;
}

/**
 * A kubeconfig (JSON text, write it with mode 0600) for user `dev` with `token` on `cluster`: one context per entry of
 * `contexts` (with its namespace, when given); the first is the current context.
 */
export function tokenKubeconfig(cluster: ClusterEndpoint, token: string, contexts: Array<{ name: string; namespace?: string }>): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: cluster.server, ...(cluster.caFile ? { 'certificate-authority': cluster.caFile } : { 'certificate-authority-data': cluster.caData }) } }],
    users: [{ name: 'dev', user: { token } }],
    contexts: contexts.map((c) => ({ name: c.name, context: { cluster: 'c', user: 'dev', ...(c.namespace ? { namespace: c.namespace } : {}) } })),
    'current-context': contexts[0]!.name,
  });
}
