import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../fakes/fakeClock.ts';
import { createJournal } from '../../../../src/core/journal/journal.ts';
import { SCRATCH_COPY_FILTER } from '../../../../src/core/checks/scratch.ts';
import { toTimeline } from '../../../../src/host/webview/timelineView.ts';
import { filterKeepsFocus, fitMiddle, isFocusLane, type Lane, TimelineModel } from '../../../../src/webview/timeline/model.ts';
import { moveCursor } from '../../../../src/webview/timeline/nav.ts';
import { fit, follow, labeledTicks, MAX_MS_PER_PX, MIN_MS_PER_PX, pan, tickLabel, ticks, timeToX, xToTime, zoomAt } from '../../../../src/webview/timeline/viewport.ts';

const PRIMARY = 'widgets.lab.reconcile.dev';
const CM = { group: '', version: 'v1', resource: 'configmaps' };

/** A journal under a fake clock: event → queued 5 ms → reconcile 20 ms (error) → backoff 10 ms → reconcile 8 ms (ok, 1 write). */
function journal() {
  const clock = new FakeClock();
  const t0 = clock.now();
  const j = createJournal({ clock, delivery: 'sync' });
  j.append({ kind: 'informer', controller: 'c', key: 'ns/a', resource: 'widgets.v1.lab.reconcile.dev', role: 'primary', event: 'update', objectKey: 'ns/a', enqueued: ['ns/a'] });
  j.append({ kind: 'queue', controller: 'c', key: 'ns/a', transition: 'queued' });
  clock.step(5);
  j.append({ kind: 'queue', controller: 'c', key: 'ns/a', transition: 'processing' });
  j.append({ kind: 'reconcileStart', controller: 'c', key: 'ns/a', triggers: [], attempt: 1, via: 'worker' });
  clock.step(20);
  j.append({ kind: 'reconcileEnd', controller: 'c', key: 'ns/a', outcome: { kind: 'error', message: 'boom' }, durationMs: 20 });
  j.append({ kind: 'queue', controller: 'c', key: 'ns/a', transition: 'waiting', dueAt: clock.now() + 10, waitKind: 'backoff' });
  clock.step(10);
  j.append({ kind: 'queue', controller: 'c', key: 'ns/a', transition: 'ready' });
  j.append({ kind: 'queue', controller: 'c', key: 'ns/a', transition: 'processing' });
  j.append({ kind: 'reconcileStart', controller: 'c', key: 'ns/a', triggers: [], attempt: 2, via: 'worker' });
  clock.step(3);
  j.recordWrite({ verb: 'update', gvr: CM, namespace: 'ns', name: 'a-config', dryRun: false, controller: 'c', key: 'ns/a' });
  clock.step(5);
  j.append({ kind: 'reconcileEnd', controller: 'c', key: 'ns/a', outcome: { kind: 'success' }, durationMs: 8 });
  j.append({ kind: 'control', controller: 'c', key: 'ns/b', action: 'resetBackoff' });
  j.append({ kind: 'control', controller: 'c', action: 'pause' }); // no key: no lane
  clock.step(2);
  j.append({ kind: 'reconcileStart', controller: 'c', key: 'ns/b', triggers: [], attempt: 1, via: 'step' });
  return { j, t0, clock };
}

describe('timeline model from journal entries', () => {
  it('builds one lane per key (sorted) with queue waits, backoff intervals, reconciles by outcome and marks', () => {
    const { j, t0 } = journal();
    const m = new TimelineModel();
    m.add(toTimeline(j.entries(), PRIMARY));
    assert.deepEqual(m.lanes.map((l) => l.key), ['ns/a', 'ns/b']);
    const a = m.lanes[0]!;
    const spans = a.spans.map((s) => ({ kind: s.kind, from: s.start - t0, to: s.end === undefined ? undefined : s.end - t0, outcome: s.outcome }));
    assert.deepEqual(spans, [
      { kind: 'queue', from: 0, to: 5, outcome: undefined },
      { kind: 'reconcile', from: 5, to: 25, outcome: 'error' },
      { kind: 'backoff', from: 25, to: 35, outcome: undefined },
      { kind: 'queue', from: 35, to: 35, outcome: undefined },
      { kind: 'reconcile', from: 35, to: 43, outcome: 'success' },
    ]);
    assert.deepEqual(a.marks.map((x) => [x.kind, x.time - t0]), [['event', 0], ['write', 38]]);
    const b = m.lanes[1]!;
    assert.deepEqual(b.marks.map((x) => x.kind), ['action']);
    assert.ok(b.openReconcile && b.openReconcile.end === undefined, 'a running reconcile stays open');
    assert.equal(m.size, 5 + 2 + 2);
    assert.deepEqual(m.range, { from: t0, to: t0 + 45 });
  });

  it('a robustness check\'s scratch copy gets no lane: its events, dropped by the loop\'s filter, are not the loop\'s keys; another filtered event of an own object stays on its lane', () => {
    const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
    j.append({ kind: 'informer', controller: 'c', resource: 'widgets.v1.lab.reconcile.dev', role: 'primary', event: 'add', objectKey: 'rl-check-1a2b/orders-db', enqueued: [], filteredBy: SCRATCH_COPY_FILTER });
    j.append({ kind: 'informer', controller: 'c', resource: 'widgets.v1.lab.reconcile.dev', role: 'primary', event: 'update', objectKey: 'shop/orders-db', enqueued: [], filteredBy: 'generation-changed' });
    const m = new TimelineModel();
    m.add(toTimeline(j.entries(), PRIMARY));
    assert.deepEqual(m.lanes.map((l) => l.key), ['shop/orders-db']);
  });

  it('a controller that stops (Stop Controller, its program exited) ends its keys\' queue waits, backoffs and running reconciles; other controllers\' keys stay open', () => {
    const clock = new FakeClock();
    const t0 = clock.now();
    const j = createJournal({ clock, delivery: 'sync' });
    j.append({ kind: 'queue', controller: 'gadget', key: 'ns/queued', transition: 'queued' });
    j.append({ kind: 'queue', controller: 'gadget', key: 'ns/waits', transition: 'waiting', dueAt: t0 + 60_000, waitKind: 'requeueAfter' });
    j.append({ kind: 'queue', controller: 'gadget', key: 'ns/runs', transition: 'processing' });
    j.append({ kind: 'reconcileStart', controller: 'gadget', key: 'ns/runs', triggers: [], attempt: 1, via: 'worker' });
    j.append({ kind: 'queue', controller: 'deployment', key: 'ns/web', transition: 'queued' });
    clock.step(1_000);
    j.append({ kind: 'queue', controller: 'gadget', transition: 'shutdown' });
    clock.step(1_000);
    j.append({ kind: 'control', action: 'stop', controller: 'deployment', detail: 'Go process 7 disconnected' });
    j.append({ kind: 'queue', controller: 'gadget', key: 'ns/queued', transition: 'queued' }); // a new run of the program
    const m = new TimelineModel();
    m.add(toTimeline(j.entries(), PRIMARY));
    const lane = (k: string) => m.lanes.find((l) => l.key === k)!;
    assert.deepEqual(m.lanes.map((l) => l.key), ['ns/queued', 'ns/runs', 'ns/waits', 'ns/web'], 'a stop has no lane');
    assert.deepEqual(lane('ns/queued').spans.map((s) => [s.kind, s.start - t0, s.end === undefined ? undefined : s.end - t0]), [['queue', 0, 1_000], ['queue', 2_000, undefined]]);
    assert.deepEqual(lane('ns/waits').spans.map((s) => [s.kind, s.end! - t0]), [['requeueAfter', 1_000]], 'the requeue-after never came');
    assert.deepEqual(lane('ns/runs').spans.map((s) => [s.kind, s.end! - t0]), [['reconcile', 1_000]]);
    assert.equal(lane('ns/runs').openReconcile, undefined);
    assert.deepEqual(lane('ns/web').spans.map((s) => [s.kind, s.end! - t0]), [['queue', 2_000]], 'ended by its own controller\'s stop, not the other\'s');
  });

  it('two controllers with the same key (a Backup and a BackupPolicy both g-ops/x) get a lane each, labelled with its controller', () => {
    const clock = new FakeClock();
    const t0 = clock.now();
    const j = createJournal({ clock, delivery: 'sync' });
    j.append({ kind: 'queue', controller: 'backup', key: 'g-ops/x', transition: 'queued' });
    j.append({ kind: 'queue', controller: 'backuppolicy', key: 'g-ops/x', transition: 'queued' });
    clock.step(10);
    j.append({ kind: 'reconcileStart', controller: 'backup', key: 'g-ops/x', triggers: [], attempt: 1, via: 'worker' });
    clock.step(5);
    j.append({ kind: 'reconcileStart', controller: 'backuppolicy', key: 'g-ops/x', triggers: [], attempt: 1, via: 'worker' });
    j.recordWrite({ verb: 'update', gvr: CM, namespace: 'g-ops', name: 'x-policy', dryRun: false, controller: 'backuppolicy', key: 'g-ops/x' });
    clock.step(5);
    j.append({ kind: 'reconcileEnd', controller: 'backup', key: 'g-ops/x', outcome: { kind: 'error', message: 'boom' }, durationMs: 10 });
    // A person's action names no controller: it goes on the key's lane a controller's entry last went to.
    j.append({ kind: 'control', action: 'stripFinalizers', controller: 'reconcile-lab', key: 'g-ops/x' });
    clock.step(5);
    j.append({ kind: 'queue', controller: 'backuppolicy', transition: 'shutdown' });
    j.append({ kind: 'queue', controller: 'backup', key: 'g-ops/y', transition: 'queued' });
    const m = new TimelineModel();
    m.add(toTimeline(j.entries(), PRIMARY));
    assert.deepEqual(m.lanes.map((l) => m.label(l)), ['[backup] g-ops/x', '[backuppolicy] g-ops/x', '[backup] g-ops/y']);
    assert.equal(new Set(m.lanes.map((l) => l.id)).size, 3, 'each lane has its own id');
    const [backup, policy] = m.lanes as [Lane, Lane, Lane];
    assert.deepEqual([backup.controller, policy.controller], ['backup', 'backuppolicy']);
    assert.deepEqual(backup.spans.map((s) => [s.kind, s.start - t0, s.end! - t0, s.outcome]), [['queue', 0, 10, undefined], ['reconcile', 10, 20, 'error']], 'its own reconcile, not interleaved with the other\'s');
    assert.deepEqual(policy.spans.map((s) => [s.kind, s.start - t0, s.end! - t0, s.outcome]), [['queue', 0, 15, undefined], ['reconcile', 15, 25, undefined]], 'running until its controller stopped');
    assert.deepEqual(policy.marks.map((x) => x.kind), ['write'], 'its own write');
    assert.deepEqual(backup.marks.map((x) => x.kind), ['action'], 'the action taken after its reconcile ended, the key\'s last controller entry');
    // Keyboard navigation moves between the two lanes of the key.
    const first = moveCursor(m.lanes, undefined, 'first', backup.id)!;
    assert.equal(first.cursor.lane, backup.id);
    assert.equal(moveCursor(m.lanes, first.cursor, 'laneDown')!.cursor.lane, policy.id);
  });

  it('Show Timeline on a key of one controller focuses that controller\'s lane of the key, not another controller\'s lane of the same key', () => {
    const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
    j.append({ kind: 'queue', controller: 'backup', key: 'g-ops/x', transition: 'queued' });
    j.append({ kind: 'queue', controller: 'backuppolicy', key: 'g-ops/x', transition: 'queued' });
    j.append({ kind: 'queue', controller: 'backup', key: 'g-ops/y', transition: 'queued' });
    const m = new TimelineModel();
    m.add(toTimeline(j.entries(), PRIMARY));
    const focused = (f: { key: string; controller?: string }) => m.lanes.filter((l) => isFocusLane(l, f)).map((l) => m.label(l));
    assert.deepEqual(focused({ key: 'g-ops/x', controller: 'backuppolicy' }), ['[backuppolicy] g-ops/x']);
    assert.deepEqual(focused({ key: 'g-ops/x', controller: 'backup' }), ['[backup] g-ops/x']);
    assert.deepEqual(focused({ key: 'g-ops/x' }), ['[backup] g-ops/x', '[backuppolicy] g-ops/x'], 'no controller given: every lane of the key, as before');
    assert.deepEqual(focused({ key: 'g-ops/y', controller: 'backuppolicy' }), [], 'that controller has no lane of the key (yet): none, not the other controller\'s');
    // The keyboard cursor starts on the focused lane (the first focused lane is what main.ts hands moveCursor).
    const start = m.lanes.find((l) => isFocusLane(l, { key: 'g-ops/x', controller: 'backuppolicy' }))!;
    assert.equal(moveCursor(m.lanes, undefined, 'first', start.id)!.cursor.lane, start.id);
    // A lane made later, of the key and controller focused, is focused too.
    j.append({ kind: 'queue', controller: 'backuppolicy', key: 'g-ops/y', transition: 'queued' });
    m.clear();
    m.add(toTimeline(j.entries(), PRIMARY));
    assert.deepEqual(focused({ key: 'g-ops/y', controller: 'backuppolicy' }), ['[backuppolicy] g-ops/y']);
    // A key with only a person's action so far has a lane of no controller (the controller's first entry adopts it): focused.
    j.append({ kind: 'control', action: 'delete', controller: 'reconcile-lab', key: 'g-ops/z' });
    m.clear();
    m.add(toTimeline(j.entries(), PRIMARY));
    assert.deepEqual(focused({ key: 'g-ops/z', controller: 'backup' }), ['g-ops/z']);
  });

  it('a key filter stays when it shows the focused controller\'s lane, and goes when it hides it (the box never gets a lane label)', () => {
    const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
    j.append({ kind: 'queue', controller: 'backup', key: 'g-ops/x', transition: 'queued' });
    j.append({ kind: 'queue', controller: 'backuppolicy', key: 'g-ops/x', transition: 'queued' });
    const m = new TimelineModel();
    m.add(toTimeline(j.entries(), PRIMARY));
    const shown = (filter: string) => m.lanes.filter((l) => m.label(l).includes(filter));
    const policy = { key: 'g-ops/x', controller: 'backuppolicy' };
    const backup = { key: 'g-ops/x', controller: 'backup' };
    assert.equal(filterKeepsFocus('', policy, shown('')), true);
    assert.equal(filterKeepsFocus('g-ops', policy, shown('g-ops')), true, 'the key contains it: its lane shows');
    assert.equal(filterKeepsFocus('[backup]', backup, shown('[backup]')), true, 'it names the focused lane\'s controller');
    assert.equal(filterKeepsFocus('[backup]', policy, shown('[backup]')), false, 'it shows only the other controller\'s lane of the key');
    assert.equal(filterKeepsFocus('[backup]', { key: 'g-ops/x' }, shown('[backup]')), true, 'no controller given: a lane of the key shows, as before');
    assert.equal(filterKeepsFocus('ns/other', { key: 'g-ops/x' }, shown('ns/other')), false);
  });

  it('with one controller, lane labels are the keys (a person\'s action before the controller\'s first entry shares its lane)', () => {
    const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
    j.append({ kind: 'control', action: 'delete', controller: 'reconcile-lab', key: 'ns/a' });
    j.append({ kind: 'queue', controller: 'lab', key: 'ns/a', transition: 'queued' });
    j.append({ kind: 'queue', controller: 'lab', key: 'ns/b', transition: 'queued' });
    const m = new TimelineModel();
    m.add(toTimeline(j.entries(), PRIMARY));
    assert.deepEqual(m.lanes.map((l) => m.label(l)), ['ns/a', 'ns/b']);
    assert.deepEqual(m.lanes.map((l) => [l.controller, l.marks.length, l.spans.length]), [['lab', 1, 1], ['lab', 0, 1]]);
    // One controller: focusing its key with or without the controller is the same lane.
    assert.deepEqual(m.lanes.filter((l) => isFocusLane(l, { key: 'ns/a', controller: 'lab' })), m.lanes.filter((l) => isFocusLane(l, { key: 'ns/a' })));
    assert.equal(m.lanes.filter((l) => isFocusLane(l, { key: 'ns/a' })).length, 1);
  });

  it('a backoff that ends early (an event ran the key) is cut at that moment', () => {
    const m = new TimelineModel();
    m.add([
      { seq: 1, time: 100, key: 'k', type: 'waiting', dueAt: 1100, wait: 'backoff', label: 'waiting' },
      { seq: 2, time: 300, key: 'k', type: 'waitEnd', label: 'cancelled' },
    ]);
    assert.equal(m.lanes[0]!.spans[0]!.end, 300);
    assert.equal(m.lanes[0]!.spans[0]!.endSeq, 2);
  });

  it('finds the items of a time window by binary search and hit-tests marks before spans', () => {
    const { j, t0, clock } = journal();
    const m = new TimelineModel();
    m.add(toTimeline(j.entries(), PRIMARY));
    const a = m.lanes[0]!;
    const r = m.spansIn(a, t0 + 30, t0 + 40);
    const inWindow = a.spans.slice(r.from, r.to).filter((s) => (s.end ?? Infinity) >= t0 + 30);
    assert.deepEqual(inWindow.map((s) => s.kind), ['backoff', 'queue', 'reconcile']);
    const mk = m.marksIn(a, t0 + 30, t0 + 40);
    assert.deepEqual(a.marks.slice(mk.from, mk.to).map((x) => x.kind), ['write']);
    const write = j.entries().find((e) => e.kind === 'write')!;
    assert.equal(m.hitTest(a, t0 + 37, 2, clock.now())?.seq, write.seq, 'a mark near the pointer wins over the reconcile under it');
    const hit = m.hitTest(a, t0 + 15, 1, clock.now());
    assert.equal(hit?.kind, 'reconcile');
    assert.equal(hit?.seq, j.entries().find((e) => e.kind === 'reconcileStart')!.seq, 'a span opens its start entry');
    assert.equal(m.hitTest(a, t0 + 1000, 1, clock.now()), undefined);
    const b = m.lanes[1]!;
    assert.equal(m.hitTest(b, clock.now() + 50, 1, clock.now() + 100)?.kind, 'reconcile', 'an open reconcile reaches up to now');
  });

  it('stays within its capacity by dropping the oldest items, keeping open spans', () => {
    const m = new TimelineModel(400);
    m.add([{ seq: 1, time: 0, key: 'k', type: 'reconcileStart', label: 'start' }]);
    const entries = [];
    for (let i = 0; i < 1000; i++) entries.push({ seq: i + 2, time: i + 1, key: `k${i % 7}`, type: 'event' as const, label: 'e' });
    m.add(entries);
    assert.ok(m.size <= 400, `size ${m.size}`);
    assert.ok(m.lanes.find((l) => l.key === 'k')?.openReconcile, 'the open reconcile survives the trim');
    assert.ok(m.lanes.every((l) => l.marks.every((x) => x.time >= m.range!.from)));
  });

  it('says from when its history is complete once older entries were dropped (by the journal or by its own trim)', () => {
    const ev = (i: number) => ({ seq: i, time: 1000 + i, key: `k${i % 5}`, type: 'event' as const, label: 'e' });
    const m = new TimelineModel(400);
    m.clear();
    m.add([ev(1), ev(2)]);
    assert.equal(m.incompleteBefore, undefined, 'the whole journal: nothing dropped');
    m.clear(true); // the snapshot of a journal whose ring buffer dropped older entries
    assert.equal(m.incompleteBefore, undefined, 'empty: nothing to date');
    m.add([ev(50), ev(51)]);
    assert.equal(m.incompleteBefore, 1050);
    m.clear();
    m.add(Array.from({ length: 1000 }, (_, i) => ev(i + 1)));
    assert.ok(m.incompleteBefore !== undefined && m.incompleteBefore > 1001, `the trim dropped the oldest: complete from ${m.incompleteBefore}`);
    assert.equal(m.incompleteBefore, m.range!.from);
  });
});

describe('timeline zoom and pan', () => {
  const vp = { start: 1000, msPerPx: 10 };

  it('converts between time and x', () => {
    assert.equal(timeToX(vp, 1500), 50);
    assert.equal(xToTime(vp, 50), 1500);
  });

  it('zooms around the anchor: the instant under it stays put', () => {
    const z = zoomAt(vp, 2, 200);
    assert.equal(z.msPerPx, 5);
    assert.equal(xToTime(z, 200), xToTime(vp, 200));
    const out = zoomAt(z, 0.5, 50);
    assert.equal(out.msPerPx, 10);
    assert.equal(xToTime(out, 50), xToTime(z, 50));
    assert.equal(zoomAt(vp, 1e12, 0).msPerPx, MIN_MS_PER_PX, 'clamped in');
    assert.equal(zoomAt(vp, 1e-12, 0).msPerPx, MAX_MS_PER_PX, 'clamped out');
    assert.deepEqual(zoomAt(vp, Number.NaN, 0), vp);
  });

  it('pans by pixels, follows live and fits a range', () => {
    assert.equal(pan(vp, 30).start, 700, 'dragging right shows earlier times');
    const f = follow(vp, 100_000, 1000, 20);
    assert.equal(timeToX(f, 100_000), 980, 'now sits at the right edge minus the margin');
    const fitted = fit(5000, 15_000, 1040, 20);
    assert.equal(timeToX(fitted, 5000), 20);
    assert.equal(timeToX(fitted, 15_000), 1020);
  });

  it('chooses a tick step at least minPx apart, on multiples of the step', () => {
    const t = ticks({ start: 12_345, msPerPx: 10 }, 1000, 90);
    assert.equal(t.step, 1000);
    assert.deepEqual(t.times.slice(0, 2), [13_000, 14_000]);
    assert.ok(t.times.every((x) => x % 1000 === 0 && timeToX({ start: 12_345, msPerPx: 10 }, x) <= 1000));
  });
});

describe('labeledTicks (axis labels)', () => {
  it('puts sub-second ticks far enough apart for "12:20:37.400" labels not to overlap; wide steps keep minPx', () => {
    const charPx = 8; // a 13–14 px monospace editor font
    const width = (step: number) => tickLabel(1_733_310_037_400, step).length * charPx;
    const vp = { start: 1_733_310_037_400, msPerPx: 2.2 }; // 1.3 s across a 600 px plot (the screenshot's)
    const plain = ticks(vp, 600);
    assert.ok(timeToX(vp, plain.times[1]!) - timeToX(vp, plain.times[0]!) < width(plain.step), 'plain ticks are closer than their labels are wide');
    const tk = labeledTicks(vp, 600, width);
    for (let i = 1; i < tk.times.length; i++) assert.ok(timeToX(vp, tk.times[i]!) - timeToX(vp, tk.times[i - 1]!) >= width(tk.step) + 16, `ticks ${i - 1} and ${i} leave room for a label`);
    const wide = { start: 0, msPerPx: 1000 };
    assert.deepEqual(labeledTicks(wide, 1000, width), ticks(wide, 1000), 'an hh:mm label fits in 90 px');
  });
});

describe('fitMiddle (lane labels)', () => {
  const len = (s: string) => s.length;
  it('keeps a label that fits, and cuts a long one in the middle: the namespace\'s start and the name\'s end stay', () => {
    assert.equal(fitMiddle('team-a/inky', 20, len), 'team-a/inky');
    const key = 'team-alpha-3f0e/a-very-long-octopus-name-that-goes-on-xxxxxxxx-end';
    const cut = fitMiddle(key, 24, len);
    assert.equal(cut.length, 24);
    assert.ok(cut.startsWith('team-al'), cut);
    assert.ok(cut.endsWith('xxxx-end'), cut);
    assert.equal(cut.split('…').length, 2);
    assert.equal(fitMiddle('team-alpha-3f0e/blinky', 16, len), 'team-…f0e/blinky');
  });
  it('degrades to "…" when nothing else fits', () => {
    assert.equal(fitMiddle('abcdef', 1, len), '…');
    assert.equal(fitMiddle('abcdef', 0, len), '…');
  });
});
