import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { boolArg, fail, isConfirmed, keyOf, keyPlaceholder, stringArrayArg, targetOf } from '../../../src/host/commands/args.ts';
import { timelineFocusController, type TimelineFocusContext } from '../../../src/host/commands/timelineCommands.ts';
import { createJournal } from '../../../src/core/journal/journal.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';

describe('command arguments', () => {
  it('reads a target from a tree element or a plain { key, resource }', () => {
    const element = { type: 'object', id: 'o|widgets.lab.reconcile.dev|ns/a', resource: 'widgets.lab.reconcile.dev', key: 'ns/a', depth: 0 };
    assert.deepEqual(targetOf(element), { resource: 'widgets.lab.reconcile.dev', key: 'ns/a' });
    assert.deepEqual(targetOf({ key: 'a', resource: 'clusterthings.x.io', finalizer: 'x.io/f' }), { resource: 'clusterthings.x.io', key: 'a', finalizer: 'x.io/f' });
    assert.equal(targetOf({ key: 'ns/a' }), undefined);
    assert.equal(targetOf({ key: '', resource: 'r' }), undefined);
    assert.equal(targetOf('ns/a'), undefined);
    assert.equal(targetOf(undefined), undefined);
    assert.equal(keyOf({ key: 'ns/a' }), 'ns/a');
  });

  it('bypasses confirmation only for an explicit confirmed: true', () => {
    assert.equal(isConfirmed({ confirmed: true }), true);
    assert.equal(isConfirmed({ confirmed: 'true' }), false);
    assert.equal(isConfirmed({ confirmed: 1 }), false);
    assert.equal(isConfirmed({}), false);
    assert.equal(isConfirmed(undefined), false);
  });

  it('reads typed options and ignores mistyped ones', () => {
    assert.equal(boolArg({ force: true }, 'force'), true);
    assert.equal(boolArg({ force: 'yes' }, 'force'), undefined);
    assert.deepEqual(stringArrayArg({ namespaces: ['a', 'b'] }, 'namespaces'), ['a', 'b']);
    assert.equal(stringArrayArg({ namespaces: ['a', 1] }, 'namespaces'), undefined);
    assert.deepEqual(fail('cancelled', 'no'), { ok: false, reason: 'cancelled', message: 'no' });
  });

  it("suggests typing the kind of key the picker offers: a cluster-scoped object's key is its name alone", () => {
    assert.equal(keyPlaceholder(['ns/a', 'other/b']), 'namespace/name');
    assert.equal(keyPlaceholder(['tenant-a', 'tenant-b']), 'name');
    assert.equal(keyPlaceholder(['ns/a', 'tenant-a']), 'namespace/name, or name for a cluster-scoped object');
  });
});

describe('Show Timeline: whose lane of the key it focuses', () => {
  const PRIMARY = 'widgets.lab.reconcile.dev';
  const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
  const policyEntry = j.append({ kind: 'queue', controller: 'backuppolicy', key: 'g-ops/x', transition: 'queued' });
  const personEntry = j.append({ kind: 'control', action: 'stripFinalizers', controller: 'reconcile-lab', key: 'g-ops/x' });
  const ctx: TimelineFocusContext = { entry: (seq) => j.get(seq), primaryResource: PRIMARY, shownController: 'backup' };

  it('an Event Log entry ({ key, seq }: its detail pane, its row\'s menu) focuses the lane of the entry\'s controller', () => {
    assert.equal(timelineFocusController({ key: 'g-ops/x', seq: policyEntry.seq }, ctx), 'backuppolicy');
    assert.equal(timelineFocusController({ webviewSection: 'row', key: 'g-ops/x', seq: policyEntry.seq, preventDefaultContextMenuItems: true }, ctx), 'backuppolicy');
    assert.equal(timelineFocusController({ key: 'g-ops/x', seq: personEntry.seq }, ctx), undefined, 'a person\'s action is on no controller\'s lane of its own');
    assert.equal(timelineFocusController({ key: 'g-ops/x', seq: 999_999 }, ctx), undefined, 'an entry the journal no longer holds');
  });

  it('a Work Queue row, or a Resources row of the shown controller\'s resource, focuses the shown controller\'s lane', () => {
    assert.equal(timelineFocusController({ type: 'queueKey', id: 'q|g-ops/x', resource: PRIMARY, key: 'g-ops/x' }, ctx), 'backup');
    assert.equal(timelineFocusController({ type: 'object', id: `o|${PRIMARY}|g-ops/x`, resource: PRIMARY, key: 'g-ops/x', depth: 0 }, ctx), 'backup');
    assert.equal(timelineFocusController({ type: 'object', id: 'o|configmaps|g-ops/x', resource: 'configmaps', key: 'g-ops/x', depth: 1 }, ctx), undefined, 'an object of another resource is no key of it');
    assert.equal(timelineFocusController({ type: 'queueKey', id: 'q|g-ops/x', resource: PRIMARY, key: 'g-ops/x' }, { ...ctx, primaryResource: undefined, shownController: undefined }), undefined, 'no controller shown');
  });

  it('a controller named outright wins; a bare key (the Event Log\'s key filter, the palette) names none', () => {
    assert.equal(timelineFocusController({ key: 'g-ops/x', controller: 'backuppolicy', seq: personEntry.seq }, ctx), 'backuppolicy');
    assert.equal(timelineFocusController({ key: 'g-ops/x' }, ctx), undefined);
    assert.equal(timelineFocusController({ key: 'g-ops/x', resource: PRIMARY }, ctx), undefined);
    assert.equal(timelineFocusController(undefined, ctx), undefined);
  });
});
