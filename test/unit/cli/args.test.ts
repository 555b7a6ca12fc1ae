import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cliVersion, closest, ExitCode, HELP, parseCliArgs, parseReconcilerSpec, resolveWatchList, UsageError, wantsVersion, type CliArgs } from '../../../src/cli/args.ts';
import { CHECK_KINDS, CHECK_TITLES } from '../../../src/core/checks/types.ts';
import { splitCommandLine } from '../../../src/core/reconcilers/commandLine.ts';
import { exitCodeFor } from '../../../src/cli/cli.ts';
import { ApiError } from '../../../src/core/k8s/client.ts';
import { KubeConfigError } from '../../../src/core/k8s/kubeconfig.ts';
import { ObjectChangedError } from '../../../src/core/actions/finalizers.ts';
import { GoControllerNotAnnouncedError } from '../../../src/core/bridge/runGoController.ts';

test('help: no arguments, --help or -h; options without a command are a usage error (a CI step must not pass having run nothing)', () => {
  assert.equal(parseCliArgs([]), 'help');
  assert.equal(parseCliArgs(['--help']), 'help');
  assert.equal(parseCliArgs(['report', '-h']), 'help');
  assert.equal(parseCliArgs(['-n', 'shop', '--help']), 'help');
  assert.throws(() => parseCliArgs(['-n', 'shop', '--resource', 'orders']), (e: unknown) => e instanceof UsageError && e.message === 'no command given (commands: run, step, dry-run, report, inspect, strip-finalizers, check)');
});

test('a full command line with defaults filled in', () => {
  const a = parseCliArgs(['strip-finalizers', 'ns/x', '--finalizer', 'example.com/f', '--yes', '--kubeconfig', '/k', '--context', 'c', '-n', 'ns', '--resource', 'widgets.example.com', '--json']);
  assert.notEqual(a, 'help');
  if (a === 'help') return;
  assert.equal(a.command, 'strip-finalizers');
  assert.deepEqual(a.positionals, ['ns/x']);
  assert.equal(a.finalizer, 'example.com/f');
  assert.equal(a.yes, true);
  assert.equal(a.kubeconfig, '/k');
  assert.equal(a.context, 'c');
  assert.equal(a.namespace, 'ns');
  assert.equal(a.resource, 'widgets.example.com');
  const upper = parseCliArgs(['report', '--resource', 'Garden.Botany.example.org']);
  assert.ok(upper !== 'help' && upper.resource === 'garden.botany.example.org', 'case-insensitive, as kubectl');
  assert.equal(a.json, true);
  assert.deepEqual(a.reconciler, { kind: 'lab' });
  const d = parseCliArgs(['report']);
  assert.ok(d !== 'help' && d.resource === 'widgets.lab.reconcile.dev' && !d.dryRun);
  const r = parseCliArgs(['run', '--duration', '2.5']);
  assert.ok(r !== 'help' && r.durationMs === 2500);
});

test('usage errors are UsageErrors with a useful message', () => {
  const bad: Array<[string[], RegExp]> = [
    [['frobnicate'], /unknown command "frobnicate"/],
    [['dry-run'], /dry-run needs exactly one <key>/],
    [['inspect', 'a', 'b'], /inspect needs exactly one <key>/],
    [['run', 'x'], /run needs no positional/],
    [['report', '--finalizer', 'x'], /--finalizer only applies to strip-finalizers/],
    [['report', '--yes'], /--yes only applies/],
    [['dry-run', 'k', '--dry-run'], /always a dry-run/],
    [['report', '--json', '--markdown'], /choose one/],
    [['run', '--duration', '0'], /--duration must be a positive/],
    [['step', 'ns/x', '--duration', '10'], /^--duration only applies to run \(step ends after its one reconcile; --reconcile-timeout bounds that reconcile\)$/],
    [['check', '--duration', '10'], /^--duration only applies to run$/],
    [['report', '--resource', 'Widgets/x'], /--resource must look like plural.group/],
    [['report', '--reconciler', 'python'], /unknown --reconciler "python" \(expected lab, exec:<command> or module:<path>\)$/],
    [['report', '--reconciler', 'modul:./planter.ts'], /unknown --reconciler "modul:\.\/planter\.ts" .*; did you mean module:\.\/planter\.ts\?$/],
    [['report', '--reconciler', 'exce:./r.sh'], /; did you mean exec:\.\/r\.sh\?$/],
    [['report', '--bogus'], /^unknown option --bogus$/],
  ];
  for (const [argv, re] of bad) assert.throws(() => parseCliArgs(argv), (e: unknown) => e instanceof UsageError && re.test(e.message), argv.join(' '));
});

test('reconciler specs and command-line splitting', () => {
  assert.deepEqual(parseReconcilerSpec('exec:./r.sh --flag "two words" \'single q\' a\\ b'), { kind: 'exec', command: ['./r.sh', '--flag', 'two words', 'single q', 'a b'] });
  assert.deepEqual(parseReconcilerSpec('module:samples/module-reconciler.ts'), { kind: 'module', path: 'samples/module-reconciler.ts' });
  assert.throws(() => parseReconcilerSpec('exec:'), UsageError);
  assert.throws(() => parseReconcilerSpec('module:'), UsageError);
  for (const ext of ['ts', 'mts', 'cts', 'js', 'mjs', 'cjs']) assert.deepEqual(parseReconcilerSpec(`module:r.${ext}`), { kind: 'module', path: `r.${ext}` });
  // A name no loader takes is a usage error (exit 2) naming the accepted extensions, not a loop that fails every reconcile.
  assert.throws(() => parseReconcilerSpec('module:good.ts.bak'), (e: unknown) => e instanceof UsageError && e.message === '--reconciler module: good.ts.bak is not a JavaScript or TypeScript file (".bak"): a reconciler module\'s name must end in .ts, .mts, .cts, .js, .mjs or .cjs');
  assert.throws(() => parseCliArgs(['run', '--reconciler', 'module:./reconciler']), (e: unknown) => e instanceof UsageError && /no extension\)/.test(e.message));
  assert.deepEqual(splitCommandLine('  a   "" b '), ['a', '', 'b']);
  assert.throws(() => splitCommandLine('a "b'), /unterminated/);
});

test('exit codes follow the documented table', () => {
  assert.equal(exitCodeFor(new UsageError('x')), ExitCode.usage);
  assert.equal(exitCodeFor(new GoControllerNotAnnouncedError('x', ['harbor-keeper'])), ExitCode.usage, '--go with a --controller / --resource the program does not run');
  assert.equal(exitCodeFor(new KubeConfigError('x')), ExitCode.connection);
  assert.equal(exitCodeFor(new ApiError(0, 'Unreachable', 'x')), ExitCode.connection);
  assert.equal(exitCodeFor(new ApiError(401, 'Unauthorized', 'x')), ExitCode.connection);
  assert.equal(exitCodeFor(new ApiError(409, 'Conflict', 'x')), ExitCode.conflict);
  assert.equal(exitCodeFor(new ObjectChangedError('x')), ExitCode.conflict);
  assert.equal(exitCodeFor(new ApiError(500, 'InternalError', 'x')), ExitCode.failure);
  assert.equal(exitCodeFor(new Error('x')), ExitCode.failure);
  assert.deepEqual(Object.values(ExitCode), [0, 1, 2, 3, 4, 5, 130, 143]);
  // The help documents every code, the signals' too.
  for (const code of Object.values(ExitCode)) assert.match(HELP, new RegExp(`^  (\\d+, )*${code}[ ,]`, 'm'), `exit code ${code} in the help`);
});

test('with --go, an unknown option close to none of the CLI\'s is taken for a flag of the program: the message shows it inside the --go command line', () => {
  const message = (argv: string[]) => { try { parseCliArgs(argv); } catch (e) { return (e as UsageError).message; } return undefined; };
  assert.equal(message(['step', '--go', './bin/manager', '--leader-elect=false']), 'unknown option --leader-elect: reconcile-lab has no such option; a flag of your program goes inside the --go command line, e.g. --go "./bin/manager --leader-elect=false"');
  assert.equal(message(['run', '--go=./bin/manager --zap-devel', '--metrics-bind-address', '0']), 'unknown option --metrics-bind-address: reconcile-lab has no such option; a flag of your program goes inside the --go command line, e.g. --go "./bin/manager --zap-devel --metrics-bind-address 0"');
  // A near miss of the CLI's own option is still that, and without --go there is no program to hand it to.
  assert.equal(message(['step', '--go', './bin/manager', '--dryrun']), 'unknown option --dryrun (did you mean --dry-run?)');
  assert.equal(message(['step', '--leader-elect=false']), 'unknown option --leader-elect');
});

test('unknown or malformed flags: the CLI\'s own words and usage, not Node\'s', () => {
  const unknown = (() => { try { parseCliArgs(['report', '--bogus']); } catch (e) { return e as UsageError; } })();
  assert.ok(unknown instanceof UsageError);
  assert.equal(unknown.message, 'unknown option --bogus');
  const missing = (() => { try { parseCliArgs(['report', '--kubeconfig']); } catch (e) { return e as UsageError; } })();
  assert.equal(missing?.message, 'option --kubeconfig needs a value');
  const extra = (() => { try { parseCliArgs(['report', '--json=yes']); } catch (e) { return e as UsageError; } })();
  assert.equal(extra?.message, 'option --json takes no value');
  assert.doesNotMatch(unknown.message + missing?.message + extra?.message, /positional|place it at the end/);
});

test('strip-finalizers --dry-run parses without --yes', () => {
  const a = parseCliArgs(['strip-finalizers', 'ns/x', '--dry-run']);
  assert.ok(a !== 'help' && a.dryRun && !a.yes);
});

test('--go: a command line for run, step, dry-run, inspect and check; not with --reconciler or other commands', () => {
  const a = parseCliArgs(['step', 'ns/a', '--go', 'go run ./cmd --leader-elect=false']);
  assert.ok(a !== 'help');
  assert.deepEqual(a.go, ['go', 'run', './cmd', '--leader-elect=false']);
  const i = parseCliArgs(['inspect', 'ns/a', '--go', './manager', '--resource', 'configmaps']);
  assert.ok(i !== 'help');
  assert.deepEqual(i.go, ['./manager']);
  assert.doesNotThrow(() => parseCliArgs(['report', '--go', 'go run .', '--dry-run', '--controller', 'x']), 'report takes --go and --controller');
  assert.throws(() => parseCliArgs(['strip-finalizers', 'x', '--go', 'go run .']), /^UsageError: --go applies to run, step, dry-run, report, inspect and check$/);
  assert.throws(() => parseCliArgs(['run', '--go', 'go run .', '--reconciler', 'lab']), /choose one of --go and --reconciler/);
  assert.throws(() => parseCliArgs(['run', '--go', '  ']), /--go needs a command line/);
});

test('--controller: which of the Go program\'s controllers to follow, only with --go on run, step, dry-run and inspect', () => {
  const a = parseCliArgs(['step', 'Namespace=team-a', '--go', './relay --board', '--resource', 'beacons.relay.example.io', '--controller', 'beacon-board']);
  assert.ok(a !== 'help');
  assert.equal(a.controller, 'beacon-board');
  assert.deepEqual(a.positionals, ['Namespace=team-a']);
  const b = parseCliArgs(['step', '--go', './relay']);
  assert.ok(b !== 'help');
  assert.equal(b.controller, undefined);
  assert.throws(() => parseCliArgs(['step', '--controller', 'x']), /--controller applies to run, step, dry-run, report and inspect with --go/);
  assert.throws(() => parseCliArgs(['check', '--go', './relay', '--controller', 'x']), /--controller applies to run, step, dry-run, report and inspect with --go; check follows the controller reconciling --resource \(e\.g\. --resource deployments\.apps\), else the first the program sets up$/);
  assert.throws(() => parseCliArgs(['run', '--go', './relay', '--controller', ' ']), /--controller needs the name/);
});

test('--drop-managed-fields: off by default (objects cached as received, as controller-runtime), opt-in for run and step only', () => {
  const d = parseCliArgs(['run']);
  assert.ok(d !== 'help' && d.dropManagedFields === false);
  for (const cmd of ['run', 'step']) {
    const a = parseCliArgs([cmd, '--drop-managed-fields']);
    assert.ok(a !== 'help' && a.dropManagedFields === true, cmd);
  }
  assert.throws(() => parseCliArgs(['report', '--drop-managed-fields']), (e: Error) => e instanceof UsageError && /only applies to run and step/.test(e.message));
});

test('run: --workers, --reconcile-timeout, --exec-timeout, --predicate (repeatable) and --work-queue', () => {
  const a = parseCliArgs(['run', '--workers', '2', '--reconcile-timeout', '1.5', '--reconciler', 'exec:./r.sh', '--exec-timeout', '0', '--predicate', 'generation-changed', '--predicate', 'label-selector=app=web,tier=db', '--work-queue', 'client-go']);
  assert.ok(a !== 'help');
  assert.equal(a.workers, 2);
  assert.equal(a.reconcileTimeoutMs, 1500);
  assert.equal(a.execTimeoutMs, 0, '0: no exec timeout');
  assert.deepEqual(a.predicates, ['generation-changed', 'label-selector=app=web,tier=db']);
  assert.equal(a.workQueue, 'client-go');
  const d = parseCliArgs(['run']);
  assert.ok(d !== 'help');
  assert.equal(d.workers, undefined, 'defaults come from the core: 1 worker, no reconcile timeout, the priority queue');
  assert.equal(d.reconcileTimeoutMs, undefined);
  assert.deepEqual(d.predicates, []);
  const bad = (argv: string[], re: RegExp) => assert.throws(() => parseCliArgs(argv), (e: unknown) => e instanceof UsageError && re.test(e.message));
  bad(['run', '--workers', '0'], /--workers must be an integer from 1 to 64/);
  bad(['run', '--workers', '1.5'], /--workers must be an integer/);
  bad(['step', '--workers', '2'], /--workers only applies to run/);
  bad(['run', '--reconcile-timeout', 'soon'], /--reconcile-timeout must be a number of seconds/);
  bad(['report', '--reconcile-timeout', '3'], /^--reconcile-timeout only applies to run, step and check$/);
  bad(['run', '--exec-timeout', '5'], /--exec-timeout only applies with --reconciler exec/);
  bad(['run', '--reconciler', 'exec:x', '--exec-timeout=-1'], /--exec-timeout must be a number of seconds from 0/);
  bad(['run', '--predicate', 'generation'], /unknown predicate "generation" \(predicates: generation-changed, resource-version-changed/);
  bad(['run', '--predicate', 'label-selector=app'], /bad label-selector/);
  bad(['dry-run', 'k', '--predicate', 'generation-changed'], /--predicate only applies to run, step and check/);
  // check's runs apply a reconcile deadline as the loop does (a module's export, the editor's setting): so does the flag.
  assert.equal((parseCliArgs(['check', 'ns/a', '--reconcile-timeout', '3']) as CliArgs).reconcileTimeoutMs, 3000);
  assert.equal((parseCliArgs(['check', 'ns/a', '--reconciler', 'exec:./r.sh', '--reconcile-timeout', '0']) as CliArgs).reconcileTimeoutMs, 0, '0: none (over a module\'s own)');
  assert.throws(() => parseCliArgs(['check', 'ns/a', '--go', './ctl', '--reconcile-timeout', '1']), /^UsageError: --reconcile-timeout does not apply with --go: .*controller\.Options\{ReconciliationTimeout: …\} in the program\)$/);
  // check runs its own controllers without a choice of queue: this was accepted and ignored.
  bad(['check', 'ns/a', '--work-queue', 'client-go'], /^--work-queue only applies to run and step$/);
  assert.deepEqual((parseCliArgs(['check', 'ns/a', '--predicate', 'generation-changed']) as CliArgs).predicates, ['generation-changed'], 'check takes predicates (the checked loop uses them)');
  bad(['run', '--work-queue', 'fifo'], /--work-queue must be priority or client-go/);
  // inspect and strip-finalizers run no reconciler: the option was accepted and ignored.
  bad(['inspect', 'ns/a', '--reconciler', 'module:./r.ts'], /^--reconciler does not apply to inspect: it runs no reconciler \(.*--go compares a Go program's cache\)$/);
  bad(['strip-finalizers', 'ns/a', '--reconciler', 'lab'], /^--reconciler does not apply to strip-finalizers: it runs no reconciler$/);
});

test('--watch-list on|off; without it KUBE_FEATURE_WatchListClient decides, else on (client-go 1.35+)', () => {
  assert.equal((parseCliArgs(['run', '--watch-list', 'off']) as CliArgs).watchList, false);
  assert.equal((parseCliArgs(['inspect', 'ns/a', '--watch-list', 'ON']) as CliArgs).watchList, true);
  assert.equal((parseCliArgs(['run']) as CliArgs).watchList, undefined);
  assert.throws(() => parseCliArgs(['run', '--watch-list', 'maybe']), (e: Error) => e instanceof UsageError && /on or off/.test(e.message));
  assert.equal(resolveWatchList(undefined, {}), true);
  assert.equal(resolveWatchList(undefined, { KUBE_FEATURE_WatchListClient: 'false' }), false);
  assert.equal(resolveWatchList(undefined, { KUBE_FEATURE_WatchListClient: 'true' }), true);
  assert.equal(resolveWatchList(true, { KUBE_FEATURE_WatchListClient: 'false' }), true, 'the flag wins');
  assert.equal(resolveWatchList(false, {}), false);
});

test('the help names every robustness check, in the check command and in --check', () => {
  const command = HELP.slice(HELP.indexOf('  check [key...]'), HELP.indexOf('  strip-finalizers')).replace(/\s+/g, ' ').toLowerCase();
  const option = HELP.slice(HELP.indexOf('  --check <names>'), HELP.indexOf('  --confirm-cluster')).replace(/\s+/g, ' ');
  for (const kind of CHECK_KINDS) {
    assert.ok(command.includes(CHECK_TITLES[kind].toLowerCase()), `the check command's line names ${CHECK_TITLES[kind]}`);
    assert.ok(option.includes(kind), `--check lists ${kind}`);
  }
});

test('help and README usage name --go and --controller as they behave: --controller for inspect too, -n not scoping a Go program', async () => {
  const { readFileSync } = await import('node:fs');
  const flat = HELP.replace(/\s+/g, ' ');
  assert.match(flat, /--controller <name> run \/ step \/ dry-run \/ report \/ inspect with --go: follow the program's controller of this name \(default: the first the program sets up/);
  assert.doesNotThrow(() => parseCliArgs(['inspect', 'ns/x', '--go', './manager', '--controller', 'x']), 'inspect takes --controller, as the help says');
  assert.match(flat, /-n, --namespace <ns> namespace for keys without one, and the scope of run\/report \(not of a --go program/);
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const usage = readme.slice(readme.indexOf('reconcile-lab <command> [args] [options]'), readme.indexOf('```', readme.indexOf('reconcile-lab <command> [args] [options]')));
  assert.match(usage, /--go <command line> {2}--controller <name>/);
});

test('typos get a suggestion; --version / -V is answered before anything else', () => {
  const msg = (argv: string[]) => { try { parseCliArgs(argv); } catch (e) { return (e as UsageError).message; } return ''; };
  assert.match(msg(['stpe']), /unknown command "stpe"; did you mean "step"\?/);
  assert.match(msg(['chek']), /did you mean "check"\?/);
  assert.doesNotMatch(msg(['frobnicate']), /did you mean/);
  assert.equal(msg(['step', '--dryrun']), 'unknown option --dryrun (did you mean --dry-run?)');
  assert.equal(msg(['report', '--kubeconfg', 'x']), 'unknown option --kubeconfg (did you mean --kubeconfig?)');
  assert.equal(closest('zzzzzz', ['run', 'step']), undefined);
  assert.equal(wantsVersion(['--version']), true);
  assert.equal(wantsVersion(['report', '-V']), true);
  assert.equal(wantsVersion(['report', '--', '-V']), false);
  assert.equal(wantsVersion(['--help', '--version']), false);
  assert.match(cliVersion(), /^\d+\.\d+\.\d+/);
});

test('--go-wait bounds the wait for a Go program\'s controller (CI: no 5-minute hang on a program without bridge.Options)', () => {
  const a = parseCliArgs(['dry-run', 'ns/x', '--go', './ctl', '--go-wait', '8']);
  assert.ok(a !== 'help' && a.goWaitMs === 8000);
  const d = parseCliArgs(['dry-run', 'ns/x', '--go', './ctl']);
  assert.ok(d !== 'help' && d.goWaitMs === undefined);
  assert.throws(() => parseCliArgs(['report', '--go-wait', '8']), /--go-wait applies with --go/);
  assert.throws(() => parseCliArgs(['step', '--go', './ctl', '--go-wait', '0']), /--go-wait must be a number of seconds above 0/);
  assert.match(HELP, /--go-wait <s>/);
});

test('--go refuses the built-in loop\'s options (the Go program\'s controller options decide them), naming where they live', () => {
  const go = ['run', '--go', './ctl'];
  assert.throws(() => parseCliArgs([...go, '--workers', '3']), /--workers does not apply with --go: .*MaxConcurrentReconciles/);
  assert.throws(() => parseCliArgs([...go, '--reconcile-timeout', '1']), /--reconcile-timeout does not apply with --go: .*ReconciliationTimeout/);
  assert.throws(() => parseCliArgs([...go, '--predicate', 'label-changed']), /--predicate does not apply with --go: .*WithPredicates/);
  assert.throws(() => parseCliArgs([...go, '--work-queue', 'client-go']), /--work-queue does not apply with --go: .*UsePriorityQueue/);
  const ok = parseCliArgs(['run', '--workers', '3', '--predicate', 'label-changed']);
  assert.ok(ok !== 'help' && ok.workers === 3, 'without --go they apply');
});

test('--copy kind/name (check only): repeatable or comma-separated, each validated as typed', () => {
  const a = parseCliArgs(['check', 'ns/a', '--copy', 'secret/db-creds,cm/settings', '--copy', 'Secret/vault']) as CliArgs;
  assert.deepEqual(a.copies, ['secret/db-creds', 'cm/settings', 'Secret/vault']);
  assert.equal((parseCliArgs(['check', 'ns/a']) as CliArgs).copies, undefined);
  const bad = (argv: string[], re: RegExp) => assert.throws(() => parseCliArgs(argv), (e: unknown) => e instanceof UsageError && re.test(e.message));
  bad(['check', '--copy', 'pod/x'], /^--copy "pod\/x": only Secrets and ConfigMaps are copied/);
  bad(['check', '--copy', 'db-creds'], /^--copy "db-creds" is not kind\/name/);
  bad(['run', '--copy', 'secret/x'], /--copy only applies to check/);
  assert.match(HELP, /--copy <kind\/name>/);
});
