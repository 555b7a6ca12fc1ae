import { ContextKeys } from '../ids.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import { isStateFilter, STATE_FILTER_CHOICES, stateFilterLabel, type ObjectStateFilter } from '../views/stateFilter.ts';
import * as ui from '../ui.ts';
import { fail, stringArrayArg, type CommandResult } from './args.ts';

/** Applies a filter to the Resources view: the tree, the view's description and the context key. */
function applyFilter(lab: ReconcileLab, states: readonly ObjectStateFilter[]): CommandResult<{ states: ObjectStateFilter[]; label: string }> {
  lab.resourcesTree.setFilter(states);
  lab.contextKeys.set(ContextKeys.resourcesFiltered, states.length > 0);
  lab.renderStatus();
  return { ok: true, states: [...states], label: stateFilterLabel(states) };
}

/**
 * Filter Resources by State…: shows only objects in any of the chosen states
 * (Terminating, failing/backoff, not ready, spec not observed, warning,
 * converged). `{ states: [...] }` sets them without asking (`[]` clears).
 */
export async function filterResources(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ states: ObjectStateFilter[]; label: string }>> {
  const given = stringArrayArg(arg, 'states');
  if (given) {
    const bad = given.filter((s) => !isStateFilter(s));
    if (bad.length) return fail('invalidArgument', `Unknown state ${bad.map((b) => JSON.stringify(b)).join(', ')}; expected ${STATE_FILTER_CHOICES.map((c) => c.state).join(', ')}.`);
    return applyFilter(lab, given as ObjectStateFilter[]);
  }
  if (arg !== undefined) return fail('invalidArgument', 'Expected { states: [...] } or nothing.');
  const current = lab.resourcesTree.filter;
  const picked = await ui.pick(
    STATE_FILTER_CHOICES.map((c) => ({ label: c.label, detail: c.detail, picked: current.has(c.state), state: c.state })),
    { canPickMany: true, title: 'Show only objects that are… (none: show all)', placeHolder: 'Objects in any of the chosen states are shown' },
  );
  if (!picked) return fail('cancelled', 'No filter chosen.');
  return applyFilter(lab, picked.map((p) => p.state));
}

/** Clear Filter: every object again. */
export function clearResourcesFilter(lab: ReconcileLab): CommandResult<{ states: ObjectStateFilter[]; label: string }> {
  return applyFilter(lab, []);
}
