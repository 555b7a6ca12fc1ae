import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recordingClient } from '../../../src/core/k8s/dynamicClient.ts';
import type { KubeClient } from '../../../src/core/k8s/client.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };

/** A client whose every call is a failure of the test: the checks must refuse before any request. */
const untouchable = new Proxy({}, { get: () => () => assert.fail('the call reached the client') }) as unknown as KubeClient;

test('the reconciler-facing client refuses a call written another way with its signature and what was passed, before any request', async () => {
  const c = recordingClient(untouchable, { dryRun: false });
  const refused = async (call: () => Promise<unknown>, re: RegExp) => assert.rejects(call(), (e: unknown) => e instanceof TypeError && re.test(e.message));
  // create(resource, namespace, object): the namespace where the object belongs.
  await refused(() => (c.create as (...a: unknown[]) => Promise<unknown>)(CM, 'shop', { metadata: { name: 'x' } }),
    /^ctx\.client\.create\(resource, object, \{ signal\?, dryRun\?, fieldManager\? \}\?\): the second argument is the object itself, with its metadata \(name, namespace\), got "shop" \(the namespace goes in object\.metadata\.namespace\)$/);
  await refused(() => c.create(CM, { metadata: {} } as never), /create\(.*\): the object needs metadata\.name \(or metadata\.generateName\), got undefined/);
  await refused(() => c.update(CM, { data: {} } as never), /^ctx\.client\.update\(resource, object, options\?\): the second argument is the object itself.*got an object with data$/);
  await refused(() => c.get('configmaps' as never, 'shop', 'x'), /^ctx\.client\.get\(resource, namespace, name, signal\?\): the first argument is the resource, \{ group, version, resource \}.*got "configmaps"$/);
  await refused(() => c.get(CM, 'shop', undefined as never), /get\(.*\): the third argument is the name, got undefined$/);
  await refused(() => c.patch(CM, { name: 'x' } as never, 'x', 'merge', {}), /patch\(.*\): the second argument is the namespace \(undefined for a cluster-scoped resource\), got an object with name$/);
  await refused(() => c.delete(CM, 'shop', ''), /delete\(.*\): the third argument is the name, got ""$/);
  await refused(() => c.list(undefined as never, 'shop'), /list\(.*\): the first argument is the resource/);
});

test('calls written right reach the client', async () => {
  const calls: string[] = [];
  const inner = { get: async (_g: unknown, ns: string | undefined, name: string) => (calls.push(`get ${ns}/${name}`), { metadata: { name } }) } as unknown as KubeClient;
  const c = recordingClient(inner, { dryRun: false });
  await c.get(CM, 'shop', 'x');
  await c.get({ group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets' }, undefined, 'cluster-scoped');
  assert.deepEqual(calls, ['get shop/x', 'get undefined/cluster-scoped']);
});
