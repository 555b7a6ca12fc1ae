import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareKubeVersions, findResource, isBuiltInGroup, oneVersionPerResource, resourceInfoFromCrd, resourcesFromList, meantResourceIds, withMeantResource } from '../../../src/core/k8s/discovery.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';

test('resource lists: subresources fold into their parent; core group is ""', () => {
  const apps = resourcesFromList(
    {
      groupVersion: 'apps/v1',
      resources: [
        { name: 'deployments', kind: 'Deployment', namespaced: true, verbs: ['list', 'watch'], shortNames: ['deploy'] },
        { name: 'deployments/status', kind: 'Deployment', namespaced: true },
        { name: 'deployments/scale', kind: 'Scale', namespaced: true },
      ],
    },
    true,
  );
  assert.deepEqual(apps, [
    { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true, verbs: ['list', 'watch'], shortNames: ['deploy'], preferred: true, subresources: ['status', 'scale'] },
  ]);
  const core = resourcesFromList({ groupVersion: 'v1', resources: [{ name: 'nodes', kind: 'Node', namespaced: false }] }, true);
  assert.equal(core[0]!.group, '');
  assert.equal(core[0]!.version, 'v1');
  assert.equal(core[0]!.namespaced, false);
});

test('findResource by plural, kind or short name, preferring the preferred version', () => {
  const rs = [
    ...resourcesFromList({ groupVersion: 'lab.dev/v1beta1', resources: [{ name: 'widgets', kind: 'Widget', namespaced: true, shortNames: ['wd'] }] }, false),
    ...resourcesFromList({ groupVersion: 'lab.dev/v1', resources: [{ name: 'widgets', kind: 'Widget', namespaced: true, shortNames: ['wd'] }] }, true),
  ];
  assert.equal(findResource(rs, { group: 'lab.dev', name: 'widgets' })?.version, 'v1');
  assert.equal(findResource(rs, { group: 'lab.dev', name: 'Widget' })?.version, 'v1');
  assert.equal(findResource(rs, { group: 'lab.dev', name: 'wd', version: 'v1beta1' })?.version, 'v1beta1');
  assert.equal(findResource(rs, { group: 'other', name: 'widgets' }), undefined);
});

test('Kubernetes version priority: GA > beta > alpha, higher first, odd names last', () => {
  const vs = ['v1alpha1', 'foo', 'v2beta1', 'v1', 'v1beta2', 'v2', 'v1beta1', 'bar', 'v10alpha3'];
  assert.deepEqual([...vs].sort(compareKubeVersions), ['v2', 'v1', 'v2beta1', 'v1beta2', 'v1beta1', 'v10alpha3', 'v1alpha1', 'bar', 'foo']);
});

const crd: KubeObject = {
  metadata: { name: 'gizmos.lab.dev' },
  spec: {
    group: 'lab.dev',
    names: { plural: 'gizmos', kind: 'Gizmo' },
    scope: 'Cluster',
    versions: [
      { name: 'v1alpha1', served: true, storage: false },
      { name: 'v1', served: true, storage: true, subresources: { status: {}, scale: {} } },
      { name: 'v2', served: false, storage: false },
    ],
  },
};

test('a CRD gives its GVR: plural, kind, scope, served versions, storage version, subresources', () => {
  assert.deepEqual(resourceInfoFromCrd(crd), {
    group: 'lab.dev',
    version: 'v1',
    resource: 'gizmos',
    kind: 'Gizmo',
    namespaced: false,
    subresources: ['status', 'scale'],
    servedVersions: ['v1', 'v1alpha1'],
    storageVersion: 'v1',
  });
  assert.deepEqual(resourceInfoFromCrd(crd, 'v1alpha1').subresources, []);
  assert.throws(() => resourceInfoFromCrd(crd, 'v2'), /not served/);
  assert.throws(() => resourceInfoFromCrd({ metadata: { name: 'x' }, spec: {} }), /not a CustomResourceDefinition/);
});

test('oneVersionPerResource: the group\'s preferred version where served, else the resource\'s best version', () => {
  // One group, two CRDs at different versions: cacti make v1 the group's preferred version, octopi exist only in
  // v1beta2 (and v1alpha1). Both must be found; widgets served in both take the preferred one.
  const list = (version: string, preferred: boolean, names: string[]) =>
    resourcesFromList({ groupVersion: `ops.example.org/${version}`, resources: names.map((n) => ({ name: n, kind: n, namespaced: true, verbs: ['list', 'watch'] })) }, preferred);
  const rs = [
    ...list('v1', true, ['cacti', 'widgets']),
    ...list('v1alpha1', false, ['octopi']),
    ...list('v1beta2', false, ['octopi', 'widgets']),
    ...resourcesFromList({ groupVersion: 'ops.example.org/v1beta1', resources: [{ name: 'sealed', kind: 'Sealed', namespaced: true, verbs: ['get'] }] }, false),
  ];
  const chosen = oneVersionPerResource(rs, (r) => r.verbs.includes('list'));
  assert.deepEqual(chosen.map((r) => `${r.resource}@${r.version}`), ['cacti@v1', 'widgets@v1', 'octopi@v1beta2']);
  assert.deepEqual(oneVersionPerResource(rs).map((r) => `${r.resource}@${r.version}`), ['cacti@v1', 'widgets@v1', 'octopi@v1beta2', 'sealed@v1beta1']);
  assert.equal(findResource(rs, { group: 'ops.example.org', name: 'octopi' })?.version, 'v1beta2');
  assert.equal(findResource(rs, { group: 'ops.example.org', name: 'octopi', version: 'v1alpha1' })?.version, 'v1alpha1');
  assert.equal(findResource(rs, { group: 'ops.example.org', name: 'widgets' })?.version, 'v1');
});

test("isBuiltInGroup: Kubernetes' own API groups are built in; a CRD's or an extension API server's group is not", () => {
  for (const g of ['', 'apps', 'batch', 'autoscaling', 'policy', 'extensions', 'rbac.authorization.k8s.io', 'networking.k8s.io', 'metrics.k8s.io', 'apiextensions.k8s.io']) {
    assert.equal(isBuiltInGroup(g), true, g);
  }
  for (const g of ['lab.reconcile.dev', 'rbacwalk.example.dev', 'cert-manager.io', 'k8s.io.example.com', 'apps.example.org', 'x-k8s.io.evil']) {
    assert.equal(isBuiltInGroup(g), false, g);
  }
  // Cluster API's groups end in x-k8s.io: they are custom resources, and they are not "*.k8s.io" of Kubernetes itself.
  assert.equal(isBuiltInGroup('cluster.x-k8s.io'), false);
});

test('meantResourceIds: a resource setting written as kubectl takes it, with its version or misspelt names the served plural.group meant', () => {
  const info = (group: string, resource: string, kind: string, version = 'v1') => ({ group, version, resource, kind, namespaced: true });
  const served = [
    info('', 'configmaps', 'ConfigMap'),
    info('', 'secrets', 'Secret'),
    info('apps', 'deployments', 'Deployment'),
    info('shop.example.org', 'orders', 'Order'),
    info('shop.example.org', 'orders/status', 'Order'),
    info('shop.example.org', 'coupons', 'Coupon'),
    info('a.example.io', 'widgets', 'Widget'),
    info('b.example.io', 'widgets', 'Widget', 'v1alpha1'),
  ];
  for (const given of ['orders', 'Order', 'order', 'order.shop.example.org', 'orders.shop.example.org/v1', 'orders.v1.shop.example.org', ' Orders ']) {
    assert.deepEqual(meantResourceIds(given, served), ['orders.shop.example.org'], given);
  }
  assert.deepEqual(meantResourceIds('widgets', served), ['widgets.a.example.io', 'widgets.b.example.io'], 'two groups serve it: both named');
  assert.deepEqual(meantResourceIds('widgets.b.example.io/v1alpha1', served), ['widgets.b.example.io']);
  assert.deepEqual(meantResourceIds('orders.shop.example.com', served), ['orders.shop.example.org'], 'the same resource in another group');
  assert.deepEqual(meantResourceIds('ordres.shop.example.org', served), ['orders.shop.example.org'], 'a typo of an id');
  assert.deepEqual(meantResourceIds('configmap', served), ['configmaps']);
  assert.deepEqual(meantResourceIds('nonexistent.example.com', served), []);
  assert.equal(withMeantResource('Order', served), 'Order (did you mean orders.shop.example.org?)');
  assert.equal(withMeantResource('gizmos.nowhere.example', served), 'gizmos.nowhere.example');
});
