/**
 * Ownership of resources. Everything that holds a listener, timer, stream or
 * child process is a {@link Disposable} and is registered with its owner when
 * it is created, so that stopping a connection, a controller or the extension
 * releases everything below it.
 *
 * Structurally compatible with `vscode.Disposable`, without importing it.
 */
export interface Disposable {
  dispose(): void;
}

/** Wraps a function as a Disposable that runs it at most once. */
export function toDisposable(fn: () => void): Disposable {
  let done = false;
  return {
    dispose() {
      if (done) return;
      done = true;
      fn();
    },
  };
}

/**
 * A bag of disposables with one lifetime.
 *
 * Invariants: `dispose()` is idempotent; it disposes members in reverse order
 * of addition (last acquired, first released); a member added after the store
 * was disposed is disposed immediately (so a late async start cannot leak);
 * an exception thrown by one member does not stop the others, and the first
 * one is rethrown after all members ran.
 */
export class DisposableStore implements Disposable {
  private readonly items: Disposable[] = [];
  private disposedFlag = false;

  get isDisposed(): boolean {
    return this.disposedFlag;
  }

  /** Registers `d` and returns it, or disposes it at once if the store is already disposed. */
  add<T extends Disposable>(d: T): T {
    if (this.disposedFlag) {
      d.dispose();
    } else {
      this.items.push(d);
    }
    return d;
  }

  /** Removes `d` without disposing it (its owner changed). */
  delete(d: Disposable): void {
    const i = this.items.indexOf(d);
    if (i >= 0) this.items.splice(i, 1);
  }

  dispose(): void {
    if (this.disposedFlag) return;
    this.disposedFlag = true;
    let first: unknown;
    let failed = false;
    while (this.items.length > 0) {
      const d = this.items.pop()!;
      try {
        d.dispose();
      } catch (e) {
        if (!failed) {
          failed = true;
          first = e;
        }
      }
    }
    if (failed) throw first;
  }
}
