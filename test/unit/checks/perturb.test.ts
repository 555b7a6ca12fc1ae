import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { crashingClient, FrozenListerWatcher, SimulatedCrashError, WithholdingInformer } from '../../../src/core/checks/perturb.ts';
import type { KubeClient } from '../../../src/core/k8s/client.ts';
import type { HandlerRegistration, ListOptions, ListerWatcher, ResourceEventHandler, SharedIndexInformer, WatchEvent, WatchOptions } from '../../../src/core/cache/interfaces.ts';
import type { KubeList, KubeObject } from '../../../src/core/k8s/objects.ts';

const obj = (name: string, rv: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', resourceVersion: rv } });

describe('perturbation wrappers', () => {
  test('crashingClient: onCrash right after write i; later writes never reach the server; reads pass', async () => {
    const sent: string[] = [];
    const inner = {
      create: async (_g: unknown, o: KubeObject) => (sent.push(`create ${o.metadata.name}`), o),
      update: async (_g: unknown, o: KubeObject) => (sent.push(`update ${o.metadata.name}`), o),
      get: async () => obj('x', '1'),
    } as unknown as KubeClient;
    let crashes = 0;
    const c = crashingClient(inner, 2, () => crashes++);
    const g = { group: '', version: 'v1', resource: 'configmaps' };
    await c.create(g, obj('a', ''));
    assert.equal(crashes, 0);
    await c.update(g, obj('b', ''));
    assert.equal(crashes, 1);
    assert.equal(c.crashed, true);
    await assert.rejects(c.create(g, obj('c', '')), SimulatedCrashError);
    assert.deepEqual(sent, ['create a', 'update b']);
    assert.equal((await c.get(g, 'ns', 'x')).metadata.name, 'x');
  });

  test('FrozenListerWatcher lists at exactly the frozen resourceVersion and watches only after thaw', async () => {
    const lists: ListOptions[] = [];
    const watches: WatchOptions[] = [];
    const inner: ListerWatcher<KubeObject> = {
      list: async (o) => (lists.push(o), { metadata: { resourceVersion: o.resourceVersion ?? '99' }, items: [] } as KubeList<KubeObject>),
      watch: async function* (o): AsyncIterable<WatchEvent<KubeObject>> {
        watches.push(o);
        yield { type: 'ADDED', object: obj('late', '50') };
      },
    };
    const f = new FrozenListerWatcher(inner, '42');
    await f.list({ resourceVersion: '0' }, new AbortController().signal);
    assert.deepEqual(lists[0], { resourceVersion: '42', resourceVersionMatch: 'Exact' });
    const it = f.watch({ resourceVersion: '42' }, new AbortController().signal)[Symbol.asyncIterator]();
    const next = it.next();
    await new Promise((r) => setImmediate(r));
    assert.equal(watches.length, 0, 'no watch while frozen');
    f.thaw();
    assert.equal((await next).value?.object.metadata.name, 'late');
    assert.deepEqual(watches, [{ resourceVersion: '42' }]);
    await f.list({ resourceVersion: '0' }, new AbortController().signal);
    assert.deepEqual(lists[1], { resourceVersion: '0' }, 'transparent after thaw');
  });

  test('WithholdingInformer holds the key\'s updates and releases one coalesced update; other keys pass', () => {
    let registered: ResourceEventHandler<KubeObject> | undefined;
    const inner = { addEventHandler: (h: ResourceEventHandler<KubeObject>) => ((registered = h), {} as HandlerRegistration) } as unknown as SharedIndexInformer<KubeObject>;
    const w = new WithholdingInformer(inner, 'ns/a');
    const seen: string[] = [];
    w.addEventHandler({ onUpdate: (o, n) => void seen.push(`${n.metadata.name} ${o.metadata.resourceVersion}→${n.metadata.resourceVersion}`) });
    w.withhold();
    registered!.onUpdate!(obj('a', '1'), obj('a', '2'));
    registered!.onUpdate!(obj('a', '2'), obj('a', '3'));
    registered!.onUpdate!(obj('b', '1'), obj('b', '2'));
    assert.deepEqual(seen, ['b 1→2']);
    assert.equal(w.withheldCount, 2);
    w.release();
    assert.deepEqual(seen, ['b 1→2', 'a 1→3']);
    registered!.onUpdate!(obj('a', '3'), obj('a', '4'));
    assert.deepEqual(seen.at(-1), 'a 3→4');
  });
});
