// KubeListerWatcher.list parses a LIST answer while it streams: items reach onItem before the body has ended, the
// next page is requested as soon as its token is known, and errors come out as they did when the body was read whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeListerWatcher } from '../../../src/core/k8s/listerWatcher.ts';
import type { KubeTransport, TransportRequest } from '../../../src/core/k8s/transport.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import type { ListerWatcher } from '../../../src/core/cache/interfaces.ts';
import { SharedIndexInformer } from '../../../src/core/cache/sharedIndexInformer.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { settle, widget, widgets } from '../cache/helpers.ts';

const gvr = { group: 'lab.reconcile.dev', version: 'v1', resource: 'widgets' };
const enc = new TextEncoder();

/** A body whose chunks the test hands out one by one (`give`), or ends / breaks. */
function controlledBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  return {
    stream,
    give: (bytes: Uint8Array) => controller.enqueue(bytes),
    end: () => controller.close(),
    break: (e: unknown) => controller.error(e),
  };
}

interface Sent {
  query: TransportRequest['query'];
  signal?: AbortSignal;
}

/** A transport answering each request with `answer(req)`; it records the requests. */
function transportOf(answer: (req: TransportRequest) => Response | Promise<Response>) {
  const sent: Sent[] = [];
  const transport = {
    send: async (req: TransportRequest) => {
      sent.push({ query: req.query, signal: req.signal });
      return answer(req);
    },
  } as unknown as KubeTransport;
  return { transport, sent };
}

const items = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ ...widget(`w${from + i}`), spec: { note: `é🙂 "${from + i}" \\` } }));

test('items reach onItem while the body is still arriving; the result equals JSON.parse of the whole body', async () => {
  const body = controlledBody();
  const { transport } = transportOf(() => new Response(body.stream, { status: 200 }));
  const lw = new KubeListerWatcher({ transport, resource: gvr });
  const text = JSON.stringify({ apiVersion: 'lab.reconcile.dev/v1', items: items(0, 6), kind: 'WidgetList', metadata: { resourceVersion: '7' } });
  const bytes = enc.encode(text);
  const seen: string[] = [];
  const pending = lw.list({ resourceVersion: '0' }, new AbortController().signal, (o) => (seen.push(o.metadata.name!), { ...o, prepared: true }));
  const half = Math.floor(bytes.length / 2);
  for (let i = 0; i < half; i++) body.give(bytes.subarray(i, i + 1)); // one byte at a time
  for (let k = 0; k < 50 && seen.length < 2; k++) await settle();
  assert.ok(seen.length >= 2 && seen.length < 6, `items handed over before the body ended (${seen.length})`);
  body.give(bytes.subarray(half));
  body.end();
  const list = await pending;
  const want = JSON.parse(text) as { items: KubeObject[] };
  assert.deepEqual(list, { ...want, items: want.items.map((o) => ({ ...o, prepared: true })) });
  assert.deepEqual(seen, ['w0', 'w1', 'w2', 'w3', 'w4', 'w5'], 'once each, in order');
});

test('a typed list (metadata first): the next page is requested before the current page has arrived', async () => {
  const bodies: ReturnType<typeof controlledBody>[] = [];
  const { transport, sent } = transportOf(() => {
    const b = controlledBody();
    bodies.push(b);
    return new Response(b.stream, { status: 200 });
  });
  const lw = new KubeListerWatcher({ transport, resource: gvr });
  const signal = new AbortController().signal;
  const first = lw.list({ resourceVersion: '0', limit: 3 }, signal);
  for (let k = 0; k < 5 && bodies.length < 1; k++) await settle();
  const page1 = enc.encode(JSON.stringify({ kind: 'WidgetList', apiVersion: 'v1', metadata: { continue: 'p3', resourceVersion: '9' }, items: items(0, 3) }));
  const cut = new TextDecoder().decode(page1).indexOf('"items"') + 12; // the metadata and a few bytes of the first item
  bodies[0]!.give(page1.subarray(0, cut));
  for (let k = 0; k < 20 && sent.length < 2; k++) await settle();
  assert.deepEqual(sent.map((s) => s.query?.continue), [undefined, 'p3'], 'page 2 requested while page 1 streams');
  bodies[0]!.give(page1.subarray(cut));
  bodies[0]!.end();
  assert.deepEqual((await first).items.map((o) => o.metadata.name), ['w0', 'w1', 'w2']);
  const second = lw.list({ continue: 'p3', limit: 3 }, signal);
  bodies[1]!.give(enc.encode(JSON.stringify({ kind: 'WidgetList', apiVersion: 'v1', metadata: { resourceVersion: '9' }, items: items(3, 2) })));
  bodies[1]!.end();
  assert.deepEqual((await second).items.map((o) => o.metadata.name), ['w3', 'w4']);
  assert.equal(sent.length, 2, 'no request past the last page');
});

test('errors as before: a Status answer (410) decoded, a body cut off, a body that is not JSON (the page ahead dropped)', async () => {
  const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version: 5 (9)' };
  const gone = transportOf(() => new Response(JSON.stringify(status), { status: 410 }));
  await assert.rejects(new KubeListerWatcher({ transport: gone.transport, resource: gvr }).list({ resourceVersion: '5' }, new AbortController().signal), (e: { code?: number; reason?: string; message?: string }) => e.code === 410 && e.reason === 'Expired' && /too old resource version/.test(e.message ?? ''));

  const cut = controlledBody();
  const cutT = transportOf(() => new Response(cut.stream, { status: 200 }));
  const p = new KubeListerWatcher({ transport: cutT.transport, resource: gvr }).list({}, new AbortController().signal);
  cut.give(enc.encode('{"items":[{"metadata":{"name":"a"}},{"meta'));
  cut.break(Object.assign(new TypeError('terminated'), { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) }));
  await assert.rejects(p, (e: { code?: number; reason?: string; message?: string }) => e.code === 0 && e.reason === 'Unreachable' && /cut off \(UND_ERR_SOCKET\)/.test(e.message ?? ''));

  const bad = transportOf((req) =>
    new Response(req.query?.continue ? '{"items":[]}' : '{"kind":"L","metadata":{"continue":"c1"},"items":[{"a":1},{"b":2]]}', { status: 200 }),
  );
  const lw = new KubeListerWatcher({ transport: bad.transport, resource: gvr });
  await assert.rejects(lw.list({ limit: 2 }, new AbortController().signal), (e: { code?: number; reason?: string }) => e.code === 500 && e.reason === 'BadList');
  assert.equal(bad.sent.length, 2, 'the token was seen, the page ahead sent');
  assert.equal(bad.sent[1]!.signal?.aborted, true, 'and dropped with the bad page');
});

test("the caller's abort ends a list whose body is still arriving, with the caller's reason", async () => {
  const body = controlledBody();
  const { transport } = transportOf((req) => {
    req.signal?.addEventListener('abort', () => body.break(req.signal!.reason), { once: true });
    return new Response(body.stream, { status: 200 });
  });
  const ac = new AbortController();
  const p = new KubeListerWatcher({ transport, resource: gvr }).list({}, ac.signal);
  body.give(enc.encode('{"items":[{"a":1},'));
  await settle();
  const reason = new Error('stopped');
  ac.abort(reason);
  await assert.rejects(p, (e) => e === reason);
});

test('a long body is parsed in bounded slices: timers get turns while a large answer that has already arrived is parsed', async () => {
  const many = items(0, 4000); // ~0.6 MB
  const text = JSON.stringify({ apiVersion: 'v1', items: many, kind: 'WidgetList', metadata: { resourceVersion: '3' } });
  const { transport } = transportOf(() => new Response(text, { status: 200 }));
  let parsedWhenTimerRan = -1;
  let parsed = 0;
  const timer = new Promise<void>((r) => setImmediate(() => ((parsedWhenTimerRan = parsed), r())));
  const list = await new KubeListerWatcher({ transport, resource: gvr }).list({}, new AbortController().signal, (o) => (parsed++, o));
  await timer;
  assert.equal(list.items.length, 4000);
  assert.ok(parsedWhenTimerRan > 0 && parsedWhenTimerRan < 4000, `a macrotask ran in the middle of the parse (after ${parsedWhenTimerRan} items)`);
});

test('through the informer: the transform runs once per object as the list streams; handlers see the same objects', async () => {
  const text = JSON.stringify({ apiVersion: 'lab.reconcile.dev/v1', items: items(0, 5), kind: 'WidgetList', metadata: { resourceVersion: '11' } });
  const { transport } = transportOf((req) => {
    if (req.query?.watch) return new Promise<Response>((_, reject) => req.signal?.addEventListener('abort', () => reject(req.signal!.reason), { once: true }));
    const b = controlledBody();
    const bytes = enc.encode(text);
    for (let i = 0; i < bytes.length; i += 7) b.give(bytes.subarray(i, i + 7));
    b.end();
    return new Response(b.stream, { status: 200 });
  });
  const lw: ListerWatcher<KubeObject> = new KubeListerWatcher({ transport, resource: gvr });
  let transforms = 0;
  const inf = new SharedIndexInformer({
    listerWatcher: lw,
    resource: widgets,
    clock: new FakeClock(),
    watchList: false,
    transform: (o) => (transforms++, { ...o, metadata: { ...o.metadata, annotations: { seen: 'yes' } } }),
  });
  const added: KubeObject[] = [];
  inf.addEventHandler({ onAdd: (o) => void added.push(o) });
  inf.run();
  for (let k = 0; k < 100 && added.length < 5; k++) await settle();
  assert.equal(transforms, 5, 'one transform per object');
  assert.deepEqual(added.map((o) => o.metadata.name), ['w0', 'w1', 'w2', 'w3', 'w4']);
  assert.ok(added.every((o) => o.metadata.annotations?.seen === 'yes'));
  assert.deepEqual(inf.getIndexer().list().map((o) => o.metadata.name).sort(), ['w0', 'w1', 'w2', 'w3', 'w4']);
  assert.equal(inf.getIndexer().getByKey('default/w2'), added[2], 'the cached object is the one delivered');
  assert.equal(inf.lastSyncResourceVersion(), '11');
  inf.dispose();
  await inf.whenStopped();
});

test('staged indexing: a list that fails part-way, an expired continue token or a relist leaves exactly the list that completed, indexed', async () => {
  // A lister-watcher that hands items to onItem as a streaming one does, and fails as told.
  const calls: string[] = [];
  let failFirst = true;
  const all = ['a', 'b', 'c', 'd', 'e'].map((n) => widget(n, { labels: { app: n === 'e' ? 'x' : 'y' } }));
  const lw: ListerWatcher<KubeObject> = {
    list: async (options, _signal, onItem) => {
      calls.push(`${options.resourceVersion ?? ''}|${options.limit ?? ''}|${options.continue ?? ''}`);
      const copy = (o: KubeObject) => structuredClone(o);
      const give = (objs: KubeObject[]) => objs.map((o) => (onItem ? onItem(copy(o)) : copy(o)));
      if (failFirst) {
        failFirst = false;
        give(all.slice(0, 2)); // two items handed over, then the body breaks
        throw Object.assign(new Error('cut off'), { code: 0 });
      }
      if (!options.continue) {
        if (options.limit) return { metadata: { resourceVersion: '20', continue: 'c2' }, items: give(all.slice(0, 2)) };
        return { metadata: { resourceVersion: '21' }, items: give(all.slice(1)) }; // the full list after the 410: a is gone
      }
      // Page 2 hands over one item, then its token turns out expired.
      give(all.slice(2, 3));
      throw Object.assign(new Error('continue token expired'), { code: 410, reason: 'Expired' });
    },
    watch: (_o, signal) => ({
      [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<never>>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })) }),
    }),
  };
  const clock = new FakeClock();
  const inf = new SharedIndexInformer({ listerWatcher: lw, resource: widgets, clock, watchList: false, indexers: { app: (o) => [o.metadata.labels?.app ?? ''] } });
  inf.run();
  for (let k = 0; k < 20 && inf.state.phase !== 'backoff'; k++) await settle();
  assert.equal(inf.state.phase, 'backoff', 'the first list failed');
  assert.deepEqual(inf.getIndexer().listKeys(), [], 'nothing of the failed list is visible');
  clock.step(60_000);
  for (let k = 0; k < 50 && !inf.hasSynced(); k++) await settle();
  assert.ok(inf.hasSynced());
  assert.deepEqual(calls, ['0|500|', '0|500|', '|500|c2', '0||']);
  assert.deepEqual(inf.getIndexer().listKeys(), ['default/b', 'default/c', 'default/d', 'default/e']);
  assert.deepEqual(inf.getIndexer().indexKeys('app', 'y'), ['default/b', 'default/c', 'default/d']);
  assert.deepEqual(inf.getIndexer().indexKeys('app', 'x'), ['default/e']);
  assert.deepEqual(inf.getIndexer().indexKeys('namespace', 'default'), ['default/b', 'default/c', 'default/d', 'default/e']);
  inf.dispose();
  await inf.whenStopped();
});
