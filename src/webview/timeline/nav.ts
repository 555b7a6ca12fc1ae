/**
 * Keyboard navigation over the timeline's items: which item (a mark or a span: event, write, action, warning,
 * queue wait, backoff, requeue-after, reconcile) the keyboard cursor moves to. Pure (no DOM, no canvas): main.ts
 * draws the cursor and announces it, test/unit/host-free/webview/timelineNav.test.ts checks the moves.
 *
 * Contracts:
 * - a lane's items are its marks and spans in time order (a span by its start), ties in journal (seq) order, so
 *   Left/Right step through the lane as it reads from left to right;
 * - Left/Right stop at the lane's first/last item (no wrap); Home/End go to them;
 * - Up/Down go to the previous/next lane (of the lanes shown: the key filter applies) and to its item nearest in
 *   time to the current one (the earlier one on a tie); a lane without items is skipped over;
 * - with no cursor (or one whose lane or item is gone: filtered out, dropped with old history), any move starts on
 *   the lane `startLane` (a lane's id) if shown, else the first lane with items: on its first item for Home, else on its newest one
 *   (where a following view is);
 * - no item anywhere: undefined.
 */
import type { Lane, MarkKind, SpanKind } from './model.ts';

/** One item the keyboard cursor can rest on. */
export interface NavItem {
  readonly seq: number;
  /** A mark's time, a span's start (epoch ms). */
  readonly time: number;
  /** A span's end (undefined for a mark and an open span). */
  readonly end?: number;
  readonly kind: MarkKind | SpanKind;
  /** What its tooltip says. */
  readonly label: string;
}

/** Where the keyboard cursor is: a lane (its {@link Lane.id}: one key of one controller) and an item's seq. */
export interface NavCursor {
  readonly lane: string;
  readonly seq: number;
}

export type NavMove = 'previous' | 'next' | 'first' | 'last' | 'laneUp' | 'laneDown';

/** The lane's items in time order (see the module contracts). */
export function laneItems(lane: Lane): NavItem[] {
  const out: NavItem[] = [];
  for (const m of lane.marks) out.push({ seq: m.seq, time: m.time, kind: m.kind, label: m.label });
  for (const s of lane.spans) out.push({ seq: s.seq, time: s.start, ...(s.end !== undefined ? { end: s.end } : {}), kind: s.kind, label: s.label });
  out.sort((a, b) => a.time - b.time || a.seq - b.seq);
  return out;
}

/** The index of the item nearest in time to `t` (the earlier on a tie); -1 for none. */
function nearest(items: readonly NavItem[], t: number): number {
  let best = -1;
  for (let i = 0; i < items.length; i++) {
    if (best < 0 || Math.abs(items[i]!.time - t) < Math.abs(items[best]!.time - t)) best = i;
  }
  return best;
}

/** The cursor and item after `move` from `cursor` over `lanes` (the lanes shown, in order); see the module contracts. */
export function moveCursor(lanes: readonly Lane[], cursor: NavCursor | undefined, move: NavMove, startLane?: string): { cursor: NavCursor; item: NavItem } | undefined {
  const at = (laneIdx: number, items: readonly NavItem[], i: number) => ({ cursor: { lane: lanes[laneIdx]!.id, seq: items[i]!.seq }, item: items[i]! });
  const laneIdx = cursor ? lanes.findIndex((l) => l.id === cursor.lane) : -1;
  const items = laneIdx >= 0 ? laneItems(lanes[laneIdx]!) : [];
  const i = cursor ? items.findIndex((x) => x.seq === cursor.seq) : -1;
  if (laneIdx < 0 || i < 0) {
    // No cursor yet (or its lane or item is gone): the start lane's first item for Home, else its newest.
    const order = lanes.map((_, k) => k);
    const s = startLane === undefined ? -1 : lanes.findIndex((l) => l.id === startLane);
    if (s >= 0) order.unshift(s);
    for (const k of order) {
      const its = laneItems(lanes[k]!);
      if (its.length > 0) return at(k, its, move === 'first' ? 0 : its.length - 1);
    }
    return undefined;
  }
  switch (move) {
    case 'previous':
      return at(laneIdx, items, Math.max(0, i - 1));
    case 'next':
      return at(laneIdx, items, Math.min(items.length - 1, i + 1));
    case 'first':
      return at(laneIdx, items, 0);
    case 'last':
      return at(laneIdx, items, items.length - 1);
    case 'laneUp':
    case 'laneDown': {
      const step = move === 'laneUp' ? -1 : 1;
      for (let k = laneIdx + step; k >= 0 && k < lanes.length; k += step) {
        const its = laneItems(lanes[k]!);
        const j = nearest(its, items[i]!.time);
        if (j >= 0) return at(k, its, j);
      }
      return at(laneIdx, items, i);
    }
  }
}
