import type { Disposable } from '../lifecycle.ts';

/**
 * Errors that escaped every reconcile: a promise the reconciler did not await that rejects later, a timer or event
 * callback that throws. No reconcile can report them (the one that started them may have ended long before), and in
 * a process that hosts user code (the CLI loading a module reconciler) Node would end the whole process with a
 * stack trace of Reconcile Lab's bundle. A module reconciler claims them while it is loaded ({@link claimStrayErrors});
 * the process's handler ({@link describeStrayError}) then says whose they are and keeps the loop running.
 *
 * Contract: a claimer returns the text to show for `e` (naming the module and, when found, its frames), or undefined
 * when `e` cannot be its own. Claimers are asked in registration order; the first answer wins.
 */
export type StrayErrorClaimer = (e: unknown) => string | undefined;

const claimers = new Set<StrayErrorClaimer>();

/** Registers `claimer` until the returned disposable is disposed. */
export function claimStrayErrors(claimer: StrayErrorClaimer): Disposable {
  claimers.add(claimer);
  return { dispose: () => void claimers.delete(claimer) };
}

/** What to say about an error that escaped every reconcile, when a loaded reconciler claims it; undefined otherwise. */
export function describeStrayError(e: unknown): string | undefined {
  for (const c of claimers) {
    const text = c(e);
    if (text !== undefined) return text;
  }
  return undefined;
}

/** Whether any reconciler that runs in this process's own code (a module) is loaded: a process.exit may be its. */
export function hostsUserCode(): boolean {
  return claimers.size > 0;
}
