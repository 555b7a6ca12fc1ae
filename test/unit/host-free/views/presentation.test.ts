import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KeyState } from '../../../../src/core/controller/keyState.ts';
import type { KubeObject } from '../../../../src/core/k8s/objects.ts';
import { convergenceContextOf, convergenceDetail, dueIn, finalizersOf, hasBackoff, kindLabels, lastErrorLine, outcomeSummary, presentCondition, presentKey, presentNamespaceRow, presentObject, queueSummary, reasonSummary } from '../../../../src/host/views/presentation.ts';

const NOW = Date.parse('2026-03-01T12:00:00Z');

const key = (over: Partial<KeyState> = {}): KeyState => ({
  key: 'default/w1',
  phase: 'idle',
  dirtyWhileProcessing: false,
  requeues: 0,
  reconciles: 0,
  reasons: [],
  droppedReasons: 0,
  lastTriggers: [],
  ...over,
});

const widget = (over: Partial<KubeObject['metadata']> = {}, status?: unknown): KubeObject => ({
  apiVersion: 'lab.reconcile.dev/v1alpha1',
  kind: 'Widget',
  metadata: { name: 'w1', namespace: 'default', generation: 2, resourceVersion: '41', creationTimestamp: '2026-03-01T11:00:00Z', ...over },
  ...(status === undefined ? {} : { status }),
});

describe('queueSummary', () => {
  it('describes each phase with counters and due times', () => {
    assert.equal(queueSummary(key(), NOW), '');
    assert.equal(queueSummary(key({ phase: 'queued' }), NOW), 'queued');
    assert.equal(queueSummary(key({ phase: 'processing', dirtyWhileProcessing: true }), NOW), 'processing (queued again)');
    assert.equal(queueSummary(key({ phase: 'backoff', requeues: 3, waiting: { kind: 'backoff', dueAt: NOW + 4200 } }), NOW), 'backoff 3 · retry in 4.2s');
    assert.equal(
      queueSummary(key({ phase: 'requeueAfter', waiting: { kind: 'requeueAfter', dueAt: NOW + 30_000 }, lastOutcome: { kind: 'requeueAfter', afterMs: 30_000, reason: 'waiting for secret' } }), NOW),
      'requeue in 30s (waiting for secret)',
    );
    assert.equal(queueSummary(key({ phase: 'queued', requeues: 2, waiting: { kind: 'backoff', dueAt: NOW + 1000 } }), NOW), 'queued · retry in 1.0s · 2 failures');
  });
  it('says "now" for an overdue wait', () => assert.equal(dueIn(NOW - 5, NOW), 'now'));
});

describe('outcomeSummary and reasonSummary', () => {
  it('formats outcomes', () => {
    assert.equal(outcomeSummary({ kind: 'success' }, 4), 'ok in 4ms');
    assert.equal(outcomeSummary({ kind: 'error', message: 'boom', timedOut: true }, 30_000), 'timed out in 30s: boom');
    assert.equal(outcomeSummary({ kind: 'terminal', message: 'bad spec' }), 'terminal error: bad spec');
    assert.equal(outcomeSummary({ kind: 'error', message: 'not ready', ignored: 'RequeueAfter 30 s' }, 2), 'error in 2ms (RequeueAfter 30 s ignored): not ready');
    assert.equal(outcomeSummary({ kind: 'requeueAfter', afterMs: 5000, reason: 'poll' }), 'requeue after 5.0s (poll)');
  });
  it('explains why a key was queued', () => {
    assert.equal(
      reasonSummary({ kind: 'informer', event: 'update', resource: 'widgets.v1alpha1.lab.reconcile.dev', objectKey: 'default/w1', resourceVersion: '12', at: NOW - 3000 }, NOW),
      'update of default/w1 (rv 12), 3.0s ago',
    );
    assert.equal(
      reasonSummary({ kind: 'owned', event: 'delete', resource: 'configmaps.v1', child: 'default/w1-config', childKind: 'ConfigMap', at: NOW }, NOW),
      'delete of owned ConfigMap default/w1-config, 0ms ago',
    );
    assert.equal(
      reasonSummary({ kind: 'watch', event: 'update', resource: 'configmaps.v1', objectKey: 'default/shelf', objectKind: 'ConfigMap', resourceVersion: '40', at: NOW - 2000 }, NOW),
      'update of watched ConfigMap default/shelf (rv 40), 2.0s ago',
    );
    // The initial list of an owned or watched resource reads as such, as the primary's does (not as a new object).
    assert.equal(
      reasonSummary({ kind: 'owned', event: 'add', resource: 'services.v1', child: 'default/w1', childKind: 'Service', resourceVersion: '397', initial: true, at: NOW - 2000 }, NOW),
      'initial list of owned Service default/w1 (rv 397), 2.0s ago',
    );
    assert.equal(
      reasonSummary({ kind: 'watch', event: 'add', resource: 'configmaps.v1', objectKey: 'default/shelf', objectKind: 'ConfigMap', resourceVersion: '40', initial: true, at: NOW - 2000 }, NOW),
      'initial list of watched ConfigMap default/shelf (rv 40), 2.0s ago',
    );
    const ownWrite = { kind: 'owned', event: 'update', resource: 'deployments.v1.apps', child: 'default/w1-web', childKind: 'Deployment', resourceVersion: '41', at: NOW } as const;
    assert.equal(reasonSummary(ownWrite, NOW, 'default/w1', 'default/w1'), "update of owned Deployment default/w1-web (rv 41, this key's own write), 0ms ago");
    assert.equal(reasonSummary(ownWrite, NOW, 'default/w2', 'default/w1'), 'update of owned Deployment default/w1-web (rv 41, written by the reconcile of default/w1), 0ms ago');
    assert.equal(reasonSummary(ownWrite, NOW, 'default/w2'), 'update of owned Deployment default/w1-web (rv 41), 0ms ago', 'no known writer: the event alone');
    assert.equal(reasonSummary(ownWrite, NOW, undefined, 'default/w1'), 'update of owned Deployment default/w1-web (rv 41), 0ms ago', 'without the key (the Event Log): as before');
    assert.equal(reasonSummary({ kind: 'backoff', attempt: 2, delayMs: 10, error: 'conflict', at: NOW - 1000 }, NOW), 'retry #2 after 10ms backoff (conflict), due 1.0s ago');
    // An exec program's error carries its stderr tail: only its first line, so the due time stays in sight.
    const execError = `/ws/backup.py exited with code 3\nstderr (tail):\n${'noise line\n'.repeat(300)}boom`;
    assert.equal(reasonSummary({ kind: 'backoff', attempt: 1, delayMs: 5, error: execError, at: NOW + 5 }, NOW), 'retry #1 after 5ms backoff (/ws/backup.py exited with code 3 …), due in 5ms');
    assert.equal(reasonSummary({ kind: 'backoff', attempt: 1, delayMs: 5, error: 'x'.repeat(400), at: NOW + 5 }, NOW), `retry #1 after 5ms backoff (${'x'.repeat(159)}…), due in 5ms`);
    assert.equal(reasonSummary({ kind: 'requeueAfter', afterMs: 45_000, at: NOW + 40_000 }, NOW), 'requeue after 45s, due in 40s', 'a Go wait reported when it began');
    assert.equal(reasonSummary({ kind: 'manual', action: 'reconcileNow', at: NOW }, NOW), 'reconcileNow, 0ms ago');
    assert.equal(
      reasonSummary({ kind: 'manual', action: 'enqueue', note: 'added outside an informer event (a channel source or the program itself)', at: NOW }, NOW),
      'added outside an informer event (a channel source or the program itself), 0ms ago',
    );
  });
});

describe('presentKey', () => {
  it('shows state, requeue count, next due time, last error and reasons', () => {
    const p = presentKey(
      key({
        phase: 'backoff',
        requeues: 4,
        reconciles: 5,
        waiting: { kind: 'backoff', dueAt: NOW + 80 },
        lastOutcome: { kind: 'error', message: 'conflict' },
        lastError: 'conflict',
        lastErrorAt: NOW - 10,
        reasons: [{ kind: 'informer', event: 'update', resource: 'widgets', objectKey: 'default/w1', at: NOW - 20 }],
      }),
      NOW,
    );
    assert.equal(p.description, 'backoff 4 · retry in 80ms');
    assert.equal(p.state, 'backoff');
    assert.deepEqual(p.icon, { id: 'error', color: 'list.errorForeground' });
    const labels = p.tooltip.map((l) => l.label);
    for (const l of ['State', 'Next retry', 'Requeues (backoff counter)', 'Last error', 'Queued because']) assert.ok(labels.includes(l), l);
  });
  it('falls back to the last result for an idle key', () => {
    const p = presentKey(key({ reconciles: 1, lastOutcome: { kind: 'success' }, lastDurationMs: 3 }), NOW);
    assert.equal(p.description, 'last: ok in 3ms');
    assert.equal(p.icon.id, 'pass');
  });
  it("an idle key's multi-line last error (an exec program's stderr tail) shows its first line; the tooltip has all of it", () => {
    const message = '/ws/backup.py: retention must be > 0\nstderr (tail):\nchecked spec';
    const p = presentKey(key({ reconciles: 1, lastOutcome: { kind: 'terminal', message }, lastDurationMs: 3, lastError: message, lastErrorAt: NOW }), NOW);
    assert.equal(p.description, 'last: terminal error in 3ms: /ws/backup.py: retention must be > 0 …');
    assert.equal(p.tooltip.find((l) => l.label === 'Last result')?.value, `terminal error in 3ms: ${message}`);
  });
});

describe('presentObject', () => {
  it('marks a robustness check\'s scratch copy as such (its scratch namespace, or the label of a cluster-scoped copy); your own objects are not', () => {
    const copy = presentObject({ ...widget({}), metadata: { ...widget({}).metadata, namespace: 'rl-check-3accf0a0' } }, undefined, NOW);
    assert.match(copy.description, /^robustness-check copy/);
    assert.ok(copy.tooltip.some((l) => l.label === 'Robustness checks' && /scratch copy made by Run Robustness Checks/.test(l.value)));
    const clusterCopy = presentObject({ metadata: { name: 'rl-check-3accf0a0-g', labels: { 'checks.reconcile-lab.dev/scratch': 'rl-check-3accf0a0' } } }, undefined, NOW);
    assert.match(clusterCopy.description, /^robustness-check copy/);
    const own = presentObject(widget({}), undefined, NOW);
    assert.doesNotMatch(own.description, /robustness-check/);
    assert.ok(!own.tooltip.some((l) => l.label === 'Robustness checks'));
  });
  it('shows a Terminating object with its deletion age and finalizers first', () => {
    const p = presentObject(widget({ deletionTimestamp: '2026-03-01T11:57:00Z', finalizers: ['lab.reconcile.dev/cleanup'] }), undefined, NOW);
    assert.match(p.description, /^Terminating 3m \(lab\.reconcile\.dev\/cleanup\)/);
    assert.equal(p.state, 'terminating:finalizers');
    assert.equal(p.terminating, true);
    assert.equal(p.icon.id, 'trash');
    assert.ok(p.tooltip.some((l) => l.label === 'Finalizer' && l.value === 'lab.reconcile.dev/cleanup'));
  });
  it('shows what holds a Terminating Namespace: its spec.finalizers (kubernetes), so Strip Finalizers is offered on it', () => {
    // A namespace list item carries no kind: the resource says it is a Namespace.
    const ns = { metadata: { name: 'h5-stuck', deletionTimestamp: '2026-03-01T11:59:10Z' }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Terminating' } };
    const p = presentObject(ns, undefined, NOW, undefined, 'namespaces');
    assert.equal(p.description, 'Terminating 50s (kubernetes)');
    assert.equal(p.state, 'terminating:finalizers', 'the context value offers Strip Finalizers');
    assert.deepEqual(finalizersOf({ ...ns, metadata: { ...ns.metadata, finalizers: ['example.org/x'] } }, 'namespaces'), ['example.org/x', 'kubernetes']);
    assert.deepEqual(finalizersOf({ ...ns, kind: 'Namespace', apiVersion: 'v1' }), ['kubernetes'], 'a Namespace by its kind');
    // A live namespace's "kubernetes" holds nothing: not shown, not offered for stripping.
    const live = presentObject({ metadata: { name: 'default' }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } }, undefined, NOW, undefined, 'namespaces');
    assert.equal(live.state, 'live');
    // Another resource's own spec.finalizers field is not a finalizer.
    assert.deepEqual(finalizersOf({ metadata: { name: 'x' }, spec: { finalizers: ['mine'] } }, 'gadgets.example.org'), []);
    assert.equal(presentObject({ metadata: { name: 'x', deletionTimestamp: '2026-03-01T11:59:10Z' }, spec: { finalizers: ['mine'] } }, undefined, NOW, undefined, 'gadgets.example.org').state, 'terminating');
  });
  it('shows generation vs observedGeneration and the Ready condition', () => {
    const stale = presentObject(widget({}, { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True' }] }), undefined, NOW);
    assert.equal(stale.description, 'gen 2/1 observed · Ready');
    assert.equal(stale.icon.id, 'sync');
    const ok = presentObject(widget({}, { observedGeneration: 2, conditions: [{ type: 'Ready', status: 'True' }] }), undefined, NOW);
    assert.equal(ok.description, 'gen 2 · Ready');
    // Terminating: the delete raised the generation by one; that is said, not left to read as "spec not observed".
    const deleting = presentObject(widget({ deletionTimestamp: '2026-03-01T11:59:10Z', finalizers: ['lab.reconcile.dev/cleanup'] }, { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True' }] }), undefined, NOW);
    assert.match(String(deleting.description), /gen 2\/1 observed \(\+1 by the delete\)/);
    assert.ok(deleting.tooltip.some((t) => t.label === 'Generation' && /the delete raised metadata\.generation by one/.test(t.value)), JSON.stringify(deleting.tooltip));
    const lagging = presentObject(widget({ deletionTimestamp: '2026-03-01T11:59:10Z', generation: 3 }, { observedGeneration: 1 }), undefined, NOW);
    assert.match(String(lagging.description), /gen 3\/1 observed(?! \()/, 'more than the delete behind: not explained away');
    assert.equal(ok.icon.id, 'pass');
    assert.equal(ok.state, 'live');
    const bad = presentObject(widget({}, { observedGeneration: 2, conditions: [{ type: 'Ready', status: 'False', reason: 'ChildConflict' }] }), undefined, NOW);
    assert.equal(bad.description, 'gen 2 · Not Ready (ChildConflict)');
    assert.equal(bad.icon.id, 'error');
  });
  it('adds the queue state and lets processing win the icon', () => {
    const p = presentObject(widget({ finalizers: ['x/y'] }), key({ phase: 'processing' }), NOW);
    assert.equal(p.description, 'processing');
    assert.equal(p.icon.id, 'sync~spin');
    assert.equal(p.state, 'live:finalizers');
    const b = presentObject(widget(), key({ phase: 'backoff', requeues: 2, waiting: { kind: 'backoff', dueAt: NOW + 20 }, lastError: 'boom', lastOutcome: { kind: 'error', message: 'boom' } }), NOW);
    assert.equal(b.description, 'backoff 2 · retry in 20ms');
    assert.ok(b.tooltip.some((l) => l.label === 'Last error' && l.value === 'boom'));
  });
  it('marks an idle key whose last reconcile failed (a terminal error is not retried), as the Work Queue row does', () => {
    const t = presentObject(widget(), key({ reconciles: 2, lastError: 'bad schedule', lastOutcome: { kind: 'terminal', message: 'bad schedule' } }), NOW);
    assert.equal(t.description, 'terminal error (not retried)');
    assert.equal(t.icon.id, 'error');
    assert.ok(t.tooltip.some((l) => l.label === 'Last error' && l.value === 'bad schedule'));
    assert.equal(presentKey(key({ reconciles: 2, lastError: 'bad schedule', lastOutcome: { kind: 'terminal', message: 'bad schedule' } }), NOW).icon.id, 'error', 'the same icon in both views');
    const e = presentObject(widget(), key({ reconciles: 1, lastError: 'boom', lastOutcome: { kind: 'error', message: 'boom' } }), NOW);
    assert.equal(e.description, 'last reconcile failed');
    assert.equal(e.icon.id, 'error');
    // A later success clears it; an error whose retry is queued reads as the queue state alone.
    assert.equal(presentObject(widget(), key({ reconciles: 3, lastError: 'boom', lastOutcome: { kind: 'success' } }), NOW).description, '');
    assert.equal(presentObject(widget(), key({ phase: 'queued', requeues: 1, lastError: 'boom', lastOutcome: { kind: 'error', message: 'boom' } }), NOW).description, 'queued · 1 failure');
  });
});

describe('presentCondition', () => {
  it('colours by status and shows reason, message and age', () => {
    const c = presentCondition({ type: 'Ready', status: 'False', reason: 'Missing', message: 'no secret', lastTransitionTime: '2026-03-01T11:58:00Z' }, NOW);
    assert.equal(c.label, 'Ready=False');
    assert.equal(c.description, 'Missing · no secret · 2m ago');
    assert.equal(c.icon.id, 'circle-slash');
    assert.equal(c.state, 'false');
  });
});

describe('priorities (priority queue)', () => {
  it('shows a non-default priority in the description and every priority in the tooltip', () => {
    assert.equal(queueSummary(key({ phase: 'queued', priority: -100 }), NOW), 'queued · low priority (-100)');
    assert.equal(queueSummary(key({ phase: 'queued', priority: 0 }), NOW), 'queued');
    assert.equal(queueSummary(key({ phase: 'backoff', requeues: 1, priority: 10, waiting: { kind: 'backoff', dueAt: NOW + 5 } }), NOW), 'backoff 1 · retry in 5ms · priority 10');
    const p = presentKey(key({ phase: 'queued', priority: -100 }), NOW);
    assert.ok(p.tooltip.some((l) => l.label === 'Priority' && l.value.startsWith('-100 (low: initial list or resync)')));
    assert.ok(!presentKey(key({ phase: 'queued' }), NOW).tooltip.some((l) => l.label === 'Priority'), 'no priority (client-go queue): no line');
  });
  it('describes the deprecated requeue outcome', () => {
    assert.equal(outcomeSummary({ kind: 'requeue', reason: 'poll', retryAt: NOW + 5 }, 3), 'requeue (rate-limited) (poll) in 3ms');
  });
});

describe('convergence in the views', () => {
  const conv = (state: 'converged' | 'changing' | 'flapping', reason: string) => ({
    key: 'default/w1', state, reason, at: NOW, generation: 2, specChangedAt: NOW - 60_000, lastChangeAt: NOW - 30_000, writes: 1, noOpWrites: 0, returns: state === 'flapping' ? 3 : 0,
  });
  it('adds the state to an object row and its tooltip; flapping gets its own icon', () => {
    const ready = { conditions: [{ type: 'Ready', status: 'True' }], observedGeneration: 2 };
    const p = presentObject(widget({}, ready), key({ reconciles: 1, lastOutcome: { kind: 'success' } }), NOW, conv('converged', 'No writes for 30 s.'));
    assert.equal(p.description, 'gen 2 · Ready · converged');
    assert.ok(p.tooltip.some((l) => l.label === 'Convergence' && l.value === 'converged: nothing changed for 30s since generation 2 was reconciled.'), JSON.stringify(p.tooltip));
    assert.equal(p.icon.id, 'pass');
    const f = presentObject(widget({}, ready), key({ reconciles: 9 }), NOW, conv('flapping', 'ConfigMap default/w1-config went back to an earlier state 3 time(s).'));
    assert.match(f.description, /flapping$/);
    assert.equal(f.icon.id, 'pulse');
    assert.equal(presentObject(widget({}, ready), undefined, NOW).description, 'gen 2 · Ready', 'unchanged without a tracker');
  });
  it('adds the state after a work-queue key\'s queue state (a narrow view cuts the end) and explains it in the tooltip', () => {
    const k = presentKey(key({ phase: 'queued' }), NOW, conv('changing', 'Generation 2 was seen 1.0 s ago and no reconcile has finished since.'));
    assert.equal(k.description, 'queued · changing');
    assert.equal(presentKey(key({ phase: 'queued', priority: -100, requeues: 3 }), NOW, conv('changing', 'x')).description.split(' · ')[0], 'queued', 'the queue state comes first');
    assert.ok(k.tooltip.some((l) => l.label === 'Convergence' && /no reconcile has finished/.test(l.value)));
    assert.equal(presentKey(key({ phase: 'idle', reconciles: 4 }), NOW, conv('flapping', 'x')).icon.id, 'pulse');
  });
  it('"converged" is not said of a key that is queued or running, and reads "no progress" on an object still Terminating', () => {
    assert.equal(presentKey(key({ phase: 'queued' }), NOW, conv('converged', 'x')).description, 'queued');
    assert.equal(presentKey(key({ phase: 'processing' }), NOW, conv('converged', 'x')).description.includes('converged'), false);
    assert.match(presentKey(key({ phase: 'requeueAfter', waiting: { kind: 'requeueAfter', dueAt: NOW + 27_000 } }), NOW, conv('converged', 'x')).description, / · converged$/, 'a requeue that waits: nothing is about to change');
    // Not Ready and waiting on its own requeue-after ("not ready yet"): the loop means to look again, so not "converged";
    // a Ready object on a periodic requeue-after is.
    const waiting = key({ phase: 'requeueAfter', reconciles: 3, lastOutcome: { kind: 'requeueAfter', afterMs: 30_000 }, waiting: { kind: 'requeueAfter', dueAt: NOW + 27_000 } });
    const notReady = presentObject(widget({}, { conditions: [{ type: 'Ready', status: 'False', reason: 'DependencyMissing' }], observedGeneration: 2 }), waiting, NOW, conv('converged', 'x'));
    assert.doesNotMatch(notReady.description, /converged/, notReady.description);
    assert.match(notReady.description, /Not Ready \(DependencyMissing\)/);
    assert.ok(notReady.tooltip.some((l) => l.label === 'Convergence'), 'the tooltip still has the tracker\'s word');
    assert.match(presentObject(widget({}, { conditions: [{ type: 'Ready', status: 'True' }], observedGeneration: 2 }), waiting, NOW, conv('converged', 'x')).description, / · converged$/);
    const stuck = presentObject(widget({ finalizers: ['irrigation.example.org/valve'], deletionTimestamp: new Date(NOW - 210_000).toISOString() }), key({ reconciles: 2, lastOutcome: { kind: 'success' } }), NOW, conv('converged', 'No writes for 51 s.'));
    assert.match(stuck.description, /^Terminating .* · no progress$/, stuck.description);
    assert.ok(stuck.tooltip.some((l) => l.label === 'Convergence' && /^no progress: the controller stopped acting \(nothing changed for 30s since generation 2 was reconciled\), but the object is still Terminating: a finalizer on it is not being removed\. Strip Finalizers… shows who owns it/.test(l.value)), JSON.stringify(stuck.tooltip));
  });
  it('a converged key whose reconciles kept sending writes that changed nothing says so, in the row and the tooltip', () => {
    const noOps = (n: number) => ({ ...conv('converged', 'No writes or changes for 30 s since generation 2 was reconciled (3 write(s) that changed nothing).'), noOpWrites: n });
    const ready = { conditions: [{ type: 'Ready', status: 'True' }], observedGeneration: 2 };
    const p = presentObject(widget({}, ready), key({ reconciles: 4, lastOutcome: { kind: 'success' } }), NOW, noOps(3));
    assert.equal(p.description, 'gen 2 · Ready · converged, 3 no-op writes');
    assert.ok(p.tooltip.some((l) => l.label === 'Convergence' && /^converged: .* a pass with nothing to do should write nothing\. .*Dry-Run Reconcile marks such a write "changes nothing"\.$/.test(l.value)), JSON.stringify(p.tooltip));
    assert.equal(presentKey(key({ phase: 'idle', reconciles: 2 }), NOW, noOps(1)).description.endsWith(' · converged, 1 no-op write'), true);
    assert.equal(presentKey(key({ phase: 'queued' }), NOW, noOps(1)).description, 'queued', 'not while queued');
    assert.equal(presentObject(widget({}, ready), key({ reconciles: 1, lastOutcome: { kind: 'success' } }), NOW, noOps(0)).description, 'gen 2 · Ready · converged', 'no no-op write: plain');
  });
  it('the Work Queue row follows the Resources row: a Not Ready key waiting on its own requeue-after is not "converged" there either', () => {
    // The walk's cold-oven: the reconciler answered requeueAfterMs 20000 ("oven too cold"), status Not Ready (TooCold).
    const cold = widget({ generation: 1 }, { conditions: [{ type: 'Ready', status: 'False', reason: 'TooCold' }], observedGeneration: 1 });
    const waiting = key({ phase: 'requeueAfter', reconciles: 3, lastOutcome: { kind: 'requeueAfter', afterMs: 20_000, reason: 'oven too cold' }, waiting: { kind: 'requeueAfter', dueAt: NOW + 8_900 } });
    const c = { ...conv('converged', 'x'), generation: 1, noOpWrites: 1, lastChangeAt: NOW - 162_000 };
    const row = presentObject(cold, waiting, NOW, c);
    const item = presentKey(waiting, NOW, c, undefined, cold);
    assert.equal(item.description, 'requeue in 8.9s (oven too cold)');
    assert.doesNotMatch(row.description, /converged/);
    const line = item.tooltip.find((l) => l.label === 'Convergence')!.value;
    assert.equal(line, row.tooltip.find((l) => l.label === 'Convergence')!.value, 'one sentence in both views');
    assert.match(line, /^not converged: the object is Not Ready and its reconciler asked to look again \("oven too cold"\), so the loop means to act again\. Until now nothing changed for 2m42s since generation 1 was reconciled; 1 write since generation 1 was seen changed nothing \(a no-op write\)\.$/);
    // A Ready object on a periodic requeue-after is converged in both.
    const ready = widget({ generation: 1 }, { conditions: [{ type: 'Ready', status: 'True' }], observedGeneration: 1 });
    assert.match(presentKey(waiting, NOW, c, undefined, ready).description, / · converged, 1 no-op write$/);
    assert.match(presentObject(ready, waiting, NOW, c).description, / · converged, 1 no-op write$/);
  });
  it('a queued or running key is not called converged in the tooltip or the Work Queue\'s child line either', () => {
    const c = { ...conv('converged', 'x'), generation: 1, lastChangeAt: NOW - 7_600 };
    const queued = presentKey(key({ phase: 'queued' }), NOW, c);
    assert.equal(queued.description, 'queued');
    assert.deepEqual(queued.tooltip.find((l) => l.label === 'Convergence'), { label: 'Convergence', value: 'not judged while queued: a reconcile is about to run. Until now nothing changed for 7.6s since generation 1 was reconciled.' });
    const ready = widget({ generation: 1 }, { conditions: [{ type: 'Ready', status: 'True' }], observedGeneration: 1 });
    const row = presentObject(ready, key({ phase: 'queued' }), NOW, c);
    assert.equal(row.description, 'gen 1 · Ready · queued');
    assert.match(row.tooltip.find((l) => l.label === 'Convergence')!.value, /^not judged while queued/);
    assert.deepEqual(convergenceDetail(c, convergenceContextOf(key({ phase: 'processing' }), ready)).word, 'not judged while a reconcile runs');
    assert.deepEqual(convergenceDetail(c, convergenceContextOf(key({ phase: 'idle', reconciles: 1 }), ready)), { word: 'converged', why: 'nothing changed for 7.6s since generation 1 was reconciled.' });
  });
  it('says counts in proper singular and plural, and no "No writes" beside writes that changed nothing', () => {
    const c = { ...conv('converged', 'No writes or changes for 315 s since generation 1 was reconciled (3 write(s) that changed nothing).'), generation: 1, noOpWrites: 3, lastChangeAt: NOW - 315_000 };
    const line = convergenceDetail(c, convergenceContextOf(key({ phase: 'idle', reconciles: 5 }), undefined));
    assert.equal(line.word, 'converged');
    assert.match(line.why, /^nothing changed for 5m15s since generation 1 was reconciled; 3 writes since generation 1 was seen changed nothing \(no-op writes\): the server kept the resourceVersion, and a pass with nothing to do should write nothing\. /);
    assert.doesNotMatch(line.why, /\(s\)|No writes/);
    const flapping = convergenceDetail(conv('flapping', 'ConfigMap default/w1-config went back to an earlier state 3 time(s) in the last 20 s while generation 2 stayed the same.'));
    assert.equal(flapping.why, 'ConfigMap default/w1-config went back to an earlier state 3 times in the last 20 s while generation 2 stayed the same.');
    const changing = convergenceDetail(conv('changing', 'Last change 1.0 s ago: 1 write(s) since generation 2 was seen; converged after 5.0 s without changes.'));
    assert.equal(changing.why, 'Last change 1.0 s ago: 1 write since generation 2 was seen; converged after 5.0 s without changes.');
    assert.ok(presentKey(key({ phase: 'queued', droppedReasons: 1 }), NOW).tooltip.some((l) => l.value === '… and 1 earlier reason'));
  });
});

describe('hasBackoff (the views\' `:backoff` marker: Reset Backoff applies)', () => {
  it('is true for a key with failures or a backoff wait, false otherwise', () => {
    assert.equal(hasBackoff(undefined), false);
    assert.equal(hasBackoff(key()), false);
    assert.equal(hasBackoff(key({ phase: 'queued', reconciles: 3 })), false);
    assert.equal(hasBackoff(key({ phase: 'requeueAfter', waiting: { kind: 'requeueAfter', dueAt: NOW + 1000 } })), false);
    assert.equal(hasBackoff(key({ phase: 'idle', lastError: 'old failure, since succeeded' })), false);
    assert.equal(hasBackoff(key({ phase: 'backoff', requeues: 1, waiting: { kind: 'backoff', dueAt: NOW + 5 } })), true);
    assert.equal(hasBackoff(key({ phase: 'processing', requeues: 2 })), true);
    assert.equal(hasBackoff(key({ phase: 'queued', waiting: { kind: 'backoff', dueAt: NOW + 5 } })), true);
  });
});

describe('presentNamespaceRow', () => {
  const now = Date.parse('2026-01-01T00:01:00Z');
  const ns = (deletionTimestamp?: string): KubeObject => ({ metadata: { name: 'h9-shop', ...(deletionTimestamp ? { deletionTimestamp } : {}) }, spec: { finalizers: ['kubernetes'] } });

  it('says the namespace is Terminating (with its age) when the watched Namespace has a deletionTimestamp', () => {
    const p = presentNamespaceRow({ total: 3, terminatingObjects: 2, namespacesWatched: true, namespaceObject: ns('2026-01-01T00:00:48Z') }, now);
    assert.equal(p.terminating, true);
    assert.equal(p.description, 'Terminating 12s · 3 · 2 terminating');
    assert.deepEqual(p.icon, { id: 'trash', color: 'list.warningForeground' });
    assert.match(p.tooltip.find((l) => l.label === 'Namespace')?.value ?? '', /^Terminating: deletion requested 12s ago/);
  });

  it('an Active watched Namespace: only the counts, tooltip says Active', () => {
    const p = presentNamespaceRow({ total: 3, shown: 1, terminatingObjects: 0, namespacesWatched: true, namespaceObject: ns() }, now);
    assert.equal(p.terminating, false);
    assert.equal(p.description, '1 of 3');
    assert.deepEqual(p.icon, { id: 'symbol-namespace' });
    assert.equal(p.tooltip.find((l) => l.label === 'Namespace')?.value, 'Active');
  });

  it('namespaces not watched (no rights to list them): claims nothing, the tooltip says the state is not known and why', () => {
    const p = presentNamespaceRow({ total: 2, terminatingObjects: 1, namespacesWatched: false }, now);
    assert.equal(p.terminating, false);
    assert.equal(p.description, '2 · 1 terminating');
    const line = p.tooltip.find((l) => l.label === 'Namespace')?.value ?? '';
    assert.match(line, /^state not known: namespaces are not watched \(add "namespaces" to reconcileLab.resources/);
    assert.doesNotMatch(line, /may be being deleted/);
  });

  it('namespaces not watched and every object Terminating: hints that the namespace may be being deleted', () => {
    const p = presentNamespaceRow({ total: 2, terminatingObjects: 2, namespacesWatched: false }, now);
    assert.equal(p.terminating, false);
    assert.match(p.tooltip.find((l) => l.label === 'Namespace')?.value ?? '', /every object here is Terminating: the namespace may be being deleted$/);
  });

  it('namespaces watched but this one not cached: says so rather than Active', () => {
    const p = presentNamespaceRow({ total: 1, terminatingObjects: 0, namespacesWatched: true }, now);
    assert.match(p.tooltip.find((l) => l.label === 'Namespace')?.value ?? '', /^not in the cache/);
  });
});

describe('lastErrorLine', () => {
  it('"last error" while the last reconcile failed; "earlier error" with its age once a later one succeeded', () => {
    assert.deepEqual(lastErrorLine(key({ lastError: 'boom', lastErrorAt: NOW - 3000, lastOutcome: { kind: 'error', message: 'boom' } }), NOW), { label: 'last error', value: 'boom (3.0s ago)' });
    assert.deepEqual(lastErrorLine(key({ lastError: 'boom', lastErrorAt: NOW - 60_000, lastOutcome: { kind: 'requeueAfter', afterMs: 1000 } }), NOW), { label: 'earlier error', value: 'boom (1m ago, before the last reconcile, which succeeded)' });
    assert.equal(lastErrorLine(key({ lastOutcome: { kind: 'success' } }), NOW), undefined);
    const multi = key({ lastError: '/ws/backup.py exited with code 3\nstderr (tail):\nboom', lastErrorAt: NOW - 3000, lastOutcome: { kind: 'error', message: 'x' } });
    assert.deepEqual(lastErrorLine(multi, NOW, { oneLine: true }), { label: 'last error', value: '/ws/backup.py exited with code 3 … (3.0s ago, hover for all of it)' });
    assert.deepEqual(lastErrorLine(multi, NOW), { label: 'last error', value: '/ws/backup.py exited with code 3\nstderr (tail):\nboom (3.0s ago)' });
    assert.deepEqual(lastErrorLine(key({ lastError: 'boom', lastErrorAt: NOW - 3000, lastOutcome: { kind: 'error', message: 'boom' } }), NOW, { oneLine: true }), { label: 'last error', value: 'boom (3.0s ago)' }, 'one line: as it is');
  });
});

describe('kindLabels (the Resources tree\'s kind rows)', () => {
  const r = (resource: string, group: string, kind: string) => ({ id: group ? `${resource}.${group}` : resource, info: { group, version: 'v1', resource, kind, namespaced: true } });
  it('names the group only of kinds that collide, so five Widget rows of five groups read differently', () => {
    const resources = [
      r('ovens', 'kitchen.example.com', 'Oven'),
      r('widgets', 'lab.reconcile.dev', 'Widget'),
      r('widgets', 't-3402f952.lab.reconcile.dev', 'Widget'),
      r('widgets', 't-7c764570.lab.reconcile.dev', 'Widget'),
      r('configmaps', '', 'ConfigMap'),
      r('services', '', 'Service'),
      r('services', 'serving.knative.dev', 'Service'),
    ];
    const labels = kindLabels(resources);
    assert.deepEqual([...labels.values()], [
      'Oven',
      'Widget (lab.reconcile.dev)',
      'Widget (t-3402f952.lab.reconcile.dev)',
      'Widget (t-7c764570.lab.reconcile.dev)',
      'ConfigMap',
      'Service (core)',
      'Service (serving.knative.dev)',
    ]);
    assert.equal(new Set(labels.values()).size, resources.length, 'every row has its own label');
  });
  it('falls back to the resource id for one kind under two plurals of one group', () => {
    const labels = kindLabels([r('widgets', 'lab.reconcile.dev', 'Widget'), r('widgetz', 'lab.reconcile.dev', 'Widget')]);
    assert.deepEqual([...labels.values()], ['Widget (widgets.lab.reconcile.dev)', 'Widget (widgetz.lab.reconcile.dev)']);
  });
});
