// thrownValueText: how a message shows a value a reconciler threw that is not an Error (src/core/reconcilers/thrownValue.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { runInNewContext } from 'node:vm';
import { isErrorValue, thrownValueText } from '../../../src/core/reconcilers/thrownValue.ts';

test('thrownValueText: strings quoted and cut to 80 characters, primitives as written, objects as short JSON, the rest by name', () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  class Pending {
    self = this;
  }
  const cases: Array<[unknown, string]> = [
    ['not ready', 'the string "not ready"'],
    ['line\nbreak\u001b[31m', 'the string "line\\nbreak\\u001b[31m"'],
    ['y'.repeat(81), `the string "${'y'.repeat(80)}…"`],
    [42, 'the number 42'],
    [false, 'the boolean false'],
    [5n, 'the bigint 5n'],
    [undefined, 'undefined'],
    [null, 'null'],
    [Symbol('why'), 'a symbol ("why")'],
    [function later() {}, 'a function (later)'],
    [{ code: 1 }, 'the object {"code":1}'],
    [[1, 'two'], 'the array [1,"two"]'],
    [{ big: 1n }, 'the object {"big":"1n"}'],
    [{ text: 'z'.repeat(200) }, `the object {"text":"${'z'.repeat(71)}…`],
    [cyclic, 'an object (Object) that JSON cannot show'],
    [new Pending(), 'an object (Pending) that JSON cannot show'],
    [{ toJSON() { throw new Error('no'); } }, 'an object (Object) that JSON cannot show'],
  ];
  for (const [v, want] of cases) assert.equal(thrownValueText(v), want, inspect(v));
  assert.doesNotMatch(thrownValueText({ kind: 'Secret', apiVersion: 'v1', data: { token: 'c2VjcmV0' } }), /c2VjcmV0/);
});

test('isErrorValue: Errors of this realm and of another (vm) are Errors; error-like objects are not', () => {
  assert.equal(isErrorValue(new TypeError('x')), true);
  assert.equal(isErrorValue(runInNewContext('new Error("elsewhere")')), true);
  assert.equal(isErrorValue({ name: 'Error', message: 'x', stack: 'x' }), false);
  assert.equal(isErrorValue('x'), false);
});
