import { test } from 'node:test';
import assert from 'node:assert/strict';
import { failingAdvice, hotLoopAdvice } from '../../../src/core/checks/runChecks.ts';
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

test('failingAdvice: in the terms of the reconciler\'s protocol; a module refused by its loader is told to fix the file, not to return a requeue', () => {
  assert.match(failingAdvice('go', 'broker unreachable'), /return a RequeueAfter \(or a TerminalError/);
  assert.match(failingAdvice('lab', 'broker unreachable'), /return a RequeueAfter/);
  const mod = failingAdvice('module', 'broker unreachable');
  assert.match(mod, /return \{ requeueAfterMs, reason \} \(or throw an error with terminal: true/);
  assert.doesNotMatch(mod, /RequeueAfter|TerminalError/);
  assert.match(failingAdvice('exec', 'exit status 3'), /print \{"requeueAfterMs": …, "reason": …\} \(or \{"error": …, "terminal": true\}/);
  for (const m of [
    '/w/pizza.ts: reconcile() returned a Result with unknown field "requeueAfter" (did you mean "requeueAfterMs"?); a Result has requeueAfterMs, reason, priority, requeue',
    '/w/pizza.ts: reconcile() must resolve to a Result object or undefined (got string)',
    '/w/pizza.ts: requeueAfterMs must be a number >= 0 (got "5s")',
    '/w/pizza.ts: requeue must be a boolean (got "yes")',
    '/w/pizza.ts: reconcile() returned a Result with 2 problems: requeue must be a boolean (got "yes"); unknown field "requeueAfter" (did you mean "requeueAfterMs"?); a Result has requeueAfterMs, reason, priority, requeue',
    'cannot compile /w/pizza.ts:\npizza.ts:1:23: Unexpected ";"',
    'loading /w/pizza.ts failed: SyntaxError: "undefined" is not valid JSON',
    '/w/pizza.ts must export a function "reconcile(request, ctx)" (named export, default export, or default { reconcile }) (it exports reconciler: did you mean reconcile?)',
  ]) {
    const a = failingAdvice('module', m);
    assert.match(a, /^The error is about the module itself, not the object[^]*Fix the module file/, m);
    assert.doesNotMatch(a, /requeueAfterMs, reason|RequeueAfter/, m);
  }
  assert.match(failingAdvice('module', 'TypeError: Cannot read properties of undefined (reading \'toppings\')'), /return \{ requeueAfterMs/, 'a bug in reconcile() is no loader refusal');
});
