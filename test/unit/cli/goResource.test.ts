import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { unservedResourceMessage } from '../../../src/cli/cli.ts';

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
