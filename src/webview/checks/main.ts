/**
 * The Robustness Checks results webview.
 *
 * Rules this file keeps: it talks to the host only through `src/shared/checksProtocol.ts`; every text from the
 * model (cluster names, messages, diffs, journals, commands) reaches the DOM through `textContent` only, never
 * markup; it holds no state the host does not have (a reload asks for the model again), except which findings
 * are expanded, kept with `setState`.
 */
import { CHECKS_PROTOCOL_VERSION, type ChecksHostToWebview, type ChecksViewModel, type ChecksWebviewToHost, type CheckResultView, type FindingView } from '../../shared/checksProtocol.ts';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const post = (m: ChecksWebviewToHost): void => vscode.postMessage(m);

const el = <T extends HTMLElement>(id: string): T => {
  const e = document.getElementById(id);
  if (!e) throw new Error(`checks view: missing #${id}`);
  return e as T;
};

const titleEl = el('title');
const statusEl = el('status');
const resultsEl = el('results');
const footerEl = el('footer');
const noticeEl = el('notice');
const exportMd = el<HTMLButtonElement>('export-md');
const exportJson = el<HTMLButtonElement>('export-json');
const rerun = el<HTMLButtonElement>('rerun');

const saved = vscode.getState() as { open?: string[] } | undefined;
/** Finding ids whose details are expanded (the first render opens every finding). */
const open = new Set<string>(saved?.open ?? []);
let firstRender = saved?.open === undefined;
let noticeTimer: ReturnType<typeof setTimeout> | undefined;

function h<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A diff as lines coloured by their first character (+, -, @@), each line's text set with textContent. */
function diffBlock(diff: string): HTMLElement {
  const pre = h('pre', 'diff');
  for (const line of diff.replace(/\n$/, '').split('\n')) {
    const cls = line.startsWith('+++') || line.startsWith('---') ? 'file' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'hunk' : 'ctx';
    pre.append(h('span', cls, `${line}\n`));
  }
  return pre;
}

function section(title: string, body: HTMLElement): HTMLElement {
  const s = h('div', 'part');
  s.append(h('h4', undefined, title), body);
  return s;
}

function renderFinding(f: FindingView): HTMLElement {
  const d = h('details', `finding ${f.severity}`);
  d.dataset.id = f.id;
  d.open = open.has(f.id);
  d.addEventListener('toggle', () => {
    if (d.open) open.add(f.id);
    else open.delete(f.id);
    vscode.setState({ open: [...open] });
  });
  const summary = h('summary');
  summary.append(h('span', `badge ${f.severity}`, f.severity === 'error' ? 'bug' : 'warning'), h('span', 'finding-title', f.title));
  d.append(summary);
  d.append(h('p', 'explanation', f.explanation));
  d.append(section('Perturbation', h('p', undefined, f.perturbation)));
  if (f.diff) d.append(section('End state: reference → perturbed run', diffBlock(f.diff)));
  if (f.writes.length) {
    const list = h('div');
    f.writes.forEach((w, i) => {
      list.append(h('div', 'write', w));
      const wd = f.writeDiffs[i];
      if (wd) list.append(diffBlock(wd));
    });
    d.append(section('Writes', list));
  }
  if (f.journal.length) {
    const pre = h('pre', 'journal');
    // The kind column is as wide as this journal's longest label, so the keys line up.
    const width = Math.max(...f.journal.map((l) => l.kindLabel.length));
    for (const l of f.journal) {
      const line = h('span', `j ${l.level}`);
      line.textContent = `${new Date(l.time).toISOString().slice(11, 23)}  ${l.kindLabel.padEnd(width)}  ${l.key ? `${l.key}  ` : ''}${l.summary}\n`;
      line.title = l.kindTitle;
      pre.append(line);
    }
    d.append(section('Journal of the perturbed run', pre));
  }
  const repro = h('div', 'repro');
  const code = h('code', undefined, f.reproduce);
  const copy = h('button', 'copy', 'Copy');
  copy.type = 'button';
  copy.title = 'Copy the command that reproduces this finding';
  copy.addEventListener('click', () => post({ type: 'copy', findingId: f.id }));
  repro.append(code, copy);
  d.append(section('Reproduce', repro));
  return d;
}

const STATUS_TEXT: Record<CheckResultView['status'], string> = {
  passed: 'passed',
  failed: 'failed',
  skipped: 'skipped',
  error: 'could not run',
  running: 'running…',
  pending: 'pending',
};

function renderResult(r: CheckResultView): HTMLElement {
  const box = h('section', `result ${r.status}`);
  const head = h('div', 'result-head');
  head.append(h('span', `status ${r.status}`, STATUS_TEXT[r.status]), h('span', 'check', r.checkTitle));
  // The key is cluster text: plain text, never a link; revealing it is a button of its own (keyboard-reachable).
  const key = h('span', 'key', r.key);
  key.title = r.key;
  const reveal = h('button', 'reveal', 'Reveal');
  reveal.type = 'button';
  reveal.title = 'Reveal in the Resources view';
  reveal.setAttribute('aria-label', `Reveal ${r.key} in the Resources view`);
  reveal.addEventListener('click', () => post({ type: 'reveal', key: r.key }));
  head.append(key, reveal);
  if (r.findings.length) head.append(h('span', 'count', `${r.findings.length} finding${r.findings.length === 1 ? '' : 's'}`));
  if (r.durationText !== undefined) head.append(h('span', 'time', r.durationText));
  box.append(head);
  if (r.message) box.append(h('p', 'message', r.message));
  for (const f of r.findings) box.append(renderFinding(f));
  return box;
}

function render(m: ChecksViewModel): void {
  if (firstRender && m.phase !== 'empty') {
    for (const r of m.results) for (const f of r.findings) open.add(f.id);
    if (m.phase === 'done') firstRender = false;
  }
  titleEl.textContent = m.title;
  statusEl.textContent = m.status;
  document.body.dataset.phase = m.phase;
  exportMd.disabled = exportJson.disabled = !m.canExport;
  rerun.disabled = !m.canRerun;
  resultsEl.replaceChildren(...m.results.map(renderResult));
  const foot: HTMLElement[] = [];
  if (m.masked.length) {
    const ul = h('ul');
    for (const x of m.masked) ul.append(h('li', undefined, x));
    foot.push(section('Fields masked before comparing end states', ul));
  }
  if (m.notes.length) {
    const ul = h('ul');
    for (const x of m.notes) ul.append(h('li', undefined, x));
    foot.push(section('Notes', ul));
  }
  if (m.timings) foot.push(section('Time per run', h('p', 'timings', m.timings)));
  footerEl.replaceChildren(...foot);
}

function notice(text: string): void {
  noticeEl.textContent = text;
  if (noticeTimer !== undefined) clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => (noticeEl.textContent = ''), 6000);
}

exportMd.addEventListener('click', () => post({ type: 'export', format: 'markdown' }));
exportJson.addEventListener('click', () => post({ type: 'export', format: 'json' }));
rerun.addEventListener('click', () => post({ type: 'rerun' }));

window.addEventListener('message', (event: MessageEvent) => {
  const m = event.data as ChecksHostToWebview;
  if (!m || typeof m !== 'object') return;
  switch (m.type) {
    case 'init':
    case 'update':
      render(m.model);
      return;
    case 'notice':
      notice(m.text);
      return;
  }
});

post({ type: 'ready', version: CHECKS_PROTOCOL_VERSION });
