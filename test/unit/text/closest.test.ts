import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closestNames } from '../../../src/core/text/closest.ts';

test('closestNames: typos within two edits (three for long names) and prefixes, closest first, at most three', () => {
  assert.deepEqual(closestNames('rosee', ['rose', 'tulip', 'lily']), ['rose']);
  assert.deepEqual(closestNames('h2-gardn', ['default', 'h2-garden', 'kube-system']), ['h2-garden']);
  assert.deepEqual(closestNames('gardenz', ['gardens', 'greenhouses', 'sheds']), ['gardens']);
  assert.deepEqual(closestNames('widget', ['widget-ready', 'widget-waiting', 'widget-stuck', 'gadget']), ['widget-ready', 'widget-stuck', 'widget-waiting'], 'a prefix counts as one edit (gadget is two); then fewer edits, then by name');
  assert.deepEqual(closestNames('shop', ['shed', 'stop']), ['stop', 'shed'], 'one edit before two');
  assert.deepEqual(closestNames('prod-north', ['prod-east', 'staging']), [], 'more than two edits away, a short name: not a typo');
  assert.deepEqual(closestNames('production-wst', ['production-west']), ['production-west']);
  assert.deepEqual(closestNames('rose', ['rose']), [], 'the name itself is no suggestion');
  assert.deepEqual(closestNames('x', []), []);
});

test('closestNames ignores case (field names: RequeueAfter, requeueafterms)', () => {
  assert.deepEqual(closestNames('RequeueAfter', ['requeueAfterMs', 'reason', 'priority', 'requeue']), ['requeueAfterMs', 'requeue'], 'among prefixes, fewer edits first');
  assert.deepEqual(closestNames('requeueafterms', ['requeueAfterMs', 'reason']), ['requeueAfterMs']);
});
