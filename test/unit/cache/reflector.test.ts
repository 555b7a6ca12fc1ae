import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Reflector, type ReflectorStore } from '../../../src/core/cache/reflector.ts';
import type { ReflectorState } from '../../../src/core/cache/interfaces.ts';
import { ApiError } from '../../../src/core/k8s/client.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { expiredError, FakeListerWatcher, type FakeListerWatcherOptions } from '../../fakes/fakeListerWatcher.ts';
import { recordingLogger, settle, widget } from './helpers.ts';

const retryIn = (r: Reflector): number | undefined => {
  const s = r.state;
  return s.phase === 'backoff' ? s.retryInMs : undefined;
};
const backoffReason = (r: Reflector): string | undefined => {
  const s = r.state;
  return s.phase === 'backoff' ? s.reason : undefined;
};

function setup(options: { lw?: FakeListerWatcherOptions; random?: () => number; pageSize?: number } = {}) {
  const clock = new FakeClock();
  const lw = new FakeListerWatcher(options.lw);
  const ops: string[] = [];
  const store: ReflectorStore<KubeObject> = {
    add: (o) => ops.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`),
    update: (o) => ops.push(`update ${o.metadata.name}@${o.metadata.resourceVersion}`),
    delete: (o) => ops.push(`delete ${o.metadata.name}@${o.metadata.resourceVersion}`),
    replace: (list, rv) => ops.push(`replace ${list.length}@${rv}`),
  };
  const { logger, entries } = recordingLogger();
  const reflector = new Reflector({ listerWatcher: lw, store, clock, logger, random: options.random ?? (() => 0), name: 'widgets', pageSize: options.pageSize });
  const states: ReflectorState[] = [];
  reflector.onDidChangeState((s) => states.push(s));
  const phases = () => states.map((s) => (s.phase === 'backoff' ? `backoff(${s.reason},${Math.round(s.retryInMs)})` : s.phase));
  return { clock, lw, ops, reflector, states, phases, logs: entries };
}

test('first list at RV "0" is paged by 500 with continue tokens; the watch starts at the list RV with bookmarks', async () => {
  const t = setup();
  for (let i = 0; i < 1200; i++) t.lw.add(widget(`w${String(i).padStart(4, '0')}`));
  t.reflector.run();
  await settle();
  assert.equal(t.lw.listCalls.length, 3);
  assert.deepEqual(t.lw.listCalls[0], { resourceVersion: '0', limit: 500 });
  assert.equal(t.lw.listCalls[1]!.resourceVersion, undefined, 'continued pages carry no RV');
  assert.ok(t.lw.listCalls[1]!.continue && t.lw.listCalls[2]!.continue);
  assert.deepEqual(t.ops, ['replace 1200@1200']);
  assert.deepEqual(t.lw.watchCalls, [{ resourceVersion: '1200', allowWatchBookmarks: true, timeoutSeconds: 300 }]);
  assert.equal(t.reflector.lastSyncResourceVersion(), '1200');
  assert.deepEqual(t.phases(), ['listing', 'watching']);
  t.reflector.dispose();
});

test('timeoutSeconds is drawn afresh for every watch, uniformly in [300, 600)', async () => {
  const draws = [0.5, 0.999];
  const t = setup({ random: () => draws.shift() ?? 0 });
  t.lw.add(widget('a'));
  t.reflector.run();
  await settle();
  t.lw.modify(widget('a', { spec: { size: 2 } }));
  await settle();
  t.lw.resetWatch();
  await settle();
  assert.deepEqual(t.lw.watchCalls.map((w) => w.timeoutSeconds), [450, 599]);
  t.reflector.dispose();
});

test('watch events reach the store in order and advance the RV; a bookmark only moves the RV', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.reflector.run();
  await settle();
  t.lw.add(widget('b'));
  t.lw.modify(widget('a', { spec: { size: 5 } }));
  t.lw.delete(widget('b'));
  await settle();
  assert.deepEqual(t.ops, ['replace 1@1', 'add b@2', 'update a@3', 'delete b@4']);
  assert.equal(t.reflector.lastSyncResourceVersion(), '4');
  t.lw.modifyDropWatch(widget('a', { spec: { size: 6 } })); // RV 5, never sent
  t.lw.bookmark();
  await settle();
  assert.equal(t.reflector.lastSyncResourceVersion(), '5');
  assert.equal(t.ops.length, 4, 'a bookmark changes nothing in the store');
  t.reflector.dispose();
});

test('a clean close re-watches at once from the last RV, without a relist or a backoff', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.reflector.run();
  await settle();
  t.lw.add(widget('b'));
  await settle();
  t.lw.resetWatch();
  await settle();
  assert.equal(t.lw.listCalls.length, 1);
  assert.deepEqual(t.lw.watchCalls.map((w) => w.resourceVersion), ['1', '2']);
  assert.deepEqual(t.phases(), ['listing', 'watching', 'watching']);
  // A watch that lasted at least 1 s counts as healthy even with no events.
  t.clock.step(1000);
  t.lw.resetWatch();
  await settle();
  assert.deepEqual(t.lw.watchCalls.map((w) => w.resourceVersion), ['1', '2', '2']);
  assert.equal(t.lw.listCalls.length, 1);
  t.reflector.dispose();
});

test('on a watch from RV "0" the RV advances only from the first event that is not ADDED (synthetic ADDED events come in no RV order)', async () => {
  const t = setup();
  t.reflector.run(); // an empty list answers RV "0" here, so the watch starts at "0"
  await settle();
  assert.deepEqual(t.lw.watchCalls.map((w) => w.resourceVersion), ['0']);
  t.lw.add(widget('a'));
  t.lw.add(widget('b'));
  await settle();
  assert.deepEqual(t.ops.slice(-2), ['add a@1', 'add b@2']);
  assert.equal(t.reflector.lastSyncResourceVersion(), '0', 'ADDED events do not move the RV yet');
  t.lw.modify(widget('a', { spec: { size: 2 } }));
  await settle();
  assert.equal(t.reflector.lastSyncResourceVersion(), '3', 'the first MODIFIED does');
  t.lw.add(widget('c'));
  await settle();
  assert.equal(t.reflector.lastSyncResourceVersion(), '4', 'and every event after it');
  t.clock.step(1000);
  t.lw.resetWatch();
  await settle();
  assert.deepEqual(t.lw.watchCalls.map((w) => w.resourceVersion), ['0', '4']);
  // From a real RV, ADDED events advance it at once.
  t.lw.add(widget('d'));
  await settle();
  assert.equal(t.reflector.lastSyncResourceVersion(), '5');
  t.reflector.dispose();
});

test('a watch closed within 1 s with no events backs off (very short watch), then relists at the last RV', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.reflector.run();
  await settle();
  t.lw.resetWatch();
  await settle();
  assert.deepEqual(t.phases(), ['listing', 'watching', 'backoff(very short watch,800)']);
  assert.match(t.reflector.lastError ?? '', /less than a second/);
  t.clock.step(799);
  await settle();
  assert.equal(t.lw.listCalls.length, 1, 'no relist before the backoff elapsed');
  t.clock.step(1);
  await settle();
  // The first list was not paged (one page), so a relist at a known RV is unpaged (watch-cache friendly).
  assert.deepEqual(t.lw.listCalls[1], { resourceVersion: '1', limit: undefined });
  assert.equal(t.lw.watchCalls.length, 2);
  t.reflector.dispose();
});

test('an event skipped for having no object metadata does not count against a very short watch (client-go eventCount); a bookmark does', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.reflector.run();
  await settle();
  t.lw.sendRaw({ type: 'MODIFIED', object: { kind: 'Widget' } as unknown as KubeObject });
  await settle();
  t.lw.resetWatch();
  await settle();
  assert.deepEqual(t.phases(), ['listing', 'watching', 'backoff(very short watch,800)'], 'only a skipped event: still a very short watch');
  assert.ok(t.logs.some((e) => /skipping a watch event without an object/.test(e.msg)));
  t.clock.step(800);
  await settle();
  t.lw.bookmark();
  await settle();
  t.lw.resetWatch();
  await settle();
  assert.equal(t.phases().filter((p) => p.startsWith('backoff')).length, 1, 'a watch that delivered a bookmark is not very short');
  t.reflector.dispose();
});

test('once a list at RV "0" came back paged, relists stay paged', async () => {
  const t = setup();
  for (let i = 0; i < 501; i++) t.lw.add(widget(`w${i}`));
  t.reflector.run();
  await settle();
  t.lw.dropWatch();
  await settle();
  t.clock.step(800);
  await settle();
  assert.deepEqual(t.lw.listCalls.at(-2), { resourceVersion: '501', limit: 500 });
  assert.ok(t.lw.listCalls.at(-1)!.continue);
  assert.equal(t.ops.at(-1), 'replace 501@501');
  t.reflector.dispose();
});

test('an expired watch (410) backs off, then relists at the last RV; only a 410 on that list falls back to RV ""', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.reflector.run();
  await settle();
  t.lw.add(widget('b'));
  await settle();
  t.lw.expire();
  t.lw.failNextList(expiredError());
  await settle();
  assert.deepEqual(t.phases(), ['listing', 'watching', 'backoff(resource version expired,800)']);
  t.clock.step(800);
  await settle();
  assert.deepEqual(
    t.lw.listCalls.map((c) => c.resourceVersion),
    ['0', '2', ''],
    'relist at the last RV first; RV "" (consistent read) right after it failed as expired',
  );
  assert.equal(t.ops.at(-1), 'replace 2@2');
  assert.deepEqual(t.lw.watchCalls.at(-1)?.resourceVersion, '2');
  // After a successful list the "unavailable" flag is cleared: the next relist uses the last RV again.
  t.lw.dropWatch();
  await settle();
  t.clock.step(1600);
  await settle();
  assert.equal(t.lw.listCalls.at(-1)?.resourceVersion, '2');
  t.reflector.dispose();
});

test('a "too large resource version" list error also retries at once with RV ""', async () => {
  const t = setup();
  t.lw.failNextList(new ApiError(504, 'Timeout', 'Too large resource version: 99, current: 3'));
  t.reflector.run();
  await settle();
  assert.deepEqual(t.lw.listCalls.map((c) => c.resourceVersion), ['0', '']);
  assert.equal(t.lw.watchCalls.length, 1);
  t.reflector.dispose();
});

test('list failures back off 800 ms doubling to 30 s, jittered by the random source, and never stop', async () => {
  const t = setup();
  t.lw.failNextList(new ApiError(500, 'InternalError', 'etcd unavailable'), 9);
  t.reflector.run();
  const delays: number[] = [];
  for (let i = 0; i < 9; i++) {
    await settle();
    const s = t.reflector.state;
    assert.equal(s.phase, 'backoff');
    if (s.phase !== 'backoff') return;
    assert.match(s.lastError, /etcd unavailable/);
    delays.push(s.retryInMs);
    t.clock.step(s.retryInMs);
  }
  await settle();
  assert.deepEqual(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000]);
  assert.equal(t.lw.listCalls.length, 10);
  assert.equal(t.reflector.state.phase, 'watching');
  assert.ok(t.logs.some((e) => e.level === 'warn' && e.msg === 'list/watch failed'));
  t.reflector.dispose();
});

test('jitter: each delay is d·(1 + random)', async () => {
  const t = setup({ random: () => 0.5 });
  t.lw.failNextList(new ApiError(503, 'ServiceUnavailable', 'down'), 2);
  t.reflector.run();
  await settle();
  assert.equal(retryIn(t.reflector), 1200);
  t.clock.step(1200);
  await settle();
  assert.equal(retryIn(t.reflector), 2400);
  t.reflector.dispose();
});

test('the backoff starts over once 2 min have passed since its last reset (client-go HEAD)', async () => {
  const t = setup();
  t.lw.failNextList(new ApiError(500, 'InternalError', 'x'), 3);
  t.reflector.run();
  for (const d of [800, 1600, 3200]) {
    await settle();
    t.clock.step(d);
  }
  await settle();
  assert.equal(t.reflector.state.phase, 'watching');
  t.lw.dropWatch();
  await settle();
  assert.equal(retryIn(t.reflector), 6400, 'still growing after a short healthy spell');
  t.clock.step(6400);
  await settle();
  t.clock.step(120_001);
  await settle();
  t.lw.dropWatch();
  await settle();
  assert.equal(retryIn(t.reflector), 800, 'reset: more than 2 min since the reflector started');
  t.reflector.dispose();
});

test('429 and refused connections on the watch back off and re-watch at the same RV, without relisting', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.lw.failNextWatch(new ApiError(429, 'TooManyRequests', 'slow down'));
  t.reflector.run();
  await settle();
  assert.deepEqual(t.phases(), ['listing', 'watching', 'backoff(too many requests,800)']);
  t.clock.step(800);
  await settle();
  assert.equal(t.lw.listCalls.length, 1);
  assert.deepEqual(t.lw.watchCalls.map((w) => w.resourceVersion), ['1', '1']);
  t.lw.failNextWatch(new ApiError(0, 'Unreachable', 'Cannot reach the API server (ECONNREFUSED).', { cause: 'ECONNREFUSED' }));
  t.lw.resetWatch();
  t.clock.step(1000);
  await settle();
  assert.equal(backoffReason(t.reflector), 'connection refused');
  t.clock.step(1600);
  await settle();
  assert.equal(t.lw.listCalls.length, 1);
  assert.equal(t.lw.watchCalls.length, 4);
  assert.equal(t.reflector.state.phase, 'watching');
  t.reflector.dispose();
});

test('any other watch failure (a read error that is not an EOF, ERROR event, HTTP error) backs off and relists at the last RV', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.reflector.run();
  await settle();
  t.lw.dropWatch();
  await settle();
  assert.equal(backoffReason(t.reflector), 'watch failed');
  assert.match(t.reflector.lastError ?? '', /not an EOF/);
  t.clock.step(800);
  await settle();
  t.lw.sendWatchError({ code: 500, reason: 'InternalError', message: 'etcd hiccup' });
  await settle();
  assert.match(t.reflector.lastError ?? '', /etcd hiccup/);
  t.clock.step(1600);
  await settle();
  t.lw.failNextWatch(new ApiError(403, 'Forbidden', 'no watch for you'));
  t.lw.dropWatch();
  await settle();
  t.clock.step(3200);
  await settle();
  t.clock.step(6400);
  await settle();
  assert.deepEqual(t.lw.listCalls.map((c) => c.resourceVersion), ['0', '1', '1', '1', '1']);
  assert.equal(t.reflector.state.phase, 'watching');
  t.reflector.dispose();
});

test('an expired continue token falls back to one full list at the requested RV', async () => {
  const t = setup();
  for (let i = 0; i < 700; i++) t.lw.add(widget(`w${i}`));
  const list = t.lw.list.bind(t.lw);
  let pages = 0;
  t.lw.list = async (o, s) => {
    const r = await list(o, s);
    if (pages++ === 0) t.lw.expire();
    return r;
  };
  t.reflector.run();
  await settle();
  assert.equal(t.lw.listCalls.length, 3);
  assert.deepEqual(t.lw.listCalls[2], { resourceVersion: '0' });
  assert.deepEqual(t.ops, ['replace 700@700']);
  t.reflector.dispose();
});

test('a watch outliving its timeout by 60 s is abandoned and replaced (half-open connection guard)', async () => {
  const t = setup();
  t.reflector.run();
  await settle();
  t.clock.step(300_000 + 59_999);
  await settle();
  assert.equal(t.lw.watchCalls.length, 1);
  t.clock.step(1);
  await settle();
  assert.equal(t.lw.watchCalls.length, 2);
  assert.equal(t.lw.listCalls.length, 1);
  assert.equal(t.lw.openWatches, 1);
  t.reflector.dispose();
});

test('dispose stops the loop for good: the watch is released, no more requests, state "stopped"', async () => {
  const t = setup();
  t.reflector.run();
  await settle();
  assert.equal(t.lw.openWatches, 1);
  t.reflector.dispose();
  await t.reflector.whenStopped();
  assert.equal(t.lw.openWatches, 0);
  assert.equal(t.reflector.state.phase, 'stopped');
  t.clock.step(3_600_000);
  await settle();
  assert.equal(t.lw.watchCalls.length, 1);
  assert.equal(t.lw.listCalls.length, 1);
  t.reflector.run();
  await settle();
  assert.equal(t.lw.listCalls.length, 1, 'a stopped reflector never restarts');
});

test('dispose during a backoff ends the wait at once', async () => {
  const t = setup();
  t.lw.failNextList(new ApiError(500, 'InternalError', 'x'));
  t.reflector.run();
  await settle();
  assert.equal(t.clock.pendingTimers, 1);
  t.reflector.dispose();
  await t.reflector.whenStopped();
  assert.equal(t.clock.pendingTimers, 0);
  assert.deepEqual(t.phases().at(-1), 'stopped');
});
