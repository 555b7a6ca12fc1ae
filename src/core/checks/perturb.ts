import type { HandlerRegistration, IndexFunc, ListOptions, ListerWatcher, ResourceEventHandler, SharedIndexInformer, WatchEvent, WatchOptions } from '../cache/interfaces.ts';
import type { KubeClient, WriteOptions } from '../k8s/client.ts';
import { keyOf, type ObjectKey } from '../k8s/keys.ts';
import type { KubeList, KubeObject } from '../k8s/objects.ts';

/**
 * The perturbations of the checks. Each is a wrapper around one seam the harness already has (the informer's
 * ListerWatcher, the informer handed to the controller, the reconciler's client): nothing inside the informer,
 * queue or controller knows it is being perturbed.
 */

/**
 * A ListerWatcher frozen at `resourceVersion` (stale cache): while frozen, `list` returns the state the server had
 * at exactly that resourceVersion (`resourceVersionMatch=Exact`, served by kube-apiserver from etcd history) and
 * `watch` waits; {@link thaw} lets the watch start from that resourceVersion, so the server replays every change
 * since and the cache catches up through ordinary watch events. After the thaw the wrapper is transparent.
 */
export class FrozenListerWatcher implements ListerWatcher<KubeObject> {
  private frozen = true;
  /** The stale view must come from a LIST at the frozen resourceVersion, so the reflector must not use WatchList. */
  readonly watchListSemanticsUnsupported = true;
  private readonly waiters = new Set<() => void>();
  private readonly inner: ListerWatcher<KubeObject>;
  readonly resourceVersion: string;

  constructor(inner: ListerWatcher<KubeObject>, resourceVersion: string) {
    this.inner = inner;
    this.resourceVersion = resourceVersion;
  }

  list(options: ListOptions, signal: AbortSignal): Promise<KubeList<KubeObject>> {
    // A continued (paged) list already carries its snapshot in the token; the server refuses a resourceVersion with it.
    if (!this.frozen || options.continue) return this.inner.list(options, signal);
    return this.inner.list({ ...options, resourceVersion: this.resourceVersion, resourceVersionMatch: 'Exact' }, signal);
  }

  async *watch(options: WatchOptions, signal: AbortSignal): AsyncIterable<WatchEvent<KubeObject>> {
    if (this.frozen) {
      await new Promise<void>((resolve, reject) => {
        const done = () => {
          this.waiters.delete(done);
          signal.removeEventListener('abort', abort);
          resolve();
        };
        const abort = () => {
          this.waiters.delete(done);
          reject(signal.reason);
        };
        this.waiters.add(done);
        signal.addEventListener('abort', abort, { once: true });
      });
    }
    yield* this.inner.watch(options, signal);
  }

  thaw(): void {
    this.frozen = false;
    for (const w of [...this.waiters]) w();
  }
}

/**
 * An informer whose handlers do not see the update events of one key while withholding is on (unobserved
 * intermediate state): the store still updates (readers of the cache see the newest state), only the
 * notifications are held. {@link release} delivers ONE update, from the state the handlers last saw to the newest,
 * as a coalesced watch would. Adds and deletes are never withheld.
 */
export class WithholdingInformer implements SharedIndexInformer<KubeObject> {
  private withholding = false;
  private readonly pending = new Map<ResourceEventHandler<KubeObject>, { old: KubeObject; latest: KubeObject }>();
  /** How many update notifications were withheld. */
  withheldCount = 0;
  private readonly inner: SharedIndexInformer<KubeObject>;
  private readonly key: ObjectKey;

  constructor(inner: SharedIndexInformer<KubeObject>, key: ObjectKey) {
    this.inner = inner;
    this.key = key;
  }

  get resource() {
    return this.inner.resource;
  }
  get onDidChangeState() {
    return this.inner.onDidChangeState;
  }
  get state() {
    return this.inner.state;
  }

  withhold(): void {
    this.withholding = true;
  }

  /** Stops withholding and delivers one coalesced update per handler that missed some. */
  release(): void {
    this.withholding = false;
    const pending = [...this.pending];
    this.pending.clear();
    for (const [h, p] of pending) void h.onUpdate?.(p.old, p.latest);
  }

  addEventHandler(handler: ResourceEventHandler<KubeObject>, options?: { resyncPeriodMs?: number }): HandlerRegistration {
    const wrapped: ResourceEventHandler<KubeObject> = {
      onAdd: (obj, initial) => handler.onAdd?.(obj, initial),
      onDelete: (obj) => handler.onDelete?.(obj),
      onUpdate: (oldObj, newObj) => {
        if (this.withholding && keyOf(newObj) === this.key) {
          const p = this.pending.get(handler);
          this.pending.set(handler, { old: p?.old ?? oldObj, latest: newObj });
          this.withheldCount++;
          return;
        }
        return handler.onUpdate?.(oldObj, newObj);
      },
    };
    return this.inner.addEventHandler(wrapped, options);
  }
  addIndexers(indexers: Record<string, IndexFunc<KubeObject>>): void {
    this.inner.addIndexers(indexers);
  }
  getIndexer() {
    return this.inner.getIndexer();
  }
  hasSynced(): boolean {
    return this.inner.hasSynced();
  }
  lastSyncResourceVersion(): string {
    return this.inner.lastSyncResourceVersion();
  }
  run(): void {
    this.inner.run();
  }
  dispose(): void {
    // The inner informer belongs to the harness's factory, which disposes it.
    this.pending.clear();
  }
}

/** The error every write gets once a {@link crashingClient} has "crashed". */
export class SimulatedCrashError extends Error {
  constructor(afterWrite: number) {
    super(`Reconcile Lab check: the controller was stopped right after write ${afterWrite} (simulated crash)`);
    this.name = 'SimulatedCrashError';
  }
}

/**
 * A client that "crashes" right after its `afterWrites`-th successful write: `onCrash` is called at once (the harness
 * stops the controller), and every later write rejects with {@link SimulatedCrashError} without reaching the
 * server, so nothing after write i persists. Reads pass through.
 */
export function crashingClient(inner: KubeClient, afterWrites: number, onCrash: () => void): KubeClient & { readonly crashed: boolean } {
  let count = 0;
  let crashed = false;
  const guard = async <T>(write: () => Promise<T>): Promise<T> => {
    if (crashed) throw new SimulatedCrashError(afterWrites);
    const r = await write();
    count++;
    if (count >= afterWrites && !crashed) {
      crashed = true;
      onCrash();
    }
    return r;
  };
  const isDry = (o?: WriteOptions) => o?.dryRun === true;
  const c: KubeClient & { readonly crashed: boolean } = {
    get crashed() {
      return crashed;
    },
    get: (...a) => inner.get(...a),
    list: (...a) => inner.list(...a),
    discover: (...a) => inner.discover(...a),
    create: (g, o, opt) => (isDry(opt) ? inner.create(g, o, opt) : guard(() => inner.create(g, o, opt))),
    update: (g, o, opt) => (isDry(opt) ? inner.update(g, o, opt) : guard(() => inner.update(g, o, opt))),
    updateStatus: (g, o, opt) => (isDry(opt) ? inner.updateStatus(g, o, opt) : guard(() => inner.updateStatus(g, o, opt))),
    patch: (g, ns, n, t, p, opt) => (isDry(opt) ? inner.patch(g, ns, n, t, p, opt) : guard(() => inner.patch(g, ns, n, t, p, opt))),
    patchStatus: (g, ns, n, t, p, opt) => (isDry(opt) ? inner.patchStatus(g, ns, n, t, p, opt) : guard(() => inner.patchStatus(g, ns, n, t, p, opt))),
    apply: (g, o, opt) => (isDry(opt) ? inner.apply(g, o, opt) : guard(() => inner.apply(g, o, opt))),
    delete: (g, ns, n, opt) => (isDry(opt) ? inner.delete(g, ns, n, opt) : guard(() => inner.delete(g, ns, n, opt))),
  };
  const sub = (inner as { updateSubresource?: unknown }).updateSubresource;
  if (typeof sub === 'function') (c as unknown as { updateSubresource: unknown }).updateSubresource = (...a: unknown[]) => guard(() => (sub as (...x: unknown[]) => Promise<unknown>).apply(inner, a));
  return c;
}
