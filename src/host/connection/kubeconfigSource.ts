/**
 * Where the extension's kubeconfig comes from. Pure (no `vscode`), so the
 * precedence is unit-tested: the setting `reconcileLab.connection.kubeconfig`,
 * then env RECONCILE_LAB_KUBECONFIG (tests, `npm run lab`), then the
 * kubectl default (KUBECONFIG, several files merged, or ~/.kube/config),
 * which `loadKubeConfig` applies when `path` is undefined.
 */
export interface KubeconfigSource {
  /** A file to load; undefined: the kubectl default. */
  readonly path?: string;
  /** Where it came from, for messages. */
  readonly origin: 'argument' | 'setting' | 'env' | 'default';
  /** A description for people: the path, or the KUBECONFIG list. */
  readonly description: string;
}

export function resolveKubeconfigSource(
  explicit: string | undefined,
  setting: string,
  env: Readonly<Record<string, string | undefined>>,
  home = '~',
): KubeconfigSource {
  const expand = (p: string) => (p.startsWith('~/') ? home + p.slice(1) : p);
  if (explicit?.trim()) return { path: expand(explicit.trim()), origin: 'argument', description: expand(explicit.trim()) };
  if (setting.trim()) return { path: expand(setting.trim()), origin: 'setting', description: expand(setting.trim()) };
  const fromEnv = env.RECONCILE_LAB_KUBECONFIG?.trim();
  if (fromEnv) return { path: fromEnv, origin: 'env', description: `${fromEnv} (RECONCILE_LAB_KUBECONFIG)` };
  const kubeconfig = env.KUBECONFIG?.trim();
  return { origin: 'default', description: kubeconfig ? `KUBECONFIG=${kubeconfig}` : `${home}/.kube/config` };
}

/** True when the extension should connect by itself on start-up. */
export function shouldAutoConnect(autoConnectSetting: boolean, env: Readonly<Record<string, string | undefined>>): boolean {
  return autoConnectSetting || Boolean(env.RECONCILE_LAB_KUBECONFIG?.trim());
}
