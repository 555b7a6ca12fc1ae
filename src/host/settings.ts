import { closestNames } from '../core/text/closest.ts';

/**
 * The `reconcileLab.*` settings: keys, types and defaults. This module
 * imports no `vscode` (only a text helper of core); src/host/config.ts reads the values through VS Code, and
 * scripts/checkManifest.mjs verifies that package.json declares exactly these
 * keys with these defaults.
 */

/** The work queue of the loop: controller-runtime's priority queue (default) or client-go's rate-limited queue. */
export type WorkQueueKindSetting = 'priority' | 'client-go';
/** The deprecated `workQueue.rateLimiter` values ('' = not set). */
export type LegacyRateLimiterSetting = '' | 'client-go' | 'controller-runtime';
export type ReconcilerKind = 'lab' | 'exec' | 'module';

export interface Settings {
  /** A kubeconfig file; empty: env RECONCILE_LAB_KUBECONFIG, then KUBECONFIG (several files), then ~/.kube/config. */
  'connection.kubeconfig': string;
  /** The context; empty: the kubeconfig's current-context. */
  'connection.context': string;
  /** Connect on start-up with connection.kubeconfig and connection.context (also when RECONCILE_LAB_KUBECONFIG is set). */
  'connection.autoConnect': boolean;
  /** Resources to watch as "plural.group" ("configmaps" for the core group); empty: every custom resource. */
  resources: string[];
  /** Namespaces to watch; empty: all namespaces. */
  namespaces: string[];
  'informer.resyncPeriodSeconds': number;
  'informer.dropManagedFields': boolean;
  /** Stream the initial list (WatchList) instead of LIST; default on as client-go 1.35+. */
  'informer.watchList': boolean;
  'workQueue.kind': WorkQueueKindSetting;
  /** Deprecated (replaced by `workQueue.kind`); honoured only while `workQueue.kind` is not set anywhere. */
  'workQueue.rateLimiter': LegacyRateLimiterSetting;
  'workQueue.maxConcurrentReconciles': number;
  'workQueue.reconcileTimeoutSeconds': number;
  'reconciler.kind': ReconcilerKind;
  /** The primary resource the loop reconciles ("plural.group"); empty: Widgets for lab, else the only watched custom resource (several: no loop). */
  'reconciler.resource': string;
  'reconciler.command': string;
  /** exec: kill the program after this many seconds (0: no limit). */
  'reconciler.execTimeoutSeconds': number;
  'reconciler.modulePath': string;
  /** Predicate specs for the reconciled resource's events (see core/controller/predicateSpec.ts); all must pass. */
  'reconciler.predicates': string[];
  'eventLog.size': number;
  /** Run Controller: the command line; empty: `go run ./cmd` (kubebuilder layout) or `go run .`. */
  'goController.command': string;
  /** Run Controller: arguments appended to the command. */
  'goController.args': string[];
  /** Run Controller: extra environment variables. */
  'goController.env': Record<string, string>;
  /** Run Controller: working directory (relative to the workspace folder); empty: the workspace folder. */
  'goController.cwd': string;
  /** F5 without the Go extension: the `dlv` to debug with; empty: one on PATH / GOBIN / GOPATH, else installed on request. */
  'goController.delvePath': string;
  /**
   * Robustness checks: JSON merge patches of the checked object, applied in order to its scratch copies (never to the
   * object itself), for every reconciler, a Go controller's included; a module's `checkTransitions` export wins.
   */
  'checks.transitions': Array<Record<string, unknown>>;
  /**
   * Robustness checks: Secrets and ConfigMaps of the checked object's namespace (`secret/db-creds`, `configmap/x`)
   * to copy into every scratch namespace besides those its spec refers to in a recognised way (CLI `--copy`).
   */
  'checks.copy': string[];
}

export type SettingKey = keyof Settings;

/** The configuration section: every key above is `reconcileLab.<key>`. */
export const SETTINGS_SECTION = 'reconcileLab';

/** Defaults, mirrored by package.json (checked by scripts/checkManifest.mjs). */
export const SettingDefaults: Settings = {
  'connection.kubeconfig': '',
  'connection.context': '',
  'connection.autoConnect': false,
  resources: [],
  namespaces: [],
  'informer.resyncPeriodSeconds': 0,
  'informer.dropManagedFields': false,
  'informer.watchList': true,
  'workQueue.kind': 'priority',
  'workQueue.rateLimiter': '',
  'workQueue.maxConcurrentReconciles': 1,
  'workQueue.reconcileTimeoutSeconds': 0,
  'reconciler.kind': 'lab',
  'reconciler.resource': '',
  'reconciler.command': '',
  'reconciler.execTimeoutSeconds': 30,
  'reconciler.modulePath': '',
  'reconciler.predicates': [],
  'eventLog.size': 10000,
  'goController.command': '',
  'goController.args': [],
  'goController.env': {},
  'goController.cwd': '',
  'goController.delvePath': '',
  'checks.transitions': [],
  'checks.copy': [],
};

/** Settings whose value is a list of JSON objects (any other list setting is a list of strings). */
const ObjectListSettings: readonly SettingKey[] = ['checks.transitions'];

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether `v` has the type setting `key` takes (else its default applies: {@link settingProblems} says so). */
export function settingTypeOk(key: SettingKey, v: unknown): boolean {
  const def = SettingDefaults[key];
  if (ObjectListSettings.includes(key)) return Array.isArray(v) && v.every(isPlainObject);
  if (Array.isArray(def)) return Array.isArray(v) && v.every((x) => typeof x === 'string');
  return typeof v === typeof def && (typeof v !== 'object' || isPlainObject(v));
}

/** The declared range of a numeric setting (package.json `minimum` / `maximum`, `type: integer`). */
export interface SettingRange {
  readonly min: number;
  readonly max: number;
  readonly integer?: boolean;
}

type NumericKey = { [K in SettingKey]: Settings[K] extends number ? K : never }[SettingKey];

/** Ranges of every numeric setting, mirrored by package.json (checked by scripts/checkManifest.mjs). */
export const SettingRanges: Record<NumericKey, SettingRange> = {
  'informer.resyncPeriodSeconds': { min: 0, max: 86400 },
  'workQueue.maxConcurrentReconciles': { min: 1, max: 64, integer: true },
  'workQueue.reconcileTimeoutSeconds': { min: 0, max: 86400 },
  'reconciler.execTimeoutSeconds': { min: 0, max: 86400 },
  'eventLog.size': { min: 100, max: 200000, integer: true },
};

/**
 * `settings` with every numeric value clamped to its declared range (integers rounded down; NaN or a
 * non-number: the default). VS Code only warns about an out-of-range value in settings.json, so a workspace
 * asking for 50 million workers would otherwise get them.
 */
export function clampSettings(settings: Settings): Settings {
  const out = { ...settings } as Record<SettingKey, unknown>;
  for (const [key, r] of Object.entries(SettingRanges) as Array<[NumericKey, SettingRange]>) {
    const v = out[key];
    if (typeof v !== 'number' || Number.isNaN(v)) {
      out[key] = SettingDefaults[key];
      continue;
    }
    const n = Math.min(r.max, Math.max(r.min, v));
    out[key] = r.integer ? Math.floor(n) : n;
  }
  return out as unknown as Settings;
}

/** Values an enum-like string setting accepts (others fall back as said in {@link settingProblems}). */
const SettingChoices: Partial<Record<SettingKey, { values: readonly string[]; fallback: string }>> = {
  'workQueue.kind': { values: ['priority', 'client-go'], fallback: 'the priority queue applies' },
};

/**
 * What {@link clampSettings} and the readers change silently, in words, from the values as VS Code hands them out
 * (`raw`: key → value, missing keys skipped): a value of the wrong type (the default applies), a number outside its
 * range or not whole (clamped / rounded down), an unknown choice. VS Code only underlines these in settings.json,
 * so without a message a typo looks like a setting that does nothing.
 */
export function settingProblems(raw: Partial<Record<SettingKey, unknown>>): string[] {
  const out: string[] = [];
  const shown = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v));
  for (const key of Object.keys(SettingDefaults) as SettingKey[]) {
    if (!(key in raw) || raw[key] === undefined) continue;
    const v = raw[key];
    const def = SettingDefaults[key];
    const name = `${SETTINGS_SECTION}.${key}`;
    if (!settingTypeOk(key, v)) {
      const want = ObjectListSettings.includes(key) ? 'a list of JSON objects' : Array.isArray(def) ? 'a list of strings' : typeof def === 'object' ? 'an object' : `a ${typeof def}`;
      out.push(`${name} is ${shown(v)}, not ${want}: the default ${shown(def)} applies`);
      continue;
    }
    const range = (SettingRanges as Partial<Record<SettingKey, SettingRange>>)[key];
    if (range && typeof v === 'number') {
      const clamped = clampSettings({ ...SettingDefaults, [key]: v } as Settings)[key];
      if (Number.isNaN(v)) out.push(`${name} is not a number: the default ${shown(def)} applies`);
      else if (v < range.min || v > range.max) out.push(`${name} is ${v}, outside ${range.min}–${range.max}: ${shown(clamped)} applies`);
      else if (clamped !== v) out.push(`${name} is ${v}, not a whole number: ${shown(clamped)} applies`);
    }
    const choice = SettingChoices[key];
    if (choice && typeof v === 'string' && !choice.values.includes(v)) out.push(`${name} is ${shown(v)}, not one of ${choice.values.map((x) => `"${x}"`).join(', ')}: ${choice.fallback}`);
  }
  return out;
}

/**
 * The `reconcileLab.*` keys set in settings that are no Reconcile Lab setting (a misspelt `reconciler.predicate`, a
 * `workqueue.kind` in the wrong case), in words, each with the setting it most likely meant. VS Code only dims such a
 * key in settings.json and hands out the setting's default, so without a message the typo looks like a setting that
 * does nothing. `section`: the section's values as VS Code merges them, nested by the dots of their keys
 * (`{ reconciler: { predicate: [...] } }`); functions (the configuration object's methods) are skipped, and so is
 * everything inside a setting's own value (`goController.env`'s variables).
 */
export function unknownSettingProblems(section: unknown): string[] {
  const known = Object.keys(SettingDefaults);
  const out: string[] = [];
  const walk = (node: Record<string, unknown>, prefix: string) => {
    for (const [name, value] of Object.entries(node)) {
      if (typeof value === 'function' || value === undefined) continue;
      const key = prefix ? `${prefix}.${name}` : name;
      if (known.includes(key)) continue;
      if (isPlainObject(value) && known.some((k) => k.toLowerCase().startsWith(`${key.toLowerCase()}.`))) {
        walk(value, key);
        continue;
      }
      const near = closestNames(key, known);
      out.push(`${SETTINGS_SECTION}.${key} is not a Reconcile Lab setting${near.length ? ` (did you mean ${near.map((k) => `${SETTINGS_SECTION}.${k}`).join(' or ')}?)` : ''}: it does nothing`);
    }
  };
  if (isPlainObject(section)) walk(section, '');
  return out;
}

/** Settings that change what a connection watches or how the loop runs: changing one offers a reconnect. */
export const ConnectionScopedSettings: readonly SettingKey[] = [
  'connection.kubeconfig',
  'connection.context',
  'resources',
  'namespaces',
  'informer.resyncPeriodSeconds',
  'informer.dropManagedFields',
  'informer.watchList',
  'workQueue.kind',
  'workQueue.rateLimiter',
  'workQueue.maxConcurrentReconciles',
  'workQueue.reconcileTimeoutSeconds',
  'reconciler.kind',
  'reconciler.resource',
  'reconciler.command',
  'reconciler.execTimeoutSeconds',
  'reconciler.modulePath',
  'reconciler.predicates',
];

/**
 * Restricted settings (package.json `capabilities.untrustedWorkspaces.restrictedConfigurations`, checked by
 * scripts/checkManifest.mjs): VS Code ignores their workspace values until the workspace is trusted. The
 * reconciler's kind, command and module run code; a kubeconfig / context can run exec credential plugins;
 * resources, namespaces and the reconciled resource decide which objects the loop writes to.
 */
export const RestrictedSettings: readonly SettingKey[] = [
  'reconciler.command',
  'reconciler.modulePath',
  'reconciler.kind',
  'connection.kubeconfig',
  'connection.context',
  'connection.autoConnect',
  'resources',
  'namespaces',
  'reconciler.resource',
  'goController.command',
  'goController.args',
  'goController.env',
  'goController.cwd',
  'goController.delvePath',
];

/** Env var with a kubeconfig path that makes the extension connect on start-up (tests, `npm run lab`). */
export const ENV_KUBECONFIG = 'RECONCILE_LAB_KUBECONFIG';

/**
 * The work queue for the deprecated `workQueue.rateLimiter` when `workQueue.kind` is not set in any scope:
 * `client-go` (its old default, a limiter on client-go's queue) → the `client-go` queue; `controller-runtime` (the
 * priority queue's limiter) → the `priority` queue. Undefined: nothing to migrate (use `workQueue.kind`).
 */
export function migratedWorkQueueKind(kindSetExplicitly: boolean, legacy: unknown): WorkQueueKindSetting | undefined {
  if (kindSetExplicitly) return undefined;
  if (legacy === 'client-go') return 'client-go';
  if (legacy === 'controller-runtime') return 'priority';
  return undefined;
}
