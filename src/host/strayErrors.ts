import * as vscode from 'vscode';
import { sep } from 'node:path';
import type { Logger } from '../core/log.ts';
import { describeStrayError } from '../core/reconcilers/strayErrors.ts';
import { CommandIds } from './ids.ts';
import * as ui from './ui.ts';

/**
 * Errors that escaped every reconcile of a module reconciler in the editor: a promise the module did not await that
 * rejects later (most often a `ctx.client` call), a timer or event callback that throws. No reconcile reports them,
 * and VS Code's extension host catches them itself, so without this they reach only the extension host's own log.
 *
 * Contract: {@link watchStrayErrors} listens to the process's `unhandledRejection` and `uncaughtException` events
 * beside VS Code's own handlers (it neither replaces nor stops them) until disposed. An error is said only when a
 * loaded module claims it, and the module claims only what {@link editorStrayClaim} accepts, so another extension's
 * errors are never reported as the module's. Each distinct text is said once per window (an unawaited call fails the
 * same way for every key): the whole text with the module's frames in the output channel, its first line in a
 * warning with Show Log Output.
 */
export function watchStrayErrors(log: Logger, extensionPath: string): vscode.Disposable {
  ownCode = extensionPath.endsWith(sep) ? extensionPath : extensionPath + sep;
  const said = new Set<string>();
  const onError = (e: unknown) => {
    let text: string | undefined;
    try {
      text = describeStrayError(e);
    } catch {
      return; // never throw from a process-wide handler
    }
    if (text === undefined || said.has(text)) return;
    said.add(text);
    log.warn(text);
    const first = text.split('\n')[0]!;
    void ui.warn(first, 'Show Log Output').then(
      (choice) => (choice ? vscode.commands.executeCommand(CommandIds.showOutput) : undefined),
      () => {},
    );
  };
  process.on('unhandledRejection', onError);
  process.on('uncaughtException', onError);
  return new vscode.Disposable(() => {
    process.off('unhandledRejection', onError);
    process.off('uncaughtException', onError);
    ownCode = undefined;
  });
}

/** The extension's own directory (with a trailing separator) while {@link watchStrayErrors} listens. */
let ownCode: string | undefined;

/**
 * The editor's `claimStray` for module reconcilers: an error whose stack has the module's frames, or frames of
 * Reconcile Lab's own code (which awaits its own promises: such an error comes from a call the module started and did
 * not await). Nothing while no watcher listens.
 */
export function editorStrayClaim(e: unknown, framed: boolean): boolean {
  if (ownCode === undefined) return false;
  if (framed) return true;
  const stack = e instanceof Error ? e.stack : undefined;
  return stack !== undefined && stack.includes(ownCode);
}
