import type { JournalEntry } from '../journal/journal.ts';
import type { ObjectKey } from '../k8s/keys.ts';
import { writeText } from '../journal/writeText.ts';
import type { KubeClient, WriteOptions } from '../k8s/client.ts';
import type { GroupVersionResource, KubeObject } from '../k8s/objects.ts';

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

/**
 * The result message of a check that could not judge the key because of `failure` ({@link confinementFailure}).
 * `clusterScoped`: the checked object's kind is cluster-scoped, so its copy is in no namespace (it has a name of its
 * own) and only its children are in the scratch namespace; the message says so instead of "the object's own namespace".
 */
export function confinementMessage(failure: string, clusterScoped = false): string {
  const why = clusterScoped
    ? 'Your reconcile reads or writes objects outside the scratch namespace (a cluster-scoped object other than the copy, e.g. a Namespace per object; a record kept in a namespace of its own); a check instance runs over a copy of the object under a name of its own, its cache holds only that copy and the scratch namespace, and its writes that would change anything else are refused'
    : 'Your reconcile reads or writes objects outside the object\'s own namespace (a record kept in another namespace, a cluster-scoped object); a check instance runs over a copy in a scratch namespace, its cache holds only that namespace and its writes that would change objects elsewhere are refused';
  return `could not check this key inside a check instance: ${failure}. ${why}, so that your real objects are never changed. The failure comes from that confinement, not from your controller: this check has no finding, and no verdict, for this key`;
}

function clip(s: string): string {
  return s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}…` : s;
}

/**
 * What a check run's own controller (the built-in loop with a lab, exec or module reconciler) may change besides its
 * scratch namespace. Shared by every run of one {@link runChecks} call, so that an object one run created outside
 * the scratch namespace (a cluster-scoped primary's Namespace per object, a child in it) stays writable by the runs
 * after it (a restarted controller updates it).
 */
export class CheckFootprint {
  /** `resource|namespace|name` of each object a run created outside its scratch namespace. */
  private readonly created = new Set<string>();
  /** Namespaces a run created: everything inside them is the check's too. */
  private readonly namespaces = new Set<string>();

  /** Notes an object a run created (a namespace, or an object outside the scratch namespace). */
  noteCreated(gvr: GroupVersionResource, namespace: string | undefined, name: string): void {
    this.created.add(footprintKey(gvr, namespace, name));
    if (gvr.group === '' && gvr.resource === 'namespaces') this.namespaces.add(name);
  }

  /** Whether the check made the object (or the namespace it is in). */
  owns(gvr: GroupVersionResource, namespace: string | undefined, name: string): boolean {
    return (namespace !== undefined && namespace !== '' && this.namespaces.has(namespace)) || this.created.has(footprintKey(gvr, namespace, name));
  }
}

function footprintKey(gvr: GroupVersionResource, namespace: string | undefined, name: string): string {
  return `${gvr.group}/${gvr.resource}|${namespace ?? ''}|${name}`;
}

/**
 * The client of a check run's own controller, confined as a Go check instance's is (bridge/checks.go): a persisted
 * write in the scratch namespace `namespace`, or to the copy of a cluster-scoped primary (`clusterCopy`), goes
 * through. Elsewhere, a create goes through (it cannot change an existing object: the server refuses one that
 * exists) and is noted in `footprint`, and so do later writes to what the check created (and to anything in a
 * namespace it created); any other write outside — an object of your real namespaces, a cluster-scoped object the
 * check did not create — is refused with {@link CHECK_WRITE_REFUSAL} before it reaches the server, so the check
 * judges the key as one it could not run ({@link confinementFailure}) and your real objects are never changed.
 * Dry-run writes and reads are never refused. What an exec program writes with its own client (kubectl) does not
 * go through here.
 */
export function confinedClient(inner: KubeClient, scope: { namespace: string; clusterCopy?: { gvr: GroupVersionResource; name: string }; footprint: CheckFootprint }): KubeClient {
  const { namespace, clusterCopy, footprint } = scope;
  const allowed = (gvr: GroupVersionResource, ns: string | undefined, name: string) =>
    ns === namespace ||
    (!ns && clusterCopy !== undefined && clusterCopy.name === name && clusterCopy.gvr.group === gvr.group && clusterCopy.gvr.resource === gvr.resource) ||
    footprint.owns(gvr, ns, name);
  const refuse = (verb: string, gvr: GroupVersionResource, ns: string | undefined, name: string): never => {
    const what = gvr.group ? `${gvr.resource}.${gvr.group}` : gvr.resource;
    throw new Error(`${CHECK_WRITE_REFUSAL}${verb} ${what} ${ns ? `${ns}/${name}` : name}: a check instance writes only in its scratch namespace ${namespace} and to what it created (a write elsewhere would change your real objects)`);
  };
  const guard = <T>(verb: string, gvr: GroupVersionResource, ns: string | undefined, name: string, dry: boolean, write: () => Promise<T>): Promise<T> => {
    if (dry || allowed(gvr, ns, name)) return write();
    return Promise.resolve().then(() => refuse(verb, gvr, ns, name));
  };
  const isDry = (o?: WriteOptions) => o?.dryRun === true;
  const nameOf = (o: KubeObject) => o.metadata.name ?? o.metadata.generateName ?? '';
  const c: KubeClient = {
    get: (...a) => inner.get(...a),
    list: (...a) => inner.list(...a),
    discover: (...a) => inner.discover(...a),
    create: async (g, o, opt) => {
      const created = await inner.create(g, o, opt);
      const ns = created.metadata.namespace ?? o.metadata.namespace;
      if (!isDry(opt) && !allowed(g, ns, created.metadata.name ?? '')) footprint.noteCreated(g, ns, created.metadata.name ?? '');
      return created;
    },
    update: (g, o, opt) => guard('update', g, o.metadata.namespace, nameOf(o), isDry(opt), () => inner.update(g, o, opt)),
    updateStatus: (g, o, opt) => guard('update', g, o.metadata.namespace, `${nameOf(o)}`, isDry(opt), () => inner.updateStatus(g, o, opt)),
    patch: (g, ns, n, t, p, opt) => guard('patch', g, ns, n, isDry(opt), () => inner.patch(g, ns, n, t, p, opt)),
    patchStatus: (g, ns, n, t, p, opt) => guard('patch', g, ns, n, isDry(opt), () => inner.patchStatus(g, ns, n, t, p, opt)),
    // Server-side apply creates or changes: outside, only what the check made (a create-by-apply of a new object
    // outside is refused too; a reconciler that applies such children is judged as one that could not run).
    apply: (g, o, opt) => guard('apply', g, o.metadata.namespace, nameOf(o), isDry(opt), () => inner.apply(g, o, opt)),
    delete: (g, ns, n, opt) => guard('delete', g, ns, n, isDry(opt), () => inner.delete(g, ns, n, opt)),
  };
  const sub = (inner as { updateSubresource?: unknown }).updateSubresource;
  if (typeof sub === 'function') {
    (c as unknown as { updateSubresource: unknown }).updateSubresource = (g: GroupVersionResource, o: KubeObject, subresource: string, opt?: WriteOptions) =>
      guard('update', g, o.metadata.namespace, nameOf(o), isDry(opt), () => (sub as (...x: unknown[]) => Promise<unknown>).call(inner, g, o, subresource, opt));
  }
  return c;
}
