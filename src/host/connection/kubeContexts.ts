import { defaultKubeconfigFiles, loadKubeconfigFiles } from '../../core/k8s/kubeconfig.ts';

/** One kubeconfig context, for the context picker. */
export interface KubeContextInfo {
  readonly name: string;
  readonly cluster: string;
  readonly server?: string;
  readonly user: string;
  readonly namespace?: string;
  readonly current: boolean;
  /** The user authenticates through an exec credential plugin (the command, for the picker's detail). */
  readonly execCommand?: string;
}

/**
 * Lists the contexts of a kubeconfig (a file, or the kubectl default with
 * KUBECONFIG's several files merged) without validating any of them: the
 * picker shows them all and `loadKubeConfig` validates the one chosen.
 */
export function listKubeContexts(path: string | undefined, env: Readonly<Record<string, string | undefined>> = process.env): KubeContextInfo[] {
  // No file at all: nothing to list. (client-node would invent a "loaded-context" at http://localhost:8080.)
  const files = path ? [path] : defaultKubeconfigFiles(env);
  if (files.length === 0) return [];
  // KUBECONFIG's files merged as kubectl does (missing ones skipped, the first definition of a name and the first
  // current-context win), as loadKubeConfig merges them when the chosen context is connected.
  const kc = loadKubeconfigFiles(files);
  const current = kc.getCurrentContext();
  return kc.getContexts().map((c) => {
    const user = kc.getUser(c.user);
    return {
      name: c.name,
      cluster: c.cluster,
      server: kc.getCluster(c.cluster)?.server,
      user: c.user,
      ...(c.namespace ? { namespace: c.namespace } : {}),
      current: c.name === current,
      ...(user?.exec?.command ? { execCommand: String(user.exec.command) } : {}),
    };
  });
}
