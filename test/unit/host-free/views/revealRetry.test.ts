import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../fakes/fakeClock.ts';
import { revealUntilSelected, type RevealTarget } from '../../../../src/host/views/revealRetry.ts';

/** A tree view whose renderer drops the first `drops` reveals (no selection, no error), as VS Code's does. */
function view(drops: number, rows: Array<string | undefined> = ['row']) {
  let selected: string | undefined;
  const listeners = new Set<() => void>();
  const calls = { resolve: 0, reveal: 0 };
  const target: RevealTarget<string> = {
    resolve: () => rows[Math.min(calls.resolve++, rows.length - 1)],
    reveal: async (node) => {
      calls.reveal++;
      if (calls.reveal <= drops) return;
      queueMicrotask(() => {
        selected = node; // the selection reaches the extension host after the reveal resolved
        for (const l of [...listeners]) l();
      });
    },
    isSelected: (node) => selected === node,
    onDidChangeSelection: (l) => {
      listeners.add(l);
      return { dispose: () => listeners.delete(l) };
    },
  };
  return { target, calls, listenerCount: () => listeners.size };
}

const settle = () => new Promise<void>((r) => setImmediate(r));

describe('revealUntilSelected', () => {
  it('reveals once when the renderer selects the row', async () => {
    const clock = new FakeClock();
    const v = view(0);
    const r = await revealUntilSelected(v.target, clock, { attempts: 3, confirmMs: 1500 });
    assert.deepEqual(r, { node: 'row', selected: true });
    assert.equal(v.calls.reveal, 1);
    assert.equal(clock.pendingTimers, 0);
    assert.equal(v.listenerCount(), 0);
  });

  it('reveals again when the first reveal selected nothing within confirmMs', async () => {
    const clock = new FakeClock();
    const v = view(1);
    const p = revealUntilSelected(v.target, clock, { attempts: 3, confirmMs: 1500 });
    await settle();
    assert.equal(v.calls.reveal, 1);
    clock.step(1499);
    await settle();
    assert.equal(v.calls.reveal, 1, 'not before confirmMs');
    clock.step(1);
    const r = await p;
    assert.deepEqual(r, { node: 'row', selected: true });
    assert.equal(v.calls.reveal, 2);
    assert.equal(v.calls.resolve, 2, 'the row is resolved again (the tree may have been rebuilt)');
    assert.equal(clock.pendingTimers, 0);
    assert.equal(v.listenerCount(), 0);
  });

  it('stops after `attempts` reveals and says the selection was not seen', async () => {
    const clock = new FakeClock();
    const v = view(99);
    const p = revealUntilSelected(v.target, clock, { attempts: 3, confirmMs: 1500 });
    for (let i = 0; i < 3; i++) {
      await settle();
      clock.step(1500);
    }
    assert.deepEqual(await p, { node: 'row', selected: false });
    assert.equal(v.calls.reveal, 3);
    assert.equal(clock.pendingTimers, 0);
    assert.equal(v.listenerCount(), 0);
  });

  it('is undefined when the row is not there, first or on a later attempt (the object went away)', async () => {
    const clock = new FakeClock();
    assert.equal(await revealUntilSelected(view(0, [undefined]).target, clock, { attempts: 3, confirmMs: 1500 }), undefined);
    const v = view(1, ['row', undefined]);
    const p = revealUntilSelected(v.target, clock, { attempts: 3, confirmMs: 1500 });
    await settle();
    clock.step(1500);
    assert.equal(await p, undefined);
    assert.equal(v.calls.reveal, 1);
  });
});
