import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { redactParserError } from './redact.ts';

/** Where client-node looks for an in-cluster service account when no kubeconfig file exists. */
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * Which kubeconfig problem: front-ends add their own next step (the CLI a flag, the extension a button), so the
 * message itself names none.
 */
export type KubeConfigProblem = 'noKubeconfig' | 'unreadable' | 'unknownContext' | 'noContext' | 'noServer' | 'plainHttp';

/** A kubeconfig problem, phrased for a person: what is wrong and where. */
export class KubeConfigError extends Error {
  readonly problem: KubeConfigProblem | undefined;
  constructor(message: string, options?: { cause?: unknown; problem?: KubeConfigProblem }) {
    super(message, options);
    this.name = 'KubeConfigError';
    this.problem = options?.problem;
  }
}

/**
 * The files kubectl would read without an explicit path, that exist: KUBECONFIG's list (when set), else
 * ~/.kube/config. Empty means there is no kubeconfig at all (client-node would then invent a
 * `loaded-context` at http://localhost:8080).
 */
export function defaultKubeconfigFiles(env: Readonly<Record<string, string | undefined>> = process.env, home: string | undefined = env.HOME): string[] {
  const list = env.KUBECONFIG?.trim();
  if (list) return list.split(process.platform === 'win32' ? ';' : ':').filter((f) => f && existsSync(f));
  const file = home ? join(home, '.kube', 'config') : undefined;
  return file && existsSync(file) ? [file] : [];
}

/**
 * Loads several kubeconfig files merged as kubectl does (clientcmd's precedence): for clusters, users and contexts
 * the first file to define a name wins (a later one's entry of the same name is ignored), and the current-context
 * is the first file's that sets one. client-node's own merge instead throws "Duplicate cluster" on a name two files
 * share (common: two clusters' files both naming their user "admin") and takes the last file's current-context.
 * Relative paths in each file are taken from that file's directory. Throws the parser's error, with the file named.
 */
export function loadKubeconfigFiles(files: readonly string[]): KubeConfig {
  const clusters = new Map<string, KubeConfig['clusters'][number]>();
  const users = new Map<string, KubeConfig['users'][number]>();
  const contexts = new Map<string, KubeConfig['contexts'][number]>();
  let currentContext = '';
  for (const file of files) {
    const one = new KubeConfig();
    try {
      one.loadFromFile(file);
    } catch (e) {
      // No `cause`: the parser's message quotes the file's lines (tokens, keys), and causes are logged.
      throw new KubeConfigError(`Cannot read kubeconfig ${file}: ${redactParserError((e as Error)?.message ?? String(e))}`, { problem: 'unreadable' });
    }
    for (const c of one.clusters) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const u of one.users) if (!users.has(u.name)) users.set(u.name, u);
    for (const c of one.contexts) if (!contexts.has(c.name)) contexts.set(c.name, c);
    currentContext ||= one.currentContext ?? '';
  }
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [...clusters.values()], users: [...users.values()], contexts: [...contexts.values()], currentContext });
  return kc;
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
  let kc = new KubeConfig();
  if (!options.path) {
    // Without KUBECONFIG, ~/.kube/config or a service account, client-node silently falls back to
    // http://localhost:8080, which then fails with an unrelated TLS message: say what is missing instead.
    const home = process.env.HOME;
    const defaultFile = home ? join(home, '.kube', 'config') : undefined;
    if (!process.env.KUBECONFIG && process.platform !== 'win32' && !(defaultFile && existsSync(defaultFile)) && !existsSync(SERVICE_ACCOUNT_TOKEN)) {
      throw new KubeConfigError(`No kubeconfig found: KUBECONFIG is not set and ${defaultFile ?? '~/.kube/config'} does not exist.`, { problem: 'noKubeconfig' });
    }
  }
  if (options.path && !existsSync(options.path)) {
    // client-node's message would be a bare ENOENT of open(): say which file is missing.
    throw new KubeConfigError(`The kubeconfig file ${options.path} does not exist.`, { problem: 'noKubeconfig' });
  }
  // KUBECONFIG's files merged as kubectl does: missing ones skipped (client-node would throw ENOENT on the first).
  const fromEnv = !options.path && process.env.KUBECONFIG ? defaultKubeconfigFiles() : undefined;
  if (fromEnv && fromEnv.length === 0) {
    throw new KubeConfigError(`No kubeconfig found: none of the files in KUBECONFIG=${process.env.KUBECONFIG} exists.`, { problem: 'noKubeconfig' });
  }
  try {
    if (fromEnv) kc = loadKubeconfigFiles(fromEnv);
    else if (options.path) kc.loadFromFile(options.path);
    else kc.loadFromDefault();
  } catch (e) {
    if (e instanceof KubeConfigError) throw e;
    const where = options.path ?? (process.env.KUBECONFIG ? `KUBECONFIG=${process.env.KUBECONFIG}` : '~/.kube/config');
    // No `cause`: the parser's message quotes the file's lines (tokens, keys), and causes are logged.
    throw new KubeConfigError(`Cannot read kubeconfig ${where}: ${redactParserError((e as Error)?.message ?? String(e))}`, { problem: 'unreadable' });
  }
  if (options.context) {
    if (!kc.getContextObject(options.context)) {
      const names = kc.getContexts().map((c) => c.name);
      throw new KubeConfigError(`Context "${options.context}" is not in the kubeconfig (contexts: ${names.join(', ') || 'none'}).`, { problem: 'unknownContext' });
    }
    kc.setCurrentContext(options.context);
  }
  const ctx = kc.getCurrentContext();
  if (!ctx || !kc.getContextObject(ctx)) {
    const names = kc.getContexts().map((c) => c.name);
    if (names.length === 0) throw new KubeConfigError('The kubeconfig has no contexts.', { problem: 'noContext' });
    const what = ctx ? `The kubeconfig's current-context "${ctx}" is not one of its contexts` : 'The kubeconfig has no current-context';
    throw new KubeConfigError(`${what} (contexts: ${names.join(', ')}): choose one of them.`, { problem: 'noContext' });
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) {
    // As kubectl: a context naming a cluster no file defines (KUBECONFIG=a:b with the clusters in a missing file).
    const named = kc.getContextObject(ctx)?.cluster;
    const names = kc.getClusters().map((c) => c.name);
    throw new KubeConfigError(`Context "${ctx}" refers to cluster "${named ?? ''}", which is not in the kubeconfig (clusters: ${names.join(', ') || 'none'}).`, { problem: 'noServer' });
  }
  if (!cluster.server) {
    throw new KubeConfigError(`Context "${ctx}" refers to a cluster without a server URL.`, { problem: 'noServer' });
  }
  if (/^\s*http:\/\//i.test(cluster.server)) {
    // Plain HTTP would send the credentials unencrypted (in any letter case); skipping TLS verification is no remedy.
    throw new KubeConfigError(`Context "${ctx}" points at the plain-HTTP server ${cluster.server}: Reconcile Lab only connects over https://. Use the server's https:// URL.`, { problem: 'plainHttp' });
  }
  return kc;
}
