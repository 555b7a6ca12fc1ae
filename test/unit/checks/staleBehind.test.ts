import { test } from 'node:test';
import assert from 'node:assert/strict';
import { staleBehindText } from '../../../src/core/checks/runChecks.ts';

const diffs = ['widgets.lab.reconcile.dev/w: status.observedGeneration: 2 in the reference, 1 after the perturbation'];

test('staleBehindText: a Conflict turned terminal names the write, the 409, that retrying stopped, why nothing came back, and the difference', () => {
  const t = staleBehindText({ conflict: { write: 'update widgets.lab.reconcile.dev ns/w (status)', resourceVersion: '41' }, staleWrites: ['update widgets.lab.reconcile.dev ns/w (status)'], outcome: 'terminal', later: 0, diffs });
  assert.equal(t.title, 'update widgets.lab.reconcile.dev ns/w (status) got 409 Conflict from a stale view and the reconciler stopped retrying: the key never converged');
  assert.match(t.explanation, /sent update widgets\.lab\.reconcile\.dev ns\/w \(status\) with resourceVersion 41 and the server answered 409 Conflict/);
  assert.match(t.explanation, /returned a terminal error, so the key was not retried; no later event queued the key again \(the change that caused the conflict did not pass the predicates: no new generation\)/);
  assert.match(t.explanation, /stayed unconverged: widgets\.lab\.reconcile\.dev\/w: status\.observedGeneration: 2 in the reference, 1 after the perturbation\./);
  assert.match(t.explanation, /read again and retry/);
});

test('staleBehindText: a Conflict swallowed as success, with later reconciles; no conflict at all; differences capped at four', () => {
  const swallowed = staleBehindText({ conflict: { write: 'patch x ns/w', resourceVersion: '7' }, staleWrites: [], outcome: 'success', later: 2, diffs });
  assert.match(swallowed.explanation, /returned success as if the write had been made; its 2 later reconcile\(s\) did not fix it/);
  const none = staleBehindText({ staleWrites: [], outcome: 'success', later: 0, diffs: ['a', 'b', 'c', 'd', 'e'] });
  assert.equal(none.title, 'Reconciled from a stale view and never converged (5 difference(s) a fresh controller fixes)');
  assert.match(none.explanation, /wrote nothing and ended with "success"[^]*: a; b; c; d; …\./);
});
