import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { diagnoseStuck, type FinalizerDiagnosis } from '../../../src/core/actions/finalizers.ts';
import { deleteConfirmFinalizers, deletedTerminatingMessage, finalizerLine, finalizerPickDetail, LOOP_NAME_MAX, loopDisplayName, stripConfirmDetail } from '../../../src/host/commands/finalizerText.ts';
import { loopKnownController } from '../../../src/core/actions/finalizers.ts';

/** The diagnosis of a Terminating Widget held by a finalizer whose owner nothing in the cluster shows. */
async function unknownOwner() {
  const clock = new FakeClock(Date.parse('2026-12-02T10:00:00Z'));
  const planter = { apiVersion: 'garden.example.org/v1', kind: 'Planter', metadata: { name: 'p1', namespace: 'yard', resourceVersion: '9', deletionTimestamp: '2026-12-02T09:59:00Z', finalizers: ['irrigation.garden.example.org/drain'] } };
  const client = { get: async () => planter, list: async () => ({ items: [] }) } as unknown as Parameters<typeof diagnoseStuck>[0]['client'];
  const d = await diagnoseStuck({ client, gvr: { group: 'garden.example.org', version: 'v1', resource: 'planters' }, namespace: 'yard', name: 'p1', clock });
  return d.finalizers[0]!;
}

test('Strip Finalizers confirmation: an unknown owner\'s consequence is said once, after "if removed:", without "skip" twice', async () => {
  const f = await unknownOwner();
  const line = finalizerLine(f);
  assert.match(line, /^• irrigation\.garden\.example\.org\/drain\n {3}owner: the controller for "irrigation\.garden\.example\.org" \(cannot tell whether it runs\)\n/);
  assert.ok(
    line.endsWith('\n   if removed: "irrigation.garden.example.org" does not get to run its cleanup before deletion: external resources it manages (cloud resources, DNS records, database rows…) may be orphaned'),
    line,
  );
  assert.doesNotMatch(line, /skip/);
  assert.equal(line.match(/cleanup/g)?.length, 1, 'the cleanup is named once');
  assert.equal(finalizerPickDetail(f), `the controller for "irrigation.garden.example.org". If removed: ${f.consequence}`);
});

test('Strip Finalizers confirmation: a well-known finalizer\'s consequence reads after "if removed:" too', () => {
  const f: FinalizerDiagnosis = { finalizer: 'kubernetes.io/pv-protection', location: 'metadata', domain: 'kubernetes.io', probableOwner: 'the PV protection controller (kube-controller-manager)', addedBy: [], running: 'yes', evidence: ['Lease kube-system/kube-controller-manager (holder x) renewed 3 s ago'], consequence: 'a volume still bound to a claim may be deleted: data loss' };
  assert.equal(
    finalizerLine(f),
    [
      '• kubernetes.io/pv-protection',
      '   owner: the PV protection controller (kube-controller-manager) (appears to be running)',
      '   – Lease kube-system/kube-controller-manager (holder x) renewed 3 s ago',
      '   if removed: a volume still bound to a claim may be deleted: data loss',
    ].join('\n'),
  );
});

/** A live Oven (not being deleted) whose finalizer this session's paused module loop added (its field manager). */
async function liveOven(terminating: boolean) {
  const clock = new FakeClock(Date.parse('2026-12-02T10:00:00Z'));
  const oven = { apiVersion: 'kitchen.example.com/v1', kind: 'Oven', metadata: { name: 'cold-oven', namespace: 'kitchen', resourceVersion: '12', ...(terminating ? { deletionTimestamp: '2026-12-02T09:59:00Z' } : {}), finalizers: ['kitchen.example.com/cleanup'], managedFields: [{ manager: 'reconcile-lab', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:finalizers': { '.': {}, 'v:"kitchen.example.com/cleanup"': {} } } } }] } };
  const client = { get: async () => oven, list: async () => ({ items: [] }) } as unknown as Parameters<typeof diagnoseStuck>[0]['client'];
  const loop = loopKnownController({ name: 'module:oven-reconciler.ts', reconcilerKind: 'module', ownFinalizers: [], fieldManager: 'reconcile-lab', state: 'paused', primary: true })!;
  return diagnoseStuck({ client, gvr: { group: 'kitchen.example.com', version: 'v1', resource: 'ovens' }, namespace: 'kitchen', name: 'cold-oven', clock, knownControllers: [loop] });
}

test('Strip Finalizers on a live object: the CLI\'s note (nothing is stuck, the controller adds it back), no "Held by", nothing about the loop removing it; the loop named once', async () => {
  const diag = await liveOven(false);
  const detail = stripConfirmDetail({ key: 'kitchen/cold-oven', diag, chosen: diag.finalizers, age: undefined, dryRun: false });
  assert.ok(detail.startsWith("Note: kitchen/cold-oven is not being deleted, so nothing is stuck. A finalizer removed now is added back by its controller at its next reconcile (while that controller runs); if it is not, the controller's cleanup will not run when the object is deleted.\nIt has 1 finalizer: kitchen.example.com/cleanup.\n"), detail);
  assert.doesNotMatch(detail, /Held by|finalizer\(s\)|removes the finalizer itself|It is not being deleted\./);
  assert.match(detail, /your reconciler owns it and is paused in this session: a finalizer removed now is added back when the loop is stepped or resumed/);
  assert.equal(detail.match(/module:oven-reconciler\.ts/g)?.length, 1, 'the loop is named once');
  assert.equal(detail.match(/orphan|cleanup will not run/g)?.length, 1, 'the consequence is said once');
});

test('Strip Finalizers on a Terminating object: "Held by 1 finalizer" (singular), the consequence names your reconciler, and orphaning is said once', async () => {
  const diag = await liveOven(true);
  const detail = stripConfirmDetail({ key: 'kitchen/cold-oven', diag, chosen: diag.finalizers, age: 'Terminating 1m (deletion requested at 2026-12-02T09:59:00Z).', dryRun: false });
  assert.match(detail, /^Terminating 1m \(deletion requested at 2026-12-02T09:59:00Z\)\.\nHeld by 1 finalizer: kitchen\.example\.com\/cleanup\.\n/);
  assert.match(detail, /owner: Reconcile Lab's module:oven-reconciler\.ts loop \(this session's loop, paused\)/);
  assert.match(detail, /your reconciler owns it and is paused in this session: step or resume the loop and it removes the finalizer itself/);
  assert.match(detail, /if removed: your reconciler does not get to run its cleanup before deletion/);
  assert.equal(detail.match(/orphan/g)?.length, 1, 'orphaning is said once');
  assert.equal(detail.match(/module:oven-reconciler\.ts/g)?.length, 1, 'the loop is named once');
  const two = { ...diag, finalizers: [...diag.finalizers, { ...diag.finalizers[0]!, finalizer: 'other.example.com/x' }] };
  assert.match(stripConfirmDetail({ key: 'kitchen/cold-oven', diag: two, chosen: two.finalizers, age: undefined, dryRun: false }), /Held by 2 finalizers: /);
});

test('Delete…: one finalizer reads "until its owner removes it"; the paused or stopped loop\'s own finalizer waits for a step or resume, in the dialog and the notice', () => {
  const one = deleteConfirmFinalizers(['kitchen.example.com/cleanup']);
  assert.match(one, /^It has 1 finalizer \(kitchen\.example\.com\/cleanup\): it shows as Terminating until its owner removes it\. Reconcile Lab does not wait/);
  assert.doesNotMatch(one, /their owners/);
  assert.match(deleteConfirmFinalizers(['a.example/x', 'b.example/y']), /It has 2 finalizers \(a\.example\/x, b\.example\/y\): it shows as Terminating until their owners remove them\./);
  assert.equal(deleteConfirmFinalizers([]), 'It has no finalizers: it is removed at once.');
  const paused = deleteConfirmFinalizers(['kitchen.example.com/cleanup'], { owned: ['kitchen.example.com/cleanup'], loop: 'paused' });
  assert.match(paused, /until its owner removes it\. kitchen\.example\.com\/cleanup is this session's loop's, and the loop is paused: it waits until you step or resume the loop\. Reconcile Lab/);
  assert.match(deleteConfirmFinalizers(['kitchen.example.com/cleanup'], { owned: ['kitchen.example.com/cleanup'], loop: 'stopped' }), /the loop is stopped: it waits until you start or step the loop\./);
  assert.match(deleteConfirmFinalizers(['kitchen.example.com/cleanup'], { owned: ['kitchen.example.com/cleanup'], loop: 'running' }), /is this session's loop's: the running loop removes it after its cleanup\./);
  assert.doesNotMatch(deleteConfirmFinalizers(['a.example/x'], { owned: [], loop: 'paused' }), /this session's loop/);
  assert.equal(
    deletedTerminatingMessage('Oven kitchen/cold-oven', ['kitchen.example.com/cleanup'], { owned: ['kitchen.example.com/cleanup'], loop: 'paused' }),
    "Oven kitchen/cold-oven is Terminating: it waits for kitchen.example.com/cleanup to be removed by its owner. kitchen.example.com/cleanup is this session's loop's, and the loop is paused: it waits until you step or resume the loop.",
  );
});

test('the dialogs name the loop: module:<relative file>, exec:<command line> with relative paths and cut around one "…" when long; the built-in by its name', () => {
  const rel = (p: string) => (p.startsWith('/ws/') ? p.slice(4) : p);
  assert.equal(loopDisplayName({ kind: 'module', path: '/ws/src/oven.ts' }, 'module:/ws/src/oven.ts', rel), 'module:src/oven.ts');
  assert.equal(loopDisplayName({ kind: 'exec', command: ['python3', '/ws/reconcile.py', '-v'] }, 'exec:python3 /ws/reconcile.py -v', rel), 'exec:python3 reconcile.py -v');
  const long = loopDisplayName({ kind: 'exec', command: ['/opt/tools/venvs/drones/bin/python3', '/ws/controllers/drone_reconciler.py', '--fleet-config=/etc/fleet/config.yaml', '--verbose'] }, 'x', rel);
  assert.equal(long.length, LOOP_NAME_MAX);
  assert.ok(long.startsWith('exec:/opt/tools/venvs/drones/bin'), long);
  assert.ok(long.endsWith('config.yaml --verbose'), long);
  assert.equal((long.match(/…/g) ?? []).length, 1);
  assert.equal(loopDisplayName({ kind: 'lab' }, 'lab', rel), 'lab');
});
