import type { Clock } from '../../core/clock.ts';
import type { Disposable } from '../../core/lifecycle.ts';

/** What {@link revealUntilSelected} drives: one tree view's reveal and the selection the renderer reports back. */
export interface RevealTarget<N> {
  /** Resolves the row to reveal now (after delivering pending refreshes); undefined when it is gone. */
  resolve(): N | undefined;
  /** Asks the renderer to reveal and select the row (VS Code's TreeView.reveal). */
  reveal(node: N): Thenable<void>;
  /** Whether the selection reported back holds the row. */
  isSelected(node: N): boolean;
  /** Selection changes reported back by the renderer (VS Code's onDidChangeSelection). */
  onDidChangeSelection(listener: () => void): Disposable;
}

/**
 * Reveals a row and waits until the renderer reports it selected, revealing it again (at most `attempts` times in all)
 * when no selection came within `confirmMs`: VS Code resolves a reveal whose row its renderer could not find (it was
 * rebuilt meanwhile) without selecting anything and without an error.
 *
 * Returns the row revealed last and whether its selection was seen; undefined when `resolve` found no row (the first
 * time, or on a later attempt: the object went away). Owns one listener and one timer per attempt, both released
 * before it returns.
 */
export async function revealUntilSelected<N>(
  target: RevealTarget<N>,
  clock: Clock,
  o: { attempts: number; confirmMs: number },
): Promise<{ node: N; selected: boolean } | undefined> {
  for (let attempt = 1; ; attempt++) {
    const node = target.resolve();
    if (node === undefined) return undefined;
    await target.reveal(node);
    const selected = await selectedWithin(target, node, clock, o.confirmMs);
    if (selected || attempt >= o.attempts) return { node, selected };
  }
}

function selectedWithin<N>(target: RevealTarget<N>, node: N, clock: Clock, ms: number): Promise<boolean> {
  if (target.isSelected(node)) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    const done = (shown: boolean) => {
      clock.clearTimeout(timer);
      sub.dispose();
      resolve(shown);
    };
    const sub = target.onDidChangeSelection(() => {
      if (target.isSelected(node)) done(true);
    });
    const timer = clock.setTimeout(() => done(false), ms);
  });
}
