// WatchList (streaming initial list) in the reflector and the informer, on the fake lister-watcher and a
// scripted one: request parameters, event order, the atomic replace at the initial-events-end bookmark,
// bookmark handling, 410 / too-large RV in the middle of the initial events, the LIST fallback, errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Reflector, VeryShortWatchError, type ReflectorStore } from '../../../src/core/cache/reflector.ts';
import { SharedIndexInformer } from '../../../src/core/cache/sharedIndexInformer.ts';
import {
  INITIAL_EVENTS_END_ANNOTATION,
  isTombstone,
  type DeletedFinalStateUnknown,
  type ListerWatcher,
  type ListOptions,
  type ReflectorState,
  type WatchEvent,
  type WatchOptions,
} from '../../../src/core/cache/interfaces.ts';
import { ApiError } from '../../../src/core/k8s/client.ts';
import type { KubeList, KubeObject } from '../../../src/core/k8s/objects.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { expiredStatus, FakeListerWatcher, type FakeListerWatcherOptions } from '../../fakes/fakeListerWatcher.ts';
import { recordingLogger, settle, widget, widgets } from './helpers.ts';

function setup(options: { lw?: FakeListerWatcherOptions; watchList?: boolean } = {}) {
  const clock = new FakeClock();
  const lw = new FakeListerWatcher({ watchList: 'supported', ...options.lw });
  const ops: string[] = [];
  const store: ReflectorStore<KubeObject> = {
    add: (o) => ops.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`),
    update: (o) => ops.push(`update ${o.metadata.name}@${o.metadata.resourceVersion}`),
    delete: (o) => ops.push(`delete ${o.metadata.name}@${o.metadata.resourceVersion}`),
    replace: (list, rv) => ops.push(`replace [${list.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).join(' ')}]@${rv}`),
  };
  const { logger, entries } = recordingLogger();
  const reflector = new Reflector({ listerWatcher: lw, store, clock, logger, random: () => 0, name: 'widgets', watchList: options.watchList });
  const states: ReflectorState[] = [];
  reflector.onDidChangeState((s) => states.push(s));
  const phases = () =>
    states.map((s) => (s.phase === 'backoff' ? `backoff(${s.reason})` : s.phase === 'listing' && s.watchList ? `streaming@${s.resourceVersion || '""'}` : s.phase));
  return { clock, lw, ops, reflector, states, phases, logs: entries };
}

const WATCH_LIST = { allowWatchBookmarks: true, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', timeoutSeconds: 300 };

test('WatchList is the default: one watch with sendInitialEvents from RV "", no LIST, one replace at the bookmark, then the same stream goes on', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.lw.add(widget('b'));
  t.lw.modify(widget('a', { spec: { size: 2 } }));
  assert.equal(t.reflector.usesWatchList, true);
  t.reflector.run();
  await settle();
  assert.deepEqual(t.lw.listCalls, [], 'no LIST at all');
  assert.deepEqual(t.lw.watchCalls, [{ resourceVersion: '', ...WATCH_LIST }], 'first cycle: a consistent read (RV unset)');
  assert.deepEqual(t.ops, ['replace [a@3 b@2]@3'], 'the store is replaced once, at the RV of the bookmark');
  assert.equal(t.reflector.lastSyncResourceVersion(), '3');
  assert.deepEqual(t.phases(), ['streaming@""', 'watching']);
  // The same stream carries the changes: no second watch request.
  t.lw.add(widget('c'));
  t.lw.delete(widget('b'));
  t.lw.bookmark();
  await settle();
  assert.deepEqual(t.ops.slice(1), ['add c@4', 'delete b@5']);
  assert.equal(t.lw.watchCalls.length, 1);
  assert.equal(t.lw.openWatches, 1);
  assert.equal(t.reflector.lastSyncResourceVersion(), '5');
  // When that stream closes, the next watch is an ordinary one from the last RV.
  t.lw.resetWatch();
  await settle();
  assert.deepEqual(t.lw.watchCalls[1], { resourceVersion: '5', allowWatchBookmarks: true, timeoutSeconds: 300 });
  t.reflector.dispose();
  await t.reflector.whenStopped();
  assert.equal(t.lw.openWatches, 0);
});

test('a stream silent for 10 s is diagnosed once with a one-item LIST; its error is in the state and the log, the stream is kept', async () => {
  const t = setup();
  t.lw.withholdInitialEventsEnd(); // no objects: the stream sends nothing at all
  t.lw.failNextList(new ApiError(500, 'InternalError', 'conversion webhook for example.org/v1, Kind=Gadget failed: connection refused'));
  t.reflector.run();
  await settle();
  t.clock.step(10_000);
  await settle();
  assert.deepEqual(t.lw.listCalls, [{ limit: 1 }], 'one probe, one item');
  const st = t.reflector.state;
  assert.ok(st.phase === 'listing' && st.watchList && st.stalled, JSON.stringify(st));
  assert.match(st.stalled.listError, /conversion webhook .* failed/);
  assert.equal(st.stalled.sinceMs, 10_000);
  assert.ok(t.logs.some((e) => e.msg.includes('a LIST of the same resource fails') && /conversion webhook/.test(String(e.fields.listError))));
  t.clock.step(30_000);
  await settle();
  assert.equal(t.lw.listCalls.length, 1, 'not probed again on the same stream');
  assert.equal(t.lw.watchCalls.length, 1, 'the stream is kept (client-go waits for it)');
  t.lw.releaseInitialEventsEnd();
  await settle();
  assert.deepEqual(t.ops, ['replace []@0']);
  assert.equal(t.reflector.state.phase, 'watching');
  t.reflector.dispose();
});

test('a silent stream whose LIST probe succeeds is only slow: no stalled state', async () => {
  const t = setup();
  t.lw.withholdInitialEventsEnd();
  t.reflector.run();
  await settle();
  t.clock.step(10_000);
  await settle();
  assert.equal(t.lw.listCalls.length, 1);
  const st = t.reflector.state;
  assert.ok(st.phase === 'listing' && st.stalled === undefined, JSON.stringify(st));
  t.reflector.dispose();
});

test('nothing reaches the store before the initial-events-end bookmark; changes made meanwhile follow the replace', async () => {
  const t = setup();
  for (const n of ['a', 'b', 'c']) t.lw.add(widget(n));
  t.lw.withholdInitialEventsEnd();
  t.reflector.run();
  await settle();
  t.clock.step(5_000);
  await settle();
  assert.deepEqual(t.ops, [], 'three ADDED events received, the store untouched');
  assert.equal(t.reflector.state.phase, 'listing');
  assert.equal(t.reflector.lastSyncResourceVersion(), '', 'the RV does not move on ADDED events');
  t.lw.modify(widget('a', { spec: { size: 7 } })); // RV 4, after the snapshot at 3
  t.lw.releaseInitialEventsEnd();
  await settle();
  assert.deepEqual(t.ops, ['replace [a@1 b@2 c@3]@3', 'update a@4']);
  assert.equal(t.reflector.lastSyncResourceVersion(), '4');
  t.reflector.dispose();
});

test('a stream still waiting for its bookmark is logged every 10 s; it keeps waiting (client-go)', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.lw.withholdInitialEventsEnd();
  t.reflector.run();
  await settle();
  t.clock.step(25_000);
  await settle();
  const warnings = t.logs.filter((e) => e.msg.includes('still waiting for the bookmark'));
  assert.equal(warnings.length, 2);
  assert.equal(warnings[0]!.fields.events, 1);
  t.lw.releaseInitialEventsEnd();
  await settle();
  assert.deepEqual(t.ops, ['replace [a@1]@1']);
  t.clock.step(60_000);
  await settle();
  assert.equal(t.logs.filter((e) => e.msg.includes('still waiting for the bookmark')).length, 2, 'the warning timer ended with the initial events');
  t.reflector.dispose();
});

test('the informer sees a WatchList relist like a LIST relist: tombstones for what vanished, updates, adds; not initial', async () => {
  const clock = new FakeClock();
  const lw = new FakeListerWatcher({ watchList: 'supported' });
  const inf = new SharedIndexInformer({ listerWatcher: lw, resource: widgets, clock, random: () => 0 });
  const seen: string[] = [];
  const label = (o: KubeObject | DeletedFinalStateUnknown) => (isTombstone(o) ? `tombstone(${o.key})` : `${o.metadata.name}@${o.metadata.resourceVersion}`);
  inf.addEventHandler({
    onAdd: (o, initial) => void seen.push(`add ${label(o)}${initial ? ' initial' : ''}`),
    onUpdate: (a, b) => void seen.push(`update ${label(a)} -> ${label(b)}`),
    onDelete: (o) => void seen.push(`delete ${label(o)}`),
  });
  lw.add(widget('a'));
  lw.add(widget('b'));
  inf.run();
  await settle();
  assert.equal(inf.hasSynced(), true);
  assert.deepEqual(seen.splice(0), ['add a@1 initial', 'add b@2 initial']);
  lw.deleteDropWatch(widget('a')); // 3: never told to the watch
  lw.addDropWatch(widget('c')); // 4
  lw.expire(); // the open watch gets a 410: backoff, then a new cycle
  await settle();
  clock.step(800);
  await settle();
  assert.deepEqual(lw.watchCalls.map((w) => [w.resourceVersion, !!w.sendInitialEvents]), [['', true], ['2', true]], 'the new cycle streams "not older than" the last RV');
  assert.deepEqual(lw.listCalls, []);
  assert.deepEqual(seen, ['delete tombstone(default/a)', 'update b@2 -> b@2', 'add c@4']);
  assert.deepEqual(inf.getIndexer().listKeys().sort(), ['default/b', 'default/c']);
  inf.dispose();
});

test('a 410 in the middle of the initial events: what was collected is dropped and the stream starts again at once from RV ""', async () => {
  const t = setup();
  for (const n of ['a', 'b', 'c', 'd']) t.lw.add(widget(n));
  t.reflector.run();
  await settle();
  assert.deepEqual(t.ops, ['replace [a@1 b@2 c@3 d@4]@4']);
  t.lw.add(widget('e')); // 5
  // The next cycle (after the watch expires) is cut by a 410 after two initial events.
  t.lw.interruptNextInitialEvents({ afterItems: 2, then: expiredStatus() });
  t.lw.expire();
  await settle();
  t.clock.step(800);
  await settle();
  assert.deepEqual(
    t.lw.watchCalls.map((w) => w.resourceVersion),
    ['', '5', ''],
    'WatchList at the last RV, cut by 410, then at once a consistent one (RV "")',
  );
  assert.deepEqual(t.ops.slice(1), ['add e@5', 'replace [a@1 b@2 c@3 d@4 e@5]@5'], 'of the cut stream, nothing reached the store');
  assert.deepEqual(t.phases(), ['streaming@""', 'watching', 'backoff(resource version expired)', 'streaming@5', 'streaming@""', 'watching']);
  assert.deepEqual(t.lw.listCalls, [], 'no LIST fallback for an expired RV');
  // After success the "unavailable" flag is cleared: the next cycle streams from the last RV again.
  t.lw.expire();
  await settle();
  t.clock.step(1600);
  await settle();
  assert.equal(t.lw.watchCalls.at(-1)?.resourceVersion, '5');
  t.reflector.dispose();
});

test('a too-large RV also streams again at once from RV ""', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.reflector.run();
  await settle();
  t.clock.step(2_000);
  t.lw.resetWatch(); // the carried stream ends cleanly: an ordinary watch follows
  await settle();
  t.lw.failNextWatch(new ApiError(504, 'Timeout', 'Too large resource version', { causes: [{ reason: 'ResourceVersionTooLarge' }] }));
  t.lw.expire(); // 410 on that watch: backoff, then a new cycle at the last RV, which the server says it does not have yet
  await settle();
  t.clock.step(800);
  await settle();
  assert.deepEqual(
    t.lw.watchCalls.map((w) => [w.resourceVersion, !!w.sendInitialEvents]),
    [['', true], ['1', false], ['1', true], ['', true]],
  );
  assert.deepEqual(t.phases(), ['streaming@""', 'watching', 'watching', 'backoff(resource version expired)', 'streaming@1', 'streaming@""', 'watching']);
  assert.deepEqual(t.lw.listCalls, []);
  assert.deepEqual(t.ops, ['replace [a@1]@1', 'replace [a@1]@1']);
  t.reflector.dispose();
});

test('a server that refuses WatchList (422, feature gate off): LIST + WATCH for this cycle; the next cycle tries WatchList again', async () => {
  const t = setup({ lw: { watchList: 'refused' } });
  t.lw.add(widget('a'));
  t.lw.add(widget('b'));
  t.reflector.run();
  await settle();
  assert.deepEqual(t.lw.watchCalls.map((w) => !!w.sendInitialEvents), [true, false]);
  assert.deepEqual(t.lw.listCalls, [{ resourceVersion: '0', limit: 500 }]);
  assert.deepEqual(t.ops, ['replace [a@1 b@2]@2']);
  assert.deepEqual(t.phases(), ['streaming@""', 'listing', 'watching'], 'no backoff between the refused stream and the LIST');
  assert.ok(t.logs.some((e) => e.msg.includes('falling back to LIST') && e.fields.code === 422));
  t.lw.expire();
  await settle();
  t.clock.step(800);
  await settle();
  assert.deepEqual(t.lw.watchCalls.map((w) => !!w.sendInitialEvents), [true, false, true, false]);
  assert.deepEqual(t.lw.listCalls.map((l) => l.resourceVersion), ['0', '2']);
  t.reflector.dispose();
});

test('429 and refused connections back off and stream again at the same RV; no LIST', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.lw.failNextWatch(new ApiError(429, 'TooManyRequests', 'slow down'));
  t.reflector.run();
  await settle();
  assert.deepEqual(t.phases(), ['streaming@""', 'backoff(too many requests)']);
  t.clock.step(800);
  await settle();
  assert.deepEqual(t.phases().slice(2), ['streaming@""', 'watching']);
  assert.deepEqual(t.lw.listCalls, []);
  assert.deepEqual(t.ops, ['replace [a@1]@1']);
  t.reflector.dispose();
});

test('a stream closed before the bookmark starts again at once; one closed at once with nothing falls back to LIST', async () => {
  const t = setup();
  for (const n of ['a', 'b', 'c']) t.lw.add(widget(n));
  t.lw.interruptNextInitialEvents({ afterItems: 2, then: 'close' });
  t.reflector.run();
  await settle();
  assert.deepEqual(t.lw.watchCalls.map((w) => w.resourceVersion), ['', ''], 'closed after 2 events: streamed again');
  assert.deepEqual(t.ops, ['replace [a@1 b@2 c@3]@3']);
  assert.deepEqual(t.lw.listCalls, []);

  const u = setup();
  u.lw.add(widget('a'));
  u.lw.interruptNextInitialEvents({ afterItems: 0, then: 'close' });
  u.reflector.run();
  await settle();
  assert.deepEqual(u.lw.listCalls.length, 1, 'a very short WatchList falls back to LIST');
  assert.ok(u.logs.some((e) => e.msg.includes('falling back') && String(e.fields.error).includes('less than a second')));
  assert.deepEqual(u.ops, ['replace [a@1]@1']);
  t.reflector.dispose();
  u.reflector.dispose();
  assert.ok(new VeryShortWatchError('x') instanceof Error);
});

test('watchList: false, or a ListerWatcher without WatchList semantics, lists as before', async () => {
  const off = setup({ watchList: false });
  off.lw.add(widget('a'));
  off.reflector.run();
  await settle();
  assert.equal(off.reflector.usesWatchList, false);
  assert.deepEqual(off.lw.listCalls.length, 1);
  assert.ok(off.lw.watchCalls.every((w) => !w.sendInitialEvents));
  off.reflector.dispose();
  const unsupported = new FakeListerWatcher(); // declares watchListSemanticsUnsupported, as client-go's fakes do
  const r = new Reflector({ listerWatcher: unsupported, store: { add() {}, update() {}, delete() {}, replace() {} }, clock: new FakeClock(), logger: recordingLogger().logger });
  assert.equal(r.usesWatchList, false);
  r.dispose();
});

test('dispose while streaming the initial events releases the stream and ends the loop', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.lw.withholdInitialEventsEnd();
  t.reflector.run();
  await settle();
  assert.equal(t.lw.openWatches + 0, 0, 'a withheld stream is not yet live');
  t.reflector.dispose();
  await t.reflector.whenStopped();
  assert.equal(t.reflector.state.phase, 'stopped');
  assert.deepEqual(t.ops, []);
  t.lw.releaseInitialEventsEnd();
  await settle();
  assert.equal(t.lw.openWatches, 0, 'the released stream had been closed by dispose');
});

/** Plays a fixed script of events on the first watch, then waits (until aborted). */
class ScriptedListerWatcher implements ListerWatcher<KubeObject> {
  readonly watchCalls: WatchOptions[] = [];
  readonly listCalls: ListOptions[] = [];
  private readonly script: WatchEvent[];
  constructor(script: WatchEvent[]) {
    this.script = script;
  }
  async list(o: ListOptions): Promise<KubeList<KubeObject>> {
    this.listCalls.push(o);
    return { metadata: { resourceVersion: '1' }, items: [] };
  }
  watch(o: WatchOptions, signal: AbortSignal): AsyncIterable<WatchEvent<KubeObject>> {
    this.watchCalls.push(o);
    const events = this.watchCalls.length === 1 ? this.script : [];
    return (async function* () {
      for (const ev of events) yield structuredClone(ev) as WatchEvent<KubeObject>;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      throw signal.reason;
    })();
  }
}

const obj = (name: string, rv: string): KubeObject => ({ ...widget(name), metadata: { ...widget(name).metadata, resourceVersion: rv } });
const bookmark = (rv: string, end = false): WatchEvent => ({
  type: 'BOOKMARK',
  object: { kind: 'Widget', metadata: { resourceVersion: rv, ...(end ? { annotations: { [INITIAL_EVENTS_END_ANNOTATION]: 'true' } } : {}) } },
});

test('bookmarks: a plain one neither ends the initial events nor lets ADDED RVs count; the annotated one carries the RV', async () => {
  const lw = new ScriptedListerWatcher([
    { type: 'ADDED', object: obj('b', '40') },
    { type: 'BOOKMARK', object: { kind: 'Widget', metadata: { resourceVersion: '30', annotations: { [INITIAL_EVENTS_END_ANNOTATION]: 'false' } } } },
    { type: 'ADDED', object: obj('a', '50') }, // synthetic ADDED events come in no RV order
    { type: 'ADDED', object: obj('c', '45') },
    { type: 'MODIFIED', object: obj('a', '51') },
    { type: 'DELETED', object: obj('c', '52') },
    { type: 'ADDED', object: { kind: 'Widget', metadata: { resourceVersion: '53' } } }, // no name: skipped
    bookmark('60', true),
    { type: 'ADDED', object: obj('d', '61') },
  ]);
  const ops: string[] = [];
  const r = new Reflector({
    listerWatcher: lw,
    store: {
      add: (o) => ops.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`),
      update: (o) => ops.push(`update ${o.metadata.name}`),
      delete: (o) => ops.push(`delete ${o.metadata.name}`),
      replace: (list, rv) => ops.push(`replace [${list.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).join(' ')}]@${rv}`),
    },
    clock: new FakeClock(),
    logger: recordingLogger().logger,
    random: () => 0,
  });
  r.run();
  await settle();
  assert.deepEqual(ops, ['replace [b@40 a@51]@60', 'add d@61']);
  assert.equal(r.lastSyncResourceVersion(), '61');
  assert.equal(lw.watchCalls.length, 1);
  r.dispose();
  await r.whenStopped();
});

test('an ERROR event that is not expired (e.g. 500) in the initial events falls back to LIST', async () => {
  const lw = new ScriptedListerWatcher([
    { type: 'ADDED', object: obj('a', '5') },
    { type: 'ERROR', object: { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd hiccup' } },
  ]);
  const ops: string[] = [];
  const r = new Reflector({
    listerWatcher: lw,
    store: { add() {}, update() {}, delete() {}, replace: (list, rv) => ops.push(`replace ${list.length}@${rv}`) },
    clock: new FakeClock(),
    logger: recordingLogger().logger,
    random: () => 0,
  });
  r.run();
  await settle();
  assert.deepEqual(lw.listCalls, [{ resourceVersion: '0', limit: 500 }]);
  assert.deepEqual(ops, ['replace 0@1'], 'only the LIST result reached the store');
  assert.deepEqual(lw.watchCalls.map((w) => [w.resourceVersion, !!w.sendInitialEvents]), [['', true], ['1', false]]);
  r.dispose();
  await r.whenStopped();
});
