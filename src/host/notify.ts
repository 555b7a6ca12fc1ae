import * as vscode from 'vscode';
import type { Logger } from '../core/log.ts';
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
  void ui.error(`${what}: ${message}`, 'Show Log').then(
    (choice) => {
      if (choice) void vscode.commands.executeCommand(CommandIds.showOutput);
    },
    () => {},
  );
}
