import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TimelineEntryView } from '../../../../src/shared/protocol.ts';
import { TimelineModel } from '../../../../src/webview/timeline/model.ts';
import { laneItems, moveCursor, type NavCursor, type NavMove } from '../../../../src/webview/timeline/nav.ts';

/**
 * Three lanes: ns/a (an event at 100, a reconcile 200–250 that wrote at 210, a warning at 900), ns/b (an event at
 * 220, a running reconcile from 600), ns/c (an event at 800).
 */
function model(): TimelineModel {
  let seq = 0;
  const e = (key: string, time: number, type: TimelineEntryView['type'], label: string, extra: Partial<TimelineEntryView> = {}): TimelineEntryView => ({ seq: ++seq, time, key, type, label, ...extra });
  const m = new TimelineModel();
  m.add([
    e('ns/a', 100, 'event', 'a: updated'),
    e('ns/a', 200, 'reconcileStart', 'a: reconcile'),
    e('ns/a', 210, 'write', 'a: update configmaps a-config'),
    e('ns/b', 220, 'event', 'b: added'),
    e('ns/a', 250, 'reconcileEnd', 'ok', { outcome: 'success' }),
    e('ns/b', 600, 'reconcileStart', 'b: reconcile'),
    e('ns/c', 800, 'event', 'c: added'),
    e('ns/a', 900, 'warning', 'a: slow'),
  ]);
  return m;
}

/** The id of `key`'s lane (of no controller here), or a made-up one when it has none. */
const idOf = (m: TimelineModel, key: string): string => m.lanes.find((l) => l.key === key)?.id ?? `gone:${key}`;

/** The labels visited by `moves` from no cursor (starting on `startKey`'s lane), each after its lane's key. */
function walk(m: TimelineModel, moves: NavMove[], startKey?: string, lanes = m.lanes): string[] {
  let cursor: NavCursor | undefined;
  const out: string[] = [];
  for (const mv of moves) {
    const r = moveCursor(lanes, cursor, mv, startKey === undefined ? undefined : idOf(m, startKey));
    assert.ok(r, `a move ${mv}`);
    cursor = r.cursor;
    assert.equal(r.item.seq, r.cursor.seq);
    out.push(`${m.lanes.find((l) => l.id === r.cursor.lane)!.key} ${r.item.label}`);
  }
  return out;
}

describe('timeline keyboard navigation', () => {
  it("a lane's items are its marks and spans in time order, with what their tooltips say", () => {
    const a = model().lanes.find((l) => l.key === 'ns/a')!;
    assert.deepEqual(laneItems(a).map((x) => [x.kind, x.time, x.label]), [
      ['event', 100, 'a: updated'],
      ['reconcile', 200, 'a: reconcile → ok'],
      ['write', 210, 'a: update configmaps a-config'],
      ['warning', 900, 'a: slow'],
    ]);
    assert.equal(laneItems(a)[1]!.end, 250);
  });

  it('Left/Right step through a lane and stop at its ends; Home/End go to its first/last item', () => {
    const m = model();
    assert.deepEqual(walk(m, ['next', 'previous', 'previous', 'previous', 'previous', 'first', 'next', 'last', 'next']), [
      'ns/a a: slow', // no cursor: the first lane's newest item
      'ns/a a: update configmaps a-config',
      'ns/a a: reconcile → ok',
      'ns/a a: updated',
      'ns/a a: updated', // stays on the first
      'ns/a a: updated',
      'ns/a a: reconcile → ok',
      'ns/a a: slow',
      'ns/a a: slow', // stays on the last
    ]);
  });

  it('Up/Down go to the neighbouring lane, to its item nearest in time; they stop at the first/last lane', () => {
    const m = model();
    assert.deepEqual(walk(m, ['last', 'next', 'laneDown', 'laneDown', 'laneDown', 'laneUp', 'next', 'laneUp']), [
      'ns/a a: slow',
      'ns/a a: slow',
      'ns/b b: reconcile', // 900 → b's nearest is the running reconcile at 600
      'ns/c c: added',
      'ns/c c: added', // no lane below
      'ns/b b: reconcile',
      'ns/b b: reconcile', // the last of b
      'ns/a a: slow', // 600 → a's nearest is the warning at 900 (300 away; the write at 210 is 390 away)
    ]);
    assert.deepEqual(walk(m, ['first', 'next', 'laneDown']), ['ns/a a: updated', 'ns/a a: reconcile → ok', 'ns/b b: added']); // Home first: the first item
  });

  it('starts on the given lane when shown; a lane the filter hides is not visited; a cursor whose lane is gone restarts', () => {
    const m = model();
    assert.deepEqual(walk(m, ['previous'], 'ns/c'), ['ns/c c: added']);
    assert.deepEqual(walk(m, ['previous'], 'ns/gone'), ['ns/a a: slow']);
    const shown = m.lanes.filter((l) => l.key !== 'ns/b');
    assert.deepEqual(walk(m, ['last', 'laneDown'], undefined, shown), ['ns/a a: slow', 'ns/c c: added']);
    const r = moveCursor(shown, { lane: idOf(m, 'ns/b'), seq: 4 }, 'next');
    assert.equal(r?.cursor.lane, idOf(m, 'ns/a'), 'restarts on the first lane shown');
    assert.equal(moveCursor([], undefined, 'next'), undefined);
  });
});
