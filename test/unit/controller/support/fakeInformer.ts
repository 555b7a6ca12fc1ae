import { Emitter } from '../../../../src/core/event.ts';
import type {
  HandlerRegistration,
  IndexerReader,
  IndexFunc,
  ReflectorState,
  ResourceEventHandler,
  SharedIndexInformer,
} from '../../../../src/core/cache/interfaces.ts';
import { keyOf, type ObjectKey } from '../../../../src/core/k8s/keys.ts';
import type { KubeObject, ResourceInfo } from '../../../../src/core/k8s/objects.ts';

/**
 * A synchronous in-memory SharedIndexInformer for controller unit tests: the
 * test changes objects with add/update/delete and the handlers hear about it
 * at once. It keeps resourceVersion and generation the way the API server
 * does: every write bumps the resourceVersion; spec changes bump generation.
 * With `generation: false` it is a kind without `metadata.generation`
 * (ConfigMaps, Secrets): objects never carry one.
 */
export class FakeInformer implements SharedIndexInformer {
  readonly resource: ResourceInfo;
  private readonly objects = new Map<ObjectKey, KubeObject>();
  private readonly handlers = new Set<ResourceEventHandler>();
  private synced: boolean;
  private readonly generation: boolean;
  private rv = 100;
  runCalls = 0;
  private readonly stateEmitter = new Emitter<ReflectorState>();
  readonly onDidChangeState = this.stateEmitter.event;
  readonly state: ReflectorState = { phase: 'idle' };

  constructor(resource: Partial<ResourceInfo> & { kind: string; resource: string }, options: { synced?: boolean; generation?: boolean } = {}) {
    this.resource = { group: 'lab.reconcile.dev', version: 'v1', namespaced: true, ...resource };
    this.synced = options.synced ?? true;
    this.generation = options.generation ?? true;
  }

  get handlerCount(): number {
    return this.handlers.size;
  }

  addEventHandler(handler: ResourceEventHandler): HandlerRegistration {
    this.handlers.add(handler);
    if (this.synced) for (const o of this.objects.values()) void handler.onAdd?.(o, true);
    return {
      hasSynced: () => this.synced,
      dispose: () => {
        this.handlers.delete(handler);
      },
    };
  }

  /** Marks the initial list as delivered (handlers registered before get synthetic initial adds now). */
  markSynced(): void {
    if (this.synced) return;
    this.synced = true;
    for (const h of this.handlers) for (const o of this.objects.values()) void h.onAdd?.(o, true);
  }

  addIndexers(_indexers: Record<string, IndexFunc>): void {}

  getIndexer(): IndexerReader {
    return {
      getByKey: (k) => this.objects.get(k),
      list: () => [...this.objects.values()],
      listKeys: () => [...this.objects.keys()],
      byIndex: () => [],
      indexKeys: () => [],
      listIndexFuncValues: () => [],
    };
  }

  hasSynced(): boolean {
    return this.synced;
  }

  lastSyncResourceVersion(): string {
    return String(this.rv);
  }

  run(): void {
    this.runCalls++;
  }

  dispose(): void {
    this.handlers.clear();
  }

  get(key: ObjectKey): KubeObject | undefined {
    return this.objects.get(key);
  }

  /** Creates an object (generation 1). */
  add(obj: KubeObject): KubeObject {
    const o: KubeObject = { kind: this.resource.kind, apiVersion: `${this.resource.group}/${this.resource.version}`, ...obj, metadata: { ...(this.generation ? { generation: 1 } : {}), uid: `uid-${obj.metadata.name}`, ...obj.metadata, resourceVersion: String(++this.rv) } };
    this.objects.set(keyOf(o), o);
    if (this.synced) for (const h of this.handlers) void h.onAdd?.(o, false);
    return o;
  }

  /** Replaces an object: generation is bumped when spec changed, resourceVersion always. */
  update(key: ObjectKey, change: (o: KubeObject) => KubeObject): KubeObject {
    const old = this.objects.get(key);
    if (!old) throw new Error(`no object ${key}`);
    const next = change(structuredClone(old));
    const specChanged = JSON.stringify(next.spec) !== JSON.stringify(old.spec);
    const o: KubeObject = {
      ...next,
      metadata: { ...next.metadata, resourceVersion: String(++this.rv), ...(this.generation ? { generation: (old.metadata.generation ?? 1) + (specChanged ? 1 : 0) } : {}) },
    };
    this.objects.set(key, o);
    if (this.synced) for (const h of this.handlers) void h.onUpdate?.(old, o);
    return o;
  }

  /** A status-only write (generation unchanged). */
  writeStatus(key: ObjectKey, status: unknown): KubeObject {
    return this.update(key, (o) => ({ ...o, status }));
  }

  delete(key: ObjectKey, options: { tombstone?: boolean } = {}): void {
    const old = this.objects.get(key);
    if (!old) throw new Error(`no object ${key}`);
    this.objects.delete(key);
    if (!this.synced) return;
    for (const h of this.handlers) {
      void h.onDelete?.(options.tombstone ? { kind: 'DeletedFinalStateUnknown', key, obj: old } : old);
    }
  }

  /** A periodic resync: every cached object is redelivered as an update with the same resourceVersion. */
  resync(): void {
    for (const h of this.handlers) for (const o of this.objects.values()) void h.onUpdate?.(o, o);
  }
}
