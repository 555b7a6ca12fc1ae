import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copiesFromSetting, isLocalConnection, reproduceFlagsOf, shellQuote } from '../../../src/host/checks/cluster.ts';

describe('robustness checks: which cluster is local', () => {
  it('the control plane this window started is local whatever its address', () => {
    assert.equal(isLocalConnection('anything', 'https://10.0.0.1:6443', true), true);
  });
  it('as the CLI: the project cluster name on a loopback server is local; a kind cluster or a remote one is not', () => {
    assert.equal(isLocalConnection('reconcile-lab', 'https://127.0.0.1:41234', false), true);
    assert.equal(isLocalConnection('reconcile-lab', 'https://localhost:41234', false), true);
    assert.equal(isLocalConnection('kind-dev', 'https://127.0.0.1:41234', false), false);
    assert.equal(isLocalConnection(undefined, 'https://127.0.0.1:41234', false), false);
    assert.equal(isLocalConnection('reconcile-lab', 'https://prod.example.com:6443', false), false);
    assert.equal(isLocalConnection('reconcile-lab', 'not a url', false), false);
  });
});

describe('robustness checks: reproduce flags', () => {
  it('quotes what a shell would split or expand', () => {
    assert.equal(shellQuote('samples/buggy/x.ts'), 'samples/buggy/x.ts');
    assert.equal(shellQuote('exec:./r.sh --flag'), `'exec:./r.sh --flag'`);
    assert.equal(shellQuote(`it's $(rm -rf)`), `'it'\\''s $(rm -rf)'`);
  });
  it('names the reconciler, resource, kubeconfig and context', () => {
    const recipe = { spec: { kind: 'module' as const, path: '/w/samples/x.ts' }, flag: 'module:samples/x.ts', create: () => ({ name: 'x', reconcile: async () => ({}) }) };
    assert.equal(
      reproduceFlagsOf(recipe, 'widgets.lab.reconcile.dev', '/tmp/kube config', 'reconcile-lab'),
      `--resource widgets.lab.reconcile.dev --reconciler module:samples/x.ts --kubeconfig '/tmp/kube config' --context reconcile-lab`,
    );
  });
  it('carries the checks.copy setting as --copy flags; a bad entry of the setting is an error naming the setting', () => {
    const recipe = { spec: { kind: 'lab' as const }, flag: 'lab', create: () => ({ name: 'x', reconcile: async () => ({}) }) };
    const copies = copiesFromSetting(['secret/db-creds', ' cm/settings ']);
    assert.deepEqual(copies, [{ kind: 'Secret', name: 'db-creds', spec: 'secret/db-creds' }, { kind: 'ConfigMap', name: 'settings', spec: 'cm/settings' }]);
    assert.equal(reproduceFlagsOf(recipe, 'widgets.lab.reconcile.dev', undefined, 'reconcile-lab', [], copies.map((c) => c.spec)), '--resource widgets.lab.reconcile.dev --context reconcile-lab --copy secret/db-creds --copy cm/settings');
    assert.throws(() => copiesFromSetting(['secret/ok', 'service/web']), /^Error: The setting reconcileLab\.checks\.copy: "service\/web": only Secrets and ConfigMaps are copied/);
    assert.throws(() => copiesFromSetting([42]), /The setting reconcileLab\.checks\.copy has 42: each entry is a text/);
  });
  it('a Go controller is reproduced with --go and its command line', () => {
    const recipe = { spec: { kind: 'go' as const, command: ['go', 'run', './cmd', '--leader-elect=false'] }, flag: 'go:go run ./cmd --leader-elect=false', create: () => ({ name: 'x', reconcile: async () => ({}) }) };
    assert.equal(reproduceFlagsOf(recipe, 'widgets.lab.reconcile.dev', undefined, 'reconcile-lab'), `--resource widgets.lab.reconcile.dev --go 'go run ./cmd --leader-elect=false' --context reconcile-lab`);
  });
  it('carries the loop\'s reconcile deadline (the setting or a module\'s export), which the checks\' runs apply, as --reconcile-timeout; none when there is none', () => {
    const create = () => ({ name: 'x', reconcile: async () => ({}) });
    const exec = { spec: { kind: 'exec' as const, command: ['./r.sh'] }, flag: 'exec:./r.sh', create };
    assert.equal(reproduceFlagsOf({ ...exec, reconcileTimeoutMs: 2500 }, 'gadgets.acme.example.io', undefined, 'kind-dev'), '--resource gadgets.acme.example.io --reconciler exec:./r.sh --context kind-dev --reconcile-timeout 2.5');
    assert.equal(reproduceFlagsOf({ ...exec, reconcileTimeoutMs: 0 }, 'gadgets.acme.example.io', undefined, 'kind-dev'), '--resource gadgets.acme.example.io --reconciler exec:./r.sh --context kind-dev');
  });
  it('carries the loop\'s predicate setting, so a finding that depends on a predicate reproduces', () => {
    const recipe = { spec: { kind: 'exec' as const, command: ['./r.sh'] }, flag: 'exec:./r.sh', predicateSpecs: ['generation-changed', 'label-selector=team=a b'], create: () => ({ name: 'x', reconcile: async () => ({}) }) };
    assert.equal(
      reproduceFlagsOf(recipe, 'gadgets.acme.example.io', undefined, 'kind-dev'),
      `--resource gadgets.acme.example.io --reconciler exec:./r.sh --context kind-dev --predicate generation-changed --predicate 'label-selector=team=a b'`,
    );
  });
});
