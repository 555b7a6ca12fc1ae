import { type Clock, realClock } from '../clock.ts';
import type { Disposable } from '../lifecycle.ts';
import { nullLogger, type Logger } from '../log.ts';
import type { KubeTransport } from '../k8s/transport.ts';
import { KubeListerWatcher } from '../k8s/listerWatcher.ts';
import { gvrToString, type KubeObject, type ResourceInfo } from '../k8s/objects.ts';
import type { IndexFunc, ListerWatcher } from './interfaces.ts';
import { SharedIndexInformer, type SharedIndexInformerOptions, type TransformFunc } from './sharedIndexInformer.ts';
import { waitForCacheSync } from './waitForCacheSync.ts';
import { DeliveryBudget } from './deliveryBudget.ts';

/** What one informer watches: a resource, optionally narrowed to a namespace and selectors. */
export interface InformerScope {
  /** Only this namespace (namespaced resources); default: all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** Builds the network seam of one informer. */
export type ListerWatcherFactory = (resource: ResourceInfo, scope: InformerScope) => ListerWatcher<KubeObject>;

export interface InformerFactoryOptions {
  /** The cluster; informers list and watch through {@link KubeListerWatcher}s over it. */
  transport?: KubeTransport;
  /** Overrides how ListerWatchers are made (tests); required when `transport` is absent. */
  listerWatcherFactory?: ListerWatcherFactory;
  clock?: Clock;
  logger?: Logger;
  /** Default handler resync period of every informer (0 = none, the default). */
  defaultResyncPeriodMs?: number;
  /** Transform of every informer; default (or `null`): none, objects are kept as received. See {@link stripManagedFields}. */
  transform?: TransformFunc | null;
  random?: () => number;
  /** WatchList for every informer (see {@link SharedIndexInformerOptions.watchList}); default on, as client-go ≥ 1.35. */
  watchList?: boolean;
}

export interface InformerRequest<T extends KubeObject = KubeObject> extends InformerScope {
  /** Added on first creation only; add more later with `informer.addIndexers`. */
  indexers?: Record<string, IndexFunc<T>>;
}

function scopeKey(resource: ResourceInfo, scope: InformerScope): string {
  return JSON.stringify([resource.group, resource.version, resource.resource, scope.namespace ?? '', scope.labelSelector ?? '', scope.fieldSelector ?? '']);
}

/**
 * Shares informers (client-go SharedInformerFactory): asking twice for the
 * same resource, namespace and selectors returns the same informer, so every
 * consumer reads one cache and the server sees one watch.
 *
 * Lifecycle: informers are created idle; {@link start} runs every informer,
 * and an informer asked for after `start` runs at once (controller-runtime's
 * cache does the same). {@link dispose} stops all of them for good; the
 * factory then refuses new requests.
 */
export class InformerFactory implements Disposable {
  private readonly informers = new Map<string, SharedIndexInformer<KubeObject>>();
  private readonly lwFactory: ListerWatcherFactory;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly options: InformerFactoryOptions;
  /** One per factory: its informers' event handlers together take at most one slice per task of the event loop. */
  private readonly budget: DeliveryBudget;
  private started = false;
  private stopped = false;

  constructor(options: InformerFactoryOptions) {
    this.options = options;
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? nullLogger;
    this.budget = new DeliveryBudget(this.clock);
    if (options.listerWatcherFactory) this.lwFactory = options.listerWatcherFactory;
    else if (options.transport) {
      const transport = options.transport;
      this.lwFactory = (resource, scope) => new KubeListerWatcher({ transport, resource, ...scope });
    } else throw new Error('InformerFactory needs a transport or a listerWatcherFactory');
  }

  /** The shared informer for `resource` in `request`'s scope, created on first request. */
  informerFor<T extends KubeObject = KubeObject>(resource: ResourceInfo, request: InformerRequest<T> = {}): SharedIndexInformer<T> {
    if (this.stopped) throw new Error('the informer factory has been stopped');
    const scope: InformerScope = { namespace: request.namespace, labelSelector: request.labelSelector, fieldSelector: request.fieldSelector };
    if (scope.namespace && !resource.namespaced) throw new Error(`${gvrToString(resource)} is cluster-scoped: it has no namespace ${scope.namespace}`);
    const key = scopeKey(resource, scope);
    let informer = this.informers.get(key) as SharedIndexInformer<T> | undefined;
    if (!informer) {
      informer = new SharedIndexInformer<T>({
        listerWatcher: this.lwFactory(resource, scope),
        resource,
        clock: this.clock,
        logger: this.logger.child({ ...(scope.namespace ? { namespace: scope.namespace } : {}) }),
        transform: this.options.transform as TransformFunc<T> | null | undefined,
        indexers: request.indexers,
        resyncPeriodMs: this.options.defaultResyncPeriodMs,
        random: this.options.random,
        watchList: this.options.watchList,
        deliveryBudget: this.budget,
      });
      this.informers.set(key, informer as unknown as SharedIndexInformer<KubeObject>);
      if (this.started) informer.run();
    }
    return informer;
  }

  /** Every informer created so far. */
  list(): SharedIndexInformer<KubeObject>[] {
    return [...this.informers.values()];
  }

  /** Runs every informer not yet running; later requests run at once. Idempotent. */
  start(): void {
    if (this.stopped) return;
    this.started = true;
    for (const inf of this.informers.values()) inf.run();
  }

  /**
   * Resolves true once every informer created so far has synced, false if
   * `signal` aborts first or the factory is stopped meanwhile.
   */
  waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    return waitForCacheSync(this.clock, this.list(), { signal, stillWanted: () => !this.stopped });
  }

  /** Stops every informer (final). */
  dispose(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const inf of this.informers.values()) inf.dispose();
    this.budget.dispose();
  }
}
