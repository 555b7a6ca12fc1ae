import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pathSegmentProblem, splitKey } from '../../../src/core/k8s/keys.ts';
import { resourcePath } from '../../../src/core/k8s/paths.ts';
import { parseCliArgs } from '../../../src/cli/args.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };

test('object names and namespaces "." and ".." are refused: a REST path can never climb to another resource', () => {
  for (const bad of ['.', '..', 'a/b', '50%']) assert.ok(pathSegmentProblem(bad), bad);
  for (const good of ['a', 'a.b', '..a', 'a..', '...']) assert.equal(pathSegmentProblem(good), undefined, good);
  assert.throws(() => resourcePath(CM, 'ns', '..'), /refusing the name ".."/);
  assert.throws(() => resourcePath(CM, '..', 'x'), /refusing the namespace ".."/);
  assert.throws(() => resourcePath(CM, 'ns', '.', 'status'), /refusing the name "."/);
  assert.equal(resourcePath(CM, 'ns', '...'), '/api/v1/namespaces/ns/configmaps/...');
  for (const key of ['..', 'ns/..', '../x', '.', 'ns/.']) assert.throws(() => splitKey(key), /may not be "\." or "\.\."/, key);
  assert.deepEqual(splitKey('ns/a.b'), { namespace: 'ns', name: 'a.b' });
});

test('the CLI refuses --namespace ".." as a usage error', () => {
  assert.throws(() => parseCliArgs(['report', '-n', '..']), (e: unknown) => (e as Error).name === 'UsageError' && /may not be/.test((e as Error).message));
});
