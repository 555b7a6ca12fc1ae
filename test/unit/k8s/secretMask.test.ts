import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isSecret, LAST_APPLIED, MASK, maskSecret, maskSecretPair } from '../../../src/core/k8s/secretMask.ts';
import { yamlDiff } from '../../../src/core/actions/objectDiff.ts';

const secret = (data: Record<string, string>, extra: { stringData?: Record<string, string> } = {}) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'db', namespace: 'ns', annotations: { [LAST_APPLIED]: JSON.stringify({ data }), team: 'a' } },
  type: 'Opaque',
  data,
  ...extra,
});

test('a Secret is masked: data, stringData and the last-applied annotation; keys and other fields stay; the input is untouched', () => {
  const s = secret({ password: 'aHVudGVyMg==' }, { stringData: { token: 'plain-token' } });
  const m = maskSecret(s);
  assert.deepEqual(m.data, { password: MASK });
  assert.deepEqual(m.stringData, { token: MASK });
  assert.equal(m.metadata.annotations[LAST_APPLIED], MASK);
  assert.equal(m.metadata.annotations.team, 'a');
  assert.equal(m.type, 'Opaque');
  assert.equal(s.data.password, 'aHVudGVyMg==', 'the input is not changed');
  const text = JSON.stringify(m);
  for (const secretValue of ['aHVudGVyMg==', 'plain-token']) assert.ok(!text.includes(secretValue), secretValue);
});

test('a list item without kind is recognised by type + data; ConfigMaps and other kinds are left alone', () => {
  assert.equal(isSecret({ metadata: { name: 'x' }, type: 'Opaque', data: { a: 'b' } }), true);
  assert.equal(isSecret({ apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'b' } }), false);
  assert.equal(isSecret({ metadata: { name: 'x' }, data: { a: 'b' } }), false, 'a kind-less ConfigMap has no type');
  assert.equal(isSecret({ apiVersion: 'example.com/v1', kind: 'Secret', data: {} }), false);
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'visible' } };
  assert.equal(maskSecret(cm), cm);
});

test('in a pair, unchanged values are ***, changed or added ones *** (before) / *** (after), so a diff still shows which key changed', () => {
  const [a, b] = maskSecretPair(secret({ same: 'czE=', changed: 'b2xk', gone: 'eA==' }), secret({ same: 'czE=', changed: 'bmV3', added: 'eQ==' }));
  assert.deepEqual(a.data, { same: MASK, changed: `${MASK} (before)`, gone: `${MASK} (before)` });
  assert.deepEqual(b.data, { same: MASK, changed: `${MASK} (after)`, added: `${MASK} (after)` });
  assert.equal(a.metadata.annotations[LAST_APPLIED], `${MASK} (before)`);
  const diff = yamlDiff('secrets ns/db', secret({ k: 'b2xk' }), secret({ k: 'bmV3' }), { volatile: true });
  assert.match(diff, /-\s+k: "\*\*\* \(before\)"/);
  assert.match(diff, /\+\s+k: "\*\*\* \(after\)"/);
  assert.ok(!diff.includes('b2xk') && !diff.includes('bmV3'), diff);
  assert.equal(yamlDiff('x', secret({ k: 'b2xk' }), secret({ k: 'bmV3' }), { revealSecrets: true }).includes('bmV3'), true, 'revealSecrets shows them');
  assert.equal(yamlDiff('x', secret({ k: 'b2xk' }), secret({ k: 'b2xk' })), '', 'equal Secrets: no diff');
});
