// BUGGY on purpose (caught by the "history independence" check, with its metadata-only checkTransitions): a Widget
// is paused with the annotation `lab.reconcile.dev/paused: "true"`, and its child ConfigMap `<widget>-sign` says
// "paused" or "active". The reconcile itself is right, but the controller filters the Widget's events with the
// `generation-changed` predicate: an annotation change makes no new generation, so it never queues the key, and
// the sign keeps its old state until some spec change or a restart comes along.
//   reconcile-lab check <ns>/<widget> --check historyIndependence --reconciler module:samples/buggy/ignores-annotation-changes.ts
// Fix: let the changes the reconcile reads through too (predicate.Or with an annotation-changed predicate), or keep
// the setting in spec.
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { ensureChild, getOrUndefined } from './common.ts';

export const PAUSED = 'lab.reconcile.dev/paused';

export const predicates = ['generation-changed'];
// The change that matters to this controller is an annotation (metadata only).
export const checkTransitions = [{ metadata: { annotations: { [PAUSED]: 'true' } } }];

export async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
  const widget = await getOrUndefined(ctx, ctx.primary, request.namespace, request.name);
  if (!widget || widget.metadata.deletionTimestamp) return {};
  const state = widget.metadata.annotations?.[PAUSED] === 'true' ? 'paused' : 'active';
  await ensureChild(ctx, widget, `${request.name}-sign`, { state });
  return {};
}
