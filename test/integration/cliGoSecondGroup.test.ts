// CLI --go on a program with two API groups, one of whose CRDs is not installed (a kubebuilder project after
// applying only the CRD the first run named): the other controller's missing kind is said at once, not when
// controller-runtime's cache sync timeout stops the whole program two minutes later.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { getTestCluster, installCrd, testCrd, uniqueName, type TestCluster } from './support/cluster.ts';
import { buildGoProgram, haveGo } from './support/goSample.ts';
import { runCliUntil } from './support/cli.ts';
import { client as makeClient, ROOT } from './reconcilers.support.ts';
import { CRD_RESOURCE } from '../../src/core/k8s/crdManifests.ts';

describe('CLI --go: a second API group whose CRD is not installed', { skip: !haveGo() && 'go is not installed' }, () => {
  let cluster: TestCluster;
  let group: string;
  let bin: string;

  before(async () => {
    cluster = await getTestCluster();
    group = `${uniqueName('second')}.h3.example.org`;
    await installCrd(cluster.transport, testCrd({ group, kind: 'Shop', plural: 'shops' }));
    bin = buildGoProgram(join(ROOT, 'test/fixtures/go-secret-hash'), 'go-secret-hash');
  });

  after(async () => {
    await makeClient(cluster.transport).delete(CRD_RESOURCE, undefined, `shops.${group}`).catch(() => {});
  });

  test('run --go warns, as the other controller is announced, that its kind is not served and what to install', { timeout: 300_000 }, async () => {
    const missing = `${uniqueName('missing')}.h3.example.org`;
    // Interrupted a moment after the warning (a second one would be a repeat), not after a fixed window a slow start can miss.
    const r = await runCliUntil(['run', '--kubeconfig', cluster.kubeconfigPath, '--controller', 'shop', '--go', `${bin} --group=${group} --also-group=${missing}`], (_, err) => err.includes('warning: the Go controller shop-also') && err.includes('also runs controller shop-also'), 'the warning about shop-also', { thenMs: 2_000 });
    assert.match(r.stderr, /^reconcile-lab: the program also runs controller shop-also: its lines are labelled \[shop-also\]$/m, r.stderr);
    const warning = r.stderr.split('\n').filter((l) => l.startsWith('reconcile-lab: warning: the Go controller shop-also'));
    assert.equal(warning.length, 1, r.stderr);
    assert.equal(warning[0], `reconcile-lab: warning: the Go controller shop-also reconciles Shop (${missing}/v1), a kind the cluster does not serve (its RESTMapper found no resource for it): install its CRD (a kubebuilder project: make install, or kubectl apply -f config/crd/bases). Until then its cache waits for that kind, and controller-runtime stops the whole program when its cache sync timeout (2 minutes by default) ends.`);
  });
});
