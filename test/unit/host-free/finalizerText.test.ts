import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { diagnoseStuck, type FinalizerDiagnosis } from '../../../src/core/actions/finalizers.ts';
import { finalizerLine, finalizerPickDetail } from '../../../src/host/commands/finalizerText.ts';

/** The diagnosis of a Terminating Widget held by a finalizer whose owner nothing in the cluster shows. */
async function unknownOwner() {
  const clock = new FakeClock(Date.parse('2026-12-02T10:00:00Z'));
  const planter = { apiVersion: 'garden.example.org/v1', kind: 'Planter', metadata: { name: 'p1', namespace: 'yard', resourceVersion: '9', deletionTimestamp: '2026-12-02T09:59:00Z', finalizers: ['irrigation.garden.example.org/drain'] } };
  const client = { get: async () => planter, list: async () => ({ items: [] }) } as unknown as Parameters<typeof diagnoseStuck>[0]['client'];
  const d = await diagnoseStuck({ client, gvr: { group: 'garden.example.org', version: 'v1', resource: 'planters' }, namespace: 'yard', name: 'p1', clock });
  return d.finalizers[0]!;
}

test('Strip Finalizers confirmation: an unknown owner\'s consequence is said once, after "if removed:", without "skip" twice', async () => {
  const f = await unknownOwner();
  const line = finalizerLine(f);
  assert.match(line, /^• irrigation\.garden\.example\.org\/drain\n {3}owner: the controller for "irrigation\.garden\.example\.org" \(cannot tell whether it runs\)\n/);
  assert.ok(
    line.endsWith('\n   if removed: "irrigation.garden.example.org" does not get to run its cleanup before deletion: external resources it manages (cloud resources, DNS records, database rows…) may be orphaned'),
    line,
  );
  assert.doesNotMatch(line, /skip/);
  assert.equal(line.match(/cleanup/g)?.length, 1, 'the cleanup is named once');
  assert.equal(finalizerPickDetail(f), `the controller for "irrigation.garden.example.org". If removed: ${f.consequence}`);
});

test('Strip Finalizers confirmation: a well-known finalizer\'s consequence reads after "if removed:" too', () => {
  const f: FinalizerDiagnosis = { finalizer: 'kubernetes.io/pv-protection', location: 'metadata', domain: 'kubernetes.io', probableOwner: 'the PV protection controller (kube-controller-manager)', addedBy: [], running: 'yes', evidence: ['Lease kube-system/kube-controller-manager (holder x) renewed 3 s ago'], consequence: 'a volume still bound to a claim may be deleted: data loss' };
  assert.equal(
    finalizerLine(f),
    [
      '• kubernetes.io/pv-protection',
      '   owner: the PV protection controller (kube-controller-manager) (appears to be running)',
      '   – Lease kube-system/kube-controller-manager (holder x) renewed 3 s ago',
      '   if removed: a volume still bound to a claim may be deleted: data loss',
    ].join('\n'),
  );
});
