import type { ModuleIndex } from '../reconcilers/moduleIndexes.ts';
import type { Clock } from '../clock.ts';
import type { Predicate } from '../controller/predicate.ts';
import type { Reconciler } from '../controller/reconcile.ts';
import type { JournalEntry, WriteVerb } from '../journal/journal.ts';
import type { KubeClient } from '../k8s/client.ts';
import type { ObjectKey } from '../k8s/keys.ts';
import type { ResourceInfo } from '../k8s/objects.ts';
import type { KubeTransport } from '../k8s/transport.ts';
import type { Logger } from '../log.ts';
import type { GoCheckTarget } from './goRun.ts';
import type { SpecReference } from './references.ts';

/**
 * The result model and entry point of the robustness checks (issue 11): Sieve / Acto / Anvil style checks that
 * perturb what a reconciler sees and compare its end state with reference runs.
 *
 * Contract (stable; only additive changes): every type here is plain JSON (no functions, no class instances)
 * except {@link RunChecksOptions} and {@link CheckProgress}, so a {@link CheckReport} can be posted to a webview,
 * written with `JSON.stringify` and read back unchanged.
 */

/** The eight checks, in the order they are listed. */
export type CheckKind = 'runTwice' | 'crashAfterWrite' | 'staleCache' | 'unobservedState' | 'historyIndependence' | 'convergence' | 'deletion' | 'childDrift';

export const CHECK_KINDS: readonly CheckKind[] = ['runTwice', 'crashAfterWrite', 'staleCache', 'unobservedState', 'historyIndependence', 'convergence', 'deletion', 'childDrift'];

/** One-line names for people (menus, headings). */
export const CHECK_TITLES: Readonly<Record<CheckKind, string>> = {
  runTwice: 'Run twice',
  crashAfterWrite: 'Crash after write',
  staleCache: 'Stale cache',
  unobservedState: 'Unobserved intermediate state',
  historyIndependence: 'History independence',
  convergence: 'Convergence',
  deletion: 'Deletion',
  childDrift: 'Child drift',
};

/**
 * `error`: the end state or the writes are wrong (a real bug in every plausible reading);
 * `warning`: wasteful or risky but the state is right (e.g. a no-op write).
 */
export type FindingSeverity = 'error' | 'warning';

/** What a check did to the reconciler's world in the perturbed run. */
export interface Perturbation {
  check: CheckKind;
  /** One sentence: "stopped the controller right after write 1 of 3 (create configmaps ns/x-config), restarted it with a fresh cache and queue". */
  description: string;
  /** Crash after write: the 1-based index of the write after which the controller was stopped, and k. */
  afterWrite?: number;
  ofWrites?: number;
  /** Stale cache: the resourceVersion the cache was frozen at, and the server's resourceVersion when the stale reconcile ran. */
  frozenAtResourceVersion?: string;
  serverResourceVersion?: string;
  /** Unobserved state: the states (as JSON merge patches of the primary) whose watch events were withheld. */
  withheld?: unknown[];
  /** Convergence: the bound (ms) the key had to go idle and stop writing within. Deletion: the bound it had to be gone within. Child drift: the bound a changed child had to be put back within. */
  boundMs?: number;
}

/** One write of a run, as a finding shows it (a plain projection of the journal's write entry). */
export interface CheckWrite {
  verb: WriteVerb;
  subresource?: string;
  /** "configmaps" or "widgets.lab.reconcile.dev". */
  resource: string;
  /** The written object's key (in the scratch namespace). */
  objectKey: ObjectKey;
  outcome: 'ok' | 'error';
  error?: string;
  resourceVersionBefore?: string;
  resourceVersionAfter?: string;
  /** The write removed the last finalizer of a Terminating object: it deleted the object. */
  deleted?: boolean;
  /** The server's warnings about the write (`unknown field "status.phase"`: a field it dropped). */
  warnings?: string[];
  /** Unified YAML diff of the object before → after this write (masked volatile fields); "" when nothing changed. */
  diff: string;
}

/** A bug (or smell) one check found for one key. */
export interface Finding {
  /** Stable within a report: `<check>:<key>:<n>`. */
  id: string;
  check: CheckKind;
  severity: FindingSeverity;
  /** The developer's key (not the scratch copy's). */
  key: ObjectKey;
  /** One line: "Second reconcile created another configmaps object (generateName)". */
  title: string;
  /** A few sentences a developer understands: what happened, why it is a bug, what a fix usually looks like. */
  explanation: string;
  perturbation: Perturbation;
  /**
   * Unified diff of the masked end state: reference run (---) → perturbed run (+++). "" when the finding is about
   * writes rather than the end state (run twice, stale-cache destructive writes).
   */
  diff: string;
  /** The writes the finding is about (the no-op write, the destructive delete, …), in order. */
  writes: CheckWrite[];
  /** The perturbed run's journal entries for this key (informer, queue, reconcile, write, warning), in order. */
  journal: JournalEntry[];
  /** One line that reproduces just this finding: `reconcile-lab check ns/name --check runTwice --reconciler module:x.ts`. */
  reproduce: string;
}

/** The time spent in one part of a check (copying, reference runs, perturbed runs, cleanup, …). */
export interface CheckTimingPart {
  /** "copy", "reference run 1", "reference run 2", "perturbed run (crash after write 1)", "cleanup", … */
  part: string;
  ms: number;
}

export type CheckStatus =
  /** Ran, found nothing. */
  | 'passed'
  /** Ran, found at least one finding. */
  | 'failed'
  /** Not applicable or not possible here (e.g. a reconcile with one write has no crash point); `message` says why. */
  | 'skipped'
  /** The check itself could not run (server error, timeout of the harness); `message` says what happened. */
  | 'error';

/** One check of one key. */
export interface CheckResult {
  check: CheckKind;
  key: ObjectKey;
  status: CheckStatus;
  /** Why skipped / errored, or a one-line summary when passed ("3 crash points, end state equal each time"). */
  message?: string;
  findings: Finding[];
  durationMs: number;
  parts: CheckTimingPart[];
}

/** The fields masked before end states were compared, with why. */
export interface MaskedField {
  /** A JSON path pattern: "metadata.uid", "*.metadata.managedFields", "configmaps/<generated #1>.data.at". */
  path: string;
  /** "always volatile" (uids, resourceVersions, timestamps, managedFields, generated names) or "differed between the two reference runs". */
  reason: 'volatile' | 'learned';
}

/** Where the checks ran. */
export interface CheckClusterInfo {
  /** The kubeconfig context (or server URL) the checks ran against. */
  name: string;
  server?: string;
  /** True when it is the local control plane this project starts (no confirmation needed). */
  local: boolean;
}

/** What ran the reconciler under test. `go`: the Go controller through the bridge. */
export type CheckReconcilerKind = 'lab' | 'exec' | 'module' | 'go';

export interface CheckReport {
  /** RFC 3339, from the injected clock. */
  generatedAt: string;
  /** The primary resource, "plural.group". */
  resource: string;
  reconciler: string;
  reconcilerKind: CheckReconcilerKind;
  cluster: CheckClusterInfo;
  /** The keys checked, in order. */
  keys: ObjectKey[];
  /** The checks that were asked for, in order. */
  checks: CheckKind[];
  /** One per (key, check), in the order they ran. */
  results: CheckResult[];
  /** Every finding of every result, flattened (same objects as in `results`). */
  findings: Finding[];
  masked: MaskedField[];
  /** Things the developer should know (limits of this run, skipped parts, cleanup problems). */
  notes: string[];
  totals: { keys: number; checks: number; passed: number; failed: number; skipped: number; errors: number; findings: number };
  /** Wall time of the whole run, and its parts summed over keys and checks (for `npm run bench:check`). */
  durationMs: number;
  parts: CheckTimingPart[];
  /** True when the signal aborted the run (results hold what finished; cleanup still ran). */
  aborted: boolean;
}

/** Progress of a run, as it happens (for a progress bar and the live results view). */
export type CheckProgressEvent =
  | { kind: 'started'; keys: ObjectKey[]; checks: CheckKind[] }
  /** A coarse step inside a check: "reference run 1", "crash after write 2 of 3", "cleanup". */
  | { kind: 'step'; key: ObjectKey; check?: CheckKind; message: string }
  | { kind: 'checkStarted'; key: ObjectKey; check: CheckKind }
  | { kind: 'checkFinished'; result: CheckResult }
  | { kind: 'finished'; report: CheckReport };

/** Receives {@link CheckProgressEvent}s. A throwing receiver is logged and ignored; it never breaks a run. */
export interface CheckProgress {
  report(event: CheckProgressEvent): void;
}

/** Describes the reconciler for the report and the one-line reproduce commands. */
export type CheckReconcilerSpec =
  | { kind: 'lab' }
  | { kind: 'exec'; command: string[] }
  | { kind: 'module'; path: string }
  | { kind: 'go'; command: string[] };

export interface RunChecksOptions {
  /** The cluster: informers of the harness list and watch through it. */
  transport: KubeTransport;
  /** A plain client (writes of the harness itself are not journaled; the reconciler's are). */
  client: KubeClient;
  cluster: CheckClusterInfo;
  /**
   * Required when `cluster.local` is false: the checks refuse to run unless this equals `cluster.name`
   * (CLI `--confirm-cluster NAME`). They still only ever write copies in scratch namespaces.
   */
  confirmCluster?: string;
  /** The reconciled resource. */
  primary: ResourceInfo;
  /** Child resources the reconciler owns (its controller watches them; their objects are compared). Lab: ConfigMaps. */
  owned?: ResourceInfo[];
  /**
   * Makes the reconciler under test. Called once per controller start (each run, and each restart after a
   * crash) so in-memory state does not survive a "crash"; the harness disposes what it returns if disposable.
   */
  createReconciler?: () => Reconciler;
  /**
   * The developer's Go controller-runtime program (wired with the bridge package), for `reconcilerSpec.kind`
   * "go": every run starts a new process of it as a check instance over the run's scratch namespace
   * (src/core/checks/goRun.ts); `createReconciler` is not used then.
   */
  go?: GoCheckTarget;
  reconcilerSpec: CheckReconcilerSpec;
  /** The developer's keys to check ("ns/name", or "name" for cluster-scoped kinds). */
  keys: ObjectKey[];
  /** Predicates for the primary resource's events, as the loop is configured (flags, a module's `predicates` export). */
  predicates?: Predicate[];
  /**
   * The deadline of one reconcile of the built-in loop (lab, exec, module) in every run: `ctx.signal` is aborted after
   * it, as the loop the checks stand for does (a module's `options.reconcileTimeoutMs`, the editor's setting). Default:
   * none. A Go controller's own `ReconciliationTimeout` applies inside its program.
   */
  reconcileTimeoutMs?: number;
  /**
   * A module's own cache indexes (its `indexes` export), added to each run's informers; the resources they are on
   * must be the primary or among {@link RunChecksOptions.owned}.
   */
  indexes?: ModuleIndex[];
  /**
   * How the person turns on the generation-changed predicate where they run the checks (a flag, a setting, a
   * module export), for the hot-loop warnings of the checks' own loop; default: the library call.
   */
  predicateAdvice?: string;
  /** Default: all of {@link CHECK_KINDS}. */
  checks?: CheckKind[];
  /**
   * For the unobserved-state check: JSON merge patches of the primary applied one after the other; the events of
   * every state but the last are withheld. Default: one intermediate annotation added, then removed.
   */
  transitions?: unknown[];
  /**
   * Secrets and ConfigMaps of the object's namespace to copy into every scratch namespace besides those its spec
   * refers to in a recognised way (parseCopySpec in references.ts); `path` says who named them (`--copy`).
   */
  copies?: SpecReference[];
  /** How long a run may take to go idle and stop writing (convergence bound). Default 15 000 ms. */
  convergenceBoundMs?: number;
  /** How long nothing must happen for a run to count as settled. Default 750 ms. */
  quietMs?: number;
  /** The CLI flags that select this reconciler and cluster, for the reproduce lines (e.g. "--reconciler module:samples/x.ts"). */
  reproduceFlags?: string;
  clock?: Clock;
  log?: Logger;
}

/**
 * Runs the selected checks on every key, each on fresh copies in its own scratch namespace (cleaned up always,
 * also on abort), and resolves with the report. Never rejects for a finding; rejects only for a refusal
 * (unconfirmed non-local cluster) or invalid options, before touching the cluster.
 */
export type RunChecks = (options: RunChecksOptions, progress: CheckProgress | undefined, signal: AbortSignal | undefined) => Promise<CheckReport>;
