// A write to a Secret that the real kube-apiserver refuses: its error message quotes the patched object, every
// value of the Secret with it. The client's ApiError (what journals, notifications, dry-run plans and the CLI show,
// and what a module reconciler catches) carries the field path and the reason, and none of the values.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, getTestCluster, type TestCluster } from './support/cluster.ts';
import { createDynamicClient, type DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import { ApiError } from '../../src/core/k8s/client.ts';
import type { GroupVersionResource } from '../../src/core/k8s/objects.ts';

const SECRETS: GroupVersionResource = { group: '', version: 'v1', resource: 'secrets' };
const CONFIGMAPS: GroupVersionResource = { group: '', version: 'v1', resource: 'configmaps' };

describe('a refused Secret write: the error names the problem, not the values', () => {
  let c: TestCluster;
  let client: DynamicKubeClient;
  let ns: string;
  const stored = 'SUPERSECRET-P1';
  const sent = 'PATCHSECRET-notbase64!!';
  before(async () => {
    c = await getTestCluster();
    client = createDynamicClient(c.transport, { fieldManager: 'reconcile-lab' });
    ns = await createNamespace(c.transport, 'secret-err');
    await client.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'patch.me-1', namespace: ns }, type: 'Opaque', data: { apiKey: Buffer.from(stored).toString('base64') }, stringData: { pin: 'pin-4711' } });
  });

  /** The refusal of `write`, an ApiError (it must fail). */
  async function refusal(write: () => Promise<unknown>): Promise<ApiError> {
    const e = await write().then(() => undefined, (err: unknown) => err);
    assert.ok(e instanceof ApiError, `refused: ${String(e)}`);
    return e;
  }

  const leaks = (text: string) => [stored, Buffer.from(stored).toString('base64'), sent, 'pin-4711', Buffer.from('pin-4711').toString('base64')].filter((v) => text.includes(v));

  test('a merge patch with a value that is not base64: 422 with the field and reason, no value', async () => {
    const e = await refusal(() => client.patch(SECRETS, ns, 'patch.me-1', 'merge', { data: { bad: sent } }));
    assert.equal(e.code, 422);
    const text = `${e.message} ${JSON.stringify(e.details)}`;
    assert.deepEqual(leaks(text), [], text);
    assert.match(e.message, /is invalid/);
    assert.match(e.message, /Invalid value: "\*\*\*"/);
    assert.match(e.message, /base64/, 'the reason stays');
  });

  test('a create with an invalid key: refused, no value of the body in the error', async () => {
    const e = await refusal(() => client.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bad-key', namespace: ns }, type: 'Opaque', stringData: { 'bad key!': sent } }));
    assert.equal(e.code, 422);
    assert.deepEqual(leaks(`${e.message} ${JSON.stringify(e.details)}`), [], e.message);
    assert.match(e.message, /data\[bad key!\]|bad key/, `the field path stays: ${e.message}`);
  });

  test('the same refusal on a ConfigMap keeps the server\'s message as it is (only Secrets are masked)', async () => {
    await client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: ns }, data: { a: 'b' } });
    const e = await refusal(() => client.patch(CONFIGMAPS, ns, 'cm', 'merge', { binaryData: { bad: sent } }));
    assert.equal(e.code, 422);
    assert.ok(e.message.includes(sent), e.message);
  });
});
