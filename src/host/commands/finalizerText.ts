// The words Strip Finalizers… and Delete… show about finalizers (no vscode import, so they are unit-tested).
import { namespaceHoldLines, notDeletingNote, type FinalizerDiagnosis, type StuckDiagnosis } from '../../core/actions/finalizers.ts';
import { plural } from '../views/format.ts';
import { shortKey } from '../../core/k8s/keys.ts';

/**
 * One finalizer's block in the confirmation dialog: the finalizer, its probable owner and whether it runs, the
 * evidence, and what removing it does (its consequence after "if removed:", as the CLI says it). `live`: the object is
 * not being deleted, so the dialog's note says what removing it does instead (no "if removed:" line).
 */
export function finalizerLine(f: FinalizerDiagnosis, live = false): string {
  const running = f.running === 'yes' ? 'appears to be running' : f.running === 'no' ? 'appears to be DOWN' : f.running === 'paused' ? 'this session\'s loop, paused' : 'cannot tell whether it runs';
  return [
    `• ${f.finalizer}${f.location === 'spec' ? ' (spec.finalizers)' : ''}`,
    `   owner: ${f.probableOwner} (${running})`,
    ...f.evidence.map((e) => `   – ${e}`),
    ...(live ? [] : [`   if removed: ${f.consequence}`]),
  ].join('\n');
}

/** The detail line of a finalizer in the "Remove which finalizer?" picker: its probable owner and its consequence. */
export function finalizerPickDetail(f: FinalizerDiagnosis): string {
  return `${f.probableOwner}. If removed: ${f.consequence}`;
}

/**
 * The detail of Strip Finalizers…'s modal confirmation: how long the object has been Terminating (`age`, formatted
 * as the tree row does) and what holds it, or, for a live object, that nothing is stuck and its controller adds a
 * removed finalizer back (the CLI's note); then each chosen finalizer's block, the ones that stay, and the guard.
 * Each consequence is said once, in its finalizer's block.
 */
export function stripConfirmDetail(o: {
  key: string;
  diag: Pick<StuckDiagnosis, 'terminating' | 'finalizers' | 'conditions' | 'resourceVersion'>;
  chosen: readonly FinalizerDiagnosis[];
  age: string | undefined;
  dryRun: boolean;
}): string {
  const { diag } = o;
  const live = !diag.terminating;
  const names = diag.finalizers.map((f) => f.finalizer).join(', ');
  const others = diag.finalizers.filter((f) => !o.chosen.includes(f));
  const holds = namespaceHoldLines(diag);
  return [
    ...(live
      ? [`Note: ${notDeletingNote(o.key)}`, `It has ${plural(diag.finalizers.length, 'finalizer')}: ${names}.`]
      : [o.age ?? 'Terminating.', `Held by ${plural(diag.finalizers.length, 'finalizer')}: ${names}.`]),
    ...(holds.length ? ['', ...holds] : []),
    '',
    ...o.chosen.map((f) => finalizerLine(f, live)),
    ...(others.length ? ['', `Stays: ${others.map((f) => `${f.finalizer} (owner running: ${f.running})`).join(', ')}.`] : []),
    '',
    ...(live ? [] : ['A finalizer guarantees its owner\'s cleanup; an owner that is still running may fight the change.']),
    `The removal is guarded: it fails without writing anything if ${o.key} changed since it was read (resourceVersion ${diag.resourceVersion}).${o.dryRun ? ' (Dry run: nothing is stored.)' : ''}`,
  ].join('\n');
}

/** Which of an object's finalizers this session's loop owns, and the loop's state: for Delete…'s words. */
export interface LoopFinalizers {
  /** The finalizers this session's own loop owns (by name, or added by its field manager). */
  readonly owned: readonly string[];
  readonly loop: 'running' | 'paused' | 'stopped';
}

/** What the loop does with its own finalizers after a delete, by its state ("" when it owns none). */
function loopWaitNote(finalizers: readonly string[], own: LoopFinalizers | undefined): string {
  const mine = finalizers.filter((f) => own?.owned.includes(f));
  if (!own || !mine.length) return '';
  const whose = `${mine.join(', ')} ${mine.length === 1 ? 'is' : 'are'} this session's loop's`;
  if (own.loop === 'running') return ` ${whose}: the running loop removes ${mine.length === 1 ? 'it' : 'them'} after its cleanup.`;
  return ` ${whose}, and the loop is ${own.loop}: it waits until you ${own.loop === 'paused' ? 'step or resume' : 'start or step'} the loop.`;
}

/**
 * The finalizer paragraph of Delete…'s confirmation: none (removed at once), or which finalizers hold it Terminating
 * and until whom, singular or plural; a finalizer of this session's own loop when that loop is paused or stopped
 * waits for a step or resume, and the dialog says so.
 */
export function deleteConfirmFinalizers(finalizers: readonly string[], own?: LoopFinalizers): string {
  if (!finalizers.length) return 'It has no finalizers: it is removed at once.';
  const until = finalizers.length === 1 ? 'its owner removes it' : 'their owners remove them';
  return `It has ${plural(finalizers.length, 'finalizer')} (${finalizers.join(', ')}): it shows as Terminating until ${until}.${loopWaitNote(finalizers, own)} Reconcile Lab does not wait for that (like kubectl delete --wait=false); if nobody removes one, Strip Finalizers… is the escape hatch.`;
}

/** The notice after a delete left `what` Terminating: which finalizers it waits for, and for the loop's own, when. */
export function deletedTerminatingMessage(what: string, finalizers: readonly string[], own?: LoopFinalizers): string {
  return `${what} is Terminating: it waits for ${finalizers.join(', ')} to be removed by ${finalizers.length === 1 ? 'its owner' : 'their owners'}.${loopWaitNote(finalizers, own)}`;
}

/** The longest loop name the dialogs show: an exec command line with long paths and flags is cut in the middle. */
export const LOOP_NAME_MAX = 64;

/**
 * How the finalizer dialogs name this session's loop: `module:<file>` and `exec:<command line>`, each path in them
 * as `relative` gives it (workspace-relative in the editor), an exec command line cut to {@link LOOP_NAME_MAX}
 * characters around one "…"; `fallback` (the reconciler's own name) for the built-in reconciler.
 */
export function loopDisplayName(spec: { kind: string; path?: string; command?: readonly string[] }, fallback: string, relative: (path: string) => string): string {
  if (spec.kind === 'module' && spec.path) return `module:${relative(spec.path)}`;
  if (spec.kind === 'exec' && spec.command?.length) return shortKey(`exec:${spec.command.map((a) => (a.startsWith('/') ? relative(a) : a)).join(' ')}`, LOOP_NAME_MAX);
  return fallback;
}
