import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FieldSelectorError, parseFieldSelector } from '../../../src/core/cache/fieldSelector.ts';

test('field selectors: =, ==, != on metadata.name and metadata.namespace, all terms must hold', () => {
  const cases: Array<[string, string, string, boolean]> = [
    ['', 'a', 'x', true],
    ['metadata.name=x', 'a', 'x', true],
    ['metadata.name==x', 'a', 'x', true],
    ['metadata.name=x', 'a', 'y', false],
    ['metadata.name!=x', 'a', 'y', true],
    ['metadata.name!=x', 'a', 'x', false],
    ['metadata.namespace=a,metadata.name!=skip', 'a', 'x', true],
    ['metadata.namespace=a,metadata.name!=skip', 'a', 'skip', false],
    ['metadata.namespace=a,metadata.name!=skip', 'b', 'x', false],
    ['metadata.namespace=', '', 'cluster-wide', true],
    ['metadata.namespace!=kube-system', 'kube-system', 'x', false],
  ];
  for (const [sel, ns, name, want] of cases) assert.equal(parseFieldSelector(sel).matchesKey(ns, name), want, `${sel} on ${ns}/${name}`);
});

test('field selectors: escaped values (fields.EscapeValue) and other fields, which are not known from a key', () => {
  const s = parseFieldSelector('metadata.name=a\\,b\\=c\\\\d');
  assert.deepEqual(s.requirements, [{ field: 'metadata.name', operator: '=', value: 'a,b=c\\d' }]);
  assert.equal(s.matchesKey('', 'a,b=c\\d'), true);
  assert.equal(parseFieldSelector('type=Opaque').matchesKey('a', 'x'), undefined);
  assert.equal(parseFieldSelector('metadata.name=x,spec.nodeName=n').matchesKey('a', 'y'), undefined, 'one unknown field: not known, even when a known term fails');
  assert.equal(parseFieldSelector('').empty, true);
});

test('field selectors: bad syntax is a FieldSelectorError', () => {
  assert.throws(() => parseFieldSelector('metadata.name'), FieldSelectorError);
  assert.throws(() => parseFieldSelector('=x'), FieldSelectorError);
  assert.throws(() => parseFieldSelector('metadata.name=a\\x'), FieldSelectorError);
});
