import { test } from 'node:test';
import assert from 'node:assert/strict';
import { revertedPaths, revertedText } from '../../../src/core/checks/runChecks.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';

const obj = (spec: unknown, annotations?: Record<string, string>): KubeObject => ({ apiVersion: 'acme.example.io/v1', kind: 'Tenant', metadata: { name: 't', ...(annotations ? { annotations } : {}) }, spec } as KubeObject);

test('revertedPaths: a field the person set that the controller put back is reported with both values', () => {
  const transitions = [{ spec: { plan: 'silver' } }];
  assert.deepEqual(revertedPaths(transitions, [obj({ owner: 'a', plan: 'silver' })], obj({ owner: 'a', plan: 'gold' })), [{ path: 'spec.plan', wanted: 'silver', actual: 'gold' }]);
  assert.deepEqual(revertedPaths(transitions, [obj({ owner: 'a', plan: 'silver' })], obj({ owner: 'a', plan: 'silver' })), [], 'kept: nothing to report');
});

test('revertedPaths: the stored value counts (a pruned or defaulted field is not the controller\'s doing); removals; status ignored; the later transition wins', () => {
  // The schema pruned spec.unknown: the server stored nothing, and nothing is there at the end.
  assert.deepEqual(revertedPaths([{ spec: { unknown: 1 } }], [obj({})], obj({})), []);
  // An annotation added, then removed: it must be absent at the end.
  const add = { metadata: { annotations: { x: 'true' } } };
  const remove = { metadata: { annotations: { x: null } } };
  assert.deepEqual(revertedPaths([add, remove], [obj({}, { x: 'true' }), obj({})], obj({})), []);
  assert.deepEqual(revertedPaths([add, remove], [obj({}, { x: 'true' }), obj({})], obj({}, { x: 'true' })), [{ path: 'metadata.annotations.x', wanted: undefined, actual: 'true' }]);
  // A status in a transition is not the person's desired state.
  assert.deepEqual(revertedPaths([{ status: { phase: 'x' } }], [obj({})], obj({})), []);
  // The controller changed spec.plan between two transitions; the second one set it again and it stayed.
  assert.deepEqual(revertedPaths([{ spec: { plan: 'silver' } }, { spec: { plan: 'bronze' } }], [obj({ plan: 'silver' }), obj({ plan: 'bronze' })], obj({ plan: 'bronze' })), []);
});

test('revertedText: a Secret\'s data, stringData and last-applied values print as *** (paths stay); other objects print both values', () => {
  const undone = [
    { path: 'data.password', wanted: 'c2VjcmV0', actual: 'b2xk' },
    { path: 'stringData.token', wanted: 'hunter2', actual: undefined },
    { path: 'metadata.annotations.kubectl.kubernetes.io/last-applied-configuration', wanted: '{"data":{"password":"c2VjcmV0"}}', actual: 'x' },
    { path: 'metadata.labels.tier', wanted: 'gold', actual: 'silver' },
  ];
  const secret = revertedText(undone, true);
  for (const value of ['c2VjcmV0', 'b2xk', 'hunter2']) assert.ok(!secret.includes(value), `${value} printed: ${secret}`);
  assert.match(secret, /data\.password = \*\*\* instead of \*\*\*/);
  assert.match(secret, /stringData\.token = \(absent\) instead of \*\*\*/);
  assert.match(secret, /metadata\.labels\.tier = "silver" instead of "gold"/, 'a label is no Secret value');
  assert.match(revertedText(undone, false), /data\.password = "b2xk" instead of "c2VjcmV0"/);
  assert.equal(revertedText([...undone, { path: 'spec.a', wanted: 1, actual: 2 }], false).endsWith('; …'), true, 'more than four: cut');
});
