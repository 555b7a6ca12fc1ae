import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hotLoopAdvice } from '../../../src/core/checks/runChecks.ts';
import type { WriteRecord } from '../../../src/core/k8s/dynamicClient.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';

const PIZZAS = { group: 'food.example.dev', version: 'v1', resource: 'pizzas' };
const CM = { group: '', version: 'v1', resource: 'configmaps' };

function write(gvr: typeof CM, name: string, after: KubeObject, subresource?: string): WriteRecord {
  return { verb: subresource ? 'update' : 'patch', gvr, namespace: 'ns', name, key: `ns/${name}`, dryRun: false, after, outcome: 'ok', startedAt: 0, durationMs: 0, ...(subresource ? { subresource } : {}) };
}
const pizza = (finalizers: string[], rv: string): KubeObject => ({ apiVersion: 'food.example.dev/v1', kind: 'Pizza', metadata: { namespace: 'ns', name: 'margherita', resourceVersion: rv, finalizers } });
const order = (toppings: string, rv: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', name: 'margherita-order', resourceVersion: rv }, data: { toppings } });

test('hotLoopAdvice: a finalizer appended on every pass is named as a growing list (its items collapsed), with advice for the object, not for status', () => {
  const F = 'food.example.dev/oven';
  const ws = [1, 2, 3, 4].map((n) => write(PIZZAS, 'margherita', pizza(Array(n).fill(F), String(10 + n))));
  const text = hotLoopAdvice(ws, ['metadata.finalizers[1]', 'metadata.finalizers[2]', 'metadata.finalizers[3]']);
  assert.match(text, /^The fields that change on every write: metadata\.finalizers\. /, text);
  assert.match(text, /metadata\.finalizers grows on every write \(1 → 2 → 3 → … items\): the reconcile appends to it on every pass instead of adding only what is missing; look for the item first \(a finalizer: add it only when metadata\.finalizers lacks it\)\./, text);
  assert.match(text, /Compare pizzas\.food\.example\.dev ns\/margherita with what you want and write it only when they differ/, text);
  assert.doesNotMatch(text, /Write status only/, text);
});

test('hotLoopAdvice: a child value that extends itself on every write is named; a status rewritten with a timestamp gets the status advice and no growth', () => {
  const ws = ['tomato', 'tomato,tomato', 'tomato,tomato,tomato'].map((t, i) => write(CM, 'margherita-order', order(t, String(20 + i))));
  const child = hotLoopAdvice(ws, ['data.toppings']);
  assert.match(child, /data\.toppings grows on every write \(each value extends the one before\): the reconcile appends to the value that is there instead of building it from the spec/, child);
  assert.match(child, /Compare configmaps ns\/margherita-order with what you want/, child);
  const stamped = ['2026-12-06T21:00:01Z', '2026-12-06T21:00:02Z', '2026-12-06T21:00:03Z'].map((t, i) =>
    write(PIZZAS, 'margherita', { ...pizza([], String(30 + i)), status: { bakedAt: t, conditions: [{ type: 'Ready', status: 'True' }] } }, 'status'));
  const status = hotLoopAdvice(stamped, ['status.bakedAt']);
  assert.equal(status, 'The fields that change on every write: status.bakedAt. Write status only when it differs from what is there, and keep values that change on every pass (timestamps, counters) out of it.');
});
