import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { JOURNAL_ENTRY_KINDS } from '../../../src/core/journal/journal.ts';
import { emptyJournalText, entryKindLabel, entryKindTitle, ENTRY_KINDS, NOT_CONNECTED, orderEntryKinds, parseWebviewMessage } from '../../../src/shared/protocol.ts';

describe('parseWebviewMessage', () => {
  it('accepts the four well-formed messages and drops unknown fields', () => {
    assert.deepEqual(parseWebviewMessage({ type: 'ready', version: 1, extra: 'x' }), { type: 'ready', version: 1 });
    assert.deepEqual(parseWebviewMessage({ type: 'reveal', key: 'ns/a', resource: 'widgets.lab.reconcile.dev' }), { type: 'reveal', key: 'ns/a', resource: 'widgets.lab.reconcile.dev' });
    assert.deepEqual(parseWebviewMessage({ type: 'reveal', key: 'ns/a' }), { type: 'reveal', key: 'ns/a' });
    assert.deepEqual(parseWebviewMessage({ type: 'clear' }), { type: 'clear' });
    assert.deepEqual(parseWebviewMessage({ type: 'export', filter: { key: 'ns', kinds: ['write'], text: 'x', evil: 1 } }), { type: 'export', filter: { key: 'ns', kinds: ['write'], text: 'x' } });
  });

  const bad: unknown[] = [
    null, 'ready', [], { type: 'nope' }, { type: 'ready' }, { type: 'ready', version: '1' },
    { type: 'reveal' }, { type: 'reveal', key: '' }, { type: 'reveal', key: 7 }, { type: 'reveal', key: 'a', resource: {} },
    { type: 'reveal', key: 'x'.repeat(600) }, { type: 'export' }, { type: 'export', filter: { kinds: 'write' } },
    { type: 'export', filter: { kinds: [1] } }, { type: 'export', filter: { key: 3 } },
  ];
  for (const m of bad) it(`rejects ${JSON.stringify(m)?.slice(0, 60)}`, () => assert.equal(parseWebviewMessage(m), undefined));
});

test('emptyJournalText: an empty Event Log or Timeline says how to connect, what fills it, or that the filter hides all', () => {
  assert.match(emptyJournalText(NOT_CONNECTED, 0, false), /^Not connected: run "Connect to Cluster…" or "Start Local Control Plane"/);
  assert.match(emptyJournalText(NOT_CONNECTED, 0, true), /^Not connected/);
  assert.equal(emptyJournalText('Connected to kind-dev (https://127.0.0.1:6443)', 0, false), 'No entries yet: step or resume the loop, or change an object.');
  assert.equal(emptyJournalText('Connected to kind-dev (https://127.0.0.1:6443)', 12, true), 'No entry matches the filter.');
  assert.equal(emptyJournalText(NOT_CONNECTED, 12, true), 'No entry matches the filter.', 'entries kept from the last connection, all filtered out');
});

describe('entry kind labels (what the Event Log shows for a journal entry kind)', () => {
  it('names every kind the journal produces in words, each label its own', () => {
    assert.equal(entryKindLabel('reconcileStart'), 'Reconcile started');
    assert.equal(entryKindLabel('reconcileEnd'), 'Reconcile finished');
    assert.equal(entryKindLabel('control'), 'Action');
    const labels = JOURNAL_ENTRY_KINDS.map(entryKindLabel);
    for (const [i, kind] of JOURNAL_ENTRY_KINDS.entries()) {
      assert.notEqual(labels[i], kind, `${kind} has a label of its own`);
      // Words a person reads: capitalised, no camelCase code name.
      assert.match(labels[i]!, /^[A-Z][A-Za-z ]+$/, kind);
      assert.doesNotMatch(labels[i]!, /[a-z][A-Z]/, `${kind}: ${labels[i]} is no code name`);
    }
    assert.equal(new Set(labels).size, labels.length, `labels tell the kinds apart: ${JSON.stringify(labels)}`);
    assert.deepEqual([...ENTRY_KINDS.keys()].sort(), [...JOURNAL_ENTRY_KINDS].sort(), 'no label for a kind the journal does not have');
  });

  it('reads an unknown kind (a newer journal\'s) as its internal name', () => {
    assert.equal(entryKindLabel('rebalance'), 'rebalance');
    // Names an object has from its prototype are not labels.
    for (const k of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) assert.equal(entryKindLabel(k), k);
  });

  it('the tooltip names the internal kind, as Export… and the CLI\'s --json lines write it', () => {
    assert.match(entryKindTitle('control'), /^Action: .*\n"kind": "control" in Export… and the CLI's --json lines$/s);
    assert.equal(entryKindTitle('rebalance'), '"kind": "rebalance" in Export… and the CLI\'s --json lines');
  });

  it('orders a kind filter along a change\'s path through the controller, unknown kinds last by name', () => {
    assert.deepEqual(orderEntryKinds(['write', 'zeta', 'control', 'informer', 'alpha', 'reconcileEnd', 'write', 'reconcileStart']),
      ['informer', 'reconcileStart', 'reconcileEnd', 'write', 'control', 'alpha', 'zeta']);
    assert.deepEqual(orderEntryKinds(JOURNAL_ENTRY_KINDS), ['informer', 'queue', 'reconcileStart', 'reconcileEnd', 'write', 'warning', 'control']);
  });
});
