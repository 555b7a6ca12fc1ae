import { KubeConfigError } from '../../core/k8s/kubeconfig.ts';

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
  /** Where it came from, for messages; `remembered`: a file the person chose earlier (kept across reloads). */
  readonly origin: 'argument' | 'setting' | 'env' | 'remembered' | 'default';
  /** A description for people: the path, or the KUBECONFIG list. */
  readonly description: string;
}

/**
 * Precedence: the explicit argument, the setting, RECONCILE_LAB_KUBECONFIG (a launch that names its cluster, such
 * as `npm run lab`), the file chosen earlier with "Choose a Kubeconfig File…" (`remembered`), the kubectl default.
 */
export function resolveKubeconfigSource(
  explicit: string | undefined,
  setting: string,
  env: Readonly<Record<string, string | undefined>>,
  home = '~',
  remembered?: string,
): KubeconfigSource {
  const expand = (p: string) => (p.startsWith('~/') ? home + p.slice(1) : p);
  if (explicit?.trim()) return { path: expand(explicit.trim()), origin: 'argument', description: expand(explicit.trim()) };
  if (setting.trim()) return { path: expand(setting.trim()), origin: 'setting', description: expand(setting.trim()) };
  const fromEnv = env.RECONCILE_LAB_KUBECONFIG?.trim();
  if (fromEnv) return { path: fromEnv, origin: 'env', description: `${fromEnv} (RECONCILE_LAB_KUBECONFIG)` };
  if (remembered?.trim()) return { path: remembered.trim(), origin: 'remembered', description: `${remembered.trim()} (chosen earlier)` };
  const kubeconfig = env.KUBECONFIG?.trim();
  return { origin: 'default', description: kubeconfig ? `KUBECONFIG=${kubeconfig}` : `${home}/.kube/config` };
}

/** True when the extension should connect by itself on start-up. */
export function shouldAutoConnect(autoConnectSetting: boolean, env: Readonly<Record<string, string | undefined>>): boolean {
  return autoConnectSetting || Boolean(env.RECONCILE_LAB_KUBECONFIG?.trim());
}

/**
 * Whether to bring the Reconcile Lab views to the front on start-up: `npm run lab` sets
 * RECONCILE_LAB_SHOW_VIEWS=1 so the window opens on them rather than on the Explorer.
 */
export function shouldShowViewsOnStart(env: Readonly<Record<string, string | undefined>>): boolean {
  return env.RECONCILE_LAB_SHOW_VIEWS === '1';
}

/** An entry of the Connect picker (pure data; the command turns it into a QuickPickItem). */
export interface ConnectChoice {
  readonly label: string;
  /** A codicon id shown before the label (labels themselves are plain text). */
  readonly icon?: string;
  readonly description?: string;
  readonly detail?: string;
  /** A context name, or one of the actions. */
  readonly value: string;
  readonly separator?: true;
}

/** The setting that names the kubeconfig file (as people see it in Settings). */
export const KUBECONFIG_SETTING = 'reconcileLab.connection.kubeconfig';

export const CONNECT_LOCAL = '\u0000local';
export const CONNECT_BROWSE = '\u0000browse';
export const CHOOSE_FILE_LABEL = 'Choose a Kubeconfig File\u2026';
export const START_LOCAL_LABEL = 'Start Local Control Plane';

/**
 * What the Connect picker offers: the real contexts of the kubeconfig (current first), then the two actions. With
 * no context at all, `empty` is set and `message` says so: the command then shows the message with the two
 * actions as buttons instead of a picker with nothing to pick.
 */
export function connectChoices(
  contexts: ReadonlyArray<{ name: string; current: boolean; server?: string; user: string; namespace?: string; execCommand?: string }>,
  source: KubeconfigSource,
  /** The file of `source.path` does not exist (the caller checked). */
  missing = false,
): { title: string; items: ConnectChoice[]; empty: boolean; message: string } {
  const sorted = [...contexts].sort((a, b) => Number(b.current) - Number(a.current) || a.name.localeCompare(b.name));
  const items: ConnectChoice[] = sorted.map((c) => ({
    label: c.name,
    icon: c.current ? 'check' : 'plug',
    description: [c.current ? 'current' : undefined, c.server].filter(Boolean).join(' \u00b7 '),
    detail: `user ${c.user}${c.execCommand ? ` (exec plugin: ${c.execCommand})` : ''}${c.namespace ? ` \u00b7 namespace ${c.namespace}` : ''}`,
    value: c.name,
  }));
  if (items.length) items.push({ label: '', value: '', separator: true });
  items.push({ label: START_LOCAL_LABEL, icon: 'server-environment', description: 'etcd + kube-apiserver on this machine', value: CONNECT_LOCAL });
  items.push({ label: CHOOSE_FILE_LABEL, icon: 'folder-opened', value: CONNECT_BROWSE });
  const where =
    source.origin === 'default'
      ? source.description.startsWith('KUBECONFIG=') ? `${source.description} (none of its files exist)` : `${source.description} does not exist`
      : `${source.description}${source.origin === 'setting' ? ` (the setting ${KUBECONFIG_SETTING})` : ''} ${missing ? 'does not exist' : 'has no contexts'}`;
  const next = source.origin === 'setting' ? `Choose a kubeconfig file, change or clear the setting ${KUBECONFIG_SETTING}, or start a local control plane.` : 'Choose a kubeconfig file, or start a local control plane.';
  return {
    title: `Connect: contexts of ${source.description}`,
    items,
    empty: sorted.length === 0,
    message: `No kubeconfig contexts found: ${where}. ${next}`,
  };
}

/** The setting that names the context to connect to (empty: the kubeconfig's current-context). */
export const CONTEXT_SETTING = 'reconcileLab.connection.context';

/**
 * A kubeconfig error as the extension says it: the core message (which names no next step) plus the settings that
 * matter here: the file came from {@link KUBECONFIG_SETTING}, or a context can be kept in {@link CONTEXT_SETTING}.
 * Other errors are returned unchanged; the problem (which picks the notification's buttons) is kept.
 */
export function withSettingHint(e: unknown, source: KubeconfigSource): unknown {
  if (!(e instanceof KubeConfigError)) return e;
  const hints: string[] = [];
  if (source.origin === 'setting' && (e.problem === 'noKubeconfig' || e.problem === 'unreadable')) hints.push(`The file is the setting ${KUBECONFIG_SETTING}: change or clear it.`);
  if (e.problem === 'noContext') hints.push(`Connect lists them; the setting ${CONTEXT_SETTING} keeps the one to use.`);
  if (hints.length === 0) return e;
  return new KubeConfigError(`${e.message} ${hints.join(' ')}`, { ...(e.problem ? { problem: e.problem } : {}) });
}
