import * as vscode from 'vscode';
import { markViewNode } from './viewNodes.ts';
import type { Clock } from '../../core/clock.ts';
import type { Disposable } from '../../core/lifecycle.ts';
import { keyOf, splitKey, type ObjectKey } from '../../core/k8s/keys.ts';
import type { Condition, KubeObject } from '../../core/k8s/objects.ts';
import { ContextValues } from '../ids.ts';
import { inertMarkdown } from '../safeText.ts';
import { isSecret } from '../../core/k8s/secretMask.ts';
import { ageOf, plural } from './format.ts';
import { finalizersOf, hasBackoff, kindLabels, presentCondition, presentNamespaceRow, presentObject, type IconSpec, type TooltipLine } from './presentation.ts';
import { RefreshCoalescer } from './refreshCoalescer.ts';
import { matchesFilter, type ObjectStateFilter } from './stateFilter.ts';
import type { ViewModel, WatchedResourceView } from './viewModel.ts';
import type { ObjectEvent } from '../../core/actions/events.ts';

/**
 * Elements of the Resources view: plain data naming what they show, never
 * the objects themselves (the cache is read again when VS Code asks). Every
 * element that concerns one object carries `resource` ("plural.group") and
 * `key`, so it can be passed to any command as its argument.
 */
export type ResourceNode = KindNode | NamespaceNode | RangeNode | ObjectNode | FinalizersNode | FinalizerNode | ConditionsNode | ConditionNode | EventsNode | EventNode;

export interface KindNode {
  readonly type: 'kind';
  readonly id: string;
  readonly resource: string;
}
export interface NamespaceNode {
  readonly type: 'namespace';
  readonly id: string;
  readonly resource: string;
  readonly namespace: string;
  readonly parent: KindNode;
}
/**
 * A slice of a long object list: a namespace (or a cluster-scoped kind) with more than {@link PAGE_SIZE} objects shows
 * them in ranges of PAGE_SIZE by name ("w-00000 … w-00199"), so that no expansion or refresh hands VS Code thousands of
 * items at once. `from`/`to` are positions in the sorted list (to exclusive); the id is stable per position.
 */
export interface RangeNode {
  readonly type: 'range';
  readonly id: string;
  readonly resource: string;
  readonly from: number;
  readonly to: number;
  readonly parent: KindNode | NamespaceNode;
}
export interface ObjectNode {
  readonly type: 'object';
  readonly id: string;
  readonly resource: string;
  readonly key: ObjectKey;
  /** The kind/namespace node (or its range), or the owner's node for an owned child. */
  readonly parent: KindNode | NamespaceNode | RangeNode | ObjectNode;
  /** 0 for top-level objects, n for an owned child n levels down. */
  readonly depth: number;
}
export interface FinalizersNode {
  readonly type: 'finalizers';
  readonly id: string;
  readonly resource: string;
  readonly key: ObjectKey;
  readonly parent: ObjectNode;
}
export interface FinalizerNode {
  readonly type: 'finalizer';
  readonly id: string;
  readonly resource: string;
  readonly key: ObjectKey;
  readonly finalizer: string;
  readonly parent: FinalizersNode;
}
export interface ConditionsNode {
  readonly type: 'conditions';
  readonly id: string;
  readonly resource: string;
  readonly key: ObjectKey;
  readonly parent: ObjectNode;
}
export interface ConditionNode {
  readonly type: 'condition';
  readonly id: string;
  readonly resource: string;
  readonly key: ObjectKey;
  readonly conditionType: string;
  readonly parent: ConditionsNode;
}

/** The object's Kubernetes Events (fetched when the node is shown, see {@link ResourcesTreeProvider.setEventSource}). */
export interface EventsNode {
  readonly type: 'events';
  readonly id: string;
  readonly resource: string;
  readonly key: ObjectKey;
  readonly parent: ObjectNode;
}
/** One Event (or the loading / error line, when `event` is undefined). */
export interface EventNode {
  readonly type: 'event';
  readonly id: string;
  readonly resource: string;
  readonly key: ObjectKey;
  readonly event?: ObjectEvent;
  readonly note?: string;
  readonly parent: EventsNode;
}

/** Fetches the Events of a cached object (reads only). */
export type EventSource = (resource: string, obj: KubeObject) => Promise<ObjectEvent[]>;

/** Events are fetched again when shown after this long. */
export const EVENTS_TTL_MS = 10_000;

interface EventsEntry {
  at: number;
  uid: string | undefined;
  items?: ObjectEvent[];
  error?: string;
  pending?: boolean;
}

/** Owned children are shown this many levels deep at most (and never twice on one path). */
const MAX_OWNER_DEPTH = 4;
/**
 * Refreshes are coalesced: at most one per this many ms, whatever the event rate. More than VS Code's 200 ms: its
 * extension host delivers a view's refreshes through a debounce that every new refresh restarts, so refreshes 100 ms
 * apart, kept up by a steady stream of changes, were held back until the stream paused (the view froze).
 */
export const TREE_REFRESH_MS = 250;
/** When a refresh made VS Code fetch more than this many rows, the next one waits {@link LARGE_REFRESH_MS}. */
export const LARGE_REFRESH_ROWS = 100;
export const LARGE_REFRESH_MS = 500;
/** A list of more top-level objects than this is shown in ranges of this many (see {@link RangeNode}). */
export const PAGE_SIZE = 100;
/** The order of object names in the tree: a collator (localeCompare's order, many times faster) that orders digits by value, so
 * ranges read as ranges ("x-2 … x-878", not "x-1878 … x-878"). */
const byName = new Intl.Collator(undefined, { numeric: true }).compare;
/** Marks a work-queue key's change in the refresh coalescer (object changes are marked `resource|key`). */
const KEY_MARK = 'key\u0000';
/**
 * Marks a row whose text only needs re-rendering because time passed (a Terminating age, `retry in 3s`): the mark is
 * the row's `resource|key` or node id. Time alone changes no row's place nor whether a state filter shows it, so these
 * rows are refreshed by themselves even while a filter is set.
 */
const TIME_MARK = 'time\u0000';
/**
 * Marks an object's Events having arrived (the mark is its `resource|key`): only its Events rows are refreshed (their
 * count and list), even while a filter is set, since Events change no row's place nor what a filter shows.
 */
const EVENTS_MARK = 'events\u0000';

/** A top-level object as a sorted list keeps it: what its rows and ranges need, not the object itself. */
interface Listed {
  readonly key: ObjectKey;
  readonly name: string;
}

function sortedByName(objects: readonly KubeObject[]): Listed[] {
  const out: Listed[] = objects.map((o) => ({ key: keyOf(o), name: o.metadata.name ?? '' }));
  return out.sort((a, b) => byName(a.name, b.name));
}

export function kindNode(resource: string): KindNode {
  return { type: 'kind', id: `k|${resource}`, resource };
}

function namespaceNode(parent: KindNode, namespace: string): NamespaceNode {
  return { type: 'namespace', id: `n|${parent.resource}|${namespace}`, resource: parent.resource, namespace, parent };
}

function rangeNode(parent: KindNode | NamespaceNode, from: number, to: number): RangeNode {
  return { type: 'range', id: `r|${parent.id}|${from}`, resource: parent.resource, from, to, parent };
}

function objectNode(parent: KindNode | NamespaceNode | RangeNode | ObjectNode, resource: string, key: ObjectKey): ObjectNode {
  const depth = parent.type === 'object' ? parent.depth + 1 : 0;
  const id = parent.type === 'object' ? `${parent.id}>${resource}|${key}` : `o|${resource}|${key}`;
  return { type: 'object', id, resource, key, parent, depth };
}

/**
 * How an owned child is named under its owner (after its kind): by name when it shares the owner's namespace (a
 * namespaced owner's children always do), else by its whole key — a cluster-scoped owner's namespaced children live
 * in namespaces of their own, often one object of the same name in each ("ConfigMap team-a/tenant-info",
 * "ConfigMap team-b/tenant-info"), and the owner's row names no namespace to read them in.
 */
export function ownedChildName(node: Pick<ObjectNode, 'key' | 'parent'>): string {
  const { namespace, name } = splitKey(node.key);
  const ownerNamespace = node.parent.type === 'object' ? splitKey(node.parent.key).namespace : namespace;
  return namespace === ownerNamespace ? name : node.key;
}

function conditionsOf(obj: KubeObject): Condition[] {
  const c = (obj.status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(c) ? (c as Condition[]).filter((x) => x && typeof x.type === 'string') : [];
}

function themeIcon(icon: IconSpec): vscode.ThemeIcon {
  return new vscode.ThemeIcon(icon.id, icon.color ? new vscode.ThemeColor(icon.color) : undefined);
}

/**
 * A tooltip whose title and values are cluster data: each goes in through {@link inertMarkdown}, so it reads as
 * itself (no link, image, HTML or icon, not even from a bare URL or a `www.` name).
 */
export function tooltipOf(title: string, lines: readonly TooltipLine[]): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${inertMarkdown(title)}**\n\n`);
  for (const l of lines) md.appendMarkdown(`- ${inertMarkdown(`${l.label}: ${l.value}`)}\n`);
  return md;
}

function stateText(r: WatchedResourceView): string | undefined {
  switch (r.state.phase) {
    case 'listing':
      if (r.state.stalled) return `not listed: ${r.state.stalled.listError}`;
      return r.state.watchList ? 'listing… (streaming, WatchList)' : 'listing…';
    case 'backoff':
      return `retrying in ${Math.ceil(r.state.retryInMs / 1000)}s: ${r.state.lastError}`;
    case 'stopped':
      return 'stopped';
    case 'idle':
      return 'idle';
    case 'watching':
      return r.synced ? undefined : 'syncing…';
  }
}

/**
 * The Resources view: kind → namespace → object → owned children, finalizers
 * and conditions. It reads a {@link ViewModel} and changes nothing. Bursts of
 * cache and queue events are coalesced into one refresh per
 * {@link TREE_REFRESH_MS}; ids are stable (derived from resource and key), so
 * expansion and selection survive refreshes, and {@link getParent} makes
 * `reveal` work.
 */
export class ResourcesTreeProvider implements vscode.TreeDataProvider<ResourceNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<ResourceNode | ResourceNode[] | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly clock: Clock;
  private readonly coalescer: RefreshCoalescer<string>;
  private model: ViewModel | undefined;
  private modelSubscription: Disposable | undefined;
  private stateFilter: ReadonlySet<ObjectStateFilter> = new Set();
  private eventSource: EventSource | undefined;
  private readonly events = new Map<string, EventsEntry>();
  /**
   * Sorted top-level objects (key and name) per kind/namespace node id, until the next full refresh (ranges of one
   * list share one sort; only a full refresh can change which objects a list holds, see {@link refreshRows}).
   */
  private readonly sorted = new Map<string, Listed[]>();
  /**
   * The kind, namespace, range, object and Events nodes handed out since the last full refresh, by id: one object per id,
   * because VS Code's extension host matches the elements of a refresh by identity.
   */
  private readonly nodes = new Map<string, ResourceNode>();
  /** The object nodes handed out since the last full refresh, per object (`resource|key`): its rows. */
  private readonly rowsOf = new Map<string, ObjectNode[]>();
  /** Refreshes that re-rendered only the rows of changed objects (the rest: the whole view). For tests and benchmarks. */
  targetedRefreshes = 0;
  private disposed = false;
  /** Rows returned by getChildren since the last refresh, and after the one before it (see the coalescer's delay). */
  private rowsSinceRefresh = 0;
  private lastRefreshRows = 0;

  constructor(clock: Clock) {
    this.clock = clock;
    // A refresh after which VS Code fetched many rows (an expanded range of 100 objects beside 100 range rows) is
    // followed by the next no sooner than LARGE_REFRESH_MS: VS Code rebuilds every fetched row in this process.
    this.coalescer = new RefreshCoalescer<string>(clock, () => (this.lastRefreshRows > LARGE_REFRESH_ROWS ? LARGE_REFRESH_MS : TREE_REFRESH_MS), (marks) => this.refreshRows(marks));
  }

  /**
   * Delivers one coalesced refresh. When every change only concerns the rows of objects (updates that kept their
   * place, see {@link ViewChange}, and work-queue changes of loop keys) and no state filter is set, only the rows
   * of those objects that VS Code was given are refreshed (VS Code rebuilds those, and the children of the ones
   * that are expanded); otherwise the whole view is.
   */
  private refreshRows(marks: ReadonlySet<string> | undefined): void {
    if (marks && (this.stateFilter.size === 0 || [...marks].every((m) => m.startsWith(TIME_MARK) || m.startsWith(EVENTS_MARK)))) {
      const primary = this.model?.primaryResource;
      const rows: ResourceNode[] = [];
      const seen = new Set<string>();
      for (const marked of marks) {
        if (marked.startsWith(EVENTS_MARK)) {
          // The Events node of each row of the object VS Code was given (the same element: it matches by identity).
          for (const row of this.rowsOf.get(marked.slice(EVENTS_MARK.length)) ?? []) {
            const events = this.nodes.get(`${row.id}/e`);
            if (events && !seen.has(events.id)) {
              seen.add(events.id);
              rows.push(events);
            }
          }
          continue;
        }
        const mark = marked.startsWith(TIME_MARK) ? marked.slice(TIME_MARK.length) : marked;
        const id = mark.startsWith(KEY_MARK) ? (primary !== undefined ? `${primary}|${mark.slice(KEY_MARK.length)}` : undefined) : mark;
        if (id === undefined || seen.has(id)) continue;
        seen.add(id);
        const node = this.nodes.get(id);
        const shown = this.rowsOf.get(id) ?? (node?.type === 'namespace' ? [node] : undefined);
        if (shown) for (const n of shown) rows.push(n);
      }
      this.targetedRefreshes++;
      this.lastRefreshRows = this.rowsSinceRefresh + rows.length;
      this.rowsSinceRefresh = 0;
      if (rows.length) this.emitter.fire(rows);
      return;
    }
    this.lastRefreshRows = this.rowsSinceRefresh;
    this.rowsSinceRefresh = 0;
    this.sorted.clear();
    this.nodes.clear();
    this.rowsOf.clear();
    this.emitter.fire(undefined);
  }

  /** The node handed out before under `n.id` when it is the same row (same parent, same range), else `n`, kept. */
  private intern<N extends KindNode | NamespaceNode | RangeNode | ObjectNode | EventsNode>(n: N): N {
    const prev = this.nodes.get(n.id);
    if (prev && prev.type === n.type && (prev.type === 'kind' || (prev as { parent: unknown }).parent === (n as { parent?: unknown }).parent)) {
      if (prev.type !== 'range' || (prev.from === (n as RangeNode).from && prev.to === (n as RangeNode).to)) return prev as N;
    }
    this.nodes.set(n.id, n);
    if (n.type === 'object') {
      const id = `${n.resource}|${n.key}`;
      const rows = this.rowsOf.get(id);
      if (!rows) this.rowsOf.set(id, [n]);
      else {
        const i = rows.findIndex((r) => r.id === n.id);
        if (i >= 0) rows[i] = n;
        else rows.push(n);
      }
    }
    return n;
  }

  /** Number of refreshes delivered to VS Code (for tests of coalescing). */
  get refreshCount(): number {
    return this.coalescer.flushes;
  }

  /** Shows another connection's caches (or nothing). */
  setModel(model: ViewModel | undefined): void {
    this.modelSubscription?.dispose();
    this.model = model;
    this.modelSubscription = model?.onDidChange((c) => {
      if (c.type === 'object' && c.rowOnly) this.coalescer.mark(`${c.resource}|${c.key}`);
      else if (c.type === 'key') this.coalescer.mark(KEY_MARK + c.key);
      else this.coalescer.all();
    });
    this.coalescer.all();
    this.coalescer.flushNow();
  }

  /** Where the Events of objects come from (undefined: no Events nodes). Forgets what was fetched. */
  setEventSource(source: EventSource | undefined): void {
    this.eventSource = source;
    this.events.clear();
  }

  /**
   * The cached Events of an object, fetching them (once at a time, again after {@link EVENTS_TTL_MS}) and
   * refreshing the view when they arrive. Undefined until the first answer.
   */
  eventsOf(resource: string, key: ObjectKey): EventsEntry | undefined {
    const obj = this.model?.get(resource, key);
    const source = this.eventSource;
    if (!obj || !source) return undefined;
    const id = `${resource}|${key}`;
    let e = this.events.get(id);
    if (e && e.uid !== obj.metadata.uid) e = undefined;
    const now = this.clock.now();
    if (!e || (!e.pending && now - e.at >= EVENTS_TTL_MS)) {
      const entry: EventsEntry = { ...(e ?? {}), at: now, uid: obj.metadata.uid, pending: true };
      this.events.set(id, entry);
      source(resource, obj).then(
        (items) => {
          entry.items = items;
          delete entry.error;
        },
        (err: unknown) => {
          entry.error = err instanceof Error ? err.message : String(err);
        },
      ).finally(() => {
        entry.pending = false;
        entry.at = this.clock.now();
        // Only the object's Events rows: a whole-view refresh (every EVENTS_TTL_MS while an object is expanded) made
        // VS Code forget every row meanwhile, and Strip Finalizers… picked then on a row asked which object.
        if (!this.disposed) this.coalescer.mark(EVENTS_MARK + id);
      });
      e = entry;
    }
    return e.items || e.error ? e : undefined;
  }

  /** The state filter in force (empty: every object is shown). */
  get filter(): ReadonlySet<ObjectStateFilter> {
    return this.stateFilter;
  }

  /**
   * Shows only top-level objects in one of `states` (see stateFilter.ts; empty: all). Kinds and
   * namespaces stay listed, namespaces with no matching object are hidden. Refreshes at once.
   */
  setFilter(states: Iterable<ObjectStateFilter>): void {
    this.stateFilter = new Set(states);
    this.coalescer.all();
    this.coalescer.flushNow();
  }

  /** The objects of a resource the filter lets through. */
  private visible(resource: string): KubeObject[] {
    const m = this.model;
    if (!m) return [];
    const all = m.list(resource);
    if (this.stateFilter.size === 0) return all;
    const primary = m.primaryResource === resource;
    return all.filter((o) => {
      const key = keyOf(o);
      return matchesFilter(this.stateFilter, o, primary ? m.keyState(key) : undefined, primary ? m.convergence?.(key) : undefined);
    });
  }

  /** Delivers a pending refresh now (before a reveal, so the element exists). */
  flush(): void {
    this.coalescer.flushNow();
  }

  /** Holds timed refreshes back while a reveal is in flight, until disposed (see {@link RefreshCoalescer.hold}). */
  holdRefreshes(): Disposable {
    return this.coalescer.hold();
  }

  /**
   * The node of a cached object on its top-level path (kind → namespace →
   * object), or undefined when the resource is not watched or the object is
   * not cached.
   */
  nodeFor(resource: string, key: ObjectKey): ObjectNode | undefined {
    const m = this.model;
    if (!m) return undefined;
    const r = m.resources.find((x) => x.id === resource);
    if (!r || !m.get(resource, key)) return undefined;
    const kind = this.intern(kindNode(resource));
    const ns = splitKey(key).namespace;
    const parent = r.info.namespaced && ns ? this.intern(namespaceNode(kind, ns)) : kind;
    const list = this.topLevel(parent);
    if (list.length <= PAGE_SIZE) return this.intern(objectNode(parent, resource, key));
    const at = list.findIndex((o) => o.key === key);
    if (at < 0) return this.intern(objectNode(parent, resource, key));
    const from = at - (at % PAGE_SIZE);
    return this.intern(objectNode(this.intern(rangeNode(parent, from, Math.min(list.length, from + PAGE_SIZE))), resource, key));
  }

  getParent(node: ResourceNode): ResourceNode | undefined {
    return node.type === 'kind' ? undefined : node.parent;
  }

  /** The top-level objects under a kind (cluster-scoped) or namespace node, visible under the filter, sorted by name. */
  private topLevel(node: KindNode | NamespaceNode): Listed[] {
    let list = this.sorted.get(node.id);
    if (!list) {
      const objects = this.visible(node.resource);
      list = sortedByName(node.type === 'namespace' ? objects.filter((o) => (o.metadata.namespace ?? '') === node.namespace) : objects);
      this.sorted.set(node.id, list);
    }
    return list;
  }

  /** Object nodes of a short list, or ranges of PAGE_SIZE for a long one. */
  private paged(node: KindNode | NamespaceNode): ResourceNode[] {
    const list = this.topLevel(node);
    if (list.length <= PAGE_SIZE) return list.map((o) => this.intern(objectNode(node, node.resource, o.key)));
    const out: RangeNode[] = [];
    for (let from = 0; from < list.length; from += PAGE_SIZE) out.push(this.intern(rangeNode(node, from, Math.min(list.length, from + PAGE_SIZE))));
    return out;
  }

  getChildren(node?: ResourceNode): ResourceNode[] {
    const children = this.childrenOf(node);
    this.rowsSinceRefresh += children.length;
    return children;
  }

  private childrenOf(node?: ResourceNode): ResourceNode[] {
    const m = this.model;
    if (!m) return [];
    if (!node) return m.resources.map((r) => this.intern(kindNode(r.id)));
    switch (node.type) {
      case 'kind': {
        const r = m.resources.find((x) => x.id === node.resource);
        if (!r) return [];
        const objects = this.visible(node.resource);
        if (!r.info.namespaced) return this.paged(node);
        const namespaces = [...new Set(objects.map((o) => o.metadata.namespace ?? ''))].sort();
        return namespaces.map((ns) => this.intern(namespaceNode(node, ns)));
      }
      case 'namespace':
        return this.paged(node);
      case 'range':
        return this.topLevel(node.parent)
          .slice(node.from, node.to)
          .map((o) => this.intern(objectNode(node, node.resource, o.key)));
      case 'object': {
        const obj = m.get(node.resource, node.key);
        if (!obj) return [];
        const out: ResourceNode[] = [];
        if (finalizersOf(obj, node.resource).length) out.push({ type: 'finalizers', id: `${node.id}/f`, resource: node.resource, key: node.key, parent: node });
        if (conditionsOf(obj).length) out.push({ type: 'conditions', id: `${node.id}/c`, resource: node.resource, key: node.key, parent: node });
        if (obj.metadata.uid && node.depth < MAX_OWNER_DEPTH) {
          const onPath = new Set<string>();
          for (let p: ResourceNode | undefined = node; p; p = this.getParent(p)) if (p.type === 'object') onPath.add(`${p.resource}|${p.key}`);
          const children = m
            .ownedBy(obj.metadata.uid)
            .filter((c) => !onPath.has(`${c.resource}|${keyOf(c.object)}`))
            .sort((a, b) => a.resource.localeCompare(b.resource) || keyOf(a.object).localeCompare(keyOf(b.object)));
          for (const c of children) out.push(this.intern(objectNode(node, c.resource, keyOf(c.object))));
        }
        if (this.eventSource) out.push(this.intern<EventsNode>({ type: 'events', id: `${node.id}/e`, resource: node.resource, key: node.key, parent: node }));
        return out;
      }
      case 'finalizers':
        return (((o) => (o ? finalizersOf(o, node.resource) : []))(m.get(node.resource, node.key))).map((f) => ({
          type: 'finalizer',
          id: `${node.id}|${f}`,
          resource: node.resource,
          key: node.key,
          finalizer: f,
          parent: node,
        }));
      case 'conditions': {
        const obj = m.get(node.resource, node.key);
        return (obj ? conditionsOf(obj) : []).map((c) => ({
          type: 'condition',
          id: `${node.id}|${c.type}`,
          resource: node.resource,
          key: node.key,
          conditionType: c.type,
          parent: node,
        }));
      }
      case 'events': {
        const e = this.eventsOf(node.resource, node.key);
        const line = (note: string): EventNode[] => [{ type: 'event', id: `${node.id}|note`, resource: node.resource, key: node.key, note, parent: node }];
        if (!e) return line('loading…');
        if (e.error && !e.items) return line(`cannot list Events: ${e.error}`);
        if (!e.items?.length) return line('no Events');
        return e.items.map((ev) => ({ type: 'event', id: `${node.id}|${ev.name}`, resource: node.resource, key: node.key, event: ev, parent: node }));
      }
      case 'finalizer':
      case 'condition':
      case 'event':
        return [];
    }
  }

  /** An object row's tooltip, made when VS Code asks for it (hover), at that moment's state. */
  resolveTreeItem(item: vscode.TreeItem, node: ResourceNode): vscode.TreeItem {
    if (node.type !== 'object' || item.tooltip !== undefined) return item;
    const m = this.model;
    const obj = m?.get(node.resource, node.key);
    if (!obj) return item;
    const outside = m?.primaryResource === node.resource ? m.outsideController?.(node.key) : undefined;
    const isPrimary = m?.primaryResource === node.resource && !outside;
    const p = presentObject(obj, isPrimary ? m?.keyState(node.key) : undefined, this.clock.now(), isPrimary ? m?.convergence?.(node.key) : undefined, node.resource);
    item.tooltip = tooltipOf(`${obj.kind ?? node.resource} ${node.key}`, outside ? [...p.tooltip, { label: 'Controller', value: `not reconciled: ${outside}` }] : p.tooltip);
    return item;
  }

  getTreeItem(node: ResourceNode): vscode.TreeItem {
    markViewNode(node);
    const m = this.model;
    const now = this.clock.now();
    const None = vscode.TreeItemCollapsibleState.None;
    const Collapsed = vscode.TreeItemCollapsibleState.Collapsed;
    switch (node.type) {
      case 'kind': {
        const r = m?.resources.find((x) => x.id === node.resource);
        const objects = m?.list(node.resource) ?? [];
        // The loop's resource starts expanded; VS Code keeps whatever the person chooses afterwards (by id).
        const open = m?.primaryResource === node.resource ? vscode.TreeItemCollapsibleState.Expanded : Collapsed;
        const shown = this.stateFilter.size ? this.visible(node.resource).length : objects.length;
        const label = (m ? kindLabels(m.resources).get(node.resource) : undefined) ?? r?.info.kind ?? node.resource;
        const item = new vscode.TreeItem(label, shown ? open : None);
        item.id = node.id;
        const terminating = objects.filter((o) => o.metadata.deletionTimestamp).length;
        const state = r ? stateText(r) : 'not watched';
        item.description = [
          this.stateFilter.size ? `${shown} of ${objects.length} shown` : String(objects.length),
          terminating ? `${terminating} terminating` : undefined,
          state,
          m?.primaryResource === node.resource ? (m.loopAvailable === false ? 'no loop: not reconciled' : `reconciled by ${m.reconciledBy ?? 'the loop'}`) : undefined,
          node.resource,
        ]
          .filter(Boolean)
          .join(' · ');
        item.iconPath = themeIcon(r?.state.phase === 'backoff' ? { id: 'warning', color: 'list.warningForeground' } : { id: m?.primaryResource === node.resource ? 'symbol-event' : 'symbol-class' });
        item.contextValue = ContextValues.kind;
        const lines: TooltipLine[] = [];
        if (r) {
          lines.push({ label: 'Resource', value: `${r.info.group || 'core'}/${r.info.version} ${r.info.resource} (${r.info.namespaced ? 'namespaced' : 'cluster-scoped'})` });
          lines.push({ label: 'Informer', value: `${r.state.phase}${r.synced ? ', synced' : ', not synced'}` });
          if ('resourceVersion' in r.state && r.state.resourceVersion) lines.push({ label: 'Last resourceVersion', value: r.state.resourceVersion });
          if (r.state.phase === 'backoff') lines.push({ label: 'Last error', value: r.state.lastError });
        }
        lines.push({ label: 'Objects', value: String(objects.length) });
        item.tooltip = tooltipOf(label, lines);
        return item;
      }
      case 'namespace': {
        const item = new vscode.TreeItem(node.namespace, vscode.TreeItemCollapsibleState.Expanded);
        item.id = node.id;
        const objects = (m?.list(node.resource) ?? []).filter((o) => (o.metadata.namespace ?? '') === node.namespace);
        const terminating = objects.filter((o) => o.metadata.deletionTimestamp).length;
        const shown = this.stateFilter.size ? this.visible(node.resource).filter((o) => (o.metadata.namespace ?? '') === node.namespace).length : undefined;
        const namespacesWatched = Boolean(m?.resources.some((r) => r.id === 'namespaces'));
        const namespaceObject = namespacesWatched ? m?.get('namespaces', node.namespace) : undefined;
        const p = presentNamespaceRow(
          {
            total: objects.length,
            ...(shown !== undefined ? { shown } : {}),
            terminatingObjects: terminating,
            namespacesWatched,
            ...(namespaceObject ? { namespaceObject } : {}),
          },
          this.clock.now(),
        );
        item.description = p.description;
        item.tooltip = tooltipOf(`Namespace ${node.namespace}`, p.tooltip);
        item.iconPath = p.icon.color ? new vscode.ThemeIcon(p.icon.id, new vscode.ThemeColor(p.icon.color)) : new vscode.ThemeIcon(p.icon.id);
        item.contextValue = ContextValues.namespace;
        return item;
      }
      case 'range': {
        const list = this.topLevel(node.parent);
        const first = list[node.from]?.name ?? '';
        const last = list[Math.min(node.to, list.length) - 1]?.name ?? '';
        const item = new vscode.TreeItem(`${first} … ${last}`, Collapsed);
        item.id = node.id;
        item.description = plural(node.to - node.from, 'object');
        item.iconPath = new vscode.ThemeIcon('list-flat');
        item.tooltip = `${node.from + 1}–${node.to} of ${list.length} (sorted by name, ${PAGE_SIZE} per range)`;
        return item;
      }
      case 'object': {
        const obj = m?.get(node.resource, node.key);
        const name = splitKey(node.key).name;
        // A key the shown controller never reconciles (outside its Go manager's cache) is no key of its queue.
        const outside = m?.primaryResource === node.resource ? m.outsideController?.(node.key) : undefined;
        const isPrimary = m?.primaryResource === node.resource && !outside;
        if (!obj) {
          const gone = new vscode.TreeItem(name, None);
          gone.id = node.id;
          gone.description = 'not in cache';
          return gone;
        }
        const p = presentObject(obj, isPrimary ? m?.keyState(node.key) : undefined, now, isPrimary ? m?.convergence?.(node.key) : undefined, node.resource);
        const hasChildren = Boolean(this.eventSource || finalizersOf(obj, node.resource).length || conditionsOf(obj).length || (obj.metadata.uid && m?.ownedBy(obj.metadata.uid).length));
        const label = node.depth > 0 ? `${obj.kind ?? node.resource} ${ownedChildName(node)}` : name;
        const item = new vscode.TreeItem(label, hasChildren ? (p.terminating ? vscode.TreeItemCollapsibleState.Expanded : Collapsed) : None);
        item.id = node.id;
        item.description = outside ? [p.description, outside].filter(Boolean).join(' · ') : p.description;
        item.iconPath = themeIcon(p.icon);
        // The tooltip (markdown: VS Code parses it in this process for every row it receives, on every refresh) is
        // made on hover, by resolveTreeItem.
        item.contextValue = `${ContextValues.objectPrefix}:${p.state}${isPrimary ? ':primary' : ''}${isPrimary && hasBackoff(m?.keyState(node.key)) ? ':backoff' : ''}${isSecret(obj) ? ':secret' : ''}`;
        item.accessibilityInformation = { label: `${label}${item.description ? `, ${String(item.description)}` : ''}` };
        return item;
      }
      case 'finalizers': {
        const n = ((o) => (o ? finalizersOf(o, node.resource).length : 0))(m?.get(node.resource, node.key));
        const item = new vscode.TreeItem('Finalizers', vscode.TreeItemCollapsibleState.Expanded);
        item.id = node.id;
        item.description = plural(n, 'finalizer');
        item.iconPath = new vscode.ThemeIcon('lock');
        item.contextValue = ContextValues.finalizerGroup;
        return item;
      }
      case 'finalizer': {
        const item = new vscode.TreeItem(node.finalizer, None);
        item.id = node.id;
        const terminating = Boolean(m?.get(node.resource, node.key)?.metadata.deletionTimestamp);
        item.description = terminating ? 'blocking deletion' : undefined;
        item.iconPath = new vscode.ThemeIcon('lock-small', terminating ? new vscode.ThemeColor('list.warningForeground') : undefined);
        item.tooltip = tooltipOf(node.finalizer, [
          { label: 'Object', value: `${node.resource} ${node.key}` },
          { label: 'Meaning', value: terminating ? 'the object is deleted once every finalizer is removed by its owner' : 'its owner runs cleanup before the object can be deleted' },
        ]);
        item.contextValue = ContextValues.finalizer;
        return item;
      }
      case 'conditions': {
        const obj = m?.get(node.resource, node.key);
        const conds = obj ? conditionsOf(obj) : [];
        const item = new vscode.TreeItem('Conditions', Collapsed);
        item.id = node.id;
        item.description = conds.map((c) => `${c.type}=${c.status}`).join(', ');
        item.iconPath = new vscode.ThemeIcon('checklist');
        item.contextValue = ContextValues.conditionGroup;
        return item;
      }
      case 'events': {
        const e = this.eventsOf(node.resource, node.key);
        const item = new vscode.TreeItem('Events', Collapsed);
        item.id = node.id;
        const warnings = e?.items?.filter((x) => x.type === 'Warning').length ?? 0;
        item.description = !e ? 'loading…' : e.items ? `${e.items.length}${warnings ? ` · ${plural(warnings, 'warning')}` : ''}` : 'unavailable';
        item.iconPath = warnings ? new vscode.ThemeIcon('bell-dot', new vscode.ThemeColor('list.warningForeground')) : new vscode.ThemeIcon('bell');
        item.tooltip = tooltipOf('Kubernetes Events', [
          { label: 'Object', value: `${node.resource} ${node.key}` },
          { label: 'Source', value: 'core/v1 and events.k8s.io/v1 Events whose involved object is this one (kubectl describe), newest first' },
          ...(e?.error ? [{ label: 'Last error', value: e.error }] : []),
        ]);
        item.contextValue = ContextValues.eventGroup;
        return item;
      }
      case 'event': {
        const ev = node.event;
        if (!ev) {
          const item = new vscode.TreeItem(node.note ?? '', None);
          item.id = node.id;
          item.contextValue = ContextValues.event;
          return item;
        }
        const item = new vscode.TreeItem(ev.reason || '(no reason)', None);
        item.id = node.id;
        const when = ev.lastSeen ? ageOf(ev.lastSeen, now) : undefined;
        item.description = [ev.count > 1 ? `×${ev.count}` : undefined, when ? `${when} ago` : undefined, ev.message].filter(Boolean).join(' · ');
        item.iconPath = ev.type === 'Warning' ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground')) : new vscode.ThemeIcon('info');
        item.tooltip = tooltipOf(`${ev.type} ${ev.reason}`, [
          { label: 'Message', value: ev.message },
          { label: 'Count', value: String(ev.count) },
          ...(ev.firstSeen ? [{ label: 'First seen', value: ev.firstSeen }] : []),
          ...(ev.lastSeen ? [{ label: 'Last seen', value: ev.lastSeen }] : []),
          ...(ev.source ? [{ label: 'Reported by', value: ev.source }] : []),
          ...(ev.action ? [{ label: 'Action', value: ev.action }] : []),
          { label: 'Event', value: ev.name },
        ]);
        item.contextValue = `${ContextValues.event}:${ev.type === 'Warning' ? 'warning' : 'normal'}`;
        return item;
      }
      case 'condition': {
        const obj = m?.get(node.resource, node.key);
        const c = obj ? conditionsOf(obj).find((x) => x.type === node.conditionType) : undefined;
        if (!c) return Object.assign(new vscode.TreeItem(node.conditionType, None), { id: node.id });
        const p = presentCondition(c, now);
        const item = new vscode.TreeItem(p.label, None);
        item.id = node.id;
        item.description = p.description;
        item.iconPath = themeIcon(p.icon);
        item.tooltip = tooltipOf(c.type, [
          { label: 'Status', value: c.status },
          ...(c.reason ? [{ label: 'Reason', value: c.reason }] : []),
          ...(c.message ? [{ label: 'Message', value: c.message }] : []),
          ...(c.lastTransitionTime ? [{ label: 'Last transition', value: c.lastTransitionTime }] : []),
          ...(c.observedGeneration !== undefined ? [{ label: 'Observed generation', value: String(c.observedGeneration) }] : []),
        ]);
        item.contextValue = `${ContextValues.condition}:${p.state}`;
        return item;
      }
    }
  }

  /** Schedules a (coalesced) refresh of the whole view. */
  refresh(): void {
    this.coalescer.all();
  }

  /**
   * Schedules a (coalesced) refresh of the rows whose text shows a relative time: Terminating objects (their age),
   * the loop's keys waiting for a retry or requeue or being reconciled (`retry in 3s`), and, when namespaces are
   * watched, Terminating namespace rows. Only those rows: a refresh of the whole view makes VS Code's extension host
   * forget every row until the view has fetched them again, and a command picked meanwhile from a row's context menu
   * or inline button would get no element (it would ask which object instead of acting on the row). Once a second
   * while such a row is shown, that window was hit often (Strip Finalizers… on a stuck object asked which object).
   */
  refreshTimes(): void {
    const m = this.model;
    if (!m) return;
    const primary = m.primaryResource;
    for (const id of this.rowsOf.keys()) {
      const bar = id.indexOf('|');
      const resource = id.slice(0, bar);
      const key = id.slice(bar + 1);
      const ticking = Boolean(m.get(resource, key)?.metadata.deletionTimestamp) || (resource === primary && ((s) => Boolean(s && (s.waiting || s.phase === 'processing')))(m.keyState(key)));
      if (ticking) this.coalescer.mark(TIME_MARK + id);
    }
    if (m.resources.some((r) => r.id === 'namespaces')) {
      for (const n of this.nodes.values()) {
        if (n.type === 'namespace' && m.get('namespaces', n.namespace)?.metadata.deletionTimestamp) this.coalescer.mark(TIME_MARK + n.id);
      }
    }
  }

  dispose(): void {
    this.disposed = true;
    this.modelSubscription?.dispose();
    this.coalescer.dispose();
    this.emitter.dispose();
  }
}
