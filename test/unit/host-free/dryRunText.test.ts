import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderDryRun, type DryRunView } from '../../../src/host/commands/dryRunText.ts';

const base: DryRunView = {
  key: 'yard/p1',
  reconciler: 'Go controller planter',
  resource: 'planters.garden.example.org',
  context: 'lab',
  exec: false,
  outcome: { kind: 'requeueAfter', requeueAfterMs: 20_000, reason: 'SoilTypeMissing' },
  durationMs: 12,
  writes: [
    { verb: 'create', resource: 'configmaps', key: 'yard/p1-water', diff: '--- a\n+++ b\n+  x: 1' },
    { verb: 'update', resource: 'planters.garden.example.org', key: 'yard/p1', subresource: 'status', diff: '' },
    { verb: 'patch', resource: 'configmaps', key: 'yard/other', error: 'admission webhook denied [x](command:evil)', diff: '' },
  ],
};

test('renderDryRun: a Go controller reads as the built-in loop does (header, outcome in seconds, numbered writes, diffs)', () => {
  const md = renderDryRun(base);
  assert.match(md, /^# Dry-run reconcile of yard\/p1\n\nReconciler: Go controller planter · resource planters\.garden\.example\.org · context lab\n/);
  assert.match(md, /Every write was sent with dryRun=All: the server validated and answered, nothing was stored\./);
  assert.match(md, /## Outcome\n\nrequeue after 20 s \(SoilTypeMissing\) \(a real reconcile waits that long, then runs again\) \(the reconcile took 12 ms\)\n/);
  assert.match(md, /## Planned writes \(3\)\n\n- create configmaps yard\/p1-water\n/);
  assert.match(md, /- update planters\.garden\.example\.org yard\/p1 \(status\) — changes nothing/, 'an accepted write with an empty diff is said to change nothing');
  assert.match(md, /## create configmaps yard\/p1-water\n\n```diff\n--- a\n\+\+\+ b\n\+  x: 1\n```/);
  assert.doesNotMatch(md, /## patch configmaps yard\/other/, 'a refused write has no diff section');
});

test('renderDryRun: text from the cluster or the reconciler cannot become a link', () => {
  const md = renderDryRun(base);
  assert.match(md, /REJECTED: admission webhook denied \\\[x\\\]\(command\\:evil\)/);
  assert.doesNotMatch(md, /[^\\]\[x\]\(command:evil\)/);
});

test('renderDryRun: no writes — idempotent when done, the failure otherwise; an exec program is warned about', () => {
  assert.match(renderDryRun({ ...base, writes: [], outcome: { kind: 'done' } }), /## Planned writes \(0\)\n\nNone: the observed state already matches the desired state \(idempotent pass\)\./);
  assert.match(renderDryRun({ ...base, writes: [], outcome: { kind: 'error', error: 'boom' } }), /## Planned writes \(0\)\n\nNone before it failed/);
  // A failed pass's error (a panic's location, Go identifiers) verbatim in a fenced block, not escaped text.
  const panic = 'panic: boom [recovered]: goroutine 7 [running]:\nmain.(*BackupReconciler).Reconcile\n\t/src/backup_controller.go:61 +0x1d';
  const failed = renderDryRun({ ...base, writes: [], outcome: { kind: 'terminal', error: panic }, durationMs: 3 });
  assert.ok(failed.includes(`## Outcome\n\nterminal error (a real reconcile is not retried) (the reconcile took 3 ms):\n\n\`\`\`text\n${panic}\n\`\`\`\n`), failed);
  assert.doesNotMatch(failed, /\\[_*:]/);
  const exec = renderDryRun({ ...base, reconciler: 'exec:./r.sh', exec: true, writes: [], outcome: { kind: 'done' } });
  assert.match(exec, /\*\*Warning:\*\* this is an exec reconciler/);
  assert.match(exec, /None through Reconcile Lab's client/);
});
