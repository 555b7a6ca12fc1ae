import * as vscode from 'vscode';
import { oneVersionPerResource } from '../../core/k8s/discovery.ts';
import { keyOf as keyOfObject, splitKey } from '../../core/k8s/keys.ts';
import { resourceIdOfGvr } from '../../core/k8s/objects.ts';
import { RemoteController } from '../../core/bridge/remoteController.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import type { Session } from '../session/session.ts';
import { finalizersOf, presentObject } from '../views/presentation.ts';
import * as ui from '../ui.ts';
import { fail, keyOf, keyPlaceholder, targetOf, type Failure, type ObjectTarget } from './args.ts';

/** One resource the server serves, as the resource pickers offer it. */
export interface ResourceChoice extends vscode.QuickPickItem {
  /** `plural.group` (`configmaps` for the core group). */
  readonly id: string;
}

/**
 * The resources `s`'s server serves that an informer can watch (list and watch), one version each, as quick pick
 * items: custom resources first, then by id; `first` (the current choice, when served) before all and described
 * as current. Label the kind, description the id, detail group/version, scope and "custom resource".
 */
export function watchableResourceItems(s: Session, first?: string): ResourceChoice[] {
  return oneVersionPerResource(s.discovered, (r) => r.verbs.includes('list') && r.verbs.includes('watch'))
    .map((r) => ({ id: resourceIdOfGvr(r), r, custom: s.customResources.has(resourceIdOfGvr(r)) }))
    .sort((a, b) => Number(b.id === first) - Number(a.id === first) || Number(b.custom) - Number(a.custom) || a.id.localeCompare(b.id))
    .map((c) => ({
      label: c.r.kind,
      description: `${c.id}${first !== undefined && c.id === first ? ' · current' : ''}`,
      detail: `${c.r.group || 'core'}/${c.r.version} · ${c.r.namespaced ? 'namespaced' : 'cluster-scoped'}${c.custom ? ' · custom resource' : ''}`,
      id: c.id,
    }));
}

/** The connected session, or a failure (telling the person when the command was run by hand). */
export function requireSession(lab: ReconcileLab, arg: unknown): Session | Failure {
  const s = lab.session;
  if (s) return s;
  const message = lab.isConnecting ? 'Still connecting to the cluster; try again in a moment.' : 'Not connected to a cluster.';
  if (arg === undefined) {
    void ui.info(`Reconcile Lab: ${message}`, 'Connect').then((c) => {
      if (c) void vscode.commands.executeCommand('reconcileLab.connect');
    });
  }
  return fail('notConnected', message);
}

/**
 * The object a command acts on: from its argument (a tree element, `{ key,
 * resource }`, or `{ key }` meaning the loop's resource), else picked by the
 * person among cached objects (of the loop's resource when `primaryOnly`, of the watched ones among `resources`
 * when given).
 */
export async function resolveTarget(
  s: Session,
  now: number,
  arg: unknown,
  options: { primaryOnly?: boolean; withFinalizers?: boolean; title: string; resources?: readonly string[] },
): Promise<ObjectTarget | Failure> {
  const t = targetOf(arg);
  const primary = s.primaryResource;
  const given = t?.key ?? keyOf(arg);
  // The keys of a Go controller with a custom request type are texts of its items, not object keys.
  const custom = options.primaryOnly && s.controller instanceof RemoteController && s.controller.announcement.requestType ? s.controller : undefined;
  if (custom) return resolveCustomKey(custom, primary, given, options.title);
  if (given !== undefined) {
    try {
      splitKey(given);
    } catch (e) {
      return fail('invalidArgument', (e as Error).message);
    }
  }
  if (t) {
    if (options.primaryOnly && t.resource !== primary) {
      return fail('invalidArgument', `${t.resource} ${t.key} is not reconciled by the loop${primary ? ` (it reconciles ${primary})` : ''}.`);
    }
    return scopeProblem(s, t) ?? t;
  }
  const key = keyOf(arg);
  if (key) {
    if (!primary) return fail('invalidArgument', `Give a resource with the key ${key}: no loop resource to assume.`);
    const target = { resource: primary, key };
    return scopeProblem(s, target) ?? target;
  }
  if (arg !== undefined) return fail('invalidArgument', 'Expected a tree element or { key, resource }.');
  const watched = s.resources.map((r) => r.id).filter((id) => !options.resources || options.resources.includes(id));
  const resources = options.primaryOnly ? (primary ? [primary] : []) : watched;
  const items: Array<vscode.QuickPickItem & { target: ObjectTarget }> = [];
  for (const resource of resources) {
    for (const obj of s.list(resource)) {
      if (options.withFinalizers && !finalizersOf(obj, resource).length) continue;
      const key = keyOfObject(obj);
      const p = presentObject(obj, resource === primary ? s.keyState(key) : undefined, now, undefined, resource);
      items.push({ label: key, description: `${obj.kind ?? resource}${p.description ? ` · ${p.description}` : ''}`, target: { resource, key } });
    }
  }
  if (items.length === 0) {
    const what = options.withFinalizers ? 'No cached object has finalizers.' : options.primaryOnly ? 'The loop has no objects to act on.' : options.resources ? `No ${options.resources.join(' or ')} are cached.` : 'No objects are cached.';
    void ui.info(`Reconcile Lab: ${what}`);
    return fail('notFound', what);
  }
  items.sort((a, b) => a.label.localeCompare(b.label));
  const pick = await ui.pick(items, { title: options.title, matchOnDescription: true, placeHolder: keyPlaceholder(items.map((i) => i.label)) });
  return pick ? pick.target : fail('cancelled', 'No object chosen.');
}

/**
 * The key of a command on a Go controller with a custom request type: the one given (any non-empty text: the
 * process refuses a text none of its items had), else picked among the keys the controller has shown.
 */
async function resolveCustomKey(c: RemoteController, primary: string | undefined, given: string | undefined, title: string): Promise<ObjectTarget | Failure> {
  const resource = primary ?? c.resourceId ?? '';
  if (given !== undefined) return { resource, key: given };
  const items = c.keyBriefs().map((b) => ({ label: b.key, description: b.phase, target: { resource, key: b.key } }));
  if (items.length === 0) {
    const what = `${c.name} has shown no key yet (its keys are ${c.announcement.requestType} items, named as the Work Queue shows them).`;
    void ui.info(`Reconcile Lab: ${what}`);
    return fail('notFound', what);
  }
  items.sort((a, b) => a.label.localeCompare(b.label));
  const pick = await ui.pick(items, { title, matchOnDescription: true, placeHolder: `a key of ${c.name} (${c.announcement.requestType})` });
  return pick ? pick.target : fail('cancelled', 'No key chosen.');
}

/**
 * A key that does not fit its resource's scope: "namespace/name" for a cluster-scoped resource (nothing would
 * ever be found, and a reconciler would get a namespace that does not exist), or a bare name for a namespaced one.
 * Undefined when it fits, or when the resource is not watched (the command reports that itself).
 */
function scopeProblem(s: Session, t: ObjectTarget): Failure | undefined {
  const info = s.resources.find((r) => r.id === t.resource)?.info;
  if (!info) return undefined;
  const { namespace, name } = splitKey(t.key);
  if (!info.namespaced && namespace !== undefined) {
    return fail('invalidArgument', `${t.resource} is cluster-scoped: its keys have no namespace (use "${name}", not "${t.key}").`);
  }
  if (info.namespaced && namespace === undefined) {
    return fail('invalidArgument', `${t.resource} is namespaced: give the key as namespace/name (got "${t.key}").`);
  }
  return undefined;
}
