// The streaming LIST body parser (src/core/k8s/listStream.ts): whatever the chunking, the result is JSON.parse of the
// whole body, items handed to onItem once each in order; what JSON.parse rejects is rejected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ListBodyParser, ListBodySyntaxError } from '../../../src/core/k8s/listStream.ts';
import { rng } from '../support/random.ts';

const enc = new TextEncoder();

/** Parses `bytes` pushed in the given chunk sizes (cycled). */
function parseChunked(bytes: Uint8Array, sizes: number[], onItem?: (x: unknown) => unknown): { list: unknown; metadata: unknown[] } {
  const metadata: unknown[] = [];
  const p = new ListBodyParser<unknown>({ onItem, onMetadata: (m) => metadata.push(m) });
  let at = 0;
  for (let k = 0; at < bytes.length; k++) {
    const n = Math.max(1, sizes[k % sizes.length]!);
    p.push(bytes.subarray(at, at + n));
    at += n;
  }
  return { list: p.end(), metadata };
}

const TRICKY = ['', 'a"b', 'back\\slash', 'ends with \\', '\\"', '\\\\"', 'quote at end"', 'é', 'naïve 🙂 日本語', '\u0000\u001f', '\u2028\u2029', '}{][,:', '\ufeffbom inside', 'tab\tnew\nline'];

function randomString(r: () => number): string {
  if (r() < 0.4) return TRICKY[Math.floor(r() * TRICKY.length)]!;
  const len = Math.floor(r() * 12);
  let s = '';
  for (let i = 0; i < len; i++) {
    const c = r();
    s += c < 0.6 ? String.fromCharCode(97 + Math.floor(r() * 26)) : c < 0.7 ? '"' : c < 0.8 ? '\\' : c < 0.9 ? 'ü' : '🙂';
  }
  return s;
}

function randomValue(r: () => number, depth: number): unknown {
  const k = r();
  if (depth > 3 || k < 0.3) {
    const s = r();
    if (s < 0.4) return randomString(r);
    if (s < 0.6) return Math.floor(r() * 1e6) - 5e5;
    if (s < 0.7) return r() * 1e-3;
    if (s < 0.8) return r() < 0.5;
    return null;
  }
  if (k < 0.6) return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(r() * 5); i > 0; i--) o[randomString(r)] = randomValue(r, depth + 1);
  return o;
}

function kubeObject(i: number, r: () => number): Record<string, unknown> {
  return {
    apiVersion: 'lab.reconcile.dev/v1',
    kind: 'Widget',
    metadata: { name: `w-${i}`, namespace: 'default', labels: { app: randomString(r) }, annotations: { note: randomString(r) }, resourceVersion: String(100 + i) },
    spec: randomValue(r, 1),
  };
}

/** A list body: items first and metadata last (unstructured lists), or metadata first (typed lists). */
function listBody(items: unknown[], opts: { metadataFirst?: boolean; indent?: number; cont?: string } = {}): string {
  const metadata = { resourceVersion: '4242', ...(opts.cont ? { continue: opts.cont } : {}) };
  const list = opts.metadataFirst ? { kind: 'WidgetList', apiVersion: 'v1', metadata, items } : { apiVersion: 'v1', items, kind: 'WidgetList', metadata };
  return JSON.stringify(list, null, opts.indent);
}

test('a real list body, every chunking: 1-byte chunks, every cut into two, odd sizes; metadata before and after the items', () => {
  const r = rng(1);
  const items = Array.from({ length: 6 }, (_, i) => kubeObject(i, r));
  for (const metadataFirst of [false, true]) {
    const text = listBody(items, { metadataFirst, cont: 'tok"en\\=' });
    const bytes = enc.encode(text);
    const want = JSON.parse(text);
    assert.deepEqual(parseChunked(bytes, [1]).list, want);
    for (const sizes of [[2], [3], [7], [64], [5, 1, 13], [bytes.length]]) assert.deepEqual(parseChunked(bytes, sizes).list, want, `sizes ${sizes}`);
    for (let cut = 1; cut < bytes.length; cut++) assert.deepEqual(parseChunked(bytes, [cut, bytes.length]).list, want, `cut at ${cut}`);
  }
});

test('items are handed to onItem once each, in order, and the list holds what it returns', () => {
  const items = Array.from({ length: 50 }, (_, i) => ({ metadata: { name: `n${i}` } }));
  const bytes = enc.encode(listBody(items));
  for (const sizes of [[1], [17], [bytes.length]]) {
    const seen: string[] = [];
    const { list } = parseChunked(bytes, sizes, (x) => {
      const name = (x as { metadata: { name: string } }).metadata.name;
      seen.push(name);
      return { wrapped: name };
    });
    assert.deepEqual(seen, items.map((o) => o.metadata.name));
    assert.deepEqual((list as { items: unknown[] }).items, items.map((o) => ({ wrapped: o.metadata.name })));
  }
});

test('items are parsed while the body arrives, not at the end', () => {
  const items = Array.from({ length: 20 }, (_, i) => ({ metadata: { name: `n${i}` }, pad: 'x'.repeat(100) }));
  const bytes = enc.encode(listBody(items));
  const p = new ListBodyParser();
  const half = Math.floor(bytes.length / 2);
  p.push(bytes.subarray(0, half));
  assert.ok(p.itemCount >= 8 && p.itemCount < 20, `${p.itemCount} items parsed from half the body`);
  p.push(bytes.subarray(half));
  assert.equal(p.itemCount, 20);
  assert.equal((p.end() as { items: unknown[] }).items.length, 20);
});

test('onMetadata gets the list metadata as soon as it is complete: before the items for typed lists', () => {
  const items = Array.from({ length: 5 }, (_, i) => ({ metadata: { name: `n${i}` } }));
  const bytes = enc.encode(listBody(items, { metadataFirst: true, cont: 'abc' }));
  let seenAt = -1;
  const p: ListBodyParser = new ListBodyParser({ onMetadata: (m) => (seenAt = p.itemCount, assert.equal(m.continue, 'abc')) });
  for (let i = 0; i < bytes.length; i++) p.push(bytes.subarray(i, i + 1));
  p.end();
  assert.equal(seenAt, 0, 'before any item');
  for (const metadataFirst of [false, true]) {
    const got = parseChunked(enc.encode(listBody(items, { metadataFirst, cont: 'c' })), [3]).metadata;
    assert.deepEqual(got, [{ resourceVersion: '4242', continue: 'c' }]);
  }
});

test('multi-byte UTF-8 cut inside its sequence, in items, in keys and in the metadata', () => {
  const items = [{ metadata: { name: 'ünïcødé', labels: { 'ключ🙂': '值🙂' } } }, { '🙂': '🙂🙂', e: 'é'.repeat(5) }];
  const text = JSON.stringify({ apiVersion: 'v1', items, kind: 'L', metadata: { resourceVersion: '1', 'ü🙂': 'é' } });
  const bytes = enc.encode(text);
  for (let cut = 1; cut < bytes.length; cut++) assert.deepEqual(parseChunked(bytes, [cut, 1, bytes.length]).list, JSON.parse(text), `cut ${cut}`);
  // A BOM at the start is dropped (as Response.text() does); one inside a string is kept.
  const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode('{"items":[{"a":"\ufeffx"}]}')]);
  assert.deepEqual(parseChunked(bom, [1]).list, { items: [{ a: '\ufeffx' }] });
});

test('escaped quotes and backslashes in strings, cut at every byte', () => {
  const strings = ['\\', '\\\\', '"', '\\"', '"\\', 'a\\\\\\"b', '\\u0022', '\\\\\\\\', '}]', '{['];
  const items = strings.map((s, i) => ({ [s]: s, n: i, nested: [s, { [s]: [s] }] }));
  const text = JSON.stringify({ items, metadata: { continue: '\\"' } });
  const bytes = enc.encode(text);
  for (let cut = 1; cut < bytes.length; cut++) assert.deepEqual(parseChunked(bytes, [cut, 2]).list, JSON.parse(text), `cut ${cut}`);
  // Written escapes (\u0022, \/) as a server may send them.
  const raw = '{"items":[{"a":"\\u0022\\/\\\\"},"\\"",{"b\\"":"]"}],"kind":"L"}';
  assert.deepEqual(parseChunked(enc.encode(raw), [1]).list, JSON.parse(raw));
});

test('empty items, no items, items that are not an array, scalar and nested items, whitespace everywhere', () => {
  const bodies = [
    '{"apiVersion":"v1","items":[],"kind":"L","metadata":{"resourceVersion":"1"}}',
    '{"kind":"L","metadata":{}}',
    '{"items":null,"kind":"L"}',
    '{"items":{"a":[1,2]},"kind":"L"}',
    '{"items":[1,-2.5e3,true,false,null,"s",[],[[1]],{}],"kind":"L"}',
    ' \n{ "items" : [ { "a" : 1 } , 2 ,\t"x" , [ 3 ] ] , "metadata" : { "continue" : "" } } \n',
    '{"metadata":{"a":{"items":[1]}},"x":[{"items":[2]}],"items":[{"items":[3]}]}',
    '{"items":[1],"items":[2,3]}',
    '[{"items":[1]}]',
    '"just a string"',
    '{}',
  ];
  for (const body of bodies) {
    const bytes = enc.encode(body);
    for (const sizes of [[1], [2], [3], [bytes.length]]) assert.deepEqual(parseChunked(bytes, sizes).list, JSON.parse(body), `${body} in ${sizes}`);
  }
});

test('what JSON.parse rejects is rejected, at any chunking', () => {
  const bad = [
    '',
    '{"items":[{"a":1}',
    '{"items":[{"a":1}}',
    '{"items":[{"a":1} {"b":2}]}',
    '{"items":[{"a":1},]}',
    '{"items":[,{"a":1}]}',
    '{"items":[{"a":1}],}',
    '{"items":[{"a":"unterminated}]}',
    '{"items":[{"a":1}]}}',
    '{"items":[{"a":1}]} x',
    '{"items":[{"a":tru}]}',
    '{"items":[1 2]}',
    '{"items":[1,,2]}',
    '{"items":[{"a":1]}]}',
    '{"items":["a\\"]}',
    '{"kind":"L","metadata":{"continue":"x"}',
  ];
  for (const body of bad) {
    assert.throws(() => JSON.parse(body), SyntaxError, `JSON.parse accepts ${body}`);
    const bytes = enc.encode(body);
    for (const sizes of [[1], [4], [Math.max(1, bytes.length)]]) {
      assert.throws(() => parseChunked(bytes, sizes), (e) => e instanceof ListBodySyntaxError, `${body} in ${sizes}`);
    }
  }
});

test('fuzz: random lists at random chunkings equal JSON.parse of the whole body', () => {
  for (let seed = 1; seed <= 300; seed++) {
    const r = rng(seed);
    const items = Array.from({ length: Math.floor(r() * 8) }, (_, i) => (r() < 0.8 ? kubeObject(i, r) : randomValue(r, 0)));
    const text = listBody(items, { metadataFirst: r() < 0.5, indent: r() < 0.3 ? 2 : undefined, cont: r() < 0.5 ? randomString(r) : undefined });
    const bytes = enc.encode(text);
    const sizes = Array.from({ length: 5 }, () => 1 + Math.floor(r() * (r() < 0.5 ? 8 : 200)));
    const seen: unknown[] = [];
    const { list } = parseChunked(bytes, sizes, (x) => (seen.push(x), x));
    assert.deepEqual(list, JSON.parse(text), `seed ${seed}`);
    assert.equal(seen.length, items.length, `seed ${seed}`);
  }
});

test('fuzz: a mutated body is accepted exactly when JSON.parse accepts it, with the same result', () => {
  const structural = [...'{}[],:" \\'].map((c) => c.charCodeAt(0));
  let rejected = 0;
  for (let seed = 1; seed <= 1500; seed++) {
    const r = rng(seed * 7919);
    const items = Array.from({ length: 1 + Math.floor(r() * 4) }, (_, i) => (r() < 0.7 ? kubeObject(i, r) : randomValue(r, 0)));
    const good = enc.encode(listBody(items, { metadataFirst: r() < 0.5 }));
    const bytes = Array.from(good);
    for (let m = 1 + Math.floor(r() * 2); m > 0; m--) {
      const at = Math.floor(r() * bytes.length);
      const op = r();
      if (op < 0.4) bytes.splice(at, 1);
      else if (op < 0.8) bytes.splice(at, 0, structural[Math.floor(r() * structural.length)]!);
      else bytes[at] = structural[Math.floor(r() * structural.length)]!;
    }
    const mutated = new Uint8Array(bytes);
    let want: unknown;
    let wantError = false;
    try {
      want = JSON.parse(new TextDecoder().decode(mutated));
    } catch {
      wantError = true;
    }
    const sizes = [1 + Math.floor(r() * 50), 1 + Math.floor(r() * 3)];
    if (wantError) {
      rejected++;
      assert.throws(() => parseChunked(mutated, sizes), (e) => e instanceof ListBodySyntaxError, `seed ${seed}: ${new TextDecoder().decode(mutated)}`);
    } else {
      assert.deepEqual(parseChunked(mutated, sizes).list, want, `seed ${seed}`);
    }
  }
  assert.ok(rejected > 500, `the mutations made invalid bodies (${rejected})`);
});
