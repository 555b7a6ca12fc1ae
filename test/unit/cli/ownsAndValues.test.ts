import { test } from 'node:test';
import assert from 'node:assert/strict';
import { joinNegativeValues, parseCliArgs, UsageError } from '../../../src/cli/args.ts';
import { ownedResources, resolvePrimary, resolveResource, runCli, type CliIo } from '../../../src/cli/cli.ts';
import type { DiscoveredResource } from '../../../src/core/k8s/discovery.ts';
import { toDisposable } from '../../../src/core/lifecycle.ts';

const usage = (argv: string[], re: RegExp) =>
  assert.throws(() => parseCliArgs(argv), (e: unknown) => e instanceof UsageError && re.test(e.message), `${argv.join(' ')}: ${re}`);

test('--owns: repeatable and comma-separated, lower case, deduplicated; run, step and check only; not with --go', () => {
  const a = parseCliArgs(['run', '--reconciler', 'exec:./r.sh', '--owns', 'Deployments.apps', '--owns', 'secrets,services', '--owns', 'secrets']);
  assert.ok(a !== 'help');
  assert.deepEqual(a.owns, ['deployments.apps', 'secrets', 'services']);
  for (const cmd of [['step'], ['check']]) {
    const b = parseCliArgs([...cmd, '--owns', 'secrets']);
    assert.ok(b !== 'help');
    assert.deepEqual(b.owns, ['secrets']);
  }
  const none = parseCliArgs(['run']);
  assert.ok(none !== 'help');
  assert.deepEqual(none.owns, [], 'no --owns: only the ConfigMaps every built-in reconciler owns');
  usage(['report', '--owns', 'secrets'], /^--owns only applies to run, step and check$/);
  usage(['dry-run', 'ns/x', '--owns', 'secrets'], /--owns only applies to run, step and check/);
  usage(['run', '--go', 'go run ./cmd', '--owns', 'secrets'], /--owns does not apply with --go/);
  usage(['run', '--owns', 'deployments/apps'], /--owns must look like plural\.group \(e\.g\. deployments\.apps\) or a core plural \(secrets\); got "deployments\/apps"/);
  usage(['run', '--owns', ','], /--owns needs a resource/);
  usage(['run', '--owns'], /^option --owns needs a value$/);
  usage(['run', '-n'], /^option --namespace needs a value$/); // not "-n," as Node names it
});

test('a value that looks like a negative number, given as the next argument, is the value (the range error, not "takes no value")', () => {
  usage(['run', '--reconciler', 'exec:x', '--exec-timeout', '-1'], /^--exec-timeout must be a number of seconds from 0 to 86400 \(got "-1"\)$/);
  usage(['run', '--duration', '-5'], /^--duration must be a positive number of seconds \(got "-5"\)$/);
  usage(['run', '--workers', '-2'], /^--workers must be an integer from 1 to 64 \(got "-2"\)$/);
  usage(['run', '--reconcile-timeout', '-0.5'], /^--reconcile-timeout must be a number of seconds from 0 to 86400 \(got "-0\.5"\)$/);
  usage(['check', '--convergence-bound', '-.5'], /--convergence-bound must be a number of seconds above 0 to 86400 \(got "-\.5"\)/);
  // The same as the "=" form.
  usage(['run', '--reconciler', 'exec:x', '--exec-timeout=-1'], /^--exec-timeout must be a number of seconds from 0 to 86400 \(got "-1"\)$/);
  // An option after an option that takes a value is no value: said as such, not "takes no value".
  usage(['report', '--namespace', '--json'], /^option --namespace needs a value, not the option after it \(a value starting with "-" is written --namespace=-…\)$/);
  // A boolean option keeps its own message; a negative number after it is not joined.
  usage(['report', '--json=1'], /^option --json takes no value$/);
  assert.deepEqual(joinNegativeValues(['run', '--json', '-1']), ['run', '--json', '-1']);
  assert.deepEqual(joinNegativeValues(['run', '-n', '-1', '--duration', '-1e3', '--', '--duration', '-1']), ['run', '--namespace=-1', '--duration=-1e3', '--', '--duration', '-1']);
  assert.deepEqual(joinNegativeValues(['run', '--duration', '-v']), ['run', '--duration', '-v'], 'a flag is not a number');
});

const io = () => {
  const out = { stdout: '', stderr: '' };
  const cliIo: CliIo = { stdout: (s) => void (out.stdout += s), stderr: (s) => void (out.stderr += s), env: {}, onInterrupt: () => toDisposable(() => {}) };
  return { out, cliIo };
};

test('--json: a usage error also prints {"error","exitCode"} on stdout; without --json stdout stays empty', async () => {
  for (const argv of [['run', '--workers', '0', '--json'], ['run', '--json', '--bogus'], ['--json', 'frobnicate']]) {
    const { out, cliIo } = io();
    assert.equal(await runCli(argv, cliIo), 2, argv.join(' '));
    const lines = out.stdout.trim().split('\n');
    assert.equal(lines.length, 1, out.stdout);
    const j = JSON.parse(lines[0]!) as { error: string; exitCode: number };
    assert.equal(j.exitCode, 2);
    assert.ok(j.error && out.stderr.startsWith(`reconcile-lab: ${j.error}\n`), `${j.error} / ${out.stderr}`);
  }
  const { out, cliIo } = io();
  assert.equal(await runCli(['run', '--workers', '0'], cliIo), 2);
  assert.equal(out.stdout, '');
  assert.match(out.stderr, /--workers must be an integer from 1 to 64/);
  // After "--" a "--json" is no flag.
  const after = io();
  assert.equal(await runCli(['run', 'x', '--', '--json'], after.cliIo), 2);
  assert.equal(after.out.stdout, '');
});

const r = (group: string, resource: string, kind: string, extra: Partial<DiscoveredResource> = {}): DiscoveredResource => ({ group, version: 'v1', resource, kind, namespaced: true, verbs: ['list', 'watch'], preferred: true, ...extra });
const SERVED: DiscoveredResource[] = [
  r('', 'configmaps', 'ConfigMap', { shortNames: ['cm'] }),
  r('', 'events', 'Event', { shortNames: ['ev'] }),
  r('events.k8s.io', 'events', 'Event', { shortNames: ['ev'] }),
  r('apps', 'deployments', 'Deployment', { shortNames: ['deploy'] }),
  r('shop.example.io', 'orders', 'Order', { shortNames: ['ord'] }),
  r('shop.example.io', 'orders', 'Order', { version: 'v1beta1', preferred: false }),
  r('a.example.io', 'widgets', 'Widget'),
  r('b.example.io', 'widgets', 'Widget'),
];
const resolved = (given: string) => {
  const x = resolveResource(SERVED, given, '--resource');
  return `${x.resource}${x.group ? '.' + x.group : ''}/${x.version}`;
};

test('--resource: a bare plural, kind, singular or short name resolves when one API group serves it; the core group first; ambiguity and "not served" are usage errors', () => {
  assert.equal(resolved('orders'), 'orders.shop.example.io/v1', 'a bare plural, in its preferred version');
  assert.equal(resolved('order'), 'orders.shop.example.io/v1', 'the singular (the kind in lower case)');
  assert.equal(resolved('ord'), 'orders.shop.example.io/v1', 'a short name');
  assert.equal(resolved('deploy'), 'deployments.apps/v1');
  assert.equal(resolved('orders.shop.example.io'), 'orders.shop.example.io/v1');
  assert.equal(resolved('order.shop.example.io'), 'orders.shop.example.io/v1', 'kind.group');
  assert.equal(resolved('events'), 'events/v1', 'the core group wins, as with kubectl');
  assert.equal(resolved('cm'), 'configmaps/v1');
  const fails = (given: string, re: RegExp) => assert.throws(() => resolveResource(SERVED, given, '--resource'), (e: unknown) => e instanceof UsageError && re.test(e.message), `${given}: ${re}`);
  fails('widgets', /^--resource widgets is ambiguous: 2 API groups serve it \(widgets\.a\.example\.io, widgets\.b\.example\.io\); name one with its group, e.g\. --resource widgets\.a\.example\.io$/);
  fails('orderz.shop.example.io', /the cluster does not serve orderz\.shop\.example\.io: API group shop\.example\.io serves orders \(did you mean --resource orders\.shop\.example\.io\?\)$/);
  fails('orders.other.example.io', /^the cluster does not serve orders\.other\.example\.io; did you mean --resource orders\.shop\.example\.io\?$/);
  fails('ponds.nowhere.example.org', /no API group nowhere\.example\.org is served/);
  fails('configmapz', /^the cluster does not serve configmapz \(did you mean --resource configmaps\?\)$/);
  fails('ordrs', /^the cluster does not serve ordrs \(did you mean --resource orders\.shop\.example\.io\?\)$/);
  fails('widgts', /^the cluster does not serve widgts \(did you mean --resource widgets\.a\.example\.io or --resource widgets\.b\.example\.io\?\)$/);
  fails('zzzzzz', /^the cluster does not serve zzzzzz$/);
  assert.throws(() => resolveResource(SERVED, 'secretz', '--owns'), (e: unknown) => e instanceof UsageError && /^the cluster does not serve secretz/.test(e.message));
  assert.throws(() => resolveResource(SERVED, 'orderz.shop.example.io', '--owns'), /did you mean --owns orders\.shop\.example\.io\?/);
});

test('no --resource with an exec or module reconciler on a cluster without the lab\'s Widgets: told to name its own resource, not to install the lab\'s CRD', () => {
  const parsed = (argv: string[]) => {
    const a = parseCliArgs(argv);
    assert.ok(a !== 'help');
    return a;
  };
  const NO_WIDGETS = SERVED.filter((x) => x.resource !== 'widgets');
  for (const [spec, who] of [['module:./reconciler.ts', 'the module'], ['exec:./reconcile.sh', 'the program']] as const) {
    assert.throws(() => resolvePrimary(NO_WIDGETS, parsed(['run', '--reconciler', spec])), (e: unknown) =>
      e instanceof UsageError && e.message === `no --resource: name the resource ${who} reconciles, --resource <plural.group> (this cluster serves orders.shop.example.io). The default, widgets.lab.reconcile.dev, is the built-in lab reconciler's, and this cluster does not serve it` || assert.fail((e as Error).message));
  }
  // The lab reconciler is told to install its CRD, as before; a --resource given is resolved as given.
  assert.throws(() => resolvePrimary(NO_WIDGETS, parsed(['run'])), /the cluster does not serve widgets\.lab\.reconcile\.dev \(install it: kubectl apply -f samples\/crd\.yaml\)$/);
  assert.throws(() => resolvePrimary(NO_WIDGETS, parsed(['run', '--reconciler', 'module:./r.ts', '--resource', 'orderz.shop.example.io'])), /the cluster does not serve orderz\.shop\.example\.io: API group shop\.example\.io serves orders/);
  assert.equal(resolvePrimary(NO_WIDGETS, parsed(['step', 'shop/o1', '--reconciler', 'module:./r.ts', '--resource', 'orders'])).resource, 'orders');
});

test('run / step own ConfigMaps for every built-in reconciler (not when the primary is ConfigMaps) and every --owns, each once', () => {
  const ids = (xs: ReturnType<typeof ownedResources>) => xs.map((x) => (x.group ? `${x.resource}.${x.group}` : x.resource));
  const orders = SERVED[4]!;
  const cms = SERVED[0]!;
  const deployments = SERVED[3]!;
  assert.deepEqual(ids(ownedResources({ resource: orders, owned: [] })), ['configmaps']);
  assert.deepEqual(ids(ownedResources({ resource: orders, owned: [deployments, cms, deployments] })), ['configmaps', 'deployments.apps']);
  assert.deepEqual(ids(ownedResources({ resource: cms, owned: [] })), [], 'the primary\'s own informer watches ConfigMaps');
  assert.deepEqual(ids(ownedResources({ resource: cms, owned: [deployments] })), ['deployments.apps']);
});
