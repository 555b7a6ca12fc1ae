import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HotLoopDetector, TIGHT_REQUEUE_MS } from '../../../src/core/controller/hotLoop.ts';
import type { EnqueueReason } from '../../../src/core/controller/keyState.ts';

const selfUpdate: EnqueueReason = { kind: 'informer', event: 'update', resource: 'widgets.v1.lab', objectKey: 'ns/a', at: 0 };
const childUpdate: EnqueueReason = { kind: 'owned', event: 'update', resource: 'configmaps.v1', child: 'ns/a-cm', at: 0 };
const requeue: EnqueueReason = { kind: 'requeueAfter', afterMs: 1000, at: 0 };
const resync: EnqueueReason = { kind: 'informer', event: 'resync', resource: 'widgets.v1.lab', objectKey: 'ns/a', at: 0 };

test('warns once the threshold of event-triggered reconciles with an unchanged generation falls in the window', () => {
  const d = new HotLoopDetector({ windowMs: 1000, threshold: 5, cooldownMs: 60_000 });
  const warnings = [];
  for (let i = 0; i < 5; i++) warnings.push(d.observe({ key: 'ns/a', at: i * 100, generation: 3, triggers: [selfUpdate], selfWrites: 1 }));
  assert.deepEqual(warnings.slice(0, 4), [undefined, undefined, undefined, undefined]);
  const w = warnings[4]!;
  assert.equal(w.cause, 'statusWrite');
  assert.equal(w.count, 5);
  assert.equal(w.spanMs, 400);
  assert.equal(w.generation, 3);
  assert.match(w.message, /ns\/a was reconciled 5 times in 0\.4 s/);
  assert.match(w.message, /status write re-triggers the watch/);
  assert.match(w.message, /generationChanged\(\)/);
  assert.match(w.message, /Write status only when it actually changed/);
  assert.match(w.message, /wrote to it 5 time/);
  // cooldown: no second warning right away
  assert.equal(d.observe({ key: 'ns/a', at: 500, generation: 3, triggers: [selfUpdate], selfWrites: 1 }), undefined);
});

test('looping: true while half the threshold of counted reconciles falls in the window before now, false once they age out', () => {
  const d = new HotLoopDetector({ windowMs: 1000, threshold: 6, cooldownMs: 60_000 });
  for (let i = 0; i < 6; i++) d.observe({ key: 'ns/a', at: i * 100, generation: 3, triggers: [selfUpdate], selfWrites: 1 });
  assert.equal(d.window, 1000);
  assert.equal(d.looping('ns/a', 500), true);
  assert.equal(d.looping('ns/a', 1200), true, 'four within the window (200 to 500): at least half of six');
  assert.equal(d.looping('ns/a', 1301), false, 'two left in the window');
  assert.equal(d.looping('ns/b', 0), false, 'an unknown key does not loop');
});

test('slower than the threshold is not a hot loop', () => {
  const d = new HotLoopDetector({ windowMs: 1000, threshold: 5 });
  for (let i = 0; i < 50; i++) assert.equal(d.observe({ key: 'ns/a', at: i * 300, generation: 1, triggers: [selfUpdate], selfWrites: 0 }), undefined);
});

test('a generation change starts over; intentional runs (requeueAfter, resync) are not counted', () => {
  const d = new HotLoopDetector({ windowMs: 1000, threshold: 3 });
  assert.equal(d.observe({ key: 'k', at: 0, generation: 1, triggers: [selfUpdate], selfWrites: 0 }), undefined);
  assert.equal(d.observe({ key: 'k', at: 10, generation: 1, triggers: [selfUpdate], selfWrites: 0 }), undefined);
  assert.equal(d.observe({ key: 'k', at: 20, generation: 2, triggers: [selfUpdate], selfWrites: 0 }), undefined, 'spec changed');
  for (let i = 0; i < 10; i++) assert.equal(d.observe({ key: 'k', at: 30 + i, generation: 2, triggers: [requeue], selfWrites: 0 }), undefined);
  for (let i = 0; i < 10; i++) assert.equal(d.observe({ key: 'k', at: 40 + i, generation: 2, triggers: [resync], selfWrites: 0 }), undefined);
  assert.equal(d.observe({ key: 'k', at: 60, generation: 2, triggers: [selfUpdate, requeue], selfWrites: 0 }), undefined, 'mixed with an intentional requeue');
  assert.equal(d.observe({ key: 'k', at: 70, generation: 2, triggers: [selfUpdate], selfWrites: 0 }), undefined);
  assert.ok(d.observe({ key: 'k', at: 80, generation: 2, triggers: [selfUpdate], selfWrites: 0 }));
  assert.equal(d.observe({ key: 'gone', at: 90, generation: undefined, triggers: [selfUpdate], selfWrites: 0 }), undefined);
});

test('names an owned child as the likely cause when child events drive the loop', () => {
  const d = new HotLoopDetector({ windowMs: 1000, threshold: 3 });
  let w;
  for (let i = 0; i < 3; i++) w = d.observe({ key: 'ns/a', at: i, generation: 1, triggers: [childUpdate], selfWrites: 0 });
  assert.equal(w?.cause, 'ownedChild');
  assert.match(w!.message, /owned child/);
});

test('a new owned child on every pass (generateName) is named as such, not as a child rewritten each time', () => {
  const d = new HotLoopDetector({ windowMs: 1000, threshold: 3 });
  let w;
  for (let i = 0; i < 3; i++) {
    const added = { ...childUpdate, event: 'add' as const, child: `ns/soil-${'abc'[i]}x7q` };
    w = d.observe({ key: 'ns/a', at: i, generation: 1, triggers: [added], selfWrites: 0 });
  }
  assert.equal(w?.cause, 'ownedChild');
  assert.match(w!.message, /triggered by a new owned child appearing \(3 different ones, e\.g\. ns\/soil-bx7q, ns\/soil-cx7q\)\. Likely cause: the reconciler creates another child on every pass \(with metadata\.generateName/);
  assert.doesNotMatch(w!.message, /rewrites the child/);
});

test('the predicate advice is what the person can do from where they run the loop', () => {
  const selfUpdate = { kind: 'informer' as const, event: 'update' as const, resource: 'widgets', objectKey: 'ns/a', at: 0 };
  const cli = new HotLoopDetector({ threshold: 2, predicateAdvice: 'run again with --predicate generation-changed' });
  cli.observe({ key: 'ns/a', at: 0, generation: 1, triggers: [selfUpdate], selfWrites: 1 });
  const w = cli.observe({ key: 'ns/a', at: 10, generation: 1, triggers: [selfUpdate], selfWrites: 1 })!;
  assert.match(w.message, /turn on the generation-changed predicate: run again with --predicate generation-changed\./);
  assert.doesNotMatch(w.message, /generationChanged\(\)/, 'no library call the CLI user cannot make');
});

test("a generation the reconciler bumps itself on every pass (spec rewritten, or status without the status subresource) does not hide the loop", () => {
  const d = new HotLoopDetector({ windowMs: 1000, threshold: 4 });
  // Each run wrote to the object (selfWrites 1), and the update it caused, alone, started the next run at generation + 1.
  const ws = [];
  for (let i = 0; i < 4; i++) ws.push(d.observe({ key: 'ns/shed', at: i * 100, generation: 7 + i, triggers: [selfUpdate], selfWrites: i === 0 ? 0 : 1 }));
  assert.deepEqual(ws.slice(0, 3), [undefined, undefined, undefined]);
  const w = ws[3]!;
  assert.equal(w.cause, 'generationBump');
  assert.equal(w.count, 4);
  assert.equal(w.generation, 10);
  assert.match(w.message, /^Hot loop: ns\/shed was reconciled 4 times in 0\.3 s, and its generation went from 7 to 10 through the reconciler's own writes to it \(3 write\(s\)\)\. /);
  assert.match(w.message, /subresources: \{ status: \{\} \}/);
  assert.match(w.message, /a generation-changed predicate does not help here/);
  // Without a write of its own before, a new generation is someone's spec change: the count starts over.
  const e = new HotLoopDetector({ windowMs: 1000, threshold: 3 });
  for (let i = 0; i < 6; i++) assert.equal(e.observe({ key: 'k', at: i, generation: 1 + i, triggers: [selfUpdate], selfWrites: 0 }), undefined, `edit ${i}`);
  // Nor when something else (a child, a requeue) also triggered the run that saw the new generation.
  const f = new HotLoopDetector({ windowMs: 1000, threshold: 3 });
  for (let i = 0; i < 6; i++) assert.equal(f.observe({ key: 'k', at: i, generation: 1 + i, triggers: [selfUpdate, childUpdate], selfWrites: 1 }), undefined, `mixed ${i}`);
});

test('an object without generation (ConfigMap, Secret): consecutive runs started only by its own previous write are a hot loop; another cause starts over', () => {
  const cmUpdate: EnqueueReason = { kind: 'informer', event: 'update', resource: 'configmaps.v1', objectKey: 'ns/cm', at: 0 };
  const d = new HotLoopDetector({ windowMs: 1000, threshold: 4 });
  const obs = (at: number, selfWrites: number, triggers: EnqueueReason[] = [cmUpdate]) => d.observe({ key: 'ns/cm', at, generation: undefined, present: true, triggers, selfWrites });
  assert.equal(obs(0, 1), undefined);
  assert.equal(obs(10, 1), undefined);
  assert.equal(obs(20, 0), undefined, 'an update nobody in this loop wrote: starts over');
  assert.equal(obs(30, 1), undefined);
  assert.equal(obs(40, 1, [cmUpdate, childUpdate]), undefined, 'also triggered by a child: starts over');
  assert.equal(obs(50, 1), undefined);
  assert.equal(obs(55, 0, [requeue]), undefined, 'an intentional run neither counts nor breaks the count');
  assert.equal(obs(150, 1), undefined);
  assert.equal(obs(250, 1), undefined);
  const w = obs(350, 1)!;
  assert.equal(w.cause, 'objectWrite');
  assert.equal(w.count, 4);
  assert.equal(w.generation, undefined);
  assert.match(w.message, /^Hot loop: ns\/cm was reconciled 4 times in 0\.3 s, each time triggered only by the update that the previous pass wrote to the object \(4 write\(s\)\)\. The reconciler writes the object on every pass, and its own write triggers the next reconcile\. Compare with the stored object before writing/);
  assert.doesNotMatch(w.message, /spec|status/);
  // An object that is gone (not present) is not tracked.
  const g = new HotLoopDetector({ windowMs: 1000, threshold: 2 });
  for (let i = 0; i < 5; i++) assert.equal(g.observe({ key: 'ns/gone', at: i, generation: undefined, triggers: [cmUpdate], selfWrites: 1 }), undefined);
});

test('a requeue-after of a few ms asked for on every pass (requeueAfterMs: 5 meant as seconds) is a hot loop; a longer one or another trigger is not', () => {
  const d = new HotLoopDetector({ windowMs: 1000, threshold: 5, cooldownMs: 60_000 });
  const tight: EnqueueReason = { kind: 'requeueAfter', afterMs: 5, reason: 'waiting for the source', at: 0 };
  const warnings = [];
  for (let i = 0; i < 5; i++) warnings.push(d.observe({ key: 'ns/b', at: i * 10, generation: 1, triggers: [tight], selfWrites: 0 }));
  assert.deepEqual(warnings.slice(0, 4), [undefined, undefined, undefined, undefined]);
  const w = warnings[4]!;
  assert.equal(w.cause, 'tightRequeue');
  assert.equal(w.count, 5);
  assert.equal(w.message, 'Hot loop: ns/b was reconciled 5 times in 0.0 s, each time by the requeue-after of 5 ms that its previous reconcile asked for. ' +
    "A requeue-after is a duration: an exec program's or a module's requeueAfterMs is in milliseconds (5000 is 5 s), and a Go RequeueAfter written as a bare number is in nanoseconds (write 5 * time.Second). " +
    'Ask to look again only as often as what you wait for can change, or watch it instead (an owned or watched resource queues the key when it changes).');
  assert.equal(d.looping('ns/b', 40), true);
  assert.equal(d.observe({ key: 'ns/b', at: 50, generation: 1, triggers: [tight], selfWrites: 0 }), undefined, 'cooldown');
  // A kind without generation (a ConfigMap reconciler) loops the same way.
  for (let i = 0; i < 4; i++) assert.equal(d.observe({ key: 'ns/cm', at: i, generation: undefined, present: true, triggers: [tight], selfWrites: 0 }), undefined);
  assert.equal(d.observe({ key: 'ns/cm', at: 4, generation: undefined, present: true, triggers: [tight], selfWrites: 0 })?.cause, 'tightRequeue');
  // A Go RequeueAfter of a bare 5 is 5 ns.
  const ns5: EnqueueReason = { kind: 'requeueAfter', afterMs: 5e-6, at: 0 };
  let go;
  for (let i = 0; i < 5; i++) go = d.observe({ key: 'ns/go', at: i, generation: 1, triggers: [ns5], selfWrites: 0 });
  assert.match(go!.message, /each time by the requeue-after of 5 ns that its previous reconcile asked for/);
  // Polling at the bound or slower is intentional; another trigger in between starts the count over.
  const poll: EnqueueReason = { kind: 'requeueAfter', afterMs: TIGHT_REQUEUE_MS, at: 0 };
  for (let i = 0; i < 20; i++) assert.equal(d.observe({ key: 'ns/poll', at: i * 10, generation: 1, triggers: [poll], selfWrites: 0 }), undefined);
  for (let i = 0; i < 20; i++) {
    const triggers: EnqueueReason[] = i % 4 === 3 ? [resync] : [tight];
    assert.equal(d.observe({ key: 'ns/mixed', at: i, generation: 1, triggers, selfWrites: 0 }), undefined);
  }
});

test('writes to the object itself (metadata: a finalizer, a label), not its status, are named as such; a mix mostly of status writes keeps the status advice', () => {
  const d = new HotLoopDetector({ windowMs: 1000, threshold: 3, cooldownMs: 60_000 });
  let w;
  for (let i = 0; i < 3; i++) w = d.observe({ key: 'ns/a', at: i * 10, generation: 1, triggers: [selfUpdate], selfWrites: 1, selfObjectWrites: 1 });
  assert.equal(w!.cause, 'statusWrite');
  assert.match(w!.message, /the reconciler wrote to the object 3 time\(s\), not to its status: it changes the object's metadata on every pass/);
  assert.doesNotMatch(w!.message, /status write re-triggers/);
  const mixed = new HotLoopDetector({ windowMs: 1000, threshold: 3, cooldownMs: 60_000 });
  for (let i = 0; i < 3; i++) w = mixed.observe({ key: 'ns/a', at: i * 10, generation: 1, triggers: [selfUpdate], selfWrites: 2, selfObjectWrites: i === 0 ? 1 : 0 });
  assert.match(w!.message, /status write re-triggers the watch/);
});
