import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { uninstalledKindMessage, unservedResourceMessage } from '../../../src/cli/cli.ts';
import type { DiscoveredResource } from '../../../src/core/k8s/discovery.ts';

test('unservedResourceMessage: a controller announcing a kind but no resource (its CRD is not installed) is told to install the CRD, not to pass --resource', () => {
  const noCrd = unservedResourceMessage('shelf', undefined, { group: 'shop.h7.example.org', version: 'v1alpha1', kind: 'Shelf' });
  assert.match(noCrd, /^the Go controller shelf reconciles Shelf \(shop\.h7\.example\.org\/v1alpha1\), a kind the cluster does not serve .*install its CRD \(a kubebuilder project: make install, or kubectl apply -f config\/crd\/bases\)/);
  assert.doesNotMatch(noCrd, /does not name the resource/);
  assert.match(unservedResourceMessage('shelf', 'shelves.shop.h7.example.org', {}), /reconciles shelves\.shop\.h7\.example\.org, which the cluster does not serve: install its CRD/);
  assert.match(unservedResourceMessage('shelf', undefined, {}), /does not name the resource it reconciles .*pass --resource/);
});

test('unservedResourceMessage: with the kind\'s manifest in the project, the file to apply is named', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-crd-'));
  try {
    mkdirSync(join(dir, 'config', 'crd', 'bases'), { recursive: true });
    const file = join(dir, 'config', 'crd', 'bases', 'shop.h7.example.org_shelves.yaml');
    writeFileSync(file, 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: shelves.shop.h7.example.org\nspec:\n  group: shop.h7.example.org\n  names:\n    kind: Shelf\n    plural: shelves\n  scope: Namespaced\n  versions:\n  - name: v1alpha1\n    served: true\n    storage: true\n');
    const m = unservedResourceMessage('shelf', undefined, { group: 'shop.h7.example.org', version: 'v1alpha1', kind: 'Shelf' }, dir);
    assert.equal(m, `the Go controller shelf reconciles Shelf (shop.h7.example.org/v1alpha1), a kind the cluster does not serve: its CRD is not installed: kubectl apply -f ${relative(process.cwd(), file)} (shelves.shop.h7.example.org; or make install in a kubebuilder project), then run again`);
    // Another kind's manifest only: the general advice.
    assert.match(unservedResourceMessage('cart', undefined, { group: 'shop.h7.example.org', version: 'v1alpha1', kind: 'Cart' }, dir), /install its CRD \(a kubebuilder project: make install, or kubectl apply -f config\/crd\/bases\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('uninstalledKindMessage: when other CRDs of the manifest\'s directory are not served either (a second API group of a kubebuilder project), the directory is named with them, as make install applies them together', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-crds-'));
  try {
    const bases = join(dir, 'config', 'crd', 'bases');
    mkdirSync(bases, { recursive: true });
    const crd = (group: string, kind: string, plural: string, scope: string) => `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ${plural}.${group}\nspec:\n  group: ${group}\n  names:\n    kind: ${kind}\n    plural: ${plural}\n  scope: ${scope}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n`;
    writeFileSync(join(bases, 'cache.k9.example.org_memcacheds.yaml'), crd('cache.k9.example.org', 'Memcached', 'memcacheds', 'Namespaced'));
    writeFileSync(join(bases, 'ops.k9.example.org_cachequotas.yaml'), crd('ops.k9.example.org', 'CacheQuota', 'cachequotas', 'Cluster'));
    const announced = { group: 'cache.k9.example.org', version: 'v1', kind: 'Memcached' };
    const quota: DiscoveredResource = { group: 'ops.k9.example.org', version: 'v1', resource: 'cachequotas', kind: 'CacheQuota', namespaced: false, verbs: ['list', 'watch'] } as DiscoveredResource;
    const both = uninstalledKindMessage('memcached', announced, dir, []);
    assert.equal(both, `the Go controller memcached reconciles Memcached (cache.k9.example.org/v1), a kind the cluster does not serve: its CRD is not installed: kubectl apply -f ${relative(process.cwd(), bases)} (memcacheds.cache.k9.example.org and the other CRDs there this cluster lacks: cachequotas.ops.k9.example.org; or make install in a kubebuilder project)`);
    // The other one served: only the kind's own file, as before.
    assert.equal(uninstalledKindMessage('memcached', announced, dir, [quota]), `the Go controller memcached reconciles Memcached (cache.k9.example.org/v1), a kind the cluster does not serve: its CRD is not installed: kubectl apply -f ${relative(process.cwd(), join(bases, 'cache.k9.example.org_memcacheds.yaml'))} (memcacheds.cache.k9.example.org; or make install in a kubebuilder project)`);
    assert.match(unservedResourceMessage('memcached', undefined, announced, dir, []), /lacks: cachequotas\.ops\.k9\.example\.org; or make install in a kubebuilder project\), then run again$/);
    // A controller that announced its resource (served) needs nothing.
    assert.equal(uninstalledKindMessage('memcached', { ...announced, resource: 'memcacheds' }, dir, []), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
