// Install CRD… against the real kube-apiserver: a manifest from the workspace is applied server-side and waited for
// until the server serves it; applying it again updates the CRD to the file; a manifest the server refuses and one
// whose names another CRD of the group already uses give a clear error and change nothing else.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { getTestCluster, uniqueName, type TestCluster } from './support/cluster.ts';
import { CRD_RESOURCE, crdsInText, installCrd, type CrdManifest } from '../../src/core/k8s/crdManifests.ts';
import { createDynamicClient, type DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import { realClock } from '../../src/core/clock.ts';

function manifest(group: string, kind: string, plural: string, versions: Array<{ name: string; served: boolean; storage: boolean }>, schemaType = 'object'): CrdManifest {
  const text = JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}`, annotations: { 'controller-gen.kubebuilder.io/version': 'v0.20.1' } },
    spec: {
      group,
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      scope: 'Namespaced',
      versions: versions.map((v) => ({ ...v, schema: { openAPIV3Schema: { type: schemaType, 'x-kubernetes-preserve-unknown-fields': true } }, subresources: { status: {} } })),
    },
    status: { acceptedNames: { kind: '', plural: '' }, conditions: [], storedVersions: [] },
  });
  const found = crdsInText(`/project/config/crd/bases/${group}_${plural}.yaml`, text);
  assert.equal(found.length, 1);
  return found[0]!;
}

describe('installing a CustomResourceDefinition from a manifest', () => {
  let c: TestCluster;
  let client: DynamicKubeClient;
  const group = `${uniqueName('shop')}.example.org`;
  before(async () => {
    c = await getTestCluster();
    client = createDynamicClient(c.transport, { fieldManager: 'reconcile-lab' });
  });

  test('created, Established and served when it resolves; applied again it is updated to the file', async () => {
    const m = manifest(group, 'Shelf', 'shelves', [{ name: 'v1alpha1', served: true, storage: true }]);
    const r = await installCrd(m, { client, clock: realClock, fieldManager: 'reconcile-lab' });
    assert.deepEqual(r, { name: `shelves.${group}`, created: true, servedVersions: ['v1alpha1'] });
    // Served at once: a list and a create of the new kind answer (what a program started now finds).
    const gvr = { group, version: 'v1alpha1', resource: 'shelves' };
    assert.deepEqual((await client.list(gvr, 'default')).items, []);
    await client.create(gvr, { apiVersion: `${group}/v1alpha1`, kind: 'Shelf', metadata: { name: 's1', namespace: 'default' }, spec: { rows: 3 } });
    const crd = await client.get(CRD_RESOURCE, undefined, m.name);
    assert.ok((crd.metadata.managedFields ?? []).some((f) => f.manager === 'reconcile-lab' && f.operation === 'Apply'), 'applied server-side under the extension\'s field manager');

    // The file gains a version: applying it again updates the CRD (as make install would); the object is kept.
    const m2 = manifest(group, 'Shelf', 'shelves', [{ name: 'v1alpha1', served: true, storage: true }, { name: 'v1beta1', served: true, storage: false }]);
    const r2 = await installCrd(m2, { client, clock: realClock, fieldManager: 'reconcile-lab' });
    assert.equal(r2.created, false);
    assert.deepEqual([...r2.servedVersions].sort(), ['v1alpha1', 'v1beta1']);
    assert.equal((await client.get({ group, version: 'v1beta1', resource: 'shelves' }, 'default', 's1')).metadata.name, 's1');
  });

  test('a manifest the server refuses: a clear error naming the CRD and the file; nothing is stored', async () => {
    const m = manifest(group, 'Crate', 'crates', [{ name: 'v1', served: true, storage: true }], 'no-such-type');
    await assert.rejects(installCrd(m, { client, clock: realClock, fieldManager: 'reconcile-lab' }), (e: Error) => {
      assert.match(e.message, new RegExp(`^the server refused CustomResourceDefinition crates\\.${group.replace(/\./g, '\\.')} from /project/config/crd/bases/${group.replace(/\./g, '\\.')}_crates\\.yaml: .*no-such-type`));
      return true;
    });
    await assert.rejects(client.get(CRD_RESOURCE, undefined, `crates.${group}`), /not found/i);
  });

  test('a kind another CRD of the group already has: stored, but the error says its names were not accepted', async () => {
    // shelves.<group> (above) owns kind Shelf; a second CRD naming the same kind under another plural is refused its names.
    const m = manifest(group, 'Shelf', 'shelfs', [{ name: 'v1', served: true, storage: true }]);
    await assert.rejects(installCrd(m, { client, clock: realClock, fieldManager: 'reconcile-lab', timeoutMs: 20_000 }), (e: Error) => {
      assert.match(e.message, new RegExp(`^CustomResourceDefinition shelfs\\.${group.replace(/\./g, '\\.')} was stored but its names were not accepted: .*Shelf`));
      return true;
    });
  });
});
