import * as vscode from 'vscode';
import { markViewNode } from './viewNodes.ts';
import type { Clock } from '../../core/clock.ts';
import type { KeyBrief, KeyPhase, KeyState } from '../../core/controller/keyState.ts';
import type { Disposable } from '../../core/lifecycle.ts';
import type { ObjectKey } from '../../core/k8s/keys.ts';
import { ContextValues } from '../ids.ts';
import { convergenceContextOf, convergenceDetail, hasBackoff, lastErrorLine, presentKey, reasonSummary } from './presentation.ts';
import { plural } from './format.ts';
import type { KubeObject } from '../../core/k8s/objects.ts';
import { RefreshCoalescer } from './refreshCoalescer.ts';
import { tooltipOf, TREE_REFRESH_MS } from './resourcesTree.ts';
import type { ViewModel } from './viewModel.ts';

/** A work-queue key; `resource` is the loop's primary resource, so the node is a valid command argument. */
export interface QueueKeyNode {
  readonly type: 'queueKey';
  readonly id: string;
  readonly resource: string;
  readonly key: ObjectKey;
}

/** One line under a key (why it is queued, or its last error); at the top level, the line that says how many keys are not shown. */
export interface QueueDetailNode {
  readonly type: 'detail';
  readonly id: string;
  readonly label: string;
  readonly description: string;
  /** The text its tooltip shows after the label, when it says more than the description (a whole multi-line error). */
  readonly tooltip?: string;
  readonly parent?: QueueKeyNode;
}

/**
 * The view lists at most this many keys (the head of the queue, in display order) and then one line with the
 * number left out, so that 10,000 queued keys do not become 10,000 tree items on every refresh. (500 rows took VS
 * Code 0.2–0.3 s to rebuild in the extension host at load ≈ 10: one task.)
 */
export const QUEUE_VIEW_LIMIT = 200;

/**
 * A targeted refresh hands VS Code at most this many rows; the other changed rows follow in the next refresh,
 * {@link SPLIT_REFRESH_MS} later. VS Code's extension host updates each refreshed row with a scan of all its
 * siblings (quadratic: 500 rows of 500 siblings held it for 0.18 s), and merges refreshes less than 200 ms apart.
 */
export const TARGETED_ROWS = 50;
export const SPLIT_REFRESH_MS = 250;

export type QueueNode = QueueKeyNode | QueueDetailNode;

const MORE_ID = 'q|more';
const moreLabel = (n: number) => `… ${n} more keys`;

function sameKeys(a: readonly ObjectKey[], b: readonly ObjectKey[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Above this many rows the view refreshes at most every {@link LARGE_VIEW_REFRESH_MS}: each refresh makes VS Code
 * rebuild every row in the extension host (hundreds of them at 10/s during a burst kept it busy for seconds).
 */
export const LARGE_VIEW_ROWS = 100;
export const LARGE_VIEW_REFRESH_MS = 1000;

const PHASE_ORDER: Record<KeyState['phase'], number> = { processing: 0, queued: 1, backoff: 2, requeueAfter: 3, idle: 4 };

/** Counts shown in the view's message and the status bar. */
export interface QueueCounts {
  readonly queued: number;
  readonly processing: number;
  readonly backoff: number;
  readonly requeueAfter: number;
}

export function countPhases(states: ReadonlyArray<{ readonly phase: KeyPhase }>): QueueCounts {
  const c = { queued: 0, processing: 0, backoff: 0, requeueAfter: 0 };
  for (const s of states) if (s.phase !== 'idle') c[s.phase]++;
  return c;
}

/**
 * The Work Queue view: every key that is queued, processing, waiting for a
 * retry (backoff) or a requeue, or whose last reconcile failed; with its state,
 * requeue count, next due time, last error and why it is queued. Ordering:
 * processing, then queued in hand-out order, then waits by due time, then idle
 * keys with errors. Refreshes are coalesced like the Resources view.
 */
export class QueueTreeProvider implements vscode.TreeDataProvider<QueueNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<QueueNode | QueueNode[] | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly changeEmitter = new vscode.EventEmitter<QueueCounts>();
  /** Fires after each (coalesced) refresh with the current counts. */
  readonly onDidChangeCounts = this.changeEmitter.event;
  private readonly clock: Clock;
  private readonly coalescer: RefreshCoalescer<string>;
  private model: ViewModel | undefined;
  /** Rows VS Code rebuilt after the last refresh (all rows after a full one, the changed ones after a targeted one). */
  private lastRefreshRows = 0;
  private subscription: Disposable | undefined;
  /**
   * The key rows handed to VS Code by the last getChildren of the root, by key, and their order. VS Code's extension
   * host matches the elements of a refresh by identity, so each key has one node object while it is shown.
   */
  private keyNodes = new Map<ObjectKey, QueueKeyNode>();
  private shownKeys: readonly ObjectKey[] = [];
  /** The "… N more keys" row last handed out (its label is read from {@link moreCount} when VS Code asks). */
  private moreNode: QueueDetailNode | undefined;
  private moreCount = 0;
  /** The listing a flush computed, reused by the getChildren of the root that its refresh causes (until a change). */
  private listing: { keys: ObjectKey[]; total: number } | undefined;
  /** Refreshes that re-rendered only the changed rows (the rest: the whole view). For tests and benchmarks. */
  targetedRefreshes = 0;
  /** The last targeted refresh left changed rows for the next one (see {@link TARGETED_ROWS}). */
  private split = false;

  constructor(clock: Clock) {
    this.clock = clock;
    this.coalescer = new RefreshCoalescer<string>(clock, () => (this.lastRefreshRows > LARGE_VIEW_ROWS ? LARGE_VIEW_REFRESH_MS : this.split ? SPLIT_REFRESH_MS : TREE_REFRESH_MS), (marks) => {
      this.refreshRows(marks);
      this.changeEmitter.fire(this.counts());
    });
  }

  /** Number of refreshes delivered to VS Code (for tests of coalescing). */
  get refreshCount(): number {
    return this.coalescer.flushes;
  }

  /**
   * Delivers one coalesced refresh. When only keys changed (`marks`) and the listing still shows the same keys in
   * the same order, only the rows of the changed keys that are shown (and the "more" row) are refreshed: VS Code
   * rebuilds those, not all 500. Otherwise the whole view is refreshed.
   */
  private refreshRows(marks: ReadonlySet<string> | undefined): void {
    this.listing = undefined;
    this.split = false;
    if (marks && this.model?.primaryResource && this.shownKeys.length > 0) {
      const listing = this.visibleKeys(QUEUE_VIEW_LIMIT);
      const more = listing.total > QUEUE_VIEW_LIMIT;
      if (more === (this.moreNode !== undefined) && sameKeys(listing.keys, this.shownKeys)) {
        const changed: QueueNode[] = [];
        for (const key of marks) {
          const n = this.keyNodes.get(key);
          if (!n) continue;
          if (changed.length < TARGETED_ROWS) changed.push(n);
          else {
            // Left for the next refresh (marked again: nothing is lost).
            this.split = true;
            this.coalescer.mark(key);
          }
        }
        if (this.moreNode && this.moreCount !== listing.total - QUEUE_VIEW_LIMIT) {
          this.moreCount = listing.total - QUEUE_VIEW_LIMIT;
          changed.push(this.moreNode);
        }
        this.targetedRefreshes++;
        this.lastRefreshRows = changed.length;
        if (changed.length) this.emitter.fire(changed);
        return;
      }
      this.listing = listing;
    }
    this.emitter.fire(undefined);
  }

  setModel(model: ViewModel | undefined): void {
    this.subscription?.dispose();
    this.model = model;
    this.keyNodes = new Map();
    this.shownKeys = [];
    this.moreNode = undefined;
    this.subscription = model?.onDidChange((c) => {
      if (c.type === 'key') this.coalescer.mark(c.key);
      else if (c.type !== 'object') this.coalescer.all();
    });
    this.coalescer.all();
    this.coalescer.flushNow();
  }

  counts(): QueueCounts {
    const m = this.model;
    if (!m) return { queued: 0, processing: 0, backoff: 0, requeueAfter: 0 };
    return m.keyCounts ? m.keyCounts() : countPhases(m.keyBriefs());
  }

  /**
   * The keys shown, in display order: the first `limit` of them as full states, and how many there are in all.
   * Order: processing (by key), queued (in hand-out order), backoff then requeue-after waits (by due time, then key),
   * then idle keys that failed, have a warning or are flapping (by key). Only the listed keys are looked at (not
   * every key the controller has seen), the queued ones through the head of the queue, and only the keys shown are
   * built as {@link KeyState}s.
   */
  visible(limit = Number.POSITIVE_INFINITY): { states: KeyState[]; total: number } {
    const m = this.model;
    if (!m) return { states: [], total: 0 };
    const { keys, total } = this.visibleKeys(limit);
    const states: KeyState[] = [];
    for (const k of keys) {
      const s = m.keyState(k);
      if (s) states.push(s);
    }
    return { states, total };
  }

  /** The keys of {@link visible}, without building their states. */
  private visibleKeys(limit: number): { keys: ObjectKey[]; total: number } {
    const m = this.model;
    if (!m) return { keys: [], total: 0 };
    // The queued keys (all 10,000 after an initial list) are counted and taken from the head of the queue, not listed.
    const cheap = m.listedKeyBriefs !== undefined && m.keyCounts !== undefined;
    const briefs = cheap ? m.listedKeyBriefs!(true) : m.keyBriefs().filter((b) => b.phase !== 'idle' || b.failed || b.warned);
    const processing: KeyBrief[] = [];
    const waits: KeyBrief[] = [];
    const idle: KeyBrief[] = [];
    const listedIdle = new Set<ObjectKey>();
    let queuedCount = cheap ? m.keyCounts!().queued : 0;
    for (const b of briefs) {
      if (b.phase === 'processing') processing.push(b);
      else if (b.phase === 'queued') queuedCount++;
      else if (b.phase === 'idle') {
        idle.push(b);
        listedIdle.add(b.key);
      } else waits.push(b);
    }
    // Idle keys that are flapping are listed too (their convergence is not part of the key's state).
    const flapping = m.flappingKeys ? m.flappingKeys() : m.keyBriefs().filter((b) => m.convergence?.(b.key)?.state === 'flapping').map((b) => b.key);
    for (const key of flapping) {
      if (listedIdle.has(key)) continue;
      const s = m.keyState(key);
      if (s && s.phase === 'idle') {
        idle.push({ key, phase: 'idle', failed: false, warned: false });
        listedIdle.add(key);
      }
    }
    const byKey = (a: KeyBrief, b: KeyBrief) => a.key.localeCompare(b.key);
    processing.sort(byKey);
    const total = processing.length + queuedCount + waits.length + idle.length;
    const keys: ObjectKey[] = [];
    for (const b of processing) if (keys.length < limit) keys.push(b.key);
    if (keys.length < limit && queuedCount > 0) {
      const room = limit - keys.length;
      for (const k of m.queuedKeys(Number.isFinite(room) ? room : undefined)) if (keys.length < limit) keys.push(k);
    }
    if (keys.length < limit && waits.length) {
      waits.sort((a, b) => PHASE_ORDER[a.phase] - PHASE_ORDER[b.phase] || (a.dueAt ?? 0) - (b.dueAt ?? 0) || byKey(a, b));
      for (const b of waits) if (keys.length < limit) keys.push(b.key);
    }
    if (keys.length < limit && idle.length) {
      idle.sort(byKey);
      for (const b of idle) if (keys.length < limit) keys.push(b.key);
    }
    return { keys, total };
  }

  /** The keys shown, in display order. */
  visibleStates(): KeyState[] {
    return this.visible().states;
  }

  /** The row of `key` (the one handed to VS Code while it is shown). */
  nodeFor(key: ObjectKey): QueueKeyNode | undefined {
    const resource = this.model?.primaryResource;
    if (!resource) return undefined;
    const shown = this.keyNodes.get(key);
    return shown && shown.resource === resource ? shown : { type: 'queueKey', id: `q|${key}`, resource, key };
  }

  getParent(node: QueueNode): QueueNode | undefined {
    return node.type === 'detail' ? node.parent : undefined;
  }

  getChildren(node?: QueueNode): QueueNode[] {
    const m = this.model;
    if (!m?.primaryResource) return [];
    if (!node) {
      const { keys, total } = this.listing ?? this.visibleKeys(QUEUE_VIEW_LIMIT);
      this.listing = undefined;
      const nodes = new Map<ObjectKey, QueueKeyNode>();
      const shown: QueueNode[] = [];
      for (const key of keys) {
        const n = this.nodeFor(key)!;
        nodes.set(key, n);
        shown.push(n);
      }
      this.keyNodes = nodes;
      this.shownKeys = keys;
      this.lastRefreshRows = shown.length;
      this.moreCount = total - QUEUE_VIEW_LIMIT;
      this.moreNode = undefined;
      if (total > QUEUE_VIEW_LIMIT) {
        this.moreNode = { type: 'detail', id: MORE_ID, label: moreLabel(this.moreCount), description: `the first ${QUEUE_VIEW_LIMIT} are shown, in queue order` };
        shown.push(this.moreNode);
      }
      return shown;
    }
    if (node.type === 'detail') return [];
    const s = m.keyState(node.key);
    if (!s) return [];
    const now = this.clock.now();
    const out: QueueDetailNode[] = [];
    const add = (label: string, description: string, tooltip?: string) => out.push({ type: 'detail', id: `${node.id}/${out.length}`, label, description, ...(tooltip !== undefined ? { tooltip } : {}), parent: node });
    s.reasons.forEach((r) => add('queued because', reasonSummary(r, now, s.key, m.writtenBy?.(r))));
    if (s.droppedReasons) add('queued because', `… and ${plural(s.droppedReasons, 'earlier reason')}`);
    if (!s.reasons.length) s.lastTriggers.forEach((r) => add('last run triggered by', reasonSummary(r, now, s.key, m.writtenBy?.(r))));
    const err = lastErrorLine(s, now, { oneLine: true });
    if (err) add(err.label, err.value, lastErrorLine(s, now)!.value);
    if (s.warning) add('warning', s.warning);
    const c = m.convergence?.(node.key);
    if (c) {
      const d = convergenceDetail(c, convergenceContextOf(s, this.objectOf(node.key)));
      add(d.word, d.why);
    }
    return out;
  }

  getTreeItem(node: QueueNode): vscode.TreeItem {
    markViewNode(node);
    if (node.type === 'detail') {
      const label = node === this.moreNode ? moreLabel(this.moreCount) : node.label;
      const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
      item.id = node.id;
      item.description = node.description;
      item.tooltip = `${label}: ${node.tooltip ?? node.description}`;
      item.contextValue = ContextValues.message;
      return item;
    }
    const s = this.model?.keyState(node.key);
    const item = new vscode.TreeItem(node.key, vscode.TreeItemCollapsibleState.Collapsed);
    item.id = node.id;
    if (!s) {
      item.description = 'unknown';
      item.collapsibleState = vscode.TreeItemCollapsibleState.None;
      return item;
    }
    const p = presentKey(s, this.clock.now(), this.model?.convergence?.(node.key), undefined, this.objectOf(node.key));
    item.description = p.description;
    item.iconPath = new vscode.ThemeIcon(p.icon.id, p.icon.color ? new vscode.ThemeColor(p.icon.color) : undefined);
    // The tooltip (markdown, which VS Code parses in this process for every row it receives) is made when the row is
    // hovered (resolveTreeItem), not for each of up to 500 rows on every refresh.
    item.contextValue = `${ContextValues.queueItemPrefix}:${p.state}${hasBackoff(s) ? ':backoff' : ''}`;
    if (!s.reasons.length && !s.lastTriggers.length && !s.lastError && !s.warning && !this.model?.convergence?.(node.key)) item.collapsibleState = vscode.TreeItemCollapsibleState.None;
    return item;
  }

  /** The tooltip of a key's row, made when VS Code asks for it (hover), at that moment's state. */
  resolveTreeItem(item: vscode.TreeItem, node: QueueNode): vscode.TreeItem {
    if (node.type !== 'queueKey' || item.tooltip !== undefined) return item;
    const s = this.model?.keyState(node.key);
    if (s) item.tooltip = tooltipOf(node.key, presentKey(s, this.clock.now(), this.model?.convergence?.(node.key), (r) => this.model?.writtenBy?.(r), this.objectOf(node.key)).tooltip);
    return item;
  }

  /** The cached object of a key of the loop's resource (for its convergence word: Terminating, Not Ready). */
  private objectOf(key: ObjectKey): KubeObject | undefined {
    const m = this.model;
    return m?.primaryResource ? m.get(m.primaryResource, key) : undefined;
  }

  /** Schedules a (coalesced) refresh, e.g. to re-render relative times. */
  refresh(): void {
    this.coalescer.all();
  }

  /** Delivers a pending refresh now. */
  flush(): void {
    this.coalescer.flushNow();
  }

  /**
   * Schedules a (coalesced) refresh of the key rows shown (`retry in 3s`, and under them `due 2s ago`, `(4s ago)`),
   * as a targeted refresh when the listing still shows the same keys in the same order. Not a refresh of the whole
   * view: that makes VS Code's extension host forget every row until the view has fetched them again, and an inline
   * button (Step Reconcile, Reset Backoff) or context-menu command clicked meanwhile would get no element.
   */
  refreshTimes(): void {
    if (this.keyNodes.size === 0) {
      this.coalescer.all();
      return;
    }
    for (const key of this.keyNodes.keys()) this.coalescer.mark(key);
  }

  dispose(): void {
    this.subscription?.dispose();
    this.coalescer.dispose();
    this.emitter.dispose();
    this.changeEmitter.dispose();
  }
}
