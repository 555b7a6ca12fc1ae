import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LabelSelectorError, labelSelectorFromSpec, parseLabelSelector } from '../../../src/core/cache/labelSelector.ts';

const cases: Array<[string, Record<string, string> | undefined, boolean]> = [
  ['', undefined, true],
  ['a=b', { a: 'b' }, true],
  ['a=b', { a: 'c' }, false],
  ['a=b', {}, false],
  ['a==b', { a: 'b' }, true],
  ['a!=b', { a: 'c' }, true],
  ['a!=b', { a: 'b' }, false],
  ['a!=b', {}, true],
  ['a', { a: '' }, true],
  ['a', {}, false],
  ['!a', {}, true],
  ['!a', { a: 'x' }, false],
  ['a=b,c!=d,e,!f', { a: 'b', c: 'x', e: '1' }, true],
  ['a=b,c!=d,e,!f', { a: 'b', c: 'd', e: '1' }, false],
  ['a=b,c!=d,e,!f', { a: 'b', e: '1', f: 'y' }, false],
  ['env in (prod, staging)', { env: 'staging' }, true],
  ['env in (prod,staging)', { env: 'dev' }, false],
  ['env in (prod,staging)', {}, false],
  ['env notin (prod,staging)', { env: 'dev' }, true],
  ['env notin (prod,staging)', {}, true],
  ['env notin (prod,staging)', { env: 'prod' }, false],
  ['x in (a,b), y=1', { x: 'b', y: '1' }, true],
  ['app.kubernetes.io/name=web', { 'app.kubernetes.io/name': 'web' }, true],
  ['a=', { a: '' }, true],
  ['n>5', { n: '7' }, true],
  ['n>5', { n: '3' }, false],
  ['n<5', { n: '3' }, true],
  ['n<5', { n: 'x' }, false],
  [' a = b , c ', { a: 'b', c: '' }, true],
];

for (const [sel, labels, want] of cases) {
  test(`selector ${JSON.stringify(sel)} on ${JSON.stringify(labels)} → ${want}`, () => {
    assert.equal(parseLabelSelector(sel).matches(labels), want);
  });
}

test('bad selectors throw LabelSelectorError', () => {
  for (const bad of ['a=b=c', 'a in (b', 'a in b)', ',', 'a=b,', 'in (x)', '-bad=1', 'a=b c', 'a=!!', 'tier in ()', 'tier notin ( )']) {
    assert.throws(() => parseLabelSelector(bad), LabelSelectorError, bad);
  }
});

test('toString round-trips to an equivalent selector', () => {
  const s = parseLabelSelector('a=b,c!=d,e,!f,g in (x,y),h notin (z,w)');
  assert.equal(s.toString(), 'a=b,c!=d,e,!f,g in (x,y),h notin (z,w)');
  assert.deepEqual(parseLabelSelector(s.toString()).requirements, s.requirements);
});

test('metav1.LabelSelector specs: matchLabels AND matchExpressions', () => {
  const s = labelSelectorFromSpec({
    matchLabels: { app: 'web' },
    matchExpressions: [
      { key: 'tier', operator: 'In', values: ['a', 'b'] },
      { key: 'canary', operator: 'DoesNotExist' },
      { key: 'env', operator: 'Exists' },
      { key: 'zone', operator: 'NotIn', values: ['z1'] },
    ],
  });
  assert.equal(s.matches({ app: 'web', tier: 'a', env: 'x' }), true);
  assert.equal(s.matches({ app: 'web', tier: 'a', env: 'x', zone: 'z1' }), false);
  assert.equal(s.matches({ app: 'web', tier: 'a', env: 'x', canary: '1' }), false);
  assert.equal(s.matches({ app: 'web', tier: 'c', env: 'x' }), false);
  assert.equal(labelSelectorFromSpec({}).matches({ any: 'thing' }), true);
  assert.throws(() => labelSelectorFromSpec({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }), LabelSelectorError);
  assert.throws(() => labelSelectorFromSpec({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }), LabelSelectorError);
});
