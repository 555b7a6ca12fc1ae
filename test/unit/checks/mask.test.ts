import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compareEndStates, differingPaths, endStateDiff, learnGeneratedNames, normalizeEndState, type EndState, type RawEndState } from '../../../src/core/checks/mask.ts';
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
  test('metadata.generation tells the path, not the state: a Deployment created and then updated when the spec changed equals one created with the final spec (an observedGeneration that caught up reads the same; a lagging one does not)', () => {
    const deployment = (ns: string, generation: number, observedGeneration: number, conditionGeneration: number): KubeObject => ({
      apiVersion: 'apps/v1', kind: 'Deployment',
      metadata: { name: 'kettle-k1', namespace: ns, uid: `u-${ns}`, resourceVersion: String(generation), generation },
      spec: { replicas: 4 },
      status: { observedGeneration, conditions: [{ type: 'Available', status: 'True', observedGeneration: conditionGeneration }] },
    } as unknown as KubeObject);
    const end = (ns: string, d: KubeObject) => normalizeEndState({ namespace: ns, objects: [{ resource: 'deployments.apps', object: d }] });
    const fresh = end('rl-check-fresh', deployment('rl-check-fresh', 1, 1, 1));
    const path = end('rl-check-path', deployment('rl-check-path', 2, 2, 2));
    assert.deepEqual(compareEndStates(fresh, path, new Set()), []);
    const lagging = end('rl-check-lag', deployment('rl-check-lag', 2, 1, 2));
    assert.deepEqual(compareEndStates(fresh, lagging, new Set()), ['deployments.apps/kettle-k1: status.observedGeneration: the object\'s metadata.generation in the reference, 1 after the perturbation']);
    // A primary whose spec a check changed equally in both runs compares as before.
    assert.deepEqual(compareEndStates(end('rl-check-a', widget('rl-check-a', 'u1', '5', {})), end('rl-check-b', widget('rl-check-b', 'u2', '9', {})), new Set()), []);
    // The marker is not rewritten by the scratch-namespace replacement, whatever the namespace is called.
    assert.equal((end('a', deployment('a', 3, 3, 3))['deployments.apps/kettle-k1'] as KubeObject).metadata.generation as unknown, '<metadata.generation>');
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

describe('names a reconciler makes unique itself (not generateName)', () => {
  // A reconciler that names its child `<owner>-job-<5 random characters>` and records it in status, plus a child with a
  // fixed name; more suffixes add more random children (the leak a crash between the create and the status write makes).
  const run = (ns: string, owner: string, suffixes: string[], fixedData = '1'): RawEndState => ({ namespace: ns, objects: [
    { resource: 'widgets.lab', object: widget(ns, owner, '10', { childName: `w-job-${suffixes[0]}` }) },
    { resource: 'configmaps', object: cm(ns, 'w-config', owner, '1', { a: fixedData }) },
    ...suffixes.map((x, i) => ({ resource: 'configmaps', object: cm(ns, `w-job-${x}`, owner, String(2 + i)) })),
  ] });

  test('learned from the two reference runs: their random endings are numbered in creation order and the runs compare equal', () => {
    const r1 = run('rl-check-aaaa', 'u1', ['x7f2q']);
    const r2 = run('rl-check-bbbb', 'u2', ['k9zzb']);
    assert.ok(differingPaths(normalizeEndState(r1), normalizeEndState(r2)).size > 0, 'without rules the two runs differ');
    const rules = learnGeneratedNames(r1, r2);
    assert.deepEqual(rules, [{ resource: 'configmaps', prefix: 'w-job-', length: 5 }]);
    const a = normalizeEndState(r1, rules);
    const b = normalizeEndState(r2, rules);
    assert.deepEqual(differingPaths(a, b), new Set());
    assert.deepEqual(Object.keys(a).sort(), ['configmaps/w-config', 'configmaps/w-job-<random #1>', 'widgets.lab/w']);
    assert.equal((a['widgets.lab/w'] as { status: { childName: string } }).status.childName, 'w-job-<random #1>', 'the name is replaced where the status records it');
  });

  test('a leaked second child is still a difference, and a changed fixed child too', () => {
    const rules = learnGeneratedNames(run('n1', 'u1', ['x7f2q']), run('n2', 'u2', ['k9zzb']));
    const reference = normalizeEndState(run('n1', 'u1', ['x7f2q']), rules);
    const leaked = normalizeEndState(run('n3', 'u3', ['p2m4t', 'q8r8s'], '2'), rules);
    assert.deepEqual(compareEndStates(reference, leaked, new Set()), [
      'configmaps/w-config: data.a: "1" in the reference, "2" after the perturbation',
      'configmaps/w-job-<random #2>: exists only in the perturbed run',
    ]);
  });

  test('two runs of a deterministic reconciler learn nothing; short differences (a counter) and other lengths are not names', () => {
    assert.deepEqual(learnGeneratedNames(run('n1', 'u1', ['abcde']), run('n2', 'u2', ['abcde'])), []);
    const counters = (ns: string, n: string): RawEndState => ({ namespace: ns, objects: [{ resource: 'configmaps', object: cm(ns, `w-v${n}`, 'u', '1') }] });
    assert.deepEqual(learnGeneratedNames(counters('n1', '1'), counters('n2', '2')), [], 'w-v1 / w-v2: one character');
    const lengths = (ns: string, x: string): RawEndState => ({ namespace: ns, objects: [{ resource: 'configmaps', object: cm(ns, `w-${x}`, 'u', '1') }] });
    assert.deepEqual(learnGeneratedNames(lengths('n1', 'abcdef'), lengths('n2', 'abcd')), [], 'no pair of the same length');
  });

  test('generateName objects keep their own numbering; a cluster-scoped copy\'s name is matched without its scratch namespace', () => {
    const gen = (ns: string, x: string): RawEndState => ({ namespace: ns, objects: [{ resource: 'configmaps', object: cm(ns, `w-${x}`, 'u', '1', {}, 'w-') }] });
    assert.deepEqual(learnGeneratedNames(gen('n1', 'abcde'), gen('n2', 'vwxyz')), [], 'generateName is handled as such');
    const cluster = (ns: string, x: string): RawEndState => ({ namespace: ns, objects: [{ resource: 'locks.example.org', object: { apiVersion: 'example.org/v1', kind: 'Lock', metadata: { name: `${ns}-lock-${x}`, uid: `u-${x}` } } }] });
    const rules = learnGeneratedNames(cluster('rl-check-aaaa', '7c1f9e0a'), cluster('rl-check-bbbb', '03bd44e2'));
    assert.deepEqual(rules, [{ resource: 'locks.example.org', prefix: '<scratch-ns>-lock-', length: 8 }]);
    assert.deepEqual(Object.keys(normalizeEndState(cluster('rl-check-cccc', 'ffee0011'), rules)), ['locks.example.org/<scratch-ns>-lock-<random #1>']);
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

test('normalizeEndState: a Service\'s cluster IPs and node ports, and a claim\'s bound volume, are the server\'s choice: two correct runs compare equal', async () => {
  const { normalizeEndState, differingPaths, ASSIGNED } = await import('../../../src/core/checks/mask.ts');
  const svc = (ns: string, ip: string, nodePort: number) => ({
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: ns, uid: `u-${ip}`, resourceVersion: '1' },
    spec: { type: 'NodePort', clusterIP: ip, clusterIPs: [ip], ports: [{ port: 80, nodePort }], selector: { app: 'web' } },
  });
  const headless = (ns: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'db', namespace: ns }, spec: { clusterIP: 'None', clusterIPs: ['None'] } });
  const pvc = (ns: string, vol: string) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: ns }, spec: { volumeName: vol } });
  const a = normalizeEndState({ namespace: 'rl-check-a', objects: [{ resource: 'services', object: svc('rl-check-a', '10.0.0.12', 31001) }, { resource: 'services', object: headless('rl-check-a') }, { resource: 'persistentvolumeclaims', object: pvc('rl-check-a', 'pvc-1111') }] as never });
  const b = normalizeEndState({ namespace: 'rl-check-b', objects: [{ resource: 'services', object: svc('rl-check-b', '10.0.0.77', 30555) }, { resource: 'services', object: headless('rl-check-b') }, { resource: 'persistentvolumeclaims', object: pvc('rl-check-b', 'pvc-2222') }] as never });
  assert.deepEqual([...differingPaths(a, b)], [], 'nothing differs');
  const spec = (a['services/web'] as { spec: Record<string, unknown> }).spec;
  assert.equal(spec.clusterIP, ASSIGNED);
  assert.deepEqual(spec.clusterIPs, [ASSIGNED]);
  assert.deepEqual(spec.ports, [{ port: 80, nodePort: ASSIGNED }]);
  assert.equal((a['services/db'] as { spec: Record<string, unknown> }).spec.clusterIP, 'None', 'a headless Service is the spec\'s choice, kept');
  // A field the server does not assign still tells two runs apart.
  const c = normalizeEndState({ namespace: 'rl-check-c', objects: [{ resource: 'services', object: { ...svc('rl-check-c', '10.0.0.9', 30001), spec: { ...svc('rl-check-c', '10.0.0.9', 30001).spec, selector: { app: 'other' } } } }] as never });
  assert.ok([...differingPaths(a, c)].some((p) => p.includes('selector')), [...differingPaths(a, c)].join(', '));
});
