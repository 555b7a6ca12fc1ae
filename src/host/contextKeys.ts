import * as vscode from 'vscode';
import { ContextKeys } from './ids.ts';

type ContextKey = (typeof ContextKeys)[keyof typeof ContextKeys];

/**
 * Sets `when`-clause context keys, skipping writes that would not change the
 * value (setContext is a round trip to the renderer).
 */
export class ContextKeyWriter {
  private readonly values = new Map<ContextKey, unknown>();

  set(key: ContextKey, value: string | boolean): void {
    if (this.values.get(key) === value) return;
    this.values.set(key, value);
    void vscode.commands.executeCommand('setContext', key, value);
  }

  /** Records a value the caller already sent to the renderer itself (so a later set of the same value is skipped). */
  remember(key: string, value: string | boolean): void {
    this.values.set(key as ContextKey, value);
  }

  get(key: ContextKey): unknown {
    return this.values.get(key);
  }
}
