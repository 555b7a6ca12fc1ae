import * as vscode from 'vscode';
import { clampSettings, migratedWorkQueueKind, RestrictedSettings, SETTINGS_SECTION, SettingDefaults, settingProblems, settingTypeOk, unknownSettingProblems, type SettingKey, type Settings } from './settings.ts';

/** Reads every `reconcileLab.*` setting, falling back to the declared defaults for missing or mistyped values; numbers are clamped to their declared ranges. */
export function readSettings(scope?: vscode.ConfigurationScope): Settings {
  const cfg = vscode.workspace.getConfiguration(SETTINGS_SECTION, scope);
  const out = { ...SettingDefaults } as Record<SettingKey, unknown>;
  for (const key of Object.keys(SettingDefaults) as SettingKey[]) {
    const def = SettingDefaults[key];
    const v = cfg.get<unknown>(key, def);
    out[key] = settingTypeOk(key, v) ? v : def;
  }
  // The deprecated workQueue.rateLimiter still chooses the queue until workQueue.kind is set somewhere.
  const kind = cfg.inspect('workQueue.kind');
  const explicit = [kind?.globalValue, kind?.workspaceValue, kind?.workspaceFolderValue].some((x) => x !== undefined);
  const migrated = migratedWorkQueueKind(explicit, out['workQueue.rateLimiter']);
  if (migrated) out['workQueue.kind'] = migrated;
  return clampSettings(out as unknown as Settings);
}

/**
 * The `reconcileLab.*` values VS Code hands out that {@link readSettings} replaced or clamped, and the keys set that
 * are no Reconcile Lab setting, in words.
 */
export function readSettingProblems(scope?: vscode.ConfigurationScope): string[] {
  const cfg = vscode.workspace.getConfiguration(SETTINGS_SECTION, scope);
  const raw: Partial<Record<SettingKey, unknown>> = {};
  for (const key of Object.keys(SettingDefaults) as SettingKey[]) raw[key] = cfg.get<unknown>(key);
  return [...settingProblems(raw), ...unknownSettingProblems(cfg)];
}

/**
 * Writes one setting at the workspace level when a folder is open, else for the user. A restricted setting in
 * an untrusted workspace is written for the user: VS Code would ignore its workspace value.
 */
export async function writeSetting<K extends SettingKey>(key: K, value: Settings[K]): Promise<void> {
  const ignoredInWorkspace = !vscode.workspace.isTrusted && RestrictedSettings.includes(key);
  const target = vscode.workspace.workspaceFolders?.length && !ignoredInWorkspace ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await vscode.workspace.getConfiguration(SETTINGS_SECTION).update(key, value, target);
}

/** Fires with the keys (without the section prefix) of `reconcileLab.*` settings that changed. */
export function onDidChangeSettings(listener: (keys: SettingKey[]) => void): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration((e) => {
    if (!e.affectsConfiguration(SETTINGS_SECTION)) return;
    const keys = (Object.keys(SettingDefaults) as SettingKey[]).filter((k) => e.affectsConfiguration(`${SETTINGS_SECTION}.${k}`));
    if (keys.length) listener(keys);
  });
}
