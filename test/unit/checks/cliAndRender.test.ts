import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCliArgs, UsageError } from '../../../src/cli/args.ts';
import { isLocalControlPlane } from '../../../src/core/checks/cluster.ts';
import { refusalOf } from '../../../src/core/checks/runChecks.ts';
import { redirectedNote, redirectNamespaces } from '../../../src/core/checks/harness.ts';
import { renderCheckMarkdown, renderCheckText } from '../../../src/core/checks/render.ts';
import type { CheckReport, RunChecksOptions } from '../../../src/core/checks/types.ts';

test('reconcile-lab check: flags parsed and validated', () => {
  const a = parseCliArgs(['check', 'ns/w', '--check', 'runTwice,convergence', '--check', 'staleCache', '--confirm-cluster', 'kind-dev', '--transition', '{"spec":{"data":{"m":"x"}}}', '--convergence-bound', '5', '--predicate', 'generation-changed']);
  assert.ok(a !== 'help');
  assert.deepEqual(a.checks, ['runTwice', 'convergence', 'staleCache']);
  assert.equal(a.confirmCluster, 'kind-dev');
  assert.deepEqual(a.transitions, [{ spec: { data: { m: 'x' } } }]);
  assert.equal(a.convergenceBoundMs, 5000);
  assert.throws(() => parseCliArgs(['check', '--check', 'fuzz']), (e: Error) => e instanceof UsageError && /unknown check "fuzz"/.test(e.message));
  assert.throws(() => parseCliArgs(['check', '--check', 'converge']), (e: Error) => e instanceof UsageError && /unknown check "converge" \(did you mean convergence\?\)/.test(e.message));
  assert.throws(() => parseCliArgs(['check', '--check', 'fuzz']), (e: Error) => !/did you mean/.test(e.message), 'nothing close: no guess');
  assert.throws(() => parseCliArgs(['check', '--transition', '[1]']), /must be a JSON object/);
  assert.throws(() => parseCliArgs(['report', '--check', 'runTwice']), /only applies to check/);
  const g = parseCliArgs(['check', 'ns/w', '--go', 'go run ./cmd --max-concurrent-reconciles 1']);
  assert.ok(g !== 'help');
  assert.deepEqual(g.go, ['go', 'run', './cmd', '--max-concurrent-reconciles', '1']);
  assert.throws(() => parseCliArgs(['check', '--go', 'go run .', '--reconciler', 'lab']), /choose one of --go and --reconciler/);
});

test('only the local control plane runs without confirmation', () => {
  assert.equal(isLocalControlPlane('reconcile-lab', 'https://127.0.0.1:41234'), true);
  assert.equal(isLocalControlPlane('reconcile-lab', 'https://10.0.0.5:6443'), false);
  assert.equal(isLocalControlPlane('prod', 'https://127.0.0.1:6443'), false);
  const o = { keys: ['ns/w'], cluster: { name: 'prod', local: false } } as unknown as RunChecksOptions;
  assert.match(refusalOf(o) ?? '', /--confirm-cluster prod/);
  assert.equal(refusalOf({ ...o, confirmCluster: 'prod' }), undefined);
  assert.match(refusalOf({ ...o, confirmCluster: 'other' }) ?? '', /refusing/);
});

test('a Go controller is checked on a cluster-scoped kind too (its instance sees the copy alone: RECONCILE_LAB_CHECK_CLUSTER_OBJECT)', () => {
  const base = { keys: ['deny-all'], cluster: { name: 'reconcile-lab', local: true }, reconcilerSpec: { kind: 'go', command: ['./bin/manager'] }, go: { command: ['./bin/manager'] } };
  const cluster = { ...base, primary: { group: 'sec.example.org', version: 'v1', resource: 'policies', kind: 'Policy', namespaced: false } } as unknown as RunChecksOptions;
  assert.equal(refusalOf(cluster), undefined);
  assert.match(refusalOf({ ...cluster, go: { command: [] } } as unknown as RunChecksOptions) ?? '', /no Go program to check/);
});

test('a cluster-scoped copy: namespace fields of its spec name the scratch namespace; lists and empty values are kept', () => {
  const spec = { namespace: 'team-a', targetNamespace: 'team-b', empty: { namespace: '' }, nested: [{ releaseNamespace: 'ops' }], namespaces: ['x', 'y'], namespaceSelector: { matchLabels: { a: 'b' } }, name: 'n' };
  const changed = redirectNamespaces(spec, 'rl-check-1');
  assert.deepEqual(changed, [
    { path: 'spec.namespace', from: 'team-a' },
    { path: 'spec.targetNamespace', from: 'team-b' },
    { path: 'spec.nested[0].releaseNamespace', from: 'ops' },
  ]);
  assert.deepEqual(spec, { namespace: 'rl-check-1', targetNamespace: 'rl-check-1', empty: { namespace: '' }, nested: [{ releaseNamespace: 'rl-check-1' }], namespaces: ['x', 'y'], namespaceSelector: { matchLabels: { a: 'b' } }, name: 'n' });
  assert.equal(redirectedNote('gate', []), undefined);
  assert.equal(redirectedNote('gate', changed.slice(0, 1)), "gate is cluster-scoped: in its copies spec.namespace (team-a) names the run's scratch namespace instead, so its controller writes there and never in your namespace.");
  assert.match(redirectedNote('gate', changed)!, /spec\.namespace \(team-a\), spec\.targetNamespace \(team-b\), spec\.nested\[0\]\.releaseNamespace \(ops\) name the run's scratch namespace instead, so its controller writes there and never in your namespaces\.$/);
});

test('text and Markdown renderings name the finding, its explanation, diff and reproduce line; Markdown escapes', () => {
  const f = {
    id: 'runTwice:ns/w:1', check: 'runTwice', severity: 'error', key: 'ns/w', title: 'Second reconcile created another configmaps (<b>x</b>)',
    explanation: 'Nothing changed, yet …', perturbation: { check: 'runTwice', description: 'reconciled again' }, diff: '--- a\n+++ b\n-x\n+y', writes: [{ verb: 'create', resource: 'configmaps', objectKey: 'rl/x', outcome: 'ok', diff: '' }], journal: [], reproduce: 'reconcile-lab check ns/w --check runTwice',
  } as const;
  const r: CheckReport = {
    generatedAt: '2026-01-01T00:00:00Z', resource: 'widgets.lab.reconcile.dev', reconciler: 'lab', reconcilerKind: 'lab', cluster: { name: 'reconcile-lab', local: true }, keys: ['ns/w'], checks: ['runTwice'],
    results: [{ check: 'runTwice', key: 'ns/w', status: 'failed', message: '1 write(s)', findings: [f as never], durationMs: 1200, parts: [] }], findings: [f as never], masked: [], notes: [],
    totals: { keys: 1, checks: 1, passed: 0, failed: 1, skipped: 0, errors: 0, findings: 1 }, durationMs: 2000, parts: [{ part: 'reference run 1', ms: 900 }], aborted: false,
  };
  const t = renderCheckText(r);
  assert.match(t, /^Robustness checks of widgets\.lab\.reconcile\.dev with the lab reconciler on reconcile-lab \(local control plane\);/, 'the built-in reconciler named once (it read "the lab reconciler lab")');
  assert.match(renderCheckText({ ...r, reconciler: 'samples/buggy/x.ts', reconcilerKind: 'module' }), /^Robustness checks of \S+ with the module reconciler samples\/buggy\/x\.ts on /);
  assert.match(t, /FAILED\s+Run twice/);
  assert.match(t, /reproduce: reconcile-lab check ns\/w --check runTwice/);
  assert.match(t, /\+y/);
  const m = renderCheckMarkdown(r);
  assert.doesNotMatch(m, /<b>/);
  assert.match(m, /## Error: Second reconcile created another configmaps/);
  assert.match(m, /```diff/);
});

test('a reproduce line, split as a shell splits it, parses back to the same run (transitions, predicates, bounds, kubeconfig, exec argv)', async () => {
  const { reproduceFlags } = await import('../../../src/core/checks/reproduce.ts');
  const { splitCommandLine } = await import('../../../src/core/reconcilers/commandLine.ts');
  const transitions = [{ spec: { version: 2, note: "it's" } }, { metadata: { annotations: { x: null } } }];
  const flags = reproduceFlags({
    reconciler: `exec:./my reconciler.sh --mode 'a b'`, resource: 'gadgets.acme.example.io', kubeconfig: '/tmp/kube config', context: 'dev',
    confirmCluster: 'dev', predicates: ['generation-changed', 'label-selector=team=a'], transitions, convergenceBoundMs: 7500, execTimeoutMs: 20_000,
    reconcileTimeoutMs: 1500,
  });
  const a = parseCliArgs(splitCommandLine(`check shop/g1 --check unobservedState ${flags}`));
  assert.ok(a !== 'help');
  assert.deepEqual(a.transitions, transitions);
  assert.deepEqual(a.predicates, ['generation-changed', 'label-selector=team=a']);
  assert.equal(a.convergenceBoundMs, 7500);
  assert.equal(a.execTimeoutMs, 20_000);
  assert.equal(a.reconcileTimeoutMs, 1500, 'the checks\' reconcile deadline');
  assert.equal(a.kubeconfig, '/tmp/kube config');
  assert.equal(a.context, 'dev');
  assert.equal(a.confirmCluster, 'dev');
  assert.equal(a.resource, 'gadgets.acme.example.io');
  assert.deepEqual(a.reconciler, { kind: 'exec', command: ['./my', 'reconciler.sh', '--mode', 'a b'] });
  const g = parseCliArgs(splitCommandLine(`check shop/g1 ${reproduceFlags({ go: ['go', 'run', './cmd', '--name=a b'], resource: 'gadgets.acme.example.io' })}`));
  assert.ok(g !== 'help');
  assert.deepEqual(g.go, ['go', 'run', './cmd', '--name=a b']);
});

test('text rendering: a reason several checks of a key share (the reference run failed, with the program\'s last lines) is printed once, the others point at it', () => {
  const why = 'the reference run failed: the Go controller did not queue rl-check-1/fresh within 60 s … Last output:\nline one\nline two';
  const res = (check: 'runTwice' | 'convergence' | 'deletion', key: string, message: string) => ({ check, key, status: 'error' as const, message, findings: [], durationMs: 0, parts: [] });
  const r: CheckReport = {
    generatedAt: '2026-01-01T00:00:00Z', resource: 'configmaps', reconciler: './bin/manager', reconcilerKind: 'go', cluster: { name: 'reconcile-lab', local: true }, keys: ['ns/a', 'ns/b'], checks: ['runTwice', 'convergence', 'deletion'],
    results: [res('runTwice', 'ns/a', why), res('convergence', 'ns/a', why), res('deletion', 'ns/a', 'another reason'), res('runTwice', 'ns/b', why)], findings: [], masked: [], notes: [],
    totals: { keys: 2, checks: 3, passed: 0, failed: 0, skipped: 0, errors: 4, findings: 0 }, durationMs: 2000, parts: [], aborted: false,
  };
  const t = renderCheckText(r);
  assert.equal(t.split('line two').length - 1, 2, 'once per key');
  assert.match(t, /ERROR\s+Convergence\s+the same as Run twice above \(0\.0 s\)/);
  assert.match(t, /ERROR\s+Deletion\s+another reason/);
});
