import { type Disposable, toDisposable } from './lifecycle.ts';

/**
 * A subscribable event with the same call shape as `vscode.Event<T>`:
 * `event(listener, thisArgs?, disposables?) → Disposable`.
 */
export type Event<T> = (listener: (e: T) => unknown, thisArgs?: unknown, disposables?: Disposable[]) => Disposable;

/** Receives listener exceptions so that one throwing listener cannot break delivery to others. */
export type ListenerErrorSink = (error: unknown) => void;

/**
 * Owns the listeners of one event. Delivery is synchronous, in subscription
 * order, to a snapshot of the listeners taken when `fire` starts (a listener
 * added during `fire` first hears the next event). A throwing listener is
 * reported to `onListenerError` and the remaining listeners still run.
 */
export class Emitter<T> implements Disposable {
  private listeners: Array<(e: T) => unknown> = [];
  private disposed = false;
  private readonly onListenerError: ListenerErrorSink;

  constructor(onListenerError?: ListenerErrorSink) {
    this.onListenerError = onListenerError ?? ((e) => queueMicrotask(() => { throw e; }));
  }

  readonly event: Event<T> = (listener, thisArgs, disposables) => {
    if (this.disposed) return toDisposable(() => {});
    const bound = thisArgs === undefined ? listener : listener.bind(thisArgs);
    this.listeners.push(bound);
    const d = toDisposable(() => {
      const i = this.listeners.indexOf(bound);
      if (i >= 0) this.listeners.splice(i, 1);
    });
    disposables?.push(d);
    return d;
  };

  get hasListeners(): boolean {
    return this.listeners.length > 0;
  }

  fire(e: T): void {
    if (this.disposed) return;
    for (const l of this.listeners.slice()) {
      try {
        l(e);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }

  dispose(): void {
    this.disposed = true;
    this.listeners = [];
  }
}
