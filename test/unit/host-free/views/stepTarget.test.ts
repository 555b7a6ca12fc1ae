import { test } from 'node:test';
import assert from 'node:assert/strict';
import { otherControllersNote, pausedQueueMessage, selectedKeyOf, selectionAfter, stepTargetOf, stepTargetText } from '../../../../src/host/views/stepTarget.ts';

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

test('the latest selection wins; a Work Queue row that leaves the queue hands the selection back to the Resources view\'s, not to the head of the queue', () => {
  const inResources = selectionAfter(undefined, { view: 'resources', key: 'kitchen/cold-oven', emptied: false }, undefined);
  assert.deepEqual(inResources, { key: 'kitchen/cold-oven', view: 'resources' });
  // Later a queue row is clicked: it wins.
  const inQueue = selectionAfter(inResources, { view: 'queue', key: 'kitchen/pizza-hot', emptied: false }, 'kitchen/cold-oven');
  assert.deepEqual(inQueue, { key: 'kitchen/pizza-hot', view: 'queue' });
  // That row leaves the queue (reconciled, or the loop stopped): the Resources view still shows cold-oven selected.
  assert.deepEqual(selectionAfter(inQueue, { view: 'queue', key: undefined, emptied: true }, 'kitchen/cold-oven'), { key: 'kitchen/cold-oven', view: 'resources' });
  // Nothing selected over there either: no key.
  assert.deepEqual(selectionAfter(inQueue, { view: 'queue', key: undefined, emptied: true }, undefined), { key: undefined, view: 'resources' });
  // An emptied selection in the other view does not undo the latest one.
  assert.deepEqual(selectionAfter(inQueue, { view: 'resources', key: undefined, emptied: true }, 'kitchen/pizza-hot'), inQueue);
  // A row that selects no key (a kind row) is a selection too: it clears the key.
  assert.deepEqual(selectionAfter(inQueue, { view: 'resources', key: undefined, emptied: false }, 'kitchen/pizza-hot'), { key: undefined, view: 'resources' });
});

test('with the loop stopped and nothing selected, the step text does not claim "nothing queued": Step starts the loop first', () => {
  assert.equal(stepTargetText(undefined, true), 'Step: starts the loop paused, then the head of its queue');
  assert.equal(stepTargetText({ key: 'ns/sel', source: 'selection' }, true), 'Step ns/sel (selected)');
});

test('the paused Work Queue message names the key Step reconciles once, or says nothing is queued to step', () => {
  assert.equal(
    pausedQueueMessage({ key: 'team-a/blinky', source: 'queue' }, '2 queued (client-go queue: FIFO)'),
    'Paused: F10 / Step reconciles team-a/blinky once (next in queue); Resume runs the loop. Queue: 2 queued (client-go queue: FIFO).',
  );
  assert.match(pausedQueueMessage({ key: 'saguaro', source: 'selection' }, '1 queued'), /Step reconciles saguaro once \(selected\)/);
  const empty = pausedQueueMessage(undefined, 'nothing queued');
  assert.equal(empty, 'Paused: nothing to step yet (an event or Reconcile Now queues a key); Resume runs the loop. Queue: nothing queued.');
  assert.doesNotMatch(empty, /Step: nothing queued|\(Step /, 'no nested "Step …" text');
});

test('the controllers not shown are named with their pause state and queue, and how to see one; none: no note', () => {
  assert.equal(otherControllersNote([]), undefined);
  assert.equal(
    otherControllersNote([{ name: 'gadget', paused: true, queued: 16, processing: 0, waiting: 0 }]),
    'Not shown here: gadget (paused, 16 queued). Pause, Resume and Step act on the controller shown; Show Controller… switches.',
  );
  assert.equal(
    otherControllersNote([
      { name: 'deployment', paused: false, queued: 0, processing: 2, waiting: 3 },
      { name: 'x](http://evil)', paused: false, queued: 0, processing: 0, waiting: 0 },
    ]),
    'Not shown here: deployment (running, 2 processing, 3 waiting), a controller (running). Pause, Resume and Step act on the controller shown; Show Controller… switches.',
  );
});
