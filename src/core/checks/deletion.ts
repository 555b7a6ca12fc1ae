import { sleep, type Clock } from '../clock.ts';
import type { JournalEntry } from '../journal/journal.ts';
import { isNotFound } from '../k8s/client.ts';
import type { ObjectKey } from '../k8s/keys.ts';
import type { KubeObject } from '../k8s/objects.ts';
import type { CheckReconcilerKind } from './types.ts';

/**
 * The deletion check's oracle and its wait (the check itself is in runChecks.ts): after the scratch copy settled,
 * it is deleted (the server's default propagation, as `kubectl delete` sends none) while the check's controller
 * runs; the copy must be gone within the convergence bound. Classic deletion-path bugs this catches: a finalizer
 * that is never removed (the object stays Terminating forever) and a reconciler that fails on a Terminating object.
 *
 * Pure and clock-driven, so it is unit-tested with a fake clock and a fake getter.
 */

/** What the check saw between its delete and the end of the wait. */
export interface DeletionObservation {
  /** The object was gone (404) before the bound. */
  gone: boolean;
  /** From the delete to gone (or to the bound). */
  ms: number;
  boundMs: number;
  /** Finalizers on the copy when it was deleted (all added by the reconciler under test: the copy starts with none). */
  finalizersAtDelete: string[];
  /** Finalizers still on the object at the bound (when not gone). */
  finalizersLeft: string[];
  /**
   * Reconciles of the copy's key that started after the delete (when gone: only those before it was gone, see
   * {@link goneIndex}; the reconciles after that are judged by {@link failsWhenGoneProblem}).
   */
  reconciles: number;
  /** Failed reconciles (error or terminal outcome) among {@link reconciles}, in order. */
  failures: Array<{ message: string; terminal: boolean }>;
  /** The last reconcile after the delete failed. */
  lastFailed: boolean;
  /**
   * Set when the last reconcile after the delete succeeded with a requeue-after (its delay, ms): the reconciler saw
   * the deletion and chose to wait (for an annotation, an external system…) rather than remove its finalizer.
   */
  lastRequeueAfterMs?: number;
  /** How many reconciles after the delete ended with a requeue-after (with {@link lastRequeueAfterMs}). */
  requeuesAfter?: number;
}

/** One problem the oracle found: a finding's title and explanation (runChecks adds the rest). */
export interface DeletionProblem {
  title: string;
  explanation: string;
}

export interface DeletionVerdict {
  status: 'passed' | 'failed';
  message: string;
  problems: DeletionProblem[];
}

const MAX_MESSAGE = 300;
const clip = (s: string) => (s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE)}…` : s);
const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/**
 * The reconciles of `key` that started after the delete (entries from `from` on), and which of them failed.
 * A reconcile's end counts when its start is in the range (an end whose start came before the delete is skipped).
 */
export function reconcilesAfter(entries: readonly JournalEntry[], key: ObjectKey, from: number): Pick<DeletionObservation, 'reconciles' | 'failures' | 'lastFailed' | 'lastRequeueAfterMs' | 'requeuesAfter'> {
  let reconciles = 0;
  let started = false;
  let lastFailed = false;
  let lastRequeueAfterMs: number | undefined;
  let requeuesAfter = 0;
  const failures: DeletionObservation['failures'] = [];
  for (const e of entries.slice(from)) {
    if (e.key !== key) continue;
    if (e.kind === 'reconcileStart') {
      reconciles++;
      started = true;
    } else if (e.kind === 'reconcileEnd' && started) {
      const failed = e.outcome.kind === 'error' || e.outcome.kind === 'terminal';
      if (failed) failures.push({ message: (e.outcome as { message: string }).message, terminal: e.outcome.kind === 'terminal' });
      lastFailed = failed;
      lastRequeueAfterMs = e.outcome.kind === 'requeueAfter' ? e.outcome.afterMs : undefined;
      if (e.outcome.kind === 'requeueAfter') requeuesAfter++;
    }
  }
  return { reconciles, failures, lastFailed, ...(lastRequeueAfterMs !== undefined ? { lastRequeueAfterMs, requeuesAfter } : {}) };
}

/**
 * Decides the check from what it saw. Invariants: gone within the bound passes (failures on the way are only
 * mentioned); not gone always fails with exactly one problem — the reconciler's last failure when its last reconcile
 * failed, else the finalizers left (never removed), else "still there" when the server reports none. Its advice to treat
 * an already-gone cleanup target as success names how in the reconciler's own terms (`kind`: {@link cleanupGoneIdiom}).
 */
export function deletionVerdict(o: DeletionObservation, kind: CheckReconcilerKind = 'lab'): DeletionVerdict {
  const idiom = cleanupGoneIdiom(kind);
  if (o.gone) {
    // Without finalizers the time is the server's own (a Namespace's content is deleted first, with its spec.finalizers).
    const how = o.finalizersAtDelete.length ? `the reconciler removed ${o.finalizersAtDelete.join(', ')}` : 'no metadata.finalizers to remove';
    const retried = o.failures.length ? `; ${o.failures.length} reconcile(s) after the delete failed before it was gone (last: ${clip(o.failures[o.failures.length - 1]!.message)})` : '';
    return { status: 'passed', problems: [], message: `gone ${o.ms} ms after the delete (${how})${retried}` };
  }
  const left = o.finalizersLeft;
  const stuck = `Deleted the copy (as kubectl delete would) and let the controller run: ${seconds(o.boundMs)} later it still exists with deletionTimestamp set${left.length ? ` and finalizer(s) ${left.join(', ')}` : ''} ("Terminating"). The API server removes an object only when its finalizers list is empty, and only the controller that added a finalizer removes it.`;
  const noCall = o.reconciles === 0 ? ' The controller was not even called after the delete: a predicate (or an event filter) may drop the update that sets deletionTimestamp — let deletions through.' : '';
  if (o.lastFailed && o.failures.length) {
    const last = o.failures[o.failures.length - 1]!;
    return {
      status: 'failed', message: `still Terminating after ${seconds(o.boundMs)}: the reconciler failed on it ${o.failures.length} time(s)`,
      problems: [{
        title: `The reconciler failed on the Terminating object: ${clip(last.message)}`,
        explanation: `${stuck} Each reconcile of the Terminating object failed (${o.failures.length} time(s), ${last.terminal ? 'the last one terminal: not retried' : 'retried with backoff'}), last with: ${clip(last.message)}. A reconciler must handle an object that is being deleted: when deletionTimestamp is set, do the cleanup (treat "already gone" as success${idiom ? `: ${idiom}` : ''}), remove your finalizer, and return without the normal create/update path (writes of new children or of status fail or recreate what is being torn down).`,
      }],
    };
  }
  if (left.length && o.lastRequeueAfterMs !== undefined && o.reconciles > 0) {
    // The reconciler did look at the Terminating object: it chose to wait (a release gate, an external system) and
    // requeued, so "did not handle deletionTimestamp" would be wrong and send the reader to the wrong place.
    const them = left.length > 1 ? 'them' : 'it';
    const waits = o.requeuesAfter ?? 1;
    return {
      status: 'failed', message: `still Terminating after ${seconds(o.boundMs)}: finalizer(s) ${left.join(', ')} never removed; the reconciler kept requeueing (after ${seconds(o.lastRequeueAfterMs)})`,
      problems: [{
        title: `Stays Terminating: finalizer ${left.join(', ')} ${left.length > 1 ? 'are' : 'is'} never removed (the reconciler saw the deletion and kept requeueing, after ${seconds(o.lastRequeueAfterMs)}, without removing ${them})`,
        explanation: `${stuck} The reconciler added ${left.length > 1 ? 'these finalizers' : 'this finalizer'} and did see the deletion: ${waits} of its ${o.reconciles} reconcile(s) after the delete ended with a requeue-after (the last: after ${seconds(o.lastRequeueAfterMs)}) instead of removing ${them}, so its cleanup waits for something that never happened while the check ran (an annotation, another object, an external system). If that wait is by design (a release gate), this is what a plain \`kubectl delete\` does here: the object stays Terminating until the condition is met (and so does a namespace being deleted around it), and Strip Finalizers… is the way out. Otherwise make the cleanup finish on its own: clean up what the finalizer protects (already gone is success${idiom ? `: ${idiom}` : ''}), then remove the finalizer from the latest object.`,
      }],
    };
  }
  if (left.length) {
    return {
      status: 'failed', message: `still Terminating after ${seconds(o.boundMs)}: finalizer(s) ${left.join(', ')} never removed`,
      problems: [{
        title: `Stays Terminating: finalizer ${left.join(', ')} ${left.length > 1 ? 'are' : 'is'} never removed (the reconciler did not handle deletionTimestamp)`,
        explanation: `${stuck}${noCall} The reconciler added ${left.length > 1 ? 'these finalizers' : 'this finalizer'} but ${o.reconciles ? `its ${o.reconciles} reconcile(s) after the delete did not remove ${left.length > 1 ? 'them' : 'it'}` : 'never removed it'}, so the object hangs in Terminating forever (and so does a namespace being deleted around it). When deletionTimestamp is set: clean up what the finalizer protects (already gone is success${idiom ? `: ${idiom}` : ''}), then remove the finalizer from the latest object, and do nothing else.`,
      }],
    };
  }
  return {
    status: 'failed', message: `still there ${seconds(o.boundMs)} after the delete`,
    problems: [{ title: `Still there ${seconds(o.boundMs)} after the delete`, explanation: `${stuck}${noCall}` }],
  };
}

/**
 * Where in `entries` the deleted object was gone for sure: right after the last successful write to it from `from`
 * (the delete) on — the write that removed its last finalizer, after which no write to it can succeed — or `from`
 * itself when there was none (no finalizer: the delete removed it at once). A reconcile that starts at or after the
 * index ran on a key whose object no longer existed.
 */
export function goneIndex(entries: readonly JournalEntry[], from: number, key: ObjectKey, primary: { group: string; resource: string }): number {
  let at = from;
  for (let i = from; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.kind === 'write' && e.objectKey === key && !e.error && !e.dryRun && e.gvr.group === primary.group && e.gvr.resource === primary.resource) at = i + 1;
  }
  return at;
}

/**
 * The problem of reconciles that failed after the object was gone (`afterGone`: the key's reconciles that started
 * once the copy no longer existed, from {@link reconcilesAfter}); undefined when none failed. Its last delete event
 * queues the key once more, and a reconcile of a key whose object is gone has nothing to do: an error there (a `Get`
 * whose NotFound is returned instead of ignored is the classic) is retried with backoff for as long as the process
 * runs, for an object that will never come back. The advice is in the terms of the reconciler (`kind`), as
 * {@link goneAdvice} words it.
 */
export function failsWhenGoneProblem(afterGone: Pick<DeletionObservation, 'reconciles' | 'failures' | 'lastFailed'>, kind: CheckReconcilerKind): DeletionProblem | undefined {
  // A failure followed by a success recovered on its own: the classic is the finalizer's removal racing the cache (an
  // event of a child queues the key while the cache still holds the Terminating object, whose finalizer `Update` then
  // gets NotFound, and the retry's Get finds it gone). See recoveredAfterGone.
  if (!afterGone.failures.length || !afterGone.lastFailed) return undefined;
  const last = afterGone.failures[afterGone.failures.length - 1]!;
  const notFound = /not ?found|404/i.test(last.message);
  return {
    title: `Fails after the object is gone: ${afterGone.failures.length} of ${afterGone.reconciles} reconcile(s) failed, last with: ${clip(last.message)}`,
    explanation: `The copy was deleted and is gone, and its last delete event queued the key once more, as it always does. That reconcile has nothing to do, yet it failed (${afterGone.failures.length} of ${afterGone.reconciles} reconcile(s) after the copy was gone${afterGone.lastFailed ? (last.terminal ? ', the last one terminal' : ', still retried with backoff') : ''}), last with: ${clip(last.message)}. ${last.terminal ? 'A terminal error is logged as a failure for an object that no longer exists' : 'A failing key is retried with backoff for as long as the process runs, for an object that will never come back: log noise, a queue that never forgets the key, and retry metrics that never settle'}. ${goneAdvice(kind, notFound)}`,
  };
}

/**
 * What {@link failsWhenGoneProblem} advises, in the reconciler's own terms (`kind`): a Go controller's
 * `client.IgnoreNotFound(err)` on its Get and on the cleanup's Delete, a module's 404 caught around `ctx.client.get` /
 * `delete`, an exec program's null `object` on stdin and `--ignore-not-found`; the lab reconciler (Reconcile Lab's
 * own) the plain words. `notFound`: the last error was a NotFound (the read, or a delete, that did not ignore it).
 */
export function goneAdvice(kind: CheckReconcilerKind, notFound: boolean): string {
  const lead = notFound ? 'Treat NotFound as "nothing to do"' : 'Return success when the object is gone: read it first and stop when it is not found';
  switch (kind) {
    case 'go':
      return `${lead}: \`if err := r.Get(ctx, req.NamespacedName, obj); err != nil { return ctrl.Result{}, client.IgnoreNotFound(err) }\` on the Get of the object, and \`client.IgnoreNotFound(err)\` on the Delete of what the cleanup removes (already gone is done).`;
    case 'module':
      return `${lead}: catch the 404 of \`ctx.client.get(ctx.primary, request.namespace, request.name, ctx.signal)\` and return \`{}\` (\`if (e.code === 404) return {};\`), and treat a 404 of the cleanup's \`ctx.client.delete\` as done.`;
    case 'exec':
      return `${lead}: when \`object\` on stdin is null, print \`{}\` and exit 0, and treat a NotFound of kubectl as done (\`kubectl get … --ignore-not-found\`, \`kubectl delete … --ignore-not-found\`).`;
    default:
      return `${lead}${notFound ? ' on the first read, and a NotFound of the cleanup\'s delete as done' : ''}.`;
  }
}

/**
 * How a reconciler of `kind` treats a cleanup target that is already gone as success, in its own terms (the cleanup's
 * delete answered NotFound, as {@link goneAdvice} says it for the object itself): a Go controller's
 * `client.IgnoreNotFound(err)`, a module's 404 of `ctx.client.delete`, an exec program's `--ignore-not-found`;
 * undefined for the lab reconciler (Reconcile Lab's own: the plain words say it).
 */
export function cleanupGoneIdiom(kind: CheckReconcilerKind): string | undefined {
  switch (kind) {
    case 'go':
      return '`client.IgnoreNotFound(err)` on the Delete of what the cleanup removes';
    case 'module':
      return 'a 404 of the cleanup\'s `ctx.client.delete` is done';
    case 'exec':
      return '`kubectl delete … --ignore-not-found`';
    default:
      return undefined;
  }
}

/**
 * The words added to the deletion check's message when reconciles after the object was gone failed but the last one
 * succeeded (no finding: {@link failsWhenGoneProblem}); undefined when none failed or the last one failed.
 */
export function recoveredAfterGone(afterGone: Pick<DeletionObservation, 'reconciles' | 'failures' | 'lastFailed'>): string | undefined {
  if (!afterGone.failures.length || afterGone.lastFailed) return undefined;
  const last = afterGone.failures[afterGone.failures.length - 1]!;
  return `${afterGone.failures.length} of ${afterGone.reconciles} reconcile(s) after it was gone failed (last: ${clip(last.message)}${/not ?found|404/i.test(last.message) ? '; a reconcile that still read the Terminating object from the cache' : ''}), then one succeeded`;
}

/**
 * Polls `get` (every `intervalMs` on `clock`) until it reports the object gone (undefined, or a 404 it throws), or
 * `boundMs` passed. Resolves with the last object seen when not gone. Rejects when `signal` aborts or `get` throws
 * anything but a 404.
 */
export async function waitUntilGone(clock: Clock, get: () => Promise<KubeObject | undefined>, boundMs: number, signal: AbortSignal, intervalMs = 100): Promise<{ gone: boolean; ms: number; last?: KubeObject }> {
  const start = clock.now();
  for (;;) {
    if (signal.aborted) throw signal.reason;
    let obj: KubeObject | undefined;
    try {
      obj = await get();
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    const ms = clock.now() - start;
    if (!obj) return { gone: true, ms };
    if (ms >= boundMs) return { gone: false, ms, last: obj };
    await sleep(clock, intervalMs, signal);
  }
}

/**
 * What a deletion leaves behind, for comparing two deletions: `raw` without the deleted copy itself and without
 * the objects the copy owns (ownerReferences naming `copyUid`: the garbage collector removes those on its own
 * schedule, so whether they are still listed is timing, not the reconciler's doing). What remains is what the
 * reconciler's cleanup had to remove itself (an un-owned object, a record elsewhere).
 */
export function afterDeletion<T extends { objects: Array<{ resource: string; object: KubeObject }> }>(raw: T, copyUid: string): T {
  return {
    ...raw,
    objects: raw.objects.filter(({ object: o }) => o.metadata.uid !== copyUid && !(o.metadata.ownerReferences ?? []).some((r) => r.uid === copyUid)),
  };
}

/**
 * The crash points of a deletion: for the `writes` (ok writes, in order) the reference deletion made after the
 * delete, the 1-based indexes i = 1…k−1 after which a crash leaves work undone (none for k < 2), at most `max`.
 */
export function deletionCrashPoints(writes: number, max: number): number[] {
  const out: number[] = [];
  for (let i = 1; i < writes && out.length < max; i++) out.push(i);
  return out;
}

/**
 * The primary copy a crash during the deletion left Terminating, as {@link crashDuringDeletionProblem} names it:
 * `object` labels it ("widgets.lab.reconcile.dev ns/w"), `finalizers` are those still on it at the end, and
 * `restarted` sums up the reconciles of the controller that took over after the crash (their writes of any object).
 */
export interface StuckAfterCrash {
  object: string;
  finalizers: string[];
  restarted: Pick<DeletionObservation, 'reconciles' | 'failures' | 'lastFailed'> & { writes: number };
}

/** What the restarted controller did about the Terminating copy, in words (for {@link crashDuringDeletionProblem}). */
function restartedText(s: StuckAfterCrash, finalizer: string): string {
  const r = s.restarted;
  if (!r.reconciles) return `the restarted controller never reconciled it (a predicate or event filter may drop the update that sets deletionTimestamp), so nothing removes ${finalizer}`;
  if (r.lastFailed && r.failures.length) {
    const last = r.failures[r.failures.length - 1]!;
    return `the restarted controller's reconcile(s) of it failed ${r.failures.length} time(s), last with: ${clip(last.message)}; the cleanup cannot succeed a second time, so ${finalizer} is never removed`;
  }
  const wrote = r.writes ? `made ${r.writes} write(s), none of which removed it` : 'wrote nothing';
  return `the restarted controller's ${r.reconciles} reconcile(s) succeeded and ${wrote}. The usual cause: the deletion branch returns early when what it cleans up is already gone (the controller that crashed had removed it), so it never gets to removing the finalizer`;
}

/**
 * Title and explanation of a crash during deletion whose end state differs from the uninterrupted deletion's.
 * `leftovers` are the end-state keys ("configmaps/x") only the crashed run has; `stuck` describes the copy itself
 * when it still exists (left Terminating); `crashedAfter` describes write i ("patch widgets.x ns/w"). Invariant: the
 * title names the write and what was left (the first three leftovers, and the copy with the finalizers still on
 * it), the explanation says why nothing ever cleans it up (for a stuck copy: what the restarted controller's
 * reconciles did instead of removing the finalizer) and the usual fix, in the reconciler's terms (`kind`, default lab:
 * {@link cleanupGoneIdiom}).
 */
export function crashDuringDeletionProblem(o: { i: number; k: number; crashedAfter: string; leftovers: string[]; stuck?: StuckAfterCrash; diffs: string[]; finalizerGone: boolean; kind?: CheckReconcilerKind }): DeletionProblem {
  const idiom = cleanupGoneIdiom(o.kind ?? 'lab');
  const fins = o.stuck?.finalizers ?? [];
  const finalizer = fins.length ? `${fins.length > 1 ? 'finalizers' : 'finalizer'} ${fins.join(', ')}` : 'its finalizer';
  const stuckTitle = o.stuck
    ? `${o.stuck.object} stays Terminating${fins.length ? `: ${finalizer} ${fins.length > 1 ? 'are' : 'is'} never removed` : ''}`
    : '';
  const leftTitle = o.leftovers.length ? `${o.leftovers.slice(0, 3).join(', ')}${o.leftovers.length > 3 ? ` and ${o.leftovers.length - 3} more` : ''} ${o.leftovers.length > 1 ? 'are' : 'is'} left behind` : '';
  const what = [leftTitle, stuckTitle].filter(Boolean).join('; ') || 'the end state differs from an uninterrupted deletion';
  const diffs = o.diffs.length ? ` (${o.diffs.slice(0, 4).join('; ')}${o.diffs.length > 4 ? '; …' : ''})` : '';
  const lost = o.finalizerGone
    ? ` Write ${o.i} removed the last finalizer, so the server deleted the object at once: no reconcile of it ever runs again, and the cleanup that was to follow is lost for good.`
    : '';
  const stuck = o.stuck
    ? ` ${o.stuck.object} still exists with deletionTimestamp set${fins.length ? ` and ${finalizer}` : ''}: ${restartedText(o.stuck, finalizer)}. The object hangs in Terminating forever (and so does a namespace being deleted around it).`
    : '';
  return {
    title: `Crash during the deletion after write ${o.i} of ${o.k} (${o.crashedAfter}): ${what}`,
    explanation: `While the copy was being deleted, the controller stopped right after write ${o.i} of ${o.k} (${o.crashedAfter}), as a crash, an eviction or a leader change may stop it, and a new controller took over. An uninterrupted deletion cleaned up, this one did not: ${what}${diffs}.${lost}${stuck} A finalizer exists to guarantee another reconcile until the cleanup is done: clean up first (treat "already gone" as success and go on${idiom ? `: ${idiom}` : ''}), remove the finalizer last.`,
  };
}

/**
 * The children a deletion orphans: objects the controller created (`creates`: its ok, persisted creates before the
 * delete, as resource label "configmaps" / "shelves.h10.example.org", namespace and name) that are still in `raw`
 * after the deletion settled and carry no ownerReference at all (`copyUid`: the deleted copy, never reported itself).
 * Nothing removes such an object: the garbage collector only follows ownerReferences, and the controller's cleanup
 * did not delete it. One with an ownerReference (to the copy, or to another of its children: collected in a chain)
 * is left to the garbage collector.
 * Returns "resource/name" labels, in the order of the creates, each once.
 */
export function orphansAfterDeletion(raw: { objects: Array<{ resource: string; object: KubeObject }> }, creates: ReadonlyArray<{ resource: string; namespace?: string; name: string }>, copyUid: string): string[] {
  const out: string[] = [];
  for (const c of creates) {
    const label = `${c.resource}/${c.name}`;
    if (out.includes(label)) continue;
    const left = raw.objects.find(({ resource, object: o }) => resource === c.resource && o.metadata.name === c.name && (o.metadata.namespace ?? undefined) === (c.namespace ?? undefined));
    if (!left || left.object.metadata.uid === copyUid) continue;
    // Any ownerReference puts it in the garbage collector's hands: to the copy, or to an object owned by it (a child's
    // child, collected a moment later with background propagation) — never reported, so a chain of owners is no
    // false alarm.
    if ((left.object.metadata.ownerReferences ?? []).length > 0) continue;
    out.push(label);
  }
  return out;
}

/**
 * Title and explanation of children left behind by a deletion (`orphans`: "resource/name", from
 * {@link orphansAfterDeletion}), with the fix in the terms of the reconciler's `kind` ({@link ownerReferenceIdiom}).
 */
export function orphansProblem(orphans: readonly string[], kind: CheckReconcilerKind = 'lab'): DeletionProblem {
  const what = `${orphans.slice(0, 3).join(', ')}${orphans.length > 3 ? ` and ${orphans.length - 3} more` : ''}`;
  return {
    title: `Left behind after the delete: ${what} (created by the controller, no ownerReference)`,
    explanation: `The controller created ${orphans.length > 1 ? 'these objects' : 'this object'} for the copy, but ${orphans.length > 1 ? 'they carry' : 'it carries'} no ownerReference and the controller's cleanup did not delete ${orphans.length > 1 ? 'them' : 'it'}: after the copy was deleted ${orphans.length > 1 ? 'they stay' : 'it stays'} for good (the garbage collector only removes objects whose ownerReferences name a deleted owner). Set the owner on each child you create (${ownerReferenceIdiom(kind)}), or delete it in a finalizer before removing the finalizer.`,
  };
}

/**
 * How a reconciler of `kind` sets the owner of a child it creates, in its own terms: a Go controller's
 * `controllerutil.SetControllerReference`, a module's `metadata.ownerReferences` on the object it passes to
 * `ctx.client.create`, an exec program's `ownerReferences` in the manifest it applies (from the `object` on stdin);
 * the lab reconciler (Reconcile Lab's own) the plain words.
 */
export function ownerReferenceIdiom(kind: CheckReconcilerKind): string {
  switch (kind) {
    case 'go':
      return '`controllerutil.SetControllerReference(obj, child, r.Scheme())`';
    case 'module':
      return '`metadata.ownerReferences: [{ apiVersion, kind, name, uid, controller: true }]` of the object, on what you pass to `ctx.client.create`';
    case 'exec':
      return '`ownerReferences` with the object\'s apiVersion, kind, name and uid (from `object` on stdin) and `controller: true` in the manifest your program creates';
    default:
      return 'an ownerReference to the object, with `controller: true`';
  }
}
