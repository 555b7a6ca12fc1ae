import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BinaryHeap } from '../../../src/core/workqueue/heap.ts';

interface E { v: number; i: number }

function makeHeap() {
  return new BinaryHeap<E>((a, b) => a.v < b.v, (e, i) => { e.i = i; });
}

function lcg(seed: number) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

test('pops in ascending order for random input', () => {
  const h = makeHeap();
  const rnd = lcg(7);
  const values = Array.from({ length: 500 }, () => Math.floor(rnd() * 1000));
  for (const v of values) h.push({ v, i: -1 });
  const out: number[] = [];
  for (let e = h.pop(); e; e = h.pop()) out.push(e.v);
  assert.deepEqual(out, [...values].sort((a, b) => a - b));
});

test('tracks positions, so removeAt and fix keep the order', () => {
  const h = makeHeap();
  const rnd = lcg(11);
  const all: E[] = Array.from({ length: 200 }, () => ({ v: Math.floor(rnd() * 1000), i: -1 }));
  for (const e of all) h.push(e);
  // remove every third element by its tracked index; it reports -1 afterwards
  const removed = all.filter((_, k) => k % 3 === 0);
  for (const e of removed) {
    const got = h.removeAt(e.i);
    assert.equal(got, e);
    assert.equal(e.i, -1);
  }
  // change keys of the rest in both directions
  const kept = all.filter((_, k) => k % 3 !== 0);
  for (const [k, e] of kept.entries()) {
    e.v = k % 2 ? e.v - 500 : e.v + 500;
    h.fix(e.i);
  }
  const out: number[] = [];
  for (let e = h.pop(); e; e = h.pop()) out.push(e.v);
  assert.deepEqual(out, kept.map((e) => e.v).sort((a, b) => a - b));
});

test('peek, size, clear and out-of-range removal', () => {
  const h = makeHeap();
  assert.equal(h.peek(), undefined);
  assert.equal(h.pop(), undefined);
  const a = { v: 3, i: -1 };
  const b = { v: 1, i: -1 };
  h.push(a);
  h.push(b);
  assert.equal(h.peek(), b);
  assert.equal(h.size, 2);
  assert.throws(() => h.removeAt(5), RangeError);
  h.clear();
  assert.equal(h.size, 0);
  assert.equal(a.i, -1);
  assert.equal(b.i, -1);
});

test('smallest(k) lists the k smallest in order without changing the heap', () => {
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const h = new BinaryHeap<number>((a, b) => a < b);
  const values: number[] = [];
  for (let i = 0; i < 500; i++) {
    const v = Math.floor(rnd() * 1000);
    values.push(v);
    h.push(v);
  }
  const sorted = [...values].sort((a, b) => a - b);
  for (const k of [0, 1, 2, 17, 100, 499, 500, 600]) assert.deepEqual(h.smallest(k), sorted.slice(0, k), `k = ${k}`);
  // The heap is unchanged: popping still yields everything in order.
  const popped: number[] = [];
  for (let v = h.pop(); v !== undefined; v = h.pop()) popped.push(v);
  assert.deepEqual(popped, sorted);
  assert.deepEqual(h.smallest(3), []);
});
