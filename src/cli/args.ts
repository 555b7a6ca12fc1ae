import { pathSegmentProblem, splitKey } from '../core/k8s/keys.ts';
import { parseArgs } from 'node:util';
import { splitCommandLine } from '../core/reconcilers/commandLine.ts';
import { moduleExtensionProblem } from '../core/reconcilers/moduleReconciler.ts';
import { parsePredicateSpec } from '../core/controller/predicateSpec.ts';
import type { WorkQueueKind } from '../core/workqueue/priorityQueue.ts';
import { CHECK_KINDS, type CheckKind } from '../core/checks/types.ts';
import { parseCopySpec } from '../core/checks/references.ts';
import { DEFAULT_WATCH_LIST } from '../core/cache/interfaces.ts';
import { readFileSync } from 'node:fs';
import { closestNames } from '../core/text/closest.ts';

/** Set by scripts/build.mjs in the bundle (dist/cli.js) to package.json's version. */
declare const __RECONCILE_LAB_VERSION__: string | undefined;

/** The CLI's version: the bundle's, else (run from source) package.json's. */
export function cliVersion(): string {
  if (typeof __RECONCILE_LAB_VERSION__ === 'string') return __RECONCILE_LAB_VERSION__;
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** The candidate closest to `word` (a typo of it), if any: core's "did you mean" rule (closestNames). */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  return closestNames(word, candidates)[0];
}

/** Documented exit codes of `reconcile-lab`. */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  connection: 3,
  conflict: 4,
  refused: 5,
  /** Ctrl+C (SIGINT) ended a command before it finished (128 + 2, as a shell); run's loop and check's checks, once started, clean up and report instead. */
  interrupted: 130,
  /** SIGTERM (a CI timeout) ended a command in the same way (128 + 15). */
  terminated: 143,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export const COMMANDS = ['run', 'step', 'dry-run', 'report', 'inspect', 'strip-finalizers', 'check'] as const;
export type CommandName = (typeof COMMANDS)[number];

export type ReconcilerSpec = { kind: 'lab' } | { kind: 'exec'; command: string[] } | { kind: 'module'; path: string };

export interface CliArgs {
  command: CommandName;
  positionals: string[];
  kubeconfig?: string;
  context?: string;
  /** "plural.group" or "plural" (core); default widgets.lab.reconcile.dev. */
  resource: string;
  /** Whether --resource was given (with --go and without it, the resource is the one the program's controller reconciles). */
  resourceGiven: boolean;
  namespace?: string;
  reconciler: ReconcilerSpec;
  json: boolean;
  markdown: boolean;
  dryRun: boolean;
  yes: boolean;
  finalizer?: string;
  /** For `run`: stop after this many ms (default: until SIGINT). */
  durationMs?: number;
  /** run / step / dry-run: drive this Go controller-runtime program through the bridge instead of a built-in reconciler. */
  go?: string[];
  /** --go: how long (ms) the program may take to announce its controller before the command fails (default 300 s). */
  goWaitMs?: number;
  /** run / step / dry-run with --go: the name of the program's controller to follow (several may reconcile --resource). */
  controller?: string;
  /** run / step: strip metadata.managedFields from the informer cache (default: keep objects as received). */
  dropManagedFields: boolean;
  /** --watch-list on|off: stream the informers' initial list (WatchList); undefined: see {@link resolveWatchList}. */
  watchList?: boolean;
  verbose: boolean;
  /** run: workers reconciling in parallel (default 1). */
  workers?: number;
  /** run, step, check: the reconcile deadline in ms (default: a module's options.reconcileTimeoutMs, else none, as controller-runtime). */
  reconcileTimeoutMs?: number;
  /** exec reconciler: kill the program after this many ms (default 30 s; 0: none). */
  execTimeoutMs?: number;
  /** run, step: predicate specs for the primary resource (see PREDICATE_SPECS), all must pass. */
  predicates: string[];
  /**
   * run, step, check: resources (as --resource takes them, lower case) whose objects are children of the primary: a
   * child's event enqueues its controller owner (builder.owns), besides the ConfigMaps every built-in reconciler owns.
   */
  owns: string[];
  /** run, step: the work queue (default priority). */
  workQueue?: WorkQueueKind;
  /** check: the checks to run (default all). */
  checks?: CheckKind[];
  /** check: the cluster's name, required to run checks anywhere but the local control plane. */
  confirmCluster?: string;
  /** check: JSON merge patches of the primary for the unobserved-state and stale-cache checks. */
  transitions?: unknown[];
  /** check: `--copy kind/name` values as typed (`secret/db-creds`), validated by parseCopySpec. */
  copies?: string[];
  /** check: the convergence bound in ms. */
  convergenceBoundMs?: number;
}

/** What --resource and --owns take: plural.group, plural, kind or short name, lower case (a DNS subdomain). */
const RESOURCE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A command line that cannot run as given (exit 2): the CLI prints its message and where the usage is. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * node:util parseArgs errors in the CLI's own words: Node's messages talk about positional arguments
 * starting with "-" and the `--` separator, which is not how a person mistyped a flag. `argv`: the arguments parsed;
 * with `--go <command line>` among them, an unknown option close to none of the CLI's is most likely a flag of that
 * program (`--leader-elect=false`), and the message shows it inside the command line.
 */
function parseErrorMessage(e: Error & { code?: string }, argv: readonly string[] = []): string {
  // Node names a short option with its long form ("'-n, --namespace <value>'"): the long one, without the comma.
  const m = /'(-[^' ,]+)(?:, (--[^' ]+))?/.exec(e.message);
  const opt = m?.[2] ?? m?.[1];
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const habit = opt ? KUBECTL_HABITS[opt.split('=')[0]!] : undefined;
      if (habit) return `unknown option ${opt}${habit}`;
      const near = opt?.startsWith('--') ? closest(opt.slice(2).split('=')[0]!, Object.keys(OPTIONS)) : undefined;
      // A short option in the other case (-N, -H): the one there is.
      const short = opt && /^-[a-zA-Z]$/.test(opt) ? Object.values(OPTIONS).find((o) => 'short' in o && o.short.toLowerCase() === opt[1]!.toLowerCase()) : undefined;
      const meant = near ? `--${near}` : short && 'short' in short ? `-${short.short}` : undefined;
      if (!meant && opt?.startsWith('--')) {
        const goCommand = goCommandIn(argv);
        if (goCommand !== undefined) {
          // The option as typed, its value too when it came as its own argument (`--metrics-bind-address 0`).
          const at = argv.findIndex((a) => a === opt || a.startsWith(`${opt}=`));
          const next = at >= 0 && !argv[at]!.includes('=') ? argv[at + 1] : undefined;
          const typed = next !== undefined && !next.startsWith('-') && next !== goCommand ? `${opt} ${next}` : at >= 0 ? argv[at]! : opt;
          return `unknown option ${opt}: reconcile-lab has no such option; a flag of your program goes inside the --go command line, e.g. --go ${shellQuote(`${goCommand} ${typed}`)}`;
        }
      }
      return `unknown option ${opt ?? e.message}${meant ? ` (did you mean ${meant}?)` : ''}`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/argument missing/.test(e.message)) return `option ${opt ?? ''} needs a value`.replace('  ', ' ');
      // A string option followed by another option (a negative number is joined to it before parsing: joinNegativeValues).
      if (/argument is ambiguous/.test(e.message)) return `option ${opt} needs a value, not the option after it (a value starting with "-" is written ${opt}=-…)`;
      return `option ${opt ?? ''} takes no value`.replace('  ', ' ');
    default:
      return e.message;
  }
}

/** The value of `--go` in `argv` (`--go <v>` or `--go=<v>`), or undefined without one. */
function goCommandIn(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return undefined;
    if (a.startsWith('--go=')) return a.slice('--go='.length);
    if (a === '--go' && i + 1 < argv.length) return argv[i + 1];
  }
  return undefined;
}

/** `s` in double quotes for a shell when it holds a space or a quote (`"./bin/manager --x=0"`), else as is. */
function shellQuote(s: string): string {
  return /[\s"'$`\\]/.test(s) ? `"${s.replace(/["$`\\]/g, '\\$&')}"` : s;
}

/** kubectl's options a kubectl user types here, with what this CLI does instead (after "unknown option -A"). */
const KUBECTL_HABITS: Record<string, string> = {
  '-A': ': without -n, run, step, report and check cover every namespace already (kubectl\'s -A)',
  '--all-namespaces': ': without -n, run, step, report and check cover every namespace already',
  '-o': ': --json gives machine-readable output (report and check also take --markdown)',
  '--output': ': --json gives machine-readable output (report and check also take --markdown)',
};

/** A following argument that is a negative number ("-1", "-0.5", "-.5", "-1e3"): the value of the option before it. */
const NEGATIVE_NUMBER = /^-(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

/**
 * argv with every option that takes a value (`--exec-timeout`, `-n`) followed by a separate argument that looks like a
 * negative number joined to it (`--exec-timeout=-1`): node:util parseArgs takes a following "-1" for an option, and
 * the person would be told the option "takes no value" instead of the range the value must be in. Stops at `--`.
 */
export function joinNegativeValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  const shorts = new Map<string, string>(Object.entries(OPTIONS).flatMap(([name, o]) => ('short' in o ? [[o.short, name] as [string, string]] : [])));
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const name = a.startsWith('--') ? a.slice(2) : /^-[a-zA-Z]$/.test(a) ? shorts.get(a.slice(1)) : undefined;
    const takesValue = name !== undefined && !name.includes('=') && (OPTIONS as Record<string, { type: string }>)[name]?.type === 'string';
    const next = argv[i + 1];
    if (takesValue && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(`${a.startsWith('--') ? a : `--${name}`}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** Every option of the CLI (node:util parseArgs). */
const OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  resource: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  reconciler: { type: 'string' },
  go: { type: 'string' },
  'go-wait': { type: 'string' },
  controller: { type: 'string' },
  finalizer: { type: 'string' },
  yes: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  duration: { type: 'string' },
  workers: { type: 'string' },
  'reconcile-timeout': { type: 'string' },
  'exec-timeout': { type: 'string' },
  owns: { type: 'string', multiple: true },
  predicate: { type: 'string', multiple: true },
  'work-queue': { type: 'string' },
  check: { type: 'string', multiple: true },
  'confirm-cluster': { type: 'string' },
  transition: { type: 'string', multiple: true },
  copy: { type: 'string', multiple: true },
  'convergence-bound': { type: 'string' },
  json: { type: 'boolean' },
  markdown: { type: 'boolean' },
  'drop-managed-fields': { type: 'boolean' },
  'watch-list': { type: 'string' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const;

export const HELP = `reconcile-lab — run, step, dry-run and report Kubernetes reconcile loops

Usage: reconcile-lab <command> [args] [options]
       reconcile-lab <command> --help (or: reconcile-lab help <command>): its options and an example

Commands:
  run                       watch the resource and reconcile continuously (Ctrl+C to stop)
  step [key]                reconcile the next queued key (or <key>) once, live, and show what happened
  dry-run <key>             reconcile <key> once with every write sent as dryRun=All: planned actions,
                            diffs, the status it would write and its requeue decision (nothing persists)
  report [key...]           one reconcile pass over all objects (or the keys given); Markdown by default
                            (--json for JSON); add --dry-run to plan instead of act
  inspect <key>             the cached object versus a fresh GET: differences and resourceVersion lag (with
                            --go: the Go program's own cache)
  check [key...]            robustness checks of the reconciler on copies in scratch namespaces (run twice,
                            crash after write, stale cache, unobserved intermediate state, history
                            independence, convergence, deletion, child drift) for the keys given or every object of the
                            resource; exit 1 on findings or when the reconciler never settles. --json / --markdown
  strip-finalizers <key>    diagnose why <key> is stuck, then remove --finalizer F (or all) with a guarded
                            JSON patch (Namespaces: /finalize). Refuses without --yes (or --dry-run).

Keys are "namespace/name" (or "name" with --namespace, or for cluster-scoped resources).

Options:
  --kubeconfig <path>       kubeconfig file (default: KUBECONFIG or ~/.kube/config)
  --context <name>          kubeconfig context (default: current-context)
  --resource <plural.group> resource to reconcile (default: widgets.lab.reconcile.dev; core: "configmaps"; with
                            --go: the resource of the program's controller)
  -n, --namespace <ns>      namespace for keys without one, and the scope of run/report (not of a --go program:
                            its manager's cache decides what it reconciles)
  --reconciler <spec>       lab (default) | exec:<command line> | module:<path to .ts/.js>
  --go <command line>       run / step / dry-run / report / check: launch this Go controller-runtime program (which
                            uses the Reconcile Lab bridge package) and drive ITS controller: e.g. --go "go run ./cmd"
                            (report: paused, each key stepped in turn; check: a new instance per run over a scratch
                            namespace, "go run" built once); inspect: compare the program's OWN cached copy with the
                            server (it starts paused)
  --go-wait <s>             with --go: fail (exit 1) when the program has not announced its controller after this
                            long (default 300: a first "go run" compiles; in CI with a built binary, e.g. 60)
  --controller <name>       run / step / dry-run / report / inspect with --go: follow the program's controller of this name
                            (default: the first the program sets up, or with --resource the first reconciling it),
                            e.g. its second controller; check follows the one reconciling --resource
  --finalizer <name>        strip-finalizers: the one finalizer to remove (default: all)
  --yes                     strip-finalizers: really remove (without it: diagnose only, exit 5)
  --dry-run                 report: plan instead of act; strip-finalizers: preview the removal (dryRun=All,
                            no --yes needed)
  --duration <seconds>      run: stop after this long
  --drop-managed-fields     run / step (not with --go): cache objects without metadata.managedFields (saves memory;
                            default: kept as received, as controller-runtime does)
  --watch-list <on|off>     run / step / inspect (not with --go): informers stream their initial list with a
                            WatchList request instead of a LIST (default on, as client-go 1.35+;
                            KUBE_FEATURE_WatchListClient=false also turns it off); a server that refuses it gets
                            LIST + WATCH
  --workers <n>             run: reconcile up to n keys in parallel (1–64, default 1); a key never runs twice at once
  --reconcile-timeout <s>   run, step, check: the deadline of one reconcile: ctx.signal is aborted (an exec program is
                            killed), and the key stays in processing until the call returns (default: a module's
                            options.reconcileTimeoutMs, else none, as controller-runtime; 0: none); check's runs apply it
  --exec-timeout <s>        exec reconciler: kill the program's process group after this long (default 30; 0: none)
  --owns <resource>         run, step, check: also watch this resource's objects as children (repeatable, or
                            comma-separated; as --resource names it: deployments.apps, secrets): a child's event
                            reconciles its controller owner (ownerReference controller: true), in the namespace scope
                            of the primary. ConfigMaps are owned without it (unless --resource is configmaps)
  --predicate <spec>        run, step, check: drop events of the reconciled resource that fail it (repeatable: all must pass):
                            generation-changed | resource-version-changed | label-changed | annotation-changed |
                            label-selector=<key>=<value>[,…]
  --work-queue <kind>       run, step: priority (default: controller-runtime's priority queue) | client-go (FIFO,
                            DefaultControllerRateLimiter)
  --check <names>           check: only these checks, comma-separated or repeated: runTwice, crashAfterWrite,
                            staleCache, unobservedState, historyIndependence, convergence, deletion,
                            childDrift (default: all)
  --confirm-cluster <name>  check: run against a cluster that is not the local control plane (its context name)
  --transition <json>       check: a JSON merge patch of the object (repeatable, applied in order) for the
                            unobserved-state and stale-cache checks (default: an annotation added, then removed) and,
                            when one changes spec, the history check, which also sets the change back (default:
                            spec fields changed, and a string-map key added, as the CRD's schema allows)
  --copy <kind/name>        check: also copy this Secret or ConfigMap of the object's namespace into every scratch
                            namespace (repeatable or comma-separated: secret/db-creds,cm/settings), for a reference
                            the spec makes in a way the checks do not recognise (they copy secretRef, secretName,
                            configMapKeyRef, volumes, envFrom… by themselves)
  --convergence-bound <s>   check: how long a run may take to go idle (default 15)
  --json                    machine-readable output on stdout
  --markdown                report, check: Markdown (the default for report)
  -v, --verbose             log to stderr
  -h, --help                this help
  -V, --version             print the version

Exit codes:
  0  ok
  1  failure (a reconcile error, an API error)
  2  usage error
  3  cannot connect (kubeconfig, network, authentication)
  4  the object changed meanwhile, or a conflict: refresh and retry
  5  refused: strip-finalizers without --yes; check against an unconfirmed cluster
  130, 143  Ctrl+C (SIGINT), SIGTERM: the command stopped before it finished (once run's loop has started, run
            stops and exits as its summary says; once check's checks have started, it reports what ran and exits 1)
`;

/** The options every command takes (besides -V, which answers before any command). */
const COMMON_FLAGS = ['kubeconfig', 'context', 'resource', 'namespace', 'json', 'verbose', 'help'] as const;

/** What `reconcile-lab <command> --help` (and `reconcile-lab help <command>`) shows besides the options' lines. */
interface CommandHelp {
  /** The command's arguments, after its name. */
  args: string;
  /** The options it accepts beyond {@link COMMON_FLAGS} (names in {@link OPTIONS}): exactly those its parser takes. */
  flags: ReadonlyArray<keyof typeof OPTIONS>;
  example: string;
}

const COMMAND_HELP: Record<CommandName, CommandHelp> = {
  run: {
    args: '',
    flags: ['reconciler', 'go', 'go-wait', 'controller', 'duration', 'workers', 'reconcile-timeout', 'exec-timeout', 'predicate', 'owns', 'work-queue', 'watch-list', 'drop-managed-fields'],
    example: 'reconcile-lab run -n shop --reconciler exec:./reconcile.sh --workers 2',
  },
  step: {
    args: ' [key]',
    flags: ['reconciler', 'go', 'go-wait', 'controller', 'reconcile-timeout', 'exec-timeout', 'predicate', 'owns', 'work-queue', 'watch-list', 'drop-managed-fields'],
    example: 'reconcile-lab step shop/cart --json',
  },
  'dry-run': {
    args: ' <key>',
    flags: ['reconciler', 'go', 'go-wait', 'controller', 'exec-timeout'],
    example: 'reconcile-lab dry-run shop/cart --reconciler module:./reconciler.ts',
  },
  report: {
    args: ' [key...]',
    flags: ['reconciler', 'go', 'go-wait', 'controller', 'exec-timeout', 'dry-run', 'markdown'],
    example: 'reconcile-lab report -n shop --dry-run > report.md',
  },
  inspect: {
    args: ' <key>',
    flags: ['go', 'go-wait', 'controller', 'watch-list'],
    example: 'reconcile-lab inspect shop/cart',
  },
  'strip-finalizers': {
    args: ' <key>',
    flags: ['finalizer', 'yes', 'dry-run'],
    example: 'reconcile-lab strip-finalizers shop/cart --finalizer example.com/cleanup --dry-run',
  },
  check: {
    args: ' [key...]',
    flags: ['reconciler', 'go', 'go-wait', 'reconcile-timeout', 'exec-timeout', 'predicate', 'owns', 'check', 'confirm-cluster', 'transition', 'copy', 'convergence-bound', 'markdown'],
    example: 'reconcile-lab check shop/cart --check runTwice,convergence --json',
  },
};

/** The options `command` accepts (the long names, as in {@link OPTIONS}), in the order its help lists them. */
export function commandFlags(command: CommandName): string[] {
  return [...COMMAND_HELP[command].flags, ...COMMON_FLAGS];
}

/** A section of {@link HELP}: the lines after `title` up to the next blank line. */
function helpSection(title: string): string[] {
  const lines = HELP.split('\n');
  const start = lines.indexOf(title) + 1;
  const end = lines.indexOf('', start);
  return lines.slice(start, end < 0 ? undefined : end);
}

/** Each entry of a HELP section (its first line and the indented lines continuing it), by `keyOf` its first line. */
function helpEntries(title: string, keyOf: (line: string) => string | undefined): Map<string, string[]> {
  const entries = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of helpSection(title)) {
    const key = /^ {2}\S/.test(line) ? keyOf(line) : undefined;
    if (key !== undefined) entries.set(key, (current = [line]));
    else current?.push(line);
  }
  return entries;
}

/**
 * `reconcile-lab <command> --help`: the command's usage, what it does (its lines of {@link HELP}), every option it
 * accepts (their lines of HELP: one text for both) and an example.
 */
export function commandHelp(command: CommandName): string {
  const about = helpEntries('Commands:', (l) => /^ {2}([a-z-]+)/.exec(l)?.[1]).get(command) ?? [];
  const options = helpEntries('Options:', (l) => /--([a-z-]+)/.exec(l)?.[1]);
  const { args, example } = COMMAND_HELP[command];
  return [
    `Usage: reconcile-lab ${command}${args} [options]`,
    '',
    // The command's lines without its name and arguments (the usage line has them).
    ...about.map((l) => '  ' + l.trim().replace(/^\S+(?: \S+)?\s{2,}/, '')),
    '',
    'Options:',
    ...commandFlags(command).flatMap((f) => options.get(f) ?? []),
    '',
    'Example:',
    `  ${example}`,
    '',
    'Keys are "namespace/name" (or "name" with --namespace, or for cluster-scoped resources).',
    'Every command and the exit codes: reconcile-lab --help',
    '',
  ].join('\n');
}

/**
 * What a help request asks for (argv held --help / -h, or its command is `help`): a command's help (`run --help`,
 * `help run`), or undefined for the whole {@link HELP}. A {@link UsageError} for a help of no such command.
 */
export function helpTopic(positionals: readonly string[]): CommandName | undefined {
  const topic = positionals[0] === 'help' ? positionals[1] : positionals[0];
  if (topic === undefined || topic === 'help') return undefined;
  if ((COMMANDS as readonly string[]).includes(topic)) return topic as CommandName;
  const near = closest(topic, COMMANDS);
  throw new UsageError(`no help for "${topic}": not a command${near ? `; did you mean "${near}"?` : ''} (commands: ${COMMANDS.join(', ')})`);
}

export function parseReconcilerSpec(spec: string): ReconcilerSpec {
  if (spec === 'lab') return { kind: 'lab' };
  if (spec.startsWith('exec:')) {
    let command: string[];
    try {
      command = splitCommandLine(spec.slice(5));
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    if (command.length === 0) throw new UsageError('--reconciler exec: needs a command, e.g. exec:./reconcile.sh');
    return { kind: 'exec', command };
  }
  if (spec.startsWith('module:')) {
    const path = spec.slice(7);
    if (!path) throw new UsageError('--reconciler module: needs a path, e.g. module:./reconciler.ts');
    // A name no loader takes (good.ts.bak) would start the loop only to fail every reconcile: refuse it now.
    const badName = moduleExtensionProblem(path);
    if (badName) throw new UsageError(`--reconciler module: ${badName}`);
    return { kind: 'module', path };
  }
  // A misspelt kind ("modul:x", "exce:./r.sh"): name the one meant, with the rest as given.
  // A misspelt or capitalised kind ("Lab", "EXEC:./r.sh"): closest() does not count case.
  const colon = spec.indexOf(':');
  const near = colon > 0 ? closest(spec.slice(0, colon), ['exec', 'module']) : undefined;
  const meant = colon > 0 ? (near ? `${near}:${spec.slice(colon + 1)}` : undefined) : closest(spec, ['lab']);
  throw new UsageError(`unknown --reconciler "${spec}" (expected lab, exec:<command> or module:<path>)${meant ? `; did you mean ${meant}?` : ''}`);
}

/**
 * The parts of a key as a person typed it (`namespace/name` or `name`); a {@link UsageError} (exit 2) naming the shape
 * expected, and what a part may not contain, for anything else (`a/b/c`, `ns/`, `a b/c`).
 */
export function keyParts(key: string): { namespace?: string; name: string } {
  try {
    return splitKey(key);
  } catch (e) {
    throw new UsageError(`bad key "${key}": expected namespace/name or name${/may not/.test((e as Error).message) ? ` (${(e as Error).message.replace(/^unexpected key "[^"]*": /, '')})` : ''}`);
  }
}

/**
 * The help text argv asks for, when parseCliArgs returned "help": the command's ({@link commandHelp}: `run --help`,
 * `help run`) or the whole {@link HELP}.
 */
export function helpFor(argv: readonly string[]): string {
  const { positionals } = parseArgs({ args: joinNegativeValues(argv), allowPositionals: true, strict: false, options: OPTIONS });
  const topic = helpTopic(positionals);
  return topic ? commandHelp(topic) : HELP;
}

/** Whether argv asks for the version (--version or -V, without --help): answered before anything else is parsed. */
export function wantsVersion(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  const opts = end < 0 ? argv : argv.slice(0, end);
  return (opts.includes('--version') || opts.includes('-V')) && !opts.includes('--help') && !opts.includes('-h');
}

/**
 * Parses argv (without node and script). Returns "help" for --help / -h, the `help` command and no arguments at all
 * ({@link helpFor} says which help). Throws {@link UsageError}, also for options without a command.
 */
export function parseCliArgs(argv: readonly string[]): CliArgs | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeValues(argv),
      allowPositionals: true,
      strict: true,
      options: OPTIONS,
    });
  } catch (e) {
    // One line and where the usage is: the whole help after it would bury the error in a CI log.
    throw new UsageError(parseErrorMessage(e as Error & { code?: string }, argv));
  }
  const v = parsed.values;
  if (v.help || argv.length === 0 || parsed.positionals[0] === 'help') {
    helpTopic(parsed.positionals); // a help of no such command is a usage error
    return 'help';
  }
  // Options without a command (`reconcile-lab -n shop --resource orders`, a $CMD that expanded to nothing in a
  // script): printing the help and exiting 0 would pass a CI step that ran nothing.
  if (parsed.positionals.length === 0) throw new UsageError(`no command given (commands: ${COMMANDS.join(', ')})`);
  const [command, ...positionals] = parsed.positionals;
  if (!(COMMANDS as readonly string[]).includes(command!)) {
    const near = closest(command!, COMMANDS);
    throw new UsageError(`unknown command "${command}"${near ? `; did you mean "${near}"?` : ''} (commands: ${COMMANDS.join(', ')})`);
  }
  const cmd = command as CommandName;
  const need = (n: number, what: string) => {
    if (positionals.length !== n) throw new UsageError(`${cmd} needs ${what}`);
  };
  if (cmd === 'dry-run' || cmd === 'inspect' || cmd === 'strip-finalizers') need(1, 'exactly one <key>');
  if (cmd === 'run') need(0, 'no positional arguments');
  if (cmd === 'step' && positionals.length > 1) throw new UsageError('step takes at most one <key>');
  // A key no object can have is said before connecting: else a cluster that is down, or a kubeconfig to fix, is told
  // first, and the key only after that is solved. A Go controller with a custom request type takes its keys verbatim.
  if (v.go === undefined) for (const k of positionals) keyParts(k);
  // An empty value (`--finalizer "$F"` with F unset) was taken as no flag at all: every finalizer removed, all
  // namespaces watched, the default kubeconfig's cluster or current-context used, without a word.
  const unlessGiven: Record<string, string> = {
    kubeconfig: 'leave it out to use KUBECONFIG or ~/.kube/config',
    context: 'leave it out to use the current-context',
    namespace: 'leave it out to watch every namespace (a key without one then takes the context\'s)',
    finalizer: 'leave it out to remove every finalizer',
    'confirm-cluster': 'it takes the name of the cluster\'s context (kubectl config current-context)',
  };
  for (const [flag, otherwise] of Object.entries(unlessGiven)) {
    const value = (v as Record<string, unknown>)[flag];
    if (typeof value === 'string' && value.trim() === '') throw new UsageError(`--${flag} is empty (a variable that expanded to nothing?); ${otherwise}`);
  }
  if (v.finalizer !== undefined && cmd !== 'strip-finalizers') throw new UsageError('--finalizer only applies to strip-finalizers');
  if (v.yes && cmd !== 'strip-finalizers') throw new UsageError('--yes only applies to strip-finalizers');
  if (v['dry-run'] && cmd !== 'report' && cmd !== 'strip-finalizers') throw new UsageError(`--dry-run does not apply to ${cmd}${cmd === 'dry-run' ? ' (it is always a dry-run)' : ''}`);
  if (v['drop-managed-fields'] && cmd !== 'run' && cmd !== 'step') throw new UsageError('--drop-managed-fields only applies to run and step (they keep an informer cache)');
  // Only report and check render Markdown: elsewhere the flag was accepted and ignored (a script would get text).
  if (v.markdown && cmd !== 'report' && cmd !== 'check') throw new UsageError(`--markdown only applies to report and check${v.json ? '' : ' (--json gives every command machine-readable output)'}`);
  let watchList: boolean | undefined;
  if (v['watch-list'] !== undefined) {
    // Only run, step and inspect list through an informer of this process: dry-run, report and strip-finalizers read
    // with plain GETs and LISTs, and check's runs use informers of their own; accepted there, it was ignored.
    if (cmd !== 'run' && cmd !== 'step' && cmd !== 'inspect') throw new UsageError('--watch-list only applies to run, step and inspect (the commands that fill an informer cache)');
    const w = v['watch-list'].toLowerCase();
    if (w === 'on' || w === 'true') watchList = true;
    else if (w === 'off' || w === 'false') watchList = false;
    else throw new UsageError(`--watch-list takes on or off, not "${v['watch-list']}"`);
  }
  if (v.json && v.markdown) throw new UsageError('choose one of --json and --markdown');
  let go: string[] | undefined;
  if (v.go !== undefined) {
    if (cmd !== 'run' && cmd !== 'step' && cmd !== 'dry-run' && cmd !== 'report' && cmd !== 'check' && cmd !== 'inspect') throw new UsageError('--go applies to run, step, dry-run, report, inspect and check');
    if (v.reconciler !== undefined) throw new UsageError('choose one of --go and --reconciler');
    try {
      go = splitCommandLine(v.go);
    } catch (e) {
      throw new UsageError(`--go: ${(e as Error).message}`);
    }
    if (go.length === 0) throw new UsageError('--go needs a command line, e.g. --go "go run ./cmd"');
  }
  // inspect compares a cache with the server and strip-finalizers edits one object: neither runs a reconciler, so the
  // option would be ignored without a word (a script would believe it inspected its module's view).
  if (v.reconciler !== undefined && (cmd === 'inspect' || cmd === 'strip-finalizers')) {
    throw new UsageError(`--reconciler does not apply to ${cmd}: it runs no reconciler${cmd === 'inspect' ? ' (it compares the informer\'s cache with the server; --go compares a Go program\'s cache)' : ''}`);
  }
  if (v['go-wait'] !== undefined && v.go === undefined) throw new UsageError('--go-wait applies with --go');
  if (v.go !== undefined) {
    // The built-in loop's options: a Go program's own controller options decide these, and the CLI cannot change them.
    const inGo: Array<[string, boolean, string]> = [
      ['workers', v.workers !== undefined, 'controller.Options{MaxConcurrentReconciles: …} in the program'],
      ['reconcile-timeout', v['reconcile-timeout'] !== undefined, 'controller.Options{ReconciliationTimeout: …} in the program'],
      ['predicate', (v.predicate ?? []).length > 0, 'builder.WithPredicates(…) in the program'],
      ['work-queue', v['work-queue'] !== undefined, 'UsePriorityQueue in the program\'s controller options'],
      // Options of the CLI's own informer cache: a Go program fills its manager's cache itself.
      ['watch-list', v['watch-list'] !== undefined, 'the program\'s client-go decides: KUBE_FEATURE_WatchListClient=false in its environment turns WatchList off'],
      ['drop-managed-fields', v['drop-managed-fields'] === true, 'cache.Options{DefaultTransform: cache.TransformStripManagedFields()} in the program'],
    ];
    for (const [flag, given, instead] of inGo) {
      if (given) throw new UsageError(`--${flag} does not apply with --go: the Go program's controller runs its own loop (${instead})`);
    }
  }
  if (v.controller !== undefined) {
    if (v.go === undefined) throw new UsageError('--controller applies to run, step, dry-run, report and inspect with --go');
    if (cmd === 'check') throw new UsageError('--controller applies to run, step, dry-run, report and inspect with --go; check follows the controller reconciling --resource (e.g. --resource deployments.apps), else the first the program sets up');
    if (v.controller.trim() === '') throw new UsageError('--controller needs the name of a controller of the program');
  }
  let durationMs: number | undefined;
  if (v.duration !== undefined) {
    // Only run has a loop to stop; elsewhere it would be ignored without a word (a step does not end after it).
    if (cmd !== 'run') throw new UsageError(`--duration only applies to run${cmd === 'step' ? ' (step ends after its one reconcile; --reconcile-timeout bounds that reconcile)' : ''}`);
    const s = Number(v.duration);
    if (!Number.isFinite(s) || s <= 0) throw new UsageError(`--duration must be a positive number of seconds (got "${v.duration}")`);
    durationMs = s * 1000;
  }
  const seconds = (flag: string, raw: string | undefined, allowZero: boolean): number | undefined => {
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n) || n < 0 || (!allowZero && n === 0) || n > 86_400) throw new UsageError(`--${flag} must be a number of seconds ${allowZero ? 'from 0' : 'above 0'} to 86400 (got "${raw}")`);
    return Math.round(n * 1000);
  };
  const goWaitMs = seconds('go-wait', v['go-wait'], false);
  const controllerCmd = cmd === 'run' || cmd === 'step' || cmd === 'check';
  let workers: number | undefined;
  if (v.workers !== undefined) {
    if (cmd !== 'run') throw new UsageError('--workers only applies to run');
    const n = Number(v.workers);
    if (!Number.isInteger(n) || n < 1 || n > 64) throw new UsageError(`--workers must be an integer from 1 to 64 (got "${v.workers}")`);
    workers = n;
  }
  // The checks' runs apply a reconcile deadline as the loop does (ctx.signal aborted), but they have no choice of queue:
  // accepted there, --work-queue would be ignored without a word.
  const loopCmd = cmd === 'run' || cmd === 'step';
  if (v['reconcile-timeout'] !== undefined && !controllerCmd) throw new UsageError('--reconcile-timeout only applies to run, step and check');
  const reconcileTimeoutMs = seconds('reconcile-timeout', v['reconcile-timeout'], true);
  const execTimeoutMs = seconds('exec-timeout', v['exec-timeout'], true);
  const predicates = v.predicate ?? [];
  if (predicates.length && !controllerCmd) throw new UsageError('--predicate only applies to run, step and check');
  for (const p of predicates) {
    try {
      parsePredicateSpec(p);
    } catch (e) {
      throw new UsageError(`--predicate: ${(e as Error).message}`);
    }
  }
  const workQueue = v['work-queue'];
  if (workQueue !== undefined) {
    if (!loopCmd) throw new UsageError('--work-queue only applies to run and step');
    if (workQueue !== 'priority' && workQueue !== 'client-go') throw new UsageError(`--work-queue must be priority or client-go (got "${workQueue}")`);
  }
  // Case-insensitive, as kubectl: "Garden.botany.example.org" (a kind) or "ConfigMaps" name what their lower case does.
  const resource = (v.resource ?? 'widgets.lab.reconcile.dev').toLowerCase();
  if (!RESOURCE_NAME.test(resource)) throw new UsageError(`--resource must look like plural.group (e.g. widgets.lab.reconcile.dev) or a core plural (configmaps); got "${resource}"`);
  const owns = [...new Set((v.owns ?? []).flatMap((o) => o.split(',')).map((o) => o.trim().toLowerCase()).filter(Boolean))];
  if (v.owns !== undefined) {
    if (!controllerCmd) throw new UsageError('--owns only applies to run, step and check');
    if (v.go !== undefined) throw new UsageError('--owns does not apply with --go: the program\'s own Owns and Watches decide what its controller watches');
    if (!owns.length) throw new UsageError('--owns needs a resource, e.g. --owns deployments.apps or --owns secrets');
    for (const o of owns) if (!RESOURCE_NAME.test(o)) throw new UsageError(`--owns must look like plural.group (e.g. deployments.apps) or a core plural (secrets); got "${o}"`);
  }
  const out: CliArgs = {
    command: cmd,
    positionals,
    resource,
    resourceGiven: v.resource !== undefined,
    reconciler: parseReconcilerSpec(v.reconciler ?? 'lab'),
    json: !!v.json,
    markdown: !!v.markdown,
    dryRun: !!v['dry-run'],
    yes: !!v.yes,
    dropManagedFields: !!v['drop-managed-fields'],
    watchList,
    verbose: !!v.verbose,
    predicates,
    owns,
  };
  if (v.controller !== undefined) out.controller = v.controller;
  for (const [flag, value] of [['check', v.check], ['confirm-cluster', v['confirm-cluster']], ['transition', v.transition], ['copy', v.copy], ['convergence-bound', v['convergence-bound']]] as const) {
    if (value !== undefined && cmd !== 'check') throw new UsageError(`--${flag} only applies to check`);
  }
  if (v.check) {
    const names = v.check.flatMap((c) => c.split(',')).map((c) => c.trim()).filter(Boolean);
    for (const n of names) {
      if ((CHECK_KINDS as readonly string[]).includes(n)) continue;
      const near = closestNames(n, CHECK_KINDS);
      throw new UsageError(`--check: unknown check "${n}"${near.length ? ` (did you mean ${near.join(' or ')}?)` : ''} (checks: ${CHECK_KINDS.join(', ')})`);
    }
    out.checks = names as CheckKind[];
  }
  if (v['confirm-cluster']) out.confirmCluster = v['confirm-cluster'];
  if (v.transition) {
    out.transitions = v.transition.map((t) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(t);
      } catch (e) {
        throw new UsageError(`--transition must be a JSON object (a merge patch), e.g. '{"spec":{"data":{"mode":"x"}}}': ${(e as Error).message}`);
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError('--transition must be a JSON object (a merge patch)');
      return parsed;
    });
  }
  if (v.copy) {
    out.copies = v.copy.flatMap((c) => c.split(',')).map((c) => c.trim()).filter(Boolean);
    for (const c of out.copies) {
      try {
        parseCopySpec(c);
      } catch (e) {
        throw new UsageError(`--copy ${(e as Error).message}`);
      }
    }
  }
  const bound = seconds('convergence-bound', v['convergence-bound'], false);
  if (bound !== undefined) out.convergenceBoundMs = bound;
  if (execTimeoutMs !== undefined && out.reconciler.kind !== 'exec') throw new UsageError('--exec-timeout only applies with --reconciler exec:<command>');
  if (workers !== undefined) out.workers = workers;
  if (reconcileTimeoutMs !== undefined) out.reconcileTimeoutMs = reconcileTimeoutMs;
  if (execTimeoutMs !== undefined) out.execTimeoutMs = execTimeoutMs;
  if (workQueue !== undefined) out.workQueue = workQueue;
  if (v.kubeconfig) out.kubeconfig = v.kubeconfig;
  if (v.context) out.context = v.context;
  if (v.namespace) {
    const problem = pathSegmentProblem(v.namespace);
    if (problem) throw new UsageError(`--namespace: ${problem}`);
    out.namespace = v.namespace;
  }
  if (v.finalizer) out.finalizer = v.finalizer;
  if (durationMs !== undefined) out.durationMs = durationMs;
  if (go) out.go = go;
  if (goWaitMs !== undefined) out.goWaitMs = goWaitMs;
  return out;
}

/**
 * Whether the CLI's informers use WatchList: the --watch-list flag, else client-go's switch
 * `KUBE_FEATURE_WatchListClient=true|false`, else on (client-go's default since 1.35).
 */
export function resolveWatchList(flag: boolean | undefined, env: Record<string, string | undefined>): boolean {
  if (flag !== undefined) return flag;
  const gate = env.KUBE_FEATURE_WatchListClient?.trim().toLowerCase();
  if (gate === 'false') return false;
  if (gate === 'true') return true;
  return DEFAULT_WATCH_LIST;
}
