import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectedKeyOf, stepTargetOf, stepTargetText } from '../../../../src/host/views/stepTarget.ts';

const P = 'widgets.lab.reconcile.dev';

test('a selection names a loop key: an object of the loop resource, a row under it, or a Work Queue row', () => {
  assert.equal(selectedKeyOf({ type: 'object', resource: P, key: 'ns/a' }, P), 'ns/a');
  assert.equal(selectedKeyOf({ type: 'finalizer', resource: P, key: 'ns/a' }, P), 'ns/a');
  assert.equal(selectedKeyOf({ type: 'condition', resource: P, key: 'ns/a' }, P), 'ns/a');
  assert.equal(selectedKeyOf({ type: 'queueKey', resource: P, key: 'ns/b' }, P), 'ns/b');
  assert.equal(selectedKeyOf({ type: 'detail', parent: { type: 'queueKey', resource: P, key: 'ns/c' } } as never, P), 'ns/c');
  assert.equal(selectedKeyOf({ type: 'object', resource: 'configmaps', key: 'ns/a-config' }, P), undefined, 'an owned ConfigMap is not a loop key');
  assert.equal(selectedKeyOf({ type: 'kind', resource: P }, P), undefined);
  assert.equal(selectedKeyOf({ type: 'namespace', resource: P }, P), undefined);
  assert.equal(selectedKeyOf(undefined, P), undefined);
  assert.equal(selectedKeyOf({ type: 'object', resource: P, key: 'ns/a' }, undefined), undefined, 'no loop: no key');
});

test('step target: the selected key when it exists, else the head of the queue; the text says which', () => {
  const exists = (k: string) => k !== 'ns/gone';
  assert.deepEqual(stepTargetOf('ns/sel', ['ns/head', 'ns/x'], exists), { key: 'ns/sel', source: 'selection' });
  assert.deepEqual(stepTargetOf(undefined, ['ns/head'], exists), { key: 'ns/head', source: 'queue' });
  assert.deepEqual(stepTargetOf('ns/gone', ['ns/head'], exists), { key: 'ns/head', source: 'queue' });
  assert.equal(stepTargetOf(undefined, [], exists), undefined);
  assert.equal(stepTargetText({ key: 'ns/sel', source: 'selection' }), 'Step ns/sel (selected)');
  assert.equal(stepTargetText({ key: 'ns/head', source: 'queue' }), 'Step ns/head (next in queue)');
  assert.equal(stepTargetText(undefined), 'Step: nothing queued');
});
