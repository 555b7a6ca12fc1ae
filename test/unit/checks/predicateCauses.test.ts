import { test } from 'node:test';
import assert from 'node:assert/strict';
import { historyPathExplanation, unobservedExplanation } from '../../../src/core/checks/runChecks.ts';

const diffs = ['configmaps/old-oak-harvest: exists only in the run that saw every state'];

test('unobserved state: the explanation keeps the level-based advice and names an event filter that lets one edge through', () => {
  const e = unobservedExplanation(diffs);
  assert.match(e, /ended in another: configmaps\/old-oak-harvest: exists only in the run that saw every state\./);
  assert.match(e, /Reconcile from the current state only \(level-based\), not from transitions remembered in memory\./);
  assert.match(e, /event filter that compares the old and the new object[^]*lets only one edge through[^]*let updates through, or filter on metadata\.generation only/);
  assert.match(e, /GenerationChangedPredicate in Go, the generation-changed predicate for a module/, 'named for Go and for the other reconcilers');
});

test('history, the path mattered: the create-only child stays the usual cause, an edge-passing predicate is named too, and a metadata-only change names the generation filter', () => {
  const spec = historyPathExplanation({ what: '2 change(s) ({"spec":{"ripe":true}} → {"spec":{"ripe":false}})', diffs, metadataOnly: false, derivedNote: '' });
  assert.match(spec, /a child made only when it is missing and never updated when the spec changes is the usual cause/);
  assert.match(spec, /a predicate that lets only one edge of a field through \(false to true\) drops the update that changes it back[^]*filter on metadata\.generation only/);
  assert.doesNotMatch(spec, /metadata only/);
  const meta = historyPathExplanation({ what: '1 change(s)', diffs, metadataOnly: true, derivedNote: ' NOTE' });
  assert.match(meta, /The changes touched metadata only, which makes no new generation: a filter on generation \(GenerationChangedPredicate[^]*AnnotationChangedPredicate[^]* NOTE$/);
});

test('history, the path mattered: an object only the changed copy has is named first as a child left from an earlier spec, with how to prune it', () => {
  const e = historyPathExplanation({ what: '1 change(s)', diffs: ['configmaps/acme-quota-silver: exists only after the changes'], metadataOnly: false, derivedNote: '', leftOver: ['configmaps/acme-quota-silver'] });
  assert.match(e, /changed one's\)\. configmaps\/acme-quota-silver is left from an earlier spec: a child whose name comes from a spec field is made anew[^]*delete those the current spec no longer wants/);
  assert.match(e, /usual cause/, 'the other causes are still named');
  assert.doesNotMatch(historyPathExplanation({ what: '1 change(s)', diffs, metadataOnly: false, derivedNote: '', leftOver: [] }), /left from an earlier spec/);
});
