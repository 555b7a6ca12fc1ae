import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCliArgs, UsageError, type CliArgs } from '../../../src/cli/args.ts';
import { runCli, type CliIo } from '../../../src/cli/cli.ts';
import { toDisposable } from '../../../src/core/lifecycle.ts';

const usage = (argv: string[], re: RegExp) =>
  assert.throws(() => parseCliArgs(argv), (e: unknown) => e instanceof UsageError && re.test(e.message), `${argv.join(' ')}: ${re}`);
const parses = (argv: string[]) => {
  const a = parseCliArgs(argv);
  assert.ok(a !== 'help', argv.join(' '));
  return a as CliArgs;
};

test('--markdown applies to report and check only: elsewhere it was accepted and the output was text or JSON anyway', () => {
  assert.equal(parses(['report', '--markdown']).markdown, true);
  assert.equal(parses(['check', '--markdown']).markdown, true);
  for (const argv of [['run'], ['step'], ['dry-run', 'ns/a'], ['inspect', 'ns/a'], ['strip-finalizers', 'ns/a']]) {
    usage([...argv, '--markdown'], /^--markdown only applies to report and check \(--json gives every command machine-readable output\)$/);
  }
});

test('--watch-list applies to the commands that fill an informer cache (run, step, inspect), not with --go', () => {
  assert.equal(parses(['run', '--watch-list', 'off']).watchList, false);
  assert.equal(parses(['step', '--watch-list', 'off']).watchList, false);
  assert.equal(parses(['inspect', 'ns/a', '--watch-list', 'off']).watchList, false);
  // dry-run, report and strip-finalizers read with GET / LIST; check's runs build informers of their own.
  for (const argv of [['dry-run', 'ns/a'], ['report'], ['strip-finalizers', 'ns/a'], ['check']]) {
    usage([...argv, '--watch-list', 'off'], /^--watch-list only applies to run, step and inspect \(the commands that fill an informer cache\)$/);
  }
  // The Go program's manager fills its own cache: neither option of this process's cache reaches it.
  usage(['run', '--go', 'go run ./cmd', '--watch-list', 'off'], /^--watch-list does not apply with --go: .*KUBE_FEATURE_WatchListClient=false/);
  usage(['inspect', 'ns/a', '--go', 'go run ./cmd', '--watch-list', 'on'], /^--watch-list does not apply with --go/);
  usage(['step', '--go', 'go run ./cmd', '--drop-managed-fields'], /^--drop-managed-fields does not apply with --go: .*cache\.TransformStripManagedFields\(\)/);
});

test('a key no object can have is a usage error before anything connects; a --go program\'s keys are its own', async () => {
  for (const [argv, key] of [
    [['inspect', 'a/b/c'], 'a/b/c'],
    [['dry-run', 'ns/'], 'ns/'],
    [['strip-finalizers', '/name'], '/name'],
    [['step', 'a/b/c'], 'a/b/c'],
    [['report', 'ns/ok', 'x/y/z'], 'x/y/z'],
    [['check', 'ns/a%b'], 'ns/a%b'],
  ] as const) {
    usage([...argv], new RegExp(`^bad key "${key.replace(/[/%]/g, '\\$&')}": expected namespace/name or name`));
  }
  assert.deepEqual(parses(['report', 'ns/a', 'b']).positionals, ['ns/a', 'b']);
  // A Go controller with a custom request type names its items by its own text (only known once the program runs).
  assert.deepEqual(parses(['step', 'cluster/a/b', '--go', 'go run ./cmd']).positionals, ['cluster/a/b']);

  // Exit 2 with the key's problem, not exit 3 for a kubeconfig the person would fix first, only to learn this next.
  const out = { stdout: '', stderr: '' };
  const io: CliIo = { stdout: (s) => void (out.stdout += s), stderr: (s) => void (out.stderr += s), env: {}, onInterrupt: () => toDisposable(() => {}) };
  assert.equal(await runCli(['inspect', 'a/b/c', '--kubeconfig', '/nonexistent/reconcile-lab-kubeconfig', '--json'], io), 2);
  assert.deepEqual(JSON.parse(out.stdout), { error: 'bad key "a/b/c": expected namespace/name or name', exitCode: 2 });
  assert.match(out.stderr, /^reconcile-lab: bad key "a\/b\/c"/);
});

test('--reconciler in another case is named as meant; "help" as a command is the help (see commandHelp.test.ts)', () => {
  usage(['run', '--reconciler', 'Lab'], /^unknown --reconciler "Lab" \(expected lab, exec:<command> or module:<path>\); did you mean lab\?$/);
  usage(['run', '--reconciler', 'EXEC:./r.sh'], /; did you mean exec:\.\/r\.sh\?$/);
  usage(['run', '--reconciler', 'kubectl'], /^unknown --reconciler "kubectl" \(expected lab, exec:<command> or module:<path>\)$/);
  assert.equal(parseCliArgs(['help']), 'help');
  assert.equal(parseCliArgs(['help', 'run']), 'help');
});

test('an empty value (a variable that expanded to nothing) is a usage error, never taken as the flag left out', () => {
  // Taken as absent, these meant: every finalizer removed, all namespaces, the default kubeconfig's cluster.
  usage(['strip-finalizers', 'ns/a', '--finalizer', '', '--yes'], /^--finalizer is empty \(a variable that expanded to nothing\?\); leave it out to remove every finalizer$/);
  usage(['run', '-n', ''], /^--namespace is empty .*leave it out to watch every namespace/);
  usage(['run', '--namespace= '], /^--namespace is empty/);
  usage(['report', '--kubeconfig='], /^--kubeconfig is empty .*KUBECONFIG or ~\/\.kube\/config$/);
  usage(['inspect', 'ns/a', '--context', ''], /^--context is empty .*current-context$/);
  usage(['check', '--confirm-cluster', ''], /^--confirm-cluster is empty .*kubectl config current-context/);
  const a = parses(['strip-finalizers', 'ns/a', '--finalizer', 'x.io/f', '-n', 'ns', '--context', 'c', '--kubeconfig', 'k']);
  assert.deepEqual([a.finalizer, a.namespace, a.context, a.kubeconfig], ['x.io/f', 'ns', 'c', 'k']);
});

test('kubectl habits (-A, -o json) are answered with what this CLI does; a short option in the other case is named', () => {
  usage(['run', '-A'], /^unknown option -A: without -n, run, step, report and check cover every namespace already \(kubectl's -A\)$/);
  usage(['report', '--all-namespaces'], /^unknown option --all-namespaces: without -n/);
  usage(['report', '-o', 'json'], /^unknown option -o: --json gives machine-readable output \(report and check also take --markdown\)$/);
  usage(['report', '--output=json'], /^unknown option --output: --json gives machine-readable output/);
  usage(['run', '-N', 'shop'], /^unknown option -N \(did you mean -n\?\)$/);
  usage(['run', '-x'], /^unknown option -x$/);
  usage(['run', '--dryrun'], /^unknown option --dryrun \(did you mean --dry-run\?\)$/);
});
