// The informer survives kube-apiserver going away under write load: on a PRIVATE control plane
// (the shared one is not disturbed), writers keep creating, updating and deleting objects while
// kube-apiserver is stopped and started again; afterwards the cache must equal the server.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startPrivateCluster, createNamespace, installCrd, testCrd, waitUntil, type TestCluster } from './support/cluster.ts';
import type { LocalControlPlane } from '../../src/core/controlplane/localControlPlane.ts';
import { KubeListerWatcher } from '../../src/core/k8s/listerWatcher.ts';
import { findCrdResource } from '../../src/core/k8s/discovery.ts';
import { SharedIndexInformer } from '../../src/core/cache/sharedIndexInformer.ts';
import { isTombstone } from '../../src/core/cache/interfaces.ts';
import { resourcePath } from '../../src/core/k8s/paths.ts';
import type { KubeList, KubeObject, ResourceInfo } from '../../src/core/k8s/objects.ts';
import { realClock } from '../../src/core/clock.ts';

const group = 'informer-restart-test.reconcile.dev';

describe('informer across a kube-apiserver restart under write load', () => {
  let c: TestCluster & { controlPlane: LocalControlPlane };
  let ns: string;
  let res: ResourceInfo;

  before(async () => {
    c = await startPrivateCluster();
    await installCrd(c.transport, testCrd({ group, kind: 'Widget', plural: 'widgets' }));
    res = await findCrdResource(c.transport, `widgets.${group}`);
    ns = await createNamespace(c.transport, 'restart');
  });
  after(async () => {
    await c?.controlPlane.stop();
  });

  it('ends with the cache equal to the server (same keys, same resourceVersions)', async () => {
    const path = (name = '') => `${resourcePath(res, ns)}${name ? '/' + name : ''}`;
    const inf = new SharedIndexInformer({ listerWatcher: new KubeListerWatcher({ transport: c.transport, resource: res, namespace: ns }), resource: res, clock: realClock });
    const phases: string[] = [];
    inf.onDidChangeState((s) => phases.push(s.phase === 'backoff' ? `backoff:${s.reason}` : s.phase));
    const deletes = { seen: 0, tombstones: 0 };
    inf.addEventHandler({ onDelete: (o) => void (isTombstone(o) ? deletes.tombstones++ : deletes.seen++) });
    inf.run();
    await waitUntil(() => inf.hasSynced(), 'synced');

    // Writers: each owns a set of names and cycles create → update → update → delete, ignoring
    // failures (the server may be down), until told to stop.
    let stop = false;
    let writes = 0;
    let failures = 0;
    const writer = async (w: number) => {
      let i = 0;
      while (!stop) {
        const name = `w${w}-${i % 15}`;
        try {
          const cur = await c.transport.json<KubeObject>({ method: 'GET', path: path(name) }).catch((e) => {
            if ((e as { code?: number }).code === 404) return undefined;
            throw e;
          });
          if (!cur) await c.transport.json({ method: 'POST', path: path(), body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name }, spec: { n: 0 } } });
          else if (((cur.spec as { n: number }).n ?? 0) < 2) await c.transport.json({ method: 'PUT', path: path(name), body: { ...cur, spec: { n: (cur.spec as { n: number }).n + 1 } } });
          else await c.transport.json({ method: 'DELETE', path: path(name) });
          writes++;
        } catch {
          failures++;
          await new Promise((r) => setTimeout(r, 50));
        }
        i++;
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    await waitUntil(() => writes >= 150, 'writes before the outage', 60_000);
    await c.controlPlane.stopApiServer();
    await waitUntil(() => failures > 20, 'writes failing while the server is down');
    await c.controlPlane.startApiServer();
    const writesAfterRestart = writes;
    await waitUntil(() => writes >= writesAfterRestart + 150, 'writes after the restart', 120_000);
    stop = true;
    await Promise.all(writers);

    const list = await c.transport.json<KubeList>({ method: 'GET', path: path() });
    const server = new Map(list.items.map((o) => [`${ns}/${o.metadata.name}`, o.metadata.resourceVersion]));
    const cache = () => new Map(inf.getIndexer().list().map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o.metadata.resourceVersion]));
    const same = () => JSON.stringify([...cache()].sort()) === JSON.stringify([...server].sort());
    await waitUntil(same, 'cache equals server after the restart', 180_000, 250);
    assert.deepEqual([...cache()].sort(), [...server].sort());
    if (process.env.INFORMER_TEST_VERBOSE) console.log(phases.join(' → '), deletes, { writes, failures });
    assert.ok(server.size > 0, 'the comparison covers objects');
    assert.ok(phases.some((p) => p.startsWith('backoff:')), `the outage was noticed and backed off: ${phases.join(', ')}`);
    assert.equal(inf.state.phase, 'watching');
    assert.ok(deletes.seen + deletes.tombstones > 0);
    inf.dispose();
    await inf.whenStopped();
  });
});
