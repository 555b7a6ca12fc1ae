// A TerminalError counts wherever it sits in the error's `cause` chain, as controller-runtime finds it with
// errors.Is(err, reconcile.TerminalError(nil)) through any wrapping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isTerminal, TerminalError } from '../../../src/core/controller/reconcile.ts';
import { harness, settle, widget } from './support/harness.ts';

test('isTerminal walks the cause chain; a plain error, or one wrapping a plain error, is not terminal', () => {
  const terminal = new TerminalError('spec is invalid');
  assert.equal(isTerminal(terminal), true);
  assert.equal(isTerminal(new Error('while reconciling ns/a', { cause: terminal })), true);
  assert.equal(isTerminal(new Error('outer', { cause: new Error('middle', { cause: terminal }) })), true, 'two levels down');
  assert.equal(isTerminal(new Error('outer', { cause: new Error('middle') })), false);
  assert.equal(isTerminal(new Error('plain')), false);
  assert.equal(isTerminal(undefined), false);
  // A cyclic chain ends the walk instead of looping.
  const a = new Error('a') as Error & { cause?: unknown };
  a.cause = a;
  assert.equal(isTerminal(a), false);
});

test('isTerminal finds a TerminalError among an AggregateError\'s errors, as errors.Is searches errors.Join', () => {
  const terminal = new TerminalError('spec is invalid');
  assert.equal(isTerminal(new AggregateError([new Error('transient'), terminal], 'two failures')), true);
  assert.equal(isTerminal(new Error('outer', { cause: new AggregateError([new Error('x'), new Error('y', { cause: terminal })]) })), true, 'nested');
  assert.equal(isTerminal(new AggregateError([new Error('x'), new Error('y')])), false);
  const loop = new AggregateError([]) as AggregateError & { errors: unknown[] };
  loop.errors.push(loop);
  assert.equal(isTerminal(loop), false, 'a cycle ends the walk');
});

test('a reconcile error wrapping a TerminalError in its cause is terminal: not requeued, failure count kept', async () => {
  const h = harness();
  let n = 0;
  h.setImpl(() => {
    n++;
    if (n === 1) throw new Error('transient');
    throw new Error('reconcile ns/a failed', { cause: new Error('validating spec', { cause: new TerminalError('spec is invalid') }) });
  });
  h.widgets.add(widget('a'));
  const c = h.builder.for(h.widgets).build(h.reconciler);
  await c.start();
  await settle();
  assert.equal(c.keyState('ns/a')!.requeues, 1, 'the plain error was rate-limited');
  h.clock.step(5);
  await settle();
  const s = c.keyState('ns/a')!;
  assert.equal(s.lastOutcome?.kind, 'terminal');
  assert.equal(s.phase, 'idle');
  assert.equal(s.requeues, 1, 'a terminal error neither forgets nor grows the failure count');
  assert.equal(h.clock.pendingTimers, 0, 'no retry scheduled');
  h.clock.step(3_600_000);
  await settle();
  assert.equal(h.calls.length, 2, 'never retried by itself');
  await c.stop();
});
