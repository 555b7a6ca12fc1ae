import * as vscode from 'vscode';
import type { Clock } from '../../core/clock.ts';
import type { KeyBrief, KeyPhase, KeyState } from '../../core/controller/keyState.ts';
import type { Disposable } from '../../core/lifecycle.ts';
import type { ObjectKey } from '../../core/k8s/keys.ts';
import { ContextValues } from '../ids.ts';
import { presentKey, reasonSummary } from './presentation.ts';
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
  readonly parent?: QueueKeyNode;
}

/**
 * The view lists at most this many keys (the head of the queue, in display order) and then one line with the
 * number left out, so that 10,000 queued keys do not become 10,000 tree items on every refresh.
 */
export const QUEUE_VIEW_LIMIT = 500;

export type QueueNode = QueueKeyNode | QueueDetailNode;

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
  private readonly emitter = new vscode.EventEmitter<QueueNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly changeEmitter = new vscode.EventEmitter<QueueCounts>();
  /** Fires after each (coalesced) refresh with the current counts. */
  readonly onDidChangeCounts = this.changeEmitter.event;
  private readonly clock: Clock;
  private readonly coalescer: RefreshCoalescer<string>;
  private model: ViewModel | undefined;
  /** Rows the last getChildren of the root returned (VS Code builds a tree item for each on every refresh). */
  private shownRows = 0;
  private subscription: Disposable | undefined;

  constructor(clock: Clock) {
    this.clock = clock;
    this.coalescer = new RefreshCoalescer<string>(clock, () => (this.shownRows > LARGE_VIEW_ROWS ? LARGE_VIEW_REFRESH_MS : TREE_REFRESH_MS), () => {
      this.emitter.fire(undefined);
      this.changeEmitter.fire(this.counts());
    });
  }

  setModel(model: ViewModel | undefined): void {
    this.subscription?.dispose();
    this.model = model;
    this.subscription = model?.onDidChange((c) => {
      if (c.type !== 'object') this.coalescer.all();
    });
    this.coalescer.all();
    this.coalescer.flushNow();
  }

  counts(): QueueCounts {
    return countPhases(this.model?.keyBriefs() ?? []);
  }

  /**
   * The keys shown, in display order: the first `limit` of them as full states, and how many there are in all.
   * Filtering and ordering work on {@link KeyBrief}s, so that only the keys shown are built as {@link KeyState}s.
   */
  visible(limit = Number.POSITIVE_INFINITY): { states: KeyState[]; total: number } {
    const m = this.model;
    if (!m) return { states: [], total: 0 };
    const order = new Map(m.queuedKeys().map((k, i) => [k, i]));
    const briefs = m
      .keyBriefs()
      .filter((b) => b.phase !== 'idle' || b.failed || b.warned || m.convergence?.(b.key)?.state === 'flapping')
      .sort(
        (a: KeyBrief, b: KeyBrief) =>
          PHASE_ORDER[a.phase] - PHASE_ORDER[b.phase] ||
          (order.get(a.key) ?? 0) - (order.get(b.key) ?? 0) ||
          (a.dueAt ?? 0) - (b.dueAt ?? 0) ||
          a.key.localeCompare(b.key),
      );
    const states: KeyState[] = [];
    for (const b of briefs.length > limit ? briefs.slice(0, limit) : briefs) {
      const s = m.keyState(b.key);
      if (s) states.push(s);
    }
    return { states, total: briefs.length };
  }

  /** The keys shown, in display order. */
  visibleStates(): KeyState[] {
    return this.visible().states;
  }

  nodeFor(key: ObjectKey): QueueKeyNode | undefined {
    const resource = this.model?.primaryResource;
    return resource ? { type: 'queueKey', id: `q|${key}`, resource, key } : undefined;
  }

  getParent(node: QueueNode): QueueNode | undefined {
    return node.type === 'detail' ? node.parent : undefined;
  }

  getChildren(node?: QueueNode): QueueNode[] {
    const m = this.model;
    if (!m?.primaryResource) return [];
    if (!node) {
      const { states, total } = this.visible(QUEUE_VIEW_LIMIT);
      const shown: QueueNode[] = states.map((s) => this.nodeFor(s.key)!);
      this.shownRows = shown.length;
      if (total > QUEUE_VIEW_LIMIT) {
        shown.push({ type: 'detail', id: 'q|more', label: `… ${total - QUEUE_VIEW_LIMIT} more keys`, description: `the first ${QUEUE_VIEW_LIMIT} are shown, in queue order` });
      }
      return shown;
    }
    if (node.type === 'detail') return [];
    const s = m.keyState(node.key);
    if (!s) return [];
    const now = this.clock.now();
    const out: QueueDetailNode[] = [];
    const add = (label: string, description: string) => out.push({ type: 'detail', id: `${node.id}/${out.length}`, label, description, parent: node });
    s.reasons.forEach((r) => add('queued because', reasonSummary(r, now)));
    if (s.droppedReasons) add('queued because', `… and ${s.droppedReasons} earlier reason(s)`);
    if (!s.reasons.length) s.lastTriggers.forEach((r) => add('last run triggered by', reasonSummary(r, now)));
    if (s.lastError) add('last error', s.lastError);
    if (s.warning) add('warning', s.warning);
    const c = m.convergence?.(node.key);
    if (c) add(c.state, c.reason);
    return out;
  }

  getTreeItem(node: QueueNode): vscode.TreeItem {
    if (node.type === 'detail') {
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
      item.id = node.id;
      item.description = node.description;
      item.tooltip = `${node.label}: ${node.description}`;
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
    const p = presentKey(s, this.clock.now(), this.model?.convergence?.(node.key));
    item.description = p.description;
    item.iconPath = new vscode.ThemeIcon(p.icon.id, p.icon.color ? new vscode.ThemeColor(p.icon.color) : undefined);
    // The tooltip (markdown, which VS Code parses in this process for every row it receives) is made when the row is
    // hovered (resolveTreeItem), not for each of up to 500 rows on every refresh.
    item.contextValue = `${ContextValues.queueItemPrefix}:${p.state}`;
    if (!s.reasons.length && !s.lastTriggers.length && !s.lastError && !s.warning && !this.model?.convergence?.(node.key)) item.collapsibleState = vscode.TreeItemCollapsibleState.None;
    return item;
  }

  /** The tooltip of a key's row, made when VS Code asks for it (hover), at that moment's state. */
  resolveTreeItem(item: vscode.TreeItem, node: QueueNode): vscode.TreeItem {
    if (node.type !== 'queueKey' || item.tooltip !== undefined) return item;
    const s = this.model?.keyState(node.key);
    if (s) item.tooltip = tooltipOf(node.key, presentKey(s, this.clock.now(), this.model?.convergence?.(node.key)).tooltip);
    return item;
  }

  /** Schedules a (coalesced) refresh, e.g. to re-render relative times. */
  refresh(): void {
    this.coalescer.all();
  }

  dispose(): void {
    this.subscription?.dispose();
    this.coalescer.dispose();
    this.emitter.dispose();
    this.changeEmitter.dispose();
  }
}
