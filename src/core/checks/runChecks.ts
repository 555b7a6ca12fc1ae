import { realClock, sleep } from '../clock.ts';
import { writeDiff } from '../actions/objectDiff.ts';
import type { JournalEntry } from '../journal/journal.ts';
import { writeErrorText, type WriteRecord } from '../k8s/dynamicClient.ts';
import { keyFor, splitKey, type ObjectKey } from '../k8s/keys.ts';
import type { GroupVersionResource, KubeObject, ResourceInfo } from '../k8s/objects.ts';
import { nullLogger } from '../log.ts';
import { LAST_APPLIED, MASK } from '../k8s/secretMask.ts';
import { rfc3339 } from '../reconcilers/conditions.ts';
import { CONFIGMAPS, SECRETS, copyInto, currentResourceVersion, createScratchNamespace, deleteScratch, patchCopy, redirectedNote, resourceLabelOf, settle, snapshot, startRun, type CheckRun, type HarnessEnv, type ScratchCopy, viewKeyOf } from './harness.ts';
import { GoCheckRunner } from './goRun.ts';
import { cleanupLeftovers } from './leftovers.ts';
import { referencesNote } from './references.ts';
import { CheckFootprint, confinementFailure, confinementMessage } from './confinement.ts';
import { isIdleApply, writeTargetText, writeText } from '../journal/writeText.ts';
import { deriveSpecMutation, mergeParts, specSchemaOf, type SpecMutationPart } from './specMutation.ts';
import { createdBy, createsOutsideScratch, DRIFT_SUFFIX, driftTargets, ownsHint, unownedChildCause } from './drift.ts';
import { revertPatch } from './revert.ts';
import { afterDeletion, crashDuringDeletionProblem, deletionCrashPoints, deletionVerdict, failsWhenGoneProblem, goneIndex, orphansAfterDeletion, recoveredAfterGone, orphansProblem, reconcilesAfter, waitUntilGone } from './deletion.ts';
import { isNotFound } from '../k8s/client.ts';
import { compareEndStates, differingPaths, endStateDiff, flatten, learnGeneratedNames, maskedFieldsOf, normalizeEndState, VOLATILE_FIELDS, type EndState, type NameRule, type RawEndState } from './mask.ts';
import { CHECK_KINDS, CHECK_TITLES, type CheckKind, type CheckProgress, type CheckProgressEvent, type CheckReconcilerKind, type CheckReport, type CheckResult, type CheckTimingPart, type CheckWrite, type Finding, type Perturbation, type RunChecksOptions } from './types.ts';

/** The start of a result's message when it was skipped because the reference run never went idle (see {@link skippedUnsettled}). */
export const UNSETTLED_SKIP = 'skipped: the reference run did not settle';

/** Whether a check was skipped because the reconciler never settled: nothing was checked, and it did not converge. */
export function skippedUnsettled(r: { status: string; message?: string }): boolean {
  return r.status === 'skipped' && (r.message ?? '').startsWith(UNSETTLED_SKIP);
}

/** Thrown (before anything is written) when the checks refuse to run: an unconfirmed non-local cluster, bad options. */
export class CheckRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckRefusedError';
  }
}

/** The default transition of the unobserved-state check: an annotation added (the intermediate state), then removed. */
export const DEFAULT_TRANSITIONS: readonly unknown[] = [
  { metadata: { annotations: { 'checks.reconcile-lab.dev/intermediate': 'true' } } },
  { metadata: { annotations: { 'checks.reconcile-lab.dev/intermediate': null } } },
];

function transitionsOf(ctx: KeyContext): readonly unknown[] {
  return ctx.o.transitions?.length ? ctx.o.transitions : DEFAULT_TRANSITIONS;
}

const MAX_CRASH_POINTS = 8;
const MAX_JOURNAL = 300;

interface KeyContext {
  env: HarnessEnv;
  o: RunChecksOptions;
  key: ObjectKey;
  boundMs: number;
  resources: ResourceInfo[];
  /** Labels of the resources {@link learnWrittenResources} added to {@link resources} (for the report's note). */
  learnedResources: string[];
  /**
   * How this key's reconciler names children it makes unique itself, learned from its two reference runs (empty
   * until then, and for a deterministic reconciler): every end state of the key is normalized with them.
   */
  nameRules: NameRule[];
  namespaces: string[];
  clusterCopies: Map<string, string>;
  parts: CheckTimingPart[];
  emit: (e: CheckProgressEvent) => void;
  findingSeq: { n: number };
}

/** Refusal rules, checked before anything touches the cluster. */
export function refusalOf(o: RunChecksOptions): string | undefined {
  if (!o.keys.length) return 'no key to check';
  if (!o.cluster.local && o.confirmCluster !== o.cluster.name) {
    return `refusing to run checks against "${o.cluster.name}": it is not the local control plane. The checks only write copies in scratch namespaces, but they do write; confirm the cluster by name (--confirm-cluster ${o.cluster.name}).`;
  }
  for (const c of o.checks ?? []) if (!CHECK_KINDS.includes(c)) return `unknown check "${String(c)}" (checks: ${CHECK_KINDS.join(', ')})`;
  if (o.reconcilerSpec?.kind === 'go' && !o.go?.command.length) return 'no Go program to check (a command line)';
  return undefined;
}

function timed<T>(ctx: KeyContext, parts: CheckTimingPart[], part: string, f: () => Promise<T>): Promise<T> {
  const start = ctx.env.clock.now();
  return f().finally(() => {
    const p = { part, ms: ctx.env.clock.now() - start };
    parts.push(p);
    ctx.parts.push(p);
  });
}

async function scratch(ctx: KeyContext, purpose: string): Promise<{ ns: string; copy: ScratchCopy }> {
  const ns = await createScratchNamespace(ctx.env, `${purpose} of ${ctx.key}`);
  ctx.namespaces.push(ns);
  const copy = await copyInto(ctx.env, ctx.key, ns);
  if (!ctx.env.primary.namespaced) ctx.clusterCopies.set(ns, copy.name);
  return { ns, copy };
}

function checkWriteOf(w: WriteRecord): CheckWrite {
  const label = `${resourceLabelOf(w.gvr)}/${writeTargetText(w.key, w.subresource)}`;
  const cw: CheckWrite = {
    verb: w.verb,
    resource: resourceLabelOf(w.gvr),
    // A create with generateName: the name the server chose.
    objectKey: w.verb === 'create' && w.after?.metadata.name ? keyFor(w.namespace, w.after.metadata.name) : w.key,
    outcome: w.outcome,
    diff: w.outcome === 'ok' ? writeDiff(label, w) : '',
  };
  if (w.subresource) cw.subresource = w.subresource;
  if (w.error) cw.error = writeErrorText(w.error);
  if (w.warnings?.length) cw.warnings = [...w.warnings];
  if (w.resourceVersionBefore) cw.resourceVersionBefore = w.resourceVersionBefore;
  if (w.resourceVersionAfter) cw.resourceVersionAfter = w.resourceVersionAfter;
  if (w.deleted) cw.deleted = true;
  return cw;
}

/** A recorded write as finding titles and explanations name it: {@link writeText}, the form of the write lists too. */
export function describeWrite(w: WriteRecord): string {
  return writeText({ verb: w.verb, resource: resourceLabelOf(w.gvr), objectKey: w.key, subresource: w.subresource });
}

function journalOf(run: CheckRun, scratchKey: ObjectKey): JournalEntry[] {
  const mine = run.entries.filter((e) => e.key === scratchKey || (e.kind === 'informer' && e.enqueued.includes(scratchKey)) || e.kind === 'warning');
  return mine.slice(-MAX_JOURNAL);
}

function finding(ctx: KeyContext, f: Omit<Finding, 'id' | 'key' | 'reproduce'>): Finding {
  const flags = ctx.o.reproduceFlags ? ` ${ctx.o.reproduceFlags}` : '';
  return { id: `${f.check}:${ctx.key}:${++ctx.findingSeq.n}`, key: ctx.key, reproduce: `reconcile-lab check ${ctx.key} --check ${f.check}${flags}`, ...f };
}

function okWrites(run: CheckRun, from = 0): WriteRecord[] {
  return run.writes.slice(from).map((w) => w.record).filter((w) => w.outcome === 'ok' && !w.dryRun);
}

/** Groups the ok writes of the scratch key's reconciles: one array per reconcile, in order. */
function writesPerReconcile(run: CheckRun, scratchKey: ObjectKey): number[] {
  const groups: number[] = [];
  for (const e of run.entries) {
    if (e.key !== scratchKey) continue;
    if (e.kind === 'reconcileStart') groups.push(0);
    else if (e.kind === 'write' && !e.error && !e.dryRun && groups.length) groups[groups.length - 1]!++;
  }
  return groups;
}

interface Reference {
  ns: string;
  copy: ScratchCopy;
  settled: boolean;
  settleMs: number;
  /** The end state as listed (normalized again once the name rules are learned). */
  raw: RawEndState;
  end: EndState;
  groups: number[];
  writes: WriteRecord[];
  run: CheckRun;
}

async function referenceRun(ctx: KeyContext, parts: CheckTimingPart[], n: number, keepRunning: boolean): Promise<Reference> {
  return timed(ctx, parts, `reference run ${n}`, async () => {
    ctx.emit({ kind: 'step', key: ctx.key, message: `reference run ${n}` });
    const { ns, copy } = await scratch(ctx, `reference run ${n}`);
    const run = await startRun(ctx.env, ns, { key: copy.scratchKey });
    try {
      const s = await settle(ctx.env, run, ctx.boundMs);
      learnWrittenResources(ctx, run, ns);
      const raw = await snapshot(ctx.env, ns, copy, ctx.resources);
      const end = normalizeEndState(raw, ctx.nameRules);
      const ref: Reference = { ns, copy, settled: s.settled, settleMs: s.ms, raw, end, groups: writesPerReconcile(run, copy.scratchKey), writes: okWrites(run), run };
      if (!keepRunning) await run.stop();
      return ref;
    } catch (e) {
      await run.stop();
      throw e;
    }
  });
}

/**
 * A note when the reference run's scratch copy of a custom resource was written by someone else than the reconciler
 * under check: a resourceVersion it was seen at (read before one of the run's writes to it, or at the end) is neither
 * the one it was created with nor that of any write the run journaled. Another instance of the controller reconciling every namespace (a `reconcile-lab run --go` left
 * running, the controller deployed in the cluster) acts on the scratch copies too, and its writes make findings that
 * are not the reconciler's. Built-in kinds are left out: kube-controller-manager legitimately writes some of them
 * (a Deployment's status).
 */
export function foreignWriterNote(ref: Pick<Reference, 'raw' | 'copy' | 'writes'>, key: ObjectKey, primary: GroupVersionResource): string | undefined {
  if (!primary.group.includes('.') || primary.group.endsWith('.k8s.io')) return undefined;
  const label = resourceLabelOf(primary);
  const copy = ref.raw.objects.find((o) => o.resource === label && o.object.metadata.name === ref.copy.name);
  const onCopy = ref.writes.filter((w) => w.gvr.group === primary.group && w.gvr.resource === primary.resource && w.name === ref.copy.name);
  // Every resourceVersion the copy had that the harness or the reconciler made; a stale cache only shows older ones.
  const made = new Set([ref.copy.createdResourceVersion, ...onCopy.map((w) => w.resourceVersionAfter).filter((rv): rv is string => rv !== undefined)]);
  // What was seen of it: the version each write found (read before it) and the final one.
  const seen = [...onCopy.map((w) => w.resourceVersionBefore), copy?.object.metadata.resourceVersion].filter((rv): rv is string => rv !== undefined && rv !== '');
  const other = seen.find((rv) => !made.has(rv));
  if (other === undefined) return undefined;
  return `The scratch copy of ${key} was changed by a writer the checks did not run (it was seen at resourceVersion ${other}, which none of the writes of the reconciler under check made): another instance of this controller reconciling every namespace — a reconcile-lab run --go or Run Controller… left running, or the controller deployed in the cluster — acts on the scratch copies too, and findings may be its doing. Stop it (or scope it to its namespaces) and check again.`;
}

/**
 * Adds to the compared resources ({@link KeyContext.resources}, shared by every key of the run and by the cleanup)
 * each namespaced resource the reconciler wrote in the scratch namespace `ns` during `run` that is not compared yet:
 * a controller's children are whatever it creates (a Go controller's Secrets, Services, Deployments…), not only the
 * resources the run was configured with, and a child left over by a crash or a stale view must show in the end state.
 */
function learnWrittenResources(ctx: KeyContext, run: CheckRun, ns: string): void {
  for (const w of okWrites(run)) {
    if (w.namespace !== ns || ctx.resources.some((r) => r.group === w.gvr.group && r.resource === w.gvr.resource)) continue;
    const kind = (w.after?.kind ?? w.before?.kind ?? '') as string;
    ctx.resources.push({ group: w.gvr.group, version: w.gvr.version, resource: w.gvr.resource, kind, namespaced: true });
    ctx.learnedResources.push(resourceLabelOf(w.gvr));
  }
}

/** Check 1: one more reconcile of the settled state writes nothing. */
async function checkRunTwice(ctx: KeyContext, ref: Reference, parts: CheckTimingPart[]): Promise<Pick<CheckResult, 'status' | 'message' | 'findings'>> {
  return timed(ctx, parts, 'second reconcile', async () => {
    const run = ref.run;
    run.controller.pause();
    const from = run.writes.length;
    const step = await run.stepKey(ref.copy.scratchKey);
    const writes = okWrites(run, from);
    const findings: Finding[] = [];
    const perturbation: Perturbation = { check: 'runTwice', description: 'reconciled the key once more after it had settled, with nothing changed in between' };
    /** No-op server-side applies: sending the whole intent on every pass is how apply is meant to be used, not a finding. */
    const idleApplies: string[] = [];
    for (const w of writes) {
      if (w.verb === 'create') {
        findings.push(finding(ctx, {
          check: 'runTwice', severity: 'error', perturbation, diff: '', writes: [checkWriteOf(w)], journal: journalOf(run, ref.copy.scratchKey),
          title: `Second reconcile created another ${resourceLabelOf(w.gvr)} (${w.after?.metadata.generateName ? `generateName "${w.after.metadata.generateName}"` : w.name})`,
          explanation: `Nothing changed, yet reconciling again created a new object${w.after?.metadata.generateName ? ' with generateName, so every pass adds one more' : ''}. A reconciler must be idempotent: look for the existing child (a fixed name derived from the owner, or a label selector) before creating, and create only when it is missing.`,
        }));
      } else if (w.verb !== 'delete' && !w.deleted && w.resourceVersionBefore && w.resourceVersionBefore === w.resourceVersionAfter) {
        if (isIdleApply(w)) {
          idleApplies.push(describeWrite(w));
          continue;
        }
        findings.push(finding(ctx, {
          check: 'runTwice', severity: 'warning', perturbation, diff: '', writes: [checkWriteOf(w)], journal: journalOf(run, ref.copy.scratchKey),
          title: `No-op write on the second reconcile: ${describeWrite(w)} (resourceVersion ${w.resourceVersionBefore} unchanged)`,
          explanation: droppedFieldsNote(w) ?? `The second reconcile sent ${describeWrite(w)} although the object already was as desired: the server accepted it and changed nothing. Every reconcile then costs an API write; compare the desired state with the observed one and write only when they differ.`,
        }));
      }
    }
    const outcome = step.kind === 'reconciled' ? step.outcome.kind : step.kind;
    const applies = idleApplies.length ? `; its ${idleApplies.length === 1 ? 'server-side apply' : `${idleApplies.length} server-side applies`} (${idleApplies.join(', ')}) changed nothing, as apply sent with the whole intent on every pass should` : '';
    const changing = writes.length - idleApplies.length;
    return findings.length
      ? { status: 'failed', findings, message: `${findings.length} write(s) on the second reconcile${applies}` }
      : { status: 'passed', findings, message: `the second reconcile wrote nothing (${changing ? `${changing} changing write(s) left to the convergence check` : 'outcome ' + outcome})${applies}` };
  });
}


/**
 * Why a write changed nothing when the server said it dropped fields of it (`unknown field "status.phase"`): the
 * object never holds what the reconciler sends, so a reconciler that compares before writing still sees a difference
 * and writes again on every pass. Undefined when the server warned of no unknown field.
 */
export function droppedFieldsNote(w: WriteRecord): string | undefined {
  const fields = (w.warnings ?? []).map((t) => /^unknown field "([^"]+)"/.exec(t)?.[1]).filter((f): f is string => f !== undefined);
  if (!fields.length) return undefined;
  return `The second reconcile sent ${describeWrite(w)} and the server changed nothing, because it dropped ${fields.map((f) => `"${f}"`).join(', ')}: ${fields.length === 1 ? 'that field is' : 'those fields are'} not in the resource's schema (server warning: unknown field), so the object never holds ${fields.length === 1 ? 'it' : 'them'} and every pass that compares before writing finds a difference and writes again. Add ${fields.length === 1 ? 'the field' : 'the fields'} to the CRD (for a kubebuilder project: make manifests, then install the CRD again), or stop setting ${fields.length === 1 ? 'it' : 'them'}.`;
}

/**
 * Crash after write: the advice when the restarted controller created an object with a generateName prefix the
 * controller had already created one with before the crash (`before`: the writes up to the crash, `after`: the
 * restarted controller's): the name the server chose was known only to the stopped process (kept in memory, or in
 * status written later), so the restarted one made another. Undefined when it did not.
 */
export function generateNameAfterCrashNote(before: readonly WriteRecord[], after: readonly WriteRecord[]): string | undefined {
  for (const w of after) {
    const prefix = generatedPrefix(w);
    if (!prefix) continue;
    const earlier = before.find((b) => generatedPrefix(b) === prefix && b.gvr.resource === w.gvr.resource && b.gvr.group === w.gvr.group && b.namespace === w.namespace);
    if (!earlier) continue;
    const r = resourceLabelOf(w.gvr);
    return ` The restarted controller created ${r} ${w.name} with generateName "${prefix}", though the stopped one had already created ${earlier.name}: the name the server chooses is known only to the process that sent the create (and to wherever it wrote it afterwards, such as status), so a crash in between leaves the first one behind and the next reconcile makes another. Give the child a name derived from the owner (a second create then gets AlreadyExists), or find the earlier one by label and ownerReference before creating.`;
  }
  return undefined;
}

/**
 * The prefix of a create the server named from metadata.generateName ("soil-" for soil-2rnzn), else undefined: such
 * creates make a new object each time, so they are counted together.
 */
function generatedPrefix(w: WriteRecord): string | undefined {
  const prefix = w.verb === 'create' ? w.after?.metadata.generateName : undefined;
  return prefix && w.name.startsWith(prefix) && w.name !== prefix ? prefix : undefined;
}

/** How the convergence check counts a write: as {@link describeWrite}, creates from one generateName prefix as one. */
function convergenceGroup(w: WriteRecord): string {
  const prefix = generatedPrefix(w);
  return prefix ? writeText({ verb: w.verb, resource: resourceLabelOf(w.gvr), objectKey: keyFor(w.namespace, `${prefix}*`) }) + ' (generateName)' : describeWrite(w);
}

/**
 * The title and explanation of a stale-cache finding: `w`, written from a stale view, set `overwritten` (field paths)
 * back to the values that view held. When the write carried the latest resourceVersion as its precondition (an update
 * of the object as just read from the server), the stale values did not come from a cached copy of that object, so
 * the explanation names where they can come from instead (memory, which a new controller starts without; another
 * object read from the stale cache) rather than a missing precondition.
 */
export function staleOverwriteText(w: WriteRecord, overwritten: string[], view: string): { title: string; explanation: string } {
  const title = `${describeWrite(w)} overwrote newer state with stale values from a view ${view} (${overwritten.slice(0, 3).join(', ')})`;
  const fields = overwritten.slice(0, 5).join(', ');
  const latest = w.before?.metadata.resourceVersion;
  if (w.sentResourceVersion && w.sentResourceVersion === latest) {
    return {
      title,
      explanation: `The controller wrote ${w.key} with the latest resourceVersion (${latest}) as its precondition, so it had read that object fresh from the server, yet ${fields} went back to the values it had before the last change. Those values did not come from a cached copy of ${w.key}; they came from what the reconcile computed them from: state kept in memory between reconciles (a counter, the last spec or generation seen), which a new controller, as after a crash, a restart or a leader change, starts without; or another object read from the stale cache. Derive every written field from the current state of the objects (read what a decision must not take stale from the server), never from what an earlier reconcile remembered.`,
    };
  }
  return {
    title,
    explanation: `The controller read ${w.key} from a cache that lagged behind the server and wrote it back without a resourceVersion precondition: ${fields} went back to the stale values. Send the resourceVersion you read (an update, or a patch carrying metadata.resourceVersion) so the server answers 409 Conflict and the reconcile retries with fresh state.`,
  };
}

/** Check 5: the reference run went idle within the bound. */
function checkConvergence(ctx: KeyContext, ref: Reference): Pick<CheckResult, 'status' | 'message' | 'findings'> {
  const perturbation: Perturbation = { check: 'convergence', description: `left the controller running on an unchanged spec for up to ${ctx.boundMs} ms`, boundMs: ctx.boundMs };
  if (ref.settled) return { status: 'passed', findings: [], message: `idle after ${ref.settleMs} ms and ${ref.writes.length} write(s)` };
  const run = ref.run;
  const writes = okWrites(run);
  const counts = new Map<string, { n: number; w: WriteRecord }>();
  for (const w of writes) {
    const k = convergenceGroup(w);
    counts.set(k, { n: (counts.get(k)?.n ?? 0) + 1, w: counts.get(k)?.w ?? w });
  }
  const top = [...counts.entries()].sort((a, b) => b[1].n - a[1].n)[0];
  const reconciles = run.entries.filter((e) => e.kind === 'reconcileStart' && e.key === ref.copy.scratchKey).length;
  const running = run.controller.snapshot().status.inFlight > 0;
  const last = writes.slice(-3);
  const generated = top ? generatedPrefix(top[1].w) : undefined;
  const flapping = generated ? [] : flappingPaths(writes.filter((w) => top && convergenceGroup(w) === top[0]));
  const failing = failingReconciles(run, ref.copy.scratchKey);
  const seconds = Math.round(ctx.boundMs / 1000);
  // No write of ours, yet the key keeps being queued by updates: written by someone the journal does not see.
  const outsideUpdates = top ? undefined : updateLoopCause(run.entries, ref.copy.scratchKey, reconciles);
  // A key whose reconciles keep failing is retried with backoff: that, not its writes, keeps it busy (one write
  // before the failure, e.g. adding a finalizer, is no hot loop).
  if (failing && (!top || top[1].n < 2)) {
    return {
      status: 'failed',
      message: `not idle after ${ctx.boundMs} ms: the reconcile keeps failing`,
      findings: [finding(ctx, {
        check: 'convergence', severity: 'error', perturbation, diff: '', writes: last.map(checkWriteOf), journal: journalOf(run, ref.copy.scratchKey),
        title: `Never converges: ${failing.errors} of ${reconciles} reconciles failed in ${seconds} s, last with: ${failing.message}`,
        explanation: `The spec did not change, yet ${failing.errors} of its ${reconciles} reconciles ended in an error (the last one too); an error is retried with backoff (5 ms, doubling up to 1000 s), so the key never goes idle. The last error: ${failing.message}. ${failingAdvice(ctx.o.reconcilerSpec.kind, failing.message)}`,
      })],
    };
  }
  // A key whose reconciles keep asking for a rate-limited requeue (Requeue: true) is queued again forever, written or not.
  const requeues = rateLimitedRequeues(run, ref.copy.scratchKey);
  if (requeues && (!top || top[1].n < 2)) {
    const t = requeueForeverText({ requeues: requeues.count, reconciles, seconds, go: ctx.o.reconcilerSpec.kind === 'go' });
    return {
      status: 'failed',
      message: `not idle after ${ctx.boundMs} ms: every reconcile asks to be requeued`,
      findings: [finding(ctx, { check: 'convergence', severity: 'error', perturbation, diff: '', writes: last.map(checkWriteOf), journal: journalOf(run, ref.copy.scratchKey), title: t.title, explanation: t.explanation })],
    };
  }
  return {
    status: 'failed',
    message: `not idle after ${ctx.boundMs} ms`,
    findings: [finding(ctx, {
      check: 'convergence', severity: 'error', perturbation, diff: '', writes: last.map(checkWriteOf), journal: journalOf(run, ref.copy.scratchKey),
      title: top
        ? `Never converges: ${top[1].n} × ${top[0]} in ${seconds} s (${reconciles} reconciles)`
        : running && !outsideUpdates
          ? `Never returns: a reconcile was still running when the bound of ${seconds} s passed (${reconciles} reconcile(s) started)`
          : `Never goes idle: ${reconciles} reconciles in ${seconds} s${outsideUpdates ? `, ${outsideUpdates.count} started by an update of ${outsideUpdates.subject}` : ''}`,
      explanation: generated
        ? `The spec did not change, yet the controller created a new object on every pass (${top![1].n} of them, named from metadata.generateName "${generated}"): each create is a watch event that queues the key again, so it reconciles forever and leaves the objects behind. Look the object up first (a fixed name derived from the owner, or a list by label and owner) and create it only when it is missing.`
        : top
        ? `The spec did not change, yet the controller kept writing: each write is a watch event that queues the key again, so it reconciles forever (a hot loop). ${hotLoopAdvice(writes.filter((w) => convergenceGroup(w) === top[0]), flapping)}`
        : outsideUpdates
          ? `The spec did not change, yet ${outsideUpdates.count} of its ${reconciles} reconciles were started by an update of ${outsideUpdates.subject}, while the run made no write through Reconcile Lab's client: something else changes it on every pass — an exec program's own kubectl write (an apply or replace whose object differs each time: a timestamp, a counter), or another controller. Each change is a watch event that queues the key again, so it reconciles forever (a hot loop). Compare before writing and write only what differs; keep values that change on every pass out of what you write. reconcile-lab run shows each reconcile's trigger with its resourceVersion.`
        : running
          ? `A reconcile was still running when the bound of ${ctx.boundMs} ms passed. If it is merely slow (an exec program on a loaded machine), raise the bound (--convergence-bound); otherwise look for a call that never returns${ctx.o.reconcilerSpec.kind === 'module' ? ' or a Promise that never settles' : ''}: pass ctx.signal to every call${ctx.o.reconcilerSpec.kind === 'go' ? '' : `, and ${ctx.o.reconcileTimeoutMs ? `note that the reconcile deadline of ${ctx.o.reconcileTimeoutMs} ms aborted ctx.signal and the reconcile still did not return: it ignores the signal` : 'give the loop a reconcile deadline (a module\'s options export reconcileTimeoutMs, the setting reconcileLab.workQueue.reconcileTimeoutSeconds, check\'s --reconcile-timeout), which the checks apply too: ctx.signal is aborted, and a reconcile that passes it on fails with its error instead of hanging'}`}.`
          : `The key kept being reconciled (errors retried, or requeues) without reaching a stable state within the bound. Look at the journal for the failing reconcile.`,
    })],
  };
}

/**
 * The object whose updates started most reconciles of `scratchKey` — the object itself, an owned child or a watched
 * object — as `count` (reconciles it started) and `subject` ("owned ConfigMap ns/x-plan", "the object itself (ns/x)",
 * "watched Secret ns/s"); undefined unless it started at least 3 and at least half of the `reconciles`. An initial
 * list and a delete are no update.
 */
export function updateLoopCause(entries: readonly JournalEntry[], scratchKey: ObjectKey, reconciles: number): { count: number; subject: string } | undefined {
  const counts = new Map<string, number>();
  for (const e of entries) {
    if (e.kind !== 'reconcileStart' || e.key !== scratchKey) continue;
    const subjects = new Set<string>();
    for (const t of e.triggers) {
      if ((t.kind !== 'informer' && t.kind !== 'owned' && t.kind !== 'watch') || t.event !== 'update' || t.initial) continue;
      subjects.add(
        t.kind === 'informer'
          ? `the object itself (${t.objectKey})`
          : t.kind === 'owned'
            ? `owned ${t.childKind ?? t.resource} ${t.child}`
            : `watched ${t.objectKind ?? t.resource} ${t.objectKey}`,
      );
    }
    for (const subject of subjects) counts.set(subject, (counts.get(subject) ?? 0) + 1);
  }
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1])[0];
  return top && top[1] >= 3 && top[1] * 2 >= reconciles ? { count: top[1], subject: top[0] } : undefined;
}

/**
 * The reconciles of `scratchKey` that asked for a rate-limited requeue (the deprecated `Requeue: true`: the loop's
 * `requeue` outcome, a Go controller's requeue-after of 0), when the last one did: their count; else undefined.
 */
function rateLimitedRequeues(run: CheckRun, scratchKey: ObjectKey): { count: number } | undefined {
  let count = 0;
  let last = false;
  for (const e of run.entries) {
    if (e.kind !== 'reconcileEnd' || e.key !== scratchKey) continue;
    // The loop records the deprecated requeue as its own kind; a Go controller's comes as a requeue-after of 0.
    last = e.outcome.kind === 'requeue' || (e.outcome.kind === 'requeueAfter' && e.outcome.afterMs === 0);
    if (last) count++;
  }
  return last ? { count } : undefined;
}

/**
 * The convergence finding's title and explanation when the key never went idle because its reconciles (`requeues` of
 * `reconciles` in `seconds`, the last one too) returned `Requeue: true`; `go`: name the controller-runtime calls.
 */
export function requeueForeverText(o: { requeues: number; reconciles: number; seconds: number; go: boolean }): { title: string; explanation: string } {
  const requeue = o.go ? '`ctrl.Result{Requeue: true}`' : 'a requeue (`requeue: true`)';
  return {
    title: `Never goes idle: ${o.requeues} of ${o.reconciles} reconciles in ${o.seconds} s asked to be requeued (Requeue: true)`,
    explanation: `The spec did not change, yet ${o.requeues} of its ${o.reconciles} reconciles (the last one too) returned ${requeue}: the key goes back through the rate limiter (5 ms, doubling up to 1000 s) and is reconciled again, for as long as the process runs, whether or not anything changed — a retry with no error to say why. If it waits for something that will change, watch that (${o.go ? '`Owns` or `Watches`: its event queues the key' : 'its event queues the key'}) or poll at an interval you choose with ${o.go ? '`ctrl.Result{RequeueAfter: 30 * time.Second}`' : 'a requeue-after'}${o.go ? ' (controller-runtime deprecates `Requeue` in favour of `RequeueAfter`)' : ''}; when it has nothing left to do, return ${o.go ? '`ctrl.Result{}`' : 'no requeue'}.`,
  };
}

/** The failed reconciles (error outcome) of `scratchKey` when its last reconcile failed: their count and the last message (clipped); else undefined. */
function failingReconciles(run: CheckRun, scratchKey: ObjectKey): { errors: number; message: string } | undefined {
  let errors = 0;
  let last: string | undefined;
  for (const e of run.entries) {
    if (e.kind !== 'reconcileEnd' || e.key !== scratchKey) continue;
    if (e.outcome.kind === 'error') {
      errors++;
      last = e.outcome.message;
    } else last = undefined;
  }
  return last === undefined ? undefined : { errors, message: last.length > 300 ? `${last.slice(0, 300)}…` : last };
}

/**
 * What a convergence finding of a reconcile that keeps failing advises, in the terms of the reconciler's protocol
 * (`kind`): a Go or lab reconciler's RequeueAfter / TerminalError, a module's `requeueAfterMs` / `terminal: true`, an
 * exec program's output fields. A module whose error is Reconcile Lab refusing the module itself (it does not compile
 * or load, lacks the export, or returned something that is no Result: the messages of its loader) is told that the
 * file is what to fix, not the way it reports waiting.
 */
export function failingAdvice(kind: CheckReconcilerKind, message: string): string {
  if (kind === 'module' && /^cannot compile |^loading .* failed: |must export a function "reconcile\(request, ctx\)"|: reconcile\(\) (must resolve to a Result|returned a Result with )|: (requeueAfterMs|reason|priority|requeue) must be (a|an) (number|string|integer|boolean)/.test(message)) {
    return 'The error is about the module itself, not the object: Reconcile Lab cannot use it as it is (it does not compile or load, lacks the reconcile export, or reconcile() returned something that is no Result), so every reconcile fails the same way. Fix the module file; a running loop picks up the saved file at its next retry.';
  }
  if (kind === 'module') return 'If the object cannot be made ready until something else changes, return { requeueAfterMs, reason } (or throw an error with terminal: true for a spec that can never work) instead of throwing; otherwise fix what fails.';
  if (kind === 'exec') return 'If the object cannot be made ready until something else changes, print {"requeueAfterMs": …, "reason": …} (or {"error": …, "terminal": true} for a spec that can never work) instead of an error; otherwise fix what fails.';
  return 'If the object cannot be made ready until something else changes, return a RequeueAfter (or a TerminalError for a spec that can never work) instead of an error; otherwise fix what fails.';
}

/**
 * Why a reference run did not settle, as far as its last reconcile of the copy tells: `; its last reconcile failed: …`
 * (the error, cut at 200 characters: a program that cannot be executed says so here) or '' (it kept succeeding).
 */
function unsettledWhy(ref: Reference): string {
  let last: Extract<JournalEntry, { kind: 'reconcileEnd' }> | undefined;
  for (const e of ref.run.entries) if (e.kind === 'reconcileEnd' && e.key === ref.copy.scratchKey) last = e;
  const o = last?.outcome;
  if (!o || (o.kind !== 'error' && o.kind !== 'terminal')) return '';
  const m = 'message' in o && typeof o.message === 'string' ? o.message : '';
  return `; its last reconcile failed${m ? `: ${m.length > 200 ? `${m.slice(0, 200)}…` : m}` : ''}`;
}

/**
 * A note when the reference run settled *waiting*: its last reconcile of the copy returned a requeue-after (with the
 * copy's Ready=False condition, when it has one). The checks then judged the reconcile up to that wait only — often
 * because the copy lacks an object the real namespace has that the harness did not recognise as a reference of the
 * spec (only Secrets and ConfigMaps named in the usual Kubernetes ways are copied). Undefined when the last reconcile did not requeue-after.
 */
async function waitingNote(ref: Reference, key: ObjectKey, primary: string, copied: boolean, exists?: (o: WaitedObject) => Promise<boolean | undefined>): Promise<string | undefined> {
  let last: Extract<JournalEntry, { kind: 'reconcileEnd' }> | undefined;
  for (const e of ref.run.entries) if (e.kind === 'reconcileEnd' && e.key === ref.copy.scratchKey) last = e;
  if (last?.outcome.kind !== 'requeueAfter') return undefined;
  const seconds = Math.round(last.outcome.afterMs / 100) / 10;
  const copy = ref.raw.objects.find((o) => o.resource === primary && o.object.metadata.name === ref.copy.name && o.object.metadata.namespace === ref.copy.namespace)?.object;
  const ready = ((copy?.status as { conditions?: Array<{ type?: string; status?: string; reason?: string; message?: string }> } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready' && c.status !== 'True');
  const why = last.outcome.reason ?? (ready ? `Ready ${ready.status}${ready.reason ? `, ${ready.reason}` : ''}${ready.message ? `: ${ready.message}` : ''}` : undefined);
  const named = waitedFor(why);
  const absent = named !== undefined && exists !== undefined && (await exists(named)) === false;
  return `The reference run of ${key} settled waiting: its last reconcile asked for a requeue after ${seconds} s${why ? ` (${why.length > 200 ? `${why.slice(0, 200)}…` : why})` : ''}, so the checks judged the reconcile up to that wait only. The object is copied into a scratch namespace with the Secrets and ConfigMaps of its namespace that its spec refers to (secretRef, configMapKeyRef, secretName, volumes, envFrom, valueFrom, a lab-style dependsOn…; ${copied ? 'see the note on what was copied' : 'its spec named none of them in those ways, so nothing else was copied'}): if it waits for anything else of its real namespace (an object named in a way the checks do not recognise, or of another kind), the path after the wait was not checked.${absent ? absentHint(named, splitKey(key).namespace) : copyHint(why)}`;
}

/** A Secret or ConfigMap a wait's reason names (`waiting for Secret tulip-fertilizer`, `ConfigMap x not found`). */
export interface WaitedObject {
  kind: 'secret' | 'configmap';
  name: string;
}

/** The Secret or ConfigMap `why` (a requeue reason, a Ready condition) names, else undefined. */
export function waitedFor(why: string | undefined): WaitedObject | undefined {
  const named = /\b(Secret|ConfigMap)s?\s+"?([a-z0-9]([-a-z0-9.]*[a-z0-9])?)"?/i.exec(why ?? '');
  return named ? { kind: named[1]!.toLowerCase() as WaitedObject['kind'], name: named[2]! } : undefined;
}

/**
 * The end of the waiting note when what the wait names is not in the object's own namespace (`namespace`) either:
 * the original waits for it too, so copying cannot help (`--copy` of it would find nothing); it has to exist first.
 */
export function absentHint(o: WaitedObject, namespace: string | undefined): string {
  const kind = o.kind === 'secret' ? 'Secret' : 'ConfigMap';
  return ` ${kind} ${o.name} is not in ${namespace ? `namespace ${namespace}` : 'the object\'s namespace'} either: the original waits for it too, so there is nothing to copy; create it there and check again to cover what happens after the wait.`;
}

/**
 * How to copy what a wait names: a Secret or ConfigMap named in the reason (`waiting for Secret tulip-fertilizer`) gives
 * `--copy secret/tulip-fertilizer`; otherwise the flag in general.
 */
function copyHint(why: string | undefined): string {
  const named = waitedFor(why);
  if (named) return ` To copy it too: --copy ${named.kind}/${named.name} (CLI), or in reconcileLab.checks.copy (editor).`;
  return ' To copy a Secret or ConfigMap it waits for: --copy secret/<name> or --copy configmap/<name>.';
}

/** Paths whose values differ between the `after` of consecutive writes of one object (what keeps changing). */
function flappingPaths(writes: WriteRecord[]): string[] {
  const out = new Set<string>();
  for (let i = 1; i < writes.length && i < 6; i++) {
    const a = flatten(writes[i - 1]!.after ?? {});
    const b = flatten(writes[i]!.after ?? {});
    for (const p of new Set([...a.keys(), ...b.keys()])) {
      if (p.startsWith('metadata.resourceVersion') || p.startsWith('metadata.managedFields') || p === 'metadata.generation') continue;
      if (JSON.stringify(a.get(p)) !== JSON.stringify(b.get(p))) out.add(p);
    }
  }
  return [...out];
}

/**
 * What a convergence finding of a hot loop tells the developer about `writes` (the repeating write, in order) whose
 * `flapping` fields change on every write: a list that grows by the same writes (an item appended on every pass, such
 * as a finalizer added without looking whether it is there) or a string that extends itself (appended to, not built
 * from the spec) is named as such; then the fields that change (the items of a growing list as the list), and advice
 * for what was written: status, the object itself, or another object (a child).
 */
export function hotLoopAdvice(writes: readonly WriteRecord[], flapping: readonly string[]): string {
  const sample = writes.slice(0, 6).map((w) => w.after ?? {});
  const lists = new Map<string, number[]>();
  const strings = new Map<string, string[]>();
  sample.forEach((obj, i) => {
    const walk = (v: unknown, path: string) => {
      if (Array.isArray(v)) {
        const ls = lists.get(path) ?? [];
        ls[i] = v.length;
        lists.set(path, ls);
      } else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
      } else if (typeof v === 'string') {
        const ss = strings.get(path) ?? [];
        ss[i] = v;
        strings.set(path, ss);
      }
    };
    walk(obj, '');
  });
  const full = (xs: readonly unknown[]) => xs.length === sample.length && sample.length >= 2 && xs.every((x) => x !== undefined);
  const growingLists = [...lists].filter(([p, ls]) => !p.startsWith('metadata.managedFields') && full(ls) && ls.every((n, i) => i === 0 || n > ls[i - 1]!));
  const growingStrings = [...strings].filter(([p, ss]) => !p.startsWith('metadata.') && full(ss) && ss.every((x, i) => i === 0 || (x.length > ss[i - 1]!.length && x.startsWith(ss[i - 1]!))));
  const inGrowing = (p: string) => growingLists.some(([l]) => p.startsWith(`${l}[`));
  const fields = [...growingLists.map(([l]) => l), ...flapping.filter((p) => !inGrowing(p))];
  const parts: string[] = [];
  if (fields.length) parts.push(`The fields that change on every write: ${fields.slice(0, 5).join(', ')}.`);
  for (const [p, ls] of growingLists.slice(0, 2)) {
    const item = p === 'metadata.finalizers' ? ' (a finalizer: add it only when metadata.finalizers lacks it)' : '';
    parts.push(`${p} grows on every write (${ls.slice(0, 3).join(' → ')}${ls.length > 3 ? ' → …' : ''} items): the reconcile appends to it on every pass instead of adding only what is missing; look for the item first${item}.`);
  }
  for (const [p] of growingStrings.slice(0, 2)) {
    parts.push(`${p} grows on every write (each value extends the one before): the reconcile appends to the value that is there instead of building it from the spec; build it from the desired state alone.`);
  }
  const w = writes[0];
  const label = w ? `${resourceLabelOf(w.gvr)} ${w.key}` : 'the object';
  parts.push(
    w?.subresource === 'status'
      ? 'Write status only when it differs from what is there, and keep values that change on every pass (timestamps, counters) out of it.'
      : `Compare ${label} with what you want and write it only when they differ, and keep values that change on every pass (timestamps, counters) out of what you write.`,
  );
  return parts.join(' ');
}

/** " The restarted controller's reconciles failed …" when its last reconcile of the key failed; else "". */
function lastFailure(run: CheckRun, scratchKey: ObjectKey): string {
  let errors = 0;
  let last: { message: string; terminal: boolean } | undefined;
  for (const e of run.entries) {
    if (e.kind !== 'reconcileEnd' || e.key !== scratchKey) continue;
    if (e.outcome.kind === 'error' || e.outcome.kind === 'terminal') {
      errors++;
      last = { message: e.outcome.message, terminal: e.outcome.kind === 'terminal' };
    } else last = undefined;
  }
  if (!last) return '';
  const m = last.message.length > 300 ? `${last.message.slice(0, 300)}…` : last.message;
  return ` The restarted controller's reconciles failed ${errors} time(s) (${last.terminal ? 'the last one terminal: not retried' : 'retried with backoff'}), last with: ${m}.`;
}

/** Check 2: crash right after write i of a reconcile with k writes, restart with a fresh cache and queue. */
async function checkCrashAfterWrite(ctx: KeyContext, ref: Reference, learned: Set<string>, parts: CheckTimingPart[]): Promise<Pick<CheckResult, 'status' | 'message' | 'findings'>> {
  const points: Array<{ global: number; i: number; k: number }> = [];
  let before = 0;
  for (const k of ref.groups) {
    for (let i = 1; i < k; i++) points.push({ global: before + i, i, k });
    before += k;
  }
  if (!points.length) {
    const note = ctx.o.reconcilerSpec.kind === 'exec' ? ' (an exec program\'s own kubectl writes are not seen by the harness: only writes through Reconcile Lab\'s client are crash points)' : '';
    return { status: 'skipped', findings: [], message: `no reconcile made two or more writes, so there is no point to crash in between${note}` };
  }
  const findings: Finding[] = [];
  const notes: string[] = [];
  for (const p of points.slice(0, MAX_CRASH_POINTS)) {
    const desc = `crash after write ${p.i} of ${p.k}`;
    await timed(ctx, parts, `perturbed run (${desc})`, async () => {
      ctx.emit({ kind: 'step', key: ctx.key, check: 'crashAfterWrite', message: desc });
      const { ns, copy } = await scratch(ctx, desc);
      let crashed!: () => void;
      const crashedP = new Promise<void>((r) => (crashed = r));
      let crashedWrite: WriteRecord | undefined;
      const first = await startRun(ctx.env, ns, { key: copy.scratchKey, crashAfterWrites: p.global, onCrash: () => crashed() });
      let reached = false;
      try {
        const s = settle(ctx.env, first, ctx.boundMs).then(() => false);
        reached = await Promise.race([crashedP.then(() => true), s]);
      } finally {
        await first.stop();
      }
      if (!reached) {
        notes.push(`${desc}: the run made fewer writes than the reference, crash point not reached`);
        return;
      }
      crashedWrite = okWrites(first)[p.global - 1];
      const second = await startRun(ctx.env, ns, { key: copy.scratchKey });
      try {
        const s = await settle(ctx.env, second, ctx.boundMs);
        const end = normalizeEndState(await snapshot(ctx.env, ns, copy, ctx.resources), ctx.nameRules);
        const diffs = compareEndStates(ref.end, end, learned);
        if (diffs.length || !s.settled) {
          const failure = lastFailure(second, copy.scratchKey);
          const generated = generateNameAfterCrashNote(okWrites(first).slice(0, p.global), okWrites(second)) ?? '';
          const perturbation: Perturbation = {
            check: 'crashAfterWrite', afterWrite: p.i, ofWrites: p.k,
            description: `stopped the controller right after write ${p.i} of ${p.k}${crashedWrite ? ` (${describeWrite(crashedWrite)})` : ''}, then started a new one with a fresh cache and queue and let it converge`,
          };
          findings.push(finding(ctx, {
            check: 'crashAfterWrite', severity: 'error', perturbation,
            diff: endStateDiff(ref.end, end, learned),
            writes: okWrites(first).slice(0, p.global).concat(okWrites(second)).map(checkWriteOf),
            journal: [...journalOf(first, copy.scratchKey), ...journalOf(second, copy.scratchKey)].slice(-MAX_JOURNAL),
            title: s.settled ? `Interrupted after write ${p.i} of ${p.k}, the restarted controller ends in a different state` : `Interrupted after write ${p.i} of ${p.k}, the restarted controller never settles`,
            explanation: `A controller can stop at any point (crash, eviction, leader change). After it stopped right after ${crashedWrite ? describeWrite(crashedWrite) : `write ${p.i}`}, a fresh controller did not reach the state of an uninterrupted run${diffs.length ? `: ${diffs.slice(0, 4).join('; ')}${diffs.length > 4 ? '; …' : ''}` : ''}.${failure} Each reconcile must work out what is left to do from the observed state (not from which branch it took last time), so that a half-done write sequence is completed${/AlreadyExists|already exists/.test(failure) ? '; an AlreadyExists answer to a create means the earlier run got that far: read the object and go on' : ''}.${generated}`,
          }));
        }
      } finally {
        await second.stop();
      }
    });
  }
  const m = `${Math.min(points.length, MAX_CRASH_POINTS)} crash point(s)${points.length > MAX_CRASH_POINTS ? ` of ${points.length}` : ''}${notes.length ? '; ' + notes.join('; ') : ''}`;
  return findings.length ? { status: 'failed', findings, message: m } : { status: 'passed', findings, message: `${m}: the end state equals the reference each time` };
}

/**
 * Check 3: a controller settles on the copy; the resourceVersion is noted (the freeze point); the server moves on
 * (the changes of {@link staleTransitions} are applied and that controller reconciles them); then a new controller whose cache is frozen
 * at the freeze point reconciles once from that stale view before its watches catch up. A second new controller
 * does the same from a cache frozen right after the copy was made, before any write of the controller (its cache
 * has not seen its own creates: the usual way a controller that looks for its children in the cache makes a
 * second one); when both are frozen at the same resourceVersion, that view is reconciled from once. Oracles: a write from the stale view that deletes or overwrites newer state, and a create from the
 * stale view that leaves an object the settled state did not have (a duplicate, or a resurrected child).
 */
async function checkStaleCache(ctx: KeyContext, parts: CheckTimingPart[], learned: ReadonlySet<string>, createsEveryPass: boolean): Promise<Pick<CheckResult, 'status' | 'message' | 'findings'>> {
  const { ns, copy } = await timed(ctx, parts, 'copy', () => scratch(ctx, 'stale cache'));
  const chosen = await staleTransitions(ctx);
  let transitions: readonly unknown[] = chosen.transitions;
  let metadataOnly = chosen.metadataOnly;
  let changed = chosen.derived ? `${chosen.derived.join(', ')} changed as the schema allows` : `${transitions.length} change(s)`;
  let rv0 = '';
  let childKinds: GroupVersionResource[] = [];
  await timed(ctx, parts, 'first run (then the server moves on)', async () => {
    const run = await startRun(ctx.env, ns, { key: copy.scratchKey });
    try {
      await settle(ctx.env, run, ctx.boundMs);
      childKinds = createdChildKinds(okWrites(run), ns, ctx.env.primary);
      rv0 = await currentResourceVersion(ctx.env, ns);
      const settleEach = () => settle(ctx.env, run, ctx.boundMs);
      const done = await applyChanges(ctx, copy, transitions, chosen.fieldParts, settleEach);
      if (done.refused.length && chosen.derived) {
        const accepted = chosen.derived.filter((f) => !done.refused.some((r) => r.startsWith(`${f} (`)));
        changed = accepted.length ? `${accepted.join(', ')} changed as the schema allows (the server refused ${done.refused.join('; ')}: left out)` : changed;
      }
      if (!done.applied.length) {
        // The server took none of the schema's changes: the metadata-only default keeps the check meaningful for the rest.
        metadataOnly = `the server refused every change the schema allows: ${done.refused.join('; ')}`;
        await applyChanges(ctx, copy, DEFAULT_TRANSITIONS, undefined, settleEach);
        transitions = DEFAULT_TRANSITIONS;
        changed = `${transitions.length} change(s)`;
      } else transitions = done.applied;
    } finally {
      await run.stop();
    }
  });
  const findings: Finding[] = [];
  let staleWrites = 0;
  let duplicatesLeftToRunTwice = 0;
  const freezes = staleFreezes(rv0, copy.createdResourceVersion, transitions, childKinds);
  for (const fz of freezes) {
    await timed(ctx, parts, `perturbed run (${fz.label})`, async () => {
      ctx.emit({ kind: 'step', key: ctx.key, check: 'staleCache', message: `reconcile from a cache frozen at resourceVersion ${fz.rv}` });
      // The settled state this stale reconcile starts from (what is on the server, which its cache lags behind).
      const settledEnd = normalizeEndState(await snapshot(ctx.env, ns, copy, ctx.resources), ctx.nameRules);
      const run = await startRun(ctx.env, ns, { key: copy.scratchKey, startPaused: true, freezeAt: fz.rv, ...(fz.only ? { freezeOnly: [fz.only] } : {}) });
      try {
        const view = await run.frozenView();
        const serverRv = (await ctx.env.client.get(ctx.env.primary, copy.namespace, copy.name, ctx.env.signal)).metadata.resourceVersion;
        const from = run.writes.length;
        await run.stepKey(copy.scratchKey);
        const stale = okWrites(run, from);
        staleWrites += stale.length;
        const thawedAt = run.entries.length;
        await run.thaw();
        run.controller.resume();
        await settle(ctx.env, run, ctx.boundMs);
        const perturbation: Perturbation = { check: 'staleCache', frozenAtResourceVersion: fz.rv, ...(serverRv ? { serverResourceVersion: serverRv } : {}), description: fz.desc };
        for (const w of stale) {
          const viewKey = viewKeyOf(w.gvr, w.namespace, w.name);
          const seen = view.get(viewKey);
          const newer = !seen || (w.before && seen.metadata.resourceVersion !== w.before.metadata.resourceVersion);
          if (!w.before || !newer) continue;
          if (w.verb === 'delete') {
            findings.push(finding(ctx, {
              check: 'staleCache', severity: 'error', perturbation, diff: '', writes: [checkWriteOf(w)], journal: journalOf(run, copy.scratchKey),
              title: `Deleted ${resourceLabelOf(w.gvr)} ${w.key} from a stale view ${fz.view} (${seen ? 'it had changed since' : 'its cache had not seen it yet'})`,
              explanation: `Reconciling from a cache that lagged behind the server, the controller deleted ${resourceLabelOf(w.gvr)} ${w.key}, which ${seen ? `had changed on the server since (resourceVersion ${seen.metadata.resourceVersion} → ${w.before.metadata.resourceVersion})` : 'existed on the server but not yet in its cache'}. Caches lag; decide deletions from the same view you list children from (or re-read from the server first), and delete with a resourceVersion or uid precondition so a stale decision fails instead of destroying newer state.`,
            }));
            continue;
          }
          if (!seen || !w.after) continue;
          const fs = flatten(seen);
          const fb = flatten(w.before);
          const fa = flatten(w.after);
          const overwritten = [...new Set([...fs.keys(), ...fb.keys()])].filter(
            (p) => !p.startsWith('metadata.resourceVersion') && !p.startsWith('metadata.managedFields') && p !== 'metadata.generation' && JSON.stringify(fs.get(p)) !== JSON.stringify(fb.get(p)) && JSON.stringify(fa.get(p)) === JSON.stringify(fs.get(p)),
          );
          if (overwritten.length) {
            findings.push(finding(ctx, {
              check: 'staleCache', severity: 'error', perturbation, diff: '', writes: [checkWriteOf(w)], journal: journalOf(run, copy.scratchKey),
              ...staleOverwriteText(w, overwritten, fz.view),
            }));
          }
        }
        // Creates from the stale view that left an object the settled state did not have (after catching up).
        const creates = stale.filter((w) => w.verb === 'create');
        let extraReported = false;
        if (creates.length) {
          const end = normalizeEndState(await snapshot(ctx.env, ns, copy, ctx.resources), ctx.nameRules);
          const extra = Object.keys(end).filter((k) => !(k in settledEnd) && !learned.has(`${k}::*`));
          if (extra.length && createsEveryPass) duplicatesLeftToRunTwice += extra.length;
          else if (extra.length) {
            extraReported = true;
            findings.push(finding(ctx, {
              check: 'staleCache', severity: 'error', perturbation, diff: endStateDiff(settledEnd, end, learned), writes: creates.map(checkWriteOf), journal: journalOf(run, copy.scratchKey),
              title: `Created ${extra.length === 1 ? 'an extra object' : `${extra.length} extra objects`} from a stale view ${fz.view}: ${extra.slice(0, 3).join(', ')}`,
              explanation: `Reconciling from a cache that had not caught up (it did not yet hold objects that existed on the server${fz.rv === copy.createdResourceVersion ? ', such as the children the controller itself had created' : ''}), the controller sent ${creates.map((w) => describeWrite(w) + (w.after?.metadata.name && w.after.metadata.name !== w.name ? ` (the server named it ${w.after.metadata.name})` : '')).join(', ')}, and after catching up it still had ${extra.join(', ')}, which the settled state before did not. A cache lags behind your own writes: a child looked up in the cache right after creating it is "missing", so a create with generateName makes a second one. Derive the child's name from the owner (a fixed name: the server then answers AlreadyExists), or look children up with a live list (or remember the create until the cache shows it) before creating.`,
            }));
          }
        }
        // Once caught up, a controller must settle where it had settled: a decision taken from the stale view and
        // recorded (status, an annotation) that later reconciles trust does not.
        if (!extraReported && !createsEveryPass) {
          const end = normalizeEndState(await snapshot(ctx.env, ns, copy, ctx.resources), ctx.nameRules);
          const diffs = compareEndStates(settledEnd, end, learned);
          if (diffs.length) {
            // Failed writes of the stale reconcile and of the catch-up after it (an informer still behind the others).
            const staleFailed = run.writes.slice(from).map((w) => w.record).filter((w) => w.outcome !== 'ok' && !w.dryRun);
            const caughtUp = run.entries.slice(thawedAt).filter((e) => e.kind === 'reconcileStart' && e.key === copy.scratchKey).length;
            const t = staleNotBackText({ view: fz.view, ...(fz.only ? { only: resourceLabelOf(fz.only) } : {}), reconcilesAfter: caughtUp, diffs, writes: stale.map(describeWrite), failed: staleFailed.map((w) => `${describeWrite(w)}: ${w.error ? writeErrorText(w.error) : w.outcome}`) });
            findings.push(finding(ctx, {
              check: 'staleCache', severity: 'error', perturbation, diff: endStateDiff(settledEnd, end, learned), writes: run.writes.slice(from).map((w) => w.record).filter((w) => !w.dryRun).map(checkWriteOf), journal: journalOf(run, copy.scratchKey),
              title: t.title, explanation: t.explanation,
            }));
          }
        }
      } finally {
        await run.stop();
      }
    });
  }
  const also = duplicatesLeftToRunTwice ? `; ${duplicatesLeftToRunTwice} extra object(s) from the stale view not reported here: run twice already found a create on every pass` : '';
  const behind = await timed(ctx, parts, 'perturbed run (stale cache, one change behind)', () => staleByOneChange(ctx, learned, createsEveryPass, transitions));
  if (behind.finding) {
    return { status: 'failed' as const, findings: [...findings, behind.finding], message: `${findings.length ? `${findings.length} stale view finding(s): a write that destroyed or overwrote newer state, an extra object, or no return to the settled state${also}; ` : ''}${behind.message}` };
  }
  return findings.length
    ? { status: 'failed' as const, findings, message: `${findings.length} stale view finding(s): a write that destroyed or overwrote newer state, an extra object, or no return to the settled state${also}; ${behind.message}` }
    : { status: 'passed' as const, findings, message: staleCachePassed({ staleWrites, views: freezes.length, changed, metadataOnly, also, behind: behind.message, primary: ctx.env.primary }) };
}

/**
 * The changes the stale-cache check makes while a controller's cache stays behind: the developer's (`--transition`,
 * a module's `checkTransitions`) when given; else the spec change the history check derives from the CRD's schema
 * (most stale decisions are made from an old spec: a child deleted or kept for a setting that has changed); else
 * the metadata-only {@link DEFAULT_TRANSITIONS}. `metadataOnly` is set, with the reason, when only metadata changes:
 * then no decision the reconciler makes from spec is taken from a stale view, and the pass message says so.
 */
async function staleTransitions(ctx: KeyContext): Promise<{ transitions: readonly unknown[]; derived?: string[]; fieldParts?: SpecMutationPart[]; metadataOnly?: string }> {
  const given = ctx.o.transitions;
  if (given?.length) return given.some(changesSpec) ? { transitions: given } : { transitions: given, metadataOnly: 'the given transitions change metadata only' };
  const chosen = await historyTransitions(ctx);
  if ('skipped' in chosen) return { transitions: DEFAULT_TRANSITIONS, metadataOnly: chosen.reason };
  const { transitions, derived, fieldParts } = chosen;
  return { transitions, ...(derived ? { derived } : {}), ...(fieldParts ? { fieldParts } : {}) };
}

/**
 * Applies `transitions` to the copy in order, calling `after` after each. A change the server refuses (400 / 403 /
 * 422: an immutable field's CEL rule, a webhook) is applied field by field when it is the schema's (`fieldParts`,
 * two or more), leaving out the refused fields; a refused change that cannot be split is left out whole. Returns
 * the changes the server took, in order, and the refusals ("spec.x (reason)"). Any other failure is thrown.
 */
async function applyChanges(ctx: KeyContext, copy: ScratchCopy, transitions: readonly unknown[], fieldParts: readonly SpecMutationPart[] | undefined, after: () => Promise<unknown>): Promise<{ applied: unknown[]; refused: string[] }> {
  const applied: unknown[] = [];
  const refused: string[] = [];
  const tryPatch = async (t: unknown, label: string): Promise<boolean> => {
    try {
      await patchCopy(ctx.env, copy, t);
      return true;
    } catch (e) {
      const why = writeRefusal(e, ctx.env.signal);
      if (why === undefined) throw e;
      refused.push(`${label} (${why})`);
      return false;
    }
  };
  for (const t of transitions) {
    if (fieldParts && fieldParts.length >= 2) {
      try {
        await patchCopy(ctx.env, copy, t);
        applied.push(t);
        await after();
        continue;
      } catch (e) {
        if (writeRefusal(e, ctx.env.signal) === undefined) throw e;
      }
      for (const part of fieldParts) if (await tryPatch(part.patch, part.field)) applied.push(part.patch);
    } else if (await tryPatch(t, JSON.stringify(t))) applied.push(t);
    await after();
  }
  return { applied, refused };
}

/** One stale view of the stale-cache check: the resourceVersion its cache is frozen at, how titles name it (`view`), and the perturbation's description. */
export interface StaleFreeze {
  rv: string;
  label: string;
  view: string;
  desc: string;
  /** Only this resource's informer is frozen; the controller must come back to the settled state after catching up. */
  only?: GroupVersionResource;
}

/**
 * The stale views the stale-cache check reconciles from: one frozen where the first controller had settled
 * (`settledRv`), one frozen right after the copy was made, before any write of the controller (`createdRv`: its
 * cache has not seen its own children). Invariants: a view without a resourceVersion is left out, and the second
 * is left out when it is frozen at the same resourceVersion as the first (the controller wrote nothing: the same
 * view twice proves nothing more). `view` tells their findings apart in titles.
 */
export function staleFreezes(settledRv: string, createdRv: string, transitions: readonly unknown[], childKinds: readonly GroupVersionResource[] = []): StaleFreeze[] {
  const changes = transitions.map((t) => JSON.stringify(t)).join(' → ');
  const out: StaleFreeze[] = [];
  if (settledRv) {
    out.push({ rv: settledRv, label: 'stale cache', view: 'frozen where the controller had settled', desc: `let a controller reconcile the copy until it settled (resourceVersion ${settledRv}), changed the copy (${changes}) and let it reconcile that, then started a new controller whose cache was frozen at ${settledRv} and reconciled once from that stale view before letting its watches catch up` });
  }
  if (createdRv && createdRv !== settledRv) {
    out.push({ rv: createdRv, label: 'stale cache, before its own writes', view: "frozen before the controller's own writes", desc: `after the copy had settled (and changed: ${changes}), started a new controller whose cache was frozen at resourceVersion ${createdRv}, right after the copy was made and before any write of the controller (so its cache had not seen the children it had created), reconciled once from that view, then let its watches catch up` });
  }
  if (createdRv) {
    for (const only of childKinds.slice(0, MAX_CHILD_FREEZES)) {
      const r = resourceLabelOf(only);
      out.push({
        rv: createdRv, only, label: `stale cache, ${r} only`, view: `in which only ${r} lagged (frozen before the controller created them)`,
        desc: `after the copy had settled (and changed: ${changes}), started a new controller whose cache of ${r} alone was frozen at resourceVersion ${createdRv}, before the controller had created any, while the rest of its cache (the copy, its other children) was current, reconciled once from that view, then let its watches catch up and settle: as a reconcile that runs right after a create, before the create's watch event reached the cache`,
      });
    }
  }
  return out;
}

/** The most child kinds the stale-cache check freezes one at a time ({@link staleFreezes}). */
const MAX_CHILD_FREEZES = 3;

/**
 * The child kinds of a run, in the order they were first created: the resources of the persisted creates in
 * `namespace` that are not the primary's (a server-side apply that made its object counts: {@link createdBy}). The stale-cache check freezes each alone ({@link staleFreezes}).
 */
export function createdChildKinds(writes: readonly WriteRecord[], namespace: string, primary: GroupVersionResource): GroupVersionResource[] {
  const out: GroupVersionResource[] = [];
  for (const w of writes) {
    if (!createdBy(w) || w.subresource || w.outcome !== 'ok' || w.dryRun || w.namespace !== namespace) continue;
    if (w.gvr.group === primary.group && w.gvr.resource === primary.resource) continue;
    if (!out.some((o) => o.group === w.gvr.group && o.resource === w.gvr.resource)) out.push(w.gvr);
  }
  return out;
}

/**
 * The finding's title and explanation when, after one reconcile from a stale view (`view`: how {@link StaleFreeze}
 * names it; `only`: the one resource that lagged, else the whole cache did), the controller caught up and settled in
 * another state than before (`diffs`: {@link compareEndStates}); `writes`: the writes of that stale reconcile,
 * `failed`: its failed writes (an AlreadyExists is the usual one).
 */
export function staleNotBackText(o: { view: string; only?: string; reconcilesAfter?: number; diffs: readonly string[]; writes: readonly string[]; failed: readonly string[] }): { title: string; explanation: string } {
  const already = o.failed.some((f) => /AlreadyExists|already exists/i.test(f));
  const lag = o.only
    ? `while its cache held every object but the ${o.only} it had created (as happens right after a create, before its watch event arrives)`
    : `from a cache that lagged behind the server (${o.view})`;
  return {
    title: `Did not come back to the settled state after a reconcile from a stale view ${o.view}: ${o.diffs.slice(0, 2).join('; ')}`,
    explanation: `The controller reconciled the copy once ${lag}, then caught up and settled, yet not where it had settled before: ${o.diffs.slice(0, 4).join('; ')}${o.diffs.length > 4 ? '; …' : ''}.${o.writes.length ? ` From the stale view it sent ${o.writes.slice(0, 4).join(', ')}.` : ''}${o.failed.length ? ` Failed: ${o.failed.slice(0, 3).join('; ')}.` : ''}${o.reconcilesAfter === 0 ? ' Once its cache had caught up, nothing queued the key again, so what the stale reconcile did stayed: an event filter (such as GenerationChangedPredicate in Go, or the generation-changed predicate of a module, exec program or the lab reconciler, which drop updates of metadata and of children) dropped the updates that would have reconciled it; let them through, or decide nothing from what a filtered update would change.' : ''} A cache lags behind your own writes, so a child missing from it may exist: ${already ? 'an AlreadyExists answer to its create means exactly that, not that someone else owns the name; return the error (the reconcile is retried once the cache caught up) or read it from the server, and ' : ''}never record a decision taken from that view (a condition in status, an annotation, a flag) that later reconciles trust instead of looking again.`,
  };
}

/**
 * The stale-cache check's message when it passed: how many writes came from how many stale views after which
 * changes (`changed`), and, when only metadata changed (`metadataOnly`: why), that no decision made from spec was
 * exercised and how to give a spec change.
 */
export function staleCachePassed(o: { staleWrites: number; views: number; changed: string; metadataOnly?: string; also: string; behind: string; primary?: { group: string; resource: string } }): string {
  const views = o.views === 1 ? 'one stale view' : o.views === 2 ? 'two stale views' : `${o.views} stale views`;
  const field = desiredField(o.primary);
  const only = o.metadataOnly
    ? `; only metadata changed (${o.metadataOnly}), so no decision your reconciler makes from ${field} was taken from a stale view: give a ${field} change with ${transitionAdvice(o.primary)}`
    : '';
  return `${o.staleWrites} write(s) from ${views} after ${o.changed}, none destroyed or overwrote newer state or left an extra object, and each settled back where it was${o.also}; ${o.behind}${only}`;
}

/** The metadata-only change the server makes after the stale point of {@link staleByOneChange} (added, then removed). */
export const TOUCH_ANNOTATION = 'checks.reconcile-lab.dev/touched';

/**
 * Stale cache, one change behind (the classic "409 Conflict treated as final"): a controller settles the copy and
 * is stopped; the transitions are applied with no controller running (resourceVersion R: the change the
 * reconciler has to act on); then a metadata-only change (an annotation added and removed: no new generation, so a
 * `generation-changed` predicate drops its events) moves the server past R. A new controller whose cache is frozen
 * at R reconciles once — its writes carry resourceVersion R, so a guarded write gets 409 Conflict — then its cache
 * catches up and it runs until settled. A correct reconciler retries (returns the error, requeues, or re-reads) and
 * converges; one that gives up on the Conflict is not called again, since no later event passes. Oracle: that end
 * state against the end state after one more new controller (fresh cache) settled on it (what converging means);
 * not compared when run twice found a create on every pass (`createsEveryPass`: the fresh controller adds one).
 */
async function staleByOneChange(ctx: KeyContext, learned: ReadonlySet<string>, createsEveryPass: boolean, transitions: readonly unknown[]): Promise<{ message: string; finding?: Finding }> {
  const { ns, copy } = await scratch(ctx, 'stale cache, one change behind');
  const patch = (p: unknown) => patchCopy(ctx.env, copy, p);
  const settling = await startRun(ctx.env, ns, { key: copy.scratchKey });
  try {
    await settle(ctx.env, settling, ctx.boundMs);
  } finally {
    await settling.stop();
  }
  let rv = '';
  for (const t of transitions) rv = (await patch(t)).metadata.resourceVersion ?? rv;
  await patch({ metadata: { annotations: { [TOUCH_ANNOTATION]: 'true' } } });
  const serverRv = (await patch({ metadata: { annotations: { [TOUCH_ANNOTATION]: null } } })).metadata.resourceVersion ?? '';
  ctx.emit({ kind: 'step', key: ctx.key, check: 'staleCache', message: `reconcile from a cache one change behind (resourceVersion ${rv}, the server at ${serverRv})` });
  const run = await startRun(ctx.env, ns, { key: copy.scratchKey, startPaused: true, freezeAt: rv });
  let end: EndState;
  let staleWrites: WriteRecord[];
  let outcome: string;
  let later: number;
  try {
    await run.frozenView();
    const from = run.writes.length;
    const step = await run.stepKey(copy.scratchKey);
    staleWrites = run.writes.slice(from).map((w) => w.record);
    outcome = step.kind === 'reconciled' ? step.outcome.kind : step.kind;
    const afterStep = run.entries.length;
    await run.thaw();
    run.controller.resume();
    await settle(ctx.env, run, ctx.boundMs);
    later = run.entries.slice(afterStep).filter((e) => e.kind === 'reconcileStart' && e.key === copy.scratchKey).length;
    end = normalizeEndState(await snapshot(ctx.env, ns, copy, ctx.resources), ctx.nameRules);
  } finally {
    await run.stop();
  }
  const fresh = await startRun(ctx.env, ns, { key: copy.scratchKey });
  let converged: EndState;
  try {
    await settle(ctx.env, fresh, ctx.boundMs);
    converged = normalizeEndState(await snapshot(ctx.env, ns, copy, ctx.resources), ctx.nameRules);
  } finally {
    await fresh.stop();
  }
  const conflicts = staleWrites.filter((w) => w.outcome === 'error' && w.error?.code === 409);
  const diffs = compareEndStates(converged, end, learned);
  // A create on every pass makes the fresh controller add one more object: that is run twice's finding, not this one.
  if (diffs.length && createsEveryPass) return { message: 'one change behind: not compared (run twice found a create on every pass, so a fresh controller adds another object)' };
  if (!diffs.length) {
    return { message: `one change behind: ${staleWrites.length} write(s) from the stale view${conflicts.length ? `, ${conflicts.length} got 409 Conflict and were retried` : ''}, converged` };
  }
  return { message: 'one change behind: the key did not converge', finding: finding(ctx, staleBehindFinding({ ctx, run, copy, rv, serverRv, transitions, staleWrites, conflicts, outcome, later, diffs, diff: endStateDiff(converged, end, learned) })) };
}

function staleBehindFinding(o: { ctx: KeyContext; run: CheckRun; copy: ScratchCopy; rv: string; serverRv: string; transitions: readonly unknown[]; staleWrites: WriteRecord[]; conflicts: WriteRecord[]; outcome: string; later: number; diffs: string[]; diff: string }): Omit<Finding, 'id' | 'key' | 'reproduce'> {
  const c = o.conflicts[0];
  const perturbation: Perturbation = {
    check: 'staleCache', frozenAtResourceVersion: o.rv, ...(o.serverRv ? { serverResourceVersion: o.serverRv } : {}),
    description: `let a controller settle the copy and stopped it, changed the copy (${o.transitions.map((t) => JSON.stringify(t)).join(' → ')}; resourceVersion ${o.rv}), then added and removed the annotation ${TOUCH_ANNOTATION} (the server moved on to ${o.serverRv} without a new generation), started a new controller whose cache was frozen at ${o.rv}, reconciled once from that view, let its watches catch up and ran it until settled; then compared with the state one more new controller settled on`,
  };
  const text = staleBehindText({
    conflict: c ? { write: describeWrite(c), resourceVersion: c.resourceVersionBefore ?? o.rv } : undefined,
    staleWrites: o.staleWrites.map(describeWrite), outcome: o.outcome, later: o.later, diffs: o.diffs,
  });
  return { check: 'staleCache', severity: 'error', perturbation, diff: o.diff, writes: o.staleWrites.map(checkWriteOf), journal: journalOf(o.run, o.copy.scratchKey), ...text };
}

/**
 * Title and explanation of a key that did not converge after a reconcile from a cache one change behind. `conflict`:
 * the stale view's first write answered 409 (described, with the resourceVersion it carried); `outcome`: how that
 * reconcile ended (a controller outcome kind: success, requeueAfter, error, terminal); `later`: reconciles of the key
 * after it; `diffs`: the differences to the state a fresh controller settles on. Invariant: with a conflict the title
 * names the write, "409 Conflict" and "stopped retrying"; the explanation always lists the differences (first four).
 */
export function staleBehindText(o: { conflict?: { write: string; resourceVersion: string }; staleWrites: string[]; outcome: string; later: number; diffs: string[] }): { title: string; explanation: string } {
  const gaveUp = o.outcome === 'terminal' ? 'returned a terminal error, so the key was not retried' : o.outcome === 'success' || o.outcome === 'requeueAfter' ? `returned ${o.outcome === 'success' ? 'success' : 'a requeue-after'} as if the write had been made` : `ended with "${o.outcome}"`;
  const afterwards = o.later ? `its ${o.later} later reconcile(s) did not fix it` : 'no later event queued the key again (the change that caused the conflict did not pass the predicates: no new generation)';
  const state = `${o.diffs.slice(0, 4).join('; ')}${o.diffs.length > 4 ? '; …' : ''}`;
  if (o.conflict) {
    return {
      title: `${o.conflict.write} got 409 Conflict from a stale view and the reconciler stopped retrying: the key never converged`,
      explanation: `The controller's cache was one change behind the server, as caches are after any change they have not received yet. Its reconcile sent ${o.conflict.write} with resourceVersion ${o.conflict.resourceVersion} and the server answered 409 Conflict (the object is at a newer resourceVersion). The reconcile then ${gaveUp}; ${afterwards}, so the key stayed unconverged: ${state}. One more new controller fixed it at once. A Conflict means "read again and retry", never "give up": return the error (the queue retries with backoff and reads the caught-up cache) or re-read the object, recompute and write again.`,
    };
  }
  return {
    title: `Reconciled from a stale view and never converged (${o.diffs.length} difference(s) a fresh controller fixes)`,
    explanation: `The controller's cache was one change behind the server; its reconcile from that view ${o.staleWrites.length ? `sent ${o.staleWrites.join(', ')}` : 'wrote nothing'} and ended with "${o.outcome}"; ${afterwards}, so the key stayed unconverged: ${state}. One more new controller fixed it at once. Do not treat a failed or skipped write as done: return an error (or requeue) until the observed state is the desired one.`,
  };
}

/**
 * The fields a person changed, outside status, that the controller did not leave as they were: for each leaf of each
 * transition (a merge patch; null: removed), the value the server stored for that patch (`applied[i]`, its answer, so
 * a field the schema prunes or defaults is taken as stored) against the value in `final`. A later transition that
 * touches the same field wins.
 */
export function revertedPaths(transitions: readonly unknown[], applied: readonly KubeObject[], final: KubeObject): Array<{ path: string; wanted: unknown; actual: unknown }> {
  const at = (obj: unknown, path: string[]): unknown => path.reduce<unknown>((o, k) => (o && typeof o === 'object' && !Array.isArray(o) ? (o as Record<string, unknown>)[k] : undefined), obj);
  const wanted = new Map<string, { path: string[]; value: unknown }>();
  const leaves = (patch: unknown, path: string[], stored: KubeObject) => {
    if (patch && typeof patch === 'object' && !Array.isArray(patch)) {
      for (const [k, v] of Object.entries(patch)) if (path.length || k !== 'status') leaves(v, [...path, k], stored);
      return;
    }
    wanted.set(path.join('.'), { path, value: at(stored, path) });
  };
  transitions.forEach((t, i) => {
    if (applied[i]) leaves(t, [], applied[i]!);
  });
  const out: Array<{ path: string; wanted: unknown; actual: unknown }> = [];
  for (const [p, w] of wanted) {
    const actual = at(final, w.path);
    if (JSON.stringify(w.value) !== JSON.stringify(actual)) out.push({ path: p, wanted: w.value, actual });
  }
  return out;
}

/**
 * "path = actual instead of wanted; …" for the first four of `undone` (from {@link revertedPaths}), for a finding's
 * explanation. When the object is a core Secret (`secret`), the values of `data`, `stringData` and the
 * last-applied annotation (which repeats them) print as `***`: the paths say what was undone, never what it holds.
 */
export function revertedText(undone: ReadonlyArray<{ path: string; wanted: unknown; actual: unknown }>, secret: boolean): string {
  const hidden = (path: string) =>
    secret && (/^(data|stringData)(\.|$)/.test(path) || path === 'metadata' || path === 'metadata.annotations' || path.startsWith(`metadata.annotations.${LAST_APPLIED}`));
  const shown = (path: string, v: unknown) => (v === undefined ? '(absent)' : hidden(path) ? MASK : JSON.stringify(v));
  return `${undone.slice(0, 4).map((u) => `${u.path} = ${shown(u.path, u.actual)} instead of ${shown(u.path, u.wanted)}`).join('; ')}${undone.length > 4 ? '; …' : ''}`;
}

/**
 * The explanation of an unobserved-state finding (`diffs`: the end-state differences). Names both usual causes: state
 * remembered from the transitions the controller watched, and an event filter that compares an update's old and new
 * object (one edge let through), which drops the one coalesced update whose two ends look alike.
 */
export function unobservedExplanation(diffs: readonly string[]): string {
  return `When the controller saw every state it ended in one state; when the watch skipped the intermediate one (as a watch may: events coalesce, and a restarted controller sees only the latest state) it ended in another: ${diffs.slice(0, 4).join('; ')}${diffs.length > 4 ? '; …' : ''}. Reconcile from the current state only (level-based), not from transitions remembered in memory. An event filter that compares the old and the new object does the same: a predicate whose update function lets only one edge through (a field going from false to true) drops the one update the controller gets from the first to the last state, so the reconcile never runs; let updates through, or filter on metadata.generation only (GenerationChangedPredicate in Go, the generation-changed predicate for a module, exec program or the lab reconciler), and decide in the reconcile from the current state.`;
}

/** Check 4: withhold the key's update events between the first and the last state of a transition. */
async function checkUnobserved(ctx: KeyContext, learned: Set<string>, parts: CheckTimingPart[], createsEveryPass: boolean): Promise<Pick<CheckResult, 'status' | 'message' | 'findings'>> {
  // Each reconcile adds another object, so how many updates the controller saw decides the end state: run twice reports that once.
  if (createsEveryPass) return { status: 'skipped', findings: [], message: 'not compared: run twice found a create on every pass, so each reconcile of a change adds another object' };
  // Without transitions of the person's, the spec change the history check derives from the CRD's schema, then a
  // second one derived the same way from the changed object (the state in between is a spec state, as the annotation
  // default is a metadata one): a reconciler that counts or remembers the changes it watched ends elsewhere when it
  // sees one update from the first to the last state. The second change moves on rather than back, so what a change
  // set back leaves behind (a key never pruned: the history check's reverted run) is not reported here as well.
  const chosen = ctx.o.transitions?.length ? undefined : await historyTransitions(ctx);
  const derived = chosen && !('skipped' in chosen) && chosen.derived ? chosen : undefined;
  let transitions: readonly unknown[] = derived ? [] : transitionsOf(ctx);
  let changedText = '';
  const readCopy = (copy: ScratchCopy) => ctx.env.client.get(ctx.env.primary, copy.namespace, copy.name, ctx.env.signal);
  const apply = async (copy: ScratchCopy, patch: unknown) => {
    await patchCopy(ctx.env, copy, patch);
  };
  const reverted: Finding[] = [];
  const observed = await timed(ctx, parts, 'reference run (every state observed)', async () => {
    const { ns, copy } = await scratch(ctx, 'unobserved state reference');
    const run = await startRun(ctx.env, ns, { key: copy.scratchKey });
    try {
      await settle(ctx.env, run, ctx.boundMs);
      const from = run.writes.length;
      const applied: KubeObject[] = [];
      if (derived) {
        const stored: KubeObject[] = [];
        const done = await applyChanges(ctx, copy, derived.transitions, derived.fieldParts, async () => {
          stored.push(await readCopy(copy));
          await settle(ctx.env, run, ctx.boundMs);
        });
        if (done.applied.length) {
          const afterFirst = await readCopy(copy);
          applied.push(...(stored.length === done.applied.length ? stored : done.applied.map(() => afterFirst)));
          const second = deriveSpecMutation(derived.specSchema, afterFirst);
          let then: unknown;
          if (!('skipped' in second)) {
            try {
              applied.push(await patchCopy(ctx.env, copy, second.patch));
              then = second.patch;
              await settle(ctx.env, run, ctx.boundMs);
            } catch (e) {
              if (writeRefusal(e, ctx.env.signal) === undefined) throw e;
            }
          }
          transitions = then === undefined ? done.applied : [...done.applied, then];
          const accepted = derived.derived!.filter((f) => !done.refused.some((r) => r.startsWith(`${f} (`)));
          changedText = `${(accepted.length ? accepted : derived.derived!).join(', ')} changed as the schema allows${then === undefined ? '' : ', then changed again'}`;
        } else {
          // The server took none of the schema's changes: the metadata default keeps the check meaningful.
          transitions = DEFAULT_TRANSITIONS;
        }
      }
      for (const t of derived ? (transitions === DEFAULT_TRANSITIONS ? transitions : []) : transitions) {
        applied.push(await patchCopy(ctx.env, copy, t));
        await settle(ctx.env, run, ctx.boundMs);
      }
      // Consistency (Acto): what the person changed must still be there once the controller settled.
      const final = await ctx.env.client.get(ctx.env.primary, copy.namespace, copy.name, ctx.env.signal);
      const undone = revertedPaths(transitions, applied, final);
      if (undone.length) {
        const own = okWrites(run, from).filter((w) => w.gvr.group === ctx.env.primary.group && w.gvr.resource === ctx.env.primary.resource && w.name === copy.name && !w.subresource);
        reverted.push(finding(ctx, {
          check: 'unobservedState', severity: 'error', diff: '', writes: own.map(checkWriteOf), journal: journalOf(run, copy.scratchKey),
          perturbation: { check: 'unobservedState', description: `applied ${transitions.length} change(s) to the copy (${transitions.map((t) => JSON.stringify(t)).join(' → ')}), letting the controller see and reconcile each` },
          title: `Undid your change: ${undone.slice(0, 3).map((u) => u.path).join(', ')}${own.length ? ` (${describeWrite(own[own.length - 1]!)})` : ''}`,
          explanation: `After the copy was changed as a person would change it, the controller settled with ${revertedText(undone, ctx.env.primary.group === '' && ctx.env.primary.resource === 'secrets')}. ${own.length ? 'It wrote its own object back' : 'The change did not stay'}: the spec (and labels and annotations) is the user's desired state, and a controller that rewrites it fights every kubectl apply and GitOps sync. Report what you observe or decide in status; default fields with a mutating webhook or CRD defaults, not from the reconciler.`,
        }));
      }
      return normalizeEndState(await snapshot(ctx.env, ns, copy, ctx.resources), ctx.nameRules);
    } finally {
      await run.stop();
    }
  });
  return timed(ctx, parts, 'perturbed run (intermediate states withheld)', async () => {
    const { ns, copy } = await scratch(ctx, 'unobserved state');
    const run = await startRun(ctx.env, ns, { key: copy.scratchKey, withholdKey: copy.scratchKey });
    try {
      await settle(ctx.env, run, ctx.boundMs);
      await run.withhold();
      for (const t of transitions) {
        await apply(copy, t);
        await settle(ctx.env, run, ctx.boundMs);
      }
      const withheld = await run.release();
      await settle(ctx.env, run, ctx.boundMs);
      const end = normalizeEndState(await snapshot(ctx.env, ns, copy, ctx.resources), ctx.nameRules);
      const diffs = compareEndStates(observed, end, learned);
      if (!diffs.length && reverted.length) return { status: 'failed' as const, findings: reverted, message: `the controller undid the change it was given (same end state with intermediate states withheld)` };
      if (!diffs.length) return { status: 'passed' as const, findings: [], message: `${changedText ? `${changedText}: ` : ''}${transitions.length} state change(s), ${withheld} update event(s) withheld, same end state` };
      const perturbation: Perturbation = {
        check: 'unobservedState', withheld: transitions.slice(0, -1),
        description: `applied ${transitions.length} changes to the copy (${transitions.map((t) => JSON.stringify(t)).join(' → ')}) while its update events were withheld from the controller (the cache still updated), then delivered one update from the first to the last state`,
      };
      return {
        status: 'failed' as const, message: `end state differs when the intermediate state is not observed${reverted.length ? '; the controller undid the change it was given' : ''}`,
        findings: [...reverted, finding(ctx, {
          check: 'unobservedState', severity: 'error', perturbation, diff: endStateDiff(observed, end, learned), writes: okWrites(run).map(checkWriteOf), journal: journalOf(run, copy.scratchKey),
          title: 'End state depends on seeing an intermediate state',
          explanation: unobservedExplanation(diffs),
        })],
      };
    } finally {
      await run.stop();
    }
  });
}

/**
 * Check 8: the children the controller created are deleted, then changed, behind its back, one at a time, while it
 * runs ({@link driftTargets}, drift.ts): each must be put back as it was in the settled state within the bound (only
 * that child is compared: what else the controller records about it is not drift). What
 * it catches: a kind the controller does not watch (no `Owns`), an event filter that drops the children's events, a
 * reconcile that skips its work when status says it is done. Only children the controller made in the scratch
 * namespace are touched. A loop reconciler (lab, exec, module) is judged only on the kinds its loop watches
 * (`owned`): the others it could not be told about. After a finding, later targets compare with the state as it
 * then is, so each finding names its own perturbation only.
 */
async function checkChildDrift(ctx: KeyContext, learned: ReadonlySet<string>, parts: CheckTimingPart[], createsEveryPass: boolean): Promise<Pick<CheckResult, 'status' | 'message' | 'findings'>> {
  if (createsEveryPass) return { status: 'skipped', findings: [], message: 'not compared: run twice found a create on every pass, so every reconcile the change queues adds another object' };
  const { ns, copy } = await timed(ctx, parts, 'copy', () => scratch(ctx, 'child drift'));
  const { client, signal } = ctx.env;
  const run = await startRun(ctx.env, ns, { key: copy.scratchKey });
  try {
    await timed(ctx, parts, 'run until settled', () => settle(ctx.env, run, ctx.boundMs));
    const raw = await snapshot(ctx.env, ns, copy, ctx.resources);
    let before = normalizeEndState(raw, ctx.nameRules);
    const go = ctx.o.reconcilerSpec.kind === 'go';
    const watched = (gvr: { group: string; resource: string }) => go || ctx.env.owned.some((r) => r.group === gvr.group && r.resource === gvr.resource);
    const all = driftTargets(okWrites(run), raw, before, ctx.env.primary, resourceLabelOf, learned);
    const targets = all.filter((t) => watched(t.gvr));
    // A typed Go client's create answers without a kind, and list items carry none: a GET of the object does.
    for (const t of targets) if (!t.kind) t.kind = (await client.get(t.gvr, t.namespace, t.name, signal).catch(() => undefined))?.kind ?? '';
    const unwatched = [...new Set(all.filter((t) => !watched(t.gvr)).map((t) => t.resource))];
    const notWatchedNote = unwatched.length
      ? ` (${unwatched.join(', ')} left alone: the check's loop does not watch ${unwatched.length === 1 ? 'that kind' : 'those kinds'}; to check ${unwatched.length === 1 ? 'it' : 'them'}, watch ${unwatched.length === 1 ? 'it' : 'them'} as the loop's children: ${unwatched.map((r) => `--owns ${r}`).join(' ')} in the CLI, or add ${unwatched.length === 1 ? 'it' : 'them'} to the setting reconcileLab.resources in the editor)`
      : '';
    const execNote = ctx.o.reconcilerSpec.kind === 'exec' ? ' (an exec program\'s own kubectl writes are not seen: only writes through Reconcile Lab\'s client are)' : '';
    if (!targets.length) {
      // Children it did create elsewhere (a cluster-scoped kind's Namespace per object, a record in another
      // namespace) are not "no child": name them, and why they are left alone.
      const outside = createsOutsideScratch(okWrites(run), ns, ctx.env.primary, resourceLabelOf);
      const outsideNote = outside.length ? `; the children it created outside it (${outside.join(', ')}) are left alone: the check changes objects in its scratch namespace only` : '';
      return { status: 'skipped', findings: [], message: `the controller created no child in the copy's namespace that the check can change behind its back${outsideNote}${notWatchedNote}${execNote}` };
    }
    const findings: Finding[] = [];
    const done: string[] = [];
    let restored = 0;
    const seconds = `${Math.round(ctx.boundMs / 100) / 10} s`;
    const names = (what: string) => ({ reference: 'when settled', perturbed: what, perturbedRun: what });
    // The key's next requeue-after, if one is pending (a controller that only looks again periodically).
    const requeueAt = () => run.controller.snapshot().waiting.find((w) => w.key === copy.scratchKey && w.kind !== 'backoff')?.dueAt;
    // Only the changed child is compared: what else the controller does about it (a status message, a counter of
    // recreations) is its own business, not drift.
    const only = (state: EndState, key: string): EndState => (key in state ? { [key]: state[key] } : {});
    const perturbed = async (endKey: string, what: string, label: string, act: () => Promise<unknown>) => {
      const from = run.writes.length;
      ctx.emit({ kind: 'step', key: ctx.key, check: 'childDrift', message: label });
      const start = ctx.env.clock.now();
      const look = async () => normalizeEndState(await snapshot(ctx.env, ns, copy, ctx.resources), ctx.nameRules);
      let after: EndState = {};
      let diffs: string[] = [];
      let later: number | undefined;
      await timed(ctx, parts, label, async () => {
        await act();
        await settle(ctx.env, run, ctx.boundMs);
        after = await look();
        diffs = compareEndStates(only(before, endKey), only(after, endKey), learned, names(what));
        // Settled, but a requeue-after is pending: within the bound, it may still put the child back.
        for (let due = requeueAt(); diffs.length && due !== undefined && due <= start + ctx.boundMs; due = requeueAt()) {
          await sleep(ctx.env.clock, Math.max(0, due - ctx.env.clock.now()) + 100, signal);
          await settle(ctx.env, run, ctx.boundMs);
          after = await look();
          diffs = compareEndStates(only(before, endKey), only(after, endKey), learned, names(what));
        }
        const due = diffs.length ? requeueAt() : undefined;
        if (due !== undefined) later = due - start;
      });
      const result = { diffs, diff: diffs.length ? endStateDiff(only(before, endKey), only(after, endKey), learned) : '', writes: okWrites(run, from), later };
      before = after;
      return result;
    };
    const unownedText = (t: (typeof targets)[number]) => {
      const cause = unownedChildCause(t, go, ownsHint(t));
      return cause ? ` ${cause}` : '';
    };
    const laterText = (later: number | undefined) => (later === undefined ? '' : ` Its next reconcile was a requeue-after ${Math.round(later / 1000)} s after the change, beyond the bound: a periodic requeue narrows the window but is no substitute for watching the child.`);
    for (const t of targets) {
      if (signal.aborted) break;
      const label = `${t.resource}/${t.name}`;
      const del = await perturbed(t.endKey, 'after the delete', `deleting ${label}`, () => client.delete(t.gvr, t.namespace, t.name, { signal, preconditions: { uid: t.uid } }));
      if (del.diffs.length) {
        findings.push(finding(ctx, {
          check: 'childDrift', severity: 'error', diff: del.diff, writes: del.writes.map(checkWriteOf), journal: journalOf(run, copy.scratchKey),
          perturbation: { check: 'childDrift', boundMs: ctx.boundMs, description: `deleted ${label}, which the controller had created for the copy, after the copy settled, and let the controller run for up to ${ctx.boundMs} ms` },
          title: `Not restored after a delete: ${label}`,
          explanation: `The controller created ${label} for the copy. It was deleted (as a person, another tool or a cleanup may) and the controller did not put it back within ${seconds}: ${del.diffs.slice(0, 4).join('; ')}${del.diffs.length > 4 ? '; …' : ''}. A level-based controller watches what it creates and restores what someone else removed.${unownedText(t)} ${t.noController ? 'Other causes' : 'Usual causes: the child\'s kind is not watched'}${t.noController ? '' : ` (${go ? `\`${ownsHint(t)}\` in SetupWithManager, with a controller ownerReference on the child, \`SetControllerReference\`` : `Reconcile Lab's loop maps a child to its object by its ownerReference, for the kinds it watches: ${t.resource} is one of them (the only kinds this check changes), so the child needs an ownerReference to the object`})`}${t.noController ? ':' : ','} a predicate or event filter drops the child's events, or the reconcile skips its work when the object's status says it is done (compare the observed children with the desired ones on every pass).${del.writes.length ? '' : ' No write followed the delete: the controller was not told, or decided there was nothing to do.'}${laterText(del.later)}`,
        }));
        continue;
      }
      done.push(`deleted ${label}: recreated`);
      if (!t.change) {
        restored++;
        continue;
      }
      const change = t.change;
      const ch = await perturbed(t.endKey, 'after the change', `changing ${change.path} of ${label}`, () => client.patch(t.gvr, t.namespace, t.name, 'merge', change.patch, { signal }));
      if (ch.diffs.length) {
        findings.push(finding(ctx, {
          check: 'childDrift', severity: 'error', diff: ch.diff, writes: ch.writes.map(checkWriteOf), journal: journalOf(run, copy.scratchKey),
          perturbation: { check: 'childDrift', boundMs: ctx.boundMs, description: `changed ${change.path} of ${label} (${JSON.stringify(change.patch)}: "${DRIFT_SUFFIX}" appended) after the copy settled, and let the controller run for up to ${ctx.boundMs} ms` },
          title: `Not restored after a change: ${label}: ${change.path}`,
          explanation: `The controller created ${label} for the copy. Its ${change.path} was changed (as \`kubectl edit\` or another controller may) and the controller did not put it back within ${seconds}: ${ch.diffs.slice(0, 4).join('; ')}${ch.diffs.length > 4 ? '; …' : ''}. The child drifted from what the controller wants, and stays so until something else queues the object.${unownedText(t)} ${t.noController ? 'Other causes' : 'Usual causes'}: an event filter that drops the child's updates (\`WithEventFilter(predicate.GenerationChangedPredicate{})\` applies to every watch, and a ConfigMap's generation never changes: put the predicate on \`For\` with \`builder.WithPredicates\` instead), a child that is only created when missing and never compared with the desired one, or a reconcile that skips its work when status says it is done. A child meant to be written once (content named by a hash) should say so: \`immutable: true\` (the server then refuses such edits, and this check leaves it alone).${ch.writes.length ? '' : ' No write followed the change: the controller was not told, or decided there was nothing to do.'}${laterText(ch.later)}`,
        }));
        continue;
      }
      done.push(`changed ${change.path} of ${label}: put back`);
      restored++;
    }
    const message = `${restored} of ${targets.length} child(ren) restored within ${seconds} of a change behind the controller's back${done.length ? ` (${done.join('; ')})` : ''}${notWatchedNote}`;
    return { status: findings.length ? 'failed' : 'passed', findings, message: findings.length ? `${findings.length} change(s) behind the controller's back not put back; ${message}` : message };
  } finally {
    await run.stop();
  }
}

/**
 * Where the primary resource keeps what its controller acts on, for the checks' messages: `data` for a ConfigMap or a
 * Secret (they have no spec), else `spec`.
 */
export function desiredField(p: { group: string; resource: string } | undefined): 'data' | 'spec' {
  return p !== undefined && !p.group && (p.resource === 'configmaps' || p.resource === 'secrets') ? 'data' : 'spec';
}

/**
 * How to give the checks a change of the primary of their own: `--transition` with a merge patch of its
 * {@link desiredField} (a Secret's as `stringData`, which the server encodes), and a module's `checkTransitions`.
 */
export function transitionAdvice(p: { group: string; resource: string } | undefined): string {
  const example = desiredField(p) === 'spec' ? '{"spec":…}' : p!.resource === 'secrets' ? '{"stringData":{"key":"new value"}}' : '{"data":{"key":"new value"}}';
  return `--transition '${example}' (a module: checkTransitions)`;
}

/** apiextensions.k8s.io/v1 CustomResourceDefinitions: where the history check reads the schema of spec. */
const CRDS: ResourceInfo = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false };

/** Whether a JSON merge patch of the primary changes more than metadata (the history check needs a spec change). */
function changesSpec(patch: unknown): boolean {
  return typeof patch === 'object' && patch !== null && Object.keys(patch).some((k) => k !== 'metadata');
}

/**
 * The changes the history check walks the copy through: the developer's (`--transition`, a module's
 * `checkTransitions`) when given, also when they change metadata only (`metadataOnly`: an annotation a reconcile
 * reads is desired state too, and a fresh copy that has it from the start shows what a filter dropping its update
 * missed); else one derived from the CRD's schema (specMutation.ts); `{skipped}` when there is none.
 */
async function historyTransitions(ctx: KeyContext): Promise<{ transitions: readonly unknown[]; derived?: string[]; fieldParts?: SpecMutationPart[]; metadataOnly?: boolean; specSchema?: ReturnType<typeof specSchemaOf> } | { skipped: string; reason: string }> {
  const given = ctx.o.transitions;
  if (given?.length) return given.some(changesSpec) ? { transitions: given } : { transitions: given, metadataOnly: true };
  const p = ctx.env.primary;
  const skip = (reason: string) => ({ skipped: `no ${desiredField(p)} change to try: ${reason}; give one with ${transitionAdvice(p)}`, reason });
  // A built-in kind publishes no CRD (a built-in group's CRD read below is a 404, said the same way): the developer says which change matters.
  if (!p.group) return skip(`${p.resource} is a built-in resource`);
  let crd: KubeObject;
  try {
    crd = await ctx.env.client.get(CRDS, undefined, `${p.resource}.${p.group}`, ctx.env.signal);
  } catch (e) {
    // No CRD of that name: a built-in kind of a named group (deployments.apps, jobs.batch, ingresses.networking.k8s.io).
    if ((e as { code?: number }).code === 404) return skip(`${p.resource}.${p.group} is a built-in resource (no CustomResourceDefinition defines it)`);
    return skip(`the CustomResourceDefinition ${p.resource}.${p.group} could not be read (${(e as Error).message.split('\n')[0]})`);
  }
  const { namespace, name } = splitKey(ctx.key);
  const original = await ctx.env.client.get(p, p.namespaced ? namespace : undefined, name, ctx.env.signal);
  const specSchema = specSchemaOf(crd, p.version);
  const m = deriveSpecMutation(specSchema, original);
  if ('skipped' in m) return skip(m.skipped);
  return { transitions: [m.patch], derived: m.fields, fieldParts: m.parts, specSchema };
}

/**
 * The explanation of a "path mattered" finding of the history check: after `what` (the changes, reconciled one by
 * one) the end state differs from a fresh object's (`diffs`). Names the usual causes, none removed for another: a
 * child made only when it is missing, and an event filter that compares the old and the new object (one edge let
 * through; with `metadataOnly` changes, a generation filter that drops annotation and label updates the reconcile
 * reads). `leftOver`: objects the changed state has and the fresh one does not (end-state keys, `configmaps/x`); when
 * there are any, the cause named first is a child made for an earlier spec (named after a spec field) and never
 * deleted. `derivedNote` is appended as is.
 */
export function historyPathExplanation(o: { what: string; diffs: readonly string[]; metadataOnly: boolean; derivedNote: string; leftOver?: readonly string[] }): string {
  const left = o.leftOver?.length
    ? ` ${o.leftOver.slice(0, 3).join(', ')} ${o.leftOver.length === 1 ? 'is' : 'are'} left from an earlier spec: a child whose name comes from a spec field is made anew when that field changes, and the old one is never deleted. On every pass, list the children the controller made (by ownerReference or a label of its own) and delete those the current spec no longer wants; an ownerReference alone removes them only when the object itself is deleted.`
    : '';
  const meta = o.metadataOnly
    ? ' The changes touched metadata only, which makes no new generation: a filter on generation (GenerationChangedPredicate, the generation-changed predicate) drops their update events, so a reconcile that reads those labels or annotations never runs for them; let their changes through too (predicate.Or with AnnotationChangedPredicate or LabelChangedPredicate), or keep such settings in spec.'
    : '';
  return `After ${o.what}, the controller settled in a state that an object created with that final spec does not get: ${o.diffs.slice(0, 4).join('; ')}${o.diffs.length > 4 ? '; …' : ''} (the diff shows the fresh object's end state → the changed one's).${left} A reconcile should depend only on the current desired state: a child made only when it is missing and never updated when the spec changes is the usual cause. Compare the desired child with the observed one and update it when they differ. An event filter that compares the old and the new object has the same effect: a predicate that lets only one edge of a field through (false to true) drops the update that changes it back, so no reconcile runs for it; let updates through, or filter on metadata.generation only, and decide in the reconcile from the current state.${meta}${o.derivedNote}`;
}

/** The reason a server refused a write (400 / 403 / 422: validation, a CEL rule, an admission webhook), or undefined for any other failure. */
function writeRefusal(e: unknown, signal: AbortSignal): string | undefined {
  if (signal.aborted) return undefined;
  const code = (e as { code?: number }).code;
  return code === 400 || code === 403 || code === 422 ? (e as Error).message.split('\n')[0] : undefined;
}

/**
 * Check 7 (Acto's differential oracle): the end state may depend only on the current desired state, not on the path
 * that led there. Path run: a copy settles, then takes each transition, settling after each. Restart run: a copy
 * settles, its controller stops, the transitions are applied while none runs, and a new controller (empty memory,
 * fresh cache: a restart, a leader failover, an upgrade) settles it. Fresh run: a new copy that already has every
 * transition applied before any controller sees it settles. The path and restart end states are each compared with
 * the fresh one (masked as the others are). A path difference is the classic create-only child (made once, never
 * updated when the spec changes) or state derived from the path; a restart difference the path run did not show is
 * work driven by what the controller remembers having seen (the previous spec, the child it made), lost on restart.
 */
async function checkHistory(ctx: KeyContext, learned: ReadonlySet<string>, parts: CheckTimingPart[], createsEveryPass: boolean): Promise<Pick<CheckResult, 'status' | 'message' | 'findings'>> {
  // Every reconcile of a spec change would add one more object: run twice reports that once.
  if (createsEveryPass) return { status: 'skipped', findings: [], message: 'not compared: run twice found a create on every pass, so each reconcile of a change adds another object' };
  const chosen = await historyTransitions(ctx);
  if ('skipped' in chosen) return { status: 'skipped', findings: [], message: chosen.skipped };
  let { transitions, derived } = chosen;
  const patch = (copy: ScratchCopy, t: unknown) => patchCopy(ctx.env, copy, t);
  // Fields of a derived change the server refused (an immutable field's CEL rule, a webhook): left out, and said.
  let refusedNote = '';
  const readCopy = (copy: ScratchCopy) => ctx.env.client.get(ctx.env.primary, copy.namespace, copy.name, ctx.env.signal);
  const path = await timed(ctx, parts, 'path run (each change reconciled, then reverted)', async () => {
    const { ns, copy } = await scratch(ctx, 'history path');
    const run = await startRun(ctx.env, ns, { key: copy.scratchKey });
    try {
      await settle(ctx.env, run, ctx.boundMs);
      const beforeObject = await readCopy(copy);
      const before = normalizeEndState(await snapshot(ctx.env, ns, copy, ctx.resources), ctx.nameRules);
      for (const t of transitions) {
        try {
          await patch(copy, t);
        } catch (e) {
          const why = writeRefusal(e, ctx.env.signal);
          if (why === undefined) throw e;
          if (!chosen.fieldParts || chosen.fieldParts.length < 2) return { refused: `the server refused the change ${JSON.stringify(t)}: ${why}` };
          // The schema's change as a whole was refused: try its fields one by one and keep those the server takes.
          const accepted: SpecMutationPart[] = [];
          const refused: string[] = [];
          for (const part of chosen.fieldParts) {
            try {
              await patch(copy, part.patch);
              accepted.push(part);
            } catch (e2) {
              const why2 = writeRefusal(e2, ctx.env.signal);
              if (why2 === undefined) throw e2;
              refused.push(`${part.field} (${why2})`);
            }
          }
          if (!accepted.length) return { refused: `the server refused every change the schema allows: ${refused.join('; ')}` };
          transitions = [{ spec: (mergeParts(accepted) as { spec: unknown }).spec }];
          derived = accepted.map((x) => x.field);
          refusedNote = ` (the server refused ${refused.join('; ')}: left out)`;
        }
        await settle(ctx.env, run, ctx.boundMs);
      }
      const end = normalizeEndState(await snapshot(ctx.env, ns, copy, ctx.resources), ctx.nameRules);
      // Acto's recovery oracle: set back what the changes touched; the state before them must come back.
      let revert: { end: EndState; from: number } | { note: string };
      const undo = revertPatch(transitions, beforeObject, await readCopy(copy));
      if (!undo) revert = { note: 'nothing to revert (the changes left the object as it was)' };
      else {
        const from = run.writes.length;
        try {
          await patch(copy, undo);
          await settle(ctx.env, run, ctx.boundMs);
          revert = { end: normalizeEndState(await snapshot(ctx.env, ns, copy, ctx.resources), ctx.nameRules), from };
        } catch (e) {
          if (ctx.env.signal.aborted) throw e;
          revert = { note: `not reverted: the server refused to set the changed fields back (${(e as Error).message.split('\n')[0]})` };
        }
      }
      return { end, run, copy, before, revert };
    } finally {
      await run.stop();
    }
  });
  if ('refused' in path) return { status: 'skipped', findings: [], message: `not compared: ${path.refused}` };
  const changes = transitions.map((t) => JSON.stringify(t)).join(' → ');
  const what = `${derived ? `${derived.join(', ')} changed as the schema allows (${changes})` : `${transitions.length} change(s) (${changes})`}${refusedNote}`;
  // A change chosen from the schema alone may not mean to the controller what it seems to (a field that names another
  // object now names one that does not exist): say how to give the checks changes that make sense.
  const derivedNote = derived
    ? ` These changes were chosen from the CRD's schema; if a changed field names another object (a reference) or takes values the schema does not spell out, the new value may mean something else to your controller (a reference to nothing, on which it rightly stops): give the check changes of your own, with --transition '<JSON merge patch>' (CLI), the setting reconcileLab.checks.transitions, or a module's checkTransitions export.`
    : '';
  const restart = await timed(ctx, parts, 'restart run (the changes made while no controller ran)', async () => {
    const { ns, copy } = await scratch(ctx, 'history restart');
    const before = await startRun(ctx.env, ns, { key: copy.scratchKey });
    try {
      await settle(ctx.env, before, ctx.boundMs);
    } finally {
      await before.stop();
    }
    for (const t of transitions) await patch(copy, t);
    const run = await startRun(ctx.env, ns, { key: copy.scratchKey });
    try {
      await settle(ctx.env, run, ctx.boundMs);
      return { end: normalizeEndState(await snapshot(ctx.env, ns, copy, ctx.resources), ctx.nameRules), run, copy };
    } finally {
      await run.stop();
    }
  });
  return timed(ctx, parts, 'fresh run (the final state from the start)', async () => {
    const { ns, copy } = await scratch(ctx, 'history fresh');
    for (const t of transitions) {
      try {
        await patch(copy, t);
      } catch (e) {
        return { status: 'skipped' as const, findings: [], message: `the server refused the change ${JSON.stringify(t)}: ${(e as Error).message.split('\n')[0]}` };
      }
    }
    const run = await startRun(ctx.env, ns, { key: copy.scratchKey });
    let end: EndState;
    try {
      await settle(ctx.env, run, ctx.boundMs);
      end = normalizeEndState(await snapshot(ctx.env, ns, copy, ctx.resources), ctx.nameRules);
    } finally {
      await run.stop();
    }
    const findings: Finding[] = [];
    const diffs = compareEndStates(end, path.end, learned, { reference: 'when created with that spec', perturbed: 'after the changes', perturbedRun: 'after the changes' });
    if (diffs.length) {
      findings.push(finding(ctx, {
        check: 'historyIndependence', severity: 'error',
        perturbation: { check: 'historyIndependence', description: `changed the copy step by step (${what}), reconciling each, and compared with a fresh copy created with the final state` },
        diff: endStateDiff(end, path.end, learned), writes: okWrites(path.run).map(checkWriteOf), journal: journalOf(path.run, path.copy.scratchKey),
        title: `The path mattered: ${diffs[0]}`,
        explanation: historyPathExplanation({ what, diffs, metadataOnly: !!chosen.metadataOnly, derivedNote, leftOver: Object.keys(path.end).filter((k) => !(k in end) && !learned.has(`${k}::*`)) }),
      }));
    }
    // Reported only when the restart ended elsewhere than the watched path: the same end state is the finding above.
    const restartDiffs = compareEndStates(end, restart.end, learned, { reference: 'when created with that spec', perturbed: 'after a restart', perturbedRun: 'after a restart' });
    const restartMattered = restartDiffs.length > 0 && compareEndStates(path.end, restart.end, learned).length > 0;
    if (restartMattered) {
      findings.push(finding(ctx, {
        check: 'historyIndependence', severity: 'error',
        perturbation: { check: 'historyIndependence', description: `settled the copy, stopped its controller, made ${what} while no controller ran, then started a new one (empty memory and cache, as after a restart, a leader failover or an upgrade)` },
        diff: endStateDiff(end, restart.end, learned), writes: okWrites(restart.run).map(checkWriteOf), journal: journalOf(restart.run, restart.copy.scratchKey),
        title: `Changed while the controller was down: ${restartDiffs[0]}`,
        explanation: `The copy settled, its controller stopped, and ${what} landed before a new controller started. That controller settled in a state that an object created with the final spec does not get, and that a controller watching each change did not leave: ${restartDiffs.slice(0, 4).join('; ')}${restartDiffs.length > 4 ? '; …' : ''} (the diff shows the fresh object's end state → the restarted one's). The controller acts on something it remembers from watching the change (the previous spec, the name of a child it made, an old object from an update event), which a restart, a leader failover or an upgrade loses. Derive the work from the cluster instead: find the children by label or ownerReference and remove those the current spec no longer wants; keep what must survive in status.${derivedNote}`,
      }));
    }
    const revert = path.revert;
    const revertDiffs = 'end' in revert ? compareEndStates(path.before, revert.end, learned, { reference: 'before the changes', perturbed: 'after they were reverted', perturbedRun: 'after they were reverted' }) : [];
    if ('end' in revert && revertDiffs.length) {
      findings.push(finding(ctx, {
        check: 'historyIndependence', severity: 'error',
        perturbation: { check: 'historyIndependence', description: `changed the copy step by step (${what}), reconciling each, then set every field the changes touched back to its value before them, and compared with the state the copy had settled in before the changes` },
        diff: endStateDiff(path.before, revert.end, learned), writes: okWrites(path.run, revert.from).map(checkWriteOf), journal: journalOf(path.run, path.copy.scratchKey),
        title: `Not undone when the change was reverted: ${revertDiffs[0]}`,
        explanation: `After ${what}, each reconciled, every field the changes touched was set back to its value before them, and the controller settled in a state other than the one it had before the changes: ${revertDiffs.slice(0, 4).join('; ')}${revertDiffs.length > 4 ? '; …' : ''} (the diff shows the state before the changes → after they were reverted). Turning a setting back must undo what turning it on did (Acto's recovery oracle): the usual causes are a child made for a setting that is now off and never deleted (a Service for an \`expose\` turned off, the objects of replicas scaled down), keys or labels merged into a child and never removed, or a status that keeps what the old spec caused. Build each child, with all of its data, from the current spec, and delete or prune what the spec no longer asks for${ctx.o.reconcilerSpec.kind === 'go' ? ' (a `controllerutil.CreateOrUpdate` mutate function gets the object as the server has it: assign whole maps, `cm.Data = desired`, rather than setting entries into the map it holds)' : ''}.${derivedNote}`,
      }));
    }
    const revertText = 'end' in revert ? 'and reverted, the state before the changes came back' : revert.note;
    if (!findings.length) return { status: 'passed' as const, findings, message: `${what}: the same end state as an object created with the final spec, whether each change was reconciled or all of them landed while no controller ran; ${revertText}` };
    const counts = [diffs.length ? `${diffs.length} difference(s) after the changes were reconciled one by one` : '', restartMattered ? `${restartDiffs.length} after they landed while no controller ran` : ''].filter(Boolean).join(', ');
    if (!counts) return { status: 'failed' as const, message: `the change was not undone when it was reverted: ${revertDiffs.length} difference(s) from the state before the changes (the same end state as an object created with the final spec otherwise)`, findings };
    return { status: 'failed' as const, message: `the end state depends on the path: ${counts}, compared with an object created with the final spec${revertDiffs.length ? `; and ${revertDiffs.length} difference(s) from the state before the changes once they were reverted` : ''}`, findings };
  });
}

/**
 * Check 6: a fresh copy (its finalizers stripped: yours may belong to other controllers; the reconciler adds its own
 * as on a new object) settles, is deleted with the server's default propagation (as kubectl sends none), and must
 * be gone within the bound while the controller runs (oracle: deletion.ts). Only the scratch copy is ever deleted;
 * a copy left Terminating has its finalizers stripped afterwards, guarded by its uid (and by the scratch
 * namespace's cleanup again). When the copy went away with k ≥ 2 writes after the delete, the deletion is also
 * crashed after each write i < k ({@link crashDuringDeletion}): what is left must equal the uninterrupted deletion's.
 */
async function checkDeletion(ctx: KeyContext, parts: CheckTimingPart[], learned: ReadonlySet<string>): Promise<Pick<CheckResult, 'status' | 'message' | 'findings'>> {
  const { ns, copy, uid } = await timed(ctx, parts, 'copy', () => deletionCopy(ctx, 'deletion'));
  const { client, primary, signal } = ctx.env;
  const run = await startRun(ctx.env, ns, { key: copy.scratchKey });
  let reference: { end: EndState; writes: WriteRecord[] } | undefined;
  let verdictResult: Pick<CheckResult, 'status' | 'message' | 'findings'>;
  try {
    await timed(ctx, parts, 'run until settled', () => settle(ctx.env, run, ctx.boundMs));
    const before = await client.get(primary, copy.namespace, copy.name, signal);
    const finalizersAtDelete = [...(before.metadata.finalizers ?? [])];
    const from = run.entries.length;
    const writesFrom = run.writes.length;
    ctx.emit({ kind: 'step', key: ctx.key, check: 'deletion', message: 'deleting the copy' });
    let waited: Awaited<ReturnType<typeof waitUntilGone>>;
    try {
      waited = await timed(ctx, parts, 'delete, until gone', async () => {
        await client.delete(primary, copy.namespace, copy.name, { signal, preconditions: { uid } });
        return waitUntilGone(ctx.env.clock, async () => {
          // A Go check instance whose cleanup was refused (a record in another namespace) never gets the copy
          // gone: say so now rather than after the bound.
          const confined = confinementFailure(run.entries.slice(from), copy.scratchKey);
          if (confined) throw new ConfinedError(confined);
          return client.get(primary, copy.namespace, copy.name, signal);
        }, ctx.boundMs, signal);
      });
    } catch (e) {
      if (e instanceof ConfinedError) return { status: 'error', findings: [], message: confinementMessage(e.message, !primary.namespaced) };
      throw e;
    }
    // Failures "on the way" are those before the object was gone; the reconciles after it are judged on their own below.
    const seen = reconcilesAfter(waited.gone ? run.entries.slice(0, goneIndex(run.entries, from, copy.scratchKey, primary)) : run.entries, copy.scratchKey, from);
    const verdict = deletionVerdict({ gone: waited.gone, ms: waited.ms, boundMs: ctx.boundMs, finalizersAtDelete, finalizersLeft: [...(waited.last?.metadata.finalizers ?? [])], ...seen }, ctx.o.reconcilerSpec.kind);
    const perturbation: Perturbation = {
      check: 'deletion', boundMs: ctx.boundMs,
      description: `deleted the copy after it settled (finalizers at the delete: ${finalizersAtDelete.length ? finalizersAtDelete.join(', ') : 'none'}; the server's default propagation, as kubectl delete) and let the controller run for up to ${ctx.boundMs} ms`,
    };
    // The writes after the delete (failed ones too: they are what went wrong), else the last ones before it.
    const afterDelete = run.writes.slice(writesFrom).map((w) => w.record);
    const writes = afterDelete.length ? afterDelete.slice(-10) : okWrites(run).slice(-3);
    verdictResult = {
      status: verdict.status, message: verdict.message,
      findings: verdict.problems.map((p) => finding(ctx, {
        check: 'deletion', severity: 'error', perturbation, diff: '', title: p.title, explanation: p.explanation,
        writes: writes.map(checkWriteOf), journal: journalOf(run, copy.scratchKey),
      })),
    };
    if (waited.gone) {
      // The uninterrupted deletion's end state (what the cleanup left), once the cleanup after the finalizer's removal (if any) is done.
      await timed(ctx, parts, 'after the delete, until settled', () => settle(ctx.env, run, ctx.boundMs));
      // The reconciles of the key once its object was gone must not fail.
      const afterGone = reconcilesAfter(run.entries, copy.scratchKey, goneIndex(run.entries, from, copy.scratchKey, primary));
      const gone = failsWhenGoneProblem(afterGone, ctx.o.reconcilerSpec.kind);
      const recovered = recoveredAfterGone(afterGone);
      if (recovered) verdictResult = { ...verdictResult, message: `${verdictResult.message}; ${recovered}` };
      if (gone) {
        verdictResult = {
          status: 'failed', message: `${verdictResult.message}; the reconcile after it was gone failed`,
          findings: [...verdictResult.findings, finding(ctx, { check: 'deletion', severity: 'error', perturbation, diff: '', title: gone.title, explanation: gone.explanation, writes: writes.map(checkWriteOf), journal: journalOf(run, copy.scratchKey) })],
        };
      }
      const raw = await snapshot(ctx.env, ns, copy, ctx.resources);
      reference = { end: normalizeEndState(afterDeletion(raw, uid), ctx.nameRules), writes: okWrites(run, writesFrom) };
      const creates = okWrites(run).slice(0, okWrites(run).length - reference.writes.length).filter((w) => w.verb === 'create' && !w.subresource)
        .map((w) => ({ resource: resourceLabelOf(w.gvr), namespace: w.namespace, name: w.name }));
      const orphans = orphansAfterDeletion(raw, creates, uid);
      if (orphans.length) {
        const p = orphansProblem(orphans, ctx.o.reconcilerSpec.kind);
        verdictResult = {
          status: 'failed', message: `${verdictResult.message}; ${orphans.length} created object(s) left behind`,
          findings: [...verdictResult.findings, finding(ctx, { check: 'deletion', severity: 'error', perturbation, diff: '', title: p.title, explanation: p.explanation, writes: okWrites(run).filter((w) => w.verb === 'create').slice(0, 10).map(checkWriteOf), journal: journalOf(run, copy.scratchKey) })],
        };
      }
    }
  } finally {
    await run.stop();
    await stripCopy(ctx, copy, uid);
  }
  // Crashed during the deletion whenever the copy went away, even when a reconcile after it was gone failed or
  // an object was left behind: those are other bugs, and a finalizer removed before the cleanup hides behind them.
  if (!reference) return verdictResult;
  const crash = await crashDuringDeletion(ctx, parts, learned, reference);
  if (!crash.points) return verdictResult;
  const m = `${verdictResult.message}; ${crash.points} crash point(s) during the deletion${crash.notes.length ? ` (${crash.notes.join('; ')})` : ''}${crash.findings.length ? `: ${crash.findings.length} left the cleanup undone` : ', same end state each time'}`;
  return crash.findings.length ? { status: 'failed', message: m, findings: [...verdictResult.findings, ...crash.findings] } : { ...verdictResult, message: m };
}

/** The deletion check's wait, ended by a failure of the check instance's confinement (the message: what failed). */
class ConfinedError extends Error {}

/** A fresh copy for a deletion run, without the developer's finalizers (those may belong to other controllers), and its uid. */
async function deletionCopy(ctx: KeyContext, purpose: string): Promise<{ ns: string; copy: ScratchCopy; uid: string }> {
  const { ns, copy } = await scratch(ctx, purpose);
  const { client, primary, signal } = ctx.env;
  const made = await client.get(primary, copy.namespace, copy.name, signal);
  const uid = made.metadata.uid ?? '';
  if (made.metadata.finalizers?.length) {
    await client.patch(primary, copy.namespace, copy.name, 'json', [{ op: 'test', path: '/metadata/uid', value: uid }, { op: 'remove', path: '/metadata/finalizers' }], { signal });
  }
  return { ns, copy, uid };
}

/** Ours to clean up: a copy left Terminating (only this scratch copy, only while it is the object we made: guarded by its uid). */
async function stripCopy(ctx: KeyContext, copy: ScratchCopy, uid: string): Promise<void> {
  const { client, primary, signal } = ctx.env;
  try {
    const left = await client.get(primary, copy.namespace, copy.name, signal);
    if (left.metadata.uid === uid && left.metadata.finalizers?.length) {
      await client.patch(primary, copy.namespace, copy.name, 'json', [{ op: 'test', path: '/metadata/uid', value: uid }, { op: 'remove', path: '/metadata/finalizers' }], { signal });
    }
  } catch (e) {
    if (!isNotFound(e) && !signal.aborted) ctx.emit({ kind: 'step', key: ctx.key, check: 'deletion', message: `could not strip the copy's finalizers (the scratch cleanup tries again): ${(e as Error).message}` });
  }
}

/**
 * The deletion's crash points (Sieve's crash after write i, on the deletion path): when the uninterrupted deletion
 * made k ≥ 2 writes after the delete, for each i < k a fresh copy settles, its controller is stopped, the copy is
 * deleted, a new controller (fresh cache and queue) starts on the Terminating copy and is stopped right after its
 * write i, then another new controller runs until settled. Its end state (without the copy and what the copy owns:
 * {@link afterDeletion}) must equal the uninterrupted deletion's: a finalizer removed before the cleanup finished
 * leaves the cleanup undone forever, since the object is gone and nothing reconciles it again.
 */
async function crashDuringDeletion(ctx: KeyContext, parts: CheckTimingPart[], learned: ReadonlySet<string>, reference: { end: EndState; writes: WriteRecord[] }): Promise<{ points: number; findings: Finding[]; notes: string[] }> {
  const k = reference.writes.length;
  const points = deletionCrashPoints(k, MAX_CRASH_POINTS);
  const findings: Finding[] = [];
  const notes: string[] = [];
  const { client, primary, signal } = ctx.env;
  for (const i of points) {
    const desc = `crash during the deletion after write ${i} of ${k}`;
    await timed(ctx, parts, `perturbed run (${desc})`, async () => {
      ctx.emit({ kind: 'step', key: ctx.key, check: 'deletion', message: desc });
      const { ns, copy, uid } = await deletionCopy(ctx, desc);
      try {
        const settling = await startRun(ctx.env, ns, { key: copy.scratchKey });
        try {
          await settle(ctx.env, settling, ctx.boundMs);
        } finally {
          await settling.stop();
        }
        await client.delete(primary, copy.namespace, copy.name, { signal, preconditions: { uid } });
        let crashed!: () => void;
        const crashedP = new Promise<void>((r) => (crashed = r));
        const first = await startRun(ctx.env, ns, { key: copy.scratchKey, crashAfterWrites: i, onCrash: () => crashed() });
        let reached = false;
        try {
          reached = await Promise.race([crashedP.then(() => true), settle(ctx.env, first, ctx.boundMs).then(() => false)]);
        } finally {
          await first.stop();
        }
        if (!reached) {
          notes.push(`${desc}: the deletion made fewer writes than the reference, crash point not reached`);
          return;
        }
        const crashedWrite = okWrites(first)[i - 1];
        // With the copy gone there is nothing left to reconcile (no event will ever name it): a new controller
        // would only wait for it (a Go instance's start waits until the key is queued), so none is started.
        const gone = await client.get(primary, copy.namespace, copy.name, signal).then(() => false, (e: unknown) => {
          if (isNotFound(e)) return true;
          throw e;
        });
        const second = gone ? undefined : await startRun(ctx.env, ns, { key: copy.scratchKey });
        try {
          if (second) await settle(ctx.env, second, ctx.boundMs);
          const raw = await snapshot(ctx.env, ns, copy, ctx.resources);
          const left = raw.objects.find((o) => o.object.metadata.uid === uid)?.object;
          const end = normalizeEndState(afterDeletion(raw, uid), ctx.nameRules);
          const diffs = compareEndStates(reference.end, end, learned);
          if (!diffs.length && !left) return;
          const leftovers = Object.keys(end).filter((key) => !(key in reference.end));
          // The copy left Terminating: named with the finalizers still on it and what the restarted controller did.
          const stuck = left ? {
            object: `${resourceLabelOf(primary)} ${copy.scratchKey}`,
            finalizers: [...(left.metadata.finalizers ?? [])],
            restarted: { ...reconcilesAfter(second?.entries ?? [], copy.scratchKey, 0), writes: second ? okWrites(second).length : 0 },
          } : undefined;
          const problem = crashDuringDeletionProblem({
            i, k, crashedAfter: crashedWrite ? describeWrite(crashedWrite) : `write ${i}`, leftovers, ...(stuck ? { stuck } : {}), diffs, finalizerGone: !!crashedWrite?.deleted, kind: ctx.o.reconcilerSpec.kind,
          });
          findings.push(finding(ctx, {
            check: 'deletion', severity: 'error', diff: endStateDiff(reference.end, end, learned), title: problem.title, explanation: problem.explanation,
            perturbation: {
              check: 'deletion', afterWrite: i, ofWrites: k, boundMs: ctx.boundMs,
              description: `deleted the settled copy, then stopped the controller right after write ${i} of ${k} of the deletion${crashedWrite ? ` (${describeWrite(crashedWrite)})` : ''}, ${second ? 'started a new one with a fresh cache and queue and let it settle' : 'and found the copy gone (nothing left for a new controller to reconcile)'}`,
            },
            writes: okWrites(first).concat(second ? okWrites(second) : []).map(checkWriteOf),
            journal: [...journalOf(first, copy.scratchKey), ...(second ? journalOf(second, copy.scratchKey) : [])].slice(-MAX_JOURNAL),
          }));
        } finally {
          await second?.stop();
        }
      } finally {
        await stripCopy(ctx, copy, uid);
      }
    });
  }
  return { points: points.length, findings, notes };
}

/**
 * Why the checks cannot work for this user: they create and delete scratch namespaces, which a user with namespaced
 * rights only (a Role) may not. Asked of the server with SelfSubjectAccessReviews (writes nothing); undefined when
 * both are allowed or the server cannot tell (then the checks find out as before).
 */
export async function scratchRightsProblem(transport: Pick<RunChecksOptions['transport'], 'json'>, signal?: AbortSignal): Promise<string | undefined> {
  const missing: string[] = [];
  for (const verb of ['create', 'delete']) {
    try {
      const r = await transport.json<{ status?: { allowed?: boolean } }>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb, group: '', resource: 'namespaces' } } },
        ...(signal ? { signal } : {}),
      });
      if (r?.status?.allowed === false) missing.push(verb);
    } catch {
      return undefined;
    }
  }
  if (!missing.length) return undefined;
  return `the checks copy your objects into scratch namespaces they create and delete, and your user may not ${missing.join(' or ')} namespaces (check with: kubectl auth can-i ${missing[0]} namespaces). Run them on a cluster where you may (the local control plane: npm run lab, or Start Local Control Plane), or ask for ${missing.join(' and ')} on namespaces (a ClusterRole).`;
}

/**
 * Runs the selected checks on every key, each on fresh copies in scratch namespaces (deleted afterwards, also on
 * abort or error), and resolves with the report. Rejects only with {@link CheckRefusedError}, before writing.
 */
export async function runChecks(options: RunChecksOptions, progress?: CheckProgress, signal?: AbortSignal): Promise<CheckReport> {
  const refusal = refusalOf(options) ?? (await scratchRightsProblem(options.transport, signal));
  if (refusal) throw new CheckRefusedError(refusal);
  const clock = options.clock ?? realClock;
  const log = options.log ?? nullLogger;
  const checks = CHECK_KINDS.filter((c) => (options.checks ?? CHECK_KINDS).includes(c));
  const abort = new AbortController();
  const onAbort = () => abort.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) abort.abort(signal.reason);
  const owned = options.owned ?? [CONFIGMAPS];
  const goRunner = options.reconcilerSpec.kind === 'go' && options.go ? new GoCheckRunner(options.go) : undefined;
  const env: HarnessEnv = {
    transport: options.transport, client: options.client, primary: options.primary, owned,
    predicates: options.predicates ?? [],
    ...(options.indexes?.length ? { indexes: options.indexes } : {}),
    ...(options.predicateAdvice !== undefined ? { predicateAdvice: options.predicateAdvice } : {}),
    ...(options.reconcileTimeoutMs ? { reconcileTimeoutMs: options.reconcileTimeoutMs } : {}),
    ...(options.createReconciler ? { createReconciler: options.createReconciler } : {}),
    ...(goRunner ? { startRun: goRunner.startRun } : {}),
    clock, log, quietMs: options.quietMs ?? 750, signal: abort.signal,
    ...(options.copies?.length ? { copies: options.copies } : {}),
    footprint: new CheckFootprint(),
  };
  const emit = (e: CheckProgressEvent) => {
    try {
      progress?.report(e);
    } catch (err) {
      log.warn('a check progress receiver threw', { error: (err as Error).message });
    }
  };
  const start = clock.now();
  const results: CheckResult[] = [];
  const notes: string[] = [];
  const allParts: CheckTimingPart[] = [];
  const learnedAll = new Set<string>();
  const resources = [options.primary, ...owned.filter((r) => !(r.group === options.primary.group && r.resource === options.primary.resource))];
  const learnedResources: string[] = [];
  const nameRuleLabels: string[] = [];
  const findingSeq = { n: 0 };
  emit({ kind: 'started', keys: [...options.keys], checks });
  // Scratch namespaces of an earlier check on this machine that was killed before its cleanup (never a live run's).
  try {
    const leftovers = await cleanupLeftovers({ client: options.client, primary: options.primary, resources, log, signal: abort.signal });
    if (leftovers.message) notes.push(leftovers.message);
  } catch (e) {
    if (abort.signal.aborted) throw e;
    log.warn('could not look for scratch namespaces left by earlier checks', { error: (e as Error).message });
  }
  let prepared = true;
  if (goRunner) {
    const t = clock.now();
    if (goRunner.builds) emit({ kind: 'step', key: options.keys[0]!, message: `building ${options.go!.command.join(' ')}` });
    try {
      await goRunner.prepare(abort.signal, clock);
      notes.push(`The Go controller ran as a new process per run (${goRunner.givenCommand.join(' ')}${goRunner.builds ? ', built once before the first run' : ''}), each restricted to its scratch namespace with leader election, metrics and probes off; perturbations were made inside the process by the bridge.`);
    } catch (e) {
      prepared = false;
      notes.push(`The Go controller could not be built: ${(e as Error).message}`);
      for (const key of options.keys) for (const c of checks) results.push({ check: c, key, status: 'error', findings: [], message: `the Go controller could not be built: ${(e as Error).message}`, durationMs: 0, parts: [] });
    }
    allParts.push({ part: 'build', ms: clock.now() - t });
  }
  for (const key of prepared ? options.keys : []) {
    if (abort.signal.aborted) break;
    const ctx: KeyContext = { env, o: options, key, boundMs: options.convergenceBoundMs ?? 15_000, resources, learnedResources, nameRules: [], namespaces: [], clusterCopies: new Map(), parts: allParts, emit, findingSeq };
    const result = (check: CheckKind, r: Pick<CheckResult, 'status' | 'message' | 'findings'>, parts: CheckTimingPart[], t0: number) => {
      // Reconciles that failed on the check's confinement to the scratch namespace (a Go check instance's, the
      // built-in loop's: confinedClient) are no finding.
      const confined = r.status === 'failed' ? r.findings.map((f) => confinementFailure(f.journal)).find((m) => m !== undefined) : undefined;
      if (confined) r = { status: 'error', findings: [], message: confinementMessage(confined, !ctx.env.primary.namespaced) };
      const full: CheckResult = { check, key, ...r, durationMs: clock.now() - t0, parts };
      results.push(full);
      emit({ kind: 'checkFinished', result: full });
    };
    const refParts: CheckTimingPart[] = [];
    let ref1: Reference | undefined;
    try {
      const t0 = clock.now();
      for (const c of checks) emit({ kind: 'checkStarted', key, check: c });
      ref1 = await referenceRun(ctx, refParts, 1, true);
      const confined = confinementFailure(ref1.run.entries, ref1.copy.scratchKey);
      if (confined) {
        // Every check would run into the same wall (and the convergence check would read the retries as a loop).
        for (const c of checks) result(c, { status: 'error', findings: [], message: confinementMessage(confined, !env.primary.namespaced) }, c === checks[0] ? [...refParts] : [], t0);
        continue;
      }
      const redirected = redirectedNote(key, ref1.copy.redirected);
      if (redirected) notes.push(redirected);
      const copiedNote = referencesNote(key, ref1.copy.references);
      if (copiedNote) notes.push(copiedNote);
      // Only a run that settled waited: one that never went idle is the convergence check's to explain.
      // Whether what the wait names is in the object's own namespace (a namespaced object's): if not, no copy helps.
      const exists = env.primary.namespaced
        ? async (o: WaitedObject) => {
          try {
            await env.client.get(o.kind === 'secret' ? SECRETS : CONFIGMAPS, splitKey(key).namespace, o.name, env.signal);
            return true;
          } catch (e) {
            return isNotFound(e) ? false : undefined;
          }
        }
        : undefined;
      const waiting = ref1.settled ? await waitingNote(ref1, key, resourceLabelOf(options.primary), copiedNote !== undefined, exists) : undefined;
      if (waiting) notes.push(waiting);
      // An exec program may write with its own client (kubectl): its writes are not all journaled, so it is not judged.
      const foreign = options.reconcilerSpec.kind === 'exec' ? undefined : foreignWriterNote(ref1, key, options.primary);
      if (foreign) notes.push(foreign);
      const compared = ctx.resources.length;
      const ref2 = await referenceRun(ctx, refParts, 2, false);
      // The second run wrote a resource the first did not: the first run's end state (still settled, its controller
      // running) is taken again with it, so both compare the same resources.
      if (ctx.resources.length > compared) ref1.raw = await snapshot(ctx.env, ref1.ns, ref1.copy, ctx.resources);
      // Children named uniquely by the reconciler itself (not generateName) have other names in each run: learned
      // here, they are numbered like generateName objects in every end state of this key from now on.
      ctx.nameRules.push(...learnGeneratedNames(ref1.raw, ref2.raw));
      for (const rule of ctx.nameRules) {
        const label = `${rule.resource}/${rule.prefix}<${rule.length} characters>`;
        if (!nameRuleLabels.includes(label)) nameRuleLabels.push(label);
      }
      ref1.end = normalizeEndState(ref1.raw, ctx.nameRules);
      ref2.end = normalizeEndState(ref2.raw, ctx.nameRules);
      const learned = differingPaths(ref1.end, ref2.end);
      for (const p of learned) learnedAll.add(p);
      if (checks.includes('convergence')) result('convergence', checkConvergence(ctx, ref1), [...refParts], t0);
      const unsettled = !ref1.settled ? `${UNSETTLED_SKIP} within ${ctx.boundMs} ms${unsettledWhy(ref1)}${checks.includes('convergence') ? ' (see the convergence check)' : ' (--check convergence tells why it did not)'}` : undefined;
      if (checks.includes('runTwice')) {
        const t = clock.now();
        const parts: CheckTimingPart[] = [];
        result('runTwice', unsettled ? { status: 'skipped', findings: [], message: unsettled } : await checkRunTwice(ctx, ref1, parts), parts, t);
      }
      // A create on every pass (run twice) also makes extra objects from a stale view: reported once, by run twice.
      const createsEveryPass = results.some((x) => x.key === key && x.check === 'runTwice' && x.findings.some((f) => f.writes.some((w) => w.verb === 'create')));
      await ref1.run.stop();
      for (const c of ['crashAfterWrite', 'staleCache', 'unobservedState', 'historyIndependence', 'deletion', 'childDrift'] as const) {
        if (!checks.includes(c) || abort.signal.aborted) continue;
        const t = clock.now();
        const parts: CheckTimingPart[] = [];
        if (unsettled) {
          result(c, { status: 'skipped', findings: [], message: unsettled }, parts, t);
          continue;
        }
        try {
          const r = c === 'crashAfterWrite' ? await checkCrashAfterWrite(ctx, ref1, learned, parts) : c === 'staleCache' ? await checkStaleCache(ctx, parts, learned, createsEveryPass) : c === 'unobservedState' ? await checkUnobserved(ctx, learned, parts, createsEveryPass) : c === 'historyIndependence' ? await checkHistory(ctx, learned, parts, createsEveryPass) : c === 'childDrift' ? await checkChildDrift(ctx, learned, parts, createsEveryPass) : await checkDeletion(ctx, parts, learned);
          result(c, r, parts, t);
        } catch (e) {
          if (abort.signal.aborted) break;
          result(c, { status: 'error', findings: [], message: `the check could not run: ${(e as Error).message}` }, parts, t);
        }
      }
    } catch (e) {
      if (!abort.signal.aborted) {
        for (const c of checks) if (!results.some((r) => r.key === key && r.check === c)) result(c, { status: 'error', findings: [], message: `the reference run failed: ${(e as Error).message}` }, [], clock.now());
      }
    } finally {
      await ref1?.run.stop().catch(() => {});
      const t = clock.now();
      for (const ns of ctx.namespaces) notes.push(...(await deleteScratch(env, ns, resources, ctx.clusterCopies.get(ns))));
      allParts.push({ part: 'cleanup', ms: clock.now() - t });
    }
  }
  if (learnedResources.length) {
    notes.push(`End states compared ${learnedResources.join(', ')} too: the reconciler wrote ${learnedResources.length === 1 ? 'that resource' : 'those resources'} in the scratch namespace${learnedResources.includes('secrets') ? ' (Secret values are compared, never shown)' : ''}.`);
  }
  if (!learnedResources.includes('secrets') && resources.some((r) => r.group === '' && r.resource === 'secrets')) {
    notes.push('End states compared secrets (Secret values are compared, never shown).');
  }
  if (nameRuleLabels.length) {
    notes.push(`The reconciler names some children uniquely itself (not with generateName): ${nameRuleLabels.join(', ')} had other endings in the two reference runs, so such names were numbered in creation order (<random #n>) before comparing, as generateName names are. A leaked extra child still shows as one more number.`);
  }
  signal?.removeEventListener('abort', onAbort);
  goRunner?.dispose();
  const findings = results.flatMap((r) => r.findings);
  const summed = new Map<string, number>();
  for (const p of allParts) summed.set(p.part, (summed.get(p.part) ?? 0) + p.ms);
  const report: CheckReport = {
    generatedAt: rfc3339(clock.now()),
    resource: resourceLabelOf(options.primary),
    reconciler: options.reconcilerSpec.kind === 'exec' || options.reconcilerSpec.kind === 'go' ? options.reconcilerSpec.command.join(' ') : options.reconcilerSpec.kind === 'module' ? options.reconcilerSpec.path : options.reconcilerSpec.kind,
    reconcilerKind: options.reconcilerSpec.kind,
    cluster: options.cluster,
    keys: [...options.keys],
    checks,
    results,
    findings,
    masked: [...VOLATILE_FIELDS, ...nameRuleLabels.map((l) => ({ path: `${l.replace(/<\d+ characters>$/, '<random #n>')}: metadata.name`, reason: 'learned' as const })), ...maskedFieldsOf(learnedAll)],
    notes,
    totals: {
      keys: options.keys.length, checks: results.length,
      passed: results.filter((r) => r.status === 'passed').length, failed: results.filter((r) => r.status === 'failed').length,
      skipped: results.filter((r) => r.status === 'skipped').length, errors: results.filter((r) => r.status === 'error').length, findings: findings.length,
    },
    durationMs: clock.now() - start,
    parts: [...summed].map(([part, ms]) => ({ part, ms })),
    aborted: abort.signal.aborted,
  };
  emit({ kind: 'finished', report });
  return report;
}

export { CHECK_TITLES };
