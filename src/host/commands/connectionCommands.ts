import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import { startLocalControlPlane } from '../../core/controlplane/localControlPlane.ts';
import { writeSetting } from '../config.ts';
import { listKubeContexts } from '../connection/kubeContexts.ts';
import type { ConnectRequest, ReconcileLab } from '../reconcileLab.ts';
import type { Session } from '../session/session.ts';
import type { ReconcilerKind, Settings } from '../settings.ts';
import { boolArg, fail, isFailure, stringArg, stringArrayArg, type CommandResult, type Failure } from './args.ts';
import { CHOOSE_FILE_LABEL, connectChoices, CONNECT_BROWSE, CONNECT_LOCAL, START_LOCAL_LABEL } from '../connection/kubeconfigSource.ts';
import { requireSession, watchableResourceItems } from './pickers.ts';
import { refusePrivileged } from './privileged.ts';
import * as ui from '../ui.ts';
import { ApiError } from '../../core/k8s/client.ts';

export interface ConnectionSummary {
  readonly context: string;
  readonly server: string;
  readonly resources: string[];
  readonly primaryResource?: string;
  readonly reconciler?: string;
  readonly loop: 'running' | 'paused' | 'stopped';
  readonly loopProblem?: string;
  /** Restricted settings the untrusted workspace sets, ignored for this connection (`reconcileLab.` omitted). */
  readonly ignoredWorkspaceSettings?: string[];
}

function summary(s: Session, lab?: ReconcileLab): ConnectionSummary {
  const ignored = lab?.ignoredWorkspaceSettings.map((x) => x.key) ?? [];
  return {
    ...(ignored.length ? { ignoredWorkspaceSettings: ignored } : {}),
    context: s.contextName,
    server: s.server,
    resources: s.resources.map((r) => r.id),
    ...(s.primaryResource ? { primaryResource: s.primaryResource } : {}),
    ...(s.reconciler ? { reconciler: s.reconciler.name } : {}),
    loop: s.loopState(),
    ...(s.loopProblem ? { loopProblem: s.loopProblem.message } : {}),
  };
}

/** Fields of a connect argument that override settings for that connection (each needs the argument token). */
const OVERRIDE_FIELDS = ['resources', 'namespaces', 'reconcilerKind', 'reconcilerResource', 'reconcilerCommand', 'reconcilerModulePath'] as const;

/** Settings a connect argument may override for that connection. */
function overridesOf(arg: unknown): Partial<Settings> {
  const o: Partial<Settings> = {};
  const resources = stringArrayArg(arg, 'resources');
  const namespaces = stringArrayArg(arg, 'namespaces');
  const kind = stringArg(arg, 'reconcilerKind');
  const primary = stringArg(arg, 'reconcilerResource');
  const command = stringArg(arg, 'reconcilerCommand');
  const modulePath = stringArg(arg, 'reconcilerModulePath');
  if (command !== undefined) o['reconciler.command'] = command;
  if (modulePath !== undefined) o['reconciler.modulePath'] = modulePath;
  if (resources) o.resources = resources;
  if (namespaces) o.namespaces = namespaces;
  if (kind === 'lab' || kind === 'exec' || kind === 'module') o['reconciler.kind'] = kind as ReconcilerKind;
  if (primary !== undefined) o['reconciler.resource'] = primary;
  return o;
}

/**
 * Connect. Argument (all optional): `{ kubeconfig, context, resources,
 * namespaces, reconcilerKind, reconcilerResource, reconcilerCommand,
 * reconcilerModulePath }` connects at once (all but the first two override
 * settings for this connection only). Without one, the person
 * picks a context of the kubeconfig (KUBECONFIG's files merged, the current
 * context first), a kubeconfig file, or a local control plane; with no
 * kubeconfig at all a message says so, with those two actions as buttons.
 * A file chosen here is remembered (global state) and offered again after a
 * window reload.
 */
export async function connect(lab: ReconcileLab, arg: unknown): Promise<CommandResult<ConnectionSummary>> {
  const refused = refusePrivileged(arg, ['kubeconfig', 'context', ...OVERRIDE_FIELDS]);
  if (refused) return refused;
  const req: ConnectRequest = { overrides: overridesOf(arg) };
  const kubeconfig = stringArg(arg, 'kubeconfig');
  const context = stringArg(arg, 'context');
  if (kubeconfig) req.kubeconfig = kubeconfig;
  if (context) req.context = context;
  let chosenFile: string | undefined;
  if (boolArg(arg, 'browse') === true) {
    // "Choose a Kubeconfig File…" offered by an error notification.
    const picked = await chooseKubeconfigFile();
    if (isFailure(picked)) return picked;
    req.kubeconfig = chosenFile = picked.path;
    if (picked.context) req.context = picked.context;
  } else if (arg === undefined) {
    const source = lab.kubeconfigSource();
    let contexts: ReturnType<typeof listKubeContexts> = [];
    try {
      contexts = listKubeContexts(source.path);
    } catch (e) {
      lab.log.warn('cannot list kubeconfig contexts', { kubeconfig: source.description, error: (e as Error).message });
    }
    const model = connectChoices(contexts, source, Boolean(source.path && !existsSync(source.path)));
    let value: string | undefined;
    if (model.empty) {
      value = await ui.warn(`Reconcile Lab: ${model.message}`, CHOOSE_FILE_LABEL, START_LOCAL_LABEL).then((c) =>
        c === CHOOSE_FILE_LABEL ? CONNECT_BROWSE : c === START_LOCAL_LABEL ? CONNECT_LOCAL : undefined,
      );
    } else {
      type Item = vscode.QuickPickItem & { value: string };
      const items: Item[] = model.items.map((i) =>
        i.separator
          ? { label: '', kind: vscode.QuickPickItemKind.Separator, value: '' }
          : { label: i.label, ...(i.icon ? { iconPath: new vscode.ThemeIcon(i.icon) } : {}), ...(i.description ? { description: i.description } : {}), ...(i.detail ? { detail: i.detail } : {}), value: i.value },
      );
      value = (await ui.pick(items, { title: model.title, placeHolder: 'Pick a context' }))?.value;
    }
    if (!value) return fail('cancelled', 'No context chosen.');
    if (value === CONNECT_LOCAL) return startLocal(lab, undefined);
    if (value === CONNECT_BROWSE) {
      const picked = await chooseKubeconfigFile();
      if (isFailure(picked)) return picked;
      req.kubeconfig = chosenFile = picked.path;
      if (picked.context) req.context = picked.context;
    } else {
      req.context = value;
      if (source.origin === 'remembered' && source.path) chosenFile = source.path;
    }
  }
  const s = await lab.connect(req);
  if (chosenFile) await lab.rememberKubeconfig(chosenFile);
  return { ok: true, ...summary(s, lab) };
}

/** The file dialog, then (for a file with several contexts) the context. */
async function chooseKubeconfigFile(): Promise<{ path: string; context?: string } | Failure> {
  const files = await vscode.window.showOpenDialog({ title: 'Choose a kubeconfig file', canSelectMany: false, openLabel: 'Use Kubeconfig' });
  if (!files?.[0]) return fail('cancelled', 'No kubeconfig chosen.');
  const path = files[0].fsPath;
  const ctxs = listKubeContexts(path);
  if (ctxs.length === 0) return fail('invalidArgument', `${path} has no contexts.`);
  if (ctxs.length === 1) return { path };
  const c = await ui.pick(
    ctxs.map((x) => ({ label: x.name, name: x.name, description: [x.current ? 'current' : undefined, x.server].filter(Boolean).join(' \u00b7 ') })),
    { title: `Contexts of ${path}` },
  );
  if (!c) return fail('cancelled', 'No context chosen.');
  return { path, context: c.name };
}

export async function disconnect(lab: ReconcileLab): Promise<CommandResult<{ wasConnected: boolean }>> {
  const was = Boolean(lab.session);
  await lab.disconnect();
  return { ok: true, wasConnected: was };
}

/**
 * Start Local Control Plane: starts etcd + kube-apiserver (+ the garbage
 * collector and namespace controllers unless `{ controllerManager: false }`)
 * on free loopback ports, then connects to it. The connection owns it: it is
 * stopped on disconnect and when the extension deactivates.
 */
export async function startLocal(lab: ReconcileLab, arg: unknown): Promise<CommandResult<ConnectionSummary & { kubeconfig: string }>> {
  const refused = refusePrivileged(arg, OVERRIDE_FIELDS);
  if (refused) return refused;
  await lab.disconnect();
  const cp = await ui.progress(
    { location: vscode.ProgressLocation.Notification, title: 'Reconcile Lab: starting a local control plane', cancellable: false },
    (progress) =>
      startLocalControlPlane({
        repoRoot: lab.extensionUri.fsPath,
        ...(boolArg(arg, 'controllerManager') === false ? { controllerManager: false } : {}),
        log: (line) => {
          lab.log.info(`[control plane] ${line}`);
          progress.report({ message: line });
        },
      }),
  );
  try {
    const s = await lab.connect({
      kubeconfig: cp.kubeconfigPath,
      overrides: overridesOf(arg),
      owned: { description: `the local control plane at ${cp.server}`, stop: () => cp.stop() },
      label: `the local control plane (${cp.server})`,
    });
    return { ok: true, kubeconfig: cp.kubeconfigPath, ...summary(s, lab) };
  } catch (e) {
    // connect stops what it was given to own when it fails; make sure of it.
    await cp.stop().catch(() => {});
    throw e;
  }
}

/**
 * Choose Watched Resources: a multi-select of what the server serves (custom
 * resources first), written to `reconcileLab.resources`, then a reconnect.
 * Argument `{ resources: ["widgets.lab.reconcile.dev", "configmaps"] }` skips
 * the picker (an empty list means every custom resource).
 */
export async function selectResources(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ resources: string[] }>> {
  const refused = refusePrivileged(arg, ['resources']);
  if (refused) return refused;
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  let chosen = stringArrayArg(arg, 'resources');
  if (!chosen) {
    const current = new Set(s.resources.map((r) => r.id));
    const items = watchableResourceItems(s).map((c) => ({ ...c, picked: current.has(c.id) }));
    const picks = await ui.pick(items, { canPickMany: true, title: 'Resources to watch (none: every custom resource)', matchOnDescription: true });
    if (!picks) return fail('cancelled', 'Nothing chosen.');
    chosen = picks.map((p) => p.id);
  }
  const resources = chosen;
  await lab.applySettings(() => writeSetting('resources', resources));
  return { ok: true, resources: chosen };
}

/** Why a typed, comma-separated list of namespaces is not one (each a DNS-1123 label); undefined when it is. */
export function namespaceListProblem(text: string): string | undefined {
  for (const n of text.split(',').map((x) => x.trim()).filter(Boolean)) {
    if (n.length > 63 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n)) return `"${n}" is not a namespace name (lowercase letters, digits and "-", at most 63).`;
  }
  return undefined;
}

/**
 * Choose Namespaces: a multi-select of the server's namespaces, written to
 * `reconcileLab.namespaces`, then a reconnect. Argument `{ namespaces: [...] }`
 * skips the picker (empty: all namespaces). A user who may not list namespaces types their names instead.
 */
export async function selectNamespaces(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ namespaces: string[] }>> {
  const refused = refusePrivileged(arg, ['namespaces']);
  if (refused) return refused;
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  let chosen = stringArrayArg(arg, 'namespaces');
  if (!chosen) {
    const current = new Set(s.settings.namespaces);
    const ctxNs = s.contextNamespace;
    let names: string[] | undefined;
    try {
      names = await s.listNamespaces();
    } catch (e) {
      // A user with rights in some namespaces only may not list them: ask for the names instead of failing.
      if (!(e instanceof ApiError && e.code === 403)) throw e;
    }
    if (names) {
      // The context's namespace first, marked: the one a kubectl user works in.
      const ordered = ctxNs && names.includes(ctxNs) ? [ctxNs, ...names.filter((n) => n !== ctxNs)] : names;
      const picks = await ui.pick(
        ordered.map((n) => ({ label: n, name: n, picked: current.has(n), ...(n === ctxNs ? { description: "your context's namespace" } : {}) })),
        { canPickMany: true, title: 'Namespaces to watch (none: all namespaces)' },
      );
      if (!picks) return fail('cancelled', 'Nothing chosen.');
      chosen = picks.map((p) => p.name);
    } else {
      const typed = await ui.input({
        title: 'Namespaces to watch',
        prompt: 'Your user may not list namespaces: type the ones to watch, separated by commas (empty: all namespaces).',
        value: [...current].join(', ') || ctxNs || '',
        validate: (v) => namespaceListProblem(v),
      });
      if (typed === undefined) return fail('cancelled', 'Nothing chosen.');
      chosen = typed.split(',').map((n) => n.trim()).filter(Boolean);
    }
  }
  const namespaces = chosen;
  await lab.applySettings(() => writeSetting('namespaces', namespaces));
  return { ok: true, namespaces: chosen };
}
