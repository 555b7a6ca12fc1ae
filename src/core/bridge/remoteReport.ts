import { writeDiff } from '../actions/objectDiff.ts';
import type { ReportAction, ReportPass } from '../actions/report.ts';
import { outcomeOfController } from '../actions/runOnce.ts';
import type { Journal, WriteEntry } from '../journal/journal.ts';
import type { ObjectKey } from '../k8s/keys.ts';
import { resourceIdFromGvrString } from '../k8s/objects.ts';
import { writeRecordOf, writeTarget } from './causes.ts';
import type { WireWrite } from './protocol.ts';
import type { RemoteController } from './remoteController.ts';
import { writeTargetText } from '../journal/writeText.ts';

/**
 * The report pass of a Go controller (`report --go`): each key's real Reconcile runs once in the program, through
 * its own queue and cache.
 *
 * - `dryRun`: {@link RemoteController.dryRun}: every write forced to DryRunAll, the planned writes with their
 *   diffs, nothing persisted.
 * - live: a forced step of the key ({@link RemoteController.step}); its writes are the journal's write entries of
 *   that controller and key appended while the step ran (the bridge sends a reconcile's writes before its end), with
 *   a diff where the bridge sent the objects before and after.
 *
 * The controller should be paused (a paused program reconciles only the keys stepped). Rejects when the program is
 * gone or refuses the key (outside its cache); a key the step finds busy is reported as an error of that key.
 */
export function remoteReportPass(controller: RemoteController, o: { dryRun: boolean; journal: Journal }): (key: ObjectKey) => Promise<ReportPass> {
  const isOwnObject = (resource: string, group: string | undefined, target: string, key: ObjectKey) =>
    resource === controller.announcement.resource && (group ?? '') === (controller.announcement.group ?? '') && target === key;
  return async (key) => {
    if (o.dryRun) {
      const r = await controller.dryRun(key);
      const actions = r.writes.map((w) => actionOfWire(w));
      const status = [...r.writes].reverse().find((w) => !w.error && w.subresource === 'status' && isOwnObject(w.resource, w.group, writeTarget(w), key));
      return {
        outcome: outcomeOfController(r.outcome),
        durationMs: r.durationMs,
        actions,
        ...(status?.after && 'status' in status.after ? { statusWritten: status.after.status } : status ? { wroteStatus: true } : {}),
      };
    }
    const since = o.journal.lastSeq;
    const step = await controller.step({ key, force: true });
    o.journal.flush();
    if (step.kind === 'notRunning') throw new Error(`the Go controller ${controller.name} stopped before ${key} was reconciled`);
    if (step.kind !== 'reconciled') {
      return { outcome: { kind: 'error', error: `not reconciled (${step.kind === 'busy' ? 'the key was being reconciled already' : step.kind})` }, durationMs: 0, actions: [] };
    }
    const writes = o.journal
      .entries({ kinds: ['write'], controller: controller.name, sinceSeq: since })
      .filter((e): e is Extract<typeof e, { kind: 'write' }> => e.kind === 'write' && e.key === key);
    const actions = writes.map((w) => actionOfEntry(w, o.journal));
    const wroteStatus = writes.some((w) => !w.error && w.subresource === 'status' && isOwnObject(w.gvr.resource, w.gvr.group, w.objectKey, key));
    return { outcome: outcomeOfController(step.outcome), durationMs: step.durationMs, actions, ...(wroteStatus ? { wroteStatus: true } : {}) };
  };
}

/** A planned write of a Go dry-run as a report action (diff current → planned, see writeDiff; none for a refused write). */
function actionOfWire(w: WireWrite): ReportAction {
  const resource = w.group ? `${w.resource}.${w.group}` : w.resource;
  const key = writeTarget(w);
  const a: ReportAction = {
    verb: writeRecordOf(w, undefined, undefined).verb, // the journal's verb (deleteAllOf is a delete)
    resource,
    key,
    dryRun: w.dryRun,
    outcome: w.error ? 'error' : 'ok',
    diff: w.error ? '' : writeDiff(`${resource}/${writeTargetText(key, w.subresource)}`, w),
  };
  return withOptionalFields(a, w);
}

/** A journaled write of a live step as a report action (diff before → after, see writeDiff; only where the bridge sent both objects). */
function actionOfEntry(w: WriteEntry & { seq: number }, journal: Journal): ReportAction {
  const resource = resourceIdFromGvrString(w.resource);
  const detail = journal.writeDetail(w.seq);
  const diff = !w.error && detail?.before !== undefined && detail.after !== undefined
    ? writeDiff(`${resource}/${writeTargetText(w.objectKey, w.subresource)}`, { verb: w.verb, dryRun: w.dryRun, before: detail.before, after: detail.after })
    : '';
  const a: ReportAction = { verb: w.verb, resource, key: w.objectKey, dryRun: w.dryRun, outcome: w.error ? 'error' : 'ok', diff };
  return withOptionalFields(a, w);
}

/** `a` with the write's optional fields that are set (subresource, error, resourceVersions, deleted, warnings). */
function withOptionalFields(a: ReportAction, w: { subresource?: string; error?: string; resourceVersionBefore?: string; resourceVersionAfter?: string; deleted?: boolean; warnings?: readonly string[] }): ReportAction {
  if (w.subresource) a.subresource = w.subresource;
  if (w.error) a.error = w.error;
  if (w.resourceVersionBefore) a.resourceVersionBefore = w.resourceVersionBefore;
  if (w.resourceVersionAfter) a.resourceVersionAfter = w.resourceVersionAfter;
  if (w.deleted) a.deleted = true;
  if (w.warnings?.length) a.warnings = [...w.warnings];
  return a;
}
