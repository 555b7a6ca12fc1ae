/**
 * The Event Log webview: shows the controller journal live.
 *
 * Rules this file keeps: it talks to the host only through
 * `src/shared/protocol.ts`; cluster data reaches the DOM only through
 * `textContent` and `title` (never markup); only the rows inside the viewport
 * exist in the DOM (a fixed row height makes positions arithmetic), so a log of
 * tens of thousands of entries arriving at 1,000 entries/s renders at most
 * once per animation frame and touches only the visible rows.
 */
import {
  type EntryDetailView,
  type EventLogViewState,
  type HostToWebview,
  type LogEntryView,
  type LogFilter,
  type WebviewToHost,
  emptyJournalText,
  entryKindLabel,
  entryKindTitle,
  orderEntryKinds,
  PROTOCOL_VERSION,
} from '../../shared/protocol.ts';
import { LogBuffer } from './logBuffer.ts';
import { followAfterScroll, isAtBottom, visibleRange } from './virtualRange.ts';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const ROW_HEIGHT = 22;
const vscode = acquireVsCodeApi();
const post = (m: WebviewToHost): void => vscode.postMessage(m);

const el = <T extends HTMLElement>(id: string): T => {
  const e = document.getElementById(id);
  if (!e) throw new Error(`event log: missing #${id}`);
  return e as T;
};

const keyInput = el<HTMLInputElement>('filter-key');
const kindSelect = el<HTMLSelectElement>('filter-kind');
const textInput = el<HTMLInputElement>('filter-text');
const pauseButton = el<HTMLButtonElement>('pause');
const clearButton = el<HTMLButtonElement>('clear');
const exportButton = el<HTMLButtonElement>('export');
const followBox = el<HTMLInputElement>('follow');
const statusLine = el<HTMLElement>('status');
const connectionLine = el<HTMLElement>('connection');
const emptyLine = el<HTMLElement>('empty');
const emptyText = el<HTMLElement>('empty-text');
const clearFiltersButton = el<HTMLButtonElement>('clear-filters');
const noticeLine = el<HTMLElement>('notice');
const list = el<HTMLElement>('list');
const spacer = el<HTMLElement>('spacer');
const timelineButton = el<HTMLButtonElement>('timeline');
const detailPane = el<HTMLElement>('detail');
const detailTitle = el<HTMLElement>('detail-title');
const detailBody = el<HTMLElement>('detail-body');
const detailTimeline = el<HTMLButtonElement>('detail-timeline');
const detailReveal = el<HTMLButtonElement>('detail-reveal');
const detailClose = el<HTMLButtonElement>('detail-close');

const saved = vscode.getState() as Partial<EventLogViewState> | undefined;
let state: EventLogViewState = {
  filter: saved?.filter ?? {},
  paused: saved?.paused ?? false,
  follow: saved?.follow ?? true,
  ...(saved?.selected !== undefined ? { selected: saved.selected } : {}),
};
const buffer = new LogBuffer(10_000);
buffer.setFilter(state.filter);
/** Entries received while paused; applied on resume (bounded by capacity). */
let pending: LogEntryView[] = [];
let droppedByHost = 0;
let selectedSeq: number | undefined = state.selected;
const knownKinds = new Set<string>();

// ---- rendering -------------------------------------------------------------------------------------------------

interface Row {
  readonly root: HTMLElement;
  readonly time: HTMLElement;
  readonly kind: HTMLElement;
  readonly key: HTMLElement;
  readonly summary: HTMLElement;
  seq: number;
  index: number;
}
const pool: Row[] = [];
/** The id of the rendered row of the selected entry (the grid's aria-activedescendant), if it is rendered. */
let activeRow: string | undefined;

function makeRow(): Row {
  const root = document.createElement('div');
  root.className = 'row';
  root.style.height = `${ROW_HEIGHT}px`;
  root.setAttribute('role', 'row');
  const cell = (cls: string) => {
    const s = document.createElement('span');
    s.className = cls;
    root.appendChild(s);
    return s;
  };
  const row: Row = { root, time: cell('time'), kind: cell('kind'), key: cell('key'), summary: cell('summary'), seq: -1, index: -1 };
  for (const c of [row.time, row.kind, row.key, row.summary]) c.setAttribute('role', 'gridcell');
  root.id = `row-${pool.length}`;
  root.addEventListener('click', () => {
    const entry = buffer.visibleAt(row.index);
    if (!entry) return;
    select(entry.seq);
  });
  root.addEventListener('dblclick', () => {
    const entry = buffer.visibleAt(row.index);
    if (entry) reveal(entry);
  });
  list.appendChild(root);
  return row;
}

function formatTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

function fill(row: Row, entry: LogEntryView, index: number): void {
  row.index = index;
  row.root.style.transform = `translateY(${index * ROW_HEIGHT}px)`;
  row.root.classList.toggle('selected', entry.seq === selectedSeq);
  // Row 1 is the column headers (#list-head); what a screen reader says about the keyboard-selected row.
  row.root.setAttribute('aria-rowindex', String(index + 2));
  row.root.setAttribute('aria-selected', String(entry.seq === selectedSeq));
  if (entry.seq === selectedSeq) activeRow = row.root.id;
  if (row.seq === entry.seq) return;
  row.seq = entry.seq;
  row.root.className = `row level-${entry.level}${entry.seq === selectedSeq ? ' selected' : ''}`;
  row.time.textContent = formatTime(entry.time);
  // The kind's label; its tooltip names the internal kind (what Export… and the CLI's --json lines say).
  row.kind.textContent = entryKindLabel(entry.kind);
  row.kind.title = entryKindTitle(entry.kind);
  row.key.textContent = entry.key ?? '';
  // The key column cuts a long key (ellipsis): hovering it shows the whole key (elsewhere the row's summary).
  if (entry.key) row.key.title = entry.key;
  else row.key.removeAttribute('title');
  // The row's context menu (package.json webview/context) gets the key and the entry: Show Timeline on the key's lane of
  // the entry's controller. A data attribute, never markup.
  if (entry.key) row.root.dataset.vscodeContext = JSON.stringify({ webviewSection: 'row', key: entry.key, seq: entry.seq, preventDefaultContextMenuItems: true });
  else delete row.root.dataset.vscodeContext;
  row.summary.textContent = entry.summary;
  row.root.title = entry.detail ? `${entry.summary}\n\n${entry.detail}` : entry.summary;
}

let frame = 0;
function scheduleRender(): void {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    applyIncoming();
    render();
  });
}

/**
 * Entries of `append` messages not yet in the buffer: messages only queue their entries here, and the next animation
 * frame takes them all at once (one buffer append, one kinds update, one render), so that however many messages
 * arrive between two frames, a frame does one bounded piece of work: at most `capacity` entries appended and only the
 * rows in the viewport rendered.
 */
let incoming: LogEntryView[] = [];

function applyIncoming(): void {
  if (incoming.length === 0) return;
  let entries = incoming;
  incoming = [];
  // More than the buffer holds arrived since the last frame: only the newest `capacity` can be shown.
  if (entries.length > buffer.capacity) entries = entries.slice(entries.length - buffer.capacity);
  const kinds = new Set<string>();
  for (const e of entries) kinds.add(e.kind);
  renderKinds(kinds);
  if (state.paused) {
    for (const e of entries) pending.push(e);
    if (pending.length > buffer.capacity) pending.splice(0, pending.length - buffer.capacity);
    return;
  }
  buffer.append(entries);
}

/** The list's scroll position as of its last scroll event or its own jump to the bottom. */
let lastScrollTop = 0;

function render(): void {
  const count = buffer.visibleCount;
  spacer.style.height = `${count * ROW_HEIGHT}px`;
  if (state.follow && !state.paused) {
    list.scrollTop = list.scrollHeight;
    lastScrollTop = list.scrollTop; // the scroll event of this jump is not the person's
  }
  const { first, end } = visibleRange(list.scrollTop, list.clientHeight, ROW_HEIGHT, count);
  list.setAttribute('aria-rowcount', String(count + 1));
  activeRow = undefined;
  let used = 0;
  for (let i = first; i < end; i++) {
    const entry = buffer.visibleAt(i);
    if (!entry) break;
    const row = pool[used] ?? (pool[used] = makeRow());
    row.root.hidden = false;
    fill(row, entry, i);
    used++;
  }
  for (let i = used; i < pool.length; i++) {
    const row = pool[i]!;
    row.root.hidden = true;
    row.index = -1;
  }
  if (activeRow) list.setAttribute('aria-activedescendant', activeRow);
  else list.removeAttribute('aria-activedescendant');
  renderStatus();
}

function renderStatus(): void {
  const parts = [`${buffer.visibleCount.toLocaleString()} of ${buffer.total.toLocaleString()} entries`];
  if (state.paused) parts.push(`paused${pending.length ? ` (${pending.length.toLocaleString()} new)` : ''}`);
  // A full log says that it is the newest part only, and which setting keeps more (nothing is cut off silently).
  if (buffer.dropped) parts.push(`newest ${buffer.capacity.toLocaleString()} kept, ${buffer.dropped.toLocaleString()} older dropped (reconcileLab.eventLog.size)`);
  if (droppedByHost) parts.push(`${droppedByHost.toLocaleString()} skipped while behind`);
  statusLine.textContent = parts.join(' · ');
  const f = state.filter;
  const filtered = Boolean(f.key || f.text || f.kinds?.length);
  const empty = buffer.visibleCount === 0 ? emptyJournalText(connectionLine.textContent ?? '', buffer.total, filtered) : '';
  if (emptyText.textContent !== empty) emptyText.textContent = empty;
  emptyLine.hidden = empty === '';
  // A filter that hides every entry offers its own reset (besides Escape in a filter box).
  clearFiltersButton.hidden = !(filtered && buffer.total > 0);
  pauseButton.textContent = state.paused ? 'Resume' : 'Pause';
  pauseButton.setAttribute('aria-pressed', String(state.paused));
}

function renderKinds(kinds: Iterable<string>): void {
  let changed = false;
  for (const k of kinds) {
    if (!knownKinds.has(k)) {
      knownKinds.add(k);
      changed = true;
    }
  }
  if (!changed && kindSelect.options.length > 0) return;
  const selected = state.filter.kinds?.[0] ?? '';
  kindSelect.replaceChildren();
  const all = document.createElement('option');
  all.value = '';
  all.textContent = 'All kinds';
  kindSelect.appendChild(all);
  // The option's value is the internal kind (what the filter holds and matches); its text the kind's label.
  for (const k of orderEntryKinds(knownKinds)) {
    const o = document.createElement('option');
    o.value = k;
    o.textContent = entryKindLabel(k);
    o.title = entryKindTitle(k);
    kindSelect.appendChild(o);
  }
  kindSelect.value = selected;
}

// ---- state -----------------------------------------------------------------------------------------------------

function saveState(): void {
  vscode.setState(state);
}

function applyFilter(filter: LogFilter): void {
  state = { ...state, filter };
  buffer.setFilter(filter);
  saveState();
  scheduleRender();
}

function setPaused(paused: boolean): void {
  state = { ...state, paused };
  if (!paused && pending.length) {
    buffer.append(pending);
    pending = [];
  }
  saveState();
  scheduleRender();
}

// ---- detail pane -----------------------------------------------------------------------------------------------

/** The entry whose detail is shown (or asked for). */
let detail: EntryDetailView | undefined;
/** The selection asked for again after the view was shown again (its answer also scrolls to it). */
let restoring: number | undefined;

/** Selects `seq`, asks the host for its detail and scrolls it into view. */
function select(seq: number): void {
  selectedSeq = seq;
  state = { ...state, selected: seq };
  saveState();
  post({ type: 'select', seq });
  scheduleRender();
}

function indexOfSeq(seq: number): number {
  // Visible entries are ordered by seq: binary search.
  let lo = 0;
  let hi = buffer.visibleCount;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (buffer.visibleAt(mid)!.seq < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo < buffer.visibleCount && buffer.visibleAt(lo)!.seq === seq ? lo : -1;
}

function scrollToSeq(seq: number): void {
  let i = indexOfSeq(seq);
  if (i < 0 && (state.filter.key || state.filter.text || state.filter.kinds?.length)) {
    // Selected from outside (the Timeline) but hidden by the filter: show everything.
    keyInput.value = '';
    textInput.value = '';
    kindSelect.value = '';
    applyFilter({});
    i = indexOfSeq(seq);
  }
  if (i < 0) return;
  state = { ...state, follow: false };
  followBox.checked = false;
  spacer.style.height = `${buffer.visibleCount * ROW_HEIGHT}px`;
  const top = i * ROW_HEIGHT;
  // Row i spans [top + ROW_HEIGHT, top + 2 * ROW_HEIGHT) below the sticky header row.
  if (top < list.scrollTop || top + 2 * ROW_HEIGHT > list.scrollTop + list.clientHeight) list.scrollTop = Math.max(0, top - list.clientHeight / 2);
}

function section(title: string): HTMLElement {
  const h = document.createElement('div');
  h.className = 'detail-section';
  h.textContent = title;
  detailBody.appendChild(h);
  return h;
}

function pre(text: string, cls = ''): HTMLElement {
  const p = document.createElement('pre');
  p.className = `detail-pre ${cls}`;
  p.textContent = text;
  detailBody.appendChild(p);
  return p;
}

/** A unified diff with each line coloured by its first character (textContent only). */
function diffBlock(diff: string): void {
  const p = document.createElement('pre');
  p.className = 'detail-pre diff';
  for (const line of diff.split('\n')) {
    const span = document.createElement('span');
    span.className = line.startsWith('+') && !line.startsWith('+++') ? 'add' : line.startsWith('-') && !line.startsWith('---') ? 'del' : line.startsWith('@@') ? 'hunk' : '';
    span.textContent = `${line}\n`;
    p.appendChild(span);
  }
  detailBody.appendChild(p);
}

function renderDetail(): void {
  detailPane.hidden = !detail;
  detailBody.replaceChildren();
  if (!detail) return;
  const d = detail;
  detailBody.scrollTop = 0;
  detailTitle.textContent = d.title;
  detailTitle.title = d.title;
  detailPane.className = `level-${d.level}`;
  detailTimeline.hidden = !d.key;
  detailReveal.hidden = !d.key;
  const table = document.createElement('dl');
  table.className = 'detail-fields';
  for (const f of d.fields) {
    const dt = document.createElement('dt');
    dt.textContent = f.label;
    const dd = document.createElement('dd');
    // A time reads first in this page's local time, as the rows show it, then as the host sent it (ISO UTC).
    dd.textContent = f.at !== undefined ? `${formatTime(f.at)} · ${f.value}` : f.value;
    table.append(dt, dd);
  }
  detailBody.appendChild(table);
  if (d.message) {
    section('Message');
    pre(d.message, 'message');
  }
  if (d.cause?.length) {
    section('Cause');
    const ul = document.createElement('ul');
    for (const c of d.cause) {
      const li = document.createElement('li');
      li.textContent = c;
      ul.appendChild(li);
    }
    detailBody.appendChild(ul);
  }
  if (d.patch !== undefined) {
    section(`Patch body${d.patchType ? ` (${d.patchType})` : ''}`);
    pre(d.patch, 'patch');
  }
  if (d.diff !== undefined) {
    section('Object before → after');
    if (d.diff) diffBlock(d.diff);
    else pre('(no change)');
  }
  if (d.diffNote) {
    section('Object before → after');
    pre(d.diffNote, 'note');
  }
  if (d.reconcile) {
    section(d.reconcile.label);
    const ul = document.createElement('ul');
    ul.className = 'related';
    for (const r of d.reconcile.entries) {
      const li = document.createElement('li');
      const a = document.createElement('button');
      a.type = 'button';
      a.className = r.seq === d.seq ? 'related-entry current' : 'related-entry';
      a.textContent = `${formatTime(r.time)}  ${entryKindLabel(r.kind)}  ${r.summary}`;
      a.addEventListener('click', () => {
        select(r.seq);
        scrollToSeq(r.seq);
      });
      li.appendChild(a);
      ul.appendChild(li);
    }
    detailBody.appendChild(ul);
  }
}

/** The saved state no longer names a selected entry (the view, shown again, opens no detail pane). */
function unsaveSelection(): void {
  const { selected: _, ...rest } = state;
  state = rest;
  saveState();
}

/** No entry is selected any more (cleared, or gone from the journal while the view was hidden). */
function forgetSelection(): void {
  selectedSeq = undefined;
  unsaveSelection();
}

detailClose.addEventListener('click', () => {
  detail = undefined;
  unsaveSelection(); // the row stays selected; the pane stays closed when the view is shown again
  renderDetail();
});
detailReveal.addEventListener('click', () => {
  if (detail?.key) post({ type: 'reveal', key: detail.key, ...(detail.resource ? { resource: detail.resource } : {}) });
});
detailTimeline.addEventListener('click', () => {
  if (detail?.key) post({ type: 'showTimeline', key: detail.key, seq: detail.seq });
});
timelineButton.addEventListener('click', () => {
  const key = keyInput.value.trim();
  post({ type: 'showTimeline', ...(key ? { key } : {}) });
});

function reveal(entry: LogEntryView): void {
  if (entry.key) post({ type: 'reveal', key: entry.key, ...(entry.resource ? { resource: entry.resource } : {}) });
}

// ---- host messages ---------------------------------------------------------------------------------------------

function onHostMessage(msg: HostToWebview): void {
  switch (msg.type) {
    case 'init':
      if (msg.version !== PROTOCOL_VERSION) {
        statusLine.textContent = `Protocol mismatch (host ${msg.version}, view ${PROTOCOL_VERSION}); reopen the Event Log.`;
        return;
      }
      buffer.setCapacity(msg.capacity);
      buffer.reset(msg.entries, msg.older);
      pending = [];
      incoming = []; // older than the snapshot, which holds them
      droppedByHost = 0;
      connectionLine.textContent = msg.connection;
      renderKinds([...msg.kinds, ...buffer.kinds()]);
      // Shown again after being hidden (the page was rebuilt): the entry selected before, and its detail, again (the
      // host answers from the journal; the snapshot may still be on its way in pieces).
      if (state.selected !== undefined && state.selected === selectedSeq && !detail) {
        restoring = state.selected;
        post({ type: 'select', seq: state.selected });
      }
      scheduleRender();
      return;
    case 'append': {
      droppedByHost += msg.dropped;
      for (const e of msg.entries) incoming.push(e);
      scheduleRender();
      return;
    }
    case 'cleared':
      buffer.clear();
      pending = [];
      incoming = [];
      droppedByHost = 0;
      forgetSelection();
      detail = undefined;
      renderDetail();
      scheduleRender();
      return;
    case 'connection':
      connectionLine.textContent = msg.connection;
      renderStatus(); // the empty-state text depends on the connection
      return;
    case 'notice':
      noticeLine.textContent = msg.text;
      return;
    case 'detail': {
      if (msg.seq !== selectedSeq) return; // an older answer
      const restored = restoring === msg.seq;
      restoring = undefined;
      detail = msg.detail;
      if (restored && !detail) {
        forgetSelection(); // gone from the journal while the view was hidden: nothing to say
        scheduleRender();
        return;
      }
      if (!detail) noticeLine.textContent = `Entry #${msg.seq} is no longer in the journal.`;
      renderDetail();
      if (restored && !state.follow) {
        applyIncoming();
        if (indexOfSeq(msg.seq) >= 0) scrollToSeq(msg.seq);
      }
      scheduleRender();
      return;
    }
    case 'select':
      applyIncoming(); // the entry may have arrived since the last frame
      select(msg.seq);
      scrollToSeq(msg.seq);
      return;
  }
}

window.addEventListener('message', (ev: MessageEvent) => {
  const msg = ev.data as HostToWebview | undefined;
  if (msg && typeof msg === 'object' && typeof msg.type === 'string') onHostMessage(msg);
});

// ---- controls --------------------------------------------------------------------------------------------------

function readFilter(): LogFilter {
  const kind = kindSelect.value;
  return { key: keyInput.value, text: textInput.value, ...(kind ? { kinds: [kind] } : {}) };
}

/** A filter typed into a box, applied once the typing delay passed (applyFilterNow). */
let filterTimer: ReturnType<typeof setTimeout> | undefined;
const onFilterInput = () => {
  if (filterTimer) clearTimeout(filterTimer);
  filterTimer = setTimeout(() => applyFilterNow(), 120);
};
/** Applies filter (the boxes' by default) now; a filter still in its typing delay is cancelled (it is this one or older). */
function applyFilterNow(filter: LogFilter = readFilter()): void {
  if (filterTimer) clearTimeout(filterTimer);
  filterTimer = undefined;
  applyFilter(filter);
}
keyInput.addEventListener('input', onFilterInput);
textInput.addEventListener('input', onFilterInput);
/** Escape in a filter box clears it (at once, not after the typing delay). */
const clearOnEscape = (input: HTMLInputElement) => input.addEventListener('keydown', (ev: KeyboardEvent) => {
  if (ev.key !== 'Escape' || input.value === '') return;
  input.value = '';
  applyFilterNow();
  ev.preventDefault();
  ev.stopPropagation();
});
clearOnEscape(keyInput);
clearOnEscape(textInput);
clearFiltersButton.addEventListener('click', () => {
  keyInput.value = '';
  textInput.value = '';
  kindSelect.value = '';
  applyFilterNow({});
  keyInput.focus();
});
kindSelect.addEventListener('change', () => applyFilter(readFilter()));
pauseButton.addEventListener('click', () => setPaused(!state.paused));
clearButton.addEventListener('click', () => post({ type: 'clear' }));
exportButton.addEventListener('click', () => post({ type: 'export', filter: readFilter() }));
followBox.addEventListener('change', () => {
  state = { ...state, follow: followBox.checked };
  saveState();
  scheduleRender();
});
list.addEventListener('scroll', () => {
  // Scrolling up stops following; scrolling back down to the bottom resumes it (followAfterScroll).
  const atBottom = isAtBottom(list.scrollTop, list.clientHeight, list.scrollHeight, ROW_HEIGHT);
  const follow = followAfterScroll({ follow: state.follow, atBottom, scrollTop: list.scrollTop, lastScrollTop });
  lastScrollTop = list.scrollTop;
  if (follow !== state.follow) {
    state = { ...state, follow };
    followBox.checked = follow;
    saveState();
  }
  scheduleRender();
}, { passive: true });
window.addEventListener('resize', scheduleRender);

list.addEventListener('keydown', (ev: KeyboardEvent) => {
  // A filter still in its typing delay applies first: the keys move through the entries the boxes say are shown
  // (otherwise ArrowUp right after typing selects an entry the filter is about to hide).
  if (filterTimer) applyFilterNow();
  const count = buffer.visibleCount;
  if (count === 0) return;
  let index = -1;
  for (let i = 0; i < count && selectedSeq !== undefined; i++) {
    // Visible entries are ordered by seq; a linear scan only runs on key presses.
    if (buffer.visibleAt(i)!.seq === selectedSeq) {
      index = i;
      break;
    }
  }
  if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
    index = ev.key === 'ArrowDown' ? Math.min(count - 1, index + 1) : Math.max(0, index < 0 ? count - 1 : index - 1);
    select(buffer.visibleAt(index)!.seq);
    const top = index * ROW_HEIGHT;
    if (top < list.scrollTop) list.scrollTop = top;
    else if (top + 2 * ROW_HEIGHT > list.scrollTop + list.clientHeight) list.scrollTop = top + 2 * ROW_HEIGHT - list.clientHeight; // below the header row
    scheduleRender();
    ev.preventDefault();
  } else if (ev.key === 'Enter' && index >= 0) {
    reveal(buffer.visibleAt(index)!);
    ev.preventDefault();
  }
});

// Restore controls from the saved state, then tell the host we are listening.
keyInput.value = state.filter.key ?? '';
textInput.value = state.filter.text ?? '';
followBox.checked = state.follow;
renderKinds(state.filter.kinds ?? []);
renderStatus();
post({ type: 'ready', version: PROTOCOL_VERSION });
