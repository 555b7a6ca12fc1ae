import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConvergenceTracker, stateFingerprint } from '../../../src/core/checks/convergence.ts';
import { Journal, type JournalEntry } from '../../../src/core/journal/journal.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { requeueForeverText } from '../../../src/core/checks/runChecks.ts';

const KEY = 'ns/w';
const GVR = { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets' };
const CM_GVR = { group: '', version: 'v1', resource: 'configmaps' };

function widget(generation: number, ready?: 'True' | 'False', extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return {
    apiVersion: 'lab.reconcile.dev/v1alpha1',
    kind: 'Widget',
    metadata: { namespace: 'ns', name: 'w', generation, resourceVersion: String(Math.random()), ...extra },
    spec: { data: { color: `c${generation}` } },
    ...(ready ? { status: { conditions: [{ type: 'Ready', status: ready, lastTransitionTime: new Date().toISOString() }] } } : {}),
  };
}

function configMap(color: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', name: 'w-config', resourceVersion: String(Math.random()) }, data: { color } };
}

/** A tracker fed by a sync journal, as the session wires it. */
function setup(options: { quietMs?: number; flapWindowMs?: number } = {}) {
  const clock = new FakeClock();
  const journal = new Journal({ clock, delivery: 'sync' });
  const tracker = new ConvergenceTracker({ clock, quietMs: options.quietMs ?? 5_000, flapWindowMs: options.flapWindowMs ?? 60_000 });
  journal.onDidAppend((batch: readonly JournalEntry[]) => tracker.observeJournal(batch));
  const changes: string[][] = [];
  tracker.onDidChange((keys) => changes.push([...keys]));
  const reconcile = (writes: Array<{ rvBefore: string; rvAfter: string; verb?: 'create' | 'update' | 'patch' | 'apply' }> = [], outcome: 'success' | 'error' = 'success') => {
    journal.append({ kind: 'reconcileStart', key: KEY, controller: 'lab', triggers: [], attempt: 1, via: 'worker' });
    for (const w of writes) {
      journal.recordWrite({ verb: w.verb ?? 'update', gvr: CM_GVR, namespace: 'ns', name: 'w-config', resourceVersionBefore: w.rvBefore, resourceVersionAfter: w.rvAfter, dryRun: false, key: KEY, controller: 'lab' });
    }
    journal.append({ kind: 'reconcileEnd', key: KEY, controller: 'lab', outcome: outcome === 'success' ? { kind: 'success' } : { kind: 'error', message: 'boom' }, durationMs: 1 });
  };
  return { clock, journal, tracker, changes, reconcile };
}

test('a key seen but not reconciled is changing; after a reconcile and the quiet window it is converged, by the timer alone', () => {
  const { clock, tracker, changes, reconcile } = setup();
  tracker.observePrimary(KEY, widget(1));
  assert.equal(tracker.get(KEY)?.state, 'changing');
  assert.match(tracker.get(KEY)!.reason, /Generation 1 was seen .* no reconcile has finished/);
  clock.step(100);
  reconcile([{ rvBefore: '', rvAfter: '11', verb: 'create' }]);
  tracker.observeOwned(KEY, 'ConfigMap ns/w-config', configMap('c1'));
  assert.equal(tracker.get(KEY)?.state, 'changing', 'it just wrote');
  assert.equal(tracker.get(KEY)?.writes, 1);
  changes.length = 0;
  clock.step(4_999);
  assert.equal(tracker.get(KEY)?.state, 'changing');
  assert.deepEqual(changes, []);
  clock.step(1);
  assert.equal(tracker.get(KEY)?.state, 'converged');
  assert.deepEqual(changes, [[KEY]], 'the timer published the change without any new observation');
  assert.match(tracker.get(KEY)!.reason, /No writes or changes for 5\.0 s since generation 1 was reconciled/);
  assert.deepEqual(tracker.keysIn('converged'), [KEY]);
  assert.deepEqual(tracker.counts(), { converged: 1, changing: 0, flapping: 0 });
  assert.equal(clock.pendingTimers, 0, 'nothing left to re-evaluate by time');
});

test('a no-op write (resourceVersion unchanged) does not hold convergence back but is counted', () => {
  const { clock, tracker, reconcile } = setup();
  tracker.observePrimary(KEY, widget(1));
  reconcile([{ rvBefore: '5', rvAfter: '5' }]);
  clock.step(5_000);
  const c = tracker.get(KEY)!;
  assert.equal(c.state, 'converged');
  assert.equal(c.noOpWrites, 1);
  assert.equal(c.writes, 0);
  assert.match(c.reason, /1 write\(s\) that changed nothing/);
});

test('a server-side apply that changed nothing is no no-op write (apply sends the whole intent on every pass), nor a change', () => {
  const { clock, tracker, reconcile } = setup();
  tracker.observePrimary(KEY, widget(1));
  reconcile([{ rvBefore: '5', rvAfter: '5', verb: 'apply' }]);
  clock.step(5_000);
  const c = tracker.get(KEY)!;
  assert.equal(c.state, 'converged');
  assert.equal(c.noOpWrites, 0);
  assert.equal(c.writes, 0);
  assert.doesNotMatch(c.reason, /changed nothing/);
});

test('a spec change starts over: changing until a reconcile that started after it ends', () => {
  const { clock, tracker, reconcile } = setup();
  tracker.observePrimary(KEY, widget(1));
  reconcile();
  clock.step(6_000);
  assert.equal(tracker.get(KEY)?.state, 'converged');
  // A status write (same generation) is a change, not a spec change.
  tracker.observePrimary(KEY, widget(1, 'True'));
  assert.equal(tracker.get(KEY)?.state, 'changing');
  clock.step(5_000);
  assert.equal(tracker.get(KEY)?.state, 'converged');
  tracker.observePrimary(KEY, widget(2, 'True'));
  const c = tracker.get(KEY)!;
  assert.equal(c.state, 'changing');
  assert.equal(c.generation, 2);
  assert.match(c.reason, /Generation 2 .* no reconcile has finished/);
  clock.step(60_000);
  assert.equal(tracker.get(KEY)?.state, 'changing', 'time alone does not converge an unreconciled spec');
  reconcile([{ rvBefore: '11', rvAfter: '12' }]);
  clock.step(5_000);
  assert.equal(tracker.get(KEY)?.state, 'converged');
});

test('a failed reconcile keeps the key changing until one succeeds', () => {
  const { clock, tracker, reconcile } = setup();
  tracker.observePrimary(KEY, widget(1));
  reconcile([], 'error');
  clock.step(30_000);
  assert.equal(tracker.get(KEY)?.state, 'changing');
  assert.match(tracker.get(KEY)!.reason, /last reconcile failed \(boom\)/);
  reconcile();
  clock.step(5_000);
  assert.equal(tracker.get(KEY)?.state, 'converged');
});

test('writes that keep changing an object (a timestamp each pass) keep the key changing, never flapping', () => {
  const { clock, tracker, reconcile } = setup();
  tracker.observePrimary(KEY, widget(1));
  for (let i = 0; i < 20; i++) {
    reconcile([{ rvBefore: String(10 + i), rvAfter: String(11 + i) }]);
    tracker.observeOwned(KEY, 'ConfigMap ns/w-config', configMap(`t${i}`));
    clock.step(1_000);
    assert.equal(tracker.get(KEY)?.state, 'changing', `pass ${i}`);
  }
  assert.equal(tracker.get(KEY)?.writes, 20);
  clock.step(5_000);
  assert.equal(tracker.get(KEY)?.state, 'converged', 'once the writes stop');
});

test('an object going back and forth without a spec change is flapping, and stays so for the flap window', () => {
  const { clock, tracker, reconcile, changes } = setup({ flapWindowMs: 30_000 });
  tracker.observePrimary(KEY, widget(1));
  reconcile();
  const ref = 'ConfigMap ns/w-config';
  tracker.observeOwned(KEY, ref, configMap('a'));
  clock.step(1_000);
  tracker.observeOwned(KEY, ref, configMap('b'));
  clock.step(1_000);
  tracker.observeOwned(KEY, ref, configMap('a')); // first return
  assert.equal(tracker.get(KEY)?.state, 'changing', 'one return is a recovery, not yet a flap');
  clock.step(1_000);
  tracker.observeOwned(KEY, ref, configMap('b')); // second return
  const c = tracker.get(KEY)!;
  assert.equal(c.state, 'flapping');
  assert.equal(c.returns, 2);
  assert.equal(c.flappingObject, ref);
  assert.match(c.reason, /ConfigMap ns\/w-config went back to an earlier state 2 time\(s\).*generation 1 stayed the same/);
  assert.deepEqual(tracker.keysIn('flapping'), [KEY]);
  changes.length = 0;
  clock.step(10_000);
  assert.equal(tracker.get(KEY)?.state, 'flapping', 'quiet, but still inside the flap window');
  clock.step(20_000);
  assert.equal(tracker.get(KEY)?.state, 'converged', 'the flap window passed without a return');
  assert.ok(changes.some((k) => k.includes(KEY)), 'the timer published it');
});

test('a status condition toggling True/False is flapping even though its lastTransitionTime differs each time', () => {
  const { clock, tracker, reconcile } = setup();
  tracker.observePrimary(KEY, widget(1, 'True'));
  reconcile();
  for (const s of ['False', 'True', 'False'] as const) {
    clock.step(500);
    tracker.observePrimary(KEY, widget(1, s));
  }
  const c = tracker.get(KEY)!;
  assert.equal(c.state, 'flapping');
  assert.equal(c.flappingObject, 'the object itself');
});

test('a child deleted and recreated once is a recovery; a spec change clears earlier returns', () => {
  const { clock, tracker, reconcile } = setup();
  tracker.observePrimary(KEY, widget(1));
  reconcile();
  const ref = 'ConfigMap ns/w-config';
  tracker.observeOwned(KEY, ref, configMap('a'));
  tracker.observeOwned(KEY, ref, undefined);
  clock.step(10);
  tracker.observeOwned(KEY, ref, configMap('a'));
  assert.equal(tracker.get(KEY)?.returns, 1);
  assert.notEqual(tracker.get(KEY)?.state, 'flapping');
  tracker.observePrimary(KEY, widget(2));
  assert.equal(tracker.get(KEY)?.returns, 0);
  // The same values again after the spec change are not returns: the history restarted.
  tracker.observeOwned(KEY, ref, configMap('b'));
  tracker.observeOwned(KEY, ref, configMap('a'));
  assert.equal(tracker.get(KEY)?.returns, 1, 'only the last state before the change is remembered');
});

test('deleting the primary object forgets the key; dry-run and failed writes are ignored; other keys are untouched', () => {
  const { clock, journal, tracker, reconcile } = setup();
  tracker.observePrimary(KEY, widget(1));
  tracker.observePrimary('ns/other', { ...widget(1), metadata: { namespace: 'ns', name: 'other', generation: 1 } });
  reconcile();
  journal.recordWrite({ verb: 'update', gvr: GVR, namespace: 'ns', name: 'w', dryRun: true, key: KEY, resourceVersionBefore: '1', resourceVersionAfter: '2' });
  journal.recordWrite({ verb: 'update', gvr: GVR, namespace: 'ns', name: 'w', dryRun: false, error: 'conflict', key: KEY });
  assert.equal(tracker.get(KEY)?.writes, 0);
  clock.step(5_000);
  assert.equal(tracker.get(KEY)?.state, 'converged');
  assert.equal(tracker.get('ns/other')?.state, 'changing');
  tracker.observePrimary(KEY, undefined);
  assert.equal(tracker.get(KEY), undefined);
  assert.deepEqual(tracker.all().map((c) => c.key), ['ns/other']);
});

test('fingerprints ignore server bookkeeping and condition times, not data', () => {
  const a = widget(1, 'True');
  const b = { ...widget(1, 'True'), metadata: { ...a.metadata, resourceVersion: '999', managedFields: [{ manager: 'x' }], uid: 'u2' } };
  assert.equal(stateFingerprint(a), stateFingerprint(b));
  assert.notEqual(stateFingerprint(widget(1, 'True')), stateFingerprint(widget(1, 'False')));
  assert.notEqual(stateFingerprint(configMap('a')), stateFingerprint(configMap('b')));
  assert.notEqual(stateFingerprint(configMap('a')), stateFingerprint(undefined));
});

test('dispose clears the timer and stops listening', () => {
  const { clock, tracker, reconcile } = setup();
  tracker.observePrimary(KEY, widget(1));
  reconcile([{ rvBefore: '1', rvAfter: '2' }]);
  assert.equal(clock.pendingTimers, 1);
  tracker.dispose();
  assert.equal(clock.pendingTimers, 0);
  tracker.observePrimary(KEY, widget(2));
  assert.equal(tracker.get(KEY), undefined);
});

test('requeueForeverText: a Go controller is told its calls (Requeue is deprecated, RequeueAfter or a watch instead); others in general terms', () => {
  const go = requeueForeverText({ requeues: 13, reconciles: 13, seconds: 15, go: true });
  assert.equal(go.title, 'Never goes idle: 13 of 13 reconciles in 15 s asked to be requeued (Requeue: true)');
  assert.match(go.explanation, /13 of its 13 reconciles \(the last one too\) returned `ctrl\.Result\{Requeue: true\}`[^]*`Owns` or `Watches`[^]*`ctrl\.Result\{RequeueAfter: 30 \* time\.Second\}` \(controller-runtime deprecates `Requeue` in favour of `RequeueAfter`\)/);
  const mod = requeueForeverText({ requeues: 2, reconciles: 3, seconds: 4, go: false });
  assert.doesNotMatch(mod.explanation, /ctrl\.Result|Owns/);
});
