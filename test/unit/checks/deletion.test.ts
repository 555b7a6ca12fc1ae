import { test } from 'node:test';
import assert from 'node:assert/strict';
import { afterDeletion, crashDuringDeletionProblem, deletionCrashPoints, deletionVerdict, failsWhenGoneProblem, goneIndex, orphansAfterDeletion, orphansProblem, reconcilesAfter, recoveredAfterGone, waitUntilGone, type DeletionObservation } from '../../../src/core/checks/deletion.ts';
import { ApiError } from '../../../src/core/k8s/client.ts';
import type { JournalEntry } from '../../../src/core/journal/journal.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';

const KEY = 'rl-check-1/w';
const base: DeletionObservation = { gone: false, ms: 8_000, boundMs: 8_000, finalizersAtDelete: [], finalizersLeft: [], reconciles: 0, failures: [], lastFailed: false };
const terminating = (finalizers: string[]): KubeObject => ({ metadata: { namespace: 'rl-check-1', name: 'w', deletionTimestamp: '2026-12-02T13:00:00Z', finalizers } });

test('no finalizer: gone at once passes and says so', () => {
  const v = deletionVerdict({ ...base, gone: true, ms: 12 });
  assert.equal(v.status, 'passed');
  assert.deepEqual(v.problems, []);
  assert.equal(v.message, 'gone 12 ms after the delete (no metadata.finalizers to remove)');
});

test('the reconciler removed its finalizer: passes; failures on the way are mentioned, not findings', () => {
  const v = deletionVerdict({ ...base, gone: true, ms: 640, finalizersAtDelete: ['x.dev/cleanup'], reconciles: 2, failures: [{ message: '409 Conflict', terminal: false }] });
  assert.equal(v.status, 'passed');
  assert.match(v.message, /the reconciler removed x\.dev\/cleanup\); 1 reconcile\(s\) after the delete failed before it was gone \(last: 409 Conflict\)/);
});

test('a finalizer never removed: one finding that names it, in plain words', () => {
  const v = deletionVerdict({ ...base, finalizersAtDelete: ['x.dev/cleanup'], finalizersLeft: ['x.dev/cleanup'], reconciles: 1 });
  assert.equal(v.status, 'failed');
  assert.equal(v.problems.length, 1);
  assert.equal(v.problems[0]!.title, 'Stays Terminating: finalizer x.dev/cleanup is never removed (the reconciler did not handle deletionTimestamp)');
  assert.match(v.problems[0]!.explanation, /8 s later it still exists with deletionTimestamp set and finalizer\(s\) x\.dev\/cleanup \("Terminating"\)[^]*its 1 reconcile\(s\) after the delete did not remove it/);
  assert.doesNotMatch(v.problems[0]!.explanation, /not even called/);
});

test('a finalizer kept while the reconciler requeues on the Terminating object (a release gate): the finding says it waited, not that deletionTimestamp was ignored', () => {
  const v = deletionVerdict({ ...base, finalizersAtDelete: ['data.example.org/cleanup'], finalizersLeft: ['data.example.org/cleanup'], reconciles: 2, lastRequeueAfterMs: 10_000, requeuesAfter: 2 }, 'go');
  assert.equal(v.status, 'failed');
  assert.equal(v.problems.length, 1);
  assert.equal(v.problems[0]!.title, 'Stays Terminating: finalizer data.example.org/cleanup is never removed (the reconciler saw the deletion and kept requeueing, after 10 s, without removing it)');
  assert.doesNotMatch(v.problems[0]!.title, /did not handle deletionTimestamp/);
  assert.match(v.problems[0]!.explanation, /2 of its 2 reconcile\(s\) after the delete ended with a requeue-after \(the last: after 10 s\)/);
  assert.match(v.problems[0]!.explanation, /Strip Finalizers… is the way out/);
  assert.match(v.message, /kept requeueing \(after 10 s\)$/);
  // A last reconcile that ended without a requeue is the plain "never removed" case again.
  const plain = deletionVerdict({ ...base, finalizersLeft: ['x.dev/cleanup'], reconciles: 1 });
  assert.match(plain.problems[0]!.title, /did not handle deletionTimestamp/);
});

test('not called at all after the delete: the explanation points at predicates', () => {
  const v = deletionVerdict({ ...base, finalizersLeft: ['a', 'b'] });
  assert.match(v.problems[0]!.title, /finalizer a, b are never removed/);
  assert.match(v.problems[0]!.explanation, /not even called after the delete: a predicate/);
});

test('failing on the Terminating object: the last error is the finding (it wins over the finalizer)', () => {
  const v = deletionVerdict({ ...base, finalizersLeft: ['x.dev/cleanup'], reconciles: 3, failures: [{ message: 'a', terminal: false }, { message: 'cannot create configmaps: namespace is being terminated', terminal: false }], lastFailed: true });
  assert.equal(v.status, 'failed');
  assert.equal(v.problems.length, 1);
  assert.equal(v.problems[0]!.title, 'The reconciler failed on the Terminating object: cannot create configmaps: namespace is being terminated');
  assert.match(v.problems[0]!.explanation, /failed \(2 time\(s\), retried with backoff\)/);
  // An earlier failure followed by a success is not "failed on it": the finalizer is the problem then.
  const w = deletionVerdict({ ...base, finalizersLeft: ['x.dev/cleanup'], reconciles: 2, failures: [{ message: 'a', terminal: false }], lastFailed: false });
  assert.match(w.problems[0]!.title, /^Stays Terminating/);
});

test('the deletion advice to treat an already-gone cleanup target as success says how in the reconciler\'s own terms, as the "fails after gone" advice does; the lab reconciler keeps the plain words', () => {
  const failing = { ...base, finalizersLeft: ['x.dev/cleanup'], reconciles: 2, failures: [{ message: 'configmaps "w-registry" not found', terminal: false }], lastFailed: true };
  const stays = { ...base, finalizersAtDelete: ['x.dev/cleanup'], finalizersLeft: ['x.dev/cleanup'], reconciles: 1 };
  const crash = { i: 1, k: 2, crashedAfter: 'delete configmaps ns/w-registry', leftovers: ['configmaps/w-registry'], diffs: [], finalizerGone: false };
  const said = {
    go: ': `client.IgnoreNotFound(err)` on the Delete of what the cleanup removes',
    module: ': a 404 of the cleanup\'s `ctx.client.delete` is done',
    exec: ': `kubectl delete … --ignore-not-found`',
    lab: '',
  } as const;
  for (const [kind, idiom] of Object.entries(said) as Array<[keyof typeof said, string]>) {
    assert.ok(deletionVerdict(failing, kind).problems[0]!.explanation.includes(`do the cleanup (treat "already gone" as success${idiom}), remove your finalizer`), kind);
    assert.ok(deletionVerdict(stays, kind).problems[0]!.explanation.includes(`clean up what the finalizer protects (already gone is success${idiom}), then remove the finalizer`), kind);
    assert.ok(crashDuringDeletionProblem({ ...crash, kind }).explanation.endsWith(`clean up first (treat "already gone" as success and go on${idiom}), remove the finalizer last.`), kind);
  }
  // Another kind's terms never leak in (a module is not told Go's IgnoreNotFound, nor Go an exec program's kubectl flag).
  assert.doesNotMatch(deletionVerdict(failing, 'module').problems[0]!.explanation, /IgnoreNotFound|--ignore-not-found/);
  assert.doesNotMatch(crashDuringDeletionProblem({ ...crash, kind: 'go' }).explanation, /ctx\.client|--ignore-not-found/);
  assert.equal(deletionVerdict(stays).problems[0]!.explanation, deletionVerdict(stays, 'lab').problems[0]!.explanation, 'the default is the plain words');
});

test('reconcilesAfter counts only reconciles of the key that started after the delete', () => {
  const end = (kind: 'success' | 'error', message = ''): JournalEntry => ({ kind: 'reconcileEnd', key: KEY, controller: 'c', outcome: kind === 'success' ? { kind } : { kind, message }, durationMs: 1 }) as unknown as JournalEntry;
  const start = (key = KEY): JournalEntry => ({ kind: 'reconcileStart', key, controller: 'c', triggers: [], attempt: 1, via: 'worker' }) as unknown as JournalEntry;
  const entries = [start(), end('error', 'before'), start(), /* delete here */ end('error', 'straddles'), start('other/x'), end('success'), start(), end('error', 'boom'), start(), end('error', 'boom again')];
  const r = reconcilesAfter(entries, KEY, 3);
  assert.equal(r.reconciles, 2);
  assert.deepEqual(r.failures.map((f) => f.message), ['boom', 'boom again']);
  assert.equal(r.lastFailed, true);
});

test('reconcilesAfter: a last reconcile that requeued after a delay is reported with its delay and the count of such reconciles', () => {
  const end = (outcome: object): JournalEntry => ({ kind: 'reconcileEnd', key: KEY, controller: 'c', outcome, durationMs: 1 }) as unknown as JournalEntry;
  const start = (): JournalEntry => ({ kind: 'reconcileStart', key: KEY, controller: 'c', triggers: [], attempt: 1, via: 'worker' }) as unknown as JournalEntry;
  const waiting = [start(), end({ kind: 'requeueAfter', afterMs: 10_000 }), start(), end({ kind: 'requeueAfter', afterMs: 10_000 })];
  assert.deepEqual(reconcilesAfter(waiting, KEY, 0), { reconciles: 2, failures: [], lastFailed: false, lastRequeueAfterMs: 10_000, requeuesAfter: 2 });
  // A success after the waits: the last reconcile did not wait.
  const r = reconcilesAfter([...waiting, start(), end({ kind: 'success' })], KEY, 0);
  assert.equal(r.lastRequeueAfterMs, undefined);
});

test('waitUntilGone: polls on the injected clock until a 404, and gives up at the bound with the last object', async () => {
  const clock = new FakeClock();
  const signal = new AbortController().signal;
  let calls = 0;
  const gone = waitUntilGone(clock, async () => {
    if (++calls < 3) return terminating(['x']);
    throw new ApiError(404, 'NotFound', 'widgets "w" not found');
  }, 1_000, signal);
  for (let i = 0; i < 5 && calls < 3; i++) {
    await new Promise((r) => setImmediate(r));
    clock.step(100);
  }
  assert.deepEqual(await gone, { gone: true, ms: 200 });

  const stuck = waitUntilGone(clock, async () => terminating(['x.dev/cleanup']), 1_000, signal);
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setImmediate(r));
    clock.step(100);
  }
  const s = await stuck;
  assert.equal(s.gone, false);
  assert.equal(s.ms, 1_000);
  assert.deepEqual(s.last?.metadata.finalizers, ['x.dev/cleanup']);
});

test('waitUntilGone: an error other than 404 rejects (the check reports it could not run)', async () => {
  const clock = new FakeClock();
  await assert.rejects(waitUntilGone(clock, async () => { throw new ApiError(403, 'Forbidden', 'no'); }, 1_000, new AbortController().signal), /no/);
});

test('afterDeletion: drops the copy and what it owns (the garbage collector takes those), keeps the un-owned leftovers', () => {
  const raw = {
    namespace: 'rl-check-1',
    objects: [
      { resource: 'widgets.lab.reconcile.dev', object: { metadata: { name: 'w', uid: 'U' } } },
      { resource: 'configmaps', object: { metadata: { name: 'w-config', uid: 'C1', ownerReferences: [{ apiVersion: 'v1', kind: 'Widget', name: 'w', uid: 'U' }] } } },
      { resource: 'configmaps', object: { metadata: { name: 'w-registry', uid: 'C2' } } },
      { resource: 'configmaps', object: { metadata: { name: 'other-owned', uid: 'C3', ownerReferences: [{ apiVersion: 'v1', kind: 'Widget', name: 'x', uid: 'X' }] } } },
    ],
  };
  assert.deepEqual(afterDeletion(raw, 'U').objects.map((o) => o.object.metadata.name), ['w-registry', 'other-owned']);
  assert.equal(afterDeletion(raw, 'U').namespace, 'rl-check-1');
});

test('deletionCrashPoints: one point between each two writes, none for fewer than two, capped', () => {
  assert.deepEqual(deletionCrashPoints(0, 8), []);
  assert.deepEqual(deletionCrashPoints(1, 8), []);
  assert.deepEqual(deletionCrashPoints(2, 8), [1]);
  assert.deepEqual(deletionCrashPoints(4, 8), [1, 2, 3]);
  assert.deepEqual(deletionCrashPoints(20, 3), [1, 2, 3]);
});

test('crashDuringDeletionProblem: names the write and the leftover; says why nothing cleans it up when the finalizer went first', () => {
  const p = crashDuringDeletionProblem({ i: 1, k: 2, crashedAfter: 'patch widgets.lab.reconcile.dev ns/w', leftovers: ['configmaps/w-registry'], diffs: ['configmaps/w-registry: exists only in the perturbed run'], finalizerGone: true });
  assert.equal(p.title, 'Crash during the deletion after write 1 of 2 (patch widgets.lab.reconcile.dev ns/w): configmaps/w-registry is left behind');
  assert.match(p.explanation, /stopped right after write 1 of 2 \(patch widgets\.lab\.reconcile\.dev ns\/w\)[^]*configmaps\/w-registry is left behind \(configmaps\/w-registry: exists only in the perturbed run\)\. Write 1 removed the last finalizer[^]*no reconcile of it ever runs again[^]*remove the finalizer last\.$/);
  const many = crashDuringDeletionProblem({ i: 2, k: 3, crashedAfter: 'delete configmaps ns/a', leftovers: ['a', 'b', 'c', 'd'], diffs: [], finalizerGone: false });
  assert.match(many.title, /: a, b, c and 1 more are left behind$/);
  assert.doesNotMatch(many.explanation, /removed the last finalizer/);
});

test('crashDuringDeletionProblem: a copy left Terminating is named with the finalizer still on it and what the restarted controller did', () => {
  const restarted = { reconciles: 2, failures: [], lastFailed: false, writes: 0 };
  const stand = { object: 'trees.orchard.example.org ns/old-oak', finalizers: ['orchard.example.org/stand'], restarted };
  const p = crashDuringDeletionProblem({ i: 1, k: 2, crashedAfter: 'delete configmaps ns/old-oak-stand', leftovers: [], stuck: stand, diffs: ['trees.orchard.example.org/old-oak: exists only in the perturbed run'], finalizerGone: false });
  assert.equal(p.title, 'Crash during the deletion after write 1 of 2 (delete configmaps ns/old-oak-stand): trees.orchard.example.org ns/old-oak stays Terminating: finalizer orchard.example.org/stand is never removed');
  assert.match(p.explanation, /trees\.orchard\.example\.org ns\/old-oak still exists with deletionTimestamp set and finalizer orchard\.example\.org\/stand: the restarted controller's 2 reconcile\(s\) succeeded and wrote nothing\. The usual cause: the deletion branch returns early when what it cleans up is already gone[^]*never gets to removing the finalizer[^]*treat "already gone" as success[^]*remove the finalizer last\.$/);
  assert.doesNotMatch(p.explanation, /removed the last finalizer/);
  // Writes that did not remove it, a failing restart, no reconcile at all, and a leftover beside the stuck copy.
  assert.match(crashDuringDeletionProblem({ i: 1, k: 3, crashedAfter: 'w', leftovers: [], stuck: { ...stand, restarted: { ...restarted, writes: 1 } }, diffs: [], finalizerGone: false }).explanation, /succeeded and made 1 write\(s\), none of which removed it/);
  const failing = crashDuringDeletionProblem({ i: 1, k: 2, crashedAfter: 'w', leftovers: [], stuck: { ...stand, restarted: { reconciles: 3, failures: [{ message: 'boom', terminal: false }, { message: 'configmaps "old-oak-stand" not found', terminal: false }], lastFailed: true, writes: 0 } }, diffs: [], finalizerGone: false });
  assert.match(failing.explanation, /failed 2 time\(s\), last with: configmaps "old-oak-stand" not found/);
  assert.match(crashDuringDeletionProblem({ i: 1, k: 2, crashedAfter: 'w', leftovers: [], stuck: { ...stand, restarted: { ...restarted, reconciles: 0 } }, diffs: [], finalizerGone: false }).explanation, /never reconciled it \(a predicate/);
  const both = crashDuringDeletionProblem({ i: 1, k: 2, crashedAfter: 'w', leftovers: ['configmaps/x'], stuck: { ...stand, finalizers: ['a/x', 'b/y'] }, diffs: [], finalizerGone: false });
  assert.match(both.title, /: configmaps\/x is left behind; trees\.orchard\.example\.org ns\/old-oak stays Terminating: finalizers a\/x, b\/y are never removed$/);
});

test('orphans: a created child without any ownerReference is left behind; owned (by the copy or in a chain), deleted or other objects are not', () => {
  const cm = (name: string, owner?: string): { resource: string; object: KubeObject } => ({
    resource: 'configmaps',
    object: { metadata: { namespace: 'rl-check-1', name, uid: `uid-${name}`, ...(owner ? { ownerReferences: [{ apiVersion: 'h10.example.org/v1', kind: 'Shelf', name: 'w', uid: owner }] } : {}) } } as KubeObject,
  });
  const raw = { objects: [cm('w-books'), cm('w-owned', 'copy-uid'), cm('w-other-owner', 'someone-else'), cm('not-created')] };
  const creates = [
    { resource: 'configmaps', namespace: 'rl-check-1', name: 'w-books' },
    { resource: 'configmaps', namespace: 'rl-check-1', name: 'w-books' }, // created twice (deleted in between): named once
    { resource: 'configmaps', namespace: 'rl-check-1', name: 'w-owned' },
    { resource: 'configmaps', namespace: 'rl-check-1', name: 'w-cleaned-up' }, // the cleanup deleted it
    { resource: 'secrets', namespace: 'rl-check-1', name: 'w-other-owner' }, // another resource of the same name
    { resource: 'configmaps', namespace: 'rl-check-1', name: 'w-other-owner' },
  ];
  // w-other-owner has an owner (say another child of the copy, collected in a chain): the garbage collector's.
  assert.deepEqual(orphansAfterDeletion(raw, creates, 'copy-uid'), ['configmaps/w-books']);
  assert.deepEqual(orphansAfterDeletion({ objects: [cm('w-owned', 'copy-uid')] }, creates, 'copy-uid'), []);
  const p = orphansProblem(['configmaps/w-books'], 'go');
  assert.match(p.title, /Left behind after the delete: configmaps\/w-books/);
  assert.match(p.explanation, /no ownerReference/);
  assert.match(p.explanation, /controllerutil\.SetControllerReference/);
  // A module or exec reconciler has no controllerutil: the fix is said in its own terms (it was Go's for every kind).
  const mod = orphansProblem(['configmaps/w-books'], 'module').explanation;
  assert.match(mod, /metadata\.ownerReferences: \[\{ apiVersion, kind, name, uid, controller: true \}\].*ctx\.client\.create/);
  const exec = orphansProblem(['configmaps/w-books'], 'exec').explanation;
  assert.match(exec, /ownerReferences.*from `object` on stdin.*manifest your program creates/);
  for (const kind of ['module', 'exec', 'lab'] as const) assert.doesNotMatch(orphansProblem(['configmaps/w-books'], kind).explanation, /controllerutil|SetControllerReference/, kind);
});

test('goneIndex: right after the last successful write to the deleted object (its finalizer\'s removal), else the delete itself', () => {
  const WIDGETS = { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets' };
  const CMS = { group: '', version: 'v1', resource: 'configmaps' };
  const write = (gvr: typeof CMS, objectKey: string, more: Record<string, unknown> = {}): JournalEntry => ({ kind: 'write', verb: 'patch', gvr, resource: gvr.resource, objectKey, dryRun: false, ...more }) as unknown as JournalEntry;
  const start: JournalEntry = { kind: 'reconcileStart', key: KEY, controller: 'c', triggers: [], attempt: 1, via: 'worker' } as unknown as JournalEntry;
  // 0 before the delete; from 1: a child's delete, the finalizer's removal (index 3), a refused write, a dry run.
  const entries = [write(WIDGETS, KEY), start, write(CMS, KEY), write(WIDGETS, KEY), write(WIDGETS, KEY, { error: '404 NotFound' }), write(WIDGETS, KEY, { dryRun: true }), start];
  assert.equal(goneIndex(entries, 1, KEY, WIDGETS), 4);
  assert.equal(goneIndex(entries.slice(0, 3), 1, KEY, WIDGETS), 1, 'no write to it after the delete: gone at the delete');
  assert.equal(goneIndex(entries, 1, 'other/w', WIDGETS), 1);
});

test('failsWhenGoneProblem: none without failures; a NotFound names IgnoreNotFound, another error says to stop when not found', () => {
  assert.equal(failsWhenGoneProblem({ reconciles: 1, failures: [], lastFailed: false }, 'go'), undefined);
  const nf = failsWhenGoneProblem({ reconciles: 4, failures: [{ message: 'widgets.lab.reconcile.dev "w" not found', terminal: false }, { message: 'widgets.lab.reconcile.dev "w" not found', terminal: false }], lastFailed: true }, 'go')!;
  assert.equal(nf.title, 'Fails after the object is gone: 2 of 4 reconcile(s) failed, last with: widgets.lab.reconcile.dev "w" not found');
  assert.match(nf.explanation, /its last delete event queued the key once more[^]*still retried with backoff[^]*for as long as the process runs[^]*client\.IgnoreNotFound\(err\)/);
  const other = failsWhenGoneProblem({ reconciles: 1, failures: [{ message: 'registry unreachable', terminal: true }], lastFailed: true }, 'lab')!;
  assert.match(other.explanation, /the last one terminal[^]*A terminal error is logged as a failure[^]*Return success when the object is gone/);
  assert.doesNotMatch(other.explanation, /IgnoreNotFound/);
});

test('failsWhenGoneProblem: the advice is in the reconciler\'s own terms: a Go controller\'s client.IgnoreNotFound on its Get and Delete, a module\'s 404, an exec program\'s null object and --ignore-not-found', () => {
  const gone = { reconciles: 2, failures: [{ message: 'widgets.lab.reconcile.dev "w" not found', terminal: false }], lastFailed: true };
  const go = failsWhenGoneProblem(gone, 'go')!.explanation;
  assert.match(go, /Treat NotFound as "nothing to do": `if err := r\.Get\(ctx, req\.NamespacedName, obj\); err != nil \{ return ctrl\.Result\{\}, client\.IgnoreNotFound\(err\) \}` on the Get of the object, and `client\.IgnoreNotFound\(err\)` on the Delete of what the cleanup removes/, go);
  assert.doesNotMatch(go, /404|a module|stdin/, go);
  const mod = failsWhenGoneProblem(gone, 'module')!.explanation;
  assert.match(mod, /catch the 404 of `ctx\.client\.get\(ctx\.primary, request\.namespace, request\.name, ctx\.signal\)` and return `\{\}`[^]*404 of the cleanup's `ctx\.client\.delete` as done/, mod);
  assert.doesNotMatch(mod, /IgnoreNotFound|ctrl\.Result|stdin/, mod);
  const exec = failsWhenGoneProblem(gone, 'exec')!.explanation;
  assert.match(exec, /when `object` on stdin is null, print `\{\}` and exit 0[^]*--ignore-not-found/, exec);
  assert.doesNotMatch(exec, /IgnoreNotFound|ctrl\.Result|ctx\.client/, exec);
  const lab = failsWhenGoneProblem(gone, 'lab')!.explanation;
  assert.match(lab, /Treat NotFound as "nothing to do" on the first read, and a NotFound of the cleanup's delete as done\.$/, lab);
  assert.doesNotMatch(lab, /IgnoreNotFound|ctrl\.Result|ctx\.client|stdin/, lab);
  // Another error: read first and stop when not found, still in its own terms.
  const other = { reconciles: 1, failures: [{ message: 'registry unreachable', terminal: false }], lastFailed: true };
  assert.match(failsWhenGoneProblem(other, 'go')!.explanation, /Return success when the object is gone: read it first and stop when it is not found: `if err := r\.Get/);
  assert.match(failsWhenGoneProblem(other, 'exec')!.explanation, /stop when it is not found: when `object` on stdin is null/);
});

test('failsWhenGoneProblem: a failure the next reconcile recovered from is no finding, only words for the message', () => {
  // The finalizer's Update racing the cache: a child's event queues the key while the cache still holds the
  // Terminating object; its Update gets NotFound, the retry's Get finds the object gone and succeeds.
  const after = { reconciles: 2, failures: [{ message: 'tenants.infra.example.dev "acme" not found', terminal: false }], lastFailed: false };
  assert.equal(failsWhenGoneProblem(after, 'go'), undefined);
  assert.equal(recoveredAfterGone(after), '1 of 2 reconcile(s) after it was gone failed (last: tenants.infra.example.dev "acme" not found; a reconcile that still read the Terminating object from the cache), then one succeeded');
  assert.equal(recoveredAfterGone({ reconciles: 1, failures: [{ message: 'x not found', terminal: false }], lastFailed: true }), undefined);
  assert.equal(recoveredAfterGone({ reconciles: 1, failures: [], lastFailed: false }), undefined);
});
