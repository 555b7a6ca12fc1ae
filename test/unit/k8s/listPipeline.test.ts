// Pipelined paging in KubeListerWatcher.list: the next page is requested before the current one is parsed,
// and callers (the reflector) see exactly what they saw without the pipeline, 410s on continue tokens included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeListerWatcher } from '../../../src/core/k8s/listerWatcher.ts';
import type { KubeTransport, TransportRequest } from '../../../src/core/k8s/transport.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { Reflector } from '../../../src/core/cache/reflector.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { recordingLogger, settle, widget } from '../cache/helpers.ts';

const gvr = { group: 'lab.reconcile.dev', version: 'v1', resource: 'widgets' };

interface Sent {
  query: TransportRequest['query'];
  signal: AbortSignal | undefined;
}

/**
 * A transport over `total` objects served in pages by continue token ("p<offset>"), with the list metadata
 * last (as kube-apiserver encodes unstructured lists). `expireAt`: a continue token answered 410, like a
 * token older than etcd's compaction. Watches are never answered (they hang until aborted).
 */
function pagingTransport(total: number, opts: { expireAt?: string; rv?: string } = {}) {
  const sent: Sent[] = [];
  const rv = opts.rv ?? '100';
  const transport = {
    send: async (req: TransportRequest) => {
      sent.push({ query: req.query, signal: req.signal });
      if (req.query?.watch) {
        return new Promise<Response>((_, reject) => req.signal?.addEventListener('abort', () => reject(req.signal!.reason), { once: true }));
      }
      const cont = req.query?.continue as string | undefined;
      if (cont && cont === opts.expireAt) {
        const status = { kind: 'Status', code: 410, reason: 'Expired', message: 'The provided continue parameter is too old' };
        return new Response(JSON.stringify(status), { status: 410 });
      }
      const limit = Number(req.query?.limit ?? 0) || total;
      const from = cont ? Number(cont.slice(1)) : 0;
      const to = Math.min(total, from + limit);
      const items = Array.from({ length: to - from }, (_, i) => ({ ...widget(`w${from + i}`), metadata: { ...widget(`w${from + i}`).metadata, resourceVersion: rv } }));
      const metadata = to < total ? { continue: `p${to}`, resourceVersion: rv } : { resourceVersion: rv };
      return new Response(JSON.stringify({ apiVersion: 'lab.reconcile.dev/v1', items, kind: 'WidgetList', metadata }), { status: 200 });
    },
  } as unknown as KubeTransport;
  return { transport, sent };
}

const names = (l: { items: KubeObject[] }) => l.items.map((o) => o.metadata.name!);

test('a paged list requests the next page before it returns; the next call takes that answer without a new request', async () => {
  const { transport, sent } = pagingTransport(5);
  const lw = new KubeListerWatcher({ transport, resource: gvr, namespace: 'default' });
  const signal = new AbortController().signal;
  const first = await lw.list({ resourceVersion: '0', limit: 2 }, signal);
  assert.deepEqual(names(first), ['w0', 'w1']);
  assert.equal(first.metadata.continue, 'p2');
  assert.deepEqual(sent.map((s) => s.query?.continue), [undefined, 'p2'], 'page 2 was sent while page 1 was parsed');
  assert.equal(sent[1]!.query?.resourceVersion, undefined, 'continued pages carry no RV');
  assert.equal(sent[1]!.query?.limit, 2);
  const second = await lw.list({ continue: 'p2', limit: 2 }, signal);
  assert.deepEqual(names(second), ['w2', 'w3']);
  const third = await lw.list({ continue: 'p4', limit: 2 }, signal);
  assert.deepEqual(names(third), ['w4']);
  assert.equal(third.metadata.continue, undefined);
  assert.deepEqual(sent.map((s) => s.query?.continue), [undefined, 'p2', 'p4'], 'one request per page, none past the last');
});

test('an unpaged list sends nothing ahead; a call that does not continue the page discards (aborts) the one ahead', async () => {
  const { transport, sent } = pagingTransport(5);
  const lw = new KubeListerWatcher({ transport, resource: gvr });
  const signal = new AbortController().signal;
  assert.equal((await lw.list({ resourceVersion: '0' }, signal)).items.length, 5);
  assert.equal(sent.length, 1);
  await lw.list({ resourceVersion: '0', limit: 2 }, signal);
  assert.equal(sent.length, 3);
  const aheadSignal = sent[2]!.signal!;
  assert.equal(aheadSignal.aborted, false);
  // Starting over instead of continuing: the page ahead is dropped, the list is fetched as asked.
  const again = await lw.list({ resourceVersion: '0', limit: 2 }, signal);
  assert.equal(aheadSignal.aborted, true);
  assert.deepEqual(names(again), ['w0', 'w1']);
  assert.deepEqual(sent.map((s) => s.query?.continue), [undefined, undefined, 'p2', undefined, 'p2']);
});

test("the caller's signal aborts the page ahead", async () => {
  const { transport, sent } = pagingTransport(5);
  const lw = new KubeListerWatcher({ transport, resource: gvr });
  const ac = new AbortController();
  await lw.list({ resourceVersion: '0', limit: 2 }, ac.signal);
  ac.abort(new Error('stopped'));
  assert.equal(sent[1]!.signal!.aborted, true);
});

test('a 410 on a continue token sent ahead comes out of the call for that page; the reflector lists again in one piece', async () => {
  const { transport, sent } = pagingTransport(5, { expireAt: 'p4' });
  const lw = new KubeListerWatcher({ transport, resource: gvr, namespace: 'default' });
  const signal = new AbortController().signal;
  await lw.list({ resourceVersion: '0', limit: 2 }, signal);
  await lw.list({ continue: 'p2', limit: 2 }, signal);
  await assert.rejects(lw.list({ continue: 'p4', limit: 2 }, signal), (e: { code?: number }) => e.code === 410);

  // The same through the reflector: pages 1-2 arrive, page 3 is expired, one full list at RV "0" follows.
  const r = pagingTransport(5, { expireAt: 'p4' });
  const ops: string[] = [];
  const reflector = new Reflector({
    listerWatcher: new KubeListerWatcher({ transport: r.transport, resource: gvr, namespace: 'default' }),
    store: {
      add: (o) => ops.push(`add ${o.metadata.name}`),
      update: (o) => ops.push(`update ${o.metadata.name}`),
      delete: (o) => ops.push(`delete ${o.metadata.name}`),
      replace: (list, rv) => ops.push(`replace ${list.map((o) => o.metadata.name).join(',')}@${rv}`),
    },
    clock: new FakeClock(),
    logger: recordingLogger().logger,
    random: () => 0,
    pageSize: 2,
    watchList: false, // the LIST path, which is what pipelines
  });
  reflector.run();
  for (let i = 0; i < 20 && reflector.state.phase !== 'watching'; i++) await settle();
  assert.equal(reflector.state.phase, 'watching');
  const lists = r.sent.filter((s) => !s.query?.watch).map((s) => `${s.query?.resourceVersion ?? ''}|${s.query?.limit ?? ''}|${s.query?.continue ?? ''}`);
  assert.deepEqual(lists, ['0|2|', '|2|p2', '|2|p4', '0||']);
  assert.deepEqual(ops, ['replace w0,w1,w2,w3,w4@100']);
  reflector.dispose();
  await reflector.whenStopped();
});

test('page for page the same lists as without the pipeline, in order, for every page size', async () => {
  for (const limit of [1, 2, 3, 7, 50]) {
    const { transport } = pagingTransport(7);
    const lw = new KubeListerWatcher({ transport, resource: gvr });
    const signal = new AbortController().signal;
    const got: string[] = [];
    let page = await lw.list({ resourceVersion: '0', limit }, signal);
    got.push(...names(page));
    while (page.metadata.continue) {
      page = await lw.list({ continue: page.metadata.continue, limit }, signal);
      got.push(...names(page));
    }
    assert.deepEqual(got, ['w0', 'w1', 'w2', 'w3', 'w4', 'w5', 'w6'], `limit ${limit}`);
  }
});
