// The words Strip Finalizers… shows for one finalizer (no vscode import, so they are unit-tested).
import type { FinalizerDiagnosis } from '../../core/actions/finalizers.ts';

/**
 * One finalizer's block in the confirmation dialog: the finalizer, its probable owner and whether it runs, the
 * evidence, and what removing it does (its consequence after "if removed:", as the CLI says it).
 */
export function finalizerLine(f: FinalizerDiagnosis): string {
  const running = f.running === 'yes' ? 'appears to be running' : f.running === 'no' ? 'appears to be DOWN' : f.running === 'paused' ? 'this session\'s loop, paused' : 'cannot tell whether it runs';
  return [
    `• ${f.finalizer}${f.location === 'spec' ? ' (spec.finalizers)' : ''}`,
    `   owner: ${f.probableOwner} (${running})`,
    ...f.evidence.map((e) => `   – ${e}`),
    `   if removed: ${f.consequence}`,
  ].join('\n');
}

/** The detail line of a finalizer in the "Remove which finalizer?" picker: its probable owner and its consequence. */
export function finalizerPickDetail(f: FinalizerDiagnosis): string {
  return `${f.probableOwner}. If removed: ${f.consequence}`;
}
