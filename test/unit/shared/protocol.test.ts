import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyJournalText, NOT_CONNECTED, parseWebviewMessage } from '../../../src/shared/protocol.ts';

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
