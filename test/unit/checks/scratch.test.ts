import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isScratchObject, notScratchCopies, SCRATCH_LABEL } from '../../../src/core/checks/scratch.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';

const obj = (namespace: string | undefined, labels?: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', ...(namespace ? { namespace } : {}), ...(labels ? { labels } : {}) } });

test("the checks' scratch copies are told apart: a scratch namespace's objects, and what carries the scratch label", () => {
  assert.equal(isScratchObject(obj('rl-check-0a1b2c3d')), true);
  assert.equal(isScratchObject(obj(undefined, { [SCRATCH_LABEL]: 'rl-check-0a1b2c3d' })), true, 'a cluster-scoped copy');
  assert.equal(isScratchObject(obj('shop')), false);
  assert.equal(isScratchObject(obj('rl-checkout')), false, 'a name that only starts alike');
  assert.equal(isScratchObject(obj(undefined)), false);
  const p = notScratchCopies();
  assert.equal(p.create({ object: obj('rl-check-0a1b2c3d'), isInInitialList: false }), false);
  assert.equal(p.update({ objectOld: obj('rl-check-0a1b2c3d'), objectNew: obj('rl-check-0a1b2c3d'), isResync: false }), false);
  assert.equal(p.delete({ object: obj('rl-check-0a1b2c3d'), deleteStateUnknown: false }), false);
  assert.equal(p.create({ object: obj('shop'), isInInitialList: true }), true);
  assert.equal(p.update({ objectOld: obj('shop'), objectNew: obj('shop'), isResync: false }), true);
  assert.equal(p.delete({ object: obj('shop'), deleteStateUnknown: false }), true);
});
