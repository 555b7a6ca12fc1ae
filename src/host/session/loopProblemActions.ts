// The buttons of the "built-in reconcile loop is not available" warning (no vscode import, so they are unit-tested).

/** A button of that warning; the host maps each to its command. */
export type LoopProblemAction = 'Manage Workspace Trust' | 'Open Settings' | 'Run Controller…' | 'Choose Reconciler…';

/**
 * The buttons the warning offers for why the loop is not available, first the likeliest way out:
 * - untrusted workspace: manage trust (nothing of the workspace runs before that);
 * - a wrong setting: open that setting;
 * - no resource to reconcile (a workspace of the person's own controller, without the lab's Widget CRD): run their
 *   Go controller, or choose an exec program or a JS/TS module for their own resource; both run workspace code, so
 *   only in a trusted workspace.
 */
export function loopProblemActions(p: { reason: 'untrusted' | 'noPrimary' | 'config'; setting?: string }, trusted: boolean): LoopProblemAction[] {
  if (p.reason === 'untrusted') return ['Manage Workspace Trust'];
  if (p.setting) return ['Open Settings'];
  if (p.reason === 'noPrimary' && trusted) return ['Run Controller…', 'Choose Reconciler…'];
  return [];
}
