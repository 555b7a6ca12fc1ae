import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  and,
  annotationChanged,
  generationChanged,
  labelChanged,
  labelSelector,
  not,
  or,
  predicateFuncs,
  resourceVersionChanged,
  type Predicate,
} from '../../../src/core/controller/predicate.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';

const obj = (meta: KubeObject['metadata']): KubeObject => ({ metadata: { name: 'a', namespace: 'ns', ...meta } });
const update = (p: Predicate, o: KubeObject['metadata'], n: KubeObject['metadata'], isResync = false) =>
  p.update({ objectOld: obj(o), objectNew: obj(n), isResync });

test('predicateFuncs: missing callbacks pass', () => {
  const p = predicateFuncs('onlyUpdates', { update: () => false });
  assert.equal(p.create({ object: obj({}), isInInitialList: false }), true);
  assert.equal(p.delete({ object: obj({}), deleteStateUnknown: false }), true);
  assert.equal(update(p, {}, {}), false);
});

test('generationChanged: updates pass only on a generation change (resyncs and relist updates included); create and delete pass', () => {
  const p = generationChanged();
  assert.equal(update(p, { generation: 1, resourceVersion: '1' }, { generation: 1, resourceVersion: '2' }), false, 'status write');
  assert.equal(update(p, { generation: 1, resourceVersion: '1' }, { generation: 2, resourceVersion: '2' }), true, 'spec change');
  assert.equal(update(p, { generation: 1, resourceVersion: '2' }, { generation: 1, resourceVersion: '2' }, true), false, 'a resync is dropped, as in controller-runtime');
  assert.equal(update(p, { generation: 1, resourceVersion: '2' }, { generation: 2, resourceVersion: '2' }, true), true, 'an update with a new generation always passes');
  assert.equal(p.create({ object: obj({ generation: 1 }), isInInitialList: true }), true);
  assert.equal(p.delete({ object: obj({ generation: 1 }), deleteStateUnknown: true }), true);
  assert.equal(p.name, 'generationChanged');
  const healing = generationChanged({ passResync: true });
  assert.equal(update(healing, { generation: 1, resourceVersion: '2' }, { generation: 1, resourceVersion: '2' }, true), true, 'resyncs pass on request');
  assert.equal(update(healing, { generation: 1, resourceVersion: '1' }, { generation: 1, resourceVersion: '2' }), false, 'status writes stay dropped');
  assert.equal(healing.name, 'generationChanged(passResync)');
});

test('resourceVersionChanged drops resyncs and no-op updates', () => {
  const p = resourceVersionChanged();
  assert.equal(update(p, { resourceVersion: '5' }, { resourceVersion: '5' }, true), false);
  assert.equal(update(p, { resourceVersion: '5' }, { resourceVersion: '6' }), true);
});

test('labelChanged and annotationChanged compare the maps', () => {
  const l = labelChanged();
  assert.equal(update(l, { labels: { a: '1' } }, { labels: { a: '1' } }), false);
  assert.equal(update(l, { labels: { a: '1' } }, { labels: { a: '2' } }), true);
  assert.equal(update(l, { labels: { a: '1' } }, { labels: { a: '1', b: '1' } }), true);
  assert.equal(update(l, {}, { labels: {} }), false, 'absent equals empty');
  assert.equal(update(l, { labels: { a: '1' } }, {}), true);
  const a = annotationChanged();
  assert.equal(update(a, { annotations: { x: 'y' }, labels: { a: '1' } }, { annotations: { x: 'y' }, labels: { a: '2' } }), false);
  assert.equal(update(a, { annotations: { x: 'y' } }, { annotations: { x: 'z' } }), true);
});

test('labelSelector matches every pair on the (new) object', () => {
  const p = labelSelector({ app: 'web', tier: 'fe' });
  assert.equal(p.create({ object: obj({ labels: { app: 'web', tier: 'fe', x: '1' } }), isInInitialList: false }), true);
  assert.equal(p.create({ object: obj({ labels: { app: 'web' } }), isInInitialList: false }), false);
  assert.equal(update(p, {}, { labels: { app: 'web', tier: 'fe' } }), true);
  assert.equal(p.delete({ object: obj({}), deleteStateUnknown: false }), false);
  assert.match(p.name, /app=web,tier=fe/);
});

test('labelSelector takes a metav1.LabelSelector with matchExpressions (controller-runtime LabelSelectorPredicate) and the string syntax', () => {
  const p = labelSelector({
    matchLabels: { app: 'web' },
    matchExpressions: [
      { key: 'tier', operator: 'In', values: ['fe', 'be'] },
      { key: 'legacy', operator: 'DoesNotExist' },
      { key: 'env', operator: 'NotIn', values: ['prod'] },
      { key: 'team', operator: 'Exists' },
    ],
  });
  const create = (labels: Record<string, string>) => p.create({ object: obj({ labels }), isInInitialList: false });
  assert.equal(create({ app: 'web', tier: 'fe', team: 'a' }), true);
  assert.equal(create({ app: 'web', tier: 'be', team: 'a', env: 'dev' }), true);
  assert.equal(create({ app: 'web', tier: 'db', team: 'a' }), false, 'In');
  assert.equal(create({ app: 'web', tier: 'fe', team: 'a', legacy: 'y' }), false, 'DoesNotExist');
  assert.equal(create({ app: 'web', tier: 'fe', team: 'a', env: 'prod' }), false, 'NotIn');
  assert.equal(create({ app: 'web', tier: 'fe' }), false, 'Exists');
  assert.equal(create({ app: 'api', tier: 'fe', team: 'a' }), false, 'matchLabels');
  assert.equal(update(p, { labels: { app: 'web', tier: 'fe', team: 'a' } }, { labels: { app: 'web', tier: 'db', team: 'a' } }), false, 'the new object decides');
  assert.match(p.name, /app=web,tier in \(fe,be\),!legacy,env!=prod,team/);
  assert.equal(labelSelector({}).create({ object: obj({}), isInInitialList: false }), true, 'an empty selector matches everything');
  assert.equal(labelSelector('app=web,!legacy').create({ object: obj({ labels: { app: 'web' } }), isInInitialList: false }), true);
  assert.throws(() => labelSelector({ matchExpressions: [{ key: 'tier', operator: 'In', values: [] }] }), /needs values/);
});

test('and / or / not combine, with names for the journal', () => {
  const yes = predicateFuncs('yes', {});
  const no = predicateFuncs('no', { create: () => false, update: () => false, delete: () => false });
  const c = { object: obj({}), isInInitialList: false };
  assert.equal(and(yes, no).create(c), false);
  assert.equal(and(yes, yes).create(c), true);
  assert.equal(and().create(c), true);
  assert.equal(or(yes, no).create(c), true);
  assert.equal(or(no, no).create(c), false);
  assert.equal(or().create(c), false);
  assert.equal(not(no).create(c), true);
  assert.equal(not(yes).delete({ object: obj({}), deleteStateUnknown: false }), false);
  assert.equal(or(generationChanged(), labelChanged()).name, 'or(generationChanged, labelChanged)');
  assert.equal(update(or(generationChanged(), labelChanged()), { generation: 1, labels: { a: '1' } }, { generation: 1, labels: { a: '2' } }), true);
  assert.equal(update(and(generationChanged(), labelChanged()), { generation: 1, labels: { a: '1' } }, { generation: 1, labels: { a: '2' } }), false);
});

test('generationChanged / resourceVersionChanged read an absent field as Go does (generation 0, resourceVersion "")', () => {
  // JSON omits a zero generation (omitempty), so one side may carry 0 and the other nothing: unchanged, as in
  // controller-runtime, where GetGeneration() is 0 for both.
  assert.equal(update(generationChanged(), { generation: 0 }, {}), false);
  assert.equal(update(generationChanged(), {}, { generation: 0 }), false);
  assert.equal(update(generationChanged(), {}, { generation: 1 }), true);
  assert.equal(update(resourceVersionChanged(), { resourceVersion: '' }, {}), false);
  assert.equal(update(resourceVersionChanged(), {}, { resourceVersion: '7' }), true);
});
