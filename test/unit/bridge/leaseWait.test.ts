// leaseWait: the leader-election Lease a controller program logs it waits for (client-go's lines, in every form), and
// its holder read through a client (src/core/bridge/leaseWait.ts), shared by Run Controller…/run --go and F5.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LEASE_RECHECK_MS, leaseHolderReader, LeaseWaitReader, type LeaseHolder } from '../../../src/core/bridge/leaseWait.ts';
import { FakeClock, flushMicrotasks } from '../../fakes/fakeClock.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';

test('LeaseWaitReader: klog\'s format line, the structured forms (klog text, zap console, JSON); the last wins; forgotten once acquired', () => {
  for (const [line, lease] of [
    ['I1207 04:40:00.123456   4242 leaderelection.go:257] attempting to acquire leader lease kube-system/foo...', { namespace: 'kube-system', name: 'foo' }],
    ['I1207 04:40:00.123456   4242 leaderelection.go:258] "Attempting to acquire leader lease..." lock="system/my-op.example.com"', { namespace: 'system', name: 'my-op.example.com' }],
    ['2026-12-07T04:40:00Z\tINFO\tAttempting to acquire leader lease...\t{"lock": "system/my-op.example.com"}', { namespace: 'system', name: 'my-op.example.com' }],
    ['{"level":"info","msg":"Attempting to acquire leader lease...","lock":"system/my-op.example.com"}', { namespace: 'system', name: 'my-op.example.com' }],
  ] as const) {
    const r = new LeaseWaitReader();
    r.line('starting manager');
    assert.equal(r.lease, undefined);
    r.line(line);
    assert.deepEqual(r.lease, lease, line);
  }
  const r = new LeaseWaitReader();
  r.line('attempting to acquire leader lease a/one...');
  r.line('attempting to acquire leader lease b/two...');
  assert.deepEqual(r.lease, { namespace: 'b', name: 'two' });
  r.line('I1207 04:40:09.000000   4242 leaderelection.go:271] successfully acquired lease b/two');
  assert.equal(r.lease, undefined);
});

test('LeaseWaitReader.write: chunks split anywhere (a debug adapter\'s output events) are read by whole lines', () => {
  const r = new LeaseWaitReader();
  r.write('I1207 leaderelection.go:257] attempting to acquire leader lease default/');
  assert.equal(r.lease, undefined, 'not before its line ended');
  r.write('abc123.lab.reconcile.dev...\r\nnext');
  assert.deepEqual(r.lease, { namespace: 'default', name: 'abc123.lab.reconcile.dev' });
});

test('leaseHolderReader: spec.holderIdentity of the Lease read through the client, with how long ago it was renewed and its duration; undefined when none, or not readable; control characters never reach a message', async () => {
  const lease = (name: string, spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: 'kube-system' }, spec });
  const leases: Record<string, KubeObject> = {
    'kube-system/fresh': lease('fresh', { holderIdentity: 'laptop_1a2b3c', renewTime: '2026-12-07T14:51:51.000000Z', leaseDurationSeconds: 15 }),
    'kube-system/stopped': lease('stopped', { holderIdentity: 'vm_2bbe', renewTime: '2026-12-07T14:51:40.000000Z', leaseDurationSeconds: 15 }),
    'kube-system/skewed': lease('skewed', { holderIdentity: 'pod-x', renewTime: '2026-12-07T14:51:30.000000Z', leaseDurationSeconds: 15 }),
    'kube-system/free': lease('free', {}),
    'kube-system/odd': lease('odd', { holderIdentity: 'pod\u001b[2Jx' }),
  };
  const asked: unknown[] = [];
  const clock = new FakeClock(Date.parse('2026-12-07T14:51:52.500Z'));
  const read = leaseHolderReader(
    {
      get: async (gvr, namespace, name) => {
        asked.push([gvr.group, gvr.version, gvr.resource, namespace, name]);
        const l = leases[`${namespace}/${name}`];
        if (!l) throw new Error('leases.coordination.k8s.io "x" not found');
        return l;
      },
    },
    clock,
  );
  assert.deepEqual(await read({ namespace: 'kube-system', name: 'fresh' }), { identity: 'laptop_1a2b3c', renewedAgoMs: 1_500, durationMs: 15_000 }, 'renewed recently: read once');
  assert.deepEqual(asked, [['coordination.k8s.io', 'v1', 'leases', 'kube-system', 'fresh']]);
  assert.equal(await read({ namespace: 'kube-system', name: 'free' }), undefined);
  assert.equal(await read({ namespace: 'kube-system', name: 'gone' }), undefined, 'never rejects');
  assert.deepEqual(await read({ namespace: 'kube-system', name: 'odd' }), { identity: 'pod?[2Jx' }, 'no renewTime, no duration: the identity alone');

  // Not renewed for 12.5 s by our clock: read again after LEASE_RECHECK_MS; unchanged, it has stopped.
  asked.length = 0;
  let answer: LeaseHolder | undefined | 'pending' = 'pending';
  void read({ namespace: 'kube-system', name: 'stopped' }).then((h) => (answer = h));
  await flushMicrotasks();
  assert.equal(answer, 'pending', 'waits before the second read');
  clock.step(LEASE_RECHECK_MS);
  await flushMicrotasks();
  assert.deepEqual(answer, { identity: 'vm_2bbe', renewedAgoMs: 15_000, durationMs: 15_000 });
  assert.equal(asked.length, 2);

  // Its renewTime looks 22.5 s old (the holder's clock is behind ours), but it changed between the reads: live.
  answer = 'pending';
  void read({ namespace: 'kube-system', name: 'skewed' }).then((h) => (answer = h));
  await flushMicrotasks();
  leases['kube-system/skewed'] = lease('skewed', { holderIdentity: 'pod-x', renewTime: '2026-12-07T14:51:32.000000Z', leaseDurationSeconds: 15 });
  clock.step(LEASE_RECHECK_MS);
  await flushMicrotasks();
  assert.deepEqual(answer, { identity: 'pod-x', durationMs: 15_000 }, 'no renewedAgoMs: its holder renews it');

  // The caller ends during the wait (its run or debug session stopped): no timer is left, nothing is read again.
  leases['kube-system/skewed'] = lease('skewed', { holderIdentity: 'pod-x', renewTime: '2026-12-07T14:51:30.000000Z', leaseDurationSeconds: 15 });
  asked.length = 0;
  answer = 'pending';
  const lifetime = new AbortController();
  void read({ namespace: 'kube-system', name: 'skewed' }, lifetime.signal).then((h) => (answer = h));
  await flushMicrotasks();
  assert.equal(clock.pendingTimers, 1, 'waiting for the second read');
  lifetime.abort();
  await flushMicrotasks();
  assert.equal(answer, undefined);
  assert.equal(clock.pendingTimers, 0, 'the wait\'s timer is cleared');
  clock.step(LEASE_RECHECK_MS);
  await flushMicrotasks();
  assert.equal(asked.length, 1, 'read once');
  assert.equal(await read({ namespace: 'kube-system', name: 'skewed' }, lifetime.signal), undefined, 'already aborted: no wait');
  assert.equal(clock.pendingTimers, 0);
});
