// Reusing managedFields values by their bytes (src/core/k8s/managedFieldsBytes.ts) in the streaming LIST parser: the
// cache ends up with exactly what parsing every byte and then compacting gives — same values, same key order, the
// same values shared and frozen — for any input, while values whose bytes were seen before are not parsed again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ListBodyParser } from '../../../src/core/k8s/listStream.ts';
import { KubeListerWatcher, WatchEventSplitter } from '../../../src/core/k8s/listerWatcher.ts';
import type { KubeTransport } from '../../../src/core/k8s/transport.ts';
import type { WatchEvent } from '../../../src/core/cache/interfaces.ts';
import { ManagedFieldsByBytes, type ManagedFieldsSharing } from '../../../src/core/k8s/managedFieldsBytes.ts';
import { ObjectCompactor } from '../../../src/core/cache/compact.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { rng } from '../support/random.ts';

const enc = new TextEncoder();

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** fieldsV1 trees: a few repeat (as for objects written by the same managers), some are tiny or odd. */
const TREES: unknown[] = [
  { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:replicas': {}, 'f:image': {} } },
  { 'f:metadata': { 'f:ownerReferences': { '.': {}, 'k:{"uid":"0000-1"}': {} } }, 'f:spec': { '.': {}, 'f:env': {} } },
  { 'f:status': { '.': {}, 'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:status': {} } } } },
  { 'f:spec': { 'f:note': { 'v:"a\\\\b]}"': {} } }, 'f:ü🙂': {} },
  {},
  { a: 1 },
  { 'f:x': [1, { y: null }], 'f:\u0002': 'str' },
];

function entry(r: () => number): Record<string, unknown> {
  const e: Record<string, unknown> = {
    apiVersion: 'lab.reconcile.dev/v1',
    fieldsType: 'FieldsV1',
    fieldsV1: r() < 0.05 ? pick(r, ['not a tree', null, 7]) : structuredClone(pick(r, TREES)),
    manager: pick(r, ['kubectl', 'controller', 'bench']),
    operation: pick(r, ['Update', 'Apply']),
    time: pick(r, ['2026-12-01T21:00:00Z', '2026-12-01T21:00:01Z']),
  };
  if (r() < 0.05) e['x"fieldsV1'] = structuredClone(pick(r, TREES)); // a key that ends in "fieldsV1" after an escape
  if (r() < 0.1) e.subresource = 'status';
  return e;
}

/** Arrays repeat often (objects written together), whole. */
const ARRAY_POOL = (() => {
  const r = rng(99);
  return Array.from({ length: 5 }, () => Array.from({ length: 1 + Math.floor(r() * 3) }, () => entry(r)));
})();

/** `distinct`: most arrays differ (each written at its own time), as in most clusters; their trees still repeat. */
function item(i: number, r: () => number, distinct = false): Record<string, unknown> {
  const metadata: Record<string, unknown> = { name: `w-${i}`, namespace: 'ns' };
  const k = r();
  if (k < (distinct ? 0.05 : 0.5)) metadata.managedFields = structuredClone(pick(r, ARRAY_POOL));
  else if (k < 0.9) {
    metadata.managedFields = Array.from({ length: 1 + Math.floor(r() * 3) }, () => entry(r));
    if (distinct) for (const e of metadata.managedFields as Array<Record<string, unknown>>) e.time = `2026-12-01T21:${i}Z`;
  }
  else if (k < 0.95) metadata.managedFields = r() < 0.5 ? [] : 'odd';
  metadata.resourceVersion = String(i);
  const spec: Record<string, unknown> = { size: i };
  // What looks like a candidate but is not at item.metadata.managedFields[…].fieldsV1.
  if (r() < 0.05) spec.fieldsV1 = structuredClone(pick(r, TREES));
  if (r() < 0.05) spec.template = { metadata: { managedFields: structuredClone(pick(r, ARRAY_POOL)) } };
  if (r() < 0.05) spec.placeholderLike = '\u0001';
  return { apiVersion: 'lab.reconcile.dev/v1', kind: 'Widget', metadata, spec };
}

/** Text edits that keep the JSON valid but change bytes: whitespace, escapes, duplicate keys. */
function mutate(text: string, r: () => number): string {
  const edits: Array<[RegExp | string, string]> = [
    ['"fieldsV1":', '"fieldsV1" : '],
    ['"fieldsV1":', '"fieldsV1":\n  '],
    ['"fieldsV1":', '"fields\\u00561":'],
    ['"fieldsV1":', '"fieldsV1":{"f:dropped":{"f:by":{"a":{}}}},"fieldsV1":'],
    ['"f:metadata":{', '"f:metadata":{"f:dup":{"x":{}},"f:dup":{},'],
    ['"managedFields":', '"managedFields":[{"fieldsV1":{"f:lost":{"f:first":{}}}}],"managedFields":'],
    ['"managedFields":[', '"managedFields":[\n'],
    ['"metadata":', '"metadata":{"managedFields":"gone"},"metadata":'],
    ['"f:spec":{', '"f:spec":{ '],
    ['"kind":', '"note":"\\u0001","kind":'],
    ['"manager":', '"fieldsV1":"\\u0001","manager":'], // a duplicate key whose value is what stands in for a reused one
  ];
  let out = text;
  for (let n = Math.floor(r() * 3); n > 0; n--) {
    const [from, to] = pick(r, edits);
    const at = out.indexOf(from as string, Math.floor(r() * out.length));
    if (at >= 0) out = out.slice(0, at) + to + out.slice(at + (from as string).length);
  }
  return out;
}

function bodyOf(itemTexts: string[]): string {
  return `{"apiVersion":"v1","items":[${itemTexts.join(',')}],"kind":"WidgetList","metadata":{"resourceVersion":"9"}}`;
}

/** Today's path: JSON.parse of the whole body, then each item compacted. */
function plain(body: string): KubeObject[] {
  const c = new ObjectCompactor();
  return (JSON.parse(body) as { items: KubeObject[] }).items.map((o) => (o && typeof o === 'object' && !Array.isArray(o) ? c.compact(o) : o));
}

/** The parser with reuse, the body pushed in the given chunk sizes (cycled), each item compacted as it comes. */
function reusing(body: string, sizes: number[], sharing?: (c: ObjectCompactor) => ManagedFieldsSharing): KubeObject[] {
  const c = new ObjectCompactor();
  const p = new ListBodyParser<KubeObject>({
    onItem: (o) => (o && typeof o === 'object' && !Array.isArray(o) ? c.compact(o) : o),
    managedFieldsBytes: new ManagedFieldsByBytes(sharing ? sharing(c) : c),
  });
  const bytes = enc.encode(body);
  for (let at = 0, k = 0; at < bytes.length; k++) {
    const n = Math.max(1, sizes[k % sizes.length]!);
    p.push(bytes.subarray(at, at + n));
    at += n;
  }
  return p.end().items;
}

/** Each item's managedFields array and fieldsV1 trees, as sharing classes (first index of an identical value) plus frozenness. */
function sharingOf(items: KubeObject[]): string[] {
  const seen = new Map<unknown, number>();
  const id = (x: unknown) => {
    if (!x || typeof x !== 'object') return 'v';
    if (!seen.has(x)) seen.set(x, seen.size);
    return `${seen.get(x)}${Object.isFrozen(x) ? 'f' : ''}`;
  };
  return items.map((o) => {
    const mf = (o as { metadata?: { managedFields?: unknown } })?.metadata?.managedFields;
    if (!Array.isArray(mf)) return `-${id(mf)}`;
    return `${id(mf)}[${mf.map((e) => `${id(e)}:${id((e as { fieldsV1?: unknown })?.fieldsV1)}`).join(',')}]`;
  });
}

function assertSame(got: KubeObject[], want: KubeObject[], what: string): void {
  assert.deepStrictEqual(got, want, what);
  assert.equal(JSON.stringify(got), JSON.stringify(want), `${what}: key order`);
  assert.deepEqual(sharingOf(got), sharingOf(want), `${what}: what is shared and frozen`);
}

test('fuzz: random lists (repeats, escapes, whitespace, duplicate keys, look-alikes) at random chunkings equal JSON.parse + compaction', () => {
  for (let seed = 1; seed <= 400; seed++) {
    const r = rng(seed);
    // Long lists of mostly distinct arrays: after the first ones, arrays are no longer looked up, only their trees.
    const distinct = r() < 0.15;
    const texts = Array.from({ length: distinct ? 100 + Math.floor(r() * 100) : Math.floor(r() * 30) }, (_, i) => {
      const t = JSON.stringify(item(i, r, distinct), null, r() < 0.1 ? 2 : undefined);
      return r() < 0.3 ? mutate(t, r) : t;
    });
    const body = bodyOf(texts);
    const want = plain(body);
    const sizes = Array.from({ length: 4 }, () => 1 + Math.floor(r() * (r() < 0.3 ? 40 : 3000)));
    assertSame(reusing(body, sizes), want, `seed ${seed}, sizes ${sizes}`);
  }
});

test('a repeated fieldsV1 tree is parsed and shared once, then put in place unparsed; a repeated array from its second time', () => {
  const tree = TREES[0];
  const items = Array.from({ length: 60 }, (_, i) => ({
    metadata: {
      name: `w${i}`,
      managedFields: [{ manager: 'm', operation: 'Update', time: i < 30 ? `2026-12-01T21:00:${String(i).padStart(2, '0')}Z` : '2026-12-01T22:00:00Z', fieldsV1: tree }],
    },
  }));
  const body = bodyOf(items.map((o) => JSON.stringify(o)));
  const calls = { trees: 0, lists: 0 };
  const got = reusing(body, [body.length], (c) => ({
    shareFieldsV1: (t) => (calls.trees++, c.shareFieldsV1(t)),
    shareManagedFields: (l) => (calls.lists++, c.shareManagedFields(l as never)),
  }));
  assertSame(got, plain(body), 'repeats');
  assert.equal(calls.trees, 1, 'the tree was parsed alone once; every other copy was reused by its bytes');
  assert.equal(calls.lists, 1, 'the array written 30 times was parsed alone once, the second time it came');
  const trees = new Set(got.map((o) => o.metadata.managedFields![0]!.fieldsV1));
  assert.equal(trees.size, 1);
  assert.ok(Object.isFrozen([...trees][0]));
  const lists = new Set(got.slice(30).map((o) => o.metadata.managedFields));
  assert.equal(lists.size, 1, 'the repeated array is one shared array');
});

test('reuse survives every chunking of a real-shaped body, and look-alikes fall back to a full parse', () => {
  const r = rng(7);
  const texts = Array.from({ length: 8 }, (_, i) => JSON.stringify(item(i, r)));
  texts.push(JSON.stringify({ metadata: { managedFields: [{ 'x"fieldsV1': TREES[1], fieldsV1: TREES[1] }] }, spec: { fieldsV1: TREES[1] } }));
  texts.push(mutate(texts[0]!, rng(3)));
  // The tree's bytes are reused, but a later duplicate key holds the very string that stands in for reused values.
  texts.push(`{"metadata":{"managedFields":[{"fieldsV1":${JSON.stringify(TREES[1])},"fieldsV1":"\\u0001"}]}}`);
  const body = bodyOf(texts);
  const want = plain(body);
  for (let cut = 1; cut < body.length; cut += 7) assertSame(reusing(body, [cut, body.length]), want, `cut ${cut}`);
});

test('without reuse bytes are never replaced; with bytes that are not JSON, errors are those of JSON.parse', () => {
  const good = JSON.stringify({ metadata: { managedFields: [{ fieldsV1: TREES[0] }] } });
  const bad = bodyOf([good, good.replace('"f:app"', '"f:app" x')]);
  assert.throws(() => JSON.parse(bad), SyntaxError);
  assert.throws(() => reusing(bad, [5]), /not JSON/);
  const cut = bodyOf([good, good]).replace(/\]\}\}\]/, ']}]');
  assert.throws(() => JSON.parse(cut), SyntaxError);
  assert.throws(() => reusing(cut, [cut.length]));
});

// ---- The same reuse on a WatchList stream: each event's line, split and parsed by WatchEventSplitter ----

/** The events whose objects the informer prepares during a WatchList's initial events (and so compacts). */
const prepared = (ev: WatchEvent) => (ev.type === 'ADDED' || ev.type === 'MODIFIED') && !!ev.object && typeof ev.object === 'object' && !Array.isArray(ev.object);

/** Today's path for a watch stream: each non-blank line JSON.parse'd, each ADDED / MODIFIED event's object compacted. */
function plainEvents(stream: string): unknown[] {
  const c = new ObjectCompactor();
  return stream
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const ev = JSON.parse(l) as WatchEvent;
      return prepared(ev) ? { ...ev, object: c.compact(ev.object as KubeObject) } : ev;
    });
}

/** The splitter with reuse, the stream written in the given chunk sizes (cycled), each ADDED / MODIFIED object compacted as taken. */
function reusingEvents(stream: string, sizes: number[]): unknown[] {
  const c = new ObjectCompactor();
  const sp = new WatchEventSplitter(new ManagedFieldsByBytes(c));
  const out: unknown[] = [];
  const take = (ev: WatchEvent) =>
    out.push(prepared(ev) ? { ...ev, object: c.compact(ev.object as KubeObject) } : ev);
  const bytes = enc.encode(stream);
  for (let at = 0, k = 0; at < bytes.length; k++) {
    const n = Math.max(1, sizes[k % sizes.length]!);
    sp.write(bytes.subarray(at, at + n));
    for (let ev = sp.next(); ev !== undefined; ev = sp.next()) take(ev);
    at += n;
  }
  for (const ev of sp.end()) take(ev);
  return out;
}

const objectsOf = (events: unknown[]) => events.map((e) => (e as WatchEvent).object as KubeObject);

test('fuzz: WatchList streams (repeats, escapes, whitespace, duplicate keys, look-alikes, other events) at random chunkings equal JSON.parse + compaction per line', () => {
  for (let seed = 1; seed <= 300; seed++) {
    const r = rng(1000 + seed);
    const distinct = r() < 0.15;
    const lines = Array.from({ length: distinct ? 100 + Math.floor(r() * 100) : Math.floor(r() * 30) }, (_, i) => {
      const k = r();
      if (k < 0.03) return JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, message: 'managedFields "x"' } });
      if (k < 0.06) return JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(i) } } });
      if (k < 0.08) return r() < 0.5 ? '' : ' \r';
      const ev = JSON.stringify({ type: r() < 0.9 ? 'ADDED' : 'MODIFIED', object: item(i, r, distinct) });
      return r() < 0.3 ? mutate(ev, r).replace(/\n/g, ' ') : ev; // one event per line (a newline outside strings is whitespace)
    });
    const stream = lines.join('\n') + (r() < 0.5 ? '\n' : '');
    const want = plainEvents(stream);
    const sizes = Array.from({ length: 4 }, () => 1 + Math.floor(r() * (r() < 0.3 ? 40 : 3000)));
    const got = reusingEvents(stream, sizes);
    assert.deepStrictEqual(got, want, `seed ${seed}, sizes ${sizes}`);
    assert.equal(JSON.stringify(got), JSON.stringify(want), `seed ${seed}: key order`);
    assert.deepEqual(sharingOf(objectsOf(got)), sharingOf(objectsOf(want)), `seed ${seed}: what is shared and frozen`);
  }
});

test('WatchList reuse survives every chunking of a stream; a BOM starts the stream only; invalid UTF-8 is replaced as by Response.text()', () => {
  const r = rng(11);
  const lines = Array.from({ length: 6 }, (_, i) => JSON.stringify({ type: 'ADDED', object: item(i, r) }));
  lines.push(`{"type":"ADDED","object":{"metadata":{"managedFields":[{"fieldsV1":${JSON.stringify(TREES[1])},"fieldsV1":"\\u0001"}]}}}`);
  lines.push(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'ü🙂', managedFields: [{ fieldsV1: TREES[3] }] } } }));
  const stream = lines.join('\n') + '\n';
  const want = plainEvents(stream);
  for (let cut = 1; cut < stream.length; cut += 5) {
    const got = reusingEvents(stream, [cut, stream.length]);
    assert.deepStrictEqual(got, want, `cut ${cut}`);
    assert.deepEqual(sharingOf(objectsOf(got)), sharingOf(objectsOf(want)), `cut ${cut}: sharing`);
  }
  // A BOM before the first event is dropped (as the stream's text decoding does); one before a later line is an error.
  const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
  for (const first of [1, 2, 3, 4]) {
    const sp = new WatchEventSplitter();
    const all = new Uint8Array([...bom, ...enc.encode(`${lines[0]}\n`)]);
    sp.write(all.subarray(0, first));
    assert.deepEqual(sp.next(), undefined);
    sp.write(all.subarray(first));
    assert.deepEqual(sp.next(), JSON.parse(lines[0]!), `BOM cut after ${first} byte(s)`);
  }
  const later = new WatchEventSplitter();
  later.write(new Uint8Array([...enc.encode(`${lines[0]}\n`), ...bom, ...enc.encode(`${lines[1]}\n`)]));
  later.next();
  assert.throws(() => later.next(), /malformed watch event/);
  // A cut-off sequence before the newline becomes U+FFFD, as TextDecoder makes it.
  const bad = new WatchEventSplitter();
  const text = '{"type":"ADDED","object":{"metadata":{"name":"a\u00e9"}}}';
  const bytes = enc.encode(text);
  const at = bytes.indexOf(0xc3);
  bad.write(new Uint8Array([...bytes.subarray(0, at + 1), ...bytes.subarray(at + 2), 0x0a]));
  assert.equal((bad.next()?.object as KubeObject).metadata.name, 'a\ufffd');
});

test('KubeListerWatcher.watch: a WatchList stream reuses managedFields bytes for its initial events only, a plain watch never', async () => {
  const tree = TREES[0];
  const added = (i: number) => JSON.stringify({ type: 'ADDED', object: { metadata: { name: `w${i}`, managedFields: [{ manager: 'm', fieldsV1: tree }] } } });
  const end = JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '9', annotations: { 'k8s.io/initial-events-end': 'true' } } } });
  const modified = JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'w0', managedFields: [{ manager: 'm', fieldsV1: tree }] } } });
  const body = [added(0), added(1), added(2), end, modified].join('\n') + '\n';
  const transport = {
    isDisposed: false,
    send: async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(enc.encode(body));
            controller.close();
          },
        }),
        { status: 200 },
      ),
  } as unknown as KubeTransport;
  const lw = new KubeListerWatcher({ transport, resource: { group: 'lab.reconcile.dev', version: 'v1', resource: 'widgets' } });
  const treesOf = async (sendInitialEvents: boolean, reuse: ManagedFieldsByBytes | undefined) => {
    const out: unknown[] = [];
    for await (const ev of lw.watch({ resourceVersion: '', sendInitialEvents, resourceVersionMatch: sendInitialEvents ? 'NotOlderThan' : undefined }, new AbortController().signal, reuse)) {
      out.push((ev.object as KubeObject).metadata.managedFields?.[0]?.fieldsV1);
    }
    return out;
  };
  const c = new ObjectCompactor();
  const streamed = await treesOf(true, new ManagedFieldsByBytes(c));
  assert.deepEqual(streamed, [tree, tree, tree, undefined, tree]);
  assert.ok(streamed.slice(0, 3).every((t) => t === streamed[0] && Object.isFrozen(t)), 'the initial events hold one shared, frozen tree');
  assert.ok(streamed[4] !== streamed[0] && !Object.isFrozen(streamed[4]), 'an event after the initial-events-end bookmark is parsed as it is');
  const watched = await treesOf(false, new ManagedFieldsByBytes(c));
  assert.ok(watched.every((t) => t === undefined || !Object.isFrozen(t)), 'a plain watch parses every byte');
});
