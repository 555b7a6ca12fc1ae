import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generationChanged } from '../../../src/core/controller/predicate.ts';
import { FakeInformer } from './support/fakeInformer.ts';
import { harness, settle, widget } from './support/harness.ts';

test('build needs exactly one for(); options are validated', () => {
  const h = harness();
  assert.throws(() => h.builder.build(h.reconciler), /call for\(primaryInformer\) before build/);
  const b = harness().builder.for(h.widgets);
  assert.throws(() => b.for(h.widgets), /for\(\) was already called/);
  assert.throws(() => harness({ maxConcurrentReconciles: 0 }).builder.for(h.widgets).build(h.reconciler), /maxConcurrentReconciles/);
  assert.throws(() => harness({ name: '' }).builder.for(h.widgets).build(h.reconciler), /needs a name/);
});

test('the built controller is stopped and holds nothing until start; withOptions overrides', async () => {
  const h = harness();
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets, { predicates: [generationChanged()] }).withOptions({ name: 'renamed', startPaused: true }).build(h.reconciler);
  assert.equal(c.name, 'renamed');
  assert.equal(c.status().state, 'stopped');
  assert.equal(h.widgets.handlerCount, 0);
  assert.equal(h.clock.pendingTimers, 0);
  await c.start();
  await settle();
  assert.equal(c.status().paused, true);
  assert.deepEqual(c.snapshot().queue, ['ns/a']);
  await c.stop();
});

test('cache reader: the reconcile context reads the informers of every source', async () => {
  const h = harness();
  const cms = new FakeInformer({ kind: 'ConfigMap', resource: 'configmaps', group: '' });
  cms.add({ metadata: { name: 'cm', namespace: 'ns' } });
  h.widgets.add(widget('a'));
  let seen: unknown[] = [];
  h.setImpl((_req, ctx) => {
    seen = [
      ctx.cache.get({ group: 'lab.reconcile.dev', version: 'v1', resource: 'widgets' }, 'ns/a')?.metadata.name,
      ctx.cache.get({ group: '', version: 'v1', resource: 'configmaps' }, 'ns/cm')?.metadata.name,
      ctx.cache.indexer({ group: 'lab.reconcile.dev', version: 'v2', resource: 'widgets' })?.listKeys(),
      ctx.cache.indexer({ group: 'apps', version: 'v1', resource: 'deployments' }),
    ];
    return {};
  });
  const c = h.builder.for(h.widgets).owns(cms).build(h.reconciler);
  await c.start();
  await settle();
  assert.deepEqual(seen, ['a', 'cm', ['ns/a'], undefined]);
  await c.stop();
});
