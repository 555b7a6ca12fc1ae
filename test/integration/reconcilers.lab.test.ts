import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, getTestCluster } from './support/cluster.ts';
import { client as makeClient, CONFIGMAPS, installLabCrd, sampleWidgets, type LabCrd } from './reconcilers.support.ts';
import { createLabReconciler, childNameOf, LAB_FINALIZER } from '../../src/core/reconcilers/labReconciler.ts';
import { createReconcileContext, staticCache } from '../../src/core/actions/context.ts';
import { recordingClient, type DynamicKubeClient, type WriteRecord } from '../../src/core/k8s/dynamicClient.ts';
import { isNotFound, type KubeClient } from '../../src/core/k8s/client.ts';
import { conditionOf, type KubeObject } from '../../src/core/k8s/objects.ts';
import { createLogger } from '../../src/core/log.ts';
import { FakeClock } from '../fakes/fakeClock.ts';

describe('lab reconciler against a real kube-apiserver', () => {
  let c: DynamicKubeClient;
  let crd: LabCrd;
  let ns: string;
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const reconciler = createLabReconciler({ clock, dependencyRequeueMs: 20_000 });

  before(async () => {
    const cluster = await getTestCluster();
    c = makeClient(cluster.transport);
    crd = await installLabCrd(cluster.transport);
    ns = await createNamespace(cluster.transport, 'lab');
    for (const w of sampleWidgets(crd, ns)) await c.create(crd.gvr, w);
  });

  /** One reconcile through a recording client; returns the writes it made. */
  async function reconcile(name: string, options: { client?: KubeClient; cache?: KubeObject[] } = {}) {
    const writes: WriteRecord[] = [];
    const logs: string[] = [];
    const rc = recordingClient(options.client ?? c, { dryRun: false, onWrite: (w) => writes.push(w) });
    const ctx = createReconcileContext({
      client: rc,
      primary: crd.gvr,
      cache: options.cache ? staticCache([{ gvr: crd.gvr, objects: options.cache }]) : undefined,
      log: createLogger((_l, msg, f) => logs.push(`${msg} ${JSON.stringify(f)}`)),
    });
    const result = await reconciler.reconcile({ key: `${ns}/${name}`, namespace: ns, name }, ctx);
    return { result, writes, logs };
  }

  const getW = (name: string) => c.get(crd.gvr, ns, name);
  const getChild = (name: string) => c.get(CONFIGMAPS, ns, childNameOf(name));

  test('ready: creates the owned child, adds the finalizer, writes Ready status', async () => {
    const { result, writes } = await reconcile('widget-ready');
    assert.deepEqual(result, {});
    assert.deepEqual(writes.map((w) => `${w.verb}${w.subresource ? '/' + w.subresource : ''} ${w.gvr.resource}`), ['patch widgets', 'create configmaps', 'update/status widgets']);
    const w = await getW('widget-ready');
    assert.ok(w.metadata.finalizers?.includes(LAB_FINALIZER));
    const child = await getChild('widget-ready');
    assert.deepEqual(child.data, { color: 'blue', size: 'medium' });
    const ref = child.metadata.ownerReferences?.[0];
    assert.equal(ref?.uid, w.metadata.uid);
    assert.equal(ref?.controller, true);
    assert.equal(ref?.kind, 'Widget');
    const ready = conditionOf(w, 'Ready');
    assert.equal(ready?.status, 'True');
    assert.equal(ready?.reason, 'Reconciled');
    assert.equal((w.status as { observedGeneration?: number }).observedGeneration, w.metadata.generation);
  });

  test('idempotency proof: a second reconcile writes nothing; child and Widget resourceVersions unchanged', async () => {
    const childBefore = await getChild('widget-ready');
    const wBefore = await getW('widget-ready');
    clock.step(60_000);
    const { result, writes } = await reconcile('widget-ready');
    assert.deepEqual(result, {});
    assert.deepEqual(writes, [], 'no write at all');
    assert.equal((await getChild('widget-ready')).metadata.resourceVersion, childBefore.metadata.resourceVersion);
    assert.equal((await getW('widget-ready')).metadata.resourceVersion, wBefore.metadata.resourceVersion, 'status not rewritten');
  });

  test('drift in the child is corrected; status (unchanged) is not rewritten', async () => {
    const child = await getChild('widget-ready');
    await c.update(CONFIGMAPS, { ...child, data: { color: 'hacked' } });
    const wBefore = await getW('widget-ready');
    const { writes } = await reconcile('widget-ready');
    assert.deepEqual(writes.map((w) => `${w.verb} ${w.gvr.resource}`), ['update configmaps']);
    assert.deepEqual((await getChild('widget-ready')).data, { color: 'blue', size: 'medium' });
    assert.equal((await getW('widget-ready')).metadata.resourceVersion, wBefore.metadata.resourceVersion);
  });

  test('a spec change bumps generation: child updated and observedGeneration written', async () => {
    const w = await getW('widget-ready');
    await c.update(crd.gvr, { ...w, spec: { data: { color: 'blue', size: 'large' } } });
    const { writes } = await reconcile('widget-ready');
    assert.deepEqual(writes.map((x) => `${x.verb}${x.subresource ? '/' + x.subresource : ''} ${x.gvr.resource}`), ['update configmaps', 'update/status widgets']);
    const after = await getW('widget-ready');
    assert.equal(after.metadata.generation, (w.metadata.generation ?? 0) + 1);
    assert.equal((after.status as { observedGeneration: number }).observedGeneration, after.metadata.generation);
    assert.equal(((await getChild('widget-ready')).data as Record<string, string>).size, 'large');
    // The Ready condition did not flip, so its lastTransitionTime is kept.
    assert.equal(conditionOf(after, 'Ready')?.lastTransitionTime, conditionOf(w, 'Ready')?.lastTransitionTime);
  });

  test('dependency missing: delayed requeue with a reason (not an error), no child, Ready=False once', async () => {
    const first = await reconcile('widget-waiting');
    assert.equal(first.result.requeueAfterMs, 20_000);
    assert.match(first.result.reason ?? '', /DependencyMissing: waiting for ConfigMap .*\/widget-waiting-settings/);
    await assert.rejects(getChild('widget-waiting'), isNotFound);
    const w = await getW('widget-waiting');
    assert.equal(conditionOf(w, 'Ready')?.status, 'False');
    assert.equal(conditionOf(w, 'Ready')?.reason, 'DependencyMissing');
    // Nothing changed: the second look writes nothing (status-only-on-change).
    const second = await reconcile('widget-waiting');
    assert.equal(second.result.requeueAfterMs, 20_000);
    assert.deepEqual(second.writes, []);
    assert.equal((await getW('widget-waiting')).metadata.resourceVersion, w.metadata.resourceVersion);
  });

  test('…then ready once the dependency is created', async () => {
    await c.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'widget-waiting-settings', namespace: ns }, data: { x: '1' } });
    clock.step(20_000);
    const { result } = await reconcile('widget-waiting');
    assert.deepEqual(result, {});
    assert.deepEqual((await getChild('widget-waiting')).data, { color: 'green' });
    const w = await getW('widget-waiting');
    assert.equal(conditionOf(w, 'Ready')?.status, 'True');
    assert.equal(conditionOf(w, 'Ready')?.lastTransitionTime, '2026-01-01T00:01:20Z', 'transition time moved with the status flip');
  });

  test('a 409 on the status write is handled by re-reading and retrying', async () => {
    // Another writer changes the Widget between the reconciler's read and its status write: the server answers 409.
    const w = await getW('widget-waiting');
    await c.update(crd.gvr, { ...w, spec: { ...(w.spec as object), data: { color: 'teal' } } });
    let interfered = false;
    const racing: KubeClient = {
      ...c,
      async updateStatus(gvr, obj, o) {
        if (!interfered) {
          interfered = true;
          await c.patch(crd.gvr, ns, 'widget-waiting', 'merge', { metadata: { annotations: { touched: 'by-someone-else' } } });
        }
        return c.updateStatus(gvr, obj, o);
      },
    };
    const { result, writes, logs } = await reconcile('widget-waiting', { client: racing });
    assert.deepEqual(result, {});
    const statusWrites = writes.filter((x) => x.subresource === 'status');
    assert.equal(statusWrites.length, 2);
    assert.equal(statusWrites[0]!.outcome, 'error');
    assert.equal(statusWrites[0]!.error?.code, 409);
    assert.equal(statusWrites[1]!.outcome, 'ok');
    assert.ok(logs.some((l) => l.includes('status write conflicted')));
    const after = await getW('widget-waiting');
    assert.equal((after.status as { observedGeneration: number }).observedGeneration, after.metadata.generation);
    assert.equal(after.metadata.annotations?.touched, 'by-someone-else', 'the concurrent change survived');
  });

  test('deletion: cleanup deletes the child, removes the finalizer, the Widget is gone; cleanup is idempotent', async () => {
    const { writes: first } = await reconcile('widget-stuck');
    assert.ok(first.some((w) => w.verb === 'create'));
    // Remove the extra (controller-less) finalizer so only ours holds the object.
    const w = await getW('widget-stuck');
    await c.patch(crd.gvr, ns, 'widget-stuck', 'merge', { metadata: { finalizers: [LAB_FINALIZER], resourceVersion: w.metadata.resourceVersion } });
    const deleting = await c.delete(crd.gvr, ns, 'widget-stuck');
    assert.ok(deleting?.metadata.deletionTimestamp, 'held by the finalizer');
    // Someone already removed the child: cleaning something already gone is success.
    await c.delete(CONFIGMAPS, ns, childNameOf('widget-stuck'));
    const { result, writes } = await reconcile('widget-stuck');
    assert.deepEqual(result, {});
    assert.deepEqual(writes.map((x) => `${x.verb} ${x.gvr.resource}`), ['patch widgets']);
    await assert.rejects(getW('widget-stuck'), isNotFound);
    const again = await reconcile('widget-stuck');
    assert.deepEqual(again.result, {});
    assert.deepEqual(again.writes, []);
  });

  test('deletion with the child present deletes it (owned by uid precondition)', async () => {
    const w = await getW('widget-waiting');
    await c.delete(crd.gvr, ns, 'widget-waiting');
    const { writes } = await reconcile('widget-waiting');
    assert.deepEqual(writes.map((x) => `${x.verb} ${x.gvr.resource}`), ['delete configmaps', 'patch widgets']);
    await assert.rejects(getChild('widget-waiting'), isNotFound);
    await assert.rejects(getW('widget-waiting'), isNotFound);
    assert.ok(w.metadata.uid);
  });
});
