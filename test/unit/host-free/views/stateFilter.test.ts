import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KeyState } from '../../../../src/core/controller/keyState.ts';
import type { KubeObject } from '../../../../src/core/k8s/objects.ts';
import { inState, isConverged, isStateFilter, matchesFilter, stateFilterLabel, type ObjectStateFilter } from '../../../../src/host/views/stateFilter.ts';

const key = (over: Partial<KeyState> = {}): KeyState => ({ key: 'ns/w', phase: 'idle', dirtyWhileProcessing: false, requeues: 0, reconciles: 0, reasons: [], droppedReasons: 0, lastTriggers: [], ...over });
const obj = (over: { deleting?: boolean; generation?: number; observed?: number; ready?: 'True' | 'False' | 'Unknown' } = {}): KubeObject => ({
  apiVersion: 'lab.reconcile.dev/v1alpha1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'ns', generation: over.generation ?? 1, ...(over.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  status: {
    ...(over.observed !== undefined ? { observedGeneration: over.observed } : {}),
    ...(over.ready ? { conditions: [{ type: 'Ready', status: over.ready }] } : {}),
  },
});

test('each state: terminating, backoff/failing, not ready, spec not observed, warning', () => {
  assert.equal(inState('terminating', obj({ deleting: true }), undefined), true);
  assert.equal(inState('terminating', obj(), undefined), false);
  assert.equal(inState('backoff', obj(), key({ phase: 'backoff', requeues: 2 })), true);
  assert.equal(inState('backoff', obj(), key({ lastOutcome: { kind: 'error', message: 'x' } })), true, 'last reconcile failed');
  assert.equal(inState('backoff', obj(), key({ phase: 'queued', waiting: { kind: 'backoff', dueAt: 5 } })), true);
  assert.equal(inState('backoff', obj(), key({ lastOutcome: { kind: 'success' } })), false);
  assert.equal(inState('backoff', obj(), undefined), false, 'not a key of the loop');
  assert.equal(inState('notReady', obj({ ready: 'False' }), undefined), true);
  assert.equal(inState('notReady', obj({ ready: 'Unknown' }), undefined), true);
  assert.equal(inState('notReady', obj({ ready: 'True' }), undefined), false);
  assert.equal(inState('notReady', obj(), undefined), false, 'no Ready condition: nothing to say');
  assert.equal(inState('notObserved', obj({ generation: 3, observed: 2 }), undefined), true);
  assert.equal(inState('notObserved', obj({ generation: 3, observed: 3 }), undefined), false);
  assert.equal(inState('notObserved', obj({ deleting: true, generation: 3, observed: 2 }), undefined), false, 'the delete raised the generation by one');
  assert.equal(inState('notObserved', obj({ deleting: true, generation: 4, observed: 2 }), undefined), true);
  assert.equal(inState('warning', obj(), key({ warning: 'another controller …' })), true);
});

test('converged: reconciled successfully, nothing pending, status caught up and Ready', () => {
  const done = key({ reconciles: 2, lastOutcome: { kind: 'success' } });
  assert.equal(isConverged(obj({ generation: 2, observed: 2, ready: 'True' }), done), true);
  assert.equal(isConverged(obj(), done), true, 'no status to contradict it');
  assert.equal(isConverged(obj(), key()), false, 'never reconciled');
  assert.equal(isConverged(obj(), undefined), false);
  assert.equal(isConverged(obj({ generation: 3, observed: 2 }), done), false, 'spec not observed yet');
  assert.equal(isConverged(obj({ ready: 'False' }), done), false);
  assert.equal(isConverged(obj({ deleting: true }), done), false);
  assert.equal(isConverged(obj(), { ...done, phase: 'queued' }), false);
  assert.equal(isConverged(obj(), { ...done, waiting: { kind: 'requeueAfter', dueAt: 1 } }), false, 'a requeue-after is pending');
  assert.equal(isConverged(obj(), key({ reconciles: 1, lastOutcome: { kind: 'requeueAfter', afterMs: 10 } })), false);
});

test('converged and flapping come from the live convergence tracker when it has the key', () => {
  const conv = (state: 'converged' | 'changing' | 'flapping') => ({ key: 'ns/w', state, reason: '', at: 0, specChangedAt: 0, lastChangeAt: 0, writes: 0, noOpWrites: 0, returns: 0 });
  const done = key({ reconciles: 2, lastOutcome: { kind: 'success' } });
  assert.equal(inState('converged', obj(), done, conv('changing')), false, 'the tracker wins over the fallback');
  assert.equal(inState('converged', obj(), key(), conv('converged')), true);
  assert.equal(inState('flapping', obj(), done, conv('flapping')), true);
  // Only the rows that say "converged": not a queued key, not one Not Ready waiting on its own requeue-after, not a
  // Terminating one ("no progress").
  assert.equal(inState('converged', obj({ ready: 'True' }), key({ phase: 'queued', reconciles: 2 }), conv('converged')), false, 'queued');
  const requeue = key({ phase: 'requeueAfter', reconciles: 2, lastOutcome: { kind: 'requeueAfter', afterMs: 20_000 }, waiting: { kind: 'requeueAfter', dueAt: 1 } });
  assert.equal(inState('converged', obj({ ready: 'False' }), requeue, conv('converged')), false, 'Not Ready, waiting on its own requeue');
  assert.equal(inState('converged', obj({ ready: 'True' }), requeue, conv('converged')), true, 'Ready, on a periodic requeue');
  assert.equal(inState('converged', obj({ deleting: true }), done, conv('converged')), false, 'Terminating: no progress');
  assert.equal(inState('converged', obj(), done, { ...conv('converged'), noOpWrites: 2 }), true, '"converged, 2 no-op writes"');
  assert.equal(inState('flapping', obj(), done, undefined), false);
});

test('the filter is a union of its states; empty shows everything; labels follow the picker order', () => {
  const f = (...s: ObjectStateFilter[]) => new Set(s);
  assert.equal(matchesFilter(f(), obj(), undefined), true);
  assert.equal(matchesFilter(f('terminating', 'notReady'), obj({ ready: 'False' }), undefined), true);
  assert.equal(matchesFilter(f('terminating', 'notReady'), obj({ ready: 'True' }), undefined), false);
  assert.equal(stateFilterLabel(['notReady', 'terminating']), 'Terminating, Not ready');
  assert.equal(isStateFilter('converged'), true);
  assert.equal(isStateFilter('bogus'), false);
});
