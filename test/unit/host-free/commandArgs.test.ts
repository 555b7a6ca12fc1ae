import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { boolArg, fail, isConfirmed, keyOf, keyPlaceholder, stringArrayArg, targetOf } from '../../../src/host/commands/args.ts';

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
