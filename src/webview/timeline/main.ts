/**
 * The Timeline webview: one lane per key of each controller over time, drawn on a canvas (a lane's label names its
 * controller while lanes of several controllers are shown: model.ts).
 *
 * Rules this file keeps: it talks to the host only through
 * `src/shared/protocol.ts`; nothing from the cluster becomes markup (lanes and
 * labels are drawn on the canvas, the tooltip and status lines are set with
 * textContent); only the lanes in the viewport are drawn and, in each, only
 * the items in the visible time window (binary search on the lane's ordered
 * items), so 10,000 entries pan at the display's frame rate. Colours are the
 * theme's (CSS variables read at render time, re-read when the theme changes).
 */
import { emptyJournalText, PROTOCOL_VERSION, type TimelineHostToWebview, type TimelineWebviewToHost } from '../../shared/protocol.ts';
import { filterKeepsFocus, fitMiddle, isFocusLane, type Lane, type LaneFocus, type Mark, type Span, TimelineModel } from './model.ts';
import { layoutSpans, MIN_RECONCILE_PX, reconcileBarShape, type SpanTone } from './layout.ts';
import { laneItems, moveCursor, type NavCursor, type NavItem, type NavMove } from './nav.ts';
import { fit, follow, labeledTicks, pan, tickLabel, timeToX, wheelZoomFactor, xToTime, zoomAt, type Viewport } from './viewport.ts';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

interface TimelineViewState {
  readonly filter: string;
  readonly follow: boolean;
  readonly msPerPx?: number;
}

const AXIS_H = 24;
const LANE_H = 24;
const LABEL_W = 190;
const vscode = acquireVsCodeApi();
const post = (m: TimelineWebviewToHost): void => vscode.postMessage(m);

const el = <T extends HTMLElement>(id: string): T => {
  const e = document.getElementById(id);
  if (!e) throw new Error(`timeline: missing #${id}`);
  return e as T;
};
const stage = el<HTMLElement>('stage');
const canvas = el<HTMLCanvasElement>('canvas');
const tooltip = el<HTMLElement>('tooltip');
const keyInput = el<HTMLInputElement>('filter-key');
const followBox = el<HTMLInputElement>('follow');
const statusLine = el<HTMLElement>('status');
const connectionLine = el<HTMLElement>('connection');
const legend = el<HTMLElement>('legend');
const emptyLine = el<HTMLElement>('empty');
const emptyText = el<HTMLElement>('empty-text');
const clearFilterButton = el<HTMLButtonElement>('clear-filter');
const announcer = el<HTMLElement>('announce');
const ctx = canvas.getContext('2d', { alpha: false })!;

const saved = vscode.getState() as Partial<TimelineViewState> | undefined;
let viewState: TimelineViewState = { filter: saved?.filter ?? '', follow: saved?.follow ?? true, ...(saved?.msPerPx ? { msPerPx: saved.msPerPx } : {}) };
const model = new TimelineModel();
let vp: Viewport = { start: Date.now() - 60_000, msPerPx: viewState.msPerPx ?? 100 };
/** Host clock minus ours, so "now" is the host's (open spans end there, follow keeps it at the right edge). */
let hostOffset = 0;
let scrollY = 0;
/**
 * What the host focused (Show Timeline on a key): the key's lane of the controller given, else its lanes (one per
 * controller) are highlighted (model.ts isFocusLane).
 */
let hostFocus: LaneFocus | undefined;
/** The lane (its id) a click on its label or the keyboard cursor focused: it alone is highlighted. */
let focusLane: string | undefined;
/** Whether `lane` is highlighted: the focused lane, else the host focus's lanes. */
const isFocused = (lane: Lane): boolean => (focusLane !== undefined ? lane.id === focusLane : hostFocus !== undefined && isFocusLane(lane, hostFocus));
let selectedSeq: number | undefined;
let lanes: readonly Lane[] = [];
/** The keyboard cursor (nav.ts): the item arrows moved to, drawn with a focus ring while the stage has focus. */
let cursor: { readonly at: NavCursor; readonly item: NavItem } | undefined;
let lanesDirty = true;

const now = (): number => Date.now() + hostOffset;

// ---- colours -----------------------------------------------------------------------------------------------------

interface Palette {
  bg: string; fg: string; muted: string; grid: string; laneAlt: string; focus: string; selected: string;
  success: string; error: string; terminal: string; requeue: string; cancelled: string; running: string;
  queue: string; backoff: string; waitRequeue: string; event: string; write: string; action: string; warning: string;
  font: string;
}
let palette: Palette;

function readPalette(): Palette {
  const cs = getComputedStyle(document.body);
  const v = (name: string, fallback: string) => cs.getPropertyValue(name).trim() || fallback;
  return {
    bg: v('--vscode-editor-background', '#1e1e1e'),
    fg: v('--vscode-foreground', '#cccccc'),
    muted: v('--vscode-descriptionForeground', '#999999'),
    grid: v('--vscode-editorIndentGuide-background1', v('--vscode-panel-border', '#444444')),
    laneAlt: v('--vscode-list-hoverBackground', 'rgba(128,128,128,0.08)'),
    focus: v('--vscode-list-inactiveSelectionBackground', 'rgba(128,128,255,0.2)'),
    selected: v('--vscode-focusBorder', '#007fd4'),
    success: v('--vscode-charts-green', '#89d185'),
    error: v('--vscode-charts-red', '#f14c4c'),
    terminal: v('--vscode-errorForeground', '#f48771'),
    requeue: v('--vscode-charts-blue', '#3794ff'),
    cancelled: v('--vscode-disabledForeground', '#888888'),
    running: v('--vscode-charts-yellow', '#cca700'),
    // Not the running reconcile's yellow: a key waiting in the queue and a key being reconciled read apart.
    queue: v('--vscode-charts-lines', 'rgba(128,128,128,0.7)'),
    backoff: v('--vscode-charts-orange', '#d18616'),
    waitRequeue: v('--vscode-charts-blue', '#3794ff'),
    event: v('--vscode-charts-purple', '#b180d7'),
    write: v('--vscode-charts-foreground', v('--vscode-foreground', '#cccccc')),
    action: v('--vscode-charts-yellow', '#cca700'),
    warning: v('--vscode-editorWarning-foreground', '#cca700'),
    font: `${v('--vscode-editor-font-size', '12px')} ${v('--vscode-editor-font-family', 'monospace')}`,
  };
}
palette = readPalette();
new MutationObserver(() => {
  palette = readPalette();
  scheduleRender();
}).observe(document.body, { attributes: true, attributeFilter: ['class', 'style'] });

function toneColour(t: SpanTone): string {
  switch (t) {
    case 'running':
      return palette.running;
    case 'ok':
      return palette.success;
    case 'error':
      return palette.error;
    case 'terminal':
      return palette.terminal;
    case 'requeue':
      return palette.requeue;
    case 'cancelled':
      return palette.cancelled;
    case 'queue':
      return palette.queue;
    case 'backoff':
      return palette.backoff;
    case 'requeueAfter':
      return palette.waitRequeue;
  }
}

// ---- lanes -------------------------------------------------------------------------------------------------------

function visibleLanes(): readonly Lane[] {
  if (lanesDirty) {
    const f = viewState.filter.trim();
    // The filter matches the label (the key, and the controller when labels name it).
    lanes = f ? model.lanes.filter((l) => model.label(l).includes(f)) : model.lanes;
    lanesDirty = false;
  }
  return lanes;
}

function plotWidth(): number {
  return Math.max(1, stage.clientWidth - LABEL_W);
}

function maxScroll(): number {
  return Math.max(0, visibleLanes().length * LANE_H - (stage.clientHeight - AXIS_H));
}

/** Scrolls the first shown lane that `is` into view; false when none is shown. */
function scrollToLane(is: (l: Lane) => boolean): boolean {
  const i = visibleLanes().findIndex(is);
  if (i < 0) return false;
  const h = stage.clientHeight - AXIS_H;
  const top = i * LANE_H;
  if (top < scrollY || top + LANE_H > scrollY + h) scrollY = Math.min(maxScroll(), Math.max(0, top - h / 2));
  return true;
}

// ---- rendering ---------------------------------------------------------------------------------------------------

let frame = 0;
function scheduleRender(): void {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    render();
  });
}

function drawMark(m: Mark, x: number, yMid: number): void {
  const isSel = m.seq === selectedSeq;
  switch (m.kind) {
    case 'event':
      ctx.fillStyle = palette.event;
      ctx.fillRect(x - 1, yMid - 8, 2, 16);
      break;
    case 'write': {
      ctx.beginPath();
      ctx.moveTo(x, yMid - 6);
      ctx.lineTo(x + 5, yMid);
      ctx.lineTo(x, yMid + 6);
      ctx.lineTo(x - 5, yMid);
      ctx.closePath();
      const c = m.error ? palette.error : palette.write;
      if (m.dryRun) {
        ctx.strokeStyle = c;
        ctx.lineWidth = 1.5;
        ctx.stroke();
      } else {
        ctx.fillStyle = c;
        ctx.fill();
      }
      break;
    }
    case 'action':
      ctx.beginPath();
      ctx.arc(x, yMid, 4.5, 0, Math.PI * 2);
      ctx.fillStyle = palette.action;
      ctx.fill();
      break;
    case 'warning':
      ctx.beginPath();
      ctx.moveTo(x, yMid - 6);
      ctx.lineTo(x + 6, yMid + 5);
      ctx.lineTo(x - 6, yMid + 5);
      ctx.closePath();
      ctx.fillStyle = palette.warning;
      ctx.fill();
      break;
  }
  if (isSel) {
    ctx.strokeStyle = palette.selected;
    ctx.lineWidth = 2;
    ctx.strokeRect(x - 7, yMid - 9, 14, 18);
  }
}

function drawLane(lane: Lane, y: number, x0: number, width: number, t0: number, t1: number, tNow: number): void {
  // Spans: queue and delayed waits as thin bars at the bottom, reconciles as bars in the middle, each at least a few
  // pixels wide and failures on top (layout.ts).
  const r = model.spansIn(lane, t0, t1);
  const spans: Span[] = lane.spans.slice(r.from, r.to);
  if (lane.openQueue && lane.openQueue.start < t0 - lane.maxSpanMs) spans.push(lane.openQueue);
  if (lane.openReconcile && lane.openReconcile.start < t0 - lane.maxSpanMs) spans.push(lane.openReconcile);
  for (const box of layoutSpans(spans, vp, width, tNow)) {
    const a = x0 + box.x;
    if (box.span.kind === 'reconcile') {
      // Not by colour alone: a failed reconcile is a taller bar, a running one a pale bar with an outline.
      const shape = reconcileBarShape(box.tone, LANE_H);
      ctx.fillStyle = toneColour(box.tone);
      if (shape.style === 'pale') {
        ctx.globalAlpha = 0.4;
        ctx.fillRect(a, y + shape.dy, box.w, shape.h);
        ctx.globalAlpha = 1;
        ctx.strokeStyle = ctx.fillStyle;
        ctx.lineWidth = 1;
        ctx.strokeRect(a + 0.5, y + shape.dy + 0.5, Math.max(1, box.w - 1), shape.h - 1);
      } else {
        ctx.fillRect(a, y + shape.dy, box.w, shape.h);
      }
    } else {
      ctx.fillStyle = toneColour(box.tone);
      ctx.globalAlpha = 0.55;
      ctx.fillRect(a, y + LANE_H - 6, box.w, 4);
      ctx.globalAlpha = 1;
    }
    if (box.span.seq === selectedSeq) {
      ctx.strokeStyle = palette.selected;
      ctx.lineWidth = 2;
      ctx.strokeRect(a, y + 3, box.w, LANE_H - 6);
    }
  }
  // Marks on top, one per pixel column and kind.
  const m = model.marksIn(lane, t0, t1);
  const yMid = y + LANE_H / 2 - 1;
  let lastMx = -Infinity;
  let lastMKind = '';
  for (let i = m.from; i < m.to; i++) {
    const mark = lane.marks[i]!;
    const x = Math.round(x0 + timeToX(vp, mark.time));
    if (x === lastMx && mark.kind === lastMKind && mark.seq !== selectedSeq) continue;
    lastMx = x;
    lastMKind = mark.kind;
    drawMark(mark, x, yMid);
  }
}

/**
 * The keyboard cursor's focus ring (dashed, in the theme's focusBorder; the selection's ring is solid), drawn while
 * the stage has keyboard focus and the cursor's lane is in view.
 */
function drawCursor(all: readonly Lane[], first: number, last: number, tNow: number): void {
  if (!cursor || document.activeElement !== stage) return;
  const i = all.findIndex((l) => l.id === cursor!.at.lane);
  if (i < first || i >= last) return;
  const y = AXIS_H + i * LANE_H - scrollY;
  const item = cursor.item;
  let a = timeToX(vp, item.time);
  let w = 0;
  if (!isMarkKind(item.kind)) {
    // A span open when the cursor reached it may have ended since: its end is read from the lane.
    const span = item.end !== undefined ? undefined : all[i]!.spans.findLast((s) => s.seq === item.seq);
    const end = item.end ?? span?.end ?? tNow;
    w = Math.max(MIN_RECONCILE_PX, timeToX(vp, end) - a);
  }
  a = LABEL_W + a;
  ctx.save();
  ctx.strokeStyle = palette.selected;
  ctx.lineWidth = 1.5;
  ctx.setLineDash([3, 2]);
  ctx.strokeRect(Math.round(a) - 9.5, y + 1.5, Math.round(w) + 19, LANE_H - 3);
  ctx.restore();
}

const isMarkKind = (k: NavItem['kind']): boolean => k === 'event' || k === 'write' || k === 'action' || k === 'warning';

let renderCount = 0;

function render(): void {
  renderCount++;
  const dpr = window.devicePixelRatio || 1;
  const cw = stage.clientWidth;
  const ch = stage.clientHeight;
  if (canvas.width !== Math.round(cw * dpr) || canvas.height !== Math.round(ch * dpr)) {
    canvas.width = Math.round(cw * dpr);
    canvas.height = Math.round(ch * dpr);
    canvas.style.width = `${cw}px`;
    canvas.style.height = `${ch}px`;
  }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const width = plotWidth();
  const tNow = now();
  if (viewState.follow) vp = follow(vp, tNow, width);
  scrollY = Math.min(scrollY, maxScroll());
  ctx.fillStyle = palette.bg;
  ctx.fillRect(0, 0, cw, ch);
  ctx.font = palette.font;
  ctx.textBaseline = 'middle';

  const t0 = vp.start;
  const t1 = xToTime(vp, width);
  const all = visibleLanes();
  const first = Math.floor(scrollY / LANE_H);
  const last = Math.min(all.length, Math.ceil((scrollY + ch - AXIS_H) / LANE_H));

  // Lane backgrounds.
  for (let i = first; i < last; i++) {
    const y = AXIS_H + i * LANE_H - scrollY;
    const lane = all[i]!;
    if (isFocused(lane)) {
      ctx.fillStyle = palette.focus;
      ctx.fillRect(0, y, cw, LANE_H);
    } else if (i % 2 === 1) {
      ctx.fillStyle = palette.laneAlt;
      ctx.globalAlpha = 0.5;
      ctx.fillRect(0, y, cw, LANE_H);
      ctx.globalAlpha = 1;
    }
  }
  // Grid.
  // Far enough apart for their labels (measured in the axis font) not to overlap.
  const tk = labeledTicks(vp, width, (step) => ctx.measureText(tickLabel(vp.start, step)).width);
  ctx.strokeStyle = palette.grid;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const t of tk.times) {
    const x = Math.round(LABEL_W + timeToX(vp, t)) + 0.5;
    ctx.moveTo(x, AXIS_H);
    ctx.lineTo(x, ch);
  }
  ctx.stroke();
  // Lanes (clipped to the plot area).
  ctx.save();
  ctx.beginPath();
  ctx.rect(LABEL_W, AXIS_H, width, ch - AXIS_H);
  ctx.clip();
  for (let i = first; i < last; i++) drawLane(all[i]!, AXIS_H + i * LANE_H - scrollY, LABEL_W, width, t0, t1, tNow);
  drawCursor(all, first, last, tNow);
  // "now" line.
  const xNow = LABEL_W + timeToX(vp, tNow);
  if (xNow >= LABEL_W && xNow <= cw) {
    ctx.fillStyle = palette.selected;
    ctx.fillRect(Math.round(xNow), AXIS_H, 1, ch - AXIS_H);
  }
  ctx.restore();
  // Labels column and axis on top.
  ctx.fillStyle = palette.bg;
  ctx.fillRect(0, 0, LABEL_W, ch);
  ctx.fillRect(0, 0, cw, AXIS_H);
  for (let i = first; i < last; i++) {
    const y = AXIS_H + i * LANE_H - scrollY;
    const lane = all[i]!;
    const focused = isFocused(lane);
    if (focused) {
      ctx.fillStyle = palette.focus;
      ctx.fillRect(0, y, LABEL_W, LANE_H);
    }
    ctx.fillStyle = focused ? palette.fg : palette.muted;
    ctx.fillText(fitText(model.label(lane), LABEL_W - 12), 6, y + LANE_H / 2);
  }
  ctx.fillStyle = palette.muted;
  for (const t of tk.times) ctx.fillText(tickLabel(t, tk.step), LABEL_W + timeToX(vp, t) + 4, AXIS_H / 2);
  ctx.strokeStyle = palette.grid;
  ctx.beginPath();
  ctx.moveTo(0, AXIS_H - 0.5);
  ctx.lineTo(cw, AXIS_H - 0.5);
  ctx.moveTo(LABEL_W - 0.5, 0);
  ctx.lineTo(LABEL_W - 0.5, ch);
  ctx.stroke();
  renderEmpty(all.length === 0);
  renderStatus();
}

/** What an empty timeline says, in the page (a screen reader reads it; the canvas it would be drawn on has no text). */
function renderEmpty(noLanes: boolean): void {
  const filtered = model.size > 0 && viewState.filter.trim() !== '';
  const text = !noLanes ? '' : filtered ? 'No lane matches the key filter.' : emptyJournalText(connectionLine.textContent ?? '', 0, false);
  if (emptyText.textContent !== text) emptyText.textContent = text;
  emptyLine.hidden = text === '';
  clearFilterButton.hidden = !(noLanes && filtered);
}

function setFilter(filter: string): void {
  viewState = { ...viewState, filter };
  lanesDirty = true;
  scrollY = 0;
  saveState();
  scheduleRender();
}

const fitCache = new Map<string, string>();
function fitText(text: string, max: number): string {
  const k = `${max}|${text}`;
  let s = fitCache.get(k);
  if (s !== undefined) return s;
  s = fitMiddle(text, max, (t) => ctx.measureText(t).width);
  if (fitCache.size > 5000) fitCache.clear();
  fitCache.set(k, s);
  return s;
}

function renderStatus(): void {
  const n = visibleLanes().length;
  const span = vp.msPerPx * plotWidth();
  const scale = span >= 120_000 ? `${Math.round(span / 60_000)} min` : span >= 2000 ? `${Math.round(span / 1000)} s` : `${Math.round(span)} ms`;
  // A timeline whose older history is gone says from when it is complete (nothing is cut off silently).
  const from = model.incompleteBefore;
  const history = from === undefined ? '' : ` · history from ${tickLabel(from, 1000)} (older entries dropped: reconcileLab.eventLog.size)`;
  statusLine.textContent = `${n.toLocaleString()} lane${n === 1 ? '' : 's'} · ${model.size.toLocaleString()} items · ${scale} across${viewState.follow ? ' · following' : ''}${history}`;
}

// ---- state -------------------------------------------------------------------------------------------------------

function saveState(): void {
  viewState = { ...viewState, msPerPx: vp.msPerPx };
  vscode.setState(viewState);
}

function setFollow(on: boolean): void {
  if (viewState.follow === on) return;
  viewState = { ...viewState, follow: on };
  followBox.checked = on;
  saveState();
  scheduleRender();
  syncLiveTimer();
}

/** While following, redraw a few times a second (open spans grow, the view moves); nothing runs otherwise. */
let liveTimer: ReturnType<typeof setInterval> | undefined;
function syncLiveTimer(): void {
  const want = viewState.follow && !document.hidden;
  if (want && !liveTimer) liveTimer = setInterval(scheduleRender, 200);
  if (!want && liveTimer) {
    clearInterval(liveTimer);
    liveTimer = undefined;
  }
}
document.addEventListener('visibilitychange', syncLiveTimer);

function fitAll(): void {
  const r = model.range;
  if (!r) return;
  vp = fit(r.from, Math.max(r.to, now()), plotWidth());
  setFollow(false);
  saveState();
  scheduleRender();
}

function zoom(factor: number, anchorX = plotWidth() / 2): void {
  vp = zoomAt(vp, factor, viewState.follow ? plotWidth() - 24 : anchorX);
  saveState();
  scheduleRender();
}

// ---- host messages -----------------------------------------------------------------------------------------------

function onHostMessage(msg: TimelineHostToWebview): void {
  switch (msg.type) {
    case 'timelineInit': {
      if (msg.version !== PROTOCOL_VERSION) {
        statusLine.textContent = `Protocol mismatch (host ${msg.version}, view ${PROTOCOL_VERSION}); reopen the Timeline.`;
        return;
      }
      hostOffset = msg.now - Date.now();
      connectionLine.textContent = msg.connection;
      model.clear(msg.older > 0);
      model.add(msg.entries);
      lanesDirty = true;
      const r = model.range;
      if (r && !viewState.msPerPx) vp = fit(r.from, Math.max(r.to, msg.now), plotWidth());
      if (msg.focusKey !== undefined) focus({ key: msg.focusKey, ...(msg.focusController !== undefined ? { controller: msg.focusController } : {}) });
      scheduleRender();
      return;
    }
    case 'timelineAppend':
      hostOffset = msg.now - Date.now();
      model.add(msg.entries);
      lanesDirty = true;
      scheduleRender();
      return;
    case 'timelineFocus':
      focus({ key: msg.key, ...(msg.controller !== undefined ? { controller: msg.controller } : {}) });
      scheduleRender();
      return;
  }
}

/**
 * Highlights the lanes of `f` (its controller's lane of the key when it names one, else every lane of the key; later
 * lanes of it too) and scrolls the first into view.
 */
function focus(f: LaneFocus): void {
  hostFocus = f;
  focusLane = undefined;
  // A filter that hides the focused lane goes (one that names its controller and shows its lane stays).
  if (!filterKeepsFocus(viewState.filter, f, visibleLanes())) {
    keyInput.value = '';
    viewState = { ...viewState, filter: '' };
    lanesDirty = true;
  }
  if (!scrollToLane((l) => isFocusLane(l, f))) statusLine.textContent = `No timeline entries for ${f.controller !== undefined ? `[${f.controller}] ` : ''}${f.key} yet.`;
}

window.addEventListener('message', (ev: MessageEvent) => {
  const msg = ev.data as TimelineHostToWebview | undefined;
  if (msg && typeof msg === 'object' && typeof msg.type === 'string') onHostMessage(msg);
});

// ---- pointer, wheel, keys ----------------------------------------------------------------------------------------

function laneAt(y: number): Lane | undefined {
  if (y < AXIS_H) return undefined;
  return visibleLanes()[Math.floor((y - AXIS_H + scrollY) / LANE_H)];
}

function hitAt(x: number, y: number) {
  const lane = laneAt(y);
  if (!lane || x < LABEL_W) return undefined;
  const t = xToTime(vp, x - LABEL_W);
  return model.hitTest(lane, t, 6 * vp.msPerPx, now());
}

let drag: { x: number; y: number; moved: boolean; vp: Viewport; scrollY: number } | undefined;
stage.addEventListener('pointerdown', (ev: PointerEvent) => {
  if (ev.button !== 0) return;
  stage.setPointerCapture(ev.pointerId);
  drag = { x: ev.offsetX, y: ev.offsetY, moved: false, vp, scrollY };
});
stage.addEventListener('pointermove', (ev: PointerEvent) => {
  if (drag) {
    const dx = ev.offsetX - drag.x;
    const dy = ev.offsetY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) > 3) {
      drag.moved = true;
      setFollow(false);
      tooltip.hidden = true;
    }
    if (drag.moved) {
      vp = pan(drag.vp, dx);
      scrollY = Math.min(maxScroll(), Math.max(0, drag.scrollY - dy));
      scheduleRender();
    }
    return;
  }
  const hit = hitAt(ev.offsetX, ev.offsetY);
  // Over a lane's label: its whole label, key and controller (the label may be cut to fit the column).
  const labelLane = !hit && ev.offsetX < LABEL_W ? laneAt(ev.offsetY) : undefined;
  if (!hit && !labelLane) {
    tooltip.hidden = true;
    stage.style.cursor = 'grab';
    return;
  }
  stage.style.cursor = 'pointer';
  tooltip.textContent = hit ? hit.label : model.label(labelLane!);
  tooltip.hidden = false;
  tooltip.style.left = `${Math.min(ev.offsetX + 12, stage.clientWidth - tooltip.offsetWidth - 4)}px`;
  tooltip.style.top = `${ev.offsetY + 16}px`;
});
stage.addEventListener('pointerup', (ev: PointerEvent) => {
  const d = drag;
  drag = undefined;
  if (!d) return;
  if (d.moved) {
    saveState();
    return;
  }
  const hit = hitAt(ev.offsetX, ev.offsetY);
  if (hit) {
    // The keyboard cursor moves to the clicked item too (arrows go on from there).
    const lane = laneAt(ev.offsetY)!;
    const item = laneItems(lane).find((x) => x.seq === hit.seq);
    if (item) cursor = { at: { lane: lane.id, seq: hit.seq }, item };
    openItem(hit.seq);
  } else if (ev.offsetX < LABEL_W) {
    const lane = laneAt(ev.offsetY);
    if (lane) {
      focusLane = lane.id;
      scheduleRender();
    }
  }
});
stage.addEventListener('pointerleave', () => {
  tooltip.hidden = true;
});
stage.addEventListener(
  'wheel',
  (ev: WheelEvent) => {
    ev.preventDefault();
    if (ev.ctrlKey || ev.metaKey) {
      zoom(wheelZoomFactor(ev.deltaY, ev.deltaMode, stage.clientHeight), ev.offsetX - LABEL_W);
      return;
    }
    if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
      setFollow(false);
      vp = pan(vp, -(ev.shiftKey ? ev.deltaY : ev.deltaX));
    } else {
      scrollY = Math.min(maxScroll(), Math.max(0, scrollY + ev.deltaY));
    }
    scheduleRender();
  },
  { passive: false },
);
/** The keys that move the keyboard cursor (nav.ts); with Shift, the arrows pan and scroll instead. */
const NAV_KEYS: Readonly<Record<string, NavMove>> = { ArrowLeft: 'previous', ArrowRight: 'next', ArrowUp: 'laneUp', ArrowDown: 'laneDown', Home: 'first', End: 'last' };

/**
 * Moves the keyboard cursor: the item's lane is highlighted and scrolled into view, the view pans to its time when
 * it is outside (Follow stops then), its tooltip shows beside it and the live region says the tooltip's text
 * (with the lane's label, its key and controller, first when the lane changed).
 */
function moveKeyboardCursor(move: NavMove): void {
  const all = visibleLanes();
  const r = moveCursor(all, cursor?.at, move, all.find(isFocused)?.id);
  if (!r) {
    announcer.textContent = 'No timeline items.';
    return;
  }
  const laneChanged = cursor?.at.lane !== r.cursor.lane;
  cursor = { at: r.cursor, item: r.item };
  focusLane = r.cursor.lane;
  const laneIdx = all.findIndex((l) => l.id === r.cursor.lane);
  scrollToLane((l) => l.id === r.cursor.lane);
  const w = plotWidth();
  const x = timeToX(vp, r.item.time);
  if (x < 12 || x > w - 12) {
    setFollow(false);
    vp = { start: r.item.time - (w / 2) * vp.msPerPx, msPerPx: vp.msPerPx };
  }
  announcer.textContent = laneChanged ? `${model.label(all[laneIdx]!)}: ${r.item.label}` : r.item.label;
  tooltip.textContent = r.item.label;
  tooltip.hidden = false;
  const laneY = AXIS_H + laneIdx * LANE_H - scrollY;
  const tx = LABEL_W + timeToX(vp, r.item.time);
  tooltip.style.left = `${Math.max(0, Math.min(tx + 12, stage.clientWidth - tooltip.offsetWidth - 4))}px`;
  tooltip.style.top = `${laneY + LANE_H + 2}px`;
}

/** What a click on the item does: select it and open its entry in the Event Log. */
function openItem(seq: number): void {
  selectedSeq = seq;
  post({ type: 'openEntry', seq });
  scheduleRender();
}

stage.addEventListener('focus', scheduleRender);
stage.addEventListener('blur', () => {
  tooltip.hidden = true;
  scheduleRender();
});
stage.addEventListener('keydown', (ev: KeyboardEvent) => {
  flushFilter(); // the keys move among the lanes the key box says are shown, even within its typing delay
  const w = plotWidth();
  const nav = ev.shiftKey || ev.ctrlKey || ev.metaKey || ev.altKey ? undefined : NAV_KEYS[ev.key];
  if (nav) {
    moveKeyboardCursor(nav);
    ev.preventDefault();
    saveState();
    scheduleRender();
    return;
  }
  switch (ev.key) {
    case 'Enter':
      if (!cursor) return;
      openItem(cursor.at.seq);
      ev.preventDefault();
      return;
    case 'ArrowLeft':
    case 'ArrowRight':
      setFollow(false);
      vp = pan(vp, (ev.key === 'ArrowLeft' ? 1 : -1) * w * 0.1);
      break;
    case 'ArrowUp':
    case 'ArrowDown':
      scrollY = Math.min(maxScroll(), Math.max(0, scrollY + (ev.key === 'ArrowUp' ? -LANE_H : LANE_H)));
      break;
    case '+':
    case '=':
      zoom(1.5);
      break;
    case '-':
      zoom(1 / 1.5);
      break;
    case '0':
      fitAll();
      break;
    default:
      return;
  }
  ev.preventDefault();
  saveState();
  scheduleRender();
});
el<HTMLButtonElement>('zoom-in').addEventListener('click', () => zoom(1.5));
el<HTMLButtonElement>('zoom-out').addEventListener('click', () => zoom(1 / 1.5));
el<HTMLButtonElement>('fit').addEventListener('click', fitAll);
followBox.addEventListener('change', () => setFollow(followBox.checked));
let filterTimer: ReturnType<typeof setTimeout> | undefined;
keyInput.addEventListener('input', () => {
  if (filterTimer) clearTimeout(filterTimer);
  filterTimer = setTimeout(() => {
    filterTimer = undefined;
    setFilter(keyInput.value);
  }, 120);
});
/** Applies a key filter still in its typing delay now (nothing when none is pending). */
function flushFilter(): void {
  if (!filterTimer) return;
  clearTimeout(filterTimer);
  filterTimer = undefined;
  setFilter(keyInput.value);
}
/** Escape in the key box, or the empty view's Clear Filter, clears the filter at once. */
function clearFilter(): void {
  if (filterTimer) clearTimeout(filterTimer);
  filterTimer = undefined;
  keyInput.value = '';
  setFilter('');
}
keyInput.addEventListener('keydown', (ev: KeyboardEvent) => {
  if (ev.key !== 'Escape' || keyInput.value === '') return;
  clearFilter();
  ev.preventDefault();
  ev.stopPropagation();
});
clearFilterButton.addEventListener('click', () => {
  clearFilter();
  keyInput.focus();
});
new ResizeObserver(scheduleRender).observe(stage);

// Legend: fixed words (no cluster text), coloured by the stylesheet.
for (const [cls, text] of [
  ['ok', 'reconcile ok'], ['err', 'error'], ['rq', 'requeue'], ['run', 'running'], ['queue', 'queued'], ['backoff', 'backoff'],
  ['event', 'informer event'], ['write', 'write'], ['action', 'your action'], ['warn', 'warning'],
] as const) {
  const s = document.createElement('span');
  s.className = `swatch ${cls}`;
  s.textContent = text;
  legend.appendChild(s);
}

/** For the benchmark and tests: frames rendered so far. */
(window as unknown as { __timelineRenders: () => number }).__timelineRenders = () => renderCount;

keyInput.value = viewState.filter;
followBox.checked = viewState.follow;
syncLiveTimer();
post({ type: 'timelineReady', version: PROTOCOL_VERSION });
