import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shortKey } from '../../../src/core/k8s/keys.ts';

test('shortKey keeps a long key within the status bar, its start and its end', () => {
  assert.equal(shortKey('ns/name'), 'ns/name');
  const long = `very-long-policy-name-${'x'.repeat(200)}.example.org`;
  const short = shortKey(long);
  assert.equal(short.length, 48);
  assert.ok(short.startsWith('very-long-policy-name-'), short);
  assert.ok(short.endsWith('xx.example.org'), short);
  assert.match(short, /…/);
  assert.equal(shortKey('a'.repeat(48)), 'a'.repeat(48));
});

test('shortKey with another width: exactly max characters, one ellipsis, start and end kept', () => {
  const key = `team-a/${'p'.repeat(100)}-end`;
  const s = shortKey(key, 60);
  assert.equal(s.length, 60);
  assert.equal(s.split('…').length, 2);
  assert.ok(s.startsWith('team-a/ppp'), s);
  assert.ok(s.endsWith('ppp-end'), s);
  assert.equal(shortKey('b'.repeat(60), 60), 'b'.repeat(60));
  assert.equal(shortKey('b'.repeat(61), 60).length, 60);
});
