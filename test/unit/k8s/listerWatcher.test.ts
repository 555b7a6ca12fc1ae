import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isProbableEOF, isTruncatedJson, KubeListerWatcher, listQuery, parseWatchStream, watchQuery, WatchEventSplitter } from '../../../src/core/k8s/listerWatcher.ts';
import type { KubeTransport } from '../../../src/core/k8s/transport.ts';
import type { WatchEvent } from '../../../src/core/cache/interfaces.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';

async function* chunksOf(...parts: Array<string | Uint8Array>): AsyncGenerator<Uint8Array> {
  const enc = new TextEncoder();
  for (const p of parts) yield typeof p === 'string' ? enc.encode(p) : p;
}

async function collect(it: AsyncIterable<WatchEvent>): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

test('NDJSON events split anywhere across chunks, blank lines ignored, last line without newline', async () => {
  const a = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '1' } } });
  const b = JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '7' } } });
  const c = JSON.stringify({ type: 'DELETED', object: { metadata: { name: 'c' } } });
  const whole = `${a}\n\n${b}\n${c}`;
  const parts = [whole.slice(0, 5), whole.slice(5, 40), whole.slice(40, a.length + 1), whole.slice(a.length + 1)];
  const evs = await collect(parseWatchStream(chunksOf(...parts)));
  assert.deepEqual(evs.map((e) => e.type), ['ADDED', 'BOOKMARK', 'DELETED']);
  assert.equal((evs[1]!.object as KubeObject).metadata.resourceVersion, '7');
});

test('a multi-byte UTF-8 character cut between chunks is decoded intact', async () => {
  const line = new TextEncoder().encode(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', labels: { x: 'héllo🙂' } } } }) + '\n');
  const cut = line.indexOf(0xf0) + 2; // inside the 4-byte emoji
  const evs = await collect(parseWatchStream(chunksOf(line.slice(0, cut), line.slice(cut))));
  assert.equal((evs[0]!.object as KubeObject).metadata.labels?.x, 'héllo🙂');
});

test('ERROR events pass through; malformed lines throw with a code', async () => {
  const err = JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (5)' } });
  const evs = await collect(parseWatchStream(chunksOf(err + '\n')));
  assert.equal(evs[0]!.type, 'ERROR');
  await assert.rejects(collect(parseWatchStream(chunksOf('{"type":"ADDED",\n'))), (e: { code?: number }) => e.code === 500);
  await assert.rejects(collect(parseWatchStream(chunksOf('{"nope":1}\n'))), /malformed watch event/);
});

test('list and watch queries: bound selectors win; RV "0" is kept; watch asks for bookmarks and a timeout', () => {
  assert.deepEqual(listQuery({ resourceVersion: '0', limit: 500, labelSelector: 'ignored' }, { labelSelector: 'app=x' }), {
    resourceVersion: '0',
    resourceVersionMatch: undefined,
    limit: 500,
    continue: undefined,
    labelSelector: 'app=x',
    fieldSelector: undefined,
  });
  assert.deepEqual(watchQuery({ resourceVersion: '12', allowWatchBookmarks: true, timeoutSeconds: 421 }, { fieldSelector: 'metadata.name=a' }), {
    watch: 1,
    resourceVersion: '12',
    allowWatchBookmarks: true,
    timeoutSeconds: 421,
    labelSelector: undefined,
    fieldSelector: 'metadata.name=a',
  });
  assert.deepEqual(
    watchQuery({ resourceVersion: '', allowWatchBookmarks: true, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', timeoutSeconds: 300 }),
    {
      watch: 1,
      resourceVersion: '',
      allowWatchBookmarks: true,
      timeoutSeconds: 300,
      labelSelector: undefined,
      fieldSelector: undefined,
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
    },
    'a WatchList asks for the initial events, "not older than" the RV (unset RV: a consistent read)',
  );
});

/** A transport whose watch answers 200 with `first` and then fails the body with `error`. */
function brokenBodyTransport(first: string, error: unknown): KubeTransport {
  return {
    send: async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(first));
          },
          pull(controller) {
            controller.error(error);
          },
        }),
        { status: 200 },
      ),
  } as unknown as KubeTransport;
}

const undiciSocketClosed = () =>
  Object.assign(new TypeError('terminated'), { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
const undiciReset = () => Object.assign(new TypeError('terminated'), { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', errno: -104 }) });

test('isProbableEOF: EOF, resets, closed connections, GOAWAY and timeouts (anywhere in the cause chain); nothing else', () => {
  for (const e of [
    undiciSocketClosed(),
    undiciReset(),
    new Error('unexpected EOF'),
    new Error('read tcp: connection reset by peer'),
    new Error('use of closed network connection'),
    Object.assign(new Error('session closed'), { code: 'ERR_HTTP2_GOAWAY_SESSION' }),
    Object.assign(new Error('body timeout'), { code: 'UND_ERR_BODY_TIMEOUT' }),
    new DOMException('The operation timed out.', 'TimeoutError'),
    Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }),
  ]) {
    assert.equal(isProbableEOF(e), true, String((e as Error).message));
  }
  for (const e of [new Error('malformed watch event'), new TypeError('terminated'), Object.assign(new Error('bad cert'), { code: 'CERT_HAS_EXPIRED' }), undefined, null, 'x']) {
    assert.equal(isProbableEOF(e), false, String((e as Error)?.message ?? e));
  }
});

test('a watch body that breaks with a probable EOF ends like a server close (the half-received event is dropped); another read error throws', async () => {
  const gvr = { group: 'lab.reconcile.dev', version: 'v1', resource: 'widgets' };
  const a = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '1' } } });
  const half = JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'a', resourceVersion: '2' } } }).slice(0, 20);
  for (const error of [undiciSocketClosed(), undiciReset()]) {
    const lw = new KubeListerWatcher({ transport: brokenBodyTransport(`${a}\n${half}`, error), resource: gvr });
    const events = await collect(lw.watch({ resourceVersion: '1' }, new AbortController().signal));
    assert.deepEqual(events.map((e) => (e.object as KubeObject).metadata?.resourceVersion), ['1']);
  }
  const other = new KubeListerWatcher({ transport: brokenBodyTransport(`${a}\n`, new TypeError('invalid chunk')), resource: gvr });
  await assert.rejects(collect(other.watch({ resourceVersion: '1' }, new AbortController().signal)), (e: { code?: number; reason?: string }) => e.code === 0 && e.reason === 'StreamBroken');
});

test('the splitter parses one event per next(), across chunks; end() hands over complete lines and the last one', () => {
  const ev = (i: number) => JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: `w-${i}`, resourceVersion: String(i) } } });
  const sp = new WatchEventSplitter();
  const enc = new TextEncoder();
  sp.write(enc.encode(`${ev(1)}\n\n${ev(2)}\n${ev(3).slice(0, 10)}`));
  assert.equal((sp.next()?.object as KubeObject | undefined)?.metadata.name, 'w-1');
  assert.equal((sp.next()?.object as KubeObject | undefined)?.metadata.name, 'w-2');
  assert.equal(sp.next(), undefined, 'half an event waits for more bytes');
  sp.write(enc.encode(`${ev(3).slice(10)}\n${ev(4)}\n${ev(5)}`));
  assert.deepEqual(sp.end().map((e) => (e.object as KubeObject).metadata.name), ['w-3', 'w-4', 'w-5']);
  assert.equal(sp.consumed, `${ev(1)}\n\n${ev(2)}\n${ev(3)}\n${ev(4)}\n`.length);
  const bad = new WatchEventSplitter();
  bad.write(enc.encode(`${ev(1)}\nnot json\n`));
  assert.equal((bad.next()?.object as KubeObject | undefined)?.metadata.name, 'w-1');
  assert.throws(() => bad.next(), /malformed watch event/);
});

test('a watch body that ends cleanly mid-event ends like a server close (the cut-off event is dropped, no BadWatchEvent); a complete bad last line still throws', async () => {
  const gvr = { group: 'lab.reconcile.dev', version: 'v1', resource: 'widgets' };
  const a = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '1' } } });
  const whole = JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'a', resourceVersion: '2' } } });
  for (const cut of [1, 9, 20, whole.length - 1]) {
    const lw = new KubeListerWatcher({ transport: oneChunkTransport(`${a}\n${whole.slice(0, cut)}`), resource: gvr });
    const events = await collect(lw.watch({ resourceVersion: '1' }, new AbortController().signal));
    assert.deepEqual(events.map((e) => (e.object as KubeObject).metadata?.resourceVersion), ['1'], `cut at ${cut}`);
  }
  const last = new KubeListerWatcher({ transport: oneChunkTransport(`${a}\n${whole}`), resource: gvr });
  assert.deepEqual((await collect(last.watch({ resourceVersion: '1' }, new AbortController().signal))).map((e) => (e.object as KubeObject).metadata?.resourceVersion), ['1', '2'], 'a complete last event without a newline is delivered');
  const bad = new KubeListerWatcher({ transport: oneChunkTransport(`${a}\nnot json`), resource: gvr });
  await assert.rejects(collect(bad.watch({ resourceVersion: '1' }, new AbortController().signal)), /malformed watch event/);
  assert.equal(isTruncatedJson('{"type":"ADDED","obj'), true);
  assert.equal(isTruncatedJson('{"a":1'), true);
  assert.equal(isTruncatedJson('{"a":1}'), false);
  assert.equal(isTruncatedJson('{"a":1}}'), false);
  assert.equal(isTruncatedJson('nope'), false);
  assert.equal(isTruncatedJson(''), false);
});

/** A transport whose watch answers 200 with all of `body` in one chunk, then ends. */
function oneChunkTransport(body: string): KubeTransport {
  return {
    send: async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(body));
            controller.close();
          },
        }),
        { status: 200 },
      ),
  } as unknown as KubeTransport;
}

/** Counts turns of the event loop (check phases) until stopped. */
function loopTurns() {
  let turns = 0;
  let on = true;
  const tick = () => {
    turns++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return { get turns() { return turns; }, stop: () => (on = false) };
}

test('a burst of watch events that arrived in one chunk is handed over in slices of about 64 KiB, in order, nothing lost', async () => {
  const N = 2000;
  const lines = Array.from({ length: N }, (_, i) => JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: `w-${String(i).padStart(5, '0')}`, resourceVersion: String(i + 1) }, spec: { note: 'x'.repeat(300) } } }));
  const perEvent = lines[0]!.length + 1;
  const lw = new KubeListerWatcher({ transport: oneChunkTransport(lines.join('\n') + '\n'), resource: { group: 'g', version: 'v1', resource: 'widgets' } });
  const turns = loopTurns();
  const names: string[] = [];
  const turnOf: number[] = [];
  for await (const e of lw.watch({ resourceVersion: '1' }, new AbortController().signal)) {
    names.push((e.object as KubeObject).metadata.name!);
    turnOf.push(turns.turns);
  }
  turns.stop();
  assert.deepEqual(names, lines.map((_, i) => `w-${String(i).padStart(5, '0')}`), 'every event, in order');
  // Events handed over within one turn of the event loop: bounded by the slice, whatever the chunk's size.
  const perTurn = new Map<number, number>();
  for (const t of turnOf) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
  const most = Math.max(...perTurn.values());
  assert.ok(most <= Math.ceil((64 << 10) / perEvent) + 1, `${most} events in one turn (${perEvent} B each)`);
  assert.ok(perTurn.size >= Math.floor((N * perEvent) / (64 << 10)), `${perTurn.size} turns for ${N * perEvent} B`);
});

test('aborting a watch while it yields between slices ends it with the reason and hands over nothing more', async () => {
  const lines = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: `w-${i}` }, spec: { note: 'x'.repeat(300) } } }));
  const lw = new KubeListerWatcher({ transport: oneChunkTransport(lines.join('\n') + '\n'), resource: { group: 'g', version: 'v1', resource: 'widgets' } });
  const ac = new AbortController();
  const reason = new Error('stopped');
  let got = 0;
  let afterAbort = 0;
  await assert.rejects(async () => {
    for await (const _ of lw.watch({ resourceVersion: '1' }, ac.signal)) {
      if (ac.signal.aborted) afterAbort++;
      if (++got === 10) setImmediate(() => ac.abort(reason));
    }
  }, (e) => e === reason);
  assert.ok(got < lines.length, `${got} of ${lines.length} handed over before the abort took effect`);
  assert.equal(afterAbort, 0, 'nothing handed over once aborted');
});
