// The LIST answers of a real kube-apiserver parsed as they stream (KubeListerWatcher.list → ListBodyParser) equal
// JSON.parse of the same answers read whole: typed lists (ConfigMaps, metadata first) and unstructured ones (custom
// resources, metadata last), paged and unpaged, with values that cut chunks inside strings, escapes and UTF-8.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { getTestCluster, createNamespace, installCrd, testCrd, type TestCluster } from './support/cluster.ts';
import { KubeListerWatcher } from '../../src/core/k8s/listerWatcher.ts';
import { findCrdResource } from '../../src/core/k8s/discovery.ts';
import { resourcePath } from '../../src/core/k8s/paths.ts';
import type { GroupVersionResource, KubeList, KubeObject } from '../../src/core/k8s/objects.ts';
import { ManagedFieldsByBytes } from '../../src/core/k8s/managedFieldsBytes.ts';
import { ObjectCompactor } from '../../src/core/cache/compact.ts';

const group = 'list-stream-test.reconcile.dev';
const N = 40;

/** Values that make the body's chunks end inside strings, escapes and multi-byte characters. */
function tricky(i: number): Record<string, string> {
  return {
    quotes: `"${i}" \\ \\" \\\\ }]{[,:`,
    utf8: `é ü 日本語 🙂 ${'🙂'.repeat(i % 7)}`,
    big: `${'x'.repeat(20_000 + i * 37)}é🙂"\\`,
    control: '\u0001\t\n\u2028',
  };
}

describe('LIST streaming parse against a real kube-apiserver', () => {
  let c: TestCluster;
  let ns: string;
  let widgets: GroupVersionResource;
  const configMaps: GroupVersionResource = { group: '', version: 'v1', resource: 'configmaps' };

  before(async () => {
    c = await getTestCluster();
    await installCrd(c.transport, testCrd({ group, kind: 'Widget', plural: 'widgets' }));
    widgets = await findCrdResource(c.transport, `widgets.${group}`);
    ns = await createNamespace(c.transport, 'liststream');
    for (let i = 0; i < N; i++) {
      const name = `obj-${String(i).padStart(3, '0')}`;
      await c.transport.json({ method: 'POST', path: resourcePath(configMaps, ns), body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: tricky(i) } });
      await c.transport.json({
        method: 'POST',
        path: resourcePath(widgets, ns),
        body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name, annotations: tricky(i) }, spec: { size: i, note: tricky(i).quotes } },
      });
    }
  });
  after(async () => {
    await c.transport.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  });

  for (const which of ['configmaps', 'widgets'] as const) {
    it(`${which}: streamed pages equal the whole answers parsed at once, each item handed to onItem once, in order`, async () => {
      const gvr = which === 'configmaps' ? configMaps : widgets;
      const lw = new KubeListerWatcher({ transport: c.transport, resource: gvr, namespace: ns });
      const signal = new AbortController().signal;
      // Unpaged, at the namespace's current state: the same request read whole.
      const whole = await c.transport.json<KubeList>({ method: 'GET', path: resourcePath(gvr, ns) });
      const rv = whole.metadata.resourceVersion!;
      const seen: string[] = [];
      const streamed = await lw.list({ resourceVersion: rv, resourceVersionMatch: 'Exact' }, signal, (o) => (seen.push(o.metadata.name!), o));
      const exact = await c.transport.json<KubeList>({ method: 'GET', path: resourcePath(gvr, ns), query: { resourceVersion: rv, resourceVersionMatch: 'Exact' } });
      assert.deepEqual(streamed, exact);
      assert.equal(streamed.items.length, N);
      assert.deepEqual(seen, exact.items.map((o) => o.metadata.name));
      const third = streamed.items[3] as KubeObject & { data?: unknown };
      assert.equal(third.metadata.name, 'obj-003');
      assert.deepEqual(which === 'configmaps' ? third.data : third.metadata.annotations, tricky(3));
      // Paged (the next page requested ahead as soon as its token is known), against the same pages read whole.
      for (const limit of [1, 7]) {
        const pages: KubeObject[] = [];
        let page = await lw.list({ resourceVersion: rv, resourceVersionMatch: 'Exact', limit }, signal);
        pages.push(...page.items);
        let rounds = 0;
        while (page.metadata.continue) {
          const token = page.metadata.continue;
          page = await lw.list({ continue: token, limit }, signal);
          const again = await c.transport.json<KubeList>({ method: 'GET', path: resourcePath(gvr, ns), query: { continue: token, limit } });
          assert.deepEqual(page, again, `${which} page after ${token.slice(0, 12)}…`);
          pages.push(...page.items);
          rounds++;
        }
        assert.equal(rounds, Math.ceil(N / limit) - 1);
        assert.deepEqual(pages, exact.items, `${which} limit ${limit}`);
      }
    });
  }

  it('widgets: managedFields reused by their bytes (as the informer lists) equal the answer parsed whole and compacted', async () => {
    const lw = new KubeListerWatcher({ transport: c.transport, resource: widgets, namespace: ns });
    const signal = new AbortController().signal;
    const rv = (await c.transport.json<KubeList>({ method: 'GET', path: resourcePath(widgets, ns), query: { limit: 1 } })).metadata.resourceVersion!;
    const query = { resourceVersion: rv, resourceVersionMatch: 'Exact' as const };
    const plain = new ObjectCompactor();
    const want = (await c.transport.json<KubeList>({ method: 'GET', path: resourcePath(widgets, ns), query })).items.map((o) => plain.compact(o));
    for (const limit of [undefined, 7]) {
      const compactor = new ObjectCompactor();
      const reuse = new ManagedFieldsByBytes(compactor);
      const got: KubeObject[] = [];
      let page = await lw.list({ ...query, limit }, signal, (o) => compactor.compact(o), reuse);
      got.push(...page.items);
      while (page.metadata.continue) {
        page = await lw.list({ continue: page.metadata.continue, limit }, signal, (o) => compactor.compact(o), reuse);
        got.push(...page.items);
      }
      assert.deepEqual(got, want, `limit ${limit}`);
      assert.equal(JSON.stringify(got), JSON.stringify(want), 'key order');
      // Every widget was written by the same manager with the same fields: one shared, frozen tree for all.
      const trees = new Set(got.map((o) => o.metadata.managedFields?.[0]?.fieldsV1));
      assert.equal(trees.size, 1);
      assert.ok(Object.isFrozen([...trees][0]) && [...trees][0] !== undefined);
    }
  });
});
