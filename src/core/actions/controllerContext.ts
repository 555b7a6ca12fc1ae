import type { Clock } from '../clock.ts';
import type { ReconcileContextFactory } from '../controller/controller.ts';
import type { EventRecorder } from '../controller/reconcile.ts';
import type { KubeClient } from '../k8s/client.ts';
import { recordingClient, type WriteRecord } from '../k8s/dynamicClient.ts';
import { createReconcileContext, nullRecorder } from './context.ts';

/**
 * The {@link ReconcileContextFactory} a controller needs: each reconcile gets
 * a {@link recordingClient} over `client` (forced dry-run when `dryRun()` is
 * true at that moment) whose writes are appended to the controller's journal
 * (`base.journal.recordWrite`, tagged with the controller and the key being
 * reconciled) and also passed to `onWrite`; cache, log, primary and signal come
 * from the controller.
 */
export function journalingContextFactory(o: {
  client: KubeClient;
  dryRun?: () => boolean;
  recorder?: EventRecorder;
  clock?: Clock;
  onWrite?: (w: WriteRecord, key: string) => void;
}): ReconcileContextFactory {
  return (request, base) => {
    const dryRun = o.dryRun?.() ?? false;
    const client = recordingClient(o.client, {
      dryRun,
      clock: o.clock,
      log: base.log,
      onWrite: (w) => {
        const entry: Parameters<typeof base.journal.recordWrite>[0] = {
          verb: w.verb,
          gvr: w.gvr,
          name: w.name,
          dryRun: w.dryRun,
          controller: base.controller,
          key: request.key,
        };
        if (w.namespace) entry.namespace = w.namespace;
        if (w.subresource) entry.subresource = w.subresource;
        if (w.resourceVersionBefore) entry.resourceVersionBefore = w.resourceVersionBefore;
        if (w.resourceVersionAfter) entry.resourceVersionAfter = w.resourceVersionAfter;
        if (w.error) entry.error = `${w.error.code} ${w.error.reason}: ${w.error.message}`;
        base.journal.recordWrite(entry);
        o.onWrite?.(w, request.key);
      },
    });
    return createReconcileContext({ client, primary: base.primary, dryRun, cache: base.cache, log: base.log, recorder: o.recorder ?? nullRecorder, signal: base.signal });
  };
}
