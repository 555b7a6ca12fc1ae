import type { JournalEntry } from '../journal/journal.ts';
import type { ObjectKey } from '../k8s/keys.ts';
import { writeText } from '../journal/writeText.ts';

/**
 * A robustness-check instance of a Go controller is confined to its scratch namespace: its manager's cache holds only
 * that namespace and the bridge refuses a persisted write anywhere else (bridge/checks.go, `outsideScratch`), so a
 * check never changes the developer's real objects. A controller that keeps a record in another namespace (or
 * writes a cluster-scoped object) therefore fails inside a check instance *because of the check*: such a failure is
 * no finding about the controller, and the check reports it as one it could not run, with this reason.
 *
 * Recognized by the texts of the two refusals, which reach the journal as a write's error or inside a reconcile's
 * error (a controller usually wraps the error it got):
 * - the bridge's own refusal of a write: {@link CHECK_WRITE_REFUSAL};
 * - controller-runtime's refusal of a read outside the cache's namespaces (its multi-namespace cache, v0.25:
 *   `unable to get: <key> because of unknown namespace for the cache`, and the same for `unable to list`).
 */

/** The start of the bridge's refusal of a check instance's write outside its scratch namespace (bridge/checks.go). */
export const CHECK_WRITE_REFUSAL = 'reconcile lab check: refused ';

const CACHE_READ_REFUSAL = /unable to (get|list): (\S+) because of unknown namespace for the cache/;

const MAX_TEXT = 300;

/**
 * What in `entries` (a check run's journal) shows that the reconciles of `key` (every key when undefined: a
 * finding's journal, already of one key) failed because of the check instance's confinement, not because of the
 * controller: the first refused write of a reconcile, else the first reconcile whose error carries a refusal.
 * Undefined when there is none. Pure.
 */
export function confinementFailure(entries: readonly JournalEntry[], key?: ObjectKey): string | undefined {
  for (const e of entries) {
    if (key !== undefined && e.key !== key) continue;
    if (e.kind === 'write' && e.error?.includes(CHECK_WRITE_REFUSAL)) {
      return `the write ${writeText(e)} was refused (a check instance writes only in its scratch namespace)`;
    }
    if (e.kind === 'reconcileEnd' && (e.outcome.kind === 'error' || e.outcome.kind === 'terminal')) {
      const m = e.outcome.message;
      const read = CACHE_READ_REFUSAL.exec(m);
      if (read) return `a read (${read[1]} ${read[2]}) outside the scratch namespace failed (a check instance's cache holds only its scratch namespace): ${clip(m)}`;
      if (m.includes(CHECK_WRITE_REFUSAL)) return `a write outside the scratch namespace was refused: ${clip(m)}`;
    }
  }
  return undefined;
}

/** The result message of a check that could not judge the key because of `failure` ({@link confinementFailure}). */
export function confinementMessage(failure: string): string {
  return `could not check this key inside a check instance: ${failure}. Your reconcile reads or writes objects outside the object's own namespace (a record kept in another namespace, a cluster-scoped object); a check instance runs over a copy in a scratch namespace, its cache holds only that namespace and the bridge refuses its writes elsewhere, so that your real objects are never changed. The failure comes from that confinement, not from your controller: this check has no finding, and no verdict, for this key`;
}

function clip(s: string): string {
  return s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}…` : s;
}
