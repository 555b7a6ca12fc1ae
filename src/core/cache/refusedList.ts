import { toDisposable, type Disposable } from '../lifecycle.ts';
import type { ResourceInfo } from '../k8s/objects.ts';
import type { SharedIndexInformer } from './interfaces.ts';

/**
 * An informer whose initial list the API server refused: 403 Forbidden (RBAC) or 401 Unauthorized (credentials).
 * Retrying does not help until someone changes the rights or the credentials, so a front-end says so at once
 * instead of waiting for a cache-sync timeout (controller-runtime waits two minutes and then names only the kind).
 */
export interface RefusedList {
  /** The resource the informer lists. */
  readonly resource: ResourceInfo;
  /** The namespace it is scoped to; undefined: all namespaces (a cluster-wide list). */
  readonly namespace?: string;
  readonly code: 401 | 403;
  /** The server's message (it names the user, the verb, the resource and the scope; never a credential). */
  readonly error: string;
}

/** One informer to look at, with the namespace it was scoped to (undefined: all namespaces). */
export interface ScopedInformer {
  readonly informer: SharedIndexInformer;
  readonly namespace?: string;
}

/**
 * Calls `onRefused` once, the first time one of `informers` that has not synced yet backs off after a 401 or a 403
 * (an informer refused before this is called counts too). Informers that have synced are not looked at: a right
 * revoked later is a failure of the running loop, which keeps retrying as client-go does. Dispose to stop watching.
 */
export function onInitialListRefused(informers: readonly ScopedInformer[], onRefused: (r: RefusedList) => void): Disposable {
  let done = false;
  const subs: Disposable[] = [];
  const stop = () => {
    for (const s of subs.splice(0)) s.dispose();
  };
  const look = (s: ScopedInformer) => {
    if (done || s.informer.hasSynced()) return;
    const st = s.informer.state;
    if (st.phase !== 'backoff' || (st.code !== 403 && st.code !== 401)) return;
    done = true;
    // Synchronously from a state event: unsubscribe after the listeners of this event have run.
    queueMicrotask(stop);
    onRefused({ resource: s.informer.resource, ...(s.namespace !== undefined ? { namespace: s.namespace } : {}), code: st.code, error: st.lastError });
  };
  for (const s of informers) subs.push(s.informer.onDidChangeState(() => look(s)));
  for (const s of informers) look(s);
  return toDisposable(() => {
    done = true;
    stop();
  });
}

/** How a front-end names its namespace option and the context's default namespace, for {@link refusedListMessage}. */
export interface RefusedListHints {
  /** How a person restricts what is watched to one namespace: `--namespace <ns>`, or a command / setting name. */
  readonly restrict: (namespace: string) => string;
  /** The kubeconfig context's namespace, offered first when the refused list was cluster-wide. */
  readonly contextNamespace?: string;
  /** The context's name, for a 401. */
  readonly context?: string;
}

/** `plural.group` (`configmaps` for the core group). */
function resourceId(r: ResourceInfo): string {
  return r.group ? `${r.resource}.${r.group}` : r.resource;
}

/**
 * For a person: what the server refused, in which scope, and what to do next: watch one namespace the user may list
 * (the context's namespace first) or ask for the rights, with the `kubectl auth can-i` line that checks them. No
 * credential is part of it (the server's message names the user only).
 */
export function refusedListMessage(r: RefusedList, hints: RefusedListHints): string {
  const id = resourceId(r.resource);
  if (r.code === 401) {
    // The transport's 401 already says what to do (renew the credentials).
    const what = /renew them/.test(r.error) ? '' : ' Renew them (an expired token or certificate, or a credential plugin that failed), then try again.';
    return `The API server did not accept the credentials${hints.context ? ` of context "${hints.context}"` : ''} (401 Unauthorized) when listing ${id}: ${r.error}.${what}`;
  }
  const where = r.namespace === undefined ? 'in all namespaces' : `in namespace ${r.namespace}`;
  const canI = `kubectl auth can-i list ${id} ${r.namespace === undefined ? '--all-namespaces' : `-n ${r.namespace}`}`;
  const lines = [`You may not list ${id} ${where} (403 Forbidden: ${r.error}).`];
  if (r.namespace === undefined) {
    const ns = hints.contextNamespace;
    lines.push(
      ns
        ? `Watch one namespace instead: ${hints.restrict(ns)} (your context's namespace), or another one you may list; or ask for list and watch on ${id} in every namespace (a ClusterRole and ClusterRoleBinding).`
        : `Watch one namespace you may list instead: ${hints.restrict('<namespace>')}; or ask for list and watch on ${id} in every namespace (a ClusterRole and ClusterRoleBinding).`,
    );
  } else {
    lines.push(`Use a namespace you may list (${hints.restrict('<namespace>')}), or ask for list and watch on ${id} in ${r.namespace} (a Role and RoleBinding there).`);
  }
  // The transport's 403 already ends with the missing right and its `kubectl auth can-i` line.
  if (!r.error.includes('kubectl auth can-i')) lines.push(`Check your rights with: ${canI} (and the same with watch).`);
  return lines.join(' ');
}
