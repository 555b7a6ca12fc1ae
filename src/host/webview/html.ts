import { randomBytes } from 'node:crypto';
import type * as vscode from 'vscode';

/** A fresh CSP nonce (128 random bits). */
export function createNonce(): string {
  return randomBytes(16).toString('base64');
}

/**
 * A webview page of this extension: a fixed skeleton. No cluster data is ever put into it (each page's script fills
 * the DOM with textContent), so there is nothing to escape.
 */
export interface WebviewPage {
  /** The document title. */
  readonly title: string;
  /** The markup inside <body>, before the page's one script. */
  readonly body: string;
}

/**
 * The HTML of a {@link WebviewPage}. CSP: nothing by default; styles, fonts and images only from the extension
 * (`cspSource`); the one script (`scriptUri`) only by `nonce`; the one stylesheet is `styleUri`.
 */
export function renderWebviewPage(webview: vscode.Webview, nonce: string, scriptUri: vscode.Uri, styleUri: vscode.Uri, page: WebviewPage): string {
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${styleUri.toString()}">
<title>${page.title}</title>
</head>
<body>
${page.body}<script nonce="${nonce}" src="${scriptUri.toString()}"></script>
</body>
</html>`;
}

/** The Event Log page. */
export const EVENT_LOG_PAGE: WebviewPage = {
  title: 'Reconcile Lab Event Log',
  body: `<div id="toolbar" role="toolbar" aria-label="Event log controls">
  <input id="filter-key" type="text" placeholder="Key (namespace/name)" aria-label="Filter by key" title="Key (namespace/name or name); Escape clears it" spellcheck="false">
  <select id="filter-kind" aria-label="Filter by kind of entry" title="Kind of journal entry (informer event, queue transition, reconcile start or end, write, …), not the object's kind"></select>
  <input id="filter-text" type="text" placeholder="Text" aria-label="Filter by text" title="Text in the entry; Escape clears it" spellcheck="false">
  <button id="pause" type="button" aria-pressed="false" title="Freeze this list (entries that arrive meanwhile are counted, then shown on Resume); the reconcile loop keeps running">Pause</button>
  <button id="clear" type="button" title="Empty the journal: this list and the Timeline">Clear</button>
  <button id="export" type="button" title="Export the filtered entries as JSON lines">Export…</button>
  <label><input id="follow" type="checkbox" checked> Follow</label>
  <button id="timeline" type="button" title="Open the per-key Timeline (on the key filter, if one is set)">Timeline</button>
</div>
<div id="meta"><span id="connection"></span><span id="status" aria-live="polite"></span><span id="notice" role="status"></span></div>
<div id="empty" hidden><span id="empty-text" role="status"></span><button id="clear-filters" type="button" hidden>Clear Filters</button></div>
<div id="list" tabindex="0" role="grid" aria-label="Journal entries, newest last; click or arrows select (detail below), Enter reveals the object" aria-rowcount="1"><div id="list-head" role="row" aria-rowindex="1"><span class="col-time" role="columnheader">Time</span><span class="col-kind" role="columnheader" title="Kind of journal entry (informer event, queue transition, reconcile start or end, write, …), not the object's kind">Kind</span><span class="col-key" role="columnheader">Key</span><span class="col-summary" role="columnheader">Summary</span></div><div id="spacer"></div></div>
<div id="detail" role="region" aria-label="Entry detail" hidden>
  <div id="detail-head">
    <span id="detail-title"></span>
    <button id="detail-timeline" type="button">Show Timeline</button>
    <button id="detail-reveal" type="button">Reveal in Resources</button>
    <button id="detail-close" type="button" aria-label="Close the detail pane" title="Close">✕</button>
  </div>
  <div id="detail-body"></div>
</div>
`,
};

/** The Event Log's HTML (as the panel renders it; the render benchmark uses it). */
export function renderEventLogHtml(webview: vscode.Webview, nonce: string, scriptUri: vscode.Uri, styleUri: vscode.Uri): string {
  return renderWebviewPage(webview, nonce, scriptUri, styleUri, EVENT_LOG_PAGE);
}

/** The Robustness Checks results page. */
export const CHECKS_PAGE: WebviewPage = {
  title: 'Reconcile Lab Robustness Checks',
  body: `<header>
  <h1 id="title"></h1>
  <div id="status" aria-live="polite"></div>
  <div id="toolbar" role="toolbar" aria-label="Results">
    <button id="export-md" type="button">Export Markdown…</button>
    <button id="export-json" type="button">Export JSON…</button>
    <button id="rerun" type="button">Run Again</button>
    <span id="notice" role="status"></span>
  </div>
</header>
<main id="results" aria-label="Results per check"></main>
<section id="footer"></section>
`,
};

/** The Timeline page (lanes are drawn on a canvas; every text goes through textContent). */
export const TIMELINE_PAGE: WebviewPage = {
  title: 'Reconcile Lab Timeline',
  body: `<div id="toolbar" role="toolbar" aria-label="Timeline controls">
  <input id="filter-key" type="text" placeholder="Key (namespace/name)" aria-label="Show lanes whose key contains" title="Key (namespace/name or name); Escape clears it" spellcheck="false">
  <button id="zoom-in" type="button" aria-label="Zoom in" title="Zoom in (Ctrl+wheel, +)">+</button>
  <button id="zoom-out" type="button" aria-label="Zoom out" title="Zoom out (Ctrl+wheel, -)">−</button>
  <button id="fit" type="button" title="Show everything (0)">Fit</button>
  <label><input id="follow" type="checkbox" checked> Follow live</label>
  <span id="legend" role="group" aria-label="Legend"></span>
</div>
<div id="meta"><span id="connection"></span><span id="status" aria-live="polite"></span></div>
<div id="empty" hidden><span id="empty-text" role="status"></span><button id="clear-filter" type="button" hidden>Clear Filter</button></div>
<div id="stage" tabindex="0" role="application" aria-label="Timeline: one lane per key. Left and Right arrows move between a lane's items, Up and Down between lanes, Home and End to the first and last item; Enter (or a click) opens the item's Event Log entry. Shift+arrows and drag pan, Ctrl+wheel, + and − zoom">
  <canvas id="canvas"></canvas>
  <div id="tooltip" role="tooltip" hidden></div>
</div>
<div id="announce" class="visually-hidden" role="status" aria-live="polite"></div>
`,
};

/** The Timeline's HTML (as the panel renders it; the timeline benchmark uses it). */
export function renderTimelineHtml(webview: vscode.Webview, nonce: string, scriptUri: vscode.Uri, styleUri: vscode.Uri): string {
  return renderWebviewPage(webview, nonce, scriptUri, styleUri, TIMELINE_PAGE);
}
