import { ApiError } from '../../src/core/k8s/client.ts';
import { keyOf, type ObjectKey } from '../../src/core/k8s/keys.ts';
import type { KubeList, KubeObject } from '../../src/core/k8s/objects.ts';
import { type ApiStatus, INITIAL_EVENTS_END_ANNOTATION, type ListerWatcher, type ListOptions, type WatchEvent, type WatchOptions } from '../../src/core/cache/interfaces.ts';

interface HistoryEntry {
  rv: number;
  event: WatchEvent;
  /** Never sent to any watcher (AddDropWatch / DeleteDropWatch). */
  dropped: boolean;
  /** The stored state of the key before this change (undefined: absent). */
  before: KubeObject | undefined;
}

/** One open watch stream: a queue the test pushes into and the consumer drains. */
class FakeWatchStream {
  readonly options: WatchOptions;
  private items: WatchEvent[] = [];
  private closed = false;
  private error: unknown;
  private wake: (() => void) | undefined;

  constructor(options: WatchOptions) {
    this.options = options;
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  push(ev: WatchEvent): void {
    if (this.closed) return;
    this.items.push(structuredClone(ev));
    this.wake?.();
  }

  /** The server closes the stream cleanly after what is queued. */
  close(): void {
    this.closed = true;
    this.wake?.();
  }

  /** The stream breaks with `error` after what is queued. */
  fail(error: unknown): void {
    if (this.closed) return;
    this.error = error;
    this.closed = true;
    this.wake?.();
  }

  async *iterate(signal: AbortSignal, onEnd: () => void): AsyncGenerator<WatchEvent> {
    try {
      for (;;) {
        if (signal.aborted) throw signal.reason;
        const next = this.items.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        if (this.error !== undefined) throw this.error;
        if (this.closed) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
        this.wake = undefined;
      }
    } finally {
      this.closed = true;
      onEnd();
    }
  }
}

export interface FakeListerWatcherOptions {
  /** RV of the first change (default 1). */
  startResourceVersion?: number;
  /**
   * Whether a list at RV "0" honours `limit` (true, like a server without a
   * watch cache) or returns everything in one page (false, like the watch cache).
   */
  pageAtResourceVersion0?: boolean;
  /**
   * WatchList (`sendInitialEvents`): absent, the fake declares
   * `watchListSemanticsUnsupported` (as client-go's fake clients do), so a
   * reflector lists; 'supported' streams the initial events like kube-apiserver
   * 1.34; 'refused' answers such a watch with 422 Invalid, like a server whose
   * WatchList feature gate is off.
   */
  watchList?: 'supported' | 'refused';
}

/** What the next WatchList stream does in the middle of its initial events (see {@link FakeListerWatcher.interruptNextInitialEvents}). */
export interface InitialEventsInterruption {
  /** ADDED events sent before the interruption. */
  afterItems: number;
  /** An ERROR event with this status (the stream then closes), or a clean close. */
  then: ApiStatus | 'close';
}

export function expiredError(message = 'too old resource version'): ApiError {
  return new ApiError(410, 'Expired', message);
}

export function expiredStatus(message = 'too old resource version'): ApiStatus {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message };
}

/**
 * A scriptable API server for one resource (client-go FakeControllerSource
 * analogue). Every change gets the next integer resourceVersion; lists and
 * watches see deep copies, so consumers cannot share objects with the test.
 *
 * Failure scripting: {@link failNextList} / {@link failNextWatch} make the next
 * request fail; {@link resetWatch} closes open streams cleanly; {@link dropWatch}
 * breaks them; {@link expire} compacts history so old RVs and continue tokens
 * answer 410; {@link addDropWatch} / {@link deleteDropWatch} change state without
 * telling watchers (only a relist notices).
 */
export class FakeListerWatcher implements ListerWatcher<KubeObject> {
  readonly listCalls: ListOptions[] = [];
  readonly watchCalls: WatchOptions[] = [];
  private objects = new Map<ObjectKey, KubeObject>();
  private history: HistoryEntry[] = [];
  private rv: number;
  private compactedBelow = 0;
  private streams = new Set<FakeWatchStream>();
  private listErrors: unknown[] = [];
  private watchErrors: unknown[] = [];
  private readonly pageAtRV0: boolean;
  private readonly watchListMode: 'supported' | 'refused' | undefined;
  private interruptions: InitialEventsInterruption[] = [];
  private withholdEnd = false;
  private pendingInitial: Array<{ stream: FakeWatchStream; snapshotRV: number }> = [];
  readonly watchListSemanticsUnsupported: boolean;

  constructor(options: FakeListerWatcherOptions = {}) {
    this.rv = (options.startResourceVersion ?? 1) - 1;
    this.pageAtRV0 = options.pageAtResourceVersion0 ?? true;
    this.watchListMode = options.watchList;
    this.watchListSemanticsUnsupported = options.watchList === undefined;
  }

  /** The next WatchList stream is interrupted after `afterItems` initial ADDED events (once per call, in order). */
  interruptNextInitialEvents(i: InitialEventsInterruption): void {
    this.interruptions.push(i);
  }

  /**
   * While on, WatchList streams send their initial ADDED events but hold back
   * the initial-events-end bookmark (and later changes) until
   * {@link releaseInitialEventsEnd}.
   */
  withholdInitialEventsEnd(on = true): void {
    this.withholdEnd = on;
  }

  /** Sends the held-back bookmarks (at each stream's snapshot RV), then the changes since, and goes live. */
  releaseInitialEventsEnd(): void {
    this.withholdEnd = false;
    const pending = this.pendingInitial;
    this.pendingInitial = [];
    for (const p of pending) {
      if (!p.stream.isOpen) continue;
      p.stream.push(this.initialEventsEnd(p.snapshotRV));
      for (const h of this.history) if (h.rv > p.snapshotRV && !h.dropped) p.stream.push(h.event);
      this.streams.add(p.stream);
    }
  }

  /** The latest resourceVersion handed out. */
  get resourceVersion(): string {
    return String(this.rv);
  }

  /** Watches currently open. */
  get openWatches(): number {
    return this.streams.size;
  }

  /** The stored state of `key` (a copy). */
  get(key: ObjectKey): KubeObject | undefined {
    const o = this.objects.get(key);
    return o && structuredClone(o);
  }

  keys(): ObjectKey[] {
    return [...this.objects.keys()].sort();
  }

  add(obj: KubeObject): KubeObject {
    return this.change('ADDED', obj, false);
  }

  modify(obj: KubeObject): KubeObject {
    return this.change('MODIFIED', obj, false);
  }

  delete(obj: KubeObject): KubeObject {
    return this.change('DELETED', obj, false);
  }

  /** Adds an object but never tells a watcher (client-go AddDropWatch). */
  addDropWatch(obj: KubeObject): KubeObject {
    return this.change('ADDED', obj, true);
  }

  /** Modifies an object but never tells a watcher. */
  modifyDropWatch(obj: KubeObject): KubeObject {
    return this.change('MODIFIED', obj, true);
  }

  /** Deletes an object but never tells a watcher: only a relist notices (→ tombstone). */
  deleteDropWatch(obj: KubeObject): KubeObject {
    return this.change('DELETED', obj, true);
  }

  /** Sends a BOOKMARK at the current RV to every open watch. */
  bookmark(): void {
    const ev: WatchEvent = { type: 'BOOKMARK', object: { kind: 'Widget', metadata: { resourceVersion: String(this.rv) } } };
    for (const s of this.streams) s.push(ev);
  }

  /** Sends `ev` as it is (malformed events included) to every open watch. */
  sendRaw(ev: WatchEvent): void {
    for (const s of this.streams) s.push(ev);
  }

  /** Sends an ERROR event to every open watch (they are not closed). */
  sendWatchError(status: ApiStatus): void {
    for (const s of this.streams) s.push({ type: 'ERROR', object: status });
  }

  /** The server closes every open watch cleanly (client-go ResetWatch). */
  resetWatch(): void {
    for (const s of [...this.streams]) s.close();
  }

  /**
   * Every open watch fails with `error`: a read failure that is not an EOF (the
   * real ListerWatcher ends the stream cleanly on a reset or EOF, which is {@link resetWatch}).
   */
  dropWatch(error: unknown = new ApiError(0, 'StreamBroken', 'watch stream broke (a read error that is not an EOF)')): void {
    for (const s of [...this.streams]) s.fail(error);
  }

  /**
   * Compacts the history: watches and continue tokens from an RV at or
   * below the current one now get 410. Open watches receive a 410 ERROR
   * event and are closed, unless `notifyOpenWatches` is false.
   */
  expire(options: { notifyOpenWatches?: boolean } = {}): void {
    this.compactedBelow = this.rv + 1;
    this.history = [];
    if (options.notifyOpenWatches ?? true) {
      for (const s of [...this.streams]) {
        s.push({ type: 'ERROR', object: expiredStatus() });
        s.close();
      }
    }
  }

  /** The next `times` list requests fail with `error`. */
  failNextList(error: unknown, times = 1): void {
    for (let i = 0; i < times; i++) this.listErrors.push(error);
  }

  /** The next `times` watch requests fail with `error` before any stream exists. */
  failNextWatch(error: unknown, times = 1): void {
    for (let i = 0; i < times; i++) this.watchErrors.push(error);
  }

  async list(options: ListOptions, signal: AbortSignal): Promise<KubeList<KubeObject>> {
    this.listCalls.push({ ...options });
    await Promise.resolve();
    if (signal.aborted) throw signal.reason;
    const err = this.listErrors.shift();
    if (err !== undefined) throw err;
    let snapshotRV = this.rv;
    let offset = 0;
    if (options.continue) {
      const token = JSON.parse(options.continue) as { rv: number; offset: number };
      if (token.rv < this.compactedBelow) throw expiredError('The provided continue parameter is too old to display a consistent list result.');
      snapshotRV = token.rv;
      offset = token.offset;
    } else if (options.limit && options.resourceVersion && options.resourceVersion !== '0') {
      // limit + RV=X means "exactly X": only possible while X is not compacted.
      const want = Number(options.resourceVersion);
      if (want < this.compactedBelow) throw expiredError();
      snapshotRV = want;
    }
    const all = this.stateAt(snapshotRV);
    const paged = options.limit !== undefined && options.limit > 0 && (this.pageAtRV0 || options.resourceVersion !== '0' || options.continue !== undefined);
    if (!paged) return { kind: 'WidgetList', metadata: { resourceVersion: String(snapshotRV) }, items: all };
    const items = all.slice(offset, offset + options.limit!);
    const more = offset + options.limit! < all.length;
    const metadata: KubeList['metadata'] = { resourceVersion: String(snapshotRV) };
    if (more) {
      metadata.continue = JSON.stringify({ rv: snapshotRV, offset: offset + options.limit! });
      metadata.remainingItemCount = all.length - offset - options.limit!;
    }
    return { kind: 'WidgetList', metadata, items };
  }

  watch(options: WatchOptions, signal: AbortSignal): AsyncIterable<WatchEvent<KubeObject>> {
    this.watchCalls.push({ ...options });
    const self = this;
    return {
      [Symbol.asyncIterator]() {
        return self.openWatch(options, signal)[Symbol.asyncIterator]();
      },
    };
  }

  private async *openWatch(options: WatchOptions, signal: AbortSignal): AsyncGenerator<WatchEvent<KubeObject>> {
    await Promise.resolve();
    if (signal.aborted) throw signal.reason;
    const err = this.watchErrors.shift();
    if (err !== undefined) throw err;
    const stream = new FakeWatchStream(options);
    if (options.sendInitialEvents) {
      this.startWatchList(stream, options);
      yield* stream.iterate(signal, () => this.streams.delete(stream));
      return;
    }
    const from = Number(options.resourceVersion || '0');
    if (options.resourceVersion && options.resourceVersion !== '0' && from + 1 < this.compactedBelow) {
      stream.push({ type: 'ERROR', object: expiredStatus(`too old resource version: ${from} (${this.compactedBelow - 1})`) });
      stream.close();
    } else {
      for (const h of this.history) if (h.rv > from && !h.dropped) stream.push(h.event);
      this.streams.add(stream);
    }
    yield* stream.iterate(signal, () => this.streams.delete(stream));
  }

  private initialEventsEnd(rv: number): WatchEvent {
    return { type: 'BOOKMARK', object: { kind: 'Widget', metadata: { resourceVersion: String(rv), annotations: { [INITIAL_EVENTS_END_ANNOTATION]: 'true' } } } };
  }

  /**
   * kube-apiserver's WatchList: 422 when refused or without NotOlderThan; the
   * state "not older than" the RV (the current one) as ADDED events, the
   * annotated bookmark at that RV, then every later change.
   */
  private startWatchList(stream: FakeWatchStream, options: WatchOptions): void {
    if (this.watchListMode !== 'supported') {
      throw new ApiError(422, 'Invalid', 'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled');
    }
    if (options.resourceVersionMatch !== 'NotOlderThan') {
      throw new ApiError(422, 'Invalid', 'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
    }
    if (options.resourceVersion && Number(options.resourceVersion) > this.rv) {
      throw new ApiError(504, 'Timeout', 'Too large resource version', { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] });
    }
    const snapshotRV = this.rv;
    const state = this.stateAt(snapshotRV);
    const cut = this.interruptions.shift();
    if (cut) {
      for (const o of state.slice(0, cut.afterItems)) stream.push({ type: 'ADDED', object: o });
      if (cut.then === 'close') stream.close();
      else {
        stream.push({ type: 'ERROR', object: cut.then });
        stream.close();
      }
      return;
    }
    for (const o of state) stream.push({ type: 'ADDED', object: o });
    if (this.withholdEnd) {
      this.pendingInitial.push({ stream, snapshotRV });
      return;
    }
    stream.push(this.initialEventsEnd(snapshotRV));
    this.streams.add(stream);
  }

  /** The objects as of `rv`, sorted by key (history is undone back to `rv`). */
  private stateAt(rv: number): KubeObject[] {
    const state = new Map(this.objects);
    for (let i = this.history.length - 1; i >= 0 && this.history[i]!.rv > rv; i--) {
      const h = this.history[i]!;
      const key = keyOf(h.event.object as KubeObject);
      if (h.before === undefined) state.delete(key);
      else state.set(key, h.before);
    }
    return [...state.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, o]) => structuredClone(o));
  }

  private change(type: 'ADDED' | 'MODIFIED' | 'DELETED', input: KubeObject, dropped: boolean): KubeObject {
    const obj = structuredClone(input);
    const key = keyOf(obj);
    if (type === 'ADDED' && this.objects.has(key)) throw new Error(`fake: ${key} already exists`);
    if (type !== 'ADDED' && !this.objects.has(key)) throw new Error(`fake: ${key} does not exist`);
    if (type === 'DELETED') {
      // The DELETED event carries the last stored state (with the deletion's RV).
      Object.assign(obj, structuredClone(this.objects.get(key)!));
    }
    const before = this.objects.get(key);
    obj.metadata.resourceVersion = String(++this.rv);
    obj.metadata.uid ??= this.objects.get(key)?.metadata.uid ?? `uid-${key}`;
    if (type === 'DELETED') this.objects.delete(key);
    else this.objects.set(key, obj);
    const event = { type, object: obj } as WatchEvent;
    this.history.push({ rv: this.rv, event, dropped, before });
    if (!dropped) for (const s of this.streams) s.push(event);
    return structuredClone(obj);
  }
}
