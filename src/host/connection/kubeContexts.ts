import { KubeConfig } from '@kubernetes/client-node';
import { defaultKubeconfigFiles, KubeConfigError } from '../../core/k8s/kubeconfig.ts';
import { redactParserError } from '../../core/k8s/redact.ts';

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
  const kc = new KubeConfig();
  try {
    // KUBECONFIG's files merged in order, skipping missing ones as kubectl does (client-node would throw).
    kc.loadFromFile(files[0]!);
    for (const f of files.slice(1)) {
      const more = new KubeConfig();
      more.loadFromFile(f);
      kc.mergeConfig(more, false);
    }
  } catch (e) {
    throw new KubeConfigError(`Cannot read kubeconfig ${path ?? 'from KUBECONFIG or ~/.kube/config'}: ${redactParserError((e as Error)?.message ?? String(e))}`);
  }
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
