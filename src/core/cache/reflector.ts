import { type Clock, sleep, type TimerHandle } from '../clock.ts';
import { Emitter, type Event } from '../event.ts';
import type { Disposable } from '../lifecycle.ts';
import type { Logger } from '../log.ts';
import { ApiError } from '../k8s/client.ts';
import type { KubeList, KubeObject } from '../k8s/objects.ts';
import { keyOf } from '../k8s/keys.ts';
import {
  type ApiStatus,
  DEFAULT_WATCH_LIST,
  INITIAL_EVENTS_END_ANNOTATION,
  type ListerWatcher,
  type ListOptions,
  type ReflectorState,
  type WatchEvent,
  type WatchOptions,
} from './interfaces.ts';
import { Backoff } from './backoff.ts';

/**
 * The subset of a store the reflector writes to (client-go ReflectorStore).
 * Calls arrive in server order, one at a time, never concurrently.
 * `replace` hands over ownership of `list`.
 */
export interface ReflectorStore<T extends KubeObject = KubeObject> {
  add(obj: T): void;
  update(obj: T): void;
  /** `obj` is the object's last state, as carried by the DELETED event. */
  delete(obj: T): void;
  replace(list: T[], resourceVersion: string): void;
  /**
   * Replays the store's own content to its consumers (client-go `Store.Resync`): called on a resync tick, never
   * contacts the server. Optional: a store without it is never resynced.
   */
  resync?(): void;
}

export interface ReflectorOptions<T extends KubeObject = KubeObject> {
  listerWatcher: ListerWatcher<T>;
  store: ReflectorStore<T>;
  clock: Clock;
  logger: Logger;
  /** Uniform [0, 1) source for the watch timeout and the backoff jitter; default Math.random. */
  random?: () => number;
  /** Shown in logs, e.g. "widgets.v1.lab.reconcile.dev". */
  name?: string;
  /**
   * Page size for paged lists; default 500 (client-go pager). When set
   * explicitly, every list is paged (client-go WatchListPageSize).
   */
  pageSize?: number;
  /** Lower bound of the random watch timeout; honoured only above the default 5 min (client-go MinWatchTimeout). */
  minWatchTimeoutMs?: number;
  /** Replaces the default backoff (800 ms ×2 → 30 s, jitter 1.0, starting over every 2 min since its last reset). */
  backoff?: Backoff;
  /**
   * Stream the initial state with a WatchList request instead of a LIST
   * (client-go's `WatchListClient` feature, on by default since client-go
   * 1.35). Default {@link DEFAULT_WATCH_LIST}. Ignored (LIST is used) when the
   * ListerWatcher declares `watchListSemanticsUnsupported`.
   */
  watchList?: boolean;
  /**
   * The resync tick (client-go reflector `resyncPeriod`; a shared informer's resync check period), read as each
   * list-and-watch cycle starts; 0 or absent: no resync. The ticks run from the end of a list (or a WatchList's
   * initial events) while its watches last — re-watches included — and stop when the cycle ends: never during a
   * relist, or the backoff before one.
   */
  resyncPeriodMs?: () => number;
  /** Asked on each tick; `store.resync()` runs when it is absent or returns true (client-go `ShouldResync`). */
  shouldResync?: () => boolean;
}

export { DEFAULT_WATCH_LIST };

/**
 * One open watch request: its event iterator, the random `timeoutSeconds` it
 * was opened with and its deadline guard. `close()` releases the connection,
 * the deadline timer and the stop listener; it is idempotent.
 */
interface OpenWatch<T extends KubeObject> {
  readonly iterator: AsyncIterator<WatchEvent<T>>;
  readonly timeoutSeconds: number;
  /** Set when the deadline guard aborted the request (the server's close never came). */
  readonly abandoned: boolean;
  close(): Promise<void>;
}

/** How often a WatchList still waiting for its initial-events-end bookmark is logged (client-go: 10 s). */
const WATCH_LIST_BOOKMARK_WARNING_MS = 10_000;

/** A watch that closed within 1 s without delivering anything: treated as a failure (backoff, then relist). */
export class VeryShortWatchError extends Error {
  constructor(name: string) {
    super(`${name}: unexpected watch close: the watch lasted less than a second and no items were received`);
    this.name = 'VeryShortWatchError';
  }
}

const DEFAULT_PAGE_SIZE = 500;
const DEFAULT_MIN_WATCH_TIMEOUT_MS = 5 * 60_000;
/** How long past its `timeoutSeconds` a silent watch is given before we abandon it (half-open TCP guard). */
const WATCH_DEADLINE_GRACE_MS = 60_000;

type ErrorLike = { code?: unknown; reason?: unknown; message?: unknown; details?: unknown; cause?: unknown };

function codeOf(e: unknown): number | undefined {
  const c = (e as ErrorLike | null)?.code;
  return typeof c === 'number' ? c : undefined;
}

function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** "Expired" in client-go terms: 410 Gone / reason Expired, or an old server's "too old resource version". */
export function isExpiredError(e: unknown): boolean {
  const x = e as ErrorLike | null;
  return codeOf(e) === 410 || x?.reason === 'Expired' || x?.reason === 'Gone' || /too old resource version/i.test(messageOf(e));
}

/** client-go isTooLargeResourceVersionError: a ResourceVersionTooLarge cause, or an old server's 504 text. */
export function isTooLargeResourceVersionError(e: unknown): boolean {
  const causes = ((e as ErrorLike | null)?.details as { causes?: Array<{ reason?: string }> } | undefined)?.causes;
  if (Array.isArray(causes) && causes.some((c) => c?.reason === 'ResourceVersionTooLarge')) return true;
  return codeOf(e) === 504 && /too large resource version/i.test(messageOf(e));
}

function isConnectionRefused(e: unknown): boolean {
  if (codeOf(e) !== 0) return false;
  const x = e as ErrorLike;
  const cause = (x.details as { cause?: unknown } | undefined)?.cause ?? x.cause;
  return cause === 'ECONNREFUSED' || /ECONNREFUSED/.test(messageOf(e));
}

/** Errors after which client-go retries the *watch* (same RV, after a backoff) instead of relisting. */
function isWatchErrorRetriable(e: unknown): boolean {
  return codeOf(e) === 429 || isConnectionRefused(e);
}

function statusToError(status: ApiStatus): ApiError {
  const code = typeof status.code === 'number' ? status.code : 500;
  return new ApiError(code, status.reason ?? 'Unknown', `watch error event: ${status.message ?? `HTTP ${code}`}`, status.details);
}

/**
 * The reflector: keeps a store in step with the server by LIST then WATCH,
 * following client-go's `Reflector.ListAndWatch` rules:
 *
 * - LIST at RV "0" first (may be served from the watch cache), then at the
 *   last synced RV ("not older than"), and at RV "" (a consistent read) after
 *   a LIST failed as expired (410) or "too large RV". Lists are paged with
 *   `limit`/`continue` when the RV is "" or "0", or when an earlier RV "0"
 *   list came back paged; an expired continue token falls back to one full
 *   list at the requested RV. The store then gets `replace(items, listRV)`.
 * - WATCH from the last synced RV with `allowWatchBookmarks=true` and a fresh
 *   random `timeoutSeconds` in [300, 600). Every ADDED / MODIFIED / DELETED /
 *   BOOKMARK event advances the last synced RV; bookmarks touch nothing else.
 *   On a watch from RV "" or "0" (the server's synthetic ADDED events come in
 *   no RV order) the RV advances only from the first non-ADDED event on.
 * - A clean close re-watches at once from the last RV; a stream that breaks
 *   mid-way (reset, EOF, timeout) is one, as the ListerWatcher ends it
 *   cleanly (client-go StreamWatcher). A close within 1 s
 *   with no events is a {@link VeryShortWatchError}. A 429 or a refused
 *   connection backs off and re-watches at the same RV. An expired watch
 *   (410 / "too old resource version") ends the cycle; like every other
 *   failure it is followed by a backoff and a relist at the last RV.
 * - Backoff: 800 ms doubling to 30 s, each delay jittered to [d, 2d),
 *   starting over at the first delay more than 2 min after its last reset
 *   (client-go HEAD). The loop never stops by itself: only
 *   `dispose()` stops it. Every phase change is announced on `onDidChangeState`.
 *
 * A watch still open 60 s past its own timeoutSeconds is abandoned and
 * treated as a clean close (guards against half-open connections, where the
 * server's close never arrives).
 *
 * WatchList (`watchList`, on by default as in client-go 1.35+): each cycle
 * first opens a watch with `sendInitialEvents=true`,
 * `resourceVersionMatch=NotOlderThan`, `allowWatchBookmarks=true` at the last
 * synced RV ("" on the first cycle or once that RV was unavailable: a
 * consistent read). Its ADDED events are collected aside (the store is not
 * touched) until the BOOKMARK annotated `k8s.io/initial-events-end: "true"`;
 * then the store gets one `replace(collected, bookmarkRV)` (tombstones as for
 * a relist) and the same stream goes on as the watch. While streaming: a 429
 * or refused connection backs off and streams again; an expired or too-large
 * RV (410, also as an ERROR event in the middle of the initial events) streams
 * again at once from RV "" with nothing collected kept; a close before the
 * bookmark streams again at once. Anything else (the server refusing the
 * request, e.g. 422 when its WatchList feature is off, a very short watch, a
 * broken stream) falls back to LIST + WATCH for this cycle, as client-go does;
 * the next cycle tries WatchList again.
 */
export class Reflector<T extends KubeObject = KubeObject> implements Disposable {
  private readonly lw: ListerWatcher<T>;
  private readonly store: ReflectorStore<T>;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly random: () => number;
  private readonly backoff: Backoff;
  private readonly name: string;
  private readonly pageSize: number;
  private readonly forcePaging: boolean;
  private readonly minWatchTimeoutMs: number;
  private readonly useWatchList: boolean;
  private readonly resyncPeriodMs: (() => number) | undefined;
  private readonly shouldResync: (() => boolean) | undefined;
  private readonly abort = new AbortController();
  private readonly stateEmitter: Emitter<ReflectorState>;
  private currentState: ReflectorState = { phase: 'idle' };
  private lastSyncRV = '';
  private lastSyncRVUnavailable = false;
  /**
   * True while a watch that started at RV "" or "0" has delivered only ADDED
   * events: the server sends those synthetic ADDED events in no RV order, so
   * the last synced RV only advances from the first other event on.
   */
  private holdRVUntilNonAdded = false;
  private paginatedResult = false;
  private lastErrorText: string | undefined;
  /** The HTTP status of the last list/watch failure (0: the server was not reached); undefined when it had none. */
  private lastErrorCode: number | undefined;
  private started = false;
  private stopped = false;
  private loopDone: Promise<void> = Promise.resolve();

  readonly onDidChangeState: Event<ReflectorState>;

  constructor(options: ReflectorOptions<T>) {
    this.lw = options.listerWatcher;
    this.store = options.store;
    this.clock = options.clock;
    this.name = options.name ?? 'reflector';
    this.log = options.logger.child({ reflector: this.name });
    this.random = options.random ?? Math.random;
    this.backoff = options.backoff ?? new Backoff({ clock: this.clock, random: this.random });
    this.forcePaging = options.pageSize !== undefined && options.pageSize > 0;
    this.pageSize = this.forcePaging ? options.pageSize! : DEFAULT_PAGE_SIZE;
    this.minWatchTimeoutMs = Math.max(DEFAULT_MIN_WATCH_TIMEOUT_MS, options.minWatchTimeoutMs ?? 0);
    this.useWatchList = (options.watchList ?? DEFAULT_WATCH_LIST) && this.lw.watchListSemanticsUnsupported !== true;
    this.resyncPeriodMs = options.resyncPeriodMs;
    this.shouldResync = options.shouldResync;
    this.stateEmitter = new Emitter<ReflectorState>((e) => this.log.error('reflector state listener threw', { error: messageOf(e) }));
    this.onDidChangeState = this.stateEmitter.event;
  }

  get state(): ReflectorState {
    return this.currentState;
  }

  /** The message of the last list/watch failure, if any. */
  get lastError(): string | undefined {
    return this.lastErrorText;
  }

  /** Whether cycles start with a WatchList (the option, unless the ListerWatcher cannot do it). */
  get usesWatchList(): boolean {
    return this.useWatchList;
  }

  /** The RV of the last list or of the last watch event / bookmark ("" before the first list). */
  lastSyncResourceVersion(): string {
    return this.lastSyncRV;
  }

  /** Starts the list/watch loop; idempotent; a no-op after dispose. */
  run(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.loopDone = this.loop();
  }

  /** Resolves when the loop has ended after {@link dispose}. */
  whenStopped(): Promise<void> {
    return this.loopDone;
  }

  dispose(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.abort.abort(new Error(`${this.name} stopped`));
    if (!this.started) this.setState({ phase: 'stopped' });
  }

  private setState(s: ReflectorState): void {
    this.currentState = s;
    this.stateEmitter.fire(s);
    if (s.phase === 'stopped') this.stateEmitter.dispose();
  }

  private async loop(): Promise<void> {
    try {
      while (!this.stopped) {
        let reason: string;
        try {
          reason = await this.listAndWatch();
        } catch (e) {
          if (this.stopped) break;
          this.lastErrorText = messageOf(e);
          this.lastErrorCode = codeOf(e);
          reason = e instanceof VeryShortWatchError ? 'very short watch' : `list/watch failed`;
          this.log.warn('list/watch failed', { error: this.lastErrorText, code: codeOf(e) });
        }
        if (this.stopped) break;
        if (!(await this.backoffSleep(reason))) break;
      }
    } catch (e) {
      // Defensive: nothing above should throw past the handlers; never die silently.
      this.log.error('reflector loop crashed', { error: messageOf(e) });
    } finally {
      this.setState({ phase: 'stopped' });
    }
  }

  /** Announces a backoff and waits it out; false when stopped meanwhile. */
  private async backoffSleep(reason: string): Promise<boolean> {
    const delay = this.backoff.next();
    const code = this.lastErrorCode;
    this.setState({ phase: 'backoff', reason, retryInMs: delay, lastError: this.lastErrorText ?? '', ...(code !== undefined ? { code } : {}), resourceVersion: this.lastSyncRV });
    try {
      await sleep(this.clock, delay, this.abort.signal);
      return !this.stopped;
    } catch {
      return false;
    }
  }

  /**
   * One list followed by watches until one ends in a way that needs a relist.
   * Returns the reason for the following backoff; throws list failures.
   */
  private async listAndWatch(): Promise<string> {
    let carried: OpenWatch<T> | undefined;
    if (this.useWatchList) {
      try {
        carried = await this.watchList();
        if (carried === undefined) return 'stopped';
      } catch (e) {
        if (this.stopped) return 'stopped';
        // client-go: "making progress is better than deadlocking"; the next cycle tries WatchList again.
        this.log.info('WatchList failed; falling back to LIST + WATCH', { error: messageOf(e), code: codeOf(e) });
      }
    }
    if (carried === undefined) await this.list();
    const stopResync = this.startResync();
    try {
      return await this.watchUntilRelist(carried);
    } finally {
      stopResync();
    }
  }

  /**
   * Arms the resync ticks of one list-and-watch cycle (client-go `startResync`): every period, `store.resync()` when
   * `shouldResync` allows it. Returns what stops them.
   */
  private startResync(): () => void {
    const period = this.resyncPeriodMs?.() ?? 0;
    if (!(period > 0) || !this.store.resync) return () => undefined;
    let timer: TimerHandle | undefined;
    const tick = (): void => {
      timer = undefined;
      if (this.stopped) return;
      try {
        if (!this.shouldResync || this.shouldResync()) this.store.resync!();
      } catch (e) {
        this.log.error('resync failed', { error: messageOf(e) });
      }
      timer = this.clock.setTimeout(tick, period);
    };
    timer = this.clock.setTimeout(tick, period);
    return () => {
      if (timer !== undefined) this.clock.clearTimeout(timer);
      timer = undefined;
    };
  }

  /** The watches of one cycle, from `carried` (a WatchList's stream) or the last RV, until one needs a relist. */
  private async watchUntilRelist(carried: OpenWatch<T> | undefined): Promise<string> {
    for (;;) {
      if (this.stopped) {
        await carried?.close();
        return 'stopped';
      }
      const outcome = await this.watchOnce(carried);
      carried = undefined;
      if (this.stopped) return 'stopped';
      switch (outcome.kind) {
        case 'closed':
          continue;
        case 'retry-watch':
          if (!(await this.backoffSleep(outcome.reason))) return 'stopped';
          continue;
        case 'relist':
          return outcome.reason;
      }
    }
  }

  /** client-go relistResourceVersion. */
  private relistResourceVersion(): string {
    if (this.lastSyncRVUnavailable) return '';
    if (this.lastSyncRV === '') return '0';
    return this.lastSyncRV;
  }

  private async list(): Promise<void> {
    const rv = this.relistResourceVersion();
    this.setState({ phase: 'listing', resourceVersion: rv });
    let result: KubeList<T>;
    try {
      result = await this.listPaged(rv);
    } catch (e) {
      if (this.stopped || !(isExpiredError(e) || isTooLargeResourceVersionError(e))) throw e;
      this.lastSyncRVUnavailable = true;
      this.log.info('list at resource version failed as expired; listing the latest state', { resourceVersion: rv, error: messageOf(e) });
      this.setState({ phase: 'listing', resourceVersion: '' });
      result = await this.listPaged('');
    }
    if (this.stopped) return;
    this.lastSyncRVUnavailable = false;
    const listRV = result.metadata?.resourceVersion ?? '';
    this.store.replace(result.items ?? [], listRV);
    this.lastSyncRV = listRV;
    this.log.debug('listed', { resourceVersion: listRV, items: result.items?.length ?? 0 });
  }

  /** The client-go pager, with the reflector's choice of page size. */
  private async listPaged(rv: string): Promise<KubeList<T>> {
    let limit: number | undefined = this.pageSize;
    if (!this.forcePaging && !this.paginatedResult && rv !== '' && rv !== '0') limit = undefined;
    const signal = this.abort.signal;
    const first: ListOptions = { resourceVersion: rv, limit };
    let page = await this.lw.list(first, signal);
    if (!page.metadata?.continue) return page;
    if (rv === '0') this.paginatedResult = true;
    const items: T[] = [...page.items];
    const listRV = page.metadata.resourceVersion;
    while (page.metadata?.continue) {
      try {
        page = await this.lw.list({ continue: page.metadata.continue, limit }, signal);
      } catch (e) {
        if (this.stopped || !isExpiredError(e)) throw e;
        this.log.info('continue token expired; listing again in one piece', { resourceVersion: rv });
        return this.lw.list({ resourceVersion: rv }, signal);
      }
      for (const it of page.items) items.push(it);
    }
    return { ...page, metadata: { resourceVersion: listRV }, items };
  }

  /**
   * Opens a watch with a fresh random `timeoutSeconds` in [min, 2·min) and a
   * deadline guard 60 s past it; linked to `dispose()`.
   */
  private openWatch(options: Omit<WatchOptions, 'timeoutSeconds'>): OpenWatch<T> {
    const timeoutSeconds = Math.floor((this.minWatchTimeoutMs / 1000) * (this.random() + 1));
    const ac = new AbortController();
    const onStop = () => ac.abort(this.abort.signal.reason);
    this.abort.signal.addEventListener('abort', onStop, { once: true });
    let abandoned = false;
    const deadline: TimerHandle = this.clock.setTimeout(() => {
      abandoned = true;
      ac.abort(new Error('watch outlived its timeout'));
    }, timeoutSeconds * 1000 + WATCH_DEADLINE_GRACE_MS);
    let iterator: AsyncIterator<WatchEvent<T>>;
    try {
      iterator = this.lw.watch({ ...options, timeoutSeconds }, ac.signal)[Symbol.asyncIterator]();
    } catch (e) {
      // A ListerWatcher that throws instead of failing the stream: the same failure, seen on the first read.
      iterator = { next: () => Promise.reject(e) };
    }
    let closed = false;
    return {
      iterator,
      timeoutSeconds,
      get abandoned() {
        return abandoned;
      },
      close: async () => {
        if (closed) return;
        closed = true;
        this.clock.clearTimeout(deadline);
        this.abort.signal.removeEventListener('abort', onStop);
        // Abort first: a read still pending under the iterator (a wrapping ListerWatcher may keep one) is
        // released by the abort, and only then can return() run the stream's cleanup.
        if (!ac.signal.aborted) ac.abort(new Error('watch closed'));
        try {
          await iterator.return?.();
        } catch {
          // the stream is being let go; how it ends no longer matters
        }
      },
    };
  }

  /**
   * The WatchList phase of a cycle (client-go `Reflector.watchList`). Returns
   * the open stream, positioned just after the initial-events-end bookmark,
   * with the store replaced; `undefined` when stopped. Throws what calls for
   * a LIST fallback.
   */
  private async watchList(): Promise<OpenWatch<T> | undefined> {
    for (;;) {
      if (this.stopped) return undefined;
      const rv = this.lastSyncRVUnavailable ? '' : this.lastSyncRV;
      this.setState({ phase: 'listing', resourceVersion: rv, watchList: true });
      const w = this.openWatch({ resourceVersion: rv, allowWatchBookmarks: true, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' });
      const collected = new Map<string, T>();
      const start = this.clock.now();
      let events = 0;
      let lastEventAt = start;
      let streamRV = '';
      let pastAdded = false;
      let ended = false;
      let warning: TimerHandle | undefined;
      let probed = false;
      const armWarning = () => {
        warning = this.clock.setTimeout(() => {
          if (!probed && events === 0) {
            probed = true;
            void this.probeStalledWatchList(() => !ended && events === 0 && !this.stopped, rv, start);
          }
          this.log.warn('WatchList: still waiting for the bookmark that ends the initial events', {
            resourceVersion: rv,
            events,
            sinceStartMs: this.clock.now() - start,
            sinceLastEventMs: this.clock.now() - lastEventAt,
          });
          armWarning();
        }, WATCH_LIST_BOOKMARK_WARNING_MS);
      };
      armWarning();
      try {
        for (;;) {
          const r = await w.iterator.next();
          if (r.done || this.stopped) break;
          const ev = r.value;
          if (ev.type === 'ERROR') throw statusToError(ev.object);
          const obj = ev.object as T | undefined;
          if (!obj || typeof obj !== 'object' || !obj.metadata) {
            this.log.warn('skipping a watch event without an object', { type: ev.type });
            continue;
          }
          switch (ev.type) {
            case 'ADDED':
            case 'MODIFIED':
            case 'DELETED':
              if (!obj.metadata.name) {
                this.log.warn('skipping a watch event for an object without a name', { type: ev.type });
                continue;
              }
              if (ev.type === 'DELETED') collected.delete(keyOf(obj));
              else collected.set(keyOf(obj), obj);
              if (ev.type !== 'ADDED') pastAdded = true;
              break;
            case 'BOOKMARK':
              pastAdded = true;
              if (obj.metadata.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true') ended = true;
              break;
            default:
              this.log.warn('skipping a watch event of unknown type', { type: (ev as { type: unknown }).type });
              continue;
          }
          // The synthetic ADDED events come in no RV order: only a later event (the bookmark) gives the RV.
          if (pastAdded && obj.metadata.resourceVersion) streamRV = obj.metadata.resourceVersion;
          events++;
          lastEventAt = this.clock.now();
          if (ended) break;
        }
      } catch (e) {
        if (warning !== undefined) this.clock.clearTimeout(warning);
        await w.close();
        if (this.stopped) return undefined;
        if (isWatchErrorRetriable(e)) {
          this.lastErrorText = messageOf(e);
          this.lastErrorCode = codeOf(e);
          this.log.info('WatchList failed with a retriable error; backing off', { error: this.lastErrorText, code: codeOf(e) });
          if (!(await this.backoffSleep(codeOf(e) === 429 ? 'too many requests' : 'connection refused'))) return undefined;
          continue;
        }
        if (isExpiredError(e) || isTooLargeResourceVersionError(e)) {
          // Start over from the latest state (a consistent read), dropping what was collected.
          this.lastSyncRVUnavailable = true;
          this.log.info('WatchList at resource version failed as expired; streaming the latest state', {
            resourceVersion: rv,
            collected: collected.size,
            error: messageOf(e),
          });
          continue;
        }
        throw e;
      }
      if (warning !== undefined) this.clock.clearTimeout(warning);
      if (this.stopped) {
        await w.close();
        return undefined;
      }
      if (!ended) {
        await w.close();
        if (events === 0 && this.clock.now() - start < 1000) throw new VeryShortWatchError(this.name);
        this.log.info('WatchList stream closed before the initial events ended; streaming again', { resourceVersion: rv, events });
        continue;
      }
      this.lastSyncRVUnavailable = false;
      this.store.replace([...collected.values()], streamRV);
      this.lastSyncRV = streamRV;
      this.log.debug('streamed the initial list', { resourceVersion: streamRV, items: collected.size, ms: this.clock.now() - start });
      return w;
    }
  }

  /**
   * A WatchList stream that has sent nothing for WATCH_LIST_BOOKMARK_WARNING_MS: a server that cannot produce the
   * initial events (a custom resource whose conversion webhook is down) may keep the stream open in silence, while a
   * LIST of the same resource fails with the reason. So one LIST of one item is sent, once per stream; when it fails
   * and the stream is still silent (`stillSilent`), the failure is logged and put in the state (`stalled`) for the
   * views. Diagnosis only: the stream is kept and waited for, as client-go does. Never throws.
   */
  private async probeStalledWatchList(stillSilent: () => boolean, rv: string, start: number): Promise<void> {
    let listError: string | undefined;
    try {
      await this.lw.list({ limit: 1 }, this.abort.signal);
    } catch (e) {
      listError = messageOf(e);
    }
    if (listError === undefined || !stillSilent()) return;
    const sinceMs = this.clock.now() - start;
    this.log.warn('WatchList: no initial events, and a LIST of the same resource fails', { resourceVersion: rv, sinceStartMs: sinceMs, listError });
    this.setState({ phase: 'listing', resourceVersion: rv, watchList: true, stalled: { sinceMs, listError } });
  }

  /**
   * One watch until it ends: `carried` is the stream a WatchList left open
   * (already past its initial events); otherwise a new watch from the last RV.
   */
  private async watchOnce(carried?: OpenWatch<T>): Promise<{ kind: 'closed' } | { kind: 'retry-watch'; reason: string } | { kind: 'relist'; reason: string }> {
    const rv = this.lastSyncRV;
    const w = carried ?? this.openWatch({ resourceVersion: rv, allowWatchBookmarks: true });
    this.setState({ phase: 'watching', resourceVersion: rv });
    this.holdRVUntilNonAdded = carried === undefined && (rv === '' || rv === '0');
    const start = this.clock.now();
    let events = 0;
    let failure: unknown;
    let failed = false;
    try {
      for (;;) {
        const r = await w.iterator.next();
        if (r.done || this.stopped) break;
        // As client-go's eventCount: an event skipped for having no object metadata does not count against a
        // "very short watch"; every other event does (also one the store could not take).
        if (this.handleEvent(r.value)) events++;
      }
    } catch (e) {
      failed = true;
      failure = e;
    } finally {
      await w.close();
    }
    const abandoned = w.abandoned;
    const timeoutSeconds = w.timeoutSeconds;
    if (this.stopped) return { kind: 'relist', reason: 'stopped' };
    if (abandoned) {
      this.log.warn('watch outlived its timeout; watching again', { timeoutSeconds, resourceVersion: this.lastSyncRV });
      return { kind: 'closed' };
    }
    if (!failed) {
      if (events === 0 && this.clock.now() - start < 1000) throw new VeryShortWatchError(this.name);
      return { kind: 'closed' };
    }
    this.lastErrorText = messageOf(failure);
    this.lastErrorCode = codeOf(failure);
    if (isWatchErrorRetriable(failure)) {
      this.log.info('watch failed with a retriable error; backing off', { error: this.lastErrorText, code: codeOf(failure) });
      return { kind: 'retry-watch', reason: codeOf(failure) === 429 ? 'too many requests' : 'connection refused' };
    }
    if (isExpiredError(failure)) {
      // Not marking the RV unavailable: LIST at the last RV already means "at least as new" (client-go).
      this.log.info('watch expired; relisting', { error: this.lastErrorText, resourceVersion: this.lastSyncRV });
      return { kind: 'relist', reason: 'resource version expired' };
    }
    this.log.warn('watch ended with an error', { error: this.lastErrorText, code: codeOf(failure) });
    return { kind: 'relist', reason: 'watch failed' };
  }

  /** Applies one watch event; false when it was skipped for having no object metadata (client-go: not counted). */
  private handleEvent(ev: WatchEvent<T>): boolean {
    if (ev.type === 'ERROR') throw statusToError(ev.object);
    const obj = ev.object as T | undefined;
    if (!obj || typeof obj !== 'object' || !obj.metadata) {
      this.log.warn('skipping a watch event without an object', { type: ev.type });
      return false;
    }
    switch (ev.type) {
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED':
        if (!obj.metadata.name) {
          this.log.warn('skipping a watch event for an object without a name', { type: ev.type });
          return true;
        }
        if (ev.type === 'ADDED') this.store.add(obj);
        else if (ev.type === 'MODIFIED') this.store.update(obj);
        else this.store.delete(obj);
        break;
      case 'BOOKMARK':
        break;
      default:
        this.log.warn('skipping a watch event of unknown type', { type: (ev as { type: unknown }).type });
        return true;
    }
    if (ev.type !== 'ADDED') this.holdRVUntilNonAdded = false;
    const rv = obj.metadata.resourceVersion;
    if (rv && !this.holdRVUntilNonAdded) this.lastSyncRV = rv;
    return true;
  }
}
