import type { Clock } from '../clock.ts';
import type { ReconcileContextFactory } from '../controller/controller.ts';
import type { EventRecorder } from '../controller/reconcile.ts';
import type { KubeClient } from '../k8s/client.ts';
import type { Logger } from '../log.ts';
import { recordingClient, writeErrorText, type WriteRecord } from '../k8s/dynamicClient.ts';
import { createReconcileContext, nullRecorder } from './context.ts';
import type { WriteRecord as JournalWrite } from '../journal/journal.ts';

/**
 * The {@link ReconcileContextFactory} a controller needs: each reconcile gets
 * a {@link recordingClient} over `client` (forced dry-run when `dryRun()` is
 * true at that moment) whose writes are appended to the controller's journal
 * (`base.journal.recordWrite`, tagged with the controller and the key being
 * reconciled) and also passed to `onWrite`; cache, log, primary and signal come
 * from the controller. `reconcilerLog`, when given, is the reconciler's own `ctx.log` instead of the controller's
 * (with the key as a field): the CLI shows what a reconciler logs at info without showing the loop's debug lines.
 */
export function journalingContextFactory(o: {
  client: KubeClient;
  dryRun?: () => boolean;
  recorder?: EventRecorder;
  clock?: Clock;
  onWrite?: (w: WriteRecord, key: string) => void;
  reconcilerLog?: Logger;
}): ReconcileContextFactory {
  return (request, base) => {
    const dryRun = o.dryRun?.() ?? false;
    const client = recordingClient(o.client, {
      dryRun,
      clock: o.clock,
      log: base.log,
      onWrite: (w) => {
        base.journal.recordWrite(journalWriteOf(w, base.controller, request.key));
        o.onWrite?.(w, request.key);
      },
    });
    const log = o.reconcilerLog ? o.reconcilerLog.child({ key: request.key }) : base.log;
    return createReconcileContext({ client, primary: base.primary, dryRun, cache: base.cache, log, recorder: o.recorder ?? nullRecorder, signal: base.signal });
  };
}

/** A client write record as a journal write entry, tagged with the controller and the key it was made for. */
export function journalWriteOf(w: WriteRecord, controller: string, key: string): JournalWrite {
  return {
    verb: w.verb,
    gvr: w.gvr,
    ...(w.namespace ? { namespace: w.namespace } : {}),
    name: w.name,
    ...(w.subresource ? { subresource: w.subresource } : {}),
    ...(w.resourceVersionBefore ? { resourceVersionBefore: w.resourceVersionBefore } : {}),
    ...(w.resourceVersionAfter ? { resourceVersionAfter: w.resourceVersionAfter } : {}),
    ...(w.deleted ? { deleted: true } : {}),
    dryRun: w.dryRun,
    ...(w.warnings?.length ? { warnings: w.warnings } : {}),
    ...(w.error ? { error: writeErrorText(w.error) } : {}),
    detail: {
      ...(w.patchType !== undefined ? { patchType: w.patchType } : {}),
      ...(w.patch !== undefined ? { patch: w.patch } : {}),
      ...(w.before !== undefined ? { before: w.before } : {}),
      ...(w.after !== undefined ? { after: w.after } : {}),
    },
    controller,
    key,
  };
}
