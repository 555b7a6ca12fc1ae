import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LogBuffer } from '../../../../src/webview/eventLog/logBuffer.ts';
import type { LogEntryView } from '../../../../src/shared/protocol.ts';

let seq = 0;
const entry = (over: Partial<LogEntryView> = {}): LogEntryView => ({
  seq: ++seq,
  time: 1_700_000_000_000 + seq,
  kind: 'event',
  level: 'info',
  key: 'default/a',
  resource: 'widgets.lab.reconcile.dev',
  summary: `entry ${seq}`,
  ...over,
});

describe('LogBuffer', () => {
  it('keeps at most capacity entries, dropping the oldest', () => {
    const b = new LogBuffer(100);
    const all = Array.from({ length: 1000 }, () => entry());
    for (let i = 0; i < all.length; i += 7) b.append(all.slice(i, i + 7));
    assert.equal(b.total, 100);
    assert.equal(b.visibleCount, 100);
    assert.equal(b.visibleAt(0)!.seq, all[900]!.seq);
    assert.equal(b.visibleAt(99)!.seq, all[999]!.seq);
  });

  it('counts the older entries that are gone: the snapshot\'s own, then those pushed out by capacity, 0 after clear', () => {
    const b = new LogBuffer(100);
    b.reset(Array.from({ length: 60 }, () => entry()));
    assert.equal(b.dropped, 0, 'a log with room lost nothing');
    b.append(Array.from({ length: 40 }, () => entry()));
    assert.equal(b.dropped, 0, 'exactly full: still nothing lost');
    b.append(Array.from({ length: 25 }, () => entry()));
    assert.equal(b.dropped, 25);
    assert.equal(b.total, 100);
    b.reset(Array.from({ length: 100 }, () => entry()), 5_000);
    assert.equal(b.dropped, 5_000, 'what the host\'s journal had already dropped');
    b.append([entry(), entry()]);
    assert.equal(b.dropped, 5_002);
    b.setFilter({ key: 'nothing-matches' });
    assert.equal(b.dropped, 5_002, 'a filter hides entries, it does not drop them');
    b.clear();
    assert.equal(b.dropped, 0);
  });

  it('filters by key substring, kind and case-insensitive text, and recomputes on filter change', () => {
    const b = new LogBuffer(1000);
    b.append([
      entry({ key: 'ns1/a', kind: 'event', summary: 'ADDED' }),
      entry({ key: 'ns2/b', kind: 'reconcile', summary: 'Reconciled in 4 ms' }),
      entry({ key: 'ns1/c', kind: 'error', summary: 'Conflict', detail: 'the object has been MODIFIED' }),
    ]);
    b.setFilter({ key: 'ns1/' });
    assert.deepEqual(b.visibleEntries().map((e) => e.key), ['ns1/a', 'ns1/c']);
    b.setFilter({ kinds: ['reconcile'] });
    assert.deepEqual(b.visibleEntries().map((e) => e.key), ['ns2/b']);
    b.setFilter({ text: '  modified ' });
    assert.deepEqual(b.visibleEntries().map((e) => e.key), ['ns1/c']);
    b.setFilter({});
    assert.equal(b.visibleCount, 3);
  });

  it('append reports how many new entries match, and the visible list stays bounded and ordered after trimming', () => {
    const b = new LogBuffer(50);
    b.setFilter({ kinds: ['error'] });
    let matched = 0;
    for (let i = 0; i < 500; i++) matched += b.append([entry({ kind: i % 5 === 0 ? 'error' : 'event' })]);
    assert.equal(matched, 100);
    // the newest 50 entries hold 10 errors
    assert.ok(b.visibleCount <= 50);
    const seqs = b.visibleEntries().map((e) => e.seq);
    assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y));
    b.setFilter({ kinds: ['error'] }); // exact recompute
    assert.equal(b.visibleCount, 10);
  });

  it('reset replaces the content, clear empties it, setCapacity shrinks at once', () => {
    const b = new LogBuffer(10);
    b.reset(Array.from({ length: 25 }, () => entry()));
    assert.equal(b.total, 10);
    b.setCapacity(4);
    assert.equal(b.total, 4);
    assert.equal(b.visibleCount, 4);
    b.clear();
    assert.equal(b.total, 0);
    assert.equal(b.visibleAt(0), undefined);
  });

  it('lists the distinct kinds it holds', () => {
    const b = new LogBuffer(10);
    b.append([entry({ kind: 'event' }), entry({ kind: 'error' }), entry({ kind: 'event' })]);
    assert.deepEqual(b.kinds(), ['error', 'event']);
  });

  it('absorbs 100,000 entries in batches of 50 (100 s at 1,000 entries/s) and reports the time taken', (t) => {
    const b = new LogBuffer(10_000);
    b.setFilter({ text: 'entry' });
    const batch = Array.from({ length: 50 }, () => entry());
    const t0 = performance.now();
    for (let i = 0; i < 2000; i++) b.append(batch.map((e, j) => ({ ...e, seq: i * 50 + j })));
    const ms = performance.now() - t0;
    assert.equal(b.total, 10_000);
    assert.equal(b.visibleCount, 10_000);
    assert.equal(b.visibleAt(9_999)!.seq, 99_999);
    // A measurement, not an assertion: timing depends on the machine.
    t.diagnostic(`100,000 appends with a text filter: ${ms.toFixed(1)} ms`);
  });
});
