/**
 * Which key "Step Reconcile" acts on when it is given no argument (the title-bar button, F10, the palette): the
 * key the person selected in the Resources or Work Queue view, else the head of the queue. Pure (no `vscode`), so
 * the title-bar text, the status bar and the command agree; unit-tested in test/unit/host-free/views/stepTarget.test.ts.
 */
import type { ObjectKey } from '../../core/k8s/keys.ts';

/** A tree element as far as the step target cares: its resource and key, when it concerns one object. */
export interface SelectableNode {
  readonly type: string;
  readonly resource?: string;
  readonly key?: ObjectKey;
}

/**
 * The loop key a selected element stands for: an object of the loop's resource, or a row under it (its finalizers,
 * conditions), or a Work Queue key or detail row. Anything else (a kind, a namespace, an owned ConfigMap) selects
 * no key.
 */
export function selectedKeyOf(node: SelectableNode | undefined, primaryResource: string | undefined): ObjectKey | undefined {
  if (!node || !primaryResource) return undefined;
  if (node.type === 'detail') return (node as unknown as { parent: SelectableNode }).parent.key;
  if (node.type === 'queueKey') return node.key;
  if (node.resource !== primaryResource || !node.key) return undefined;
  // An owned child of another resource carries its own resource, so only the loop's objects (and their rows) count.
  return ['object', 'finalizers', 'finalizer', 'conditions', 'condition'].includes(node.type) ? node.key : undefined;
}

/** The view a selection was made in. */
export type SelectionView = 'resources' | 'queue';

/** What Step remembers of the selections: the key of the latest one (undefined: it selects no key) and its view. */
export interface StepSelection {
  readonly key: ObjectKey | undefined;
  readonly view: SelectionView;
}

/**
 * The step's selection after `change.view`'s selection changed: the latest selection wins. An emptied selection
 * in the other view leaves it as it was; one emptied in the view that made it (its row left the Work Queue: the key
 * was reconciled, the loop was stopped) falls back to `otherKey`, the key the other view still shows selected, so
 * that Step acts on what the person sees selected rather than on the head of the queue.
 */
export function selectionAfter(
  prev: StepSelection | undefined,
  change: { readonly view: SelectionView; readonly key: ObjectKey | undefined; readonly emptied: boolean },
  otherKey: ObjectKey | undefined,
): StepSelection {
  if (!change.emptied) return { key: change.key, view: change.view };
  if (prev && prev.view !== change.view) return prev;
  return { key: otherKey, view: change.view === 'resources' ? 'queue' : 'resources' };
}

export interface StepTarget {
  readonly key: ObjectKey;
  /** `selection`: the person selected it; `queue`: the head of the work queue. */
  readonly source: 'selection' | 'queue';
}

/** The selected key when it still exists, else the head of the queue, else nothing. */
export function stepTargetOf(selected: ObjectKey | undefined, queued: readonly ObjectKey[], exists: (key: ObjectKey) => boolean): StepTarget | undefined {
  if (selected && exists(selected)) return { key: selected, source: 'selection' };
  const head = queued[0];
  return head ? { key: head, source: 'queue' } : undefined;
}

/**
 * The text the views and the status bar show for it: "Step ns/name (selected)" / "Step ns/name (next in queue)".
 * `loopStopped`: with no key selected, Step starts the loop paused (its informers' lists queue every object) and
 * reconciles whatever heads the queue then, which nobody can name yet.
 */
export function stepTargetText(t: StepTarget | undefined, loopStopped = false): string {
  if (!t) return loopStopped ? 'Step: starts the loop paused, then the head of its queue' : 'Step: nothing queued';
  return `Step ${t.key} (${t.source === 'selection' ? 'selected' : 'next in queue'})`;
}


/**
 * The Work Queue view's message while the loop is paused: which key F10 / Step reconciles (or that nothing is
 * queued to step), how to run the loop, and `counts` (the queue's summary, e.g. "2 queued (priority queue: …)").
 */
export function pausedQueueMessage(t: StepTarget | undefined, counts: string): string {
  const step = t
    ? `F10 / Step reconciles ${t.key} once (${t.source === 'selection' ? 'selected' : 'next in queue'})`
    : 'nothing to step yet (an event or Reconcile Now queues a key)';
  return `Paused: ${step}; Resume runs the loop. Queue: ${counts}.`;
}

/** A controller of a connected Go program that the views do not show, as {@link otherControllersNote} needs it. */
export interface OtherController {
  readonly name: string;
  readonly paused: boolean;
  /** Keys ready in its queue, handed out, and waiting for a backoff or requeue-after. */
  readonly queued: number;
  readonly processing: number;
  readonly waiting: number;
}

/**
 * The Work Queue view's line on the controllers it does not show (a manager with several controllers shows one at a
 * time, and Pause / Resume / Step act on that one only): their names, whether each is paused and what its queue
 * holds, and how to see one. Undefined when there are none. Names are shown only when they look like names.
 */
export function otherControllersNote(others: readonly OtherController[]): string | undefined {
  if (!others.length) return undefined;
  const one = (c: OtherController) => {
    const q = [c.queued ? `${c.queued} queued` : '', c.processing ? `${c.processing} processing` : '', c.waiting ? `${c.waiting} waiting` : ''].filter(Boolean);
    const name = /^[A-Za-z0-9][-A-Za-z0-9_.]*$/.test(c.name) ? c.name : 'a controller';
    return `${name} (${c.paused ? 'paused' : 'running'}${q.length ? `, ${q.join(', ')}` : ''})`;
  };
  const list = others.map(one).join(', ');
  return `Not shown here: ${list}. Pause, Resume and Step act on the controller shown; Show Controller… switches.`;
}
