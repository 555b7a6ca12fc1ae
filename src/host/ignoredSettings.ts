/**
 * The restricted settings an untrusted workspace sets and VS Code ignores (Restricted Mode): found in the
 * workspace folder's `.vscode/settings.json` text, since VS Code's API reports only the values it applies. Pure (no
 * `vscode` import): the host reads the file, this module parses it and words the notice.
 */
import { RestrictedSettings, SETTINGS_SECTION, type SettingKey } from './settings.ts';

/**
 * Parses a VS Code settings file (JSON with comments and trailing commas). Throws on text that is still not JSON
 * after removing those; strings (which may hold `//` or `,}`) are kept as they are.
 */
export function parseJsonc(text: string): unknown {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"') {
      // A string, copied up to its closing quote (escapes included).
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (ch === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (ch === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
      out += ' ';
    } else if (ch === ',') {
      // A trailing comma: only whitespace and comments up to the closing bracket (comments are gone by then in
      // `out`, so look ahead in the raw text past whitespace and comments).
      let j = i + 1;
      for (;;) {
        while (j < text.length && /\s/.test(text[j]!)) j++;
        if (text.startsWith('//', j)) j = text.indexOf('\n', j) < 0 ? text.length : text.indexOf('\n', j);
        else if (text.startsWith('/*', j)) j = text.indexOf('*/', j + 2) < 0 ? text.length : text.indexOf('*/', j + 2) + 2;
        else break;
      }
      if (text[j] !== '}' && text[j] !== ']') out += ch;
    } else out += ch;
  }
  return JSON.parse(out) as unknown;
}

/** One restricted setting the workspace sets, with its (ignored) value. */
export interface IgnoredSetting {
  key: SettingKey;
  value: unknown;
}

/** The restricted `reconcileLab.*` settings that `settingsText` (a workspace's settings.json) sets, in table order. */
export function ignoredRestrictedSettings(settingsText: string): IgnoredSetting[] {
  let parsed: unknown;
  try {
    parsed = parseJsonc(settingsText);
  } catch {
    return [];
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return [];
  const o = parsed as Record<string, unknown>;
  return RestrictedSettings.filter((k) => o[`${SETTINGS_SECTION}.${k}`] !== undefined).map((k) => ({ key: k, value: o[`${SETTINGS_SECTION}.${k}`] }));
}

/**
 * The notice for a connection made in Restricted Mode while the workspace sets restricted settings: which ones are
 * ignored, what runs instead, and how to use them (trust the folder). Undefined when none is set.
 */
export function ignoredSettingsNotice(ignored: readonly IgnoredSetting[]): string | undefined {
  if (!ignored.length) return undefined;
  // Scalars with their value (the reconciler kind and module say most); lists by name only, to keep it short.
  const shown = ignored.map((s) => (s.value !== null && typeof s.value === 'object' ? `${SETTINGS_SECTION}.${s.key}` : `${SETTINGS_SECTION}.${s.key} = ${JSON.stringify(s.value)}`));
  const kind = ignored.find((s) => s.key === 'reconciler.kind');
  const runsCode = kind && (kind.value === 'exec' || kind.value === 'module');
  return [
    `Restricted Mode: this folder's settings ${shown.join(', ')} are ignored until you trust it`,
    runsCode
      ? ` (the ${String(kind.value)} reconciler runs code from this workspace), so the loop uses your user settings instead (the built-in lab reconciler unless they choose another).`
      : ' (they run code or choose what the loop writes to), so your user settings apply instead.',
    ' Trust the folder (Manage Workspace Trust) to use them; Reconcile Lab then offers to reconnect.',
  ].join('');
}

/** A reconnect prompt: its words, and whether it is about the workspace having been trusted. */
export interface ReconnectPrompt {
  readonly message: string;
  readonly trust: boolean;
}

/**
 * What to ask after `reconcileLab.*` settings changed (`changed`: their keys) or the workspace was granted trust
 * (`changed`: 'trust'), for the open connection; undefined: nothing to ask. A connection made in an untrusted
 * workspace that now is trusted gets the trust wording, whichever of the two events came (granting trust makes
 * VS Code apply the folder's restricted settings, a settings change of its own): the folder's settings and its exec
 * or module reconciler apply after a reconnect. The trust event alone asks only when the connection has something
 * `waitingForTrust` (folder settings it ignored, a loop refused as untrusted): else nothing would change. Otherwise
 * only a change of a setting in `connectionScoped` asks, with the generic wording. Pure: the host shows at most one
 * trust prompt per connection.
 */
export function reconnectPromptOf(o: {
  readonly changed: readonly SettingKey[] | 'trust';
  readonly connectedTrusted: boolean;
  readonly trustedNow: boolean;
  readonly waitingForTrust: boolean;
  readonly connectionScoped: readonly SettingKey[];
}): ReconnectPrompt | undefined {
  if (!o.connectedTrusted && o.trustedNow && (o.changed !== 'trust' || o.waitingForTrust)) {
    const keys = o.changed === 'trust' ? [] : o.changed.filter((k) => RestrictedSettings.includes(k));
    const named = keys.length ? ` (${keys.map((k) => `${SETTINGS_SECTION}.${k}`).join(', ')})` : '';
    return {
      trust: true,
      message: `The workspace is now trusted: this folder's Reconcile Lab settings${named} and its exec or module reconciler apply once you reconnect. Reconnect now?`,
    };
  }
  if (o.changed === 'trust' || !o.changed.some((k) => o.connectionScoped.includes(k))) return undefined;
  return { trust: false, message: 'Reconcile Lab settings changed. Reconnect to apply them?' };
}
