import { escapeControlChars } from '../core/text/terminal.ts';
import { realClock, sleep } from '../core/clock.ts';
import { DisposableStore, toDisposable, type Disposable } from '../core/lifecycle.ts';
import { createLogger, formatLogLine, JOURNALED_FIELD, type Logger } from '../core/log.ts';
import { ApiError, isNotFound } from '../core/k8s/client.ts';
import { createDynamicClient, type DynamicKubeClient } from '../core/k8s/dynamicClient.ts';
import { discoverResources, findResource, oneVersionPerResource, type DiscoveredResource } from '../core/k8s/discovery.ts';
import { keyFor, shortKey, splitKey, type ObjectKey } from '../core/k8s/keys.ts';
import { defaultKubeconfigFiles, KubeConfigError, loadKubeConfig } from '../core/k8s/kubeconfig.ts';
import { resourceIdFromGvrString, resourceIdOfGvr, type KubeObject, type ResourceInfo } from '../core/k8s/objects.ts';
import { OWNER_UID_INDEX, ownerUidIndexFunc } from '../core/cache/indexFuncs.ts';
import { KubeTransport } from '../core/k8s/transport.ts';
import { probeServer, watchServerOutages } from '../core/k8s/reachability.ts';
import { InformerFactory } from '../core/cache/informerFactory.ts';
import { stripManagedFields } from '../core/cache/sharedIndexInformer.ts';
import { onInitialListRefused, refusedListMessage, type ScopedInformer } from '../core/cache/refusedList.ts';
import { controllerBuilder } from '../core/controller/builder.ts';
import { parseCopySpec } from '../core/checks/references.ts';
import { deleteFoundGone, writeText, writeWarningsText } from '../core/journal/writeText.ts';
import type { Controller, StepResult } from '../core/controller/controller.ts';
import type { Reconciler } from '../core/controller/reconcile.ts';
import { Journal, queueTransitionText, rvAfterText, writeDeletedText, type JournalEntry } from '../core/journal/journal.ts';
import { WriteIndex, type Writer } from '../core/journal/writeIndex.ts';
import type { EnqueueReason, ReconcileOutcome } from '../core/controller/keyState.ts';
import { changesNothing, dryRunReconcile, noWritesText, unchangedWriteNote } from '../core/actions/dryRun.ts';
import { diagnoseStuck, FinalizerNotFoundError, notDeletingNote, ObjectChangedError, objectsHoldingNamespace, removeFinalizers, type StuckDiagnosis } from '../core/actions/finalizers.ts';
import { inspectKey, type InspectResult } from '../core/actions/inspect.ts';
import { buildReconcileReport, buildReport, renderReportJson, renderReportMarkdown } from '../core/actions/report.ts';
import { remoteReportPass } from '../core/bridge/remoteReport.ts';
import { describeOutcome } from '../core/actions/runOnce.ts';
import { writeDiff } from '../core/actions/objectDiff.ts';
import { maskSecretPair } from '../core/k8s/secretMask.ts';
import { BridgeHub } from '../core/bridge/bridgeHub.ts';
import { RemoteController } from '../core/bridge/remoteController.ts';
import type { GoProcess } from '../core/bridge/goProcess.ts';
import { everyControllerAnnounced, GoControllerNotAnnouncedError, programExitHint, runGoController, whenEveryControllerAnnounced } from '../core/bridge/runGoController.ts';
import { findGoMod, forbiddenCacheList, goLaunchProblem, uninstalledKindProblem, unservedKind } from '../core/bridge/goModule.ts';
import { PROTOCOL } from '../core/bridge/protocol.ts';
import { leaseHolderReader } from '../core/bridge/leaseWait.ts';
import { crdManifestsFor, findCrdManifests } from '../core/k8s/crdManifests.ts';
import { dirname, relative, resolve } from 'node:path';
import { describeExit } from '../core/bridge/launcher.ts';
import { writeTarget } from '../core/bridge/causes.ts';
import { journalingContextFactory, journalWriteOf } from '../core/actions/controllerContext.ts';
import { createKubeEventRecorder } from '../core/k8s/eventRecorder.ts';
import { CONFIGMAP_GVR, createLabReconciler, LAB_FINALIZER, labResourceProblem } from '../core/reconcilers/labReconciler.ts';
import { createExecReconciler } from '../core/reconcilers/execReconciler.ts';
import { createModuleReconciler, ModuleReconcilerError } from '../core/reconcilers/moduleReconciler.ts';
import { addModuleIndexes, type ModuleIndex } from '../core/reconcilers/moduleIndexes.ts';
import { parsePredicateSpec } from '../core/controller/predicateSpec.ts';
import { missingNamespaceNote, missingObjectNote } from '../core/k8s/absent.ts';
import { closestNames } from '../core/text/closest.ts';
import { cliVersion, ExitCode, helpFor, keyParts, parseCliArgs, wantsVersion, resolveWatchList, UsageError, type CliArgs } from './args.ts';
import { CheckRefusedError, runChecks, skippedUnsettled } from '../core/checks/runChecks.ts';
import { reproduceFlags, shellQuote } from '../core/checks/reproduce.ts';
import { renderCheckJson, renderCheckMarkdown, renderCheckText } from '../core/checks/render.ts';
import { CONFIGMAPS as CHECK_CONFIGMAPS } from '../core/checks/harness.ts';
import { isScratchObject, notScratchCopies } from '../core/checks/scratch.ts';
import { isLocalControlPlane } from '../core/checks/cluster.ts';
import { goContextProblem } from '../core/checks/goRun.ts';
import { keyOf } from '../core/k8s/keys.ts';
import { delayText } from '../core/text/duration.ts';

/** Where the CLI writes, and how it hears Ctrl+C (injected so tests can run it in-process). */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  /** Calls `fn` on SIGINT/SIGTERM (with the signal's name, when known); the returned Disposable unsubscribes. */
  onInterrupt(fn: (signal?: NodeJS.Signals) => void): Disposable;
  /**
   * Calls `fn` with each key pressed, one character at a time, while the returned Disposable lives; undefined when
   * there is no terminal to read keys from (stdin is not a TTY). Ctrl+C keeps interrupting (onInterrupt).
   */
  onKeys?(fn: (key: string) => void): Disposable | undefined;
}

/** Refused because the person did not confirm (--yes). */
class RefusedError extends Error {}

/** The object asked about exists nowhere (exit 1). */
class ObjectNotFoundError extends Error {}

/** Maps any failure to the documented exit code. */
export function exitCodeFor(e: unknown): ExitCode {
  // A --controller / --resource naming none of the controllers the program announced is a usage error too (known
  // only once the program ran and announced them).
  if (e instanceof UsageError || e instanceof GoControllerNotAnnouncedError) return ExitCode.usage;
  if (e instanceof RefusedError) return ExitCode.refused;
  if (e instanceof StoppedBeforeStartError) return e.exitCode;
  if (e instanceof KubeConfigError) return ExitCode.connection;
  if (e instanceof ObjectChangedError) return ExitCode.conflict;
  if (e instanceof ApiError) {
    if (e.code === 0 || e.code === 401) return ExitCode.connection;
    if (e.code === 409) return ExitCode.conflict;
  }
  return ExitCode.failure;
}

/**
 * The CLI's next step for a kubeconfig problem (the core message names none: the extension offers buttons), from
 * where the missing file was named: `--kubeconfig` (its path), `KUBECONFIG` (set, naming no file that exists), or
 * neither (~/.kube/config).
 */
function cliNextStep(e: unknown, args: CliArgs, env: CliIo['env']): string {
  if (!(e instanceof KubeConfigError)) return '';
  switch (e.problem) {
    case 'noKubeconfig':
      if (args.kubeconfig !== undefined) return ' Check the path given to --kubeconfig.';
      if (env.KUBECONFIG) return ' Correct KUBECONFIG, or pass --kubeconfig <file>.';
      return ' Pass --kubeconfig <file> or set KUBECONFIG.';
    case 'noContext':
      // A file without any context: no --context can help; another file can.
      if (/has no contexts/.test(e.message)) return ' Pass --kubeconfig <file> with a context (kubectl config view shows what a file holds).';
      return ' Pass --context <name> (or run kubectl config use-context).';
    default:
      return '';
  }
}

const indent = (text: string, pad = '    ') => text.split('\n').map((l) => pad + l).join('\n');

/**
 * The outputs (a command's CliIo) on whose stdout the journal's entries are printed as text now, warnings as ⚠
 * lines: the quiet logger then leaves out the log line of the same warning (see JOURNALED_FIELD).
 */
const journalWarningsOnStdout = new WeakSet<CliIo>();

/**
 * The outputs whose command is waiting for its informers' initial lists and turns a refused one (403, 401) into one
 * error saying what to do (a {@link RefusedListError}): meanwhile the quiet logger leaves out the reflector's
 * `list/watch failed` warning of that refusal, which printed the same server text a line before the full message
 * (-v keeps it).
 */
const refusedListsSaidByCommand = new WeakSet<CliIo>();

/** Until the returned Disposable is disposed, `io`'s command says a refused initial list itself (see refusedListsSaidByCommand). */
function sayRefusedLists(io: CliIo): Disposable {
  refusedListsSaidByCommand.add(io);
  return toDisposable(() => refusedListsSaidByCommand.delete(io));
}

/** Whether a log line is the reflector's warning of a list or watch refused for the credentials or by RBAC. */
function isRefusedListWarning(msg: string, fields: Record<string, unknown>): boolean {
  return msg === 'list/watch failed' && (fields.code === 403 || fields.code === 401);
}

/** From now until `store` is disposed, `io`'s stdout shows the journal's warnings (see journalWarningsOnStdout). */
function shownJournalWarnings(io: CliIo, store: DisposableStore): void {
  journalWarningsOnStdout.add(io);
  store.add(toDisposable(() => journalWarningsOnStdout.delete(io)));
}

/** Runs `reconcile-lab` with `argv` (without node and script); resolves with the exit code. Never throws. */
export async function runCli(argv: readonly string[], rawIo: CliIo): Promise<number> {
  // Nothing reaches the terminal unescaped: reconciler output and server text may carry escape sequences.
  const io: CliIo = { ...rawIo, stdout: (s) => rawIo.stdout(escapeControlChars(s)), stderr: (s) => rawIo.stderr(escapeControlChars(s)) };
  if (wantsVersion(argv)) {
    io.stdout(`reconcile-lab ${cliVersion()}\n`);
    return ExitCode.ok;
  }
  let args: CliArgs | 'help';
  try {
    args = parseCliArgs(argv);
  } catch (e) {
    // --json: the usage error as JSON on stdout too, as every failure (the flag is read from argv: parsing failed).
    if (jsonAsked(argv)) io.stdout(JSON.stringify({ error: (e as Error).message, exitCode: ExitCode.usage }) + '\n');
    io.stderr(`reconcile-lab: ${(e as Error).message}\n` + 'Run "reconcile-lab --help" for usage.\n');
    return ExitCode.usage;
  }
  if (args === 'help') {
    io.stdout(helpFor(argv));
    return ExitCode.ok;
  }
  const store = new DisposableStore();
  // Once Ctrl+C / SIGTERM answered a command (below), what the abandoned command still says (a step that ends as its
  // controller is disposed) is not shown: the command and its logger write through this.
  let interrupted: number | undefined;
  const commandIo: CliIo = {
    ...io,
    stdout: (t) => {
      if (interrupted === undefined) io.stdout(t);
    },
    stderr: (t) => {
      if (interrupted === undefined) io.stderr(t);
    },
  };
  // Without -v: warnings and errors only, and not a controller's warning while the command prints the journal's
  // warnings on stdout (the same text follows there as a ⚠ line: read once).
  const log: Logger = args.verbose ? createLogger((level, msg, fields) => commandIo.stderr(formatLogLine(level, msg, fields) + '\n')) : createLogger((level, msg, fields) => {
    if (fields[JOURNALED_FIELD] === true && journalWarningsOnStdout.has(commandIo)) return;
    if (refusedListsSaidByCommand.has(commandIo) && isRefusedListWarning(msg, fields)) return;
    if (level === 'warn' || level === 'error') commandIo.stderr(formatLogLine(level, msg, fields) + '\n');
  });
  // The core's timers are unref'd (a forgotten one cannot hold a CLI), so while a command waits on them alone (an
  // informer backing off before its first list) Node would see nothing left to do and exit with 0, silently: keep
  // the process alive until the command has answered.
  const keepAlive = setInterval(() => {}, 1 << 30);
  // Ctrl+C / SIGTERM answers a command at once (130 / 143) and its store is disposed as after any answer: a Go
  // program it launched is stopped (gracefully: go run removes its build directory), the bridge's socket directory
  // removed, an exec program's process group killed. Without this Node's default ended the process and left those
  // behind, and printed nothing (no --json line). run and check take Ctrl+C over once they have something to stop and
  // report (the loop, the checks: see handOverInterrupts); until then (connecting, loading a module, looking up keys)
  // they are answered here as every other command.
  const interrupt = new AbortController();
  let generic: Disposable | undefined;
  const onInterrupt = new Promise<number>((resolve) => {
    generic = store.add(
      io.onInterrupt((signal) => {
        if (interrupted !== undefined) return;
        interrupted = signal === 'SIGTERM' ? ExitCode.terminated : ExitCode.interrupted;
        const message = `${signal === 'SIGTERM' ? 'terminated (SIGTERM)' : 'interrupted'}: ${args.command} stopped before it finished${args.go ? '; stopping the Go program' : ''}`;
        if (args.json) io.stdout(JSON.stringify({ error: message, exitCode: interrupted }) + '\n');
        io.stderr(`reconcile-lab: ${message}\n`);
        resolve(interrupted);
        interrupt.abort(new CommandInterruptedError(message));
      }),
    );
  });
  interrupts.set(store, interrupt.signal);
  handOvers.set(store, () => generic?.dispose());
  try {
    const answer = execute(args, commandIo, log, store);
    answer.catch(() => {}); // after an interrupt its failure is not the answer
    return await Promise.race([answer, onInterrupt]);
  } catch (e) {
    const code = exitCodeFor(e);
    let message = ((e as Error)?.message ?? String(e)) + cliNextStep(e, args, io.env);
    // A Go program that ended (or is ending: the bridge saw it go first) explains the failure with its own output.
    const ending = await programEndings.get(store)?.(PROGRAM_GONE.test(message) ? PROGRAM_GONE_GRACE_MS : 0);
    if (ending) message += `\n${ending}`;
    if (args.json) io.stdout(JSON.stringify({ error: message, exitCode: code }) + '\n');
    io.stderr(`reconcile-lab: ${message}\n`);
    return code;
  } finally {
    // Let queued Kubernetes Events reach the server (bounded) before everything is torn down.
    const flushes = (pendingFlushes.get(store) ?? []).map((f) => f());
    if (flushes.length) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.allSettled(flushes), new Promise((r) => (timer = setTimeout(r, 2000)))]);
      clearTimeout(timer);
    }
    store.dispose();
    clearInterval(keepAlive);
  }
}

/** The reason a command's work is aborted with when Ctrl+C / SIGTERM ends it (a Go program still starting is stopped). */
class CommandInterruptedError extends Error {}

/** Aborted when Ctrl+C / SIGTERM ends a command before it handed interrupts over (see handOverInterrupts). */
const interrupts = new WeakMap<DisposableStore, AbortSignal>();

/** Per command store: ends runCli's own answer to Ctrl+C / SIGTERM (see handOverInterrupts). */
const handOvers = new WeakMap<DisposableStore, () => void>();

/**
 * From now on the command stops on Ctrl+C / SIGTERM itself (run: the loop ends and the summary is printed; check: the
 * checks clean up and report what ran): runCli no longer answers them. Call it in the same synchronous turn as the
 * command's own io.onInterrupt subscription, so that no signal falls between the two. Throws the interrupt's reason
 * when runCli already answered one (the command must not start anything after that).
 */
function handOverInterrupts(store: DisposableStore): void {
  interrupts.get(store)?.throwIfAborted();
  handOvers.get(store)?.();
}

/** Whether argv has --json before any `--` (for a command line that could not be parsed). */
function jsonAsked(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

/** Work to finish before a command's store is disposed (event recorders' queues). */
const pendingFlushes = new WeakMap<DisposableStore, Array<() => Promise<void>>>();
/** A command's Go program (`--go`): resolves with how it ended when it exits (on its own or stopped at the end). */
const programExits = new WeakMap<DisposableStore, Promise<string>>();
/**
 * A command's Go program (`--go`): once it ended (waiting up to `graceMs` for that), how it ended and its last
 * output lines ({@link programEnding}); undefined while it runs.
 */
const programEndings = new WeakMap<DisposableStore, (graceMs: number) => Promise<string | undefined>>();
/** How many of the program's last output lines a failure shows (as when it exits before announcing a controller). */
const PROGRAM_TAIL_LINES = 15;
/**
 * How long a failure the program's ending explains waits for that ending: a manager that failed to start stops its
 * runnables first (its graceful shutdown), which takes a few seconds on a busy machine.
 */
const PROGRAM_GONE_GRACE_MS = 10_000;
/**
 * An error from the bridge that a program ending (a manager that failed to start) explains better than itself. A
 * refusal from a running program (a key outside its cache, no bridge client for a dry run) is its own answer and is
 * told at once.
 */
const PROGRAM_GONE = /disconnected|not connected|queue shut down|not responding|no controller named|stopped before the step ran/;

/** `how` (describeExit's words: `exited with code 1`, `killed by SIGKILL`) after "the Go program". */
function goProgramHow(how: string): string {
  return how.startsWith('killed') ? `was ${how}` : how;
}

/**
 * What a command adds to its failure when its Go program ended: how (`exited with code 1`) and its last output
 * lines, which hold the program's own error (e.g. the manager's `failed to start metrics server: … address
 * already in use`) — the bridge alone can only say that the process went away — then, as the launch says it
 * before ({@link programExitHint}; `dir`: the program's module, default the working directory), what those lines
 * mean: a kind whose informer never synced, an address already in use, webhooks without a certificate.
 */
export function programEnding(how: string, tail: readonly string[], dir?: string): string {
  const hint = programExitHint(tail, dir ?? process.cwd());
  return `The Go program ${goProgramHow(how)}.${tail.length ? ` ${lastOutput(tail).trimEnd()}` : ''}${hint ? `\n${hint}` : ''}`;
}

/** `Last output:` and the lines, indented, ending with a newline ('' without lines). */
function lastOutput(tail: readonly string[]): string {
  return tail.length ? `Last output:\n${tail.map((l) => `  ${l}`).join('\n')}\n` : '';
}

/** A command's Go program (`--go`): its last output lines. */
const programTail = new WeakMap<DisposableStore, () => string[]>();

/**
 * The Go program a command launched (`--go`): `run` resumes and pauses all of its controllers, not only the one it
 * follows, since it runs the whole program (the others' lines are labelled `[name]`).
 */
const goPrograms = new WeakMap<DisposableStore, GoProcess>();

interface Session {
  transport: KubeTransport;
  client: DynamicKubeClient;
  resource: ResourceInfo;
  defaultNamespace: string;
  /** The kubeconfig context's namespace, when it names one. */
  contextNamespace?: string;
  /** The kubeconfig file exec and Go programs are given (their KUBECONFIG, the exec input's `kubeconfig`): an absolute path. */
  kubeconfigPath?: string;
  /**
   * The KUBECONFIG exec and Go programs are given: {@link kubeconfigPath}, or, when KUBECONFIG lists several files,
   * that list with every entry absolute (a program that runs elsewhere, `go -C operator run ./cmd`, still finds them).
   */
  programKubeconfig?: string;
  /** The kubeconfig's current context and cluster server, and whether it is this project's local control plane. */
  cluster: { name: string; server?: string; local: boolean };
  /** `--owns`: the resources whose objects are children of the primary (besides the built-in reconcilers' ConfigMaps). */
  owned: readonly DiscoveredResource[];
  /** The resources the server serves (discovery, at connect). */
  served: readonly DiscoveredResource[];
  /**
   * `--go` without `--resource`: {@link resource} is not known until the program announces its controller; it is then
   * the resource that controller reconciles ({@link followResourceOf}). Until then `resource` must not be read.
   */
  resourceFromProgram: boolean;
  /**
   * `--go` without `--resource` and `--controller`: the controller whose resource {@link resource} is (chosen by
   * default) and the names of every controller its program announced so far.
   */
  followedByDefault?: { name: string; announced: () => readonly string[] };
}

/** What `resource` holds while {@link Session.resourceFromProgram} waits for the program's controller. */
const NOT_YET: ResourceInfo = Object.freeze({ group: '', version: '', resource: '', kind: '', namespaced: true });

/**
 * Why `--go` without `--resource` cannot follow controller `name`: it announced a resource `id` the cluster does not
 * serve; or a kind (`announced.kind`, from bridge.Wrap's object) but no resource — the program's RESTMapper found
 * none, i.e. the kind's CRD is not installed (a newcomer's first mistake; see {@link uninstalledKindMessage}); or
 * nothing at all (no object given to bridge.Wrap).
 */
export function unservedResourceMessage(name: string, id: string | undefined, announced: { group?: string; version?: string; kind?: string }, projectDir?: string, served?: readonly DiscoveredResource[]): string {
  const install = 'install its CRD (a kubebuilder project: make install, or kubectl apply -f config/crd/bases)';
  if (id !== undefined) return `the Go controller ${name} reconciles ${id}, which the cluster does not serve: ${install}, or pass --resource`;
  const uninstalled = uninstalledKindMessage(name, announced, projectDir, served);
  if (uninstalled) return `${uninstalled}, then run again`;
  return `the Go controller ${name} does not name the resource it reconciles (no bridge.Wrap(mgr, name, r, &YourKind{}) gave its object, or it has no bridge.Wrap): pass --resource`;
}

/**
 * What to say of controller `name`, which announced a kind but no resource (its program's RESTMapper found none: the
 * kind's CRD is not installed): with the kind's manifest in the project (`projectDir`, config/crd/bases first) the
 * file to apply; when other CRDs of that file's directory are not in `served` either, the directory instead, naming
 * them (as `make install` applies a project's CRDs together: the next missing one, e.g. a second API group's kind,
 * would otherwise stop the program when controller-runtime's cache sync timeout ends); else the general advice.
 * Undefined when the controller announced a resource, or no kind.
 */
export function uninstalledKindMessage(name: string, announced: { group?: string; version?: string; kind?: string; resource?: string }, projectDir?: string, served?: readonly DiscoveredResource[]): string | undefined {
  const unserved = unservedKind(name, announced);
  if (!unserved || !announced.kind) return undefined;
  const manifests = projectDir ? findCrdManifests([projectDir]) : [];
  const manifest = crdManifestsFor(manifests, { group: announced.group ?? '', kind: announced.kind, ...(announced.version ? { version: announced.version } : {}) })[0];
  if (!manifest) return uninstalledKindProblem(name, announced);
  const shown = (file: string) => relative(process.cwd(), file) || file;
  const dir = dirname(manifest.file);
  const others = served
    ? [...new Set(manifests.filter((m) => m.name !== manifest.name && dirname(m.file) === dir && !findResource(served, { group: m.group, name: m.plural })).map((m) => m.name))]
    : [];
  if (others.length) return `${unserved}: its CRD is not installed: kubectl apply -f ${shown(dir)} (${manifest.name} and the other CRDs there this cluster lacks: ${others.join(', ')}; or make install in a kubebuilder project)`;
  return `${unserved}: its CRD is not installed: kubectl apply -f ${shown(manifest.file)} (${manifest.name}; or make install in a kubebuilder project)`;
}

/**
 * Where the `--go` program's project is, to look for its CRD manifests: the module of `go -C <dir> run …` or of the
 * working directory (its go.mod's directory), else the working directory.
 */
function goProjectDir(go: readonly string[] | undefined): string {
  const dir = go?.[1] === '-C' && go[2] ? resolve(go[2]) : process.cwd();
  const goMod = findGoMod(dir);
  return goMod ? dirname(goMod) : dir;
}

/**
 * Says once, on stderr, that `--namespace` does not apply to `resource` when it is cluster-scoped: kubectl ignores it
 * for such a resource, and so does every command here (every object of it is in scope), so nobody should believe a
 * run is limited to that namespace. Nothing for a namespaced resource or without `-n`.
 */
function noteClusterScopedNamespace(io: CliIo, resource: ResourceInfo, namespace: string | undefined): void {
  if (resource.namespaced || namespace === undefined) return;
  io.stderr(`reconcile-lab: note: ${resource.group ? `${resource.resource}.${resource.group}` : resource.resource} is cluster-scoped: --namespace ${namespace} does not apply to it and is ignored (every object of it is in scope)\n`);
}

/**
 * `--go` without `--resource`: makes the session's resource the one `controller` reconciles (as the bridge announced
 * it: "buckets.storage.example.org", "deployments.apps", "configmaps"). Throws a usage error when the controller does
 * not name one the server serves.
 */
function followResourceOf(s: Session, controller: RemoteController, projectDir: string | undefined): void {
  const id = controller.resourceId;
  const dot = id?.indexOf('.') ?? -1;
  const found = id === undefined ? undefined : findResource(s.served, { group: dot < 0 ? '' : id.slice(dot + 1), name: dot < 0 ? id : id.slice(0, dot) });
  if (!found) {
    throw new UsageError(unservedResourceMessage(controller.name, id, controller.announcement, projectDir, s.served));
  }
  s.resource = found;
  s.resourceFromProgram = false;
  controller.setResourceNamespaced(found.namespaced);
}

async function connect(args: CliArgs, io: CliIo, log: Logger): Promise<Session> {
  const kc = loadKubeConfig({ path: args.kubeconfig, context: args.context });
  const transport = new KubeTransport(kc);
  const client = createDynamicClient(transport, { fieldManager: 'reconcile-lab', log });
  const resources = await discoverResources(transport, { logger: log });
  // --go without --resource: the program's controller says which resource (the lab's Widget CRD need not exist).
  const fromProgram = Boolean(args.go) && !args.resourceGiven;
  const resource = fromProgram ? NOT_YET : resolvePrimary(resources, args);
  // A bare name matched in a named API group: say which resource it is, as kubectl's output would show it.
  if (!fromProgram && resource.group && !args.resource.includes('.')) io.stderr(`reconcile-lab: note: --resource ${args.resource} is ${resource.resource}.${resource.group}\n`);
  // Your own reconciler on the default resource: the lab's Widgets in every namespace are rarely what was meant.
  if (!fromProgram && !args.resourceGiven && args.reconciler.kind !== 'lab') {
    io.stderr(`reconcile-lab: note: no --resource: ${args.reconciler.kind === 'module' ? 'the module' : 'the program'} reconciles ${resource.group ? `${resource.resource}.${resource.group}` : resource.resource} (the default, the built-in lab reconciler's resource); pass --resource <plural.group> for your own kind\n`);
  }
  const owned = args.owns.map((o) => resolveResource(resources, o, '--owns'));
  // With --go and no --resource the scope is known once the program names its resource (followResourceOf).
  if (!fromProgram) noteClusterScopedNamespace(io, resource, args.namespace);
  const ctxNs = kc.getContextObject(kc.getCurrentContext())?.namespace;
  const current = kc.getCurrentCluster();
  const cluster = { name: kc.getCurrentContext(), ...(current?.server ? { server: current.server } : {}), local: isLocalControlPlane(current?.name, current?.server) };
  const session: Session = { transport, client, resource, owned, defaultNamespace: args.namespace ?? ctxNs ?? 'default', ...(ctxNs ? { contextNamespace: ctxNs } : {}), cluster, served: resources, resourceFromProgram: fromProgram };
  // What exec and Go programs are given: --kubeconfig, or KUBECONFIG's one existing file. With several files (merged,
  // missing ones skipped) none is named: the programs inherit KUBECONFIG and merge them as kubectl and client-go do
  // (the first file alone might be missing, or lack the context).
  const envFiles = io.env.KUBECONFIG ? defaultKubeconfigFiles(io.env) : [];
  const kubeconfigPath = args.kubeconfig ?? (envFiles.length === 1 ? envFiles[0] : undefined);
  // Absolute: a program may run elsewhere (go -C operator run ./cmd, a script that cds) and still find it.
  if (kubeconfigPath) session.kubeconfigPath = resolve(kubeconfigPath);
  session.programKubeconfig = session.kubeconfigPath ?? absoluteKubeconfigList(io.env.KUBECONFIG);
  return session;
}

/** An exec program's KUBECONFIG when no one file is named (several in KUBECONFIG): the absolute list. */
function execKubeconfigEnv(s: Session): { env?: Record<string, string> } {
  return !s.kubeconfigPath && s.programKubeconfig ? { env: { KUBECONFIG: s.programKubeconfig } } : {};
}

/** KUBECONFIG's list with each entry made absolute from this process's directory, empty entries kept out; undefined when unset. */
export function absoluteKubeconfigList(list: string | undefined): string | undefined {
  const sep = process.platform === 'win32' ? ';' : ':';
  const files = (list ?? '').split(sep).filter((f) => f.trim() !== '').map((f) => resolve(f));
  return files.length ? files.join(sep) : undefined;
}

/**
 * The served resource `given` names (`flag`'s value, lower case), as kubectl resolves it: `plural.group` (or
 * `kind.group`, `short.group`) in that group; a bare plural, kind, singular or short name in the core group first,
 * else in whichever named API group serves it (`orders` → `orders.shop.example.io`), when only one does. Throws a
 * {@link UsageError} (exit 2) when the name is ambiguous across groups (listing them) or names nothing served (with
 * what was probably meant: the full name of a match in another group, a typo of what the group serves, or the CRD to
 * install).
 */
export function resolveResource(resources: readonly DiscoveredResource[], given: string, flag: string): DiscoveredResource {
  const dot = given.indexOf('.');
  const plural = dot < 0 ? given : given.slice(0, dot);
  const group = dot < 0 ? '' : given.slice(dot + 1);
  const exact = findResource(resources, { group, name: plural });
  if (exact) return exact;
  const name = plural.toLowerCase();
  // The kind in lower case is the singular (a CRD's default singular, and every built-in resource's).
  const similar = oneVersionPerResource(resources.filter((r) => r.resource === name || r.kind.toLowerCase() === name || (r.shortNames ?? []).includes(name)));
  const full = [...new Set(similar.map((r) => (r.group ? `${r.resource}.${r.group}` : r.resource)))].filter((f) => f !== given).sort();
  if (dot < 0 && full.length === 1) return similar[0]!;
  if (dot < 0 && full.length > 1) throw new UsageError(`${flag} ${given} is ambiguous: ${full.length} API groups serve it (${full.join(', ')}); name one with its group, e.g. ${flag} ${full[0]}`);
  // "--resource gadgets.wrong.group" for a resource served in another group: name the full plural.group it most likely meant.
  if (full.length) throw new UsageError(`the cluster does not serve ${given}; did you mean ${full.map((f) => `${flag} ${f}`).join(' or ')}?`);
  throw new UsageError(`the cluster does not serve ${given}${notServedHint(resources, group, name, flag)}`);
}

/**
 * The primary resource of a command that is not `--go`: `--resource` resolved by {@link resolveResource}. Without
 * `--resource` the default is the lab reconciler's Widgets; for an exec or module reconciler on a cluster that does not
 * serve them, the usage error says to name the reconciler's own resource (with the custom resources the cluster
 * serves, at most five), not to install the lab's CRD, which is not what such a reconciler reconciles.
 */
export function resolvePrimary(resources: readonly DiscoveredResource[], args: Pick<CliArgs, 'resource' | 'resourceGiven' | 'reconciler'>): DiscoveredResource {
  if (args.resourceGiven || args.reconciler.kind === 'lab') return resolveResource(resources, args.resource, '--resource');
  try {
    return resolveResource(resources, args.resource, '--resource');
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    const who = args.reconciler.kind === 'module' ? 'the module' : 'the program';
    // Custom resources, as far as discovery tells: a group with a dot that is not one of Kubernetes' own (*.k8s.io).
    const custom = [...new Set(oneVersionPerResource(resources, (r) => r.group.includes('.') && !r.group.endsWith('.k8s.io') && !r.resource.includes('/')).map((r) => `${r.resource}.${r.group}`))].sort();
    const examples = custom.length ? ` (this cluster serves ${custom.slice(0, 5).join(', ')}${custom.length > 5 ? ', …' : ''})` : '';
    throw new UsageError(`no --resource: name the resource ${who} reconciles, --resource <plural.group>${examples}. The default, ${args.resource}, is the built-in lab reconciler's, and this cluster does not serve it`);
  }
}

/**
 * Why `--resource name.group` found nothing, for a person: the lab's own CRD to install; the resources the group does
 * serve (a typo in the plural: the closest first); or that no such API group is served (its CRD is not installed).
 */
function notServedHint(resources: readonly DiscoveredResource[], group: string, name: string, flag: string): string {
  if (group === 'lab.reconcile.dev') return ' (install it: kubectl apply -f samples/crd.yaml)';
  const inGroup = [...new Set(resources.filter((r) => r.group === group && !r.resource.includes('/')).map((r) => r.resource))].sort();
  if (inGroup.length) {
    const close = closestNames(name, inGroup);
    // The core group serves dozens: name only the likely typo. A bare name may be a typo of any group's resource.
    if (!group) {
      if (close.length) return ` (did you mean ${flag} ${close[0]}?)`;
      const full = (r: DiscoveredResource) => (r.group ? `${r.resource}.${r.group}` : r.resource);
      const all = resources.filter((r) => !r.resource.includes('/'));
      const near = closestNames(name, [...new Set(all.map((r) => r.resource))]);
      const meant = [...new Set(all.filter((r) => r.resource === near[0]).map(full))].sort();
      return meant.length ? ` (did you mean ${meant.map((m) => `${flag} ${m}`).join(' or ')}?)` : '';
    }
    return `: API group ${group} serves ${[...close, ...inGroup.filter((r) => !close.includes(r))].slice(0, 12).join(', ')}${inGroup.length > 12 ? ', …' : ''}${close.length ? ` (did you mean ${flag} ${group ? `${close[0]}.${group}` : close[0]}?)` : ''}`;
  }
  if (!group) return '';
  return `: no API group ${group} is served. Install its CustomResourceDefinition (kubectl apply -f <your CRD>.yaml), then check the name with kubectl api-resources --api-group=${group}`;
}

/** The reconciler's own ctx.log without -v: info and above on stderr (debug and trace only with -v). */
function reconcilerLogger(io: CliIo): Logger {
  return createLogger((level, msg, fields) => {
    if (level === 'info' || level === 'warn' || level === 'error') io.stderr(formatLogLine(level, msg, fields) + '\n');
  });
}

/** How to turn on the generation-changed predicate from the CLI, for the hot-loop warnings of run, step and check. */
function cliPredicateAdvice(modulePath?: string): string {
  return `run again with --predicate generation-changed${modulePath ? `, or add export const predicates = ['generation-changed'] to ${modulePath}` : ''}`;
}

function resourceName(s: Session): string {
  return s.resource.group ? `${s.resource.resource}.${s.resource.group}` : s.resource.resource;
}

function normalizeKey(key: string, s: Session): ObjectKey {
  const parts = keyParts(key);
  if (!s.resource.namespaced) {
    const f = s.followedByDefault;
    const others = f ? f.announced().filter((n) => n !== f.name) : [];
    const followed = f ? ` (the resource of the Go controller ${f.name}, the first the program sets up; --controller ${others.length ? others.join(' or ') : '<name>'} follows another)` : '';
    if (parts.namespace) throw new UsageError(`${resourceName(s)} is cluster-scoped: use a key without a namespace ("${parts.name}")${followed}`);
    return parts.name;
  }
  return keyFor(parts.namespace ?? s.defaultNamespace, parts.name);
}

/**
 * The key a command names for `controller`: a Go controller with a custom request type (it announced `requestType`)
 * names its items by the text the bridge shows for them, taken verbatim; any other controller an object key
 * (normalizeKey).
 */
function controllerKey(given: string, s: Session, controller: Controller): ObjectKey {
  if (controller instanceof RemoteController && controller.announcement.requestType) {
    if (given === '') throw new UsageError(`a key of ${controller.name} (requests of type ${controller.announcement.requestType}) is required`);
    return given;
  }
  return normalizeKey(given, s);
}

function makeReconciler(args: CliArgs, s: Session, log: Logger, store: DisposableStore): Reconciler {
  const spec = args.reconciler;
  switch (spec.kind) {
    case 'lab': {
      const problem = labResourceProblem(s.resource);
      if (problem) throw new UsageError(`${problem} (--reconciler exec:<command> or module:<file>)`);
      return createLabReconciler();
    }
    case 'exec':
      return store.add(createExecReconciler({ command: spec.command, kubeconfigPath: s.kubeconfigPath, ...execKubeconfigEnv(s), context: args.context, timeoutSetting: '--exec-timeout <seconds>', ...(args.execTimeoutMs !== undefined ? { timeoutMs: args.execTimeoutMs } : {}) }));
    case 'module': {
      const loaded = preloadedModules.get(store);
      preloadedModules.delete(store);
      return loaded ?? store.add(createModuleReconciler({ path: spec.path, log }));
    }
  }
}

/** A module's wrong exports as a usage error: what to fix (its reconcile export, or its predicates / options). */
function moduleUsageMessage(e: ModuleReconcilerError): string {
  return `${e.message}: fix the module's ${e.kind === 'config' ? 'predicates / options exports' : 'exports'}`;
}

/**
 * `--reconciler module:<file>`: loads the module once before anything runs, so that every command answers a module
 * it cannot use the same way — a usage error (exit 2): no such file, no reconcile function (with the export it
 * probably meant), wrong predicates / options. A module that does not compile or throws while loading is a usage
 * error too, except for `run`, whose loop starts anyway (each reconcile reports the problem, and the fixed file is
 * picked up).
 */
async function checkModule(args: CliArgs, log: Logger, store: DisposableStore): Promise<void> {
  if (args.reconciler.kind !== 'module') return;
  const m = createModuleReconciler({ path: args.reconciler.path, log });
  let keep = false;
  try {
    await m.controllerConfig();
    keep = args.command !== 'check';
  } catch (e) {
    if (!(e instanceof ModuleReconcilerError)) throw e;
    if (e.kind === 'not-found') throw new UsageError(`${e.message} (--reconciler module:<path to a .ts or .js file>, relative to the current directory ${process.cwd()})`);
    if (e.kind === 'export' || e.kind === 'config') throw new UsageError(moduleUsageMessage(e));
    if (args.command !== 'run') throw new UsageError(e.message);
  } finally {
    // The module loaded here is the one the command reconciles with: loading it again would run its top-level code
    // twice (say "loaded" twice, open a second connection). check loads a fresh one per controller it starts.
    if (keep) preloadedModules.set(store, store.add(m));
    else m.dispose();
  }
}

/** The reconciler module {@link checkModule} loaded for a command (every command but check), for makeReconciler. */
const preloadedModules = new WeakMap<DisposableStore, ReturnType<typeof createModuleReconciler>>();

async function execute(args: CliArgs, io: CliIo, log: Logger, store: DisposableStore): Promise<number> {
  // A `go` program that cannot build here or would never connect is named before anything compiles for minutes.
  const goProblem = args.go?.length ? goLaunchProblem(args.go[0]!, args.go.slice(1), process.cwd()) : undefined;
  if (goProblem) throw new UsageError(`--go ${args.go!.join(' ')}: ${goProblem}`);
  await checkModule(args, log, store);
  const s = await connect(args, io, log);
  store.add(s.transport);
  // Ctrl+C while connecting (a server that never answers) answered the command already: start nothing more.
  interrupts.get(store)?.throwIfAborted();
  switch (args.command) {
    case 'dry-run':
      return dryRun(args, io, log, s, store);
    case 'report':
      return report(args, io, log, s, store);
    case 'inspect':
      return inspect(args, io, log, s, store);
    case 'strip-finalizers':
      return stripFinalizers(args, io, log, s, store);
    case 'step':
      return step(args, io, log, s, store);
    case 'run':
      return run(args, io, log, s, store);
    case 'check':
      return check(args, io, log, s, store);
  }
}

/**
 * Sends each of the checks' changes (JSON merge patches of the primary) as a dry-run patch of `key`'s object, in
 * order, without storing anything; a change the server refuses as invalid (400, 422) is a usage error naming it and
 * the server's reason. Other failures (the object went away meanwhile) are left to the checks.
 */
async function transitionsAccepted(s: Session, key: ObjectKey, transitions: readonly unknown[], source: string): Promise<void> {
  const { namespace, name } = splitKey(key);
  for (const t of transitions) {
    try {
      await s.client.patch(s.resource, s.resource.namespaced ? namespace : undefined, name, 'merge', t, { dryRun: true });
    } catch (e) {
      if (e instanceof ApiError && (e.code === 400 || e.code === 422)) throw new UsageError(`${source} ${JSON.stringify(t)}: the server refuses it for ${key} (${e.message.split('\n')[0]}); give changes the resource's schema allows`);
      if (!(e instanceof ApiError)) throw e;
    }
  }
}

/** check: the robustness checks on copies of the keys (or every object of the resource). */
async function check(args: CliArgs, io: CliIo, log: Logger, s: Session, store: DisposableStore): Promise<number> {
  const spec = args.reconciler;
  if (spec.kind === 'lab' && !args.go) {
    const problem = labResourceProblem(s.resource);
    if (problem) throw new UsageError(`${problem} (--reconciler exec:<command> or module:<file>)`);
  }
  const createReconciler = (): Reconciler =>
    spec.kind === 'lab' ? createLabReconciler()
      : spec.kind === 'exec' ? createExecReconciler({ command: spec.command, kubeconfigPath: s.kubeconfigPath, ...execKubeconfigEnv(s), context: args.context, timeoutSetting: '--exec-timeout <seconds>', ...(args.execTimeoutMs !== undefined ? { timeoutMs: args.execTimeoutMs } : {}) })
        : createModuleReconciler({ path: spec.path, log });
  const predicates = args.predicates.map((p) => parsePredicateSpec(p));
  let transitions = args.transitions;
  let indexes: ModuleIndex[] = [];
  // --reconcile-timeout wins over a module's exported options.reconcileTimeoutMs, as in run's loop (0: none).
  let reconcileTimeoutMs = args.reconcileTimeoutMs;
  if (spec.kind === 'module') {
    const m = createModuleReconciler({ path: spec.path, log });
    try {
      const config = await m.controllerConfig();
      predicates.push(...config.predicates);
      transitions ??= config.checkTransitions;
      indexes = config.indexes;
      // The module's own reconcile deadline applies to the checks' runs as to run's loop (ctx.signal aborted).
      reconcileTimeoutMs ??= config.options.reconcileTimeoutMs;
    } catch (e) {
      if (e instanceof ModuleReconcilerError && (e.kind === 'export' || e.kind === 'config')) throw new UsageError(moduleUsageMessage(e));
      throw e;
    } finally {
      m.dispose();
    }
  }
  // The resources the module's indexes are on are watched by each check run (a usage error when not served).
  const indexedResources = moduleIndexResources(s, indexes);
  if (args.go) {
    const problem = goContextProblem(s.kubeconfigPath, s.cluster.name);
    if (problem) throw new UsageError(problem);
  }
  if (s.resourceFromProgram) await learnResourceFromProgram(args, io, log, s, interrupts.get(store));
  let keys = args.positionals.map((k) => normalizeKey(k, s));
  // A key that names nothing is a typo, not five checks that "could not run".
  const missing: string[] = [];
  const why: string[] = [];
  for (const k of keys) {
    const { namespace, name } = splitKey(k);
    try {
      await s.client.get(s.resource, s.resource.namespaced ? namespace : undefined, name);
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) throw e;
      missing.push(k);
      const note = await missingObjectNote(s.client, s.resource, resourceName(s), s.resource.namespaced ? namespace : undefined, name);
      const theirs = (await otherControllersKey(s, programOthers.get(s) ?? [], namespace, name, (_, id) => `--resource ${id} checks it`)).slice(2);
      if (note || theirs) why.push([note, theirs].filter(Boolean).join('; '));
    }
  }
  if (missing.length) throw new UsageError(`no ${resourceName(s)} ${missing.map((k) => `"${k}"`).join(', ')} to check${s.resource.namespaced ? ' (keys are namespace/name)' : ''}; list them with kubectl get ${resourceName(s)}${s.resource.namespaced ? ' -A' : ''}${why.map((w) => `\n  ${w}`).join('')}`);
  if (!keys.length) {
    const namespace = s.resource.namespaced ? args.namespace : undefined;
    const items = (await s.client.list(s.resource, namespace)).items.filter((o) => !isScratchObject(o));
    keys = items.map((o) => keyOf(o)).sort();
    if (!keys.length) {
      const ns = namespace ? await missingNamespaceNote(s.client, namespace) : undefined;
      throw new UsageError(`no ${resourceName(s)} to check${namespace ? ` in ${namespace}` : ''}${ns ? `: ${ns}` : ''}; name a key`);
    }
  }
  // A change the server refuses (a value its schema does not allow, an immutable field) would leave every check that
  // applies it "could not run": refuse it up front with the server's reason.
  if (transitions?.length) await transitionsAccepted(s, keys[0]!, transitions, args.transitions ? '--transition' : "the module's checkTransitions export");
  // Everything that changes what the checks do goes into the reproduce lines, so a copied line runs the same check.
  const flags = reproduceFlags({
    ...(args.go ? { go: args.go } : spec.kind === 'exec' ? { reconciler: `exec:${spec.command.map(shellQuote).join(' ')}` } : spec.kind === 'module' ? { reconciler: `module:${spec.path}` } : {}),
    resource: resourceName(s),
    ...(args.kubeconfig ? { kubeconfig: args.kubeconfig } : {}),
    ...(args.context ? { context: args.context } : {}),
    ...(args.confirmCluster ? { confirmCluster: args.confirmCluster } : {}),
    predicates: args.predicates,
    ...(args.transitions ? { transitions: args.transitions } : {}),
    ...(args.copies?.length ? { copies: args.copies } : {}),
    ...(args.convergenceBoundMs !== undefined ? { convergenceBoundMs: args.convergenceBoundMs } : {}),
    ...(args.execTimeoutMs !== undefined ? { execTimeoutMs: args.execTimeoutMs } : {}),
    ...(args.reconcileTimeoutMs !== undefined ? { reconcileTimeoutMs: args.reconcileTimeoutMs } : {}),
  }) + s.owned.map((o) => ` --owns ${shellQuote(o.group ? `${o.resource}.${o.group}` : o.resource)}`).join('');
  const ac = new AbortController();
  handOverInterrupts(store);
  const sub = io.onInterrupt(() => ac.abort(new Error('interrupted')));
  // The core's timers are unref'd and a frozen watch holds no socket: keep the process alive until the report is out.
  const keepAlive = setInterval(() => {}, 1 << 30);
  try {
    const report = await runChecks({
      transport: s.transport,
      client: s.client,
      cluster: s.cluster,
      ...(args.confirmCluster ? { confirmCluster: args.confirmCluster } : {}),
      primary: s.resource,
      owned: [{ ...CHECK_CONFIGMAPS }, ...s.owned.filter((o) => !(o.group === '' && o.resource === CHECK_CONFIGMAPS.resource)), ...indexedResources],
      ...(indexes.length ? { indexes } : {}),
      ...(args.go
        ? {
            go: {
              command: args.go,
              env: s.programKubeconfig ? { KUBECONFIG: s.programKubeconfig } : {},
              ...(args.goWaitMs !== undefined ? { waitMs: args.goWaitMs } : {}),
              onOutput: (line: string) => {
                if (args.verbose) io.stderr(`[go] ${line}\n`);
              },
            },
          }
        : { createReconciler }),
      reconcilerSpec: args.go ? { kind: 'go', command: args.go } : spec.kind === 'exec' ? { kind: 'exec', command: spec.command } : spec.kind === 'module' ? { kind: 'module', path: spec.path } : { kind: 'lab' },
      keys,
      ...(args.checks ? { checks: args.checks } : {}),
      ...(predicates.length ? { predicates } : {}),
      ...(reconcileTimeoutMs ? { reconcileTimeoutMs } : {}),
      ...(args.go ? {} : { predicateAdvice: cliPredicateAdvice(spec.kind === 'module' ? spec.path : undefined) }),
      ...(transitions ? { transitions } : {}),
      ...(args.copies?.length ? { copies: args.copies.map((c) => ({ ...parseCopySpec(c), path: '--copy' })) } : {}),
      ...(args.convergenceBoundMs !== undefined ? { convergenceBoundMs: args.convergenceBoundMs } : {}),
      reproduceFlags: flags,
      log,
    }, {
      report(e) {
        if (args.json || args.markdown) return;
        if (e.kind === 'step') io.stderr(`  … ${e.key}: ${e.message}\n`);
        if (e.kind === 'checkFinished') io.stderr(`  ${e.result.status === 'failed' ? '✗' : '·'} ${e.result.key}: ${e.result.check} ${e.result.status}\n`);
      },
    }, ac.signal);
    const text = args.json ? renderCheckJson(report) + '\n' : args.markdown ? renderCheckMarkdown(report) : renderCheckText(report, { verbose: args.verbose });
    io.stdout(text);
    // Ctrl+C (or SIGTERM): say on stderr why the exit code is 1 and what the report holds.
    if (report.aborted) io.stderr('reconcile-lab: check interrupted: the report above covers only what ran before it; its scratch namespaces were deleted\n');
    // A check skipped because the reconciler never went idle checked nothing: a CI run must not pass on it (and the
    // exit code 1 says why on stderr, as a report of no finding would not).
    const unsettled = report.results.filter(skippedUnsettled);
    if (unsettled.length && !report.totals.findings && !report.totals.errors && !report.aborted) {
      io.stderr(`reconcile-lab: exit code 1: ${unsettled.length} check(s) skipped because the reference run did not settle (${[...new Set(unsettled.map((r) => r.key))].join(', ')}): they checked nothing\n`);
    }
    return report.totals.findings > 0 || report.totals.errors > 0 || report.aborted || report.results.some(skippedUnsettled) ? ExitCode.failure : ExitCode.ok;
  } catch (e) {
    if (e instanceof CheckRefusedError) {
      io.stderr(`reconcile-lab: ${e.message}\n`);
      return ExitCode.refused;
    }
    throw e;
  } finally {
    clearInterval(keepAlive);
    sub.dispose();
  }
}

async function dryRun(args: CliArgs, io: CliIo, log: Logger, s: Session, store: DisposableStore): Promise<number> {
  if (args.go) return goDryRun(args, io, log, s, store, args.positionals[0]!);
  const key = normalizeKey(args.positionals[0]!, s);
  const reconciler = makeReconciler(args, s, log, store);
  const missing = await noteMissingKey(io, s, key);
  const r = await dryRunReconcile({ client: s.client, reconciler, primary: s.resource, key, log });
  const failed = r.outcome.kind === 'error' || r.outcome.kind === 'terminal';
  if (args.json) {
    const { actions, ...rest } = r;
    io.stdout(JSON.stringify({ ...rest, actions: actions.map(({ record, ...a }) => ({ ...a, resourceVersionAfter: record.resourceVersionAfter, ...(record.deleted ? { deleted: true } : {}) })) }, null, 2) + '\n');
    return failed ? ExitCode.failure : ExitCode.ok;
  }
  const out: string[] = [`Dry-run reconcile of ${key} (${s.resource.resource}${s.resource.group ? '.' + s.resource.group : ''}, reconciler ${reconciler.name}): ${args.reconciler.kind === 'exec' ? 'every write made through Reconcile Lab (the status the program returns) sent with dryRun=All, nothing of it persisted; what the program writes itself (kubectl, its own client) persists unless it honours RECONCILE_DRY_RUN=true (kubectl --dry-run=server)' : 'every write sent with dryRun=All, nothing persisted'}.`];
  if (r.explanation?.notes.length) out.push('', 'Observed:', ...r.explanation.notes.map((n) => `  - ${n}`));
  out.push('', r.actions.length ? `Planned actions (${r.actions.length}):` : `Planned actions: ${missing && r.outcome.kind === 'done' ? NO_WRITES_MISSING : noWritesText(r.outcome)}.`);
  r.actions.forEach((a, i) => {
    out.push(`  ${i + 1}. ${writeText({ verb: a.verb, resource: a.resource, objectKey: a.key, subresource: a.subresource })}${a.resourceVersionBefore ? ` (rv ${a.resourceVersionBefore})` : ''}${a.outcome === 'error' ? ` — REJECTED: ${a.error}` : a.record.deleted ? ` — ${writeDeletedText(a.record)}` : changesNothing(a) ? ` — ${unchangedWriteNote(a.verb)}` : ''}${a.warnings ? ` — ⚠ ${writeWarningsText(a.warnings)}` : ''}`);
    if (a.diff) out.push(indent(a.diff, '       '));
  });
  if (r.status) out.push('', 'Status it would write:', r.status.diff ? indent(r.status.diff, '  ') : '  (unchanged)');
  out.push('', `Requeue decision: ${describeOutcome(r.outcome)}`);
  io.stdout(out.join('\n') + '\n');
  return failed ? ExitCode.failure : ExitCode.ok;
}

async function report(args: CliArgs, io: CliIo, log: Logger, s: Session, store: DisposableStore): Promise<number> {
  if (args.go) return goReport(args, io, log, s, store);
  const reconciler = makeReconciler(args, s, log, store);
  const keys = args.positionals.length ? args.positionals.map((k) => normalizeKey(k, s)) : undefined;
  const namespace = s.resource.namespaced ? args.namespace : undefined;
  if (keys) for (const k of keys) await noteMissingKey(io, s, k);
  else if (namespace) await noteMissingNamespace(io, s, namespace, 'nothing to report there');
  let r: Awaited<ReturnType<typeof buildReconcileReport>>;
  try {
    r = await buildReconcileReport({ client: s.client, reconciler, primary: s.resource, keys, namespace, dryRun: args.dryRun, log });
  } catch (e) {
    // The list of every object refused (RBAC): the same next steps as an informer's (one namespace, or the rights).
    if (e instanceof ApiError && e.code === 403 && !keys) throw refusedList(s, namespace, e);
    throw e;
  }
  io.stdout(args.json ? renderReportJson(r) + '\n' : renderReportMarkdown(r));
  return r.totals.errors > 0 ? ExitCode.failure : ExitCode.ok;
}

/**
 * `report --go`: the program starts paused (nothing reconciles on its own) and each key is stepped in turn (with
 * --dry-run: dry-run, every write forced to DryRunAll, and the program in dry-run-only mode). Without keys: every
 * object of the controller's resource on the server (in --namespace when given), except those its manager's cache
 * leaves out (said on stderr). A controller with a custom request type needs its keys named.
 */
async function goReport(args: CliArgs, io: CliIo, log: Logger, s: Session, store: DisposableStore): Promise<number> {
  const controller = (await startController(args, io, log, s, store, true, () => {})) as RemoteController;
  const custom = controller.announcement.requestType;
  if (custom && !args.positionals.length) throw new UsageError(`the Go controller ${controller.name} reconciles requests of type ${custom}, not objects: name its keys (report --go <key>…, as the views show them)`);
  const namespace = s.resource.namespaced ? args.namespace : undefined;
  let keys: ObjectKey[] = [];
  for (const k of args.positionals) keys.push(await goControllerKey(k, s, controller, store));
  if (!custom) {
    if (keys.length) for (const k of keys) await noteMissingKey(io, s, k, await otherControllers(store, controller));
    else {
      if (namespace) await noteMissingNamespace(io, s, namespace, 'nothing to report there');
      let items: KubeObject[];
      try {
        items = (await s.client.list(s.resource, namespace)).items;
      } catch (e) {
        if (e instanceof ApiError && e.code === 403) throw refusedList(s, namespace, e);
        throw e;
      }
      const outside: string[] = [];
      for (const o of items.sort((a, b) => keyOf(a).localeCompare(keyOf(b)))) {
        const why = controller.outsideCache(keyOf(o), o.metadata.labels ?? {});
        if (why) outside.push(keyOf(o));
        else keys.push(keyOf(o));
      }
      if (outside.length) io.stderr(`reconcile-lab: note: ${outside.length} object(s) left out, outside the cache of ${controller.name} (its manager's cache.Options): ${outside.slice(0, 5).join(', ')}${outside.length > 5 ? ', …' : ''}\n`);
      // Only what the controller itself would reconcile: a live report persists what each reconcile writes.
      const queued = await initialQueue(controller);
      if (queued) {
        const notQueued = keys.filter((k) => !queued.has(k));
        keys = keys.filter((k) => queued.has(k));
        if (notQueued.length) io.stderr(`reconcile-lab: note: ${notQueued.length} object(s) left out: none of ${controller.name}'s watches queued them, though their initial list had them, so its predicates (builder.WithPredicates, WithEventFilter) or event handlers leave them out and, running, it would not reconcile them (name one to reconcile it anyway: report --go <key>): ${notQueued.slice(0, 5).join(', ')}${notQueued.length > 5 ? ', …' : ''}\n`);
      }
    }
  }
  keys = [...new Set(keys)];
  const r = await buildReport({
    client: s.client,
    primary: s.resource,
    keys,
    dryRun: args.dryRun,
    reconciler: `Go controller ${controller.name}`,
    pass: remoteReportPass(controller, { dryRun: args.dryRun, journal: controller.journal }),
  });
  await controller.stop();
  io.stdout(args.json ? renderReportJson(r) + '\n' : renderReportMarkdown(r));
  return r.totals.errors > 0 ? ExitCode.failure : ExitCode.ok;
}

/**
 * The keys a Go controller started paused queued by itself, read once its workers started (controller-runtime starts
 * them after its watches' handlers saw the initial list, see RemoteController.queueSnapshot); undefined when that is
 * not known within INITIAL_QUEUE_WAIT_MS (workers waiting for leadership) or from this program's bridge (older).
 */
async function initialQueue(controller: RemoteController): Promise<Set<string> | undefined> {
  const deadline = realClock.now() + INITIAL_QUEUE_WAIT_MS;
  for (;;) {
    const snap = await controller.queueSnapshot();
    if (!snap) return undefined;
    if (snap.workersStarted) return new Set(snap.keys);
    if (realClock.now() >= deadline) return undefined;
    await sleep(realClock, 100);
  }
}

/** How long `report --go` waits for the controller's workers to start before it reports every object. */
const INITIAL_QUEUE_WAIT_MS = 60_000;

/** A list of every object of the resource the server refused (RBAC): the same next steps as an informer's. */
function refusedList(s: Session, namespace: string | undefined, e: ApiError): RefusedListError {
  return new RefusedListError(refusedListMessage({ resource: s.resource, ...(namespace ? { namespace } : {}), code: 403, error: e.message }, cliRefusedHints(s)));
}

/** Starts one informer for the resource (in the key's namespace) and waits for its initial list. */
async function syncedInformer(s: Session, io: CliIo, log: Logger, store: DisposableStore, namespace: string | undefined, watchList: boolean) {
  // Objects kept as received (no transform), so the cache compares with the server field by field.
  const factory = store.add(new InformerFactory({ transport: s.transport, logger: log, watchList }));
  const informer = factory.informerFor(s.resource, namespace ? { namespace } : {});
  factory.start();
  const ac = new AbortController();
  const timer = realClock.setTimeout(() => ac.abort(new Error('timed out')), 60_000);
  // A list the server refuses (RBAC, credentials) is said at once, with what to do, instead of after the minute.
  let refused: Error | undefined;
  const said = sayRefusedLists(io);
  const watch = onInitialListRefused([{ informer, ...(namespace ? { namespace } : {}) }], (r) => {
    refused = new RefusedListError(refusedListMessage(r, cliRefusedHints(s)));
    ac.abort(refused);
  });
  try {
    if (!(await factory.waitForCacheSync(ac.signal))) throw refused ?? new ApiError(0, 'Timeout', `the informer for ${s.resource.resource} did not sync within 60 s${lastListError([informer])}`);
  } finally {
    watch.dispose();
    said.dispose();
    realClock.clearTimeout(timer);
  }
  return informer;
}

async function inspect(args: CliArgs, io: CliIo, log: Logger, s: Session, store: DisposableStore): Promise<number> {
  if (args.go) return goInspect(args, io, log, s, store);
  const key = normalizeKey(args.positionals[0]!, s);
  const informer = await syncedInformer(s, io, log, store, splitKey(key).namespace, resolveWatchList(args.watchList, process.env));
  const r = await inspectKey({ client: s.client, gvr: s.resource, key, cached: informer.getIndexer().getByKey(key) });
  return printInspection(args, io, s, r, { cache: 'the informer\'s cache', informerResourceVersion: informer.lastSyncResourceVersion() });
}

/**
 * `inspect --go`: the program's own cached copy (read through the bridge from the informer its watches use, the
 * program started paused so nothing is reconciled) against a fresh GET. Any controller of the program will do (they
 * share the manager's cache); `--resource` may name a child it watches (Owns / Watches), not only what it reconciles.
 */
async function goInspect(args: CliArgs, io: CliIo, log: Logger, s: Session, store: DisposableStore): Promise<number> {
  const journal = store.add(new Journal({ clock: realClock, capacity: 1_000 }));
  const controller = await startGoController(args, io, log, s, store, true, journal, true);
  const key = await goControllerKey(args.positionals[0]!, s, controller, store, true);
  const { object, metadataOnly } = await controller.cachedObject(s.resource, key);
  const r = await inspectKey({ client: s.client, gvr: s.resource, key, cached: object, metadataOnly: metadataOnly === true, goTyped: true });
  return printInspection(args, io, s, r, { cache: `the Go program's cache (its manager's, which its controllers share)${metadataOnly ? ', metadata only: only metadata is compared' : ''}`, others: await otherControllers(store, controller) });
}

/**
 * Prints (or, with --json, writes as JSON) an inspection. A key found in neither place is an ObjectNotFoundError
 * naming the object meant when a typo is likely and, with `others` (the `--go` program's other controllers), the one
 * of their resources that has an object of that name.
 */
async function printInspection(args: CliArgs, io: CliIo, s: Session, r: InspectResult, o: { cache: string; informerResourceVersion?: string; others?: readonly ProgramController[] }): Promise<number> {
  const key = r.key;
  if (r.state === 'both-missing') {
    // The object meant, when a typo is likely (as step, dry-run and check say it).
    const { namespace, name } = splitKey(key);
    const note = await missingObjectNote(s.client, s.resource, resourceName(s), s.resource.namespaced ? namespace : undefined, name);
    const meant = note?.match(/\((did you mean [^)]*)\)$|: (namespace .*)$/);
    const theirs = o.others?.length ? await otherControllersKey(s, o.others, namespace, name, (_, id) => `--resource ${id} inspects it`) : '';
    throw new ObjectNotFoundError(`${key} not found: no ${resourceName(s)} of that name is in ${o.cache} or on the server${meant ? ` (${meant[1] ?? meant[2]})` : ''}${theirs}`);
  }
  if (args.json) {
    // Secret values masked in the JSON too (a changed one marked), as in the diff.
    const [cached, server] = maskSecretPair(r.cached, r.server);
    io.stdout(JSON.stringify({ ...r, ...(r.cached ? { cached } : {}), ...(r.server ? { server } : {}), cache: o.cache, ...(o.informerResourceVersion !== undefined ? { informerResourceVersion: o.informerResourceVersion } : {}) }, null, 2) + '\n');
    return ExitCode.ok;
  }
  const out = [
    `${key}: ${r.state}${r.differs ? ' (cache and server differ)' : ''}`,
    `  cache: ${o.cache}`,
    `  cached resourceVersion: ${r.cachedResourceVersion ?? '(not in cache)'}`,
    `  server resourceVersion: ${r.serverResourceVersion ?? '(not found)'}`,
    ...(o.informerResourceVersion !== undefined ? [`  informer last synced at resourceVersion: ${o.informerResourceVersion || '—'}`] : []),
  ];
  if (r.resourceVersionLag !== undefined) out.push(`  lag: ${r.resourceVersionLag} (resourceVersions are opaque; this counts cluster-wide writes, for orientation only)`);
  if (r.diff) out.push('', indent(r.diff, '  '));
  io.stdout(out.join('\n') + '\n');
  return ExitCode.ok;
}

function renderDiagnosis(d: StuckDiagnosis): string {
  const out = [d.summary, `  ${d.kind ?? 'object'} ${d.key}, resourceVersion ${d.resourceVersion}${d.deletionTimestamp ? `, deletionTimestamp ${d.deletionTimestamp}` : ''}`];
  for (const c of d.conditions ?? []) out.push(`  condition ${c.type}: ${c.reason ?? ''} ${c.message ?? ''}`.trimEnd());
  for (const f of d.finalizers) {
    out.push('', `  finalizer ${f.finalizer}${f.location === 'spec' ? ' (spec.finalizers)' : ''}`);
    out.push(`    probable owner: ${f.probableOwner}`);
    out.push(`    owner running:  ${f.running}`);
    for (const e of f.evidence) out.push(`      · ${e}`);
    out.push(`    if removed:     ${f.consequence}`);
  }
  return out.join('\n');
}

/** The objects holding a Terminating namespace, each with the command that strips it; what to do instead of stripping the namespace. */
function renderHolding(h: Awaited<ReturnType<typeof objectsHoldingNamespace>>, namespace: string): string {
  if (!h.objects.length) return `\n  No object in ${namespace} has finalizers now${h.skipped.length ? ` (not listed: ${h.skipped.join(', ')})` : ''}: the namespace controller should finish the deletion shortly.`;
  const out = ['', `  held up by (objects in ${namespace} that still have finalizers):`];
  for (const o of h.objects) {
    out.push(`    ${o.resource} ${o.key}: ${o.finalizers.join(', ')}${o.terminating ? ' (Terminating)' : ''}`);
    out.push(`      → reconcile-lab strip-finalizers ${o.key} --resource ${o.resource}`);
  }
  if (h.skipped.length) out.push(`    (not listed: ${h.skipped.join(', ')})`);
  out.push(`  The namespace's own finalizer is removed by the namespace controller once these are gone: if their controllers are gone, strip theirs (above), not the namespace's.`);
  return out.join('\n');
}

async function stripFinalizers(args: CliArgs, io: CliIo, log: Logger, s: Session, store: DisposableStore): Promise<number> {
  const key = normalizeKey(args.positionals[0]!, s);
  const { namespace, name } = splitKey(key);
  const diagnosis = await diagnoseStuck({
    client: s.client,
    gvr: s.resource,
    namespace,
    name,
    // This CLI process runs no controller loop: say so for the finalizer the built-in reconciler owns.
    knownControllers: [{ name: 'the Reconcile Lab lab reconciler', finalizers: [LAB_FINALIZER], managers: ['reconcile-lab'], running: false }],
  }).catch(async (e: unknown) => {
    // A typo: name the closest objects, as step and dry-run do.
    if (!isNotFound(e)) throw e;
    const note = await missingObjectNote(s.client, s.resource, resourceName(s), s.resource.namespaced ? namespace : undefined, name);
    throw note ? new ObjectNotFoundError(`${note}: nothing to strip`) : e;
  });
  const target = args.finalizer;
  if (target !== undefined && !diagnosis.finalizers.some((f) => f.finalizer === target)) {
    throw new FinalizerNotFoundError(`${key} has no finalizer "${target}" (present: ${diagnosis.finalizers.map((f) => f.finalizer).join(', ') || 'none'})`);
  }
  if (!args.json) io.stdout(renderDiagnosis(diagnosis) + '\n');
  // A Terminating Namespace waits for the finalizers of objects in it: name them (the condition gives only a count),
  // so that the next step is not stripping the namespace's own finalizer.
  const isNamespace = s.resource.group === '' && s.resource.resource === 'namespaces';
  const waitsOnContent = (diagnosis.conditions ?? []).some((c) => (c.type === 'NamespaceFinalizersRemaining' || c.type === 'NamespaceContentRemaining') && c.status === 'True');
  const holding = isNamespace && diagnosis.terminating && waitsOnContent ? await objectsHoldingNamespace({ client: s.client, resources: s.served, namespace: name }) : undefined;
  if (holding && !args.json) io.stdout(renderHolding(holding, name) + '\n');
  // Nothing to remove: not a refusal, and not a failure either.
  if (!diagnosis.finalizers.length) {
    if (args.json) io.stdout(JSON.stringify({ diagnosis, result: { removed: [], remaining: [] } }, null, 2) + '\n');
    else io.stdout(`\nNothing to strip: ${key} has no finalizers.\n`);
    return ExitCode.ok;
  }
  // Not being deleted: nothing is stuck, and a finalizer taken off now is put back by its controller.
  if (!diagnosis.terminating) {
    io.stderr(`\nNote: ${notDeletingNote(key)}\n`);
  }
  // --dry-run previews (the server answers, nothing is stored): no confirmation needed.
  if (!args.yes && !args.dryRun) {
    const what = target ? `finalizer ${target}` : 'all finalizers';
    const refusal = `Refusing to remove ${what} from ${key} without --yes. Read the consequences ${args.json ? 'in the diagnosis' : 'above'}; add --dry-run to preview the server's answer.`;
    // --json: a failure's {"error", "exitCode"} as every command's, with the diagnosis beside them.
    if (args.json) io.stdout(JSON.stringify({ error: refusal, exitCode: ExitCode.refused, refused: true, diagnosis, ...(holding ? { holding: holding.objects } : {}) }, null, 2) + '\n');
    io.stderr(`\n${refusal}\n`);
    return ExitCode.refused;
  }
  const journal = store.add(new Journal({ clock: realClock, capacity: 100, delivery: 'sync' }));
  const result = await removeFinalizers({
    client: s.client,
    gvr: s.resource,
    namespace,
    name,
    finalizer: target,
    expectedResourceVersion: diagnosis.resourceVersion,
    dryRun: args.dryRun,
    log,
    // Every removal is a journal entry (the same record the extension's Event Log shows), echoed as an audit line.
    onWrite: (w) => {
      const e = journal.recordWrite(journalWriteOf(w, 'reconcile-lab strip-finalizers', key));
      const target = e.kind === 'write' ? writeText(e) : `${w.verb} ${w.key}`;
      io.stderr(`audit: ${target} ${w.dryRun ? '(dry-run) ' : ''}rv ${w.resourceVersionBefore ?? '?'} → ${rvAfterText(w, '?')} ${w.outcome}${w.error ? ` (${w.error.code} ${w.error.reason})` : ''}\n`);
    },
  });
  journal.flush();
  if (args.json) {
    const { writes, ...rest } = result;
    io.stdout(JSON.stringify({ diagnosis, result: { ...rest, writes: writes.map(({ before, after, ...w }) => w) }, journal: journal.entries({}) }, null, 2) + '\n');
  } else {
    // A dry-run of the last finalizer of a Terminating object: the audit line says "→ deleted" (the server's answer);
    // say what that means here too, as the real removal does.
    const wouldGo = result.dryRun && diagnosis.terminating && result.remaining.length === 0 ? '; its deletion would then complete (the object would be gone)' : '';
    io.stdout(`\n${result.dryRun ? '[dry-run] would remove' : 'Removed'} ${result.removed.join(', ')} from ${key}; remaining: ${result.remaining.join(', ') || 'none'}${result.deleted ? '; the object is gone (its deletion completed)' : wouldGo}.\n`);
  }
  return ExitCode.ok;
}

const ordinal = (n: number) => `${n}${n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;

/** Continuation lines of a multi-line message, indented under the entry so it reads as one entry. */
const oneEntry = (text: string) => text.replace(/\r?\n/g, '\n               │ ');

/**
 * Why a reconcile ran, one trigger of it in words, naming the object whose event queued `key` and its
 * resourceVersion: `update rv 41` (the key's own object), `update of owned Deployment ns/web rv 42`, `add of watched
 * ConfigMap ns/shelf rv 7` (a mapped watch), `retry after failure 2`, `added outside an informer event (…)`.
 */
export function describeTrigger(x: EnqueueReason, key: string | undefined, writes?: WriteIndex, controller?: string, startedAt?: number): string {
  // A wait another cause cut short (an Add makes a waiting key ready): the reconcile started before it was due.
  const early = (x.kind === 'requeueAfter' || x.kind === 'backoff') && startedAt !== undefined && x.at > startedAt ? `, not yet due (in ${delayText(x.at - startedAt)}): another cause ran it first` : '';
  const rv = ('resourceVersion' in x && x.resourceVersion ? ` rv ${x.resourceVersion}` : '') + ('deletionRequested' in x && x.deletionRequested ? ' (deletion requested: deletionTimestamp set)' : '');
  const by = (objectKey: string) => writtenBy(writes?.writer(objectKey, 'resourceVersion' in x ? x.resourceVersion : undefined), key, controller);
  switch (x.kind) {
    case 'informer': {
      const what = x.initial ? 'initial list' : x.event;
      return `${what}${x.objectKey === key ? '' : ` of ${x.objectKey}`}${rv}${by(x.objectKey)}`;
    }
    case 'watch':
      return `${x.initial ? 'initial list' : x.event} of watched ${x.objectKind ?? resourceIdFromGvrString(x.resource)} ${x.objectKey}${rv}${by(x.objectKey)}`;
    case 'owned':
      return `${x.initial ? 'initial list' : x.event} of owned ${x.childKind ?? resourceIdFromGvrString(x.resource)} ${x.child}${rv}${by(x.child)}`;
    case 'backoff':
      return `retry after failure ${x.attempt}${early}`;
    case 'requeueAfter':
      return `requeue-after${x.reason ? ` (${x.reason})` : ''}${early}`;
    case 'manual':
      // An add with a note says it ("step (force) from Reconcile Lab", "added outside an informer event (…)").
      return x.note ? (x.action === 'enqueue' ? x.note : `${x.action} (${x.note})`) : x.action;
  }
}

/** ` (this key's own write)`, ` (a write of the reconcile of ns/b)`, ` (a write of stove's reconcile of main)`, or ''. */
function writtenBy(w: Writer | undefined, key: string | undefined, controller: string | undefined): string {
  if (!w) return '';
  const sameController = w.controller === undefined || controller === undefined || w.controller === controller;
  if (w.key === undefined) return ' (a write made outside a reconcile)';
  if (sameController && w.key === key) return " (this key's own write)";
  return ` (a write of ${sameController ? 'the' : `${w.controller}'s`} reconcile of ${w.key})`;
}


/** What a Go reconcile returned beside its error and lost, said once: ` (its RequeueAfter 30 s is ignored: …)`. */
const ignoredText = (ignored: string | undefined, instead: string) => (ignored ? ` (its ${ignored} is ignored: with an error, controller-runtime drops the Result, ${instead})` : '');


/**
 * ` (no change)` for a write the server accepted without changing the object (its resourceVersion stayed): the
 * reconciler sent an update, patch or apply although the object already was as desired — a write every pass.
 */
const noChange = (e: { verb: string; dryRun: boolean; resourceVersionBefore?: string; resourceVersionAfter?: string; deleted?: boolean; error?: string }) =>
  !e.dryRun && !e.error && !e.deleted && e.verb !== 'create' && e.verb !== 'delete' && e.resourceVersionBefore !== undefined && e.resourceVersionBefore === e.resourceVersionAfter ? ' (no change)' : '';

/**
 * One journal entry as one text entry (undefined: not shown at this verbosity). A retry time reads relative to the
 * entry's own time, the one the line starts with, so `run` (which prints as entries come) and `step` (which prints
 * after the step ended, when a 5 ms retry is already due) say the same. `writes`, given every entry in order, lets a
 * trigger name the write that caused it.
 */
export function formatEntry(e: JournalEntry, verbose: boolean, writes?: WriteIndex): string | undefined {
  const t = new Date(e.at).toISOString().slice(11, 23);
  writes?.note(e);
  switch (e.kind) {
    case 'reconcileStart':
      // `attempt` counts reconciles of the key (successful ones too), not retries: say so.
      return `${t} ▶ ${e.key} reconcile, ${ordinal(e.attempt)} of this key (${e.triggers.map((x) => describeTrigger(x, e.key, writes, e.controller, e.at)).join(', ') || 'no trigger'})${e.priority !== undefined && e.priority !== 0 ? ` [priority ${e.priority}]` : ''}`;
    case 'reconcileEnd': {
      const o = e.outcome;
      let what: string;
      if (o.kind === 'success') what = 'done';
      else if (o.kind === 'requeueAfter') what = `requeue after ${delayText(o.afterMs)}${o.reason ? ` (${o.reason})` : ''}`;
      else if (o.kind === 'error') {
        // A Go controller's rate limiter gave the delay: show that (the entry reaches us a little after the backoff
        // began, so retryAt − e.at would read shorter than the user's limiter said).
        const retry = o.retryDelayMs !== undefined ? `retry in ${delayText(o.retryDelayMs)}` : o.retryAt !== undefined ? `retry in ${delayText(Math.max(0, Math.round(o.retryAt - e.at)))}` : 'no retry scheduled';
        what = `✗ error${o.failures !== undefined ? ` (failure ${o.failures})` : ''}, ${retry}${ignoredText(o.ignored, 'retried with backoff')}: ${o.message}`;
      } else if (o.kind === 'requeue') {
        what = `requeue (rate-limited, the deprecated requeue: true)${o.reason ? ` (${o.reason})` : ''}${o.retryAt !== undefined ? `, retry in ${delayText(Math.max(0, Math.round(o.retryAt - e.at)))}` : ''}`;
      } else if (o.kind === 'terminal') what = `✗ terminal error, not retried until an event queues the key again${ignoredText(o.ignored, 'not requeued')}: ${o.message}`;
      else what = `${o.kind}: ${o.message}`;
      return oneEntry(`${t} ■ ${e.key} ${what} [${e.durationMs} ms]`);
    }
    case 'write':
      // Neither resourceVersion known (a Go Delete of an object built by name, a create that failed): no "rv — → —".
      return oneEntry(`${t}   ✎ ${writeText(e)}${e.resourceVersionBefore === undefined && e.resourceVersionAfter === undefined && !e.deleted ? '' : ` rv ${e.resourceVersionBefore ?? '—'} → ${rvAfterText(e, '—')}`}${noChange(e)}${e.dryRun ? ' (dry-run)' : ''}${e.error ? (deleteFoundGone(e) ? ` not found (already gone): ${e.error}` : ` FAILED ${e.error}`) : ''}${e.warnings?.length ? ` ⚠ ${writeWarningsText(e.warnings)}` : ''}`);
    case 'warning':
      return oneEntry(`${t} ⚠ ${e.message}`);
    case 'control':
      return verbose ? `${t} · ${e.action}${e.detail ? ' ' + e.detail : ''}` : undefined;
    case 'informer':
      return verbose ? `${t} · ${e.role} ${e.event} ${e.objectKey} rv ${e.resourceVersion ?? '—'} → ${e.enqueued.join(', ') || (e.filteredBy ? `filtered by ${e.filteredBy}` : 'nothing')}` : undefined;
    case 'queue':
      return verbose ? `${t} · ${e.key ?? '(queue)'} ${queueTransitionText(e.transition)}${e.dueAt !== undefined ? ` (${e.waitKind ?? 'wait'} until ${new Date(e.dueAt).toISOString().slice(11, 23)})` : ''}${e.priority !== undefined ? ` (priority ${e.priority})` : ''}` : undefined;
  }
}

/**
 * The label of a write made outside any reconcile a controller reported (a Go program's Runnable, a controller
 * without bridge.Wrap, code run before the manager starts): it names no controller, and its key is only the
 * written object's.
 */
export const OUTSIDE_RECONCILE = '[outside a reconcile]';

/** A write entry that no reconcile made (see {@link OUTSIDE_RECONCILE}). */
const outsideReconcile = (e: JournalEntry) => e.kind === 'write' && e.controller === undefined;

/**
 * `line` labelled `[controller] ` when its entry belongs to another controller than `main` (a Go program's
 * manager runs all its controllers; the command follows one of them), and {@link OUTSIDE_RECONCILE} when it is a
 * write no reconcile made.
 */
export function labelOther(line: string, e: JournalEntry, main: string): string {
  if (outsideReconcile(e)) return `${OUTSIDE_RECONCILE} ${line}`;
  return e.controller && e.controller !== main ? `[${e.controller}] ${line}` : line;
}

/** Per-key totals of a `run`, from the journal. */
export interface KeySummary {
  /** The key as its controller names it (for a write no reconcile made: the written object's key), never labelled. */
  key: string;
  /** Set when the key belongs to another controller than the one the command runs (a Go program's other controllers). */
  controller?: string;
  /** Set on the row of writes no reconcile made ({@link OUTSIDE_RECONCILE}): `key` is the written object's. */
  outsideReconcile?: true;
  reconciles: number;
  writes: number;
  errors: number;
  warnings: number;
  /** The outcome of its last reconcile that ran to its end (one cancelled by the stop does not count). */
  lastOutcome?: ReconcileOutcome;
  /** Its very last reconcile was cancelled (the run stopped while it ran): what it wrote may or may not be stored. */
  cancelledLast?: boolean;
}

/**
 * The widest key column of the run summary table: a longer key (names may have 253 characters) is cut to its start
 * and end ({@link shortKey}), so one long name does not push every column off the screen. The line naming the keys
 * that ended in error and `--json` keep whole keys.
 */
export const SUMMARY_KEY_WIDTH = 60;

/** How the text summary names a row: `[controller] key` for another controller's, `[outside a reconcile] key`, else the key. */
export function summaryLabel(r: KeySummary): string {
  return r.outsideReconcile ? `${OUTSIDE_RECONCILE} ${r.key}` : r.controller ? `[${r.controller}] ${r.key}` : r.key;
}

/** Accumulates {@link KeySummary} rows from journal entries. */
export class RunSummary {
  private readonly keys = new Map<string, KeySummary>();
  /**
   * `main`: the controller the command runs; keys of other controllers (the other controllers of a Go program's
   * manager) are rows of their own, carrying `controller` and shown as `[controller] key` ({@link summaryLabel}).
   */
  private readonly main: string | undefined;
  constructor(main?: string) {
    this.main = main;
  }
  private row(key: string, controller: string | undefined): KeySummary {
    const other = controller !== undefined && this.main !== undefined && controller !== this.main ? controller : undefined;
    const id = other ? `[${other}] ${key}` : key;
    let r = this.keys.get(id);
    if (!r) this.keys.set(id, (r = { key, ...(other ? { controller: other } : {}), reconciles: 0, writes: 0, errors: 0, warnings: 0 }));
    return r;
  }
  private outsideRow(objectKey: string): KeySummary {
    const id = `${OUTSIDE_RECONCILE} ${objectKey}`;
    let r = this.keys.get(id);
    if (!r) this.keys.set(id, (r = { key: objectKey, outsideReconcile: true, reconciles: 0, writes: 0, errors: 0, warnings: 0 }));
    return r;
  }
  add(e: JournalEntry): void {
    if (!e.key) return;
    if (e.kind === 'reconcileEnd') {
      const r = this.row(e.key, e.controller);
      r.reconciles++;
      if (e.outcome.kind === 'error' || e.outcome.kind === 'terminal') r.errors++;
      if (e.outcome.kind !== 'cancelled') r.lastOutcome = e.outcome;
      r.cancelledLast = e.outcome.kind === 'cancelled';
    } else if (e.kind === 'write') {
      // A write no reconcile made is no key of any controller: its own row, labelled.
      const r = outsideReconcile(e) ? this.outsideRow(e.objectKey) : this.row(e.key, e.controller);
      if (!e.error) r.writes++;
      // The server's warnings about a write (an unknown field it dropped) count as the key's warnings.
      if (e.warnings?.length) r.warnings += e.warnings.length;
    } else if (e.kind === 'warning') this.row(e.key, e.controller).warnings++;
  }
  /** The rows, in the order of their labels ({@link summaryLabel}). */
  rows(): KeySummary[] {
    return [...this.keys.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, r]) => r);
  }
  /**
   * The `--json` summary: every row with its key as the controller names it (the other controller in `controller`,
   * a write no reconcile made flagged `outsideReconcile`), and the keys whose last reconcile failed — a key of the
   * followed controller as its text, another controller's as `{key, controller}` — so a script reads keys, never
   * the labels of the text table.
   */
  json(): { keys: KeySummary[]; failed: string[]; failedOther?: { key: string; controller: string }[] } {
    // One type per list: the followed controller's failed keys as texts, another controller's with its name apart.
    const failed = this.failed();
    const other = failed.flatMap((r) => (r.controller ? [{ key: r.key, controller: r.controller }] : []));
    return { keys: this.rows(), failed: failed.filter((r) => !r.controller).map((r) => r.key), ...(other.length ? { failedOther: other } : {}) };
  }
  /** Keys whose last reconcile failed (error or terminal). */
  failed(): KeySummary[] {
    return this.rows().filter((r) => r.lastOutcome?.kind === 'error' || r.lastOutcome?.kind === 'terminal');
  }
  render(): string {
    const rows = this.rows();
    const total = (f: keyof Pick<KeySummary, 'reconciles' | 'writes' | 'errors' | 'warnings'>) => rows.reduce((n, r) => n + r[f], 0);
    const last = (o?: ReconcileOutcome) => (!o ? '—' : o.kind === 'success' ? 'done' : o.kind === 'requeueAfter' ? `requeue after ${delayText(o.afterMs)}` : o.kind === 'requeue' ? 'requeue (rate-limited)' : `${o.kind}: ${o.message.split('\n')[0]}`);
    const table = [['key', 'reconciles', 'writes', 'errors', 'warnings', 'last outcome'], ...rows.map((r) => [shortKey(summaryLabel(r), SUMMARY_KEY_WIDTH), String(r.reconciles), String(r.writes), String(r.errors), String(r.warnings), r.cancelledLast ? `cancelled by the stop${r.lastOutcome ? ` (before: ${last(r.lastOutcome)})` : ''}` : last(r.lastOutcome)])];
    const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
    const lines = table.map((row) => '  ' + row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
    const failed = this.failed();
    return [
      `Summary: ${rows.length} key(s), ${total('reconciles')} reconcile(s), ${total('writes')} write(s), ${total('errors')} error(s), ${total('warnings')} warning(s)`,
      ...lines,
      failed.length ? `${failed.length} key(s) ended in error: ${failed.map(summaryLabel).join(', ')}` : 'No key ended in error.',
    ].join('\n');
  }
}

/**
 * `--go`: listens on a bridge, launches the program with its environment (and KUBECONFIG of this connection),
 * and resolves with the program's controller (the one reconciling --resource, else its first). The program's
 * output goes to stderr with -v; a list or watch its cache is refused (403) is said on stderr at once, once per
 * resource and namespace, with the missing right (see forbiddenCacheList). The program is stopped (its whole process group) when the command ends.
 */
async function startGoController(args: CliArgs, io: CliIo, log: Logger, s: Session, store: DisposableStore, startPaused: boolean, journal: Journal, anyResource = false, signal?: AbortSignal): Promise<RemoteController> {
  // The program reads the kubeconfig's current-context (controller-runtime has no context variable): a --context
  // that reaches another cluster or user would show one cluster and drive the program on another.
  const contextProblem = args.context ? goContextProblem(s.kubeconfigPath, s.cluster.name, 'this command would read one cluster and run your controller against another') : undefined;
  if (contextProblem) throw new UsageError(contextProblem);
  const hub = store.add(await BridgeHub.start({ clock: realClock, journal, log, startPaused: () => startPaused }));
  const [command, ...rest] = args.go!;
  // --resource as resolved through discovery (a kind, Kind.group or short name becomes plural.group), unless the
  // program is to name it.
  const wanted = s.resourceFromProgram ? args.resource : resourceName(s);
  /** The refused cache lists already said (verb, resource, namespace). */
  const refusedCaches = new Set<string>();
  const r = await runGoController({
    hub,
    spec: { command: command!, args: rest },
    clock: realClock,
    log,
    env: {
      ...(s.programKubeconfig ? { KUBECONFIG: s.programKubeconfig } : {}),
      // dry-run: every write the program makes through the bridge client is dryRun=All, not only the step's (a
      // controller without bridge.Options reconciles at once), and a program without the bridge client stops.
      ...(args.command === 'dry-run' || (args.command === 'report' && args.dryRun) ? { [PROTOCOL.env.dryRunOnly]: '1' } : {}),
    },
    // Without --resource the first controller the program sets up (or the one --controller names) is followed.
    accept: (c) =>
      (anyResource || s.resourceFromProgram || c.controller.resourceId === undefined || c.controller.resourceId === wanted || wanted.startsWith(`${c.controller.resourceId}.`)) &&
      (args.controller === undefined || c.controller.name === args.controller),
    wanted:
      s.resourceFromProgram || anyResource
        ? args.controller === undefined ? undefined : `the controller named ${args.controller}: pass --controller with the name of one it runs`
        : args.controller === undefined
          ? `a controller reconciling ${wanted}: pass --resource with the resource of the one to follow`
          : `the controller named ${args.controller} reconciling ${wanted}: pass --controller and --resource of the one to follow`,
    ...(args.controller !== undefined ? { wantedName: args.controller } : {}),
    noticeAfterMs: Math.min(10_000, args.goWaitMs ?? 10_000),
    // A program waiting for leader election: the notice names the Lease's holder, read through this connection.
    leaseHolder: leaseHolderReader(s.client, realClock),
    ...(args.goWaitMs !== undefined ? { waitMs: args.goWaitMs } : {}),
    // Ctrl+C while the program builds or starts stops it (gracefully) rather than waiting for its announcement.
    ...((signal ?? interrupts.get(store)) ? { signal: (signal ?? interrupts.get(store))! } : {}),
    onOutput: (line) => {
      if (args.verbose) io.stderr(`[go] ${line}\n`);
      // A cache the server's RBAC refuses never syncs: said at once (once per resource and scope), not only after
      // controller-runtime's two-minute cache sync timeout, nor only in -v's program output.
      const refused = forbiddenCacheList(line);
      const said = refused && `${refused.verb} ${refused.resource} ${refused.namespace ?? ''}`;
      if (refused && said && !refusedCaches.has(said)) {
        refusedCaches.add(said);
        io.stderr(`reconcile-lab: ⚠ ${refused.message}\n`);
      }
    },
  });
  // Stop the program gracefully when the command ends (dispose below kills whatever is left).
  pendingFlushes.set(store, [...(pendingFlushes.get(store) ?? []), async () => void (await r.launched.stop())]);
  programExits.set(store, r.launched.exited.then(describeExit));
  programTail.set(store, () => r.launched.failureTail(PROGRAM_TAIL_LINES));
  let ended: string | undefined;
  void r.launched.exited.then((e) => (ended = describeExit(e)));
  programEndings.set(store, async (graceMs) => {
    if (ended === undefined && graceMs > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([r.launched.exited, new Promise((res) => (timer = setTimeout(res, graceMs)))]);
      clearTimeout(timer);
    }
    return ended === undefined ? undefined : programEnding(ended, r.launched.tail(PROGRAM_TAIL_LINES), goProjectDir(args.go));
  });
  store.add(r.launched);
  goPrograms.set(store, r.process);
  if (s.resourceFromProgram) {
    followResourceOf(s, r.controller, goProjectDir(args.go));
    // Only now is the scope known: a -n given for the program's cluster-scoped resource is said to be ignored.
    noteClusterScopedNamespace(io, s.resource, args.namespace);
    const p = r.process;
    if (args.controller === undefined) s.followedByDefault = { name: r.controller.name, announced: () => p.controllers.map((c) => c.name) };
  }
  if (!args.json) {
    io.stderr(`reconcile-lab: ${r.process.description}: controller ${r.controller.name}${r.controller.announcement.priorityQueue ? ' (priority queue)' : ' (client-go queue)'}, controller-runtime ${r.process.hello.controllerRuntime}\n`);
    // The program's other controllers (announced before or after the followed one): said once each, with how to see them.
    const told = new Set<RemoteController>([r.controller]);
    const tell = (c: RemoteController) => {
      if (told.has(c)) return;
      told.add(c);
      const how = args.command === 'run' ? `its lines are labelled [${c.name}]` : `--controller ${c.name} follows it`;
      io.stderr(`reconcile-lab: the program also runs controller ${c.name}${c.resourceId ? ` (${c.resourceId})` : ''}: ${how}\n`);
      // Its kind's CRD is not installed: say so now, not when controller-runtime's cache sync timeout stops the
      // whole program (the followed controller with it) two minutes later.
      const uninstalled = uninstalledKindMessage(c.name, c.announcement, goProjectDir(args.go), s.served);
      if (uninstalled) io.stderr(`reconcile-lab: warning: ${uninstalled}. Until then its cache waits for that kind, and controller-runtime stops the whole program when its cache sync timeout (2 minutes by default) ends.\n`);
    };
    for (const c of r.process.controllers) tell(c);
    store.add(hub.onDidAddController((c) => c.process === r.process && tell(c.controller)));
  }
  return r.controller;
}

/**
 * `check --go` without `--resource`: starts the program once, paused (nothing is reconciled), to learn which resource
 * its first controller reconciles, and stops it (its process group) before the checks start their own instances.
 */
async function learnResourceFromProgram(args: CliArgs, io: CliIo, log: Logger, s: Session, signal: AbortSignal | undefined): Promise<void> {
  const store = new DisposableStore();
  let first: RemoteController | undefined;
  try {
    const journal = store.add(new Journal({ clock: realClock, capacity: 100 }));
    // `signal`: Ctrl+C stops the program while it starts (it is not the command's store, which runCli disposes).
    first = await startGoController(args, { ...io, stderr: () => {} }, log, s, store, true, journal, false, signal);
    if (!args.json && !args.markdown) io.stderr(`reconcile-lab: checking ${resourceName(s)}, the resource of the first controller the program sets up (pass --resource to choose)\n`);
    noteClusterScopedNamespace(io, s.resource, args.namespace); // said to the silenced stderr above
  } catch (e) {
    // The program ended before it announced a controller: its own last lines say why.
    const ending = await programEndings.get(store)?.(PROGRAM_GONE_GRACE_MS);
    if (ending && !(e instanceof UsageError) && !(e instanceof GoControllerNotAnnouncedError)) throw new Error(`${(e as Error).message}\n${ending}`);
    throw e;
  } finally {
    // The others, kept as data: the program stops here. They start beside the first, so they are waited for (a
    // busy machine announces them seconds apart).
    if (first) programOthers.set(s, (await otherControllers(store, first)).map((c) => ({ name: c.name, resourceId: c.resourceId, announcement: { requestType: c.announcement.requestType } })));
    await Promise.allSettled((pendingFlushes.get(store) ?? []).map((f) => f()));
    store.dispose();
  }
}

/**
 * How long a command that names a `--go` program's other controllers waits for them after the one it follows was
 * announced (the manager starts them in parallel; it returns as soon as all are there, or at once with a bridge
 * that does not say how many there are).
 */
const OTHERS_ANNOUNCED_WAIT_MS = 10_000;

/** A list the API server refused while the informers started (exit 1): the message says what to do. */
class RefusedListError extends Error {}

/** The CLI's hints for {@link refusedListMessage}: its --namespace flag, and the context's namespace. */
function cliRefusedHints(s: Session): Parameters<typeof refusedListMessage>[1] {
  return { restrict: (ns) => `--namespace ${ns}`, ...(s.contextNamespace ? { contextNamespace: s.contextNamespace } : {}), context: s.cluster.name };
}

/** ` (last error: …)` of the first of `informers` that is backing off, for a sync that did not finish; '' otherwise. */
function lastListError(informers: readonly { state: { phase: string; lastError?: string } }[]): string {
  for (const i of informers) if (i.state.phase === 'backoff' && i.state.lastError) return ` (last error: ${i.state.lastError})`;
  for (const i of informers) {
    const stalled = (i.state as { stalled?: { listError: string } }).stalled;
    if (i.state.phase === 'listing' && stalled) return ` (the server streams nothing; a LIST fails: ${stalled.listError})`;
  }
  return '';
}

/**
 * Waits for `controller` to start (its caches to sync), but gives up at once when the server refuses one of the
 * initial lists (a {@link RefusedListError} saying what to do) or `signal` aborts (its reason is thrown: Ctrl+C or
 * --duration during the start); the controller is stopped then.
 */
async function awaitStart(controller: Controller, informers: readonly ScopedInformer[], s: Session, io: CliIo, signal: AbortSignal | undefined): Promise<void> {
  let giveUp!: (e: unknown) => void;
  const gaveUp = new Promise<never>((_, reject) => (giveUp = reject));
  const said = sayRefusedLists(io);
  const watch = onInitialListRefused(informers, (r) => giveUp(new RefusedListError(refusedListMessage(r, cliRefusedHints(s)))));
  const onAbort = () => giveUp(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  const started = controller.start();
  try {
    await Promise.race([started, gaveUp]);
  } catch (e) {
    started.catch(() => {}); // the stop below ends it with a ControllerStoppedError
    await controller.stop();
    if (e instanceof RefusedListError) throw e;
    // A cache-sync timeout or a stop names no cause; the informers' last error says why they did not sync.
    const why = lastListError(informers.map((x) => x.informer));
    if (why && e instanceof Error) e.message += why;
    throw e;
  } finally {
    watch.dispose();
    said.dispose();
    signal?.removeEventListener('abort', onAbort);
  }
}

/** The ConfigMaps every built-in reconciler (lab, exec, module) owns, as `check` watches them. */
const CONFIGMAPS: ResourceInfo = { ...CONFIGMAP_GVR, kind: 'ConfigMap', namespaced: true };

/**
 * The resources whose objects `run` and `step` watch as children of the primary (builder.owns): ConfigMaps (not when
 * the primary is ConfigMaps: its own informer watches them) and every `--owns`, each once.
 */
export function ownedResources(s: Pick<Session, 'resource' | 'owned'>): ResourceInfo[] {
  const same = (a: ResourceInfo, b: ResourceInfo) => a.group === b.group && a.resource === b.resource;
  const out: ResourceInfo[] = same(s.resource, CONFIGMAPS) ? [] : [CONFIGMAPS];
  for (const o of s.owned) if (!out.some((r) => same(r, o))) out.push(o);
  return out;
}

/**
 * The resources a module's indexes are on that the loop does not watch already (the primary and
 * {@link ownedResources}), resolved against what the cluster serves; a resource it does not serve is a usage error.
 */
export function moduleIndexResources(s: Pick<Session, 'resource' | 'owned' | 'served'>, indexes: readonly ModuleIndex[]): ResourceInfo[] {
  const watched = [s.resource, ...ownedResources(s)].map(resourceIdOfGvr);
  const out: ResourceInfo[] = [];
  for (const x of indexes) {
    if (watched.includes(x.resourceId) || out.some((r) => resourceIdOfGvr(r) === x.resourceId)) continue;
    try {
      out.push(resolveResource(s.served, x.resourceId, 'resource:'));
    } catch (e) {
      throw e instanceof UsageError ? new UsageError(`the module's index "${x.name}": ${e.message}`) : e;
    }
  }
  return out;
}

/** The names of the predicates a built-in loop's controller filters its primary's events with (flags, then the module's). */
const predicatesOf = new WeakMap<Controller, string[]>();

/** The keys `run` reads in a terminal, as its banner and `?` list them. */
const RUN_KEYS = 'p pause/resume, s step one reconcile, q quit, ? help';

/**
 * What `run` pauses and resumes: the followed controller and, for a Go program, every other controller the program
 * runs (announced so far or later: one announced while the loop runs is resumed at once), since `run` runs the whole
 * program and prints the others' lines labelled `[name]`. A Go program's controllers all start paused (the welcome
 * says so for the process), so resuming only the followed one would leave the others' queues filling for ever.
 * `paused()` is the followed controller's state, which `pause` / `resume` keep equal to the others'.
 */
export interface RunLoop {
  pause(): void;
  resume(): void;
  paused(): boolean;
}

export function runLoopOf(controller: Pick<Controller, 'pause' | 'resume' | 'status'>, program: Pick<GoProcess, 'controllers' | 'onDidAddController'> | undefined, store: DisposableStore): RunLoop {
  const others = () => (program ? program.controllers.filter((c) => c !== controller) : []);
  // What run last asked for, not the followed controller's status: a Go controller's status says paused until the
  // program confirms the resume, and a controller announced in between would be left paused for good.
  let running = !controller.status().paused;
  if (program) store.add(program.onDidAddController((c) => c !== controller && running && c.resume()));
  return {
    pause: () => {
      running = false;
      controller.pause();
      for (const c of others()) c.pause();
    },
    resume: () => {
      running = true;
      controller.resume();
      for (const c of others()) c.resume();
    },
    paused: () => controller.status().paused,
  };
}

/**
 * One key pressed during `run` in a terminal: `p` pauses the loop (workers finish what they hold and take nothing
 * new; with a Go program, every controller of it) or resumes it, `s` runs exactly one reconcile of the followed
 * controller (pausing the loop first, as the editor's Step does: the next queued key, or says why none ran), `q`
 * stops as Ctrl+C does, `?` lists the keys. Other keys are ignored. What the loop does is printed by the journal as
 * usual; this says only what the key did.
 */
function runKey(key: string, controller: Controller, loop: RunLoop, io: CliIo, quit: () => void): void {
  const say = (text: string) => io.stderr(`reconcile-lab: ${text}\n`);
  switch (key) {
    case 'p':
    case 'P':
      if (loop.paused()) {
        loop.resume();
        say('resumed');
      } else {
        loop.pause();
        say('paused: s steps one reconcile, p resumes');
      }
      return;
    case 's':
    case 'S':
      if (!loop.paused()) {
        loop.pause();
        say('paused to step (p resumes)');
      }
      void controller.step().then(
        (r) => {
          if (r.kind === 'empty') say(`nothing is queued${r.next ? `; ${r.next.key} is next, ${r.next.waiting === 'backoff' ? 'its retry' : 'its requeue'} due in ${delayText(Math.max(0, r.next.dueAt - realClock.now()))}` : ''}`);
          else if (r.kind === 'notReady') say(`${r.key} waits for ${r.waiting === 'backoff' ? 'its retry' : 'its requeue'}, due in ${delayText(Math.max(0, r.dueAt - realClock.now()))}`);
          else if (r.kind === 'busy') say(`${r.key} is being reconciled right now`);
          else if (r.kind === 'notRunning') say('the loop is not running');
        },
        (e: unknown) => say(`step failed: ${(e as Error).message}`),
      );
      return;
    case 'q':
    case 'Q':
      quit();
      return;
    case '?':
    case 'h':
      say(`keys: ${RUN_KEYS}; Ctrl+C stops`);
      return;
  }
}

/** Thrown by `run` when Ctrl+C, SIGTERM or --duration ends it before the loop started; `exitCode` is the command's. */
class StoppedBeforeStartError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode) {
    super(message);
    this.exitCode = exitCode;
  }
}

/**
 * Starts the controller (the built-in loop, a module or exec reconciler, or the `--go` program's), paused when
 * `startPaused`; every journal entry goes to `onEntry` (default: printed as it comes). Everything it starts is owned
 * by `store`.
 */
async function startController(args: CliArgs, io: CliIo, log: Logger, s: Session, store: DisposableStore, startPaused: boolean, onEntry?: (e: JournalEntry, controller: Controller) => void, signal?: AbortSignal): Promise<Controller> {
  if (args.go) {
    const journal = store.add(new Journal({ clock: realClock, capacity: 10_000 }));
    const writes = new WriteIndex();
    const print = (batch: readonly JournalEntry[], c: Controller) => {
      for (const e of batch) {
        if (onEntry) onEntry(e, c);
        else if (args.json) io.stdout(JSON.stringify(e) + '\n');
        else {
          const line = formatEntry(e, args.verbose, writes);
          if (line) io.stdout(labelOther(line, e, c.name) + '\n');
        }
      }
    };
    if (!onEntry && !args.json) shownJournalWarnings(io, store);
    let controller: Controller | undefined;
    const early: JournalEntry[] = [];
    store.add(journal.onDidAppend((batch) => (controller ? print(batch, controller) : early.push(...batch))));
    controller = await startGoController(args, io, log, s, store, startPaused, journal, false, signal);
    journal.flush();
    print(early.filter((e) => !e.controller || e.controller === controller!.name), controller);
    if (!startPaused) controller.resume();
    return controller;
  }
  const reconciler = makeReconciler(args, s, log, store);
  const factory = store.add(
    new InformerFactory({
      transport: s.transport,
      logger: log,
      watchList: resolveWatchList(args.watchList, process.env),
      ...(args.dropManagedFields ? { transform: stripManagedFields } : {}),
    }),
  );
  const namespace = s.resource.namespaced ? args.namespace : undefined;
  // Every informer has the owner-UID index, as in the editor (ctx.cache.indexer(gvr).byIndex('ownerUid', uid)).
  const primary = factory.informerFor(s.resource, { ...(namespace ? { namespace } : {}), indexers: { [OWNER_UID_INDEX]: ownerUidIndexFunc } });
  // Kubernetes Events go through the plain client (not journaled as reconciler writes).
  const recorder = store.add(createKubeEventRecorder({ client: s.client, component: 'reconcile-lab', clock: realClock, log }));
  pendingFlushes.set(store, [...(pendingFlushes.get(store) ?? []), () => recorder.flush()]);
  // Predicates and options: the flags, plus what a module reconciler exports (flags win for options).
  let moduleConfig: Awaited<ReturnType<ReturnType<typeof createModuleReconciler>['controllerConfig']>> | undefined;
  if ('controllerConfig' in reconciler) {
    try {
      moduleConfig = await (reconciler as ReturnType<typeof createModuleReconciler>).controllerConfig();
    } catch (e) {
      // Exports that are wrong (a misspelt predicate or option name) are a usage error: running without them the
      // loop would quietly do something else than the module says.
      if (e instanceof ModuleReconcilerError && (e.kind === 'export' || e.kind === 'config')) throw new UsageError(moduleUsageMessage(e));
      // A module that does not load yet still gets its loop: each reconcile reports its problem, a fixed file is picked up.
      log.warn(`the module's predicates and options could not be read (restart after fixing it): ${(e as Error).message}`);
    }
  }
  const predicates = [...args.predicates.map((p) => parsePredicateSpec(p)), ...(moduleConfig?.predicates ?? [])];
  const mo = moduleConfig?.options ?? {};
  const workers = args.workers ?? mo.maxConcurrentReconciles;
  const timeoutMs = args.reconcileTimeoutMs ?? mo.reconcileTimeoutMs;
  const workQueue = args.workQueue ?? mo.workQueue;
  const modulePath = args.reconciler.kind === 'module' ? args.reconciler.path : undefined;
  const scoped: ScopedInformer[] = [{ informer: primary, ...(namespace ? { namespace } : {}) }];
  const builder = controllerBuilder({
    name: reconciler.name,
    // What the reconciler logs (ctx.log; an exec program's "log" lines) is shown at info without -v, on stderr, as
    // the loop's own lines are only with -v.
    contextFactory: journalingContextFactory({ client: s.client, recorder, ...(args.verbose ? {} : { reconcilerLog: reconcilerLogger(io) }) }),
    log,
    startPaused,
    ...(workers !== undefined ? { maxConcurrentReconciles: workers } : {}),
    ...(timeoutMs !== undefined ? { reconcileTimeoutMs: timeoutMs } : {}),
    ...(workQueue !== undefined ? { workQueue } : {}),
    fieldFight: { ownManager: 'reconcile-lab' },
    hotLoop: { predicateAdvice: cliPredicateAdvice(modulePath) },
  }).for(primary, predicates.length ? { predicates } : {});
  // Children: a child's event (a deleted or edited ConfigMap the reconciler made) reconciles its controller owner. A
  // resource a module's index is on is watched as one too.
  for (const child of [...ownedResources(s), ...moduleIndexResources(s, moduleConfig?.indexes ?? [])]) {
    const childNs = child.namespaced ? namespace : undefined;
    const informer = factory.informerFor(child, { ...(childNs ? { namespace: childNs } : {}), indexers: { [OWNER_UID_INDEX]: ownerUidIndexFunc } });
    builder.owns(informer);
    scoped.push({ informer, ...(childNs ? { namespace: childNs } : {}) });
  }
  if (moduleConfig?.indexes.length) addModuleIndexes(moduleConfig.indexes, scoped.map((x) => x.informer));
  // A concurrent `check`'s scratch copies are not this loop's to reconcile.
  builder.withEventFilter(notScratchCopies());
  const controller = store.add(builder.build(reconciler));
  // By the names the journal's "filtered by" uses.
  predicatesOf.set(controller, predicates.map((p) => (moduleConfig?.predicates.includes(p) ? `${p.name} (the module's)` : p.name)));
  const writes = new WriteIndex();
  if (!onEntry && !args.json) shownJournalWarnings(io, store);
  store.add(
    controller.journal.onDidAppend((batch) => {
      for (const e of batch) {
        if (onEntry) onEntry(e, controller);
        else if (args.json) io.stdout(JSON.stringify(e) + '\n');
        else {
          const line = formatEntry(e, args.verbose, writes);
          if (line) io.stdout(line + '\n');
        }
      }
    }),
  );
  factory.start();
  await awaitStart(controller, scoped, s, io, signal);
  const st = controller.status();
  if (st.lastStartError) throw new ApiError(0, 'StartFailed', st.lastStartError + lastListError(scoped.map((x) => x.informer)));
  return controller;
}

/**
 * A Go controller refuses to add by hand an object its cache's label selector leaves out (as in the editor): the
 * labels it checks are those of `key`'s object read from the server now (none claimed when it cannot be read).
 */
async function labelsFromServer(s: Session, controller: RemoteController, key: ObjectKey): Promise<void> {
  if (controller.announcement.requestType) return; // its keys are texts, not objects (nothing is refused on labels)
  const { namespace, name } = splitKey(key);
  let labels: Record<string, string> | undefined;
  try {
    labels = (await s.client.get(s.resource, s.resource.namespaced ? namespace : undefined, name)).metadata.labels ?? {};
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
  }
  controller.setObjectLabels((k) => (k === key ? labels : undefined));
}

/** dry-run --go: the program's own Reconcile runs once for `key` with every write forced to DryRunAll. */
async function goDryRun(args: CliArgs, io: CliIo, log: Logger, s: Session, store: DisposableStore, given: string): Promise<number> {
  const controller = (await startController(args, io, log, s, store, true, () => {})) as RemoteController;
  const key = await goControllerKey(given, s, controller, store);
  await labelsFromServer(s, controller, key);
  // A typo in a key or namespace plans nothing real: say so, as step does.
  const missing = !controller.announcement.requestType && (await noteMissingKey(io, s, key, await otherControllers(store, controller)));
  const r = await controller.dryRun(key);
  const failed = r.outcome.kind === 'error' || r.outcome.kind === 'terminal';
  if (args.json) {
    io.stdout(JSON.stringify({ key, outcome: r.outcome, durationMs: r.durationMs, writes: r.writes }, null, 2) + '\n');
    return failed ? ExitCode.failure : ExitCode.ok;
  }
  const out = [`Dry-run reconcile of ${key} in the Go controller ${controller.name}: every write sent with dryRun=All, nothing persisted.`, ''];
  // No write from a reconcile that failed says nothing about the desired state (it may have failed before writing).
  out.push(r.writes.length ? `Planned writes (${r.writes.length}):` : failed ? 'Planned writes: none before it failed.' : missing && r.outcome.kind === 'success' ? `Planned writes: ${NO_WRITES_MISSING}.` : 'Planned writes: none (already as desired).');
  r.writes.forEach((w, i) => {
    const res = w.group ? `${w.resource}.${w.group}` : w.resource;
    const obj = writeTarget(w);
    const diff = w.error ? '' : writeDiff(`${res} ${obj}`, w);
    out.push(`  ${i + 1}. ${writeText({ verb: w.verb, resource: res, objectKey: obj, subresource: w.subresource })}${w.resourceVersionBefore ? ` (rv ${w.resourceVersionBefore})` : ''}${w.error ? ` — REJECTED: ${w.error}` : w.deleted ? ` — ${writeDeletedText(w)}` : changesNothing({ verb: w.verb, diff }) ? ` — ${unchangedWriteNote(w.verb)}` : ''}${w.warnings?.length ? ` — ⚠ ${writeWarningsText(w.warnings)}` : ''}`);
    if (diff) out.push(indent(diff, '       '));
  });
  const o = r.outcome;
  out.push('', `Outcome: ${o.kind === 'success' ? 'done' : o.kind === 'requeueAfter' ? `requeue after ${delayText(o.afterMs)}` : o.kind === 'requeue' ? 'requeue (rate-limited)' : `${o.kind}: ${o.message}`} (${r.durationMs} ms)`);
  io.stdout(out.join('\n') + '\n');
  return failed ? ExitCode.failure : ExitCode.ok;
}

/**
 * A note on stderr when `key`'s object is not on the server: the reconciler then runs as for a deleted object. With
 * `others` (the other controllers of a `--go` program), a key whose object is one of another controller's resource
 * (a ConfigMap's key given to the Deployment controller) names that controller and the `--controller` that follows it.
 */
async function noteMissingKey(io: CliIo, s: Session, key: ObjectKey, others: readonly ProgramController[] = []): Promise<boolean> {
  const { namespace, name } = splitKey(key);
  const note = await missingObjectNote(s.client, s.resource, resourceName(s), s.resource.namespaced ? namespace : undefined, name);
  if (note) io.stderr(`reconcile-lab: note: ${note}${await otherControllersKey(s, others, namespace, name)}; the reconciler runs as for a deleted object\n`);
  return note !== undefined;
}

/**
 * `; configmaps user-d/good exists: the resource of the program's controller cm-stamper (--controller cm-stamper
 * follows it)` when an object of that name is one of the resource another controller of the program reconciles; ""
 * otherwise (or when it cannot be read: a hint, never a failure).
 */
async function otherControllersKey(s: Session, others: readonly ProgramController[], namespace: string | undefined, name: string, follow: (c: ProgramController, id: string) => string = (c) => `--controller ${c.name} follows it`): Promise<string> {
  const mine = resourceName(s);
  for (const c of others) {
    const id = c.resourceId;
    if (id === undefined || id === mine || c.announcement.requestType) continue;
    const dot = id.indexOf('.');
    const r = findResource(s.served, { group: dot < 0 ? '' : id.slice(dot + 1), name: dot < 0 ? id : id.slice(0, dot) });
    if (!r) continue;
    // A bare name (the key of a cluster-scoped resource) is taken in the default namespace, as the CLI takes keys.
    const ns = r.namespaced ? (namespace ?? s.defaultNamespace) : undefined;
    try {
      await s.client.get(r, ns, name);
    } catch {
      continue;
    }
    return `; ${id} ${keyFor(ns, name)} exists: the resource of the program's controller ${c.name} (${follow(c, id)})`;
  }
  return '';
}

/** What {@link otherControllersKey} reads of a controller a `--go` program announced (kept after the program stops). */
type ProgramController = Pick<RemoteController, 'name' | 'resourceId'> & { announcement: Pick<RemoteController['announcement'], 'requestType'> };

/**
 * The controllers of the `--go` program {@link learnResourceFromProgram} started to learn a command's resource, as
 * data, besides the first (whose resource the command then uses): a `check` key missing from that resource is named
 * as one of theirs.
 */
const programOthers = new WeakMap<Session, ProgramController[]>();

/**
 * {@link controllerKey} for a command of a `--go` program: a key with a namespace given for a cluster-scoped resource
 * is refused as there, and when an object of that key is one of the resource another controller of the program
 * reconciles (a Secret's key while the command follows the program's Tenant controller), the refusal names that
 * controller and the `--controller` that follows it, rather than only advising to drop the namespace. The program's
 * other controllers are waited for up to {@link OTHERS_ANNOUNCED_WAIT_MS} (they are announced as the manager starts them). `objectKey`: the
 * command names an object whatever the controller's request type (inspect), so the key is read as one.
 */
async function goControllerKey(given: string, s: Session, controller: RemoteController, store: DisposableStore, objectKey = false): Promise<ObjectKey> {
  try {
    return objectKey ? normalizeKey(given, s) : controllerKey(given, s, controller);
  } catch (e) {
    const { namespace, name } = e instanceof UsageError && !s.resource.namespaced ? keyParts(given) : {};
    if (namespace === undefined || name === undefined) throw e;
    const p = goPrograms.get(store);
    const waited = p !== undefined && !everyControllerAnnounced(p);
    const others = await otherControllers(store, controller);
    // The refusal again, now naming the controllers announced meanwhile (`--controller <name>` before them).
    let refusal = e as Error;
    if (waited) refusal = catchError(() => (objectKey ? normalizeKey(given, s) : controllerKey(given, s, controller))) ?? refusal;
    const other = await otherControllersKey(s, others, namespace, name);
    if (!other) throw refusal;
    throw new UsageError(`${given}: ${other.slice(2)}; ${refusal.message}`);
  }
}

/** The error `f` throws, or undefined when it returns. */
function catchError(f: () => unknown): Error | undefined {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  return undefined;
}

/**
 * The other controllers of the `--go` program of this command, besides `followed`: the first call waits (once per
 * command, up to {@link OTHERS_ANNOUNCED_WAIT_MS}) until the program announced every controller it set up, as the
 * manager starts them beside the followed one; later calls do not wait again.
 */
async function otherControllers(store: DisposableStore, followed: RemoteController): Promise<RemoteController[]> {
  const p = goPrograms.get(store);
  if (!p) return [];
  let wait = othersAnnounced.get(store);
  if (!wait) othersAnnounced.set(store, (wait = whenEveryControllerAnnounced(p, OTHERS_ANNOUNCED_WAIT_MS, realClock)));
  await wait;
  return p.controllers.filter((c) => c !== followed);
}

/** The wait of {@link otherControllers}, one per command's store. */
const othersAnnounced = new WeakMap<DisposableStore, Promise<boolean>>();

/**
 * `step <key> --go` of an object its Go controller's own events never queued (its triggers are the step alone): the
 * step starts a fresh program, whose initial list reaches the controller's handlers before a worker hands the key out
 * (controller-runtime waits for its handlers to sync), so a key none of them queued is one its predicates
 * (builder.WithPredicates, WithEventFilter) or event handlers leave out: the running controller would not reconcile it.
 * Undefined when anything else queued it too, or nothing is known of its triggers.
 */
export function onlyStepQueuedNote(controller: string, key: ObjectKey, triggers: readonly EnqueueReason[]): string | undefined {
  if (!triggers.length || !triggers.every((t) => t.kind === 'manual')) return undefined;
  return `${key} was reconciled only because this step named it: none of ${controller}'s watches queued it, though their initial list had it, so its predicates (builder.WithPredicates, WithEventFilter) or event handlers leave it out: running, the controller would not reconcile it`;
}

/** How long a one-shot step waits for a reconcile past its --reconcile-timeout before giving up on it. */
const STEP_ABANDON_GRACE_MS = 5_000;

/** "Planned writes: none …" of a dry-run pass that wrote nothing and did not fail: of an object that is not there, nothing was to be done. */
const NO_WRITES_MISSING = 'none (the object does not exist: the reconcile had nothing to do for it)';

/** A note on stderr when the namespace a command is scoped to does not exist (a typo gives an empty run otherwise). */
async function noteMissingNamespace(io: CliIo, s: Session, namespace: string, consequence: string): Promise<void> {
  const note = await missingNamespaceNote(s.client, namespace);
  if (note) io.stderr(`reconcile-lab: note: ${note}: ${consequence}\n`);
}

/**
 * `--namespace` with `--go` (run, or step without a key): the program reconciles what its own manager's cache holds,
 * whatever the flag says, so say once that the flag only completes keys (nothing when it was not given, nor for a
 * cluster-scoped resource, where {@link noteClusterScopedNamespace} says it is ignored).
 */
function noteGoNamespace(io: CliIo, args: CliArgs, s: Session): void {
  // A cluster-scoped resource: noteClusterScopedNamespace said already that the flag is ignored (keys have no namespace).
  if (args.namespace === undefined || !s.resource.namespaced) return;
  io.stderr(`reconcile-lab: note: --namespace ${args.namespace} does not limit a Go program: it reconciles what its manager's cache holds (its cache.Options); --namespace only completes a key given without its namespace\n`);
}

/** A step that reconciled nothing, in words: `step: empty` and what it means, or why the key did not run. */
function stepResultText(r: Exclude<StepResult, { kind: 'reconciled' }>, resource: string): string {
  switch (r.kind) {
    case 'empty':
      return `step: empty: nothing is queued${r.next ? ` (${r.next.key} waits for its ${r.next.waiting === 'backoff' ? 'retry' : 'requeue'})` : ` (no object of ${resource} in scope needs a reconcile)`}; name a key to reconcile it anyway`;
    case 'busy':
      return `step: busy ${r.key}: it is being reconciled right now`;
    case 'notReady':
      return `step: notReady ${r.key}: it waits for its ${r.waiting === 'backoff' ? 'retry' : 'requeue'}`;
    case 'notRunning':
      return 'step: notRunning: the loop is not running';
  }
}

async function step(args: CliArgs, io: CliIo, log: Logger, s: Session, store: DisposableStore): Promise<number> {
  // --json: the step's result is the first line, then the journal entries as JSON lines.
  const buffered: JournalEntry[] = [];
  const controller = await startController(args, io, log, s, store, true, args.json ? (e) => void buffered.push(e) : undefined);
  const key = args.positionals[0] ? (controller instanceof RemoteController ? await goControllerKey(args.positionals[0], s, controller, store) : controllerKey(args.positionals[0], s, controller)) : undefined;
  if (key && controller instanceof RemoteController) await labelsFromServer(s, controller, key);
  // A typo in a key or namespace reconciles nothing real: say so (still a legitimate step: a deleted object's key).
  const missing = key && !(controller instanceof RemoteController && controller.announcement.requestType) ? await noteMissingKey(io, s, key, controller instanceof RemoteController ? await otherControllers(store, controller) : []) : undefined;
  if (!key && args.go) noteGoNamespace(io, args, s);
  else if (!key && args.namespace && s.resource.namespaced) await noteMissingNamespace(io, s, args.namespace, 'nothing is queued from there');
  // With --reconcile-timeout, a reconcile that ignores its aborted signal would hold a one-shot step for ever: it is
  // given up STEP_ABANDON_GRACE_MS after its deadline (stopping the controller abandons it), and the step fails.
  const deadline = !args.go && args.reconcileTimeoutMs !== undefined ? args.reconcileTimeoutMs + STEP_ABANDON_GRACE_MS : undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const abandoned = deadline === undefined ? undefined : new Promise<'abandoned'>((resolve) => (timer = setTimeout(() => resolve('abandoned'), deadline)));
  const stepped = controller.step(key ? { key, force: true } : { force: true });
  const first = await (abandoned ? Promise.race([stepped, abandoned]) : stepped).finally(() => clearTimeout(timer));
  if (first === 'abandoned') {
    controller.journal.flush();
    io.stderr(`reconcile-lab: the reconcile did not return ${delayText(deadline! - args.reconcileTimeoutMs!)} after its ${delayText(args.reconcileTimeoutMs!)} timeout aborted its signal: it ignores ctx.signal, so step gives up on it (pass the signal on to client calls and waits)\n`);
    await controller.stop();
    return ExitCode.failure;
  }
  const r = first;
  // A Go program whose manager stopped (it failed to start, or ended) before the step ran: its own ending explains it.
  if (r.kind === 'notRunning' && args.go) throw new Error(`the Go controller ${controller.name} stopped before the step ran`);
  controller.journal.flush();
  await controller.stop();
  controller.journal.flush();
  if (args.json) io.stdout([JSON.stringify({ step: r }), ...buffered.map((e) => JSON.stringify(e))].join('\n') + '\n');
  else if (r.kind !== 'reconciled') io.stdout(`${stepResultText(r, resourceName(s))}\n`);
  // A Go controller's object (in its cache's scope) that only this step queued: its own events never did.
  if (r.kind === 'reconciled' && missing === false && controller instanceof RemoteController && !args.json) {
    const note = onlyStepQueuedNote(controller.name, r.key, r.triggers);
    if (note) io.stderr(`reconcile-lab: note: ${note}\n`);
  }
  if (r.kind === 'reconciled') return r.outcome.kind === 'error' || r.outcome.kind === 'terminal' ? ExitCode.failure : ExitCode.ok;
  return r.kind === 'empty' ? ExitCode.ok : ExitCode.failure;
}

async function run(args: CliArgs, io: CliIo, log: Logger, s: Session, store: DisposableStore): Promise<number> {
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
  // Ctrl+C or --duration while the caches sync (a server that does not answer) ends the start too.
  const beforeStart = new AbortController();
  const stop = (why = 'interrupted', exitCode: ExitCode = ExitCode.failure) => {
    beforeStart.abort(new StoppedBeforeStartError(`${why} before the loop started: ${args.go ? 'the Go program had not announced its controller yet' : 'its caches had not synced'}`, exitCode));
    resolveStopped();
  };
  handOverInterrupts(store);
  // Before the loop started nothing ran: Ctrl+C / SIGTERM then exit 130 / 143 as for any command (--duration: 1).
  store.add(io.onInterrupt((signal) => (signal === 'SIGTERM' ? stop('terminated (SIGTERM)', ExitCode.terminated) : stop('interrupted', ExitCode.interrupted))));
  // The server going away and coming back is said once each (the informers' retries log at info level only).
  store.add(watchServerOutages(s.transport, realClock, (n) => io.stderr(`${new Date(realClock.now()).toISOString().slice(11, 23)} ⚠ ${n.text}\n`)));
  // A Go program talks to the server itself; this process would otherwise send nothing to notice an outage with.
  if (args.go) store.add(probeServer(s.transport, realClock));
  // `run` lasts until Ctrl+C or --duration (runCli keeps the process alive meanwhile).
  if (args.durationMs !== undefined) {
    const h = realClock.setTimeout(() => stop(`--duration ${args.durationMs! / 1000} s ended`), args.durationMs);
    store.add(toDisposable(() => realClock.clearTimeout(h)));
  }
  // A Go program that ends by itself (a crash, SIGTERM from outside) ends `run` with it: there is nothing left to watch.
  let programEnded: string | undefined;
  let stopping = false;
  let summary: RunSummary | undefined;
  const writes = new WriteIndex();
  // Once the summary is out nothing follows it (the README: --json ends with the summary line): the Go program's
  // shutdown transitions, which arrive while it is stopped after the summary, are not printed.
  let summarized = false;
  if (!args.json) shownJournalWarnings(io, store);
  // In text mode the loop starts paused, so that the banner below comes before the first reconcile's lines.
  const controller = await startController(args, io, log, s, store, !args.json, (e, c) => {
    if (summarized) return;
    // A Go program's manager may run several controllers: all of them reconcile, the others' lines are labelled.
    summary ??= new RunSummary(c.name);
    summary.add(e);
    if (args.json) io.stdout(JSON.stringify(e) + '\n');
    else {
      const line = formatEntry(e, args.verbose, writes);
      if (line) io.stdout(labelOther(line, e, c.name) + '\n');
    }
  }, beforeStart.signal);
  summary ??= new RunSummary(controller.name);
  if (args.go) noteGoNamespace(io, args, s);
  else if (args.namespace && s.resource.namespaced) await noteMissingNamespace(io, s, args.namespace, 'the loop watches it and reconciles what is created there');
  if (!args.json) {
    const st = controller.status();
    // In a terminal, keys drive the loop as the editor's commands do: pause / resume, step one reconcile, quit.
    const loop = runLoopOf(controller, goPrograms.get(store), store);
    const keys = io.onKeys?.((k) => runKey(k, controller, loop, io, () => stop('q pressed')));
    if (keys) store.add(keys);
    io.stderr(`reconcile-lab: ${controller.name} running on ${s.resource.resource}${s.resource.group ? '.' + s.resource.group : ''}${args.namespace && s.resource.namespaced && !args.go ? ` in ${args.namespace}` : ''} (${st.maxConcurrentReconciles} worker(s), ${st.workQueue} queue${predicatesOf.get(controller)?.length ? `, predicates: ${predicatesOf.get(controller)!.join(', ')}` : ''}); ${keys ? `keys: ${RUN_KEYS}, ` : ''}Ctrl+C to stop\n`);
    loop.resume();
  }
  void programExits.get(store)?.then((how) => {
    if (stopping) return;
    programEnded = how;
    const tail = programTail.get(store)?.() ?? [];
    const hint = programExitHint(tail, goProjectDir(args.go));
    io.stderr(`reconcile-lab: the Go program ${goProgramHow(how)}; stopping\n${lastOutput(tail)}${hint ? `${hint}\n` : ''}`);
    stop();
  });
  await stopped;
  stopping = true;
  await controller.stop();
  controller.journal.flush();
  // The summary, and a non-zero exit when a key's last reconcile failed (a script can tell).
  summarized = true;
  journalWarningsOnStdout.delete(io); // a warning from now on is not printed as a journal line
  if (args.json) io.stdout(JSON.stringify({ summary: summary.json() }) + '\n');
  else io.stdout('\n' + summary.render() + '\n');
  return summary.failed().length || programEnded ? ExitCode.failure : ExitCode.ok;
}


