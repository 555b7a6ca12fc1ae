import * as vscode from 'vscode';
import { KubeConfigError } from '../core/k8s/kubeconfig.ts';
import type { Logger } from '../core/log.ts';
import { basename } from 'node:path';
import { GoProgramExitError } from '../core/bridge/runGoController.ts';
import { CHOOSE_FILE_LABEL, START_LOCAL_LABEL } from './connection/kubeconfigSource.ts';
import { CommandIds } from './ids.ts';
import * as ui from './ui.ts';

/** The message of any thrown value, without a stack. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return typeof e === 'string' ? e : JSON.stringify(e);
}

/**
 * Reports a failure to the person: the details (stack, cause) go to the
 * output channel, a one-line notification says what failed and offers to open
 * the log. Never throws; does not wait for the notification to be dismissed.
 */
export function reportError(log: Logger, what: string, e: unknown): void {
  const message = errorMessage(e);
  const cause = e instanceof Error && e.cause !== undefined ? errorMessage(e.cause) : undefined;
  log.error(`${what}: ${message}`, {
    ...(e instanceof Error && e.stack ? { stack: e.stack } : {}),
    ...(cause ? { cause } : {}),
  });
  // A kubeconfig problem names its next step as buttons (no CLI flags): choose a file, start a local control plane.
  const next = nextStepsFor(e);
  void ui.error(`${what}: ${message}`, ...next.map((n) => n.label), 'Show Log').then(
    (choice) => {
      const step = next.find((n) => n.label === choice);
      if (step?.command === 'vscode.open') {
        const { file, line, column } = step.arg as { file: string; line: number; column: number };
        const at = new vscode.Position(Math.max(0, line - 1), Math.max(0, column - 1));
        void vscode.window.showTextDocument(vscode.Uri.file(file), { selection: new vscode.Range(at, at) });
      } else if (step) void vscode.commands.executeCommand(step.command, step.arg);
      else if (choice) void vscode.commands.executeCommand(CommandIds.showOutput);
    },
    () => {},
  );
}

/**
 * A failure whose cause is likely a setting the person made: `setting` is the Settings search that shows it
 * ("reconcileLab.goController"); the notification offers **Open Settings** there ({@link nextStepsFor}).
 */
export class SettingsError extends Error {
  readonly setting: string;
  constructor(message: string, setting: string, cause?: unknown) {
    super(message, cause !== undefined ? { cause } : undefined);
    this.setting = setting;
    this.name = 'SettingsError';
  }
}

/** The label of the button that opens Settings at a {@link SettingsError}'s setting. */
export const OPEN_SETTINGS_LABEL = 'Open Settings';

/**
 * The buttons offered with an error: Open Settings for a {@link SettingsError}; the next steps for kubeconfig problems; for a Go program that did not compile,
 * its first error's place (`Go to main.go:36`, opened at that line and column); none otherwise.
 */
export function nextStepsFor(e: unknown): Array<{ label: string; command: string; arg?: unknown }> {
  if (e instanceof SettingsError) return [{ label: OPEN_SETTINGS_LABEL, command: 'workbench.action.openSettings', arg: e.setting }];
  if (e instanceof GoProgramExitError && e.details.location) {
    const { file, line, column } = e.details.location;
    return [{ label: `Go to ${basename(file)}:${line}`, command: 'vscode.open', arg: { file, line, column } }];
  }
  if (!(e instanceof KubeConfigError)) return [];
  switch (e.problem) {
    case 'noKubeconfig':
    case 'unreadable':
      return [
        { label: CHOOSE_FILE_LABEL, command: CommandIds.connect, arg: { browse: true } },
        { label: START_LOCAL_LABEL, command: CommandIds.startLocalControlPlane },
      ];
    case 'unknownContext':
    case 'noContext':
      return [{ label: 'Pick a Context\u2026', command: CommandIds.connect }];
    default:
      return [];
  }
}
