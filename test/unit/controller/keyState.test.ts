import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyStateTable, type KeyState } from '../../../src/core/controller/keyState.ts';

function table(now = { t: 1000 }, requeues = new Map<string, number>()) {
  return new KeyStateTable({ now: () => now.t, numRequeues: (k) => requeues.get(k) ?? 0, maxReasons: 4 });
}

test('phases follow the queue transitions: queued → processing (dirty again) → queued → processing → idle', () => {
  const t = table();
  const seen: KeyState[] = [];
  t.onDidChange((s) => seen.push(s));
  t.onQueueEvent({ type: 'add', item: 'k', queued: true });
  t.onQueueEvent({ type: 'get', item: 'k' });
  t.onQueueEvent({ type: 'add', item: 'k', queued: false });
  assert.equal(t.get('k')!.phase, 'processing');
  assert.equal(t.get('k')!.dirtyWhileProcessing, true);
  t.onQueueEvent({ type: 'done', item: 'k', requeued: true });
  assert.equal(t.get('k')!.phase, 'queued');
  assert.equal(t.get('k')!.dirtyWhileProcessing, false);
  t.onQueueEvent({ type: 'get', item: 'k' });
  t.onQueueEvent({ type: 'done', item: 'k', requeued: false });
  assert.deepEqual(seen.map((s) => s.phase), ['queued', 'processing', 'processing', 'queued', 'processing', 'idle']);
  assert.ok(Object.isFrozen(seen[0]));
});

test('an expected backoff wait becomes the backoff phase, then a backoff reason when ready', () => {
  const now = { t: 1000 };
  const requeues = new Map([['k', 2]]);
  const t = table(now, requeues);
  t.expectWait('k', { kind: 'backoff', attempt: 2, error: 'boom' });
  t.onQueueEvent({ type: 'wait', item: 'k', readyAt: 1010 });
  let s = t.get('k')!;
  assert.equal(s.phase, 'backoff');
  assert.deepEqual(s.waiting, { kind: 'backoff', dueAt: 1010 });
  assert.equal(s.requeues, 2);
  now.t = 1010;
  t.onQueueEvent({ type: 'ready', item: 'k' });
  t.onQueueEvent({ type: 'add', item: 'k', queued: true });
  s = t.get('k')!;
  assert.equal(s.phase, 'queued');
  assert.deepEqual(s.reasons, [{ kind: 'backoff', attempt: 2, delayMs: 10, error: 'boom', at: 1010 }]);
  // an unexpected wait (someone else's addAfter) is a requeue-after; cancelling it makes the key idle
  t.onQueueEvent({ type: 'get', item: 'k' });
  t.onQueueEvent({ type: 'done', item: 'k', requeued: false });
  t.onQueueEvent({ type: 'wait', item: 'k', readyAt: 2000 });
  assert.equal(t.get('k')!.phase, 'requeueAfter');
  t.onQueueEvent({ type: 'cancelWait', item: 'k' });
  assert.equal(t.get('k')!.phase, 'idle');
});

test('a zero-delay retry added directly still records its reason', () => {
  const t = table();
  t.onQueueEvent({ type: 'add', item: 'k', queued: true });
  t.onQueueEvent({ type: 'get', item: 'k' });
  t.begin('k', 1000);
  t.expectWait('k', { kind: 'backoff', attempt: 1 });
  t.onQueueEvent({ type: 'add', item: 'k', queued: false });
  assert.deepEqual(t.get('k')!.reasons.map((r) => r.kind), ['backoff']);
});

test('begin moves reasons to lastTriggers; end records outcome, error and duration; reasons are bounded', () => {
  const t = table();
  for (let i = 0; i < 6; i++) t.addReason('k', { kind: 'manual', action: 'enqueue', note: `n${i}`, at: i });
  assert.equal(t.get('k')!.reasons.length, 4);
  assert.equal(t.get('k')!.droppedReasons, 2);
  const triggers = t.begin('k', 1000);
  assert.equal(triggers.length, 4);
  assert.deepEqual(t.get('k')!.reasons, []);
  assert.equal(t.get('k')!.reconciles, 1);
  t.end('k', { kind: 'error', message: 'nope', retryAt: 1005 }, 7, 1007);
  const s = t.get('k')!;
  assert.equal(s.lastError, 'nope');
  assert.equal(s.lastErrorAt, 1007);
  assert.equal(s.lastDurationMs, 7);
  assert.equal(s.lastStartedAt, 1000);
  t.end('k', { kind: 'success' }, 1, 1010);
  assert.equal(t.get('k')!.lastError, 'nope', 'kept after a success');
});

test('delete forgets only idle keys and publishes a final removed state; resetQueueState idles every key', () => {
  const t = table();
  const removed: string[] = [];
  t.onDidChange((s) => { if (s.removed) removed.push(s.key); });
  t.onQueueEvent({ type: 'add', item: 'busy', queued: true });
  t.onQueueEvent({ type: 'add', item: 'quiet', queued: true });
  t.onQueueEvent({ type: 'get', item: 'quiet' });
  t.onQueueEvent({ type: 'done', item: 'quiet', requeued: false });
  assert.equal(t.delete('busy'), false);
  assert.equal(t.delete('quiet'), true);
  assert.equal(t.delete('unknown'), false);
  assert.deepEqual(removed, ['quiet']);
  t.resetQueueState();
  assert.equal(t.get('busy')!.phase, 'idle');
  assert.deepEqual(t.all().map((s) => s.key), ['busy']);
});

test('briefs agree with the full states: phase, wait due time, failed, warned (for every key, unordered)', () => {
  const t = table();
  t.onQueueEvent({ type: 'add', item: 'q', queued: true });
  t.onQueueEvent({ type: 'add', item: 'p', queued: true });
  t.onQueueEvent({ type: 'get', item: 'p' });
  t.expectWait('b', { kind: 'backoff', attempt: 1 });
  t.onQueueEvent({ type: 'wait', item: 'b', readyAt: 5000 });
  t.end('e', { kind: 'error', message: 'boom' }, 3, 1000);
  t.end('s', { kind: 'success' }, 3, 1000);
  t.setWarning('s', 'hot loop');
  const briefs = new Map(t.briefs().map((b) => [b.key, b]));
  assert.equal(briefs.size, t.all().length);
  for (const s of t.all()) {
    const b = briefs.get(s.key)!;
    assert.equal(b.phase, s.phase, s.key);
    assert.equal(b.dueAt, s.waiting?.dueAt, s.key);
    assert.equal(b.failed, s.lastOutcome?.kind === 'error' || s.lastOutcome?.kind === 'terminal', s.key);
    assert.equal(b.warned, s.warning !== undefined, s.key);
  }
  assert.deepEqual(
    [...briefs.values()].map((b) => `${b.key}:${b.phase}${b.dueAt ? `@${b.dueAt}` : ''}${b.failed ? ':failed' : ''}${b.warned ? ':warned' : ''}`).sort(),
    ['b:backoff@5000', 'e:idle:failed', 'p:processing', 'q:queued', 's:idle:warned'],
  );
});

test('counts() and listedBriefs() follow every transition (the same as counting all briefs)', () => {
  const now = { t: 1000 };
  const t = table(now);
  const check = (what: string) => {
    const c = { queued: 0, processing: 0, backoff: 0, requeueAfter: 0 };
    for (const b of t.briefs()) if (b.phase !== 'idle') c[b.phase]++;
    assert.deepEqual(t.counts(), c, `counts after ${what}`);
    const listed = t.briefs().filter((b) => b.phase !== 'idle' || b.failed || b.warned).map((b) => b.key).sort();
    assert.deepEqual(t.listedBriefs().map((b) => b.key).sort(), listed, `listed after ${what}`);
    const unqueued = t.briefs().filter((b) => b.phase !== 'queued' && (b.phase !== 'idle' || b.failed || b.warned)).map((b) => b.key).sort();
    assert.deepEqual(t.listedBriefs(true).map((b) => b.key).sort(), unqueued, `listed without queued after ${what}`);
  };
  check('nothing');
  t.onQueueEvent({ type: 'add', item: 'a', queued: true });
  t.onQueueEvent({ type: 'add', item: 'b', queued: true });
  t.addReason('c', { kind: 'manual', action: 'enqueue', at: 1 }, false);
  check('adds');
  assert.deepEqual(t.counts(), { queued: 2, processing: 0, backoff: 0, requeueAfter: 0 });
  t.onQueueEvent({ type: 'get', item: 'a' });
  t.begin('a', 1);
  check('get');
  t.end('a', { kind: 'error', message: 'boom' }, 1, 2);
  t.expectWait('a', { kind: 'backoff', attempt: 1, error: 'boom' });
  t.onQueueEvent({ type: 'wait', item: 'a', readyAt: 2000 });
  t.onQueueEvent({ type: 'done', item: 'a', requeued: false });
  check('error and backoff');
  assert.deepEqual(t.counts(), { queued: 1, processing: 0, backoff: 1, requeueAfter: 0 });
  t.onQueueEvent({ type: 'cancelWait', item: 'a' });
  check('cancelWait: idle but failed, still listed');
  assert.deepEqual(t.listedBriefs().map((b) => b.key).sort(), ['a', 'b']);
  t.onQueueEvent({ type: 'get', item: 'b' });
  t.onQueueEvent({ type: 'done', item: 'b', requeued: false });
  check('b done: idle, not listed');
  assert.deepEqual(t.listedBriefs().map((b) => b.key), ['a']);
  t.setWarning('b', 'hot loop');
  check('warning');
  t.setWarning('b', undefined);
  assert.equal(t.delete('b'), true);
  check('delete');
  t.onQueueEvent({ type: 'add', item: 'd', queued: true });
  t.expectWait('e', { kind: 'requeueAfter', afterMs: 5 });
  t.onQueueEvent({ type: 'wait', item: 'e', readyAt: 1005 });
  check('requeueAfter');
  assert.deepEqual(t.counts(), { queued: 1, processing: 0, backoff: 0, requeueAfter: 1 });
  t.resetQueueState();
  check('reset');
  assert.deepEqual(t.counts(), { queued: 0, processing: 0, backoff: 0, requeueAfter: 0 });
});

test('onDidChangeKey fires the key at every moment onDidChange fires a state (removal included)', () => {
  const t = table();
  const states: string[] = [];
  const keys: string[] = [];
  t.onDidChange((s) => states.push(s.key));
  t.onDidChangeKey((k) => keys.push(k));
  t.onQueueEvent({ type: 'add', item: 'a', queued: true });
  t.addReason('b', { kind: 'manual', action: 'enqueue', at: 1 }, false);
  t.publishPending('b');
  t.onQueueEvent({ type: 'get', item: 'a' });
  t.begin('a', 1);
  t.end('a', { kind: 'success' }, 1, 2);
  t.onQueueEvent({ type: 'done', item: 'a', requeued: false });
  t.setWarning('a', 'w');
  t.setWarning('a', undefined);
  t.touch('a');
  assert.equal(t.delete('a'), true);
  assert.deepEqual(keys, states);
  assert.deepEqual(keys, ['a', 'b', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a']);
});
