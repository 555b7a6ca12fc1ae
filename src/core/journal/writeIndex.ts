import type { EnqueueReason } from '../controller/keyState.ts';
import type { ObjectKey } from '../k8s/keys.ts';
import type { JournalEntry } from './journal.ts';

/** Who made a write: the controller and the key whose reconcile sent it (no key: outside a reconcile). */
export interface Writer {
  readonly controller?: string;
  readonly key?: ObjectKey;
}

/**
 * The journaled writes by written object and the resourceVersion they produced, so that an event's cause can say
 * whose write made it ("update rv 41, this key's own write"): a reconcile queued again by its own write is the usual
 * question behind "why does it reconcile twice?".
 *
 * Attribution is looked up when a cause is shown, not when the key is queued: the server answers a write and
 * streams the watch event for it independently, so the event (and the key it queues) is often seen before the
 * write's answer is journaled. Keeps the latest `max` writes (oldest first out).
 */
export class WriteIndex {
  private readonly byVersion = new Map<string, Writer>();
  private readonly max: number;

  constructor(max = 10_000) {
    this.max = max;
  }

  /**
   * Remembers `e` when it is a persisted write that changed its object (not a dry run, a failure, a delete, or an
   * accepted write that left the resourceVersion as it was); other entries are ignored. Returns the writer it noted.
   */
  note(e: JournalEntry): Writer | undefined {
    if (e.kind !== 'write' || e.dryRun || e.error || e.deleted || !e.resourceVersionAfter || e.resourceVersionAfter === e.resourceVersionBefore) return undefined;
    const id = `${e.objectKey}@${e.resourceVersionAfter}`;
    const w: Writer = { ...(e.controller !== undefined ? { controller: e.controller } : {}), ...(e.key !== undefined ? { key: e.key } : {}) };
    this.byVersion.delete(id);
    this.byVersion.set(id, w);
    if (this.byVersion.size > this.max) this.byVersion.delete(this.byVersion.keys().next().value!);
    return w;
  }

  /** Who wrote `objectKey` at `resourceVersion`, when that write was noted. */
  writer(objectKey: string, resourceVersion: string | undefined): Writer | undefined {
    return resourceVersion === undefined ? undefined : this.byVersion.get(`${objectKey}@${resourceVersion}`);
  }

  /** Who wrote the object version an event cause names (informer, owned, watch); undefined for other causes. */
  writerOf(r: EnqueueReason): Writer | undefined {
    switch (r.kind) {
      case 'informer':
      case 'watch':
        return this.writer(r.objectKey, r.resourceVersion);
      case 'owned':
        return this.writer(r.child, r.resourceVersion);
      default:
        return undefined;
    }
  }

  /**
   * The key whose reconcile by `controller` wrote the object version `r` names; undefined when no noted write of
   * that controller made it (another controller, a write outside a reconcile, not an event cause).
   */
  reconcileKeyOf(r: EnqueueReason, controller: string): ObjectKey | undefined {
    const w = this.writerOf(r);
    return w?.key !== undefined && w.controller === controller ? w.key : undefined;
  }

  clear(): void {
    this.byVersion.clear();
  }
}
