import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unservedResourceMessage } from '../../../src/cli/cli.ts';

test('unservedResourceMessage: a controller announcing a kind but no resource (its CRD is not installed) is told to install the CRD, not to pass --resource', () => {
  const noCrd = unservedResourceMessage('shelf', undefined, { group: 'shop.h7.example.org', version: 'v1alpha1', kind: 'Shelf' });
  assert.match(noCrd, /^the Go controller shelf reconciles Shelf \(shop\.h7\.example\.org\/v1alpha1\), a kind the cluster does not serve .*install its CRD \(a kubebuilder project: make install, or kubectl apply -f config\/crd\/bases\)/);
  assert.doesNotMatch(noCrd, /does not name the resource/);
  assert.match(unservedResourceMessage('shelf', 'shelves.shop.h7.example.org', {}), /reconciles shelves\.shop\.h7\.example\.org, which the cluster does not serve: install its CRD/);
  assert.match(unservedResourceMessage('shelf', undefined, {}), /does not name the resource it reconciles .*pass --resource/);
});
