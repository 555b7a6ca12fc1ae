import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compareEndStates, differingPaths, endStateDiff, normalizeEndState, type EndState } from '../../../src/core/checks/mask.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';

function widget(ns: string, uid: string, rv: string, status: Record<string, unknown>): KubeObject {
  return { apiVersion: 'lab.reconcile.dev/v1alpha1', kind: 'Widget', metadata: { name: 'w', namespace: ns, uid, resourceVersion: rv, creationTimestamp: '2026-01-01T00:00:00Z', generation: 1 }, spec: { data: { a: '1' } }, status };
}
function cm(ns: string, name: string, ownerUid: string, rv: string, extra: Record<string, unknown> = {}, generateName?: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, uid: `uid-${name}`, resourceVersion: rv, creationTimestamp: `2026-01-01T00:00:0${rv.slice(-1)}Z`, ...(generateName ? { generateName } : {}), ownerReferences: [{ apiVersion: 'x/v1', kind: 'Widget', name: 'w', uid: ownerUid, controller: true }] }, data: { a: '1', ...extra } };
}

describe('end-state masking', () => {
  test('two runs in different namespaces with different uids, rvs, timestamps and generated names compare equal', () => {
    const a = normalizeEndState({ namespace: 'rl-check-aaaa', objects: [
      { resource: 'widgets.lab', object: widget('rl-check-aaaa', 'u1', '10', { childName: 'w-x7f2q', conditions: [{ type: 'Ready', lastTransitionTime: '2026-03-01T10:00:00Z' }] }) },
      { resource: 'configmaps', object: cm('rl-check-aaaa', 'w-x7f2q', 'u1', '11', {}, 'w-') },
    ] });
    const b = normalizeEndState({ namespace: 'rl-check-bbbb', objects: [
      { resource: 'widgets.lab', object: widget('rl-check-bbbb', 'u2', '20', { childName: 'w-k9zzz', conditions: [{ type: 'Ready', lastTransitionTime: '2026-03-01T11:11:11Z' }] }) },
      { resource: 'configmaps', object: cm('rl-check-bbbb', 'w-k9zzz', 'u2', '21', {}, 'w-') },
    ] });
    assert.deepEqual(differingPaths(a, b), new Set());
    assert.deepEqual(Object.keys(a).sort(), ['configmaps/w-<generated #1>', 'widgets.lab/w']);
    assert.equal((a['widgets.lab/w'] as { status: { childName: string } }).status.childName, 'w-<generated #1>');
  });

  test('a field that differs between the references is learned and masked; other differences are reported with a diff', () => {
    const run = (ns: string, nonce: string, extraCm: boolean, data = '1') => normalizeEndState({ namespace: ns, objects: [
      { resource: 'configmaps', object: cm(ns, 'w-config', 'u', '1', { nonce, a: data }) },
      ...(extraCm ? [{ resource: 'configmaps', object: cm(ns, 'w-extra', 'u', '2') }] : []),
    ] });
    const learned = differingPaths(run('n1', 'abc', false), run('n2', 'def', false));
    assert.deepEqual([...learned], ['configmaps/w-config::data.nonce']);
    assert.deepEqual(compareEndStates(run('n1', 'abc', false), run('n3', 'zzz', false), learned), []);
    const diffs = compareEndStates(run('n1', 'abc', false), run('n3', 'zzz', true, '2'), learned);
    assert.deepEqual(diffs, ['configmaps/w-config: data.a: "1" in the reference, "2" after the perturbation', 'configmaps/w-extra: exists only in the perturbed run']);
    const d = endStateDiff(run('n1', 'abc', false), run('n3', 'zzz', true, '2'), learned);
    assert.match(d, /-\s+a: "1"/);
    assert.match(d, /\+\s+a: "2"/);
    assert.match(d, /configmaps\/w-extra/);
  });
  test('a cluster-scoped copy, named <scratch-ns>-<name>, has the same key in every run', () => {
    const policy = (ns: string, uid: string): KubeObject => ({ apiVersion: 'sec.example.org/v1', kind: 'Policy', metadata: { name: `${ns}-allow.egress-to-db.v2`, uid, resourceVersion: '5', labels: { 'checks.reconcile-lab.dev/scratch': ns } }, spec: { level: 3 } });
    const a = normalizeEndState({ namespace: 'rl-check-aaaa', objects: [{ resource: 'policies.sec.example.org', object: policy('rl-check-aaaa', 'u1') }] });
    const b = normalizeEndState({ namespace: 'rl-check-bbbb', objects: [{ resource: 'policies.sec.example.org', object: policy('rl-check-bbbb', 'u2') }] });
    assert.deepEqual(Object.keys(a), ['policies.sec.example.org/<scratch-ns>-allow.egress-to-db.v2']);
    assert.deepEqual(differingPaths(a, b), new Set());
    assert.deepEqual(compareEndStates(a, b, new Set()), []);
  });
});

test('compareEndStates: a Secret\'s data, stringData and last-applied values print as *** (the path says what differs); other values print as JSON', () => {
  const secret = (password: string, note: string) => ({
    apiVersion: 'v1', kind: 'Secret', type: 'Opaque',
    metadata: { name: 's', labels: { tier: note }, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': `{"data":{"password":"${password}"}}` } },
    data: { password }, stringData: { token: `${password}-token` },
  });
  const cm = (v: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { v } });
  const a = { 'secrets/s': secret('c2VjcmV0', 'gold'), 'configmaps/c': cm('one') } as unknown as EndState;
  const b = { 'secrets/s': secret('b3RoZXI=', 'silver'), 'configmaps/c': cm('two') } as unknown as EndState;
  const diffs = compareEndStates(a, b, new Set()).join('\n');
  for (const value of ['c2VjcmV0', 'b3RoZXI=']) assert.ok(!diffs.includes(value), `${value} printed:\n${diffs}`);
  assert.match(diffs, /secrets\/s: data\.password: \*\*\* in the reference, \*\*\* after the perturbation/);
  assert.match(diffs, /secrets\/s: stringData\.token: \*\*\*/);
  assert.match(diffs, /secrets\/s: metadata\.labels\.tier: "gold" in the reference, "silver"/);
  assert.match(diffs, /configmaps\/c: data\.v: "one" in the reference, "two"/);
});
