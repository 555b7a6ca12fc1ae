/**
 * How objects, queue keys and enqueue reasons read in the tree views. Pure
 * (no `vscode`): it formats core state for people and decides icons; the
 * state itself (phases, counters, conditions) comes from core unchanged.
 * Unit-tested in test/unit/host-free/views/presentation.test.ts.
 */
import { isScratchObject } from '../../core/checks/scratch.ts';
import type { EnqueueReason, KeyState, ReconcileOutcome } from '../../core/controller/keyState.ts';
import type { ObjectKey } from '../../core/k8s/keys.ts';
import { conditionOf, observedGenerationOf, type Condition, type KubeObject } from '../../core/k8s/objects.ts';
import { ageOf, formatDuration, plural } from './format.ts';
import type { KeyConvergence } from '../../core/checks/convergence.ts';

/** A codicon id and an optional theme colour id. */
export interface IconSpec {
  readonly id: string;
  readonly color?: string;
}

/** One "label: value" line of a tooltip; `value` is cluster data (render as text, never as markup). */
export interface TooltipLine {
  readonly label: string;
  readonly value: string;
}

export interface ObjectPresentation {
  readonly description: string;
  readonly icon: IconSpec;
  readonly tooltip: TooltipLine[];
  /** `live` | `terminating`, plus `:finalizers` when it has finalizers (for the context value). */
  readonly state: string;
  readonly terminating: boolean;
}

export interface KeyPresentation {
  readonly description: string;
  readonly icon: IconSpec;
  readonly tooltip: TooltipLine[];
  /** The context value state: the phase. */
  readonly state: KeyState['phase'];
}

const READY = 'Ready';

/** "in 4.2s" / "now" for a due time. */
export function dueIn(dueAt: number, now: number): string {
  const ms = dueAt - now;
  return ms <= 0 ? 'now' : `in ${formatDuration(ms)}`;
}

/** A priority-queue priority in words: "low priority (-100)" (initial list, resyncs), "priority 10". */
export function priorityLabel(p: number): string {
  return p === -100 ? 'low priority (-100)' : `priority ${p}`;
}

/**
 * Whether Reset Backoff can do something for the key: its rate limiter remembers failures (`requeues > 0`) or it
 * waits for a backoff retry. The views mark such rows `:backoff` in their contextValue, and the menus offer Reset
 * Backoff only there (the palette command still takes any key of the loop).
 */
export function hasBackoff(s: KeyState | undefined): boolean {
  return Boolean(s && (s.requeues > 0 || s.phase === 'backoff' || s.waiting?.kind === 'backoff'));
}

/**
 * The queue part of a description: "queued", "processing", "backoff 3 · retry in 4s", "requeue in 30s (reason)",
 * plus the key's priority when it is not the default 0 (priority queue only).
 */
export function queueSummary(s: KeyState, now: number): string {
  const parts: string[] = [];
  switch (s.phase) {
    case 'queued':
      parts.push('queued');
      break;
    case 'processing':
      parts.push(s.dirtyWhileProcessing ? 'processing (queued again)' : 'processing');
      break;
    case 'backoff':
      parts.push(`backoff ${s.requeues}`, `retry ${dueIn(s.waiting?.dueAt ?? now, now)}`);
      break;
    case 'requeueAfter': {
      const reason = s.lastOutcome?.kind === 'requeueAfter' ? s.lastOutcome.reason : undefined;
      parts.push(`requeue ${dueIn(s.waiting?.dueAt ?? now, now)}${reason ? ` (${reason})` : ''}`);
      break;
    }
    case 'idle':
      break;
  }
  // A pending wait while queued or processing for another reason.
  if (s.waiting && s.phase !== 'backoff' && s.phase !== 'requeueAfter') {
    parts.push(`${s.waiting.kind === 'backoff' ? 'retry' : 'requeue'} ${dueIn(s.waiting.dueAt, now)}`);
  }
  if (s.phase !== 'idle' && s.priority !== undefined && s.priority !== 0) parts.push(priorityLabel(s.priority));
  if (s.phase !== 'backoff' && s.requeues > 0) parts.push(`${plural(s.requeues, 'failure')}`);
  return parts.join(' · ');
}

/** One line for an outcome: "ok in 4ms", "requeue after 30s (waiting)", "error: …". */
export function outcomeSummary(o: ReconcileOutcome, durationMs?: number): string {
  const took = durationMs !== undefined ? ` in ${formatDuration(durationMs)}` : '';
  switch (o.kind) {
    case 'success':
      return `ok${took}`;
    case 'requeueAfter':
      return `requeue after ${formatDuration(o.afterMs)}${o.reason ? ` (${o.reason})` : ''}${took}`;
    case 'requeue':
      return `requeue (rate-limited)${o.reason ? ` (${o.reason})` : ''}${took}`;
    case 'error':
      return `${o.timedOut ? 'timed out' : 'error'}${took}${o.ignored ? ` (${o.ignored} ignored)` : ''}: ${o.message}`;
    case 'terminal':
      return `terminal error${took}${o.ignored ? ` (${o.ignored} ignored)` : ''}: ${o.message}`;
    case 'cancelled':
      return `cancelled: ${o.message}`;
  }
}

/** "due 3.0s ago", or "due in 40s" for a wait that is not over (a Go controller reports a wait when it begins). */
function due(at: number, now: number): string {
  return at > now ? `due in ${formatDuration(at - now)}` : `due ${formatDuration(now - at)} ago`;
}

/**
 * Why a key was queued, in words: "update of widgets.lab.reconcile.dev default/a (rv 12) 3s ago". With `key` (the
 * key the reason queued) and `writtenBy` (the key whose reconcile by the same controller wrote the event's
 * resourceVersion, see ViewModel.writtenBy), an event its controller's own write caused says whose: "…(rv 12,
 * this key's own write), 3s ago", "…(rv 12, written by the reconcile of default/b)".
 */
export function reasonSummary(r: EnqueueReason, now: number, key?: string, writtenBy?: ObjectKey): string {
  const ago = `${formatDuration(now - r.at)} ago`;
  const rv = (x: { resourceVersion?: string; deletionRequested?: true }) => {
    const by = key === undefined || writtenBy === undefined ? '' : writtenBy === key ? ", this key's own write" : `, written by the reconcile of ${writtenBy}`;
    const del = x.deletionRequested ? ', deletion requested: deletionTimestamp set' : '';
    return x.resourceVersion ? ` (rv ${x.resourceVersion}${del}${by})` : del ? ` (${del.slice(2)})` : '';
  };
  switch (r.kind) {
    case 'informer':
      return `${r.initial ? 'initial list' : r.event} of ${r.objectKey}${rv(r)}, ${ago}`;
    case 'owned':
      return `${r.initial ? 'initial list' : r.event} of owned ${r.childKind ?? r.resource} ${r.child}${rv(r)}, ${ago}`;
    case 'watch':
      return `${r.initial ? 'initial list' : r.event} of watched ${r.objectKind ?? r.resource} ${r.objectKey}${rv(r)}, ${ago}`;
    case 'requeueAfter':
      return `requeue after ${formatDuration(r.afterMs)}${r.reason ? ` (${r.reason})` : ''}, ${due(r.at, now)}`;
    case 'backoff':
      // The error in its first line only: an exec program's carries its stderr tail (up to 4 KiB), which would push
      // the due time out of a row; the whole error is the key's last error (its row, the tooltip, the Event Log).
      return `retry #${r.attempt} after ${formatDuration(r.delayMs)} backoff${r.error ? ` (${firstLineOf(r.error)})` : ''}, ${due(r.at, now)}`;
    case 'manual':
      // An add with a note says it ("added outside an informer event (a channel source …)", "step (force) …").
      return `${r.note ? (r.action === 'enqueue' ? r.note : `${r.action} (${r.note})`) : r.action}, ${ago}`;
  }
}

/**
 * What, besides its convergence, decides how a key's convergence reads: its queue phase, and from its cached object
 * whether it is Terminating and whether its Ready condition is there and not True. Both views build it with
 * {@link convergenceContextOf}, so the Resources row and the Work Queue row say the same word.
 */
export interface ConvergenceContext {
  readonly phase?: KeyState['phase'];
  readonly terminating?: boolean;
  readonly notReady?: boolean;
  /** The reason of the requeue-after the key waits for ("oven too cold"), when it gave one. */
  readonly requeueReason?: string;
}

/** The {@link ConvergenceContext} of a key from its work-queue state and its cached object (either may be unknown). */
export function convergenceContextOf(key: KeyState | undefined, obj: KubeObject | undefined): ConvergenceContext {
  const ready = obj ? conditionOf(obj, READY) : undefined;
  const reason = key?.lastOutcome?.kind === 'requeueAfter' ? key.lastOutcome.reason : undefined;
  return {
    ...(key ? { phase: key.phase } : {}),
    ...(obj?.metadata.deletionTimestamp ? { terminating: true } : {}),
    ...(ready !== undefined && ready.status !== 'True' ? { notReady: true } : {}),
    ...(reason ? { requeueReason: reason } : {}),
  };
}

/**
 * Why "converged" is not said of a key the tracker calls converged, or undefined when it may be said: the key waits in
 * the queue or runs (a reconcile is about to act), or, Not Ready, waits on its own requeue-after (its reconciler said
 * "not ready yet, look again").
 */
function convergedWithheld(at: ConvergenceContext): 'queued' | 'processing' | 'notReadyRequeue' | undefined {
  if (at.phase === 'queued' || at.phase === 'processing') return at.phase;
  if (at.notReady && at.phase === 'requeueAfter') return 'notReadyRequeue';
  return undefined;
}

/**
 * How a key's convergence reads next to its other states ("converged", "changing", "flapping"), or undefined when it
 * would mislead: "converged" is left out while the key waits in the queue or runs (a reconcile is about to act) or,
 * Not Ready, waits on its own requeue-after (its reconciler said "not ready yet, look again"),
 * reads "no progress" on an object that is still Terminating (its controller stopped acting, but the deletion does
 * not finish), and "converged, N no-op writes" when its reconciles kept sending writes that changed nothing since the
 * spec was last changed (a pass with nothing to do should write nothing). The one rule of both views: pass the
 * context from {@link convergenceContextOf}.
 */
export function convergenceLabel(c: KeyConvergence, at: ConvergenceContext = {}): string | undefined {
  if (c.state !== 'converged') return c.state;
  if (convergedWithheld(at)) return undefined;
  if (at.terminating) return 'no progress';
  return c.noOpWrites ? `converged, ${plural(c.noOpWrites, 'no-op write')}` : c.state;
}

/**
 * The tracker's sentence with its counts in proper singular or plural: "3 time(s)" reads "3 times", "1 write(s)"
 * "1 write".
 */
function countsInWords(text: string): string {
  return text.replace(/\b(\d+) ([a-z-]+)\(s\)/g, (_, n: string, noun: string) => plural(Number(n), noun));
}

/**
 * What a converged key's quiet spell is, in words: "nothing changed for 5m15s since generation 1 was reconciled",
 * then, when its reconciles still sent writes the server stored as they were, "; 3 writes since generation 1 was
 * seen changed nothing (no-op writes)".
 */
function quietSpell(c: KeyConvergence): string {
  const gen = c.generation !== undefined ? `generation ${c.generation}` : 'the spec';
  const quiet = `nothing changed for ${formatDuration(c.at - c.lastChangeAt)} since ${gen} was reconciled`;
  if (!c.noOpWrites) return quiet;
  return `${quiet}; ${plural(c.noOpWrites, 'write')} since ${gen} was seen changed nothing (${c.noOpWrites === 1 ? 'a no-op write' : 'no-op writes'})`;
}

/**
 * A key's convergence in words: the word (as {@link convergenceLabel} says it, given the same context) and why. A key
 * the tracker calls converged but the row does not (queued, running, Not Ready waiting on its own requeue) says why
 * not, then how long nothing has changed. The Work Queue shows it as a child of the key, both views in the tooltip
 * ({@link convergenceLine}).
 */
export function convergenceDetail(c: KeyConvergence, at: ConvergenceContext = {}): { word: string; why: string } {
  if (c.state !== 'converged') return { word: c.state, why: countsInWords(c.reason) };
  const quiet = quietSpell(c);
  switch (convergedWithheld(at)) {
    case 'queued':
      return { word: 'not judged while queued', why: `a reconcile is about to run. Until now ${quiet}.` };
    case 'processing':
      return { word: 'not judged while a reconcile runs', why: `until it started ${quiet}.` };
    case 'notReadyRequeue':
      return {
        word: 'not converged',
        why: `the object is Not Ready and its reconciler asked to look again${at.requeueReason ? ` ("${at.requeueReason}")` : ''}, so the loop means to act again. Until now ${quiet}.`,
      };
    case undefined:
      break;
  }
  if (at.terminating) {
    return { word: 'no progress', why: `the controller stopped acting (${quiet}), but the object is still Terminating: a finalizer on it is not being removed. Strip Finalizers… shows who owns it and is the escape hatch.` };
  }
  if (c.noOpWrites) {
    return {
      word: 'converged',
      why: `${quiet}: the server kept the resourceVersion, and a pass with nothing to do should write nothing. Compare the object with what it would write (status included) and skip the write when they are equal; Dry-Run Reconcile marks such a write "changes nothing".`,
    };
  }
  return { word: 'converged', why: `${quiet}.` };
}

/** The tooltip line of a key's convergence: "Convergence: word: why" (see {@link convergenceDetail}). */
export function convergenceLine(c: KeyConvergence, at: ConvergenceContext = {}): TooltipLine {
  const d = convergenceDetail(c, at);
  return { label: 'Convergence', value: `${d.word}: ${d.why}` };
}

const FLAPPING_ICON: IconSpec = { id: 'pulse', color: 'list.warningForeground' };

function keyIcon(s: KeyState): IconSpec {
  switch (s.phase) {
    case 'processing':
      return { id: 'sync~spin' };
    case 'backoff':
      return { id: 'error', color: 'list.errorForeground' };
    case 'requeueAfter':
      return { id: 'history', color: 'charts.blue' };
    case 'queued':
      return { id: 'clock', color: 'charts.yellow' };
    case 'idle':
      if (s.lastOutcome?.kind === 'error' || s.lastOutcome?.kind === 'terminal') return { id: 'error', color: 'list.errorForeground' };
      return s.reconciles > 0 ? { id: 'pass', color: 'testing.iconPassed' } : { id: 'circle-outline' };
  }
}

/**
 * The first line of a (possibly multi-line) message, cut at `max` characters; `…` marks what was left out (more
 * characters, or more lines: an exec program's stderr tail, a Go panic's frames).
 */
export function firstLineOf(text: string, max = 160): string {
  const trimmed = text.trim();
  const nl = trimmed.indexOf('\n');
  const line = (nl < 0 ? trimmed : trimmed.slice(0, nl)).trimEnd();
  if (line.length > max) return `${line.slice(0, max - 1)}…`;
  return nl < 0 ? line : `${line} …`;
}

/**
 * The key's last error as a labelled line: `last error` while its last reconcile failed, `earlier error` once a
 * later reconcile succeeded (the message is kept for history), with how long ago it happened. `oneLine` (a tree row,
 * whose end a long message would push out of sight): the message's first line ({@link firstLineOf}), with `hover
 * for all of it` when lines were left out; the tooltip takes it whole.
 */
export function lastErrorLine(s: KeyState, now: number, options: { oneLine?: boolean } = {}): { label: string; value: string } | undefined {
  if (!s.lastError) return undefined;
  const failing = s.lastOutcome === undefined || s.lastOutcome.kind === 'error' || s.lastOutcome.kind === 'terminal';
  const ago = s.lastErrorAt !== undefined ? `${formatDuration(now - s.lastErrorAt)} ago` : undefined;
  const cut = options.oneLine && firstLineOf(s.lastError) !== s.lastError.trim();
  const when = [ago, failing ? undefined : 'before the last reconcile, which succeeded', cut ? 'hover for all of it' : undefined].filter(Boolean).join(', ');
  return { label: failing ? 'last error' : 'earlier error', value: `${options.oneLine ? firstLineOf(s.lastError) : s.lastError}${when ? ` (${when})` : ''}` };
}

/**
 * A work-queue key: its state, requeue count, next due time, last error and why it is queued (`writtenBy`: whose
 * reconcile wrote the version an event names, see ViewModel.writtenBy). `obj`, the key's cached object, decides its
 * convergence word as in the Resources view (Terminating, Not Ready waiting on its own requeue): pass it whenever
 * it is cached, or the two views can disagree.
 */
export function presentKey(s: KeyState, now: number, convergence?: KeyConvergence, writtenBy?: (r: EnqueueReason) => ObjectKey | undefined, obj?: KubeObject): KeyPresentation {
  const q = queueSummary(s, now);
  const last = s.lastOutcome ? outcomeSummary(s.lastOutcome, s.lastDurationMs) : undefined;
  // The row shows the first line of a multi-line error (its tooltip's Last result has all of it).
  const main = q || (last ? `last: ${firstLineOf(last)}` : 'idle');
  // The queue state first, as in the Resources view: a narrow sidebar cuts the end of a description, and the queue
  // state is what this view is for (a flapping key keeps its own icon).
  const at = convergenceContextOf(s, obj);
  const shownConvergence = convergence ? convergenceLabel(convergence, at) : undefined;
  const description = shownConvergence ? `${main} · ${shownConvergence}` : main;
  const tooltip: TooltipLine[] = [{ label: 'State', value: s.phase + (s.dirtyWhileProcessing ? ' (queued again when done)' : '') }];
  if (s.waiting) tooltip.push({ label: s.waiting.kind === 'backoff' ? 'Next retry' : 'Requeue', value: dueIn(s.waiting.dueAt, now) });
  if (s.priority !== undefined) tooltip.push({ label: 'Priority', value: `${s.priority}${s.priority === -100 ? ' (low: initial list or resync)' : ''} — higher runs first` });
  tooltip.push({ label: 'Requeues (backoff counter)', value: String(s.requeues) });
  tooltip.push({ label: 'Reconciles', value: String(s.reconciles) });
  if (last) tooltip.push({ label: 'Last result', value: last });
  if (s.lastStartedAt !== undefined) tooltip.push({ label: 'Last started', value: `${formatDuration(now - s.lastStartedAt)} ago` });
  const err = lastErrorLine(s, now);
  if (err) tooltip.push({ label: err.label[0]!.toUpperCase() + err.label.slice(1), value: err.value });
  for (const r of s.reasons) tooltip.push({ label: 'Queued because', value: reasonSummary(r, now, s.key, writtenBy?.(r)) });
  if (s.droppedReasons) tooltip.push({ label: 'Queued because', value: `… and ${plural(s.droppedReasons, 'earlier reason')}` });
  if (!s.reasons.length) for (const r of s.lastTriggers) tooltip.push({ label: 'Last run triggered by', value: reasonSummary(r, now, s.key, writtenBy?.(r)) });
  if (s.warning) tooltip.push({ label: 'Warning', value: s.warning });
  if (convergence) tooltip.push(convergenceLine(convergence, at));
  const icon = s.warning ? { id: 'warning', color: 'list.warningForeground' } : convergence?.state === 'flapping' && s.phase !== 'processing' ? FLAPPING_ICON : keyIcon(s);
  return { description, icon, tooltip, state: s.phase };
}

function conditionText(c: Condition): string {
  return `${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}`;
}

/**
 * An object's finalizers: `metadata.finalizers`, and for a Terminating Namespace (`resource` "namespaces", or kind
 * Namespace: list items carry no kind) also `spec.finalizers` — `kubernetes`, which the namespace controller removes
 * once the namespace's content is gone, so it is what holds it. (Every live namespace carries `kubernetes` there:
 * nothing to show or strip until it is being deleted.)
 */
export function finalizersOf(obj: KubeObject, resource?: string): string[] {
  const meta = obj.metadata.finalizers ?? [];
  const isNamespace = Boolean(obj.metadata.deletionTimestamp) && (resource === 'namespaces' || (obj.kind === 'Namespace' && obj.apiVersion === 'v1'));
  const spec = isNamespace ? (obj.spec as { finalizers?: unknown } | undefined)?.finalizers : undefined;
  if (!Array.isArray(spec)) return meta;
  return [...meta, ...spec.filter((f): f is string => typeof f === 'string' && !meta.includes(f))];
}

/**
 * An object at a glance: Terminating (deletionTimestamp age) with its
 * finalizers, generation vs observedGeneration, the Ready condition and its
 * queue state (when the loop reconciles this resource), or, for a key that waits for
 * nothing after a failed reconcile, `terminal error (not retried)` / `last reconcile failed` with the error icon.
 */
export function presentObject(obj: KubeObject, key: KeyState | undefined, now: number, convergence?: KeyConvergence, resource?: string): ObjectPresentation {
  const meta = obj.metadata;
  const finalizers = finalizersOf(obj, resource);
  const terminating = Boolean(meta.deletionTimestamp);
  const parts: string[] = [];
  const tooltip: TooltipLine[] = [];
  if (obj.kind) tooltip.push({ label: 'Kind', value: `${obj.kind}${obj.apiVersion ? ` (${obj.apiVersion})` : ''}` });
  // While robustness checks run, their scratch copies are in the cache like any object: say what they are first.
  if (isScratchObject(obj)) {
    parts.push('robustness-check copy');
    tooltip.push({ label: 'Robustness checks', value: 'a scratch copy made by Run Robustness Checks…; not your object, and not reconciled by this loop. It is deleted with its scratch namespace when the checks end.' });
  }
  if (terminating) {
    const age = ageOf(meta.deletionTimestamp, now) ?? '?';
    parts.push(`Terminating ${age}${finalizers.length ? ` (${finalizers.join(', ')})` : ''}`);
    tooltip.push({ label: 'Terminating', value: `deletion requested ${age} ago (${meta.deletionTimestamp})` });
  }
  if (finalizers.length) tooltip.push({ label: finalizers.length === 1 ? 'Finalizer' : 'Finalizers', value: finalizers.join(', ') });
  const gen = meta.generation;
  const og = observedGenerationOf(obj);
  if (gen !== undefined && og !== undefined) {
    // A delete of an object with finalizers raises metadata.generation by one (the API server's graceful deletion):
    // a controller's last reconcile (cleanup, finalizer removal) rarely records it, and nothing is left to reconcile.
    const byDelete = terminating && gen === og + 1;
    parts.push(og === gen ? `gen ${gen}` : `gen ${gen}/${og} observed${byDelete ? ' (+1 by the delete)' : ''}`);
    tooltip.push({ label: 'Generation', value: `${gen} (status.observedGeneration ${og}${og === gen ? ', up to date' : byDelete ? ': the delete raised metadata.generation by one (the API server does so when it sets deletionTimestamp on an object with finalizers); no spec change is waiting' : ', not yet reconciled'})` });
  } else if (gen !== undefined) {
    tooltip.push({ label: 'Generation', value: `${gen} (no status.observedGeneration)` });
  }
  const ready = conditionOf(obj, READY);
  if (ready) {
    parts.push(ready.status === 'True' ? 'Ready' : ready.status === 'False' ? `Not Ready${ready.reason ? ` (${ready.reason})` : ''}` : 'Ready Unknown');
    tooltip.push({ label: 'Ready', value: conditionText(ready) + (ready.message ? `: ${ready.message}` : '') });
  }
  // An idle key whose last reconcile failed: nothing is queued, so the queue part is empty, yet the object is not
  // fine. A terminal error is not retried until an event queues the key again; say so, as the Work Queue row does.
  const failedIdle = key?.phase === 'idle' && (key.lastOutcome?.kind === 'error' || key.lastOutcome?.kind === 'terminal') ? key.lastOutcome.kind : undefined;
  if (key) {
    const q = queueSummary(key, now);
    if (q) parts.push(q);
    if (failedIdle) parts.push(failedIdle === 'terminal' ? 'terminal error (not retried)' : 'last reconcile failed');
    if (key.lastError && (key.phase === 'backoff' || key.lastOutcome?.kind === 'error' || key.lastOutcome?.kind === 'terminal')) {
      tooltip.push({ label: 'Last error', value: key.lastError });
    }
    if (q) tooltip.push({ label: 'Queue', value: q });
  }
  if (convergence) {
    const at = convergenceContextOf(key, obj);
    const label = convergenceLabel(convergence, at);
    if (label) parts.push(label);
    tooltip.push(convergenceLine(convergence, at));
  }
  if (meta.resourceVersion) tooltip.push({ label: 'resourceVersion', value: meta.resourceVersion });
  const created = ageOf(meta.creationTimestamp, now);
  if (created) tooltip.push({ label: 'Age', value: created });

  let icon: IconSpec;
  if (key?.phase === 'processing') icon = { id: 'sync~spin' };
  else if (terminating) icon = { id: 'trash', color: 'list.warningForeground' };
  else if (key?.phase === 'backoff' || failedIdle) icon = { id: 'error', color: 'list.errorForeground' };
  else if (convergence?.state === 'flapping') icon = FLAPPING_ICON;
  else if (ready?.status === 'False') icon = { id: 'error', color: 'list.errorForeground' };
  else if (ready && ready.status !== 'True') icon = { id: 'question', color: 'list.warningForeground' };
  else if (gen !== undefined && og !== undefined && og !== gen) icon = { id: 'sync', color: 'charts.yellow' };
  else if (key?.phase === 'queued') icon = { id: 'clock', color: 'charts.yellow' };
  else if (key?.phase === 'requeueAfter') icon = { id: 'history', color: 'charts.blue' };
  else if (ready?.status === 'True') icon = { id: 'pass', color: 'testing.iconPassed' };
  else icon = { id: 'symbol-object' };

  return {
    description: parts.join(' · '),
    icon,
    tooltip,
    state: `${terminating ? 'terminating' : 'live'}${finalizers.length ? ':finalizers' : ''}`,
    terminating,
  };
}

/** What the Resources tree knows about one namespace row under a namespaced kind. */
export interface NamespaceRowInput {
  /** The kind's objects in this namespace. */
  readonly total: number;
  /** How many of them the state filter shows (undefined: no filter). */
  readonly shown?: number;
  /** How many of them are Terminating. */
  readonly terminatingObjects: number;
  /** Whether the connection watches namespaces (a user without list/watch on namespaces cannot). */
  readonly namespacesWatched: boolean;
  /** The cached Namespace, when namespaces are watched and it is in the cache. */
  readonly namespaceObject?: KubeObject;
}

export interface NamespaceRowPresentation {
  readonly description: string;
  readonly tooltip: TooltipLine[];
  readonly icon: IconSpec;
  /** True only when the cached Namespace has a deletionTimestamp. */
  readonly terminating: boolean;
}

/**
 * A namespace row: the object count (shown of total under a filter), how many are Terminating and the Namespace's own
 * state. The Namespace is only known to be Terminating from a watched (cached) Namespace; without namespaces watched
 * (typical for a user with rights in a few namespaces only) the row claims nothing: its tooltip says the state is not
 * known and why, and when every object in it is Terminating, that the namespace may be being deleted.
 */
export function presentNamespaceRow(input: NamespaceRowInput, now: number): NamespaceRowPresentation {
  const { total, shown, terminatingObjects, namespacesWatched, namespaceObject } = input;
  const count = shown !== undefined ? `${shown} of ${total}` : String(total);
  const tooltip: TooltipLine[] = [{ label: 'Objects', value: `${count}${terminatingObjects ? ` (${terminatingObjects} terminating)` : ''}` }];
  const deletion = namespaceObject?.metadata.deletionTimestamp;
  if (deletion) {
    const age = ageOf(deletion, now) ?? '?';
    tooltip.push({ label: 'Namespace', value: `Terminating: deletion requested ${age} ago (${deletion}); it goes once the objects left in it are gone` });
    return {
      description: `Terminating ${age} · ${count}${terminatingObjects ? ` · ${terminatingObjects} terminating` : ''}`,
      tooltip,
      icon: { id: 'trash', color: 'list.warningForeground' },
      terminating: true,
    };
  }
  if (namespaceObject) tooltip.push({ label: 'Namespace', value: 'Active' });
  else if (namespacesWatched) tooltip.push({ label: 'Namespace', value: 'not in the cache (not found, or outside the watched namespaces)' });
  else {
    const hint = total > 0 && terminatingObjects === total ? '; every object here is Terminating: the namespace may be being deleted' : '';
    tooltip.push({ label: 'Namespace', value: `state not known: namespaces are not watched (add "namespaces" to reconcileLab.resources, which needs list and watch on namespaces)${hint}` });
  }
  return {
    description: `${count}${terminatingObjects ? ` · ${terminatingObjects} terminating` : ''}`,
    tooltip,
    icon: { id: 'symbol-namespace' },
    terminating: false,
  };
}

/** A condition row: icon and text. */
export function presentCondition(c: Condition, now: number): { label: string; description: string; icon: IconSpec; state: string } {
  const positive = c.status === 'True';
  const icon: IconSpec =
    c.status === 'Unknown' ? { id: 'question', color: 'list.warningForeground' } : positive ? { id: 'pass', color: 'testing.iconPassed' } : { id: 'circle-slash', color: 'list.errorForeground' };
  const since = ageOf(c.lastTransitionTime, now);
  return {
    label: `${c.type}=${c.status}`,
    description: [c.reason, c.message, since ? `${since} ago` : undefined].filter(Boolean).join(' · '),
    icon,
    state: c.status === 'True' ? 'true' : c.status === 'False' ? 'false' : 'unknown',
  };
}

/**
 * The label of each kind row of the Resources tree, by resource id: the kind ("Widget") when no other watched resource
 * has the same kind, else the kind and its API group ("Widget (lab.reconcile.dev)", "Service (core)"), so that kinds
 * of different groups (a CRD copied under another group, a test's scratch CRDs) are told apart by their label and not
 * only by the grey description a narrow view cuts. Two resources of one kind and one group (different plurals) get
 * their resource id ("Widget (widgets.lab.reconcile.dev)").
 */
export function kindLabels(resources: readonly { readonly id: string; readonly info: { readonly kind: string; readonly group: string } }[]): Map<string, string> {
  const count = (f: (r: (typeof resources)[number]) => string) => {
    const n = new Map<string, number>();
    for (const r of resources) n.set(f(r), (n.get(f(r)) ?? 0) + 1);
    return n;
  };
  const byKind = count((r) => r.info.kind);
  const byKindAndGroup = count((r) => `${r.info.kind}|${r.info.group}`);
  const out = new Map<string, string>();
  for (const r of resources) {
    const { kind, group } = r.info;
    if (byKind.get(kind) === 1) out.set(r.id, kind);
    else if (byKindAndGroup.get(`${kind}|${group}`) === 1) out.set(r.id, `${kind} (${group || 'core'})`);
    else out.set(r.id, `${kind} (${r.id})`);
  }
  return out;
}
