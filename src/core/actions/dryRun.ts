import type { Clock } from '../clock.ts';
import type { CacheReader, Reconciler } from '../controller/reconcile.ts';
import type { KubeClient } from '../k8s/client.ts';
import { writeErrorText, type WriteRecord } from '../k8s/dynamicClient.ts';
import { splitKey, type ObjectKey } from '../k8s/keys.ts';
import { resourceIdOfGvr, type GroupVersionResource } from '../k8s/objects.ts';
import type { Logger } from '../log.ts';
import { canExplain, type Explanation } from '../reconcilers/explain.ts';
import { createReconcileContext } from './context.ts';
import { writeDiff, yamlDiff } from './objectDiff.ts';
import { runOnce, type ReconcileOutcome } from './runOnce.ts';
import { writeTargetText } from '../journal/writeText.ts';

/** One write the reconciler would make. */
export interface PlannedAction {
  verb: WriteRecord['verb'];
  subresource?: string;
  /** "configmaps" or "widgets.lab.reconcile.dev". */
  resource: string;
  key: ObjectKey;
  /** Unified diff of the object's YAML, server state → what the server answered to the dry-run write. */
  diff: string;
  resourceVersionBefore?: string;
  /** What the server accepted (would store). `error` when the dry-run write itself was rejected. */
  outcome: 'ok' | 'error';
  error?: string;
  /** The server's warnings about the write (`unknown field "spec.x"`: a field it would drop); absent when none. */
  warnings?: string[];
  record: WriteRecord;
}

export interface DryRunResult {
  key: ObjectKey;
  reconciler: string;
  /** Desired versus observed before acting, when the reconciler can explain itself. */
  explanation?: Explanation;
  actions: PlannedAction[];
  /** The status the reconciler would write to the primary (last status write), if any. */
  status?: { before: unknown; after: unknown; diff: string };
  outcome: ReconcileOutcome;
  /** Always true: every write was sent with dryRun=All. */
  dryRun: true;
}

/**
 * Said after a planned write that the server accepted without changing anything (an update or patch of an object
 * that already is as sent: its diff is empty). Such a write on every pass costs a request each time and, on the
 * object itself, may queue the key again; the robustness checks flag it.
 */
export const UNCHANGED_WRITE_NOTE = 'changes nothing (the object already is as sent: compare before writing, or this write repeats on every pass)';

/**
 * Said after a server-side apply that changed nothing: an apply is meant to send the whole intent on every pass (the
 * server merges it and stores nothing when nothing differs), so the advice to compare before writing does not apply.
 */
export const UNCHANGED_APPLY_NOTE = 'changes nothing (the object already is as applied: a server-side apply sent on every pass stores nothing then)';

/** The note after an accepted write that changed nothing, by its verb: {@link UNCHANGED_APPLY_NOTE} for an apply. */
export function unchangedWriteNote(verb: string): string {
  return verb === 'apply' ? UNCHANGED_APPLY_NOTE : UNCHANGED_WRITE_NOTE;
}

/** Whether a planned, accepted write (not a delete) changes nothing: its diff is empty. */
export function changesNothing(w: { verb: string; diff?: string; error?: unknown; outcome?: string }): boolean {
  return w.verb !== 'delete' && !w.error && w.outcome !== 'error' && !w.diff;
}

/**
 * What "no write" means after a (dry-run) reconcile, by how it ended: only a pass that ended without an error and
 * without asking to run again found the state already as desired; a failed one says nothing about the desired
 * state (it may have failed before its first write), and one that asked to run again may write later.
 */
export function noWritesText(outcome: ReconcileOutcome): string {
  switch (outcome.kind) {
    case 'done':
      return 'none (already as desired)';
    case 'error':
    case 'terminal':
      return 'none before it failed (a failed reconcile says nothing about the desired state)';
    case 'requeueAfter':
    case 'requeue':
      return 'none yet (it asked to run again: nothing to write until then)';
  }
}

/** "plural.group": {@link resourceIdOfGvr}. */
export const resourceLabel = (gvr: GroupVersionResource): string => resourceIdOfGvr(gvr);

/**
 * Turns write records into planned actions with YAML diffs. A dry-run write's diff reads `current` → `planned`; a
 * live write's (a live `report`) `before` → `after`, since it was made, not planned.
 */
export function plannedActions(writes: readonly WriteRecord[]): PlannedAction[] {
  return writes.map((w) => {
    const label = `${resourceLabel(w.gvr)}/${writeTargetText(w.key, w.subresource)}`;
    const a: PlannedAction = {
      verb: w.verb,
      resource: resourceLabel(w.gvr),
      key: w.key,
      diff: w.outcome === 'ok' ? writeDiff(label, w) : '',
      resourceVersionBefore: w.resourceVersionBefore,
      outcome: w.outcome,
      record: w,
    };
    if (w.subresource) a.subresource = w.subresource;
    if (w.error) a.error = writeErrorText(w.error);
    if (w.warnings?.length) a.warnings = [...w.warnings];
    return a;
  });
}

/**
 * Runs one reconcile of `key` with every write forced to `dryRun=All` and
 * reports what it would do: the planned writes with before/after diffs, the
 * status it would write and its requeue decision. Nothing persists (the server
 * validates and answers, but stores nothing), so resourceVersions stay as they
 * were. Note that a reconciler that reads back its own writes sees the real
 * (unchanged) state, so a dry-run shows the first pass of a multi-pass change.
 */
export async function dryRunReconcile(o: {
  client: KubeClient;
  reconciler: Reconciler;
  primary: GroupVersionResource;
  key: ObjectKey;
  cache?: CacheReader;
  log?: Logger;
  clock?: Clock;
  signal?: AbortSignal;
}): Promise<DryRunResult> {
  let explanation: Explanation | undefined;
  if (canExplain(o.reconciler)) {
    const { namespace, name } = splitKey(o.key);
    const ctx = createReconcileContext({ client: o.client, primary: o.primary, dryRun: true, cache: o.cache, log: o.log, signal: o.signal });
    try {
      explanation = await o.reconciler.explain(namespace ? { key: o.key, namespace, name } : { key: o.key, name }, ctx);
    } catch (e) {
      explanation = { notes: [`explain failed: ${(e as Error).message}`] };
    }
  }
  const run = await runOnce({ ...o, dryRun: true });
  const actions = plannedActions(run.writes);
  const statusWrite = [...run.writes].reverse().find((w) => w.subresource === 'status' && w.outcome === 'ok' && w.key === o.key);
  const result: DryRunResult = { key: o.key, reconciler: o.reconciler.name, actions, outcome: run.outcome, dryRun: true };
  if (explanation) result.explanation = explanation;
  if (statusWrite) {
    const before = statusWrite.before?.status;
    const after = statusWrite.after?.status;
    result.status = { before, after, diff: yamlDiff(writeTargetText(o.key, 'status'), before, after, { beforeName: 'current', afterName: 'planned' }) };
  }
  return result;
}
