// Finding a developer's CustomResourceDefinition manifests (Install CRD…, and the offer when a Go controller's kind is
// not served): the kubebuilder layout first, every document of a multi-document file, templates and other objects
// skipped, bounded and never an error for a file that is not a manifest.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crdManifestsFor, crdsInText, distinctCrds, findCrdManifests } from '../../../src/core/k8s/crdManifests.ts';

function crdYaml(o: { group: string; kind: string; plural: string; versions?: Array<[string, boolean]>; scope?: string; name?: string }): string {
  const versions = (o.versions ?? [['v1alpha1', true]]).map(([v, served]) => `  - name: ${v}\n    served: ${served}\n    storage: ${v === (o.versions ?? [['v1alpha1', true]])[0]![0]}\n    schema:\n      openAPIV3Schema:\n        type: object\n`).join('');
  return `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ${o.name ?? `${o.plural}.${o.group}`}\nspec:\n  group: ${o.group}\n  names:\n    kind: ${o.kind}\n    plural: ${o.plural}\n  scope: ${o.scope ?? 'Namespaced'}\n  versions:\n${versions}`;
}

function project(files: Record<string, string>): { dir: string; [Symbol.dispose](): void } {
  const dir = mkdtempSync(join(tmpdir(), 'crd-manifests-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return { dir, [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }) };
}

test('a kubebuilder project: config/crd/bases first, then other files; each document of a multi-document file; the rest skipped', () => {
  using p = project({
    'dist/install.yaml': `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop-system\n---\n${crdYaml({ group: 'shop.example.org', kind: 'Shelf', plural: 'shelves' })}---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: m\n`,
    'config/crd/bases/shop.example.org_shelves.yaml': `---\n${crdYaml({ group: 'shop.example.org', kind: 'Shelf', plural: 'shelves', scope: 'Cluster' })}`,
    'config/crd/bases/shop.example.org_carts.yaml': crdYaml({ group: 'shop.example.org', kind: 'Cart', plural: 'carts', versions: [['v1', true], ['v1alpha1', false]] }),
    'config/crd/kustomization.yaml': 'resources:\n- bases/shop.example.org_shelves.yaml\n',
    'charts/shop/templates/crd.yaml': `{{- if .Values.crds }}\n${crdYaml({ group: 'shop.example.org', kind: 'Shelf', plural: 'shelves' })}{{- end }}\n`,
    'charts/shop/crds/crate.yml': crdYaml({ group: 'shop.example.org', kind: 'Crate', plural: 'crates' }),
    'node_modules/x/crd.yaml': crdYaml({ group: 'npm.example.org', kind: 'Npm', plural: 'npms' }),
    'config/crd/bases/broken.yaml': 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: [unclosed\n',
    'config/crd/bases/v1beta1.yaml': crdYaml({ group: 'old.example.org', kind: 'Old', plural: 'olds' }).replace('apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'),
    'config/crd/bases/misnamed.yaml': crdYaml({ group: 'shop.example.org', kind: 'Bin', plural: 'bins', name: 'bin.shop.example.org' }),
    'README.md': 'kind: CustomResourceDefinition',
  });
  const found = findCrdManifests([p.dir]);
  assert.deepEqual(
    found.map((m) => [m.file.slice(p.dir.length + 1), m.index, m.name]),
    [
      ['config/crd/bases/shop.example.org_carts.yaml', 0, 'carts.shop.example.org'],
      ['config/crd/bases/shop.example.org_shelves.yaml', 0, 'shelves.shop.example.org'],
      ['dist/install.yaml', 1, 'shelves.shop.example.org'],
      ['charts/shop/crds/crate.yml', 0, 'crates.shop.example.org'],
    ],
  );
  const shelf = found[1]!;
  assert.equal(shelf.namespaced, false);
  assert.deepEqual(found[0]!.servedVersions, ['v1']);
  assert.equal((shelf.object.spec as { scope: string }).scope, 'Cluster', 'the document as written');

  // A Go controller's announcement: the first manifest of its kind (the kubebuilder one), a version it serves.
  assert.deepEqual(crdManifestsFor(found, { group: 'shop.example.org', kind: 'Shelf', version: 'v1alpha1' }).map((m) => m.file.slice(p.dir.length + 1)), ['config/crd/bases/shop.example.org_shelves.yaml']);
  assert.deepEqual(crdManifestsFor(found, { group: 'shop.example.org', kind: 'Cart', version: 'v1alpha1' }), [], 'a version the manifest does not serve');
  assert.deepEqual(crdManifestsFor(found, { group: 'other.example.org', kind: 'Shelf' }), []);
  assert.deepEqual(distinctCrds(found).map((m) => m.name), ['carts.shop.example.org', 'shelves.shop.example.org', 'crates.shop.example.org']);
});

test('bounded: files past the budget and too large are not read; a missing root is no error', () => {
  using p = project({
    'a/one.yaml': crdYaml({ group: 'a.example.org', kind: 'One', plural: 'ones' }),
    'b/two.yaml': crdYaml({ group: 'b.example.org', kind: 'Two', plural: 'twos' }),
  });
  assert.equal(findCrdManifests([p.dir]).length, 2);
  assert.equal(findCrdManifests([p.dir], { maxFiles: 1 }).length, 1);
  assert.equal(findCrdManifests([p.dir], { maxFileBytes: 10 }).length, 0);
  assert.equal(findCrdManifests([p.dir], { maxDepth: 0 }).length, 0);
  assert.deepEqual(findCrdManifests([join(p.dir, 'nowhere')]), []);
});

test('JSON manifests and a List are read; text that is no YAML gives nothing', () => {
  const json = JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'jays.j.example.org' }, spec: { group: 'j.example.org', names: { kind: 'Jay', plural: 'jays' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true }] } });
  assert.deepEqual(crdsInText('/x/crd.json', json).map((m) => [m.name, m.namespaced, m.servedVersions]), [['jays.j.example.org', true, ['v1']]]);
  const list = `apiVersion: v1\nkind: List\nitems:\n${crdYaml({ group: 'l.example.org', kind: 'Ell', plural: 'ells' }).replace(/^/gm, '  ').replace(/^  apiVersion/, '- apiVersion')}`;
  assert.deepEqual(crdsInText('/x/list.yaml', list).map((m) => m.name), ['ells.l.example.org']);
  assert.deepEqual(crdsInText('/x/bad.yaml', '\t: : CustomResourceDefinition ['), []);
});
