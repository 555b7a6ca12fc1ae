import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listQuery, parseWatchStream, watchQuery } from '../../../src/core/k8s/listerWatcher.ts';
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
});
