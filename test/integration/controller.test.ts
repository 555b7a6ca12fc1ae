// The controller engine against the real kube-apiserver + etcd: real informers (list + watch), a
// real dynamic client, owner references, the status subresource and the generation-changed predicate.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { getTestCluster, createNamespace, installCrd, testCrd, waitUntil, type TestCluster } from './support/cluster.ts';
import { KubeListerWatcher } from '../../src/core/k8s/listerWatcher.ts';
import { findCrdResource, type CrdResourceInfo } from '../../src/core/k8s/discovery.ts';
import { SharedIndexInformer } from '../../src/core/cache/sharedIndexInformer.ts';
import { createDynamicClient, type DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import { isAlreadyExists } from '../../src/core/k8s/client.ts';
import type { KubeObject, ResourceInfo } from '../../src/core/k8s/objects.ts';
import { realClock } from '../../src/core/clock.ts';
import { controllerBuilder } from '../../src/core/controller/builder.ts';
import type { Controller, ControllerOptions } from '../../src/core/controller/controller.ts';
import { generationChanged, type Predicate } from '../../src/core/controller/predicate.ts';
import type { ReconcileContext, Request, Result } from '../../src/core/controller/reconcile.ts';
import { journalingContextFactory } from '../../src/core/actions/controllerContext.ts';
import { createJournal, type Journal } from '../../src/core/journal/journal.ts';

const group = 'controller-it.reconcile.dev';
const CONFIGMAPS: ResourceInfo = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true };

describe('controller against a real API server', () => {
  let c: TestCluster;
  let gadgets: CrdResourceInfo;
  let client: DynamicKubeClient;
  const cleanups: Array<() => Promise<void> | void> = [];

  before(async () => {
    c = await getTestCluster();
    await installCrd(c.transport, testCrd({ group, kind: 'Gadget', plural: 'gadgets' }));
    gadgets = await findCrdResource(c.transport, `gadgets.${group}`);
    client = createDynamicClient(c.transport, { fieldManager: 'controller-it' });
  });
  after(async () => {
    for (const f of cleanups.reverse()) await f();
  });

  /** A namespace, informers for gadgets and configmaps in it, a journal and a builder. */
  async function setup(options: Partial<ControllerOptions> & { predicates?: Predicate[] } = {}) {
    const ns = await createNamespace(c.transport, 'ctrl');
    cleanups.push(() => c.transport.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).then(() => {}, () => {}));
    const informer = (resource: ResourceInfo) => {
      const inf = new SharedIndexInformer({ listerWatcher: new KubeListerWatcher({ transport: c.transport, resource, namespace: ns }), resource, clock: realClock });
      cleanups.push(() => inf.dispose());
      return inf;
    };
    const primary = informer(gadgets);
    const children = informer(CONFIGMAPS);
    const journal = createJournal({ clock: realClock, capacity: 5000 });
    cleanups.push(() => journal.dispose());
    const calls: string[] = [];
    let impl: (req: Request, ctx: ReconcileContext) => Promise<Result> = async () => ({});
    const { predicates, ...rest } = options;
    const builder = controllerBuilder({
      name: 'gadgets',
      clock: realClock,
      journal,
      contextFactory: journalingContextFactory({ client, clock: realClock }),
      ...rest,
    }).for(primary, { predicates: predicates ?? [] });
    const reconciler = {
      name: 'it',
      reconcile: (req: Request, ctx: ReconcileContext) => {
        calls.push(req.key);
        return impl(req, ctx);
      },
    };
    const start = async (ctrl: Controller) => {
      cleanups.push(() => ctrl.stop());
      await ctrl.start();
      return ctrl;
    };
    const createGadget = (name: string, spec: unknown = { size: 1 }) =>
      client.create(gadgets, { apiVersion: `${group}/${gadgets.version}`, kind: 'Gadget', metadata: { name, namespace: ns }, spec });
    return {
      ns,
      primary,
      children,
      journal,
      calls,
      builder,
      reconciler,
      start,
      createGadget,
      setImpl(f: typeof impl) {
        impl = f;
      },
    };
  }

  it("an owned child's change enqueues its owner", async () => {
    const s = await setup();
    s.setImpl(async (req, ctx) => {
      const owner = ctx.cache.get(ctx.primary, req.key);
      if (!owner) return {};
      const name = `${req.name}-cm`;
      if (ctx.cache.get(CONFIGMAPS, `${req.namespace}/${name}`)) return {};
      try {
        await ctx.client.create(CONFIGMAPS, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name,
            namespace: req.namespace,
            ownerReferences: [{ apiVersion: owner.apiVersion!, kind: owner.kind!, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true }],
          },
          data: { size: '1' },
        }, { signal: ctx.signal });
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
      return {};
    });
    const ctrl = await s.start(s.builder.owns(s.children).build(s.reconciler));
    await s.createGadget('g1');
    const key = `${s.ns}/g1`;
    const childKey = `${s.ns}/g1-cm`;
    await waitUntil(() => s.children.getIndexer().getByKey(childKey) !== undefined, 'the child ConfigMap in the cache');
    await waitUntil(() => ctrl.keyState(key)?.phase === 'idle' && s.calls.length >= 2, 'the owner reconciled after its child appeared');
    const before = s.calls.length;
    // someone else edits the child
    const cm = await client.get({ group: '', version: 'v1', resource: 'configmaps' }, s.ns, 'g1-cm');
    await client.update({ group: '', version: 'v1', resource: 'configmaps' }, { ...cm, data: { size: 'tampered' } });
    await waitUntil(() => s.calls.length > before && ctrl.keyState(key)?.phase === 'idle', 'the owner reconciled after the child changed');
    const triggers = ctrl.keyState(key)!.lastTriggers;
    assert.ok(triggers.some((t) => t.kind === 'owned' && t.child === childKey && t.event === 'update'), JSON.stringify(triggers));
    const writes = s.journal.entries({ kinds: ['write'], key });
    assert.equal(writes.length, 1, 'the child was created once (idempotent reconciler)');
    assert.equal(writes[0]!.kind === 'write' && writes[0]!.verb, 'create');
    assert.equal(writes[0]!.kind === 'write' && writes[0]!.objectKey, childKey);
  });

  /** A reconciler that writes a changing status on each of its first `limit` passes. */
  const statusWriter = (limit: number) => async (req: Request, ctx: ReconcileContext): Promise<Result> => {
    const obj = ctx.cache.get(ctx.primary, req.key);
    if (!obj) return {};
    const n = ((obj.status as { passes?: number } | undefined)?.passes ?? 0) + 1;
    if (n > limit) return {};
    await ctx.client.patchStatus(ctx.primary, req.namespace, req.name, 'merge', { status: { passes: n, observedGeneration: obj.metadata.generation } }, { signal: ctx.signal });
    return {};
  };

  it('a status write does not re-trigger with the generation-changed predicate', async () => {
    const s = await setup({ predicates: [generationChanged()] });
    s.setImpl(statusWriter(5));
    const ctrl = await s.start(s.builder.build(s.reconciler));
    await s.createGadget('quiet');
    const key = `${s.ns}/quiet`;
    // wait until the informer has seen the reconciler's own status write (and the predicate dropped it)
    await waitUntil(() => s.journal.entries({ kinds: ['informer'], key }).some((e) => e.kind === 'informer' && e.event === 'update' && e.filteredBy === 'generationChanged'), 'the status update filtered');
    await waitUntil(() => ctrl.keyState(key)?.phase === 'idle', 'idle');
    assert.equal(s.calls.length, 1);
    assert.equal((s.primary.getIndexer().getByKey(key)!.status as { passes: number }).passes, 1);
    // a spec change does get through
    const cur = await client.get(gadgets, s.ns, 'quiet');
    await client.update(gadgets, { ...cur, spec: { size: 2 } });
    await waitUntil(() => s.calls.length === 2 && ctrl.keyState(key)?.phase === 'idle', 'reconciled after the spec change');
    assert.equal(s.journal.entries({ kinds: ['warning'] }).length, 0);
  });

  it('a status write re-triggers without the predicate (and a fast loop is flagged as a hot loop)', async () => {
    const s = await setup({ hotLoop: { threshold: 4, windowMs: 60_000 } });
    s.setImpl(statusWriter(5));
    const ctrl = await s.start(s.builder.build(s.reconciler));
    await s.createGadget('loud');
    const key = `${s.ns}/loud`;
    await waitUntil(() => (s.primary.getIndexer().getByKey(key)?.status as { passes?: number } | undefined)?.passes === 5, 'five self-triggered passes');
    await waitUntil(() => s.calls.length >= 6 && ctrl.keyState(key)?.phase === 'idle', 'settled');
    assert.equal(s.calls.length, 6, 'each status write re-triggered one reconcile; the sixth wrote nothing');
    const triggers = ctrl.keyState(key)!.lastTriggers;
    assert.ok(triggers.every((t) => t.kind === 'informer' && t.event === 'update'), JSON.stringify(triggers));
    const warnings = s.journal.entries({ kinds: ['warning'], key });
    assert.equal(warnings.length, 1);
    const w = warnings[0]!;
    assert.equal(w.kind === 'warning' && w.code, 'hotLoop');
    assert.match(w.kind === 'warning' ? w.message : '', /status write re-triggers the watch/);
    assert.match(w.kind === 'warning' ? w.message : '', /reconciler wrote to it \d+ time/, 'the journaled status writes are the evidence');
  });

  it('pause + step process exactly one key', async () => {
    const s = await setup({ startPaused: true, maxConcurrentReconciles: 2 });
    for (const n of ['p1', 'p2', 'p3']) await s.createGadget(n);
    const ctrl = await s.start(s.builder.build(s.reconciler));
    await waitUntil(() => ctrl.snapshot().queue.length === 3, 'three keys queued');
    assert.deepEqual(s.calls, [], 'paused workers take nothing');
    const r = await ctrl.step();
    assert.equal(r.kind, 'reconciled');
    const stepped = r.kind === 'reconciled' ? r.key : '';
    assert.deepEqual(s.calls, [stepped]);
    assert.equal(ctrl.status().paused, true);
    assert.equal(ctrl.snapshot().queue.length, 2);
    assert.equal(ctrl.keyState(stepped)!.phase, 'idle');
    // a new object while paused is queued, not processed
    await s.createGadget('p4');
    await waitUntil(() => ctrl.snapshot().queue.length === 3, 'p4 queued');
    assert.equal(s.calls.length, 1);
    ctrl.resume();
    await waitUntil(() => s.calls.length === 4 && ctrl.snapshot().queue.length === 0, 'the rest after resume');
    assert.deepEqual([...s.calls].sort(), ['p1', 'p2', 'p3', 'p4'].map((n) => `${s.ns}/${n}`));
  });

  it('errors back off exponentially and a success resets the count', async () => {
    const s = await setup();
    let failures = 0;
    s.setImpl(async () => {
      if (failures < 3) {
        failures++;
        throw new Error(`not yet (${failures})`);
      }
      return {};
    });
    const ctrl = await s.start(s.builder.build(s.reconciler));
    await s.createGadget('flaky');
    const key = `${s.ns}/flaky`;
    await waitUntil(() => s.calls.length === 4 && ctrl.keyState(key)?.phase === 'idle', 'three failures then a success');
    const st = ctrl.keyState(key)!;
    assert.equal(st.requeues, 0, 'success forgot the failures');
    assert.deepEqual(st.lastOutcome, { kind: 'success' });
    assert.equal(st.lastError, 'not yet (3)');
    const ends = s.journal.entries({ kinds: ['reconcileEnd'], key }).map((e) => (e.kind === 'reconcileEnd' ? e.outcome.kind : ''));
    assert.deepEqual(ends, ['error', 'error', 'error', 'success']);
    // the retries were backoff retries of 5, 10, 20 ms (within the clock's millisecond rounding)
    const retries = s.journal
      .entries({ kinds: ['reconcileStart'], key })
      .flatMap((e) => (e.kind === 'reconcileStart' ? e.triggers : []))
      .filter((t) => t.kind === 'backoff');
    assert.deepEqual(retries.map((t) => t.kind === 'backoff' && t.attempt), [1, 2, 3]);
    const delays = retries.map((t) => (t.kind === 'backoff' ? t.delayMs : -1));
    for (const [i, want] of [5, 10, 20].entries()) assert.ok(delays[i]! <= want && delays[i]! >= want - 2, `retry ${i + 1} waited ${delays[i]} ms, want ${want}`);
  });
  it('another field manager that keeps undoing the reconciler\'s write to .spec.size is named in a fight warning', async () => {
    const s = await setup({ fieldFight: { ownManager: 'controller-it', threshold: 4 } });
    // The reconciler wants size 1; a rival client (its own field manager) keeps setting 2.
    s.setImpl(async (req, ctx) => {
      const obj = ctx.cache.get(ctx.primary, req.key);
      if (!obj || (obj.spec as { size?: number }).size === 1) return {};
      await ctx.client.patch(ctx.primary, req.namespace, req.name, 'merge', { spec: { size: 1 } }, { signal: ctx.signal });
      return {};
    });
    const ctrl = await s.start(s.builder.build(s.reconciler));
    await s.createGadget('contested', { size: 1 });
    const key = `${s.ns}/contested`;
    const rival = createDynamicClient(c.transport, { fieldManager: 'rival-controller' });
    const size = () => (s.primary.getIndexer().getByKey(key)?.spec as { size?: number } | undefined)?.size;
    const rvOf = () => s.primary.getIndexer().getByKey(key)?.metadata.resourceVersion;
    await waitUntil(() => size() === 1, 'the gadget cached');
    for (let round = 0; round < 2; round++) {
      const seen = rvOf();
      await rival.patch(gadgets, s.ns, 'contested', 'merge', { spec: { size: 2 } });
      // The reconciler puts it back (a newer resourceVersion with size 1).
      await waitUntil(() => size() === 1 && rvOf() !== seen && Number(rvOf()) > Number(seen) + 1, `round ${round + 1}: the reconciler undid the rival's write`);
    }
    const warnings = () => s.journal.entries({ kinds: ['warning'], key }).filter((e) => e.kind === 'warning' && e.code === 'fieldManagerFight');
    await waitUntil(() => warnings().length > 0, 'a fieldManagerFight warning');
    const w = warnings()[0]!;
    assert.ok(w.kind === 'warning');
    assert.match(w.message, /another controller \(field manager "rival-controller"\) is fighting this one over \.spec\.size of /);
    assert.deepEqual(w.details?.managers, ['rival-controller', 'controller-it']);
    assert.match(ctrl.keyState(key)?.warning ?? '', /rival-controller/);
  });
});
