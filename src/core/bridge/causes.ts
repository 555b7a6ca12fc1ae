import type { EnqueueReason, ReconcileOutcome } from '../controller/keyState.ts';
import type { WriteRecord, WriteVerb } from '../journal/journal.ts';
import type { Cause, ReconcileEndMessage, WireWrite } from './protocol.ts';
import type { GroupVersionResource } from '../k8s/objects.ts';
import { withForbiddenHint } from '../k8s/forbidden.ts';

/**
 * Translations from the bridge's wire vocabulary to the journal / key-state
 * vocabulary the views already speak, so a Go controller shows up exactly
 * like the built-in loop. Pure functions; unknown values degrade to a
 * readable note instead of failing.
 */

type EventName = 'add' | 'update' | 'delete' | 'resync';

function eventName(e: string | undefined): EventName {
  switch (e) {
    case 'add':
    case 'update':
    case 'delete':
    case 'resync':
      return e;
    default:
      // controller-runtime's "generic" events (channel sources) read best as an update.
      return 'update';
  }
}

/** One why-queued cause from the Go side as an {@link EnqueueReason}. */
export function reasonOfCause(c: Cause): EnqueueReason {
  const at = c.at;
  const rv = { ...(c.resourceVersion !== undefined ? { resourceVersion: c.resourceVersion } : {}), ...(c.deletionRequested ? { deletionRequested: true as const } : {}) };
  if ((c.kind === 'informer' || c.kind === 'owned' || c.kind === 'watch') && !c.objectKey) {
    // An add outside any informer event (a channel source, the program itself): say so instead of an empty event.
    return { kind: 'manual', action: 'enqueue', note: c.note ?? 'added outside an informer event', at };
  }
  switch (c.kind) {
    case 'informer':
      return { kind: 'informer', event: eventName(c.event), resource: c.resource ?? '', objectKey: c.objectKey ?? '', ...rv, ...(c.initial ? { initial: true } : {}), at };
    case 'owned':
      return { kind: 'owned', event: eventName(c.event), resource: c.resource ?? '', child: c.objectKey ?? '', ...(c.objectKind ? { childKind: c.objectKind } : {}), ...rv, ...(c.initial ? { initial: true } : {}), at };
    case 'watch':
      return { kind: 'watch', event: eventName(c.event), resource: c.resource ?? '', objectKey: c.objectKey ?? '', ...(c.objectKind ? { objectKind: c.objectKind } : {}), ...rv, ...(c.initial ? { initial: true } : {}), at };
    // A wait's cause is sent when the wait begins; as a reason its `at` is when it is due (as the built-in loop's).
    case 'requeueAfter':
      return { kind: 'requeueAfter', afterMs: c.afterMs ?? 0, ...(c.note !== undefined ? { reason: c.note } : {}), at: at + (c.afterMs ?? 0) };
    case 'backoff':
      return { kind: 'backoff', attempt: c.failures ?? 0, delayMs: c.delayMs ?? 0, ...(c.note !== undefined ? { error: c.note } : {}), at: at + (c.delayMs ?? 0) };
    case 'result':
      return { kind: 'requeueAfter', afterMs: c.afterMs ?? 0, reason: c.note ?? 'requeue requested by the Reconcile result', at: at + (c.afterMs ?? 0) };
    case 'manual': {
      const a = c.action;
      const action = a === 'enqueue' || a === 'reconcileNow' || a === 'step' || a === 'resetBackoff' ? a : 'enqueue';
      const note = [a !== action && a ? a : undefined, c.note].filter(Boolean).join(': ');
      return { kind: 'manual', action, ...(note ? { note } : {}), at };
    }
    default:
      return { kind: 'manual', action: 'enqueue', note: `cause "${c.kind}"${c.note ? `: ${c.note}` : ''}`, at };
  }
}

/** How a reconcile ended, from its reconcileEnd message (the Go controller's result switch applies the queue action). */
export function outcomeOfEnd(m: ReconcileEndMessage): ReconcileOutcome {
  if (m.panic !== undefined) return { kind: 'error', message: `panic: ${m.panic}` };
  if (m.error !== undefined) {
    // controller-runtime drops the Result when Reconcile returns an error (it only logs a warning): say what was lost.
    const after = m.result?.requeueAfterMs ?? 0;
    const lost = after > 0 ? `RequeueAfter ${after < 1000 ? `${after} ms` : `${+(after / 1000).toFixed(1)} s`}` : m.result?.requeue ? 'Requeue: true' : undefined;
    const ignored = lost !== undefined ? { ignored: lost } : {};
    // reconcile.TerminalError's text starts "terminal error: ": the outcome's kind says it already.
    // An RBAC refusal names the missing right and the can-i line, as the built-in loop's errors do.
    const error = withForbiddenHint(m.error);
    return m.terminal ? { kind: 'terminal', message: error.replace(/^terminal error: /, ''), ...ignored } : { kind: 'error', message: error, ...ignored };
  }
  const after = m.result?.requeueAfterMs;
  if (after !== undefined && after > 0) return { kind: 'requeueAfter', afterMs: after };
  if (m.result?.requeue) return { kind: 'requeueAfter', afterMs: 0, reason: 'Requeue: true (rate-limited)' };
  return { kind: 'success' };
}

/** The object a reported write names: its name, or for a deleteAllOf `*` with its selectors (`*[app=web]`). */
export function writeName(w: WireWrite): string {
  return w.name || (w.verb === 'deleteAllOf' ? `*${w.selector ? `[${w.selector}]` : ''}` : '');
}

/** `namespace/name` of a reported write ({@link writeName}; the name alone when it has no namespace). */
export function writeTarget(w: WireWrite): string {
  return `${w.namespace ? `${w.namespace}/` : ''}${writeName(w)}`;
}

/** A write reported by the bridge client as a journal write record. */
export function writeRecordOf(w: WireWrite, controller: string | undefined, key: string | undefined): WriteRecord {
  const verb: WriteVerb = w.verb === 'deleteAllOf' ? 'delete' : (['create', 'update', 'patch', 'apply', 'delete'] as const).find((v) => v === w.verb) ?? 'update';
  // What the bridge sent of the write itself (the patch body; in a dry run, the objects before and after): the Event
  // Log's detail pane shows it. A body is JSON (shown indented) unless the bridge cut it short (shown as sent).
  let patch: unknown = w.patch;
  if (typeof w.patch === 'string') {
    try {
      patch = JSON.parse(w.patch);
    } catch {
      patch = w.patch;
    }
  }
  const detail = {
    ...(w.patchType !== undefined ? { patchType: w.patchType } : {}),
    ...(patch !== undefined && patch !== '' ? { patch } : {}),
    ...(w.before !== undefined ? { before: w.before } : {}),
    ...(w.after !== undefined ? { after: w.after } : {}),
  };
  return {
    ...('patch' in detail || 'before' in detail || 'after' in detail ? { detail } : {}),
    verb,
    gvr: { group: w.group, version: w.version, resource: w.resource },
    ...(w.namespace ? { namespace: w.namespace } : {}),
    name: writeName(w),
    ...(w.subresource ? { subresource: w.subresource } : {}),
    ...(w.resourceVersionBefore !== undefined ? { resourceVersionBefore: w.resourceVersionBefore } : {}),
    ...(w.resourceVersionAfter !== undefined ? { resourceVersionAfter: w.resourceVersionAfter } : {}),
    ...(w.warnings?.length ? { warnings: [...w.warnings] } : {}),
    ...(w.deleted ? { deleted: true } : {}),
    dryRun: w.dryRun,
    ...(w.error !== undefined ? { error: withForbiddenHint(w.error) } : {}),
    ...(controller !== undefined ? { controller } : {}),
    ...(key !== undefined ? { key } : {}),
  };
}

/** plural.version.group ("plural.version" for the core group): the bridge protocol's form of a resource (Cause.resource). */
export function bridgeResourceName(r: GroupVersionResource): string {
  return `${r.resource}.${r.version}${r.group ? `.${r.group}` : ''}`;
}
