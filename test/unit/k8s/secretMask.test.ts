import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { isSecret, isSecretPath, LAST_APPLIED, MASK, maskSecret, maskSecretPair, maskSecretText } from '../../../src/core/k8s/secretMask.ts';
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

test('isSecretPath: the Secrets collection (all namespaces or one), one Secret and its subresources; nothing else', () => {
  for (const p of ['/api/v1/secrets', '/api/v1/secrets?limit=5', '/api/v1/namespaces/shop/secrets', '/api/v1/namespaces/shop/secrets/db', '/api/v1/namespaces/shop/secrets/db?dryRun=All&fieldManager=x']) {
    assert.ok(isSecretPath(p), p);
  }
  for (const p of ['/api/v1/namespaces/secrets', '/api/v1/namespaces/shop/configmaps/secrets', '/apis/example.io/v1/namespaces/shop/secrets/db', '/api/v1/namespaces/shop/secretsx']) {
    assert.ok(!isSecretPath(p), p);
  }
});

test('maskSecretText: a 422 quoting the patched Secret keeps the field path and reason, and no value (sent, stored, base64 or decoded)', () => {
  // As kube-apiserver words a merge patch it could not apply to a Secret: the patched object quoted with Go's %q.
  const stored = Buffer.from('SUPERSECRET-P1').toString('base64');
  const msg = `secrets "patch.me-1" is invalid: patch: Invalid value: "{\\"apiVersion\\":\\"v1\\",\\"data\\":{\\"apiKey\\":\\"${stored}\\",\\"bad\\":\\"PATCHSECRET-notbase64!!\\",\\"pin\\":\\"MTIz\\"},\\"kind\\":\\"Secret\\"}": error decoding from json: illegal base64 data at input byte 11`;
  const out = maskSecretText(msg, { data: { bad: 'PATCHSECRET-notbase64!!' } });
  for (const leak of [stored, 'SUPERSECRET', 'PATCHSECRET', 'MTIz']) assert.ok(!out.includes(leak), `${leak} in ${out}`);
  assert.equal(out, `secrets "patch.me-1" is invalid: patch: Invalid value: "${MASK}": error decoding from json: illegal base64 data at input byte 11`);
});

test('maskSecretText: values the request sent are masked wherever they appear (stringData also base64-encoded, data also decoded); JSON text bodies too', () => {
  const token = 'tok-9f8e7d';
  const out = maskSecretText(`value ${token} or ${Buffer.from(token).toString('base64')} or plain-pass, field data[x]: Required value`, JSON.stringify({ stringData: { t: token }, data: { p: Buffer.from('plain-pass').toString('base64') } }));
  assert.equal(out, `value ${MASK} or ${MASK} or ${MASK}, field data[x]: Required value`);
  // A non-string rendering of a value is masked up to the field error's next ": ".
  assert.equal(maskSecretText('data: Invalid value: map[string][]uint8{"k":[]uint8{0x61}}: bad'), `data: Invalid value: "${MASK}": bad`);
  // Words and short names stay readable; long base64-looking runs do not.
  assert.equal(maskSecretText('Operation cannot be fulfilled on secrets "db": the object has been modified; aGVsbG8td29ybGQtc2VjcmV0'), `Operation cannot be fulfilled on secrets "db": the object has been modified; ${MASK}`);
});

test('maskSecretText: the cases shared with the Go bridge (bridge/testdata/secretmask.json) — the editor and the bridge mask the same text the same way', () => {
  const doc = JSON.parse(readFileSync(new URL('../../../bridge/testdata/secretmask.json', import.meta.url), 'utf8')) as { cases: Array<{ name: string; text: string; body?: unknown; want: string }> };
  assert.ok(doc.cases.length >= 5, 'the shared cases are there');
  for (const c of doc.cases) assert.equal(maskSecretText(c.text, c.body), c.want, c.name);
  // Not a file of unchanged texts: most cases mask something.
  assert.ok(doc.cases.filter((c) => c.want !== c.text && c.want.includes(MASK)).length >= 5);
});
