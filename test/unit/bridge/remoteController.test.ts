import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RemoteController, type RemoteEndpoint } from '../../../src/core/bridge/remoteController.ts';
import type { ControllerMessage, ReplyMessage } from '../../../src/core/bridge/protocol.ts';
import { outcomeOfEnd, writeRecordOf, writeTarget } from '../../../src/core/bridge/causes.ts';
import { Journal, type JournalEntry } from '../../../src/core/journal/journal.ts';
import { WriteIndex } from '../../../src/core/journal/writeIndex.ts';
import { nullLogger } from '../../../src/core/log.ts';
import { FakeClock, flushMicrotasks } from '../../fakes/fakeClock.ts';

/** An endpoint that records commands and lets the test answer them. */
function endpoint() {
  const sent: Array<{ cmd: Record<string, unknown>; reply: (r: Omit<ReplyMessage, 'type' | 'id'>) => void }> = [];
  const ep: RemoteEndpoint & { connected: boolean } = {
    connected: true,
    description: 'Go process 7 (./cmd)',
    request: (cmd) =>
      new Promise<ReplyMessage>((resolve) => {
        sent.push({ cmd, reply: (r) => resolve({ type: 'reply', id: sent.length, ...r }) });
      }),
  };
  return { ep, sent };
}

function setup(announce: Partial<ControllerMessage> = {}) {
  const clock = new FakeClock(1_000_000);
  const journal = new Journal({ clock, delivery: 'sync' });
  const { ep, sent } = endpoint();
  const c = new RemoteController({
    announce: { type: 'controller', name: 'widget', group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets', priorityQueue: true, paused: true, maxConcurrentReconciles: 2, ...announce },
    endpoint: ep,
    journal,
    clock,
    log: nullLogger,
  });
  const q = (key: string, transition: string, more: Record<string, unknown> = {}) =>
    c.onQueue({ type: 'queue', controller: 'widget', key, transition, at: clock.now(), ...more });
  const kinds = () => journal.entries().map((e: JournalEntry) => (e.kind === 'queue' ? `queue:${e.transition}` : e.kind));
  return { clock, journal, ep, sent, c, q, kinds };
}

const informer = (objectKey: string, rv: string, at: number) => ({ kind: 'informer', event: 'update', resource: 'widgets.v1alpha1.lab.reconcile.dev', objectKey, resourceVersion: rv, at });
const owned = (objectKey: string, rv: string, at: number) => ({ kind: 'owned', event: 'update', resource: 'configmaps.v1.', objectKey, resourceVersion: rv, at });

test('queue transitions drive key states and the status; priorities order the queue', () => {
  const { c, q } = setup();
  q('ns/low', 'added', { priority: -100, causes: [{ kind: 'informer', event: 'add', objectKey: 'ns/low', initial: true, at: 1 }] });
  q('ns/high', 'added', { priority: 10, causes: [informer('ns/high', '5', 2)] });
  assert.deepEqual(c.snapshot().queue, ['ns/high', 'ns/low']);
  assert.equal(c.keyState('ns/low')?.phase, 'queued');
  assert.deepEqual(c.keyState('ns/low')?.reasons[0], { kind: 'informer', event: 'add', resource: '', objectKey: 'ns/low', initial: true, at: 1 });
  q('ns/high', 'processing');
  q('ns/high', 'added', { causes: [informer('ns/high', '6', 3)] });
  const st = c.keyState('ns/high')!;
  assert.equal(st.phase, 'processing');
  assert.equal(st.dirtyWhileProcessing, true);
  assert.deepEqual(c.status(), { name: 'widget', state: 'running', paused: true, maxConcurrentReconciles: 2, workQueue: 'priority', inFlight: 1, queueLength: 1, waiting: 0 });
  q('ns/high', 'done');
  assert.equal(c.keyState('ns/high')?.phase, 'queued', 'added while processing: queued again after done');
});

test('why queued: a spec update and an owned child change before one Get are both causes and both triggers', () => {
  const { c, q, journal } = setup();
  q('ns/a', 'added', { causes: [informer('ns/a', '10', 1)] });
  q('ns/a', 'added', { causes: [owned('ns/a-config', '11', 2)] });
  assert.deepEqual(c.keyState('ns/a')!.reasons.map((r) => r.kind), ['informer', 'owned']);
  q('ns/a', 'processing');
  c.onReconcileStart({ type: 'reconcileStart', controller: 'widget', key: 'ns/a', reconcileID: 'r1', triggers: [informer('ns/a', '10', 1), owned('ns/a-config', '11', 2)], dryRun: false, at: 3 });
  const st = c.keyState('ns/a')!;
  assert.deepEqual(st.lastTriggers.map((r) => r.kind), ['informer', 'owned']);
  assert.deepEqual(st.reasons, []);
  const start = journal.entries({ kinds: ['reconcileStart'] })[0]!;
  assert.ok(start.kind === 'reconcileStart');
  assert.deepEqual(start.triggers.map((t) => (t.kind === 'owned' ? `owned ${t.child}@${t.resourceVersion}` : t.kind)), ['informer', 'owned ns/a-config@11']);
  assert.equal(start.via, 'worker');
});

test('an error path: backoff 5, 10, 20 ms with the failure count, errors in key state and journal; forgotten resets', () => {
  const { c, q, clock, journal } = setup();
  q('ns/a', 'added', { causes: [informer('ns/a', '1', 1)] });
  const delays: number[] = [];
  for (let i = 1; i <= 3; i++) {
    q('ns/a', 'processing');
    c.onReconcileStart({ type: 'reconcileStart', controller: 'widget', key: 'ns/a', reconcileID: `r${i}`, triggers: [], dryRun: false, at: clock.now() });
    c.onReconcileEnd({ type: 'reconcileEnd', controller: 'widget', key: 'ns/a', reconcileID: `r${i}`, durationMs: 1, error: `boom ${i}`, dryRun: false, at: clock.now() });
    const delayMs = 5 * 2 ** (i - 1);
    // The priority queue buffers adds: its backoff can come after the key's done (i = 2), or before it.
    if (i === 2) q('ns/a', 'done');
    q('ns/a', 'backoff', { failures: i, delayMs, dueAt: clock.now() + delayMs, causes: [{ kind: 'backoff', failures: i, delayMs, at: clock.now() }] });
    if (i !== 2) q('ns/a', 'done');
    const st = c.keyState('ns/a')!;
    assert.equal(st.phase, 'backoff');
    assert.equal(st.requeues, i);
    assert.equal(st.lastError, `boom ${i}`);
    delays.push(st.waiting!.dueAt - clock.now());
    clock.step(delayMs);
    q('ns/a', 'ready');
    assert.equal(c.keyState('ns/a')!.phase, 'queued', 'ready: queued again, the wait is over');
    assert.equal(c.keyState('ns/a')!.waiting, undefined);
    const reasons = c.keyState('ns/a')!.reasons;
    assert.equal(reasons.length, 1, 'the retry is one cause, not two');
    assert.deepEqual({ ...reasons[0], at: 0 }, { kind: 'backoff', attempt: i, delayMs, error: `boom ${i}`, at: 0 });
  }
  assert.deepEqual(delays, [5, 10, 20]);
  const waits = journal.entries({ kinds: ['queue'] }).filter((e) => e.kind === 'queue' && e.transition === 'waiting');
  assert.deepEqual(waits.map((e) => (e.kind === 'queue' ? e.waitKind : '')), ['backoff', 'backoff', 'backoff']);
  // Each end is journaled with the retry the queue scheduled after Reconcile returned (as the built-in loop's).
  const ends = journal.entries({ kinds: ['reconcileEnd'] });
  assert.deepEqual(
    ends.map((e) => (e.kind === 'reconcileEnd' ? e.outcome : undefined)),
    // retryDelayMs: the delay the Go rate limiter gave (what the CLI shows), not the time left when the entry is read.
    [1, 2, 3].map((i) => ({ kind: 'error', message: `boom ${i}`, retryAt: 1_000_000 + [0, 5, 15][i - 1]! + 5 * 2 ** (i - 1), failures: i, retryDelayMs: 5 * 2 ** (i - 1) })),
  );
  assert.deepEqual(c.keyState('ns/a')!.lastOutcome, ends[2]!.kind === 'reconcileEnd' ? ends[2]!.outcome : undefined);
  q('ns/a', 'forgotten');
  assert.equal(c.keyState('ns/a')!.requeues, 0);
});

test('outcomes: terminal, requeue-after, panic, success', () => {
  const { c, journal, q } = setup();
  const end = (key: string, more: Record<string, unknown>) =>
    c.onReconcileEnd({ type: 'reconcileEnd', controller: 'widget', key, reconcileID: 'x', durationMs: 2, dryRun: false, at: 1, ...more });
  end('ns/t', { error: 'terminal error: bad spec', terminal: true }); // reconcile.TerminalError's text
  end('ns/r', { result: { requeueAfterMs: 15000 } });
  end('ns/p', { panic: 'nil map' });
  q('ns/p', 'processing'); // an error's end waits for its backoff; handed out again without one, it is journaled as it is
  end('ns/s', {});
  end('ns/dry', { dryRun: true, error: 'ignored' });
  assert.deepEqual(
    journal.entries({ kinds: ['reconcileEnd'] }).map((e) => (e.kind === 'reconcileEnd' ? e.outcome : undefined)),
    [{ kind: 'terminal', message: 'bad spec' }, { kind: 'requeueAfter', afterMs: 15000 }, { kind: 'error', message: 'panic: nil map' }, { kind: 'success' }],
  );
  assert.equal(c.keyState('ns/dry'), undefined, 'a dry-run reconcile changes no key state');
});

test('an error returned with a RequeueAfter (or Requeue): the outcome says what controller-runtime drops (it retries with backoff)', () => {
  const end = (more: Record<string, unknown>) => outcomeOfEnd({ type: 'reconcileEnd', controller: 'kettle', key: 'ns/k', reconcileID: 'x', durationMs: 1, dryRun: false, at: 1, ...more } as Parameters<typeof outcomeOfEnd>[0]);
  assert.deepEqual(end({ error: 'not ready', result: { requeueAfterMs: 30_000 } }), { kind: 'error', message: 'not ready', ignored: 'RequeueAfter 30 s' });
  assert.deepEqual(end({ error: 'not ready', result: { requeueAfterMs: 250 } }), { kind: 'error', message: 'not ready', ignored: 'RequeueAfter 250 ms' });
  assert.deepEqual(end({ error: 'terminal error: bad spec', terminal: true, result: { requeue: true } }), { kind: 'terminal', message: 'bad spec', ignored: 'Requeue: true' });
  assert.deepEqual(end({ error: 'not ready', result: { priority: 5 } }), { kind: 'error', message: 'not ready' }, 'a priority alone changes nothing');
  assert.deepEqual(end({ result: { requeueAfterMs: 30_000 } }), { kind: 'requeueAfter', afterMs: 30_000 });
});

test("a Go controller's RBAC refusal (client-go's text is the server's alone) names the missing right and the can-i line, in its outcome and its write", () => {
  const refused = 'failed to add finalizer: widgets.lab.reconcile.dev "w1" is forbidden: User "system:serviceaccount:shop:dev" cannot patch resource "widgets" in API group "lab.reconcile.dev" in the namespace "shop"';
  const hint = '. Missing right: patch on widgets.lab.reconcile.dev in namespace shop (ask for it in a Role); check with: kubectl auth can-i patch widgets.lab.reconcile.dev -n shop';
  const end = (more: Record<string, unknown>) => outcomeOfEnd({ type: 'reconcileEnd', controller: 'widget', key: 'shop/w1', reconcileID: 'x', durationMs: 1, dryRun: false, at: 1, ...more } as Parameters<typeof outcomeOfEnd>[0]);
  assert.deepEqual(end({ error: refused }), { kind: 'error', message: `${refused}${hint}` });
  assert.deepEqual(end({ error: `terminal error: ${refused}`, terminal: true }), { kind: 'terminal', message: `${refused}${hint}` });
  const statusRefused = 'widgets.lab.reconcile.dev "w1" is forbidden: User "dev" cannot update resource "widgets/status" in API group "lab.reconcile.dev" in the namespace "shop"';
  const w = writeRecordOf({ verb: 'update', group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets', subresource: 'status', namespace: 'shop', name: 'w1', dryRun: false, error: statusRefused }, 'widget', 'shop/w1');
  assert.equal(w.error, `${statusRefused}. Missing right: update on widgets.lab.reconcile.dev/status in namespace shop (ask for it in a Role); check with: kubectl auth can-i update widgets.lab.reconcile.dev --subresource=status -n shop`);
  // Said once: a text that names the right already, and any other error, are kept as they are.
  assert.deepEqual(end({ error: `${refused}${hint}` }), { kind: 'error', message: `${refused}${hint}` });
  assert.deepEqual(end({ error: 'not ready' }), { kind: 'error', message: 'not ready' });
});

test("an event of an object this controller wrote names the reconcile whose write made that resourceVersion, also when the event came first (the key's own write, another key's); a dry run, a no-op or another version is no one's", () => {
  const { c, q, journal } = setup();
  const writes = new WriteIndex();
  journal.onDidAppend((batch) => batch.forEach((e) => writes.note(e)));
  const write = (key: string, name: string, before: string, after: string, dryRun = false) =>
    c.onWrite({ type: 'write', controller: 'widget', key, reconcileID: 'r', at: 1, write: { verb: 'update', group: '', version: 'v1', resource: 'configmaps', namespace: 'ns', name, resourceVersionBefore: before, resourceVersionAfter: after, dryRun } });
  // The watch event of a write often reaches the queue before the write's answer is reported: the reason is kept
  // as it came, and whose write it was is looked up when it is shown.
  q('ns/a', 'added', { causes: [owned('ns/a-config', '12', 5)] });
  const reason = c.keyState('ns/a')!.reasons[0]!;
  assert.equal(writes.reconcileKeyOf(reason, 'widget'), undefined, 'not known before the write is reported');
  write('ns/a', 'a-config', '10', '12');
  write('ns/a', 'shared', '13', '14');
  write('ns/b', 'b-config', '15', '15'); // accepted, nothing changed
  write('ns/b', 'b-dry', '16', '17', true);
  journal.flush();
  assert.equal(writes.reconcileKeyOf(c.keyState('ns/a')!.reasons[0]!, 'widget'), 'ns/a', "the key's own write, reported after its event");
  assert.equal(writes.reconcileKeyOf(reason, 'other'), undefined, "another controller's name: not its write");
  c.onReconcileStart({ type: 'reconcileStart', controller: 'widget', key: 'ns/c', reconcileID: 'r2', triggers: [owned('ns/shared', '14', 6), owned('ns/b-config', '15', 7), owned('ns/b-dry', '17', 8), owned('ns/a-config', '18', 9)], dryRun: false, at: 10 });
  const start = journal.entries({ kinds: ['reconcileStart'] }).at(-1)!;
  assert.deepEqual(start.kind === 'reconcileStart' ? start.triggers.map((t) => writes.reconcileKeyOf(t, 'widget')) : [], ['ns/a', undefined, undefined, undefined]);
});

test('a wait reported when it begins (requeue-after, backoff) becomes a reason whose time is when it is due', () => {
  const { c, q } = setup();
  q('ns/w', 'waiting', { dueAt: 46_000, delayMs: 45_000, causes: [{ kind: 'requeueAfter', afterMs: 45_000, at: 1_000 }] });
  assert.deepEqual(c.keyState('ns/w')!.reasons.map((r) => [r.kind, r.at]), [['requeueAfter', 46_000]]);
  q('ns/b', 'backoff', { dueAt: 2_020, delayMs: 20, failures: 3, causes: [{ kind: 'backoff', failures: 3, delayMs: 20, at: 2_000 }] });
  assert.deepEqual(c.keyState('ns/b')!.reasons.map((r) => [r.kind, r.at]), [['backoff', 2_020]]);
});

test('writes are journaled with resourceVersion before → after and dryRun', () => {
  const { c, journal } = setup();
  c.onWrite({ type: 'write', controller: 'widget', key: 'ns/a', reconcileID: 'r', at: 1, write: { verb: 'update', group: '', version: 'v1', resource: 'configmaps', namespace: 'ns', name: 'a-config', resourceVersionBefore: '10', resourceVersionAfter: '12', dryRun: false } });
  c.onWrite({ type: 'write', controller: 'widget', key: 'ns/a', at: 2, write: { verb: 'create', group: '', version: 'v1', resource: 'configmaps', namespace: 'ns', name: 'b', dryRun: true } });
  const w = journal.entries({ kinds: ['write'] });
  assert.equal(w.length, 2);
  const [a, b] = w;
  assert.ok(a?.kind === 'write' && b?.kind === 'write');
  assert.deepEqual([a.verb, a.objectKey, a.resourceVersionBefore, a.resourceVersionAfter, a.dryRun, a.key, a.controller], ['update', 'ns/a-config', '10', '12', false, 'ns/a', 'widget']);
  assert.deepEqual([b.verb, b.dryRun, b.resource], ['create', true, 'configmaps.v1']);
  assert.equal(a.warnings, undefined);
  // The server's warnings about a Go write (a Go type ahead of its CRD: a field the server dropped) stay with it.
  c.onWrite({ type: 'write', controller: 'widget', key: 'ns/a', at: 3, write: { verb: 'update', group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets', namespace: 'ns', name: 'a', dryRun: false, warnings: ['unknown field "spec.tier"'] } });
  const warned = journal.entries({ kinds: ['write'] })[2];
  assert.ok(warned?.kind === 'write');
  assert.deepEqual(warned.warnings, ['unknown field "spec.tier"']);
});

test('resync: the snapshot rebuilds processing, ready (by priority) and waiting keys with failures and causes', async () => {
  const { c, sent, clock } = setup();
  const done = c.resync();
  await flushMicrotasks();
  assert.deepEqual(sent[0]!.cmd, { op: 'snapshot', controller: 'widget' });
  sent[0]!.reply({
    ok: true,
    snapshot: {
      dropped: 0,
      controllers: [
        {
          name: 'widget',
          paused: false,
          keys: [
            { key: 'ns/p', state: 'processing', failures: 0, causes: [] },
            { key: 'ns/r1', state: 'ready', failures: 0, priority: -100, causes: [{ kind: 'informer', event: 'add', objectKey: 'ns/r1', initial: true, at: 1 }] },
            { key: 'ns/r2', state: 'ready', failures: 0, priority: 0, causes: [] },
            { key: 'ns/w', state: 'waiting', failures: 2, dueAt: clock.now() + 10, causes: [{ kind: 'backoff', failures: 2, delayMs: 10, at: 2 }] },
            { key: 'ns/i', state: 'idle', failures: 0, causes: [] },
          ],
        },
      ],
    },
  });
  assert.equal(await done, true);
  const snap = c.snapshot();
  assert.deepEqual(snap.queue, ['ns/r2', 'ns/r1']);
  assert.deepEqual(snap.waiting, [{ key: 'ns/w', dueAt: clock.now() + 10, kind: 'backoff' }]);
  assert.equal(c.keyState('ns/p')!.phase, 'processing');
  assert.equal(c.keyState('ns/w')!.requeues, 2);
  assert.equal(c.keyState('ns/r1')!.reasons[0]!.kind, 'informer');
  assert.equal(c.status().paused, false);
});

test('resync: the queue messages read right after the snapshot reply (same chunk, before resync resumes) apply on top of it', async () => {
  const { c, q, sent } = setup();
  // As BridgeConnection does: onReply runs as the reply line is read, the promise settles a microtask later.
  let onReply: ((r: ReplyMessage) => void) | undefined;
  sent.length = 0;
  const ep = (c as unknown as { endpoint: RemoteEndpoint }).endpoint;
  const request = ep.request.bind(ep);
  (ep as { request: RemoteEndpoint['request'] }).request = (cmd, options) => {
    onReply = options?.onReply;
    return request(cmd, options);
  };
  const done = c.resync();
  await flushMicrotasks();
  assert.ok(onReply, 'resync passes onReply');
  const reply: ReplyMessage = { type: 'reply', id: 1, ok: true, snapshot: { dropped: 0, controllers: [{ name: 'widget', paused: true, keys: [{ key: 'ns/old', state: 'ready', failures: 0, causes: [] }] }] } };
  // One chunk: the reply, then an add the process sent after it.
  onReply(reply);
  q('ns/new', 'added', { causes: [informer('ns/new', '3', 3)] });
  sent[0]!.reply({ ok: reply.ok, snapshot: reply.snapshot });
  assert.equal(await done, true);
  assert.equal(c.keyState('ns/new')?.phase, 'queued', 'the add after the snapshot is not wiped by it');
  assert.equal(c.keyState('ns/old')?.phase, 'queued');
  assert.deepEqual(new Set(c.snapshot().queue), new Set(['ns/old', 'ns/new']));
});

test('step: a waiting key is notReady locally; force sends it; the reply becomes the StepResult; pause/resume are commands', async () => {
  const { c, q, sent, clock } = setup();
  q('ns/a', 'backoff', { failures: 1, delayMs: 5000, dueAt: clock.now() + 5000 });
  const nr = await c.step({ key: 'ns/a' });
  assert.deepEqual(nr, { kind: 'notReady', key: 'ns/a', waiting: 'backoff', dueAt: clock.now() + 5000 });
  assert.equal(sent.length, 0, 'nothing sent for a key that is not ready');
  const stepping = c.step({ key: 'ns/a', force: true });
  await flushMicrotasks();
  assert.deepEqual(sent[0]!.cmd, { op: 'step', controller: 'widget', key: 'ns/a', force: true });
  // The process has not reported the reconcile yet (a breakpoint stops it before its writer sends): a second step
  // of the key answers at once instead of waiting behind the first.
  let second: unknown;
  void c.step({ key: 'ns/a', force: true }).then((r) => (second = r));
  await flushMicrotasks();
  assert.deepEqual(second, { kind: 'busy', key: 'ns/a', stepping: true });
  assert.equal(sent.length, 1, 'the second step sent nothing');
  q('ns/a', 'processing');
  c.onReconcileStart({ type: 'reconcileStart', controller: 'widget', key: 'ns/a', reconcileID: 'r', triggers: [{ kind: 'manual', action: 'step', note: 'forced', at: 1 }], dryRun: false, at: 1 });
  sent[0]!.reply({ ok: true, reconcile: { controller: 'widget', key: 'ns/a', reconcileID: 'r', durationMs: 7, dryRun: false, at: 2 } });
  const r = await stepping;
  assert.equal(r.kind, 'reconciled');
  assert.ok(r.kind === 'reconciled');
  assert.deepEqual(r.outcome, { kind: 'success' });
  assert.equal(r.durationMs, 7);
  assert.deepEqual(r.triggers.map((t) => t.kind), ['manual']);

  c.resume();
  c.pause();
  assert.deepEqual(sent.slice(1).map((s) => s.cmd.op), ['resume', 'pause']);
  assert.equal(c.status().paused, true);
  assert.equal(c.resetBackoff('ns/a'), true);
  assert.deepEqual(sent[3]!.cmd, { op: 'resetBackoff', controller: 'widget', key: 'ns/a' });
});

test('a refused command is a journal warning; a disconnected controller is stopped and steps report notRunning', async () => {
  const { c, sent, ep, journal } = setup();
  c.reconcileNow('ns/a');
  sent[0]!.reply({ ok: false, error: 'unknown key' });
  await flushMicrotasks();
  const w = journal.entries({ kinds: ['warning'] });
  assert.equal(w.length, 1);
  assert.ok(w[0]!.kind === 'warning');
  assert.match(w[0]!.message, /reconcileNow ns\/a refused by Go process 7 \(\.\/cmd\): unknown key/);
  ep.connected = false;
  c.disconnected();
  assert.equal(c.status().state, 'stopped');
  assert.deepEqual(await c.step(), { kind: 'notRunning' });
  assert.equal(c.reconcileNow('ns/a'), false);
  await assert.rejects(c.start(), /not connected: run it again/);
});

test("a step that the queue's shutdown ended reports notRunning, not an empty queue; 'holds no key' is empty", async () => {
  const { c, sent } = setup();
  const stopped = c.step();
  await flushMicrotasks();
  sent[0]!.reply({ ok: false, error: "the controller's queue shut down" });
  assert.deepEqual(await stopped, { kind: 'notRunning' }, 'a manager that stopped while the step waited is not an empty queue');
  const empty = c.step();
  await flushMicrotasks();
  sent[1]!.reply({ ok: false, error: 'the queue holds no key' });
  assert.deepEqual(await empty, { kind: 'empty' });
});

test('a custom request type: its keys are texts, passed verbatim to every command; object keys are still checked for other controllers', async () => {
  const custom = setup({ requestType: 'main.ClusterRequest', cacheNamespaces: ['shop'] });
  const key = 'cluster://eu-1/shop/cart';
  custom.q(key, 'added', { causes: [{ kind: 'watch', event: 'add', objectKey: 'shop/cart', at: 1 }] });
  assert.deepEqual(custom.c.snapshot().queue, [key]);
  assert.equal(custom.c.outsideCache('other/x (Cluster=eu-1)'), undefined, 'no cache claim about a text that is not an object key');
  const stepping = custom.c.step({ key });
  await flushMicrotasks();
  assert.deepEqual(custom.sent[0]!.cmd, { op: 'step', controller: 'widget', key });
  custom.sent[0]!.reply({ ok: true, reconcile: { controller: 'widget', key, reconcileID: 'r', durationMs: 3, dryRun: false, at: 2 } });
  assert.equal((await stepping).kind, 'reconciled');
  const dry = custom.c.dryRun(key);
  await flushMicrotasks();
  assert.deepEqual(custom.sent[1]!.cmd, { op: 'dryRun', controller: 'widget', key });
  custom.sent[1]!.reply({ ok: true, reconcile: { controller: 'widget', key, reconcileID: 'd', durationMs: 1, dryRun: true, at: 3 }, writes: [] });
  assert.equal((await dry).key, key);
  assert.equal(custom.c.reconcileNow('other/x (Cluster=eu-2)'), true);
  assert.deepEqual(custom.sent[2]!.cmd, { op: 'reconcileNow', controller: 'widget', key: 'other/x (Cluster=eu-2)' });
  await assert.rejects(custom.c.step({ key: '' }), /a key of widget \(requests of type main\.ClusterRequest\) is required/);

  const plain = setup();
  await assert.rejects(plain.c.step({ key }), /unexpected key format/);
  assert.throws(() => plain.c.reconcileNow(key), /unexpected key format/);
  assert.equal(plain.sent.length, 0);
});

test('causes: an add outside any informer event reads as such; unknown kinds keep their name', async () => {
  const { reasonOfCause } = await import('../../../src/core/bridge/causes.ts');
  assert.deepEqual(reasonOfCause({ kind: 'watch', note: 'added outside an informer event (a channel source or the program itself)', at: 5 }), {
    kind: 'manual',
    action: 'enqueue',
    note: 'added outside an informer event (a channel source or the program itself)',
    at: 5,
  });
  assert.deepEqual(reasonOfCause({ kind: 'owned', event: 'update', resource: 'configmaps.v1.', objectKey: 'ns/c', resourceVersion: '9', at: 1 }), {
    kind: 'owned',
    event: 'update',
    resource: 'configmaps.v1.',
    child: 'ns/c',
    resourceVersion: '9',
    at: 1,
  });
  // An owned child's or watched object's add from its informer's initial list says so (as the primary's does).
  assert.equal((reasonOfCause({ kind: 'owned', event: 'add', resource: 'services.v1.', objectKey: 'ns/c', objectKind: 'Service', initial: true, at: 1 }) as { initial?: boolean }).initial, true);
  assert.equal((reasonOfCause({ kind: 'watch', event: 'add', resource: 'configmaps.v1.', objectKey: 'ns/m', initial: true, at: 1 }) as { initial?: boolean }).initial, true);
  // A delete of an object with finalizers (an update that set deletionTimestamp) says so, in the reason and in words.
  const deleting = reasonOfCause({ kind: 'informer', event: 'update', resource: 'widgets.v1.lab.reconcile.dev', objectKey: 'ns/w', resourceVersion: '12', deletionRequested: true, at: 1 });
  assert.deepEqual(deleting, { kind: 'informer', event: 'update', resource: 'widgets.v1.lab.reconcile.dev', objectKey: 'ns/w', resourceVersion: '12', deletionRequested: true, at: 1 });
  const { reasonSummary: summary } = await import('../../../src/host/views/presentation.ts');
  assert.equal(summary(deleting, 3001), 'update of ns/w (rv 12, deletion requested: deletionTimestamp set), 3.0s ago');
  const { describeTrigger } = await import('../../../src/cli/cli.ts');
  assert.equal(describeTrigger(deleting, 'ns/w'), 'update rv 12 (deletion requested: deletionTimestamp set)');
  // The child's kind, when the Go side's cache knows it, becomes the reason's childKind ("add of owned ConfigMap …").
  assert.deepEqual(reasonOfCause({ kind: 'owned', event: 'add', resource: 'configmaps.v1', objectKey: 'ns/c', objectKind: 'ConfigMap', at: 3 }), {
    kind: 'owned',
    event: 'add',
    resource: 'configmaps.v1',
    child: 'ns/c',
    childKind: 'ConfigMap',
    at: 3,
  });
  const { reasonSummary } = await import('../../../src/host/views/presentation.ts');
  assert.match(reasonSummary(reasonOfCause({ kind: 'owned', event: 'add', resource: 'configmaps.v1', objectKey: 'ns/c', objectKind: 'ConfigMap', at: 3 }), 3), /^add of owned ConfigMap ns\/c, /);
  // The same for a mapped watch: "update of watched Secret shop/web".
  const watched = reasonOfCause({ kind: 'watch', event: 'update', resource: 'secrets.v1', objectKey: 'shop/web', objectKind: 'Secret', at: 4 });
  assert.deepEqual(watched, { kind: 'watch', event: 'update', resource: 'secrets.v1', objectKey: 'shop/web', objectKind: 'Secret', at: 4 });
  assert.match(reasonSummary(watched, 4), /^update of watched Secret shop\/web, /);
  assert.deepEqual(reasonOfCause({ kind: 'telepathy', at: 2 }), { kind: 'manual', action: 'enqueue', note: 'cause "telepathy"', at: 2 });
});

test('older queue messages applied after a snapshot never leave a key queued forever (a processing message clears a stale dirty mark)', async () => {
  const { c, sent, q } = setup();
  const done = c.resync();
  await flushMicrotasks();
  // The process took the snapshot while ns/k was processing, after it had sent added + processing.
  sent[0]!.reply({ ok: true, snapshot: { controllers: [{ name: 'widget', paused: false, keys: [{ key: 'ns/k', state: 'processing', failures: 0, causes: [] }] }] } });
  assert.equal(await done, true);
  q('ns/k', 'added');
  q('ns/k', 'processing');
  q('ns/k', 'done');
  assert.deepEqual(c.snapshot().queue, [], 'nothing is queued: the add was the one handed out');
  assert.equal(c.status().inFlight, 0);
  // A real add during processing still requeues after done.
  q('ns/k', 'added');
  q('ns/k', 'processing');
  q('ns/k', 'added');
  q('ns/k', 'done');
  assert.deepEqual(c.snapshot().queue, ['ns/k']);
});

test('a deleteAllOf is journaled as a delete of namespace/* with its selector; writeTarget names it the same way', () => {
  const { c, journal } = setup();
  const selected = { verb: 'deleteAllOf', group: '', version: 'v1', resource: 'configmaps', namespace: 'team-a', name: '', selector: 'relay.example.io/beacon=north', dryRun: false };
  c.onWrite({ type: 'write', controller: 'beacon', key: 'team-a/north', at: 1, write: selected });
  c.onWrite({ type: 'write', controller: 'beacon', key: 'team-a/north', at: 2, write: { ...selected, selector: undefined } });
  const [a, b] = journal.entries({ kinds: ['write'] });
  assert.ok(a?.kind === 'write' && b?.kind === 'write');
  assert.deepEqual([a.verb, a.objectKey], ['delete', 'team-a/*[relay.example.io/beacon=north]']);
  assert.deepEqual([b.verb, b.objectKey], ['delete', 'team-a/*']);
  assert.equal(writeTarget(selected), 'team-a/*[relay.example.io/beacon=north]');
  assert.equal(writeTarget({ ...selected, namespace: undefined, selector: undefined }), '*');
  assert.equal(writeTarget({ ...selected, verb: 'create', name: 'beacon-north-log-x7k2p' }), 'team-a/beacon-north-log-x7k2p');
});

test('keys outside the announced cache namespaces: outsideCache names them; inside, cluster-scoped or unannounced keys are not', () => {
  const { c } = setup();
  assert.equal(c.outsideCache('team-c/outside'), undefined, 'no cacheNamespaces announced: every namespace');
  c.announce({ type: 'controller', name: 'widget', resource: 'widgets', priorityQueue: true, paused: true, cacheNamespaces: ['team-a', 'team-b'] });
  assert.equal(c.outsideCache('team-c/outside'), "outside widget's cache (namespaces team-a, team-b)");
  assert.equal(c.outsideCache('team-b/inside'), undefined);
  assert.equal(c.outsideCache('cluster-scoped'), undefined);
  // A label selector (ByObject Label): an object whose labels do not match is outside; without labels nothing is claimed.
  c.announce({ type: 'controller', name: 'widget', resource: 'secrets', priorityQueue: true, paused: true, cacheNamespaces: ['team-a'], cacheLabelSelector: 'app=lamp' });
  assert.equal(c.outsideCache('team-a/other', {}), "outside widget's cache (label selector app=lamp)");
  assert.equal(c.outsideCache('team-a/other', { app: 'web' }), "outside widget's cache (label selector app=lamp)");
  assert.equal(c.outsideCache('team-a/lamp1', { app: 'lamp' }), undefined);
  assert.equal(c.outsideCache('team-a/other'), undefined, 'labels not known: nothing claimed');
  assert.equal(c.outsideCache('team-b/lamp1', { app: 'lamp' }), "outside widget's cache (namespaces team-a)");
  c.announce({ type: 'controller', name: 'widget', resource: 'secrets', priorityQueue: true, paused: true, cacheLabelSelector: 'app in (' });
  assert.equal(c.outsideCache('team-a/other', {}), undefined, 'a selector this side cannot parse claims nothing');
});

test('per-namespace cache selectors (cacheSelectors), cache.AllNamespaces, field selectors and a scope the process cannot tell', () => {
  const { c, journal } = setup();
  const announce = (more: Record<string, unknown>) => c.announce({ type: 'controller', name: 'widget', kind: 'Secret', resource: 'secrets', priorityQueue: true, paused: true, ...more });
  announce({
    cacheNamespaces: ['team-a', 'team-b'],
    cacheLabelSelector: 'kind-wide',
    cacheSelectors: [
      { namespace: 'team-a', label: 'app=lamp' },
      { namespace: 'team-b', label: 'tier notin (legacy)', field: 'metadata.name!=skip' },
    ],
  });
  assert.equal(c.outsideCache('team-a/x', { app: 'web' }), "outside widget's cache (label selector app=lamp in team-a)");
  assert.equal(c.outsideCache('team-a/x', { app: 'lamp' }), undefined);
  assert.equal(c.outsideCache('team-b/x', { app: 'web' }), undefined, "team-b's own selector, not team-a's");
  assert.equal(c.outsideCache('team-b/x', { tier: 'legacy' }), "outside widget's cache (label selector tier notin (legacy) in team-b)");
  assert.equal(c.outsideCache('team-b/skip'), "outside widget's cache (field selector metadata.name!=skip in team-b)", 'a field selector on the name needs no labels');
  assert.equal(c.outsideCache('team-c/x', { app: 'lamp' }), "outside widget's cache (namespaces team-a, team-b)");
  assert.equal(c.outsideCache('cluster-wide', {}), "outside widget's cache (label selector kind-wide)", 'a cluster-scoped key takes the kind-wide selector');
  // cache.AllNamespaces beside a named namespace: every namespace, the named one with its own selector.
  announce({ cacheSelectors: [{ namespace: '', label: 'team' }, { namespace: 'b' }] });
  assert.equal(c.outsideCache('b/x', {}), undefined);
  assert.equal(c.outsideCache('z/x', {}), "outside widget's cache (label selector team in z)");
  assert.equal(c.outsideCache('z/x', { team: 'z' }), undefined);
  // A field selector on another field is not known here: nothing claimed on it.
  announce({ cacheFieldSelector: 'type=Opaque' });
  assert.equal(c.outsideCache('a/x', {}), undefined);
  // The process cannot tell its scope: nothing is ever claimed.
  announce({ cacheScopeUnknown: 'the kind of its cache.Options.ByObject entry *v1.Thing is not known', cacheNamespaces: ['a'] });
  assert.equal(c.outsideCache('z/x', {}), undefined);
  announce({ cacheScopeUnknown: 'the kind of its cache.Options.ByObject entry *v1.Thing is not known' }); // a reconnect
  const said = journal.entries({ kinds: ['warning'] }).filter((e) => e.kind === 'warning' && e.code === 'cacheScopeUnknown');
  assert.equal(said.length, 1, 'said once per reason');
  assert.match(said[0]!.kind === 'warning' ? said[0]!.message : '', /cannot tell which objects its manager's cache holds \(the kind of its cache\.Options\.ByObject entry \*v1\.Thing is not known\); no object is marked or refused/);
});

test('step, reconcile now, enqueue and dry-run of an object the cache label selector leaves out are refused with the reason, nothing sent; a queued key still steps', async () => {
  const { c, sent, q, journal } = setup();
  c.announce({ type: 'controller', name: 'widget', kind: 'Secret', resource: 'secrets', priorityQueue: true, paused: true, cacheSelectors: [{ namespace: 'vault', label: 'app=lamp', field: 'type=Opaque' }], cacheNamespaces: ['vault'] });
  const labels: Record<string, Record<string, string>> = { 'vault/other': { app: 'web' }, 'vault/lamp': { app: 'lamp' } };
  c.setObjectLabels((k) => labels[k]);
  const why = /key vault\/other is outside the cache of controller "widget": its manager's cache \(cache\.Options\) lists Secret objects in namespace vault only with label selector app=lamp, which its labels \(app=web\) do not match \(field selector type=Opaque applies too; the editor does not check it\), so controller-runtime never queues it/;
  await assert.rejects(c.step({ key: 'vault/other', force: true }), why);
  await assert.rejects(c.step({ key: 'vault/other' }), why);
  await assert.rejects(c.dryRun('vault/other'), why);
  assert.equal(c.reconcileNow('vault/other'), false);
  assert.equal(c.enqueue('vault/other', 'by hand'), false);
  assert.match(c.selectorRefusal('vault/other') ?? '', why);
  assert.equal(sent.length, 0, 'nothing sent to the process');
  assert.ok(journal.entries({ kinds: ['warning'] }).some((e) => e.kind === 'warning' && e.code === 'commandRefused' && why.test(e.message)));
  // The object's labels change into the selector: it goes through.
  labels['vault/other'] = { app: 'lamp' };
  assert.equal(c.selectorRefusal('vault/other'), undefined);
  assert.equal(c.reconcileNow('vault/other'), true);
  assert.equal(sent.at(-1)?.cmd.op, 'reconcileNow');
  // A field selector on the name leaves a key out by the key alone: the same words as the process's own refusal
  // (bridge/scope_test.go TestOutsideCacheFieldSelector).
  c.announce({ type: 'controller', name: 'widget', kind: 'Secret', resource: 'secrets', priorityQueue: true, paused: true, cacheNamespaces: ['a'], cacheSelectors: [{ namespace: 'a', field: 'metadata.name!=skip' }] });
  assert.equal(
    c.selectorRefusal('a/skip'),
    `key a/skip is outside the cache of controller "widget": its manager's cache (cache.Options) lists Secret objects in namespace a only with field selector metadata.name!=skip, which it does not match, so controller-runtime never queues it and its reconciler's Get through the cache finds nothing`,
  );
  c.announce({ type: 'controller', name: 'widget', kind: 'Secret', resource: 'secrets', priorityQueue: true, paused: true, cacheSelectors: [{ namespace: 'vault', label: 'app=lamp', field: 'type=Opaque' }], cacheNamespaces: ['vault'] });
  // Labels unknown (no object): nothing claimed.
  assert.equal(c.selectorRefusal('vault/gone'), undefined);
  // A key the queue holds (the delete event of an object whose labels left the selector) steps as usual.
  labels['vault/left'] = { app: 'web' };
  q('vault/left', 'added');
  const step = c.step({ key: 'vault/left' });
  await flushMicrotasks();
  assert.deepEqual([sent.at(-1)?.cmd.op, sent.at(-1)?.cmd.key], ['step', 'vault/left']);
  sent.at(-1)!.reply({ ok: true, reconcile: { type: 'reconcileEnd', controller: 'widget', key: 'vault/left', reconcileID: 'r', durationMs: 1, dryRun: false, at: 1 } });
  assert.equal((await step).kind, 'reconciled');
});

test('setObjectLabels: disposing what it returned takes those labels away only while they are still the ones set (a closed view keeps no hold; a later one stays)', () => {
  const { c } = setup();
  c.announce({ type: 'controller', name: 'widget', kind: 'Secret', resource: 'secrets', priorityQueue: true, paused: true, cacheSelectors: [{ namespace: 'vault', label: 'app=lamp' }], cacheNamespaces: ['vault'] });
  const first = c.setObjectLabels(() => ({ app: 'web' }));
  assert.match(c.selectorRefusal('vault/other') ?? '', /its labels \(app=web\) do not match/);
  first.dispose();
  assert.equal(c.selectorRefusal('vault/other'), undefined, 'no labels once the view that lent them is gone');
  const older = c.setObjectLabels(() => ({ app: 'web' }));
  const newer = c.setObjectLabels(() => ({ app: 'db' }));
  older.dispose(); // an old session closing after the new one attached
  assert.match(c.selectorRefusal('vault/other') ?? '', /its labels \(app=db\) do not match/, "the newer view's labels stay");
  newer.dispose();
  assert.equal(c.selectorRefusal('vault/other'), undefined);
});

test('a waiting key handed out with no "ready" before it (the Go queue\'s timer lost the race to a worker) is not left waiting after its reconcile', () => {
  const { c, q, clock } = setup();
  q('ns/w', 'waiting', { dueAt: clock.now() + 15_000, delayMs: 15_000, causes: [{ kind: 'requeueAfter', afterMs: 15_000, at: clock.now() }] });
  assert.equal(c.keyState('ns/w')?.phase, 'requeueAfter');
  clock.step(15_000);
  q('ns/w', 'processing');
  c.onReconcileStart({ type: 'reconcileStart', controller: 'widget', key: 'ns/w', reconcileID: 'r1', triggers: [{ kind: 'requeueAfter', afterMs: 15_000, at: clock.now() }], dryRun: false, at: clock.now() });
  c.onReconcileEnd({ type: 'reconcileEnd', controller: 'widget', key: 'ns/w', reconcileID: 'r1', durationMs: 2, dryRun: false, at: clock.now() });
  q('ns/w', 'done');
  const st = c.keyState('ns/w')!;
  assert.equal(st.phase, 'idle', 'the wait ended when the key was handed out');
  assert.equal(st.waiting, undefined);
  assert.deepEqual(c.keyCounts(), { queued: 0, processing: 0, backoff: 0, requeueAfter: 0 });
  assert.equal(c.status().waiting, 0);
});

test("bridge.Wrap given another kind than the controller's For(): said once, after 3 events of another resource on the keys' own names and none of the announced one; a right one never warns", () => {
  const gadget = (objectKey: string, rv: string) => ({ kind: 'watch', event: 'add', resource: 'gadgets.v1.acme.test', objectKey, objectKind: 'Gadget', resourceVersion: rv, initial: true, at: 1 });
  const wrong = setup();
  const warnings = () => wrong.journal.entries({ kinds: ['warning'] }).map((e) => (e.kind === 'warning' ? `${e.code}: ${e.message}` : ''));
  wrong.q('ns/a', 'added', { causes: [gadget('ns/a', '1')] });
  wrong.q('ns/b', 'added', { causes: [gadget('ns/b', '2'), { kind: 'watch', event: 'add', resource: 'gadgets.v1.acme.test', objectKey: 'ns/other', resourceVersion: '3', at: 1 }] });
  assert.deepEqual(warnings(), [], 'two are not enough; a mapped watch of another name does not count');
  wrong.q('ns/c', 'added', { causes: [gadget('ns/c', '4')] });
  wrong.q('ns/d', 'added', { causes: [gadget('ns/d', '5')] });
  assert.equal(warnings().length, 1, warnings().join('\n'));
  assert.match(warnings()[0]!, /^forObjectMismatch: controller widget: bridge\.Wrap was given a widgets\.lab\.reconcile\.dev \(widgets\.lab\.reconcile\.dev\) as its For object, but its keys come from events of gadgets\.acme\.test objects with the key's own name \(3 so far\) and none from widgets\.lab\.reconcile\.dev\. If the controller's For\(\) is Gadget, pass that: bridge\.Wrap\(mgr, "widget", r, &Gadget\{\}\)\./);

  const right = setup({ kind: 'Widget' });
  right.q('ns/a', 'added', { causes: [informer('ns/a', '1', 1)] });
  for (const k of ['b', 'c', 'd', 'e']) right.q(`ns/${k}`, 'added', { causes: [gadget(`ns/${k}`, k)] }); // a child named like its owner, later
  assert.deepEqual(right.journal.entries({ kinds: ['warning'] }), [], 'an event of the announced kind settles it');

  const unannounced = setup({ resource: undefined, group: undefined, version: undefined });
  for (const k of ['a', 'b', 'c']) unannounced.q(`ns/${k}`, 'added', { causes: [gadget(`ns/${k}`, k)] });
  assert.deepEqual(unannounced.journal.entries({ kinds: ['warning'] }), [], 'no For object given: nothing to compare');
});

test('a controller announced without the bridge client (no bridge.Setup) says once what is missing and how to add it', () => {
  const { journal } = setup({ noSetup: true });
  const warnings = journal.entries({ kinds: ['warning'] });
  assert.equal(warnings.length, 1);
  assert.ok(warnings[0]!.kind === 'warning' && warnings[0]!.code === 'noSetup');
  assert.match(warnings[0]!.kind === 'warning' ? warnings[0]!.message : '', /^widget: the program's manager client and cache are not the bridge's \(bridge\.Setup\(&options\) is not called before ctrl\.NewManager\): its writes are not journaled, .*dry-run is refused/);
  assert.equal(setup().journal.entries({ kinds: ['warning'] }).length, 0, 'with bridge.Setup nothing is said');
});

test('wiring hints of the announcement are said once each as warnings, a re-announcement adding one says only the new one', () => {
  const options = 'bridge.Options(mgr, "widgets", …) is used by the controller controller-runtime named "widget": … pass "widget" to bridge.Options and bridge.Wrap';
  const { c, journal } = setup({ hints: [options] });
  const said = () => journal.entries({ kinds: ['warning'] }).flatMap((e) => (e.kind === 'warning' && e.code === 'wiring' ? [e.message] : []));
  assert.deepEqual(said(), [`widget: ${options}`]);
  const undone = 'bridge.Wrap(mgr, "keys", …) is not the reconciler of controller "widget" after all …';
  c.announce({ type: 'controller', name: 'widget', priorityQueue: true, paused: false, hints: [options, undone] });
  c.announce({ type: 'controller', name: 'widget', priorityQueue: true, paused: false, hints: [options, undone] }); // a reconnect
  assert.deepEqual(said(), [`widget: ${options}`, `widget: ${undone}`]);
});

test('a Go controller that writes status on every pass is a hot loop: warned on the key (with the Go predicate), cleared once it stops looping', () => {
  const { c, q, journal } = setup();
  const key = 'ns/hot';
  let at = 1000;
  let rv = 10;
  const pass = (generation: number) => {
    at += 100;
    q(key, 'added', { causes: [{ ...informer(key, String(rv), at), generation }] });
    q(key, 'processing');
    c.onReconcileStart({ type: 'reconcileStart', controller: 'widget', key, reconcileID: `r${rv}`, triggers: [{ ...informer(key, String(rv), at), generation }], dryRun: false, at });
    rv++;
    c.onWrite({ type: 'write', controller: 'widget', key, reconcileID: `r${rv}`, at, write: { verb: 'update', group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets', namespace: 'ns', name: 'hot', subresource: 'status', resourceVersionBefore: String(rv - 1), resourceVersionAfter: String(rv), dryRun: false } });
    c.onReconcileEnd({ type: 'reconcileEnd', controller: 'widget', key, reconcileID: `r${rv}`, durationMs: 2, dryRun: false, at: at + 2 });
    q(key, 'done');
  };
  for (let i = 0; i < 9; i++) pass(1);
  assert.equal(journal.entries({ kinds: ['warning'] }).length, 0, 'nine passes are not yet a loop');
  pass(1);
  const [w] = journal.entries({ kinds: ['warning'] });
  assert.ok(w?.kind === 'warning' && w.code === 'hotLoop', JSON.stringify(w));
  assert.match(w.message, /^Hot loop: ns\/hot was reconciled 10 times in 0\.9 s while its generation stayed 1 \(no spec change\)\..*the reconciler wrote to it 9 time\(s\).*builder\.WithPredicates\(predicate\.GenerationChangedPredicate\{\}\)/);
  assert.equal(c.keyState(key)?.warning, w.message);
  // The loop stops (the status is written only on change): a spec change later runs once, the warning leaves the key.
  at += 60_000;
  q(key, 'added', { causes: [{ ...informer(key, String(rv), at), generation: 2 }] });
  q(key, 'processing');
  c.onReconcileStart({ type: 'reconcileStart', controller: 'widget', key, reconcileID: 'later', triggers: [{ ...informer(key, String(rv), at), generation: 2 }], dryRun: false, at });
  assert.equal(c.keyState(key)?.warning, undefined);
  // Steps and initial lists never count.
  const fresh = setup();
  for (let i = 0; i < 12; i++) {
    fresh.c.onReconcileStart({ type: 'reconcileStart', controller: 'widget', key, reconcileID: `s${i}`, triggers: [{ kind: 'manual', action: 'step', at: i }], dryRun: false, at: i });
  }
  assert.equal(fresh.journal.entries({ kinds: ['warning'] }).length, 0);
});

test('a Go controller that rewrites its object\'s metadata on every pass (no subresource) gets the metadata advice, not the status write and its predicate', () => {
  // A Patch/Update of the object itself (a finalizer appended, an annotation stamped) leaves the generation alone, as
  // a status write does; the predicate the status advice names would hide that loop, not stop the write.
  const hot = (subresource: string | undefined) => {
    const { c, q, journal } = setup();
    const key = 'ns/meta';
    let at = 1000;
    let rv = 10;
    for (let i = 0; i < 10; i++) {
      at += 100;
      q(key, 'added', { causes: [{ ...informer(key, String(rv), at), generation: 1 }] });
      q(key, 'processing');
      c.onReconcileStart({ type: 'reconcileStart', controller: 'widget', key, reconcileID: `r${rv}`, triggers: [{ ...informer(key, String(rv), at), generation: 1 }], dryRun: false, at });
      rv++;
      c.onWrite({ type: 'write', controller: 'widget', key, reconcileID: `r${rv - 1}`, at, write: { verb: 'patch', group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets', namespace: 'ns', name: 'meta', ...(subresource ? { subresource } : {}), resourceVersionBefore: String(rv - 1), resourceVersionAfter: String(rv), dryRun: false } });
      c.onReconcileEnd({ type: 'reconcileEnd', controller: 'widget', key, reconcileID: `r${rv - 1}`, durationMs: 2, dryRun: false, at: at + 2 });
      q(key, 'done');
    }
    const [w] = journal.entries({ kinds: ['warning'] });
    assert.ok(w?.kind === 'warning' && w.code === 'hotLoop', JSON.stringify(w));
    return w.message;
  };
  const object = hot(undefined);
  assert.match(object, /the reconciler wrote to the object 9 time\(s\), not to its status: it changes the object's metadata on every pass/, object);
  assert.match(object, /a generation-changed predicate would hide the loop/, object);
  assert.doesNotMatch(object, /status write re-triggers|builder\.WithPredicates/, object);
  const status = hot('status');
  assert.match(status, /Likely cause: the status write re-triggers the watch\..*builder\.WithPredicates\(predicate\.GenerationChangedPredicate\{\}\)/, status);
});

test('a step without a key (the head of the queue): the reconcile it starts is journaled as a step, later ones as a worker\'s', async () => {
  const { c, q, sent, journal } = setup();
  q('ns/a', 'added', { causes: [informer('ns/a', '1', 1)] });
  const stepping = c.step({});
  await flushMicrotasks();
  assert.deepEqual(sent[0]!.cmd, { op: 'step', controller: 'widget' });
  q('ns/a', 'processing');
  c.onReconcileStart({ type: 'reconcileStart', controller: 'widget', key: 'ns/a', reconcileID: 'r1', triggers: [informer('ns/a', '1', 1)], dryRun: false, at: 2 });
  c.onReconcileEnd({ type: 'reconcileEnd', controller: 'widget', key: 'ns/a', reconcileID: 'r1', durationMs: 3, dryRun: false, at: 3 });
  q('ns/a', 'done');
  sent[0]!.reply({ ok: true, reconcile: { controller: 'widget', key: 'ns/a', reconcileID: 'r1', durationMs: 3, dryRun: false, at: 3 } });
  assert.equal((await stepping).kind, 'reconciled');
  // Resumed, a worker's reconcile is not taken for a step.
  q('ns/a', 'added', { causes: [informer('ns/a', '2', 4)] });
  q('ns/a', 'processing');
  c.onReconcileStart({ type: 'reconcileStart', controller: 'widget', key: 'ns/a', reconcileID: 'r2', triggers: [informer('ns/a', '2', 4)], dryRun: false, at: 5 });
  const vias = journal.entries({ kinds: ['reconcileStart'] }).map((e) => (e.kind === 'reconcileStart' ? e.via : ''));
  assert.deepEqual(vias, ['step', 'worker']);
});

test('a key with a namespace queued for a cluster-scoped resource (a mapping function that copied the Secret\'s namespace) is said once, naming the watch; a namespaced resource, a custom request type and keys without one never warn', () => {
  const tenant = { name: 'tenant', group: 'platform.acme.io', version: 'v1', resource: 'tenants', kind: 'Tenant' };
  const secret = (objectKey: string) => ({ kind: 'watch', event: 'update', resource: 'secrets.v1.', objectKey, objectKind: 'Secret', resourceVersion: '7', at: 1 });
  const warnings = (j: Journal) => j.entries({ kinds: ['warning'] }).map((e) => (e.kind === 'warning' ? `${e.code}: ${e.message}` : ''));

  const cluster = setup(tenant);
  cluster.q('acme-blue', 'added', { causes: [secret('platform-creds/blue-db')] });
  cluster.q('platform-creds/acme-blue', 'added', { causes: [secret('platform-creds/blue-db')] });
  assert.deepEqual(warnings(cluster.journal), [], 'the scope is not known yet');
  cluster.c.setResourceNamespaced(false);
  cluster.q('platform-creds/acme-red', 'added', { causes: [secret('platform-creds/red-db')] });
  assert.equal(warnings(cluster.journal).length, 1, warnings(cluster.journal).join('\n'));
  assert.match(
    warnings(cluster.journal)[0]!,
    /^namespacedKeyOfClusterScoped: controller tenant queued platform-creds\/acme-blue, a key with a namespace, but Tenant \(tenants\.platform\.acme\.io\) is cluster-scoped \(queued by the update of Secret platform-creds\/blue-db through a mapped watch\): the reconcile\.Request was built with Namespace "platform-creds"\. controller-runtime queues it apart from acme-blue, [^]*types\.NamespacedName\{Name: "acme-blue"\}/,
  );

  const namespaced = setup();
  namespaced.c.setResourceNamespaced(true);
  namespaced.q('shop/w', 'added', { causes: [secret('shop/db')] });
  assert.deepEqual(warnings(namespaced.journal), []);

  const typed = setup({ ...tenant, requestType: 'main.ClusterRequest' });
  typed.c.setResourceNamespaced(false);
  typed.q('eu-1/acme (Cluster=eu-1)', 'added');
  assert.deepEqual(warnings(typed.journal), []);
});

test('a key whose object was deleted is forgotten once its reconcile succeeded and it went idle; a live object\'s key and a failing gone key stay', () => {
  const { c, q } = setup();
  const del = (objectKey: string, at: number) => ({ kind: 'informer', event: 'delete', resource: 'widgets.v1alpha1.lab.reconcile.dev', objectKey, resourceVersion: '9', at });
  const reconcile = (key: string, id: string, more: Record<string, unknown> = {}) => {
    q(key, 'processing');
    c.onReconcileStart({ type: 'reconcileStart', controller: 'widget', key, reconcileID: id, triggers: [], dryRun: false, at: 5 });
    c.onReconcileEnd({ type: 'reconcileEnd', controller: 'widget', key, reconcileID: id, durationMs: 1, dryRun: false, at: 6, ...more });
    q(key, 'done');
  };
  const removed: string[] = [];
  c.onDidChangeKeyState((s) => {
    if (s.removed) removed.push(s.key);
  });
  // Queued by its add, then its delete, while paused (a robustness check's scratch copy, deleted with its namespace).
  q('rl-check-1/w', 'added', { causes: [{ kind: 'informer', event: 'add', objectKey: 'rl-check-1/w', at: 1 }] });
  q('rl-check-1/w', 'added', { causes: [del('rl-check-1/w', 2)] });
  q('ns/live', 'added', { causes: [informer('ns/live', '3', 3)] });
  q('ns/failing', 'added', { causes: [del('ns/failing', 4)] });
  reconcile('rl-check-1/w', 'r1');
  reconcile('ns/live', 'r2');
  reconcile('ns/failing', 'r3', { error: 'boom' });
  assert.equal(c.keyState('rl-check-1/w'), undefined, 'forgotten');
  assert.deepEqual(removed, ['rl-check-1/w']);
  assert.ok(!c.keyBriefs().some((b) => b.key === 'rl-check-1/w'));
  assert.equal(c.keyState('ns/live')?.phase, 'idle', 'a live object\'s key stays');
  assert.ok(c.keyState('ns/failing'), 'a gone key whose reconcile failed stays (its error is shown)');
  // Handed out once more with no new event (a coalesced add): forgotten again after that reconcile.
  reconcile('rl-check-1/w', 'r4');
  assert.equal(c.keyState('rl-check-1/w'), undefined);
  // Added again (the object is back): its key stays after a reconcile.
  q('rl-check-1/w', 'added', { causes: [{ kind: 'informer', event: 'add', objectKey: 'rl-check-1/w', at: 7 }] });
  reconcile('rl-check-1/w', 'r5');
  assert.equal(c.keyState('rl-check-1/w')?.phase, 'idle');
});

test('an initial-list add keeps its priority in the key state (the views read low priority (-100)); not on the client-go queue', () => {
  const { c, q } = setup();
  q('ns/low', 'added', { priority: -100, causes: [{ kind: 'informer', event: 'add', objectKey: 'ns/low', initial: true, at: 1 }] });
  assert.equal(c.keyState('ns/low')?.priority, -100);
  q('ns/low', 'added', { priority: 0, causes: [informer('ns/low', '7', 2)] });
  assert.equal(c.keyState('ns/low')?.priority, 0, 'a later add at a higher priority raises it, as the queue does');
  const plain = setup({ priorityQueue: false });
  plain.q('ns/a', 'added', { priority: 0, causes: [informer('ns/a', '3', 1)] });
  assert.equal(plain.c.keyState('ns/a')?.priority, undefined, 'the client-go queue has no priorities');
});

test('resync after the initial list: a key the messages already showed queued is not journaled "queued" a second time', async () => {
  const { c, q, sent, journal } = setup();
  q('ns/a', 'added', { priority: -100, causes: [{ kind: 'informer', event: 'add', objectKey: 'ns/a', initial: true, at: 1 }] });
  q('ns/p', 'added', { causes: [informer('ns/p', '4', 1)] });
  q('ns/p', 'processing');
  const done = c.resync();
  await flushMicrotasks();
  sent[0]!.reply({ ok: true, snapshot: { dropped: 0, controllers: [{ name: 'widget', paused: true, keys: [
    { key: 'ns/a', state: 'ready', failures: 0, priority: -100, causes: [] },
    { key: 'ns/b', state: 'ready', failures: 0, priority: -100, causes: [] },
    { key: 'ns/p', state: 'processing', failures: 0, priority: 0, causes: [] },
  ] }] } });
  assert.equal(await done, true);
  const queued = (key: string) => journal.entries().filter((e: JournalEntry) => e.kind === 'queue' && e.key === key && e.transition === 'queued').length;
  assert.equal(queued('ns/a'), 1);
  assert.equal(queued('ns/b'), 1, 'a key only the snapshot names is journaled once');
  assert.equal(queued('ns/p'), 1, 'nor a key it showed processing');
  assert.equal(c.keyState('ns/p')?.phase, 'processing');
  assert.deepEqual(new Set(c.snapshot().queue), new Set(['ns/a', 'ns/b']));
  assert.equal(c.keyState('ns/b')?.priority, -100);
});

test('stop() of a running Go controller pauses its queue (the process ends it) and is journaled as the stop it was asked for, not as a pause', async () => {
  const { c, journal, sent } = setup({ paused: false });
  await c.stop();
  await flushMicrotasks();
  const controls = journal.entries().filter((e) => e.kind === 'control');
  assert.deepEqual(controls.map((e) => e.kind === 'control' && [e.action, e.detail]), [['start', 'Go process 7 (./cmd)'], ['stop', 'queue paused: a Go program stops with its process']]);
  assert.deepEqual(sent.map((s) => s.cmd.op), ['pause']);
  assert.equal(c.status().paused, true);
  await c.stop();
  assert.equal(journal.entries().filter((e) => e.kind === 'control').length, 2, 'a second stop journals nothing');
});
