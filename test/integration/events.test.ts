// The Events of an object (what the Resources view shows under it) against the real kube-apiserver: events recorded
// through core/v1 and through events.k8s.io/v1 are both found, newest first, and an older object of the same name
// does not lend its events.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, getTestCluster, type TestCluster } from './support/cluster.ts';
import { listObjectEvents } from '../../src/core/actions/events.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';

describe('object events (core/v1 and events.k8s.io/v1)', () => {
  let c: TestCluster;
  let ns: string;
  before(async () => {
    c = await getTestCluster();
    ns = await createNamespace(c.transport, 'events');
  });

  test('both APIs, newest first, matched by uid; none for an object without events', async () => {
    const cm = await c.transport.json<KubeObject>({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'subject', namespace: ns } } });
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'subject', namespace: ns, uid: cm.metadata.uid };
    // core/v1, the way client-go's record.EventRecorder writes.
    await c.transport.json({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/events`,
      body: {
        apiVersion: 'v1', kind: 'Event', metadata: { name: 'subject.core', namespace: ns }, involvedObject: ref,
        type: 'Warning', reason: 'ChildMissing', message: 'the child is missing', count: 3,
        firstTimestamp: '2026-01-01T10:00:00Z', lastTimestamp: '2026-01-01T10:05:00Z', source: { component: 'old-style-controller' },
      },
    });
    // events.k8s.io/v1, the way the new events API (k8s.io/client-go/tools/events) writes.
    await c.transport.json({
      method: 'POST',
      path: `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
      body: {
        apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'subject.new', namespace: ns }, regarding: ref,
        type: 'Normal', reason: 'Reconciled', note: 'all good', action: 'Reconcile', reportingController: 'lab.reconcile.dev/new-style',
        reportingInstance: 'new-style-0', eventTime: '2026-01-01T11:00:00.000000Z',
        series: { count: 4, lastObservedTime: '2026-01-01T11:30:00.000000Z' },
      },
    });
    // An event about an earlier ConfigMap of the same name (another uid).
    await c.transport.json({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/events`,
      body: {
        apiVersion: 'v1', kind: 'Event', metadata: { name: 'subject.stale', namespace: ns }, involvedObject: { ...ref, uid: '00000000-0000-0000-0000-000000000000' },
        type: 'Normal', reason: 'Stale', message: 'about the old object', source: { component: 'x' }, lastTimestamp: '2026-01-01T12:00:00Z',
      },
    });
    const events = await listObjectEvents(c.transport, cm);
    assert.deepEqual(events.map((e) => e.reason), ['Reconciled', 'ChildMissing'], 'newest first; the other uid is not there');
    const [fresh, old] = events;
    assert.equal(fresh!.message, 'all good');
    assert.equal(fresh!.count, 4);
    assert.equal(fresh!.source, 'lab.reconcile.dev/new-style');
    assert.equal(fresh!.action, 'Reconcile');
    assert.match(fresh!.lastSeen ?? '', /^2026-01-01T11:30:00/);
    assert.equal(old!.type, 'Warning');
    assert.equal(old!.count, 3);
    assert.equal(old!.source, 'old-style-controller');
    assert.equal(old!.lastSeen, '2026-01-01T10:05:00Z');
    assert.equal(old!.name, `${ns}/subject.core`);

    const quiet = await c.transport.json<KubeObject>({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'quiet', namespace: ns } } });
    assert.deepEqual(await listObjectEvents(c.transport, quiet), []);
  });
});
