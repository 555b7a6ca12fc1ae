import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { redactParserError } from './redact.ts';

/** Where client-node looks for an in-cluster service account when no kubeconfig file exists. */
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** A kubeconfig problem, phrased for a person: what is wrong and where. */
export class KubeConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KubeConfigError';
  }
}

export interface LoadKubeConfigOptions {
  /** A kubeconfig file; default: KUBECONFIG (several files, merged as kubectl does) or ~/.kube/config. */
  path?: string;
  /** The context to use; default: the file's current-context. */
  context?: string;
}

/**
 * Loads a kubeconfig with `@kubernetes/client-node` (which handles exec
 * credential plugins, token files, client certs and KUBECONFIG lists) and
 * validates that the chosen context points at a cluster with a server.
 * Throws {@link KubeConfigError} with a clear message on malformed input.
 */
export function loadKubeConfig(options: LoadKubeConfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  if (!options.path) {
    // Without KUBECONFIG, ~/.kube/config or a service account, client-node silently falls back to
    // http://localhost:8080, which then fails with an unrelated TLS message: say what is missing instead.
    const home = process.env.HOME;
    const defaultFile = home ? join(home, '.kube', 'config') : undefined;
    if (!process.env.KUBECONFIG && process.platform !== 'win32' && !(defaultFile && existsSync(defaultFile)) && !existsSync(SERVICE_ACCOUNT_TOKEN)) {
      throw new KubeConfigError(`No kubeconfig found: KUBECONFIG is not set and ${defaultFile ?? '~/.kube/config'} does not exist. Choose a kubeconfig file (--kubeconfig in the CLI) or set KUBECONFIG.`);
    }
  }
  try {
    if (options.path) kc.loadFromFile(options.path);
    else kc.loadFromDefault();
  } catch (e) {
    const where = options.path ?? (process.env.KUBECONFIG ? `KUBECONFIG=${process.env.KUBECONFIG}` : '~/.kube/config');
    // No `cause`: the parser's message quotes the file's lines (tokens, keys), and causes are logged.
    throw new KubeConfigError(`Cannot read kubeconfig ${where}: ${redactParserError((e as Error)?.message ?? String(e))}`);
  }
  if (options.context) {
    if (!kc.getContextObject(options.context)) {
      const names = kc.getContexts().map((c) => c.name);
      throw new KubeConfigError(`Context "${options.context}" is not in the kubeconfig (contexts: ${names.join(', ') || 'none'}).`);
    }
    kc.setCurrentContext(options.context);
  }
  const ctx = kc.getCurrentContext();
  if (!ctx || !kc.getContextObject(ctx)) {
    throw new KubeConfigError('The kubeconfig has no current context. Pick one with the "context" option (or kubectl config use-context).');
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) {
    throw new KubeConfigError(`Context "${ctx}" refers to a cluster without a server URL.`);
  }
  if (/^\s*http:\/\//i.test(cluster.server)) {
    // Plain HTTP would send the credentials unencrypted (in any letter case); skipping TLS verification is no remedy.
    throw new KubeConfigError(`Context "${ctx}" points at the plain-HTTP server ${cluster.server}: Reconcile Lab only connects over https://. Use the server's https:// URL.`);
  }
  return kc;
}
