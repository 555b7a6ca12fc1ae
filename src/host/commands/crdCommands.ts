import * as vscode from 'vscode';
import { relative } from 'node:path';
import * as ui from '../ui.ts';
import { CRD_RESOURCE, distinctCrds, findCrdManifests, installCrd, type CrdInstalled, type CrdManifest } from '../../core/k8s/crdManifests.ts';
import { ApiError } from '../../core/k8s/client.ts';
import { FIELD_MANAGER, type Session } from '../session/session.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import { fail, isFailure, type CommandResult } from './args.ts';
import { requireSession } from './pickers.ts';
import { refusePrivileged } from './privileged.ts';
import { refuseUntrusted } from './goControllerCommands.ts';

/** What Install CRD… did. */
export interface InstallCrdsResult {
  readonly installed: ReadonlyArray<CrdInstalled & { file: string }>;
  readonly failed: ReadonlyArray<{ name: string; file: string; message: string }>;
  /** The Go program Run Controller… launched was run again (a controller of it waited for one of these kinds). */
  readonly restarted: boolean;
}

/**
 * Reconcile Lab: Install CRD…: the CustomResourceDefinition manifests found in the workspace (a kubebuilder
 * project's `config/crd/bases`, a chart's `crds/`; see findCrdManifests) are offered in a pick, the ones the cluster
 * does not have yet picked; the chosen ones are installed as `kubectl apply --server-side` would and waited for until
 * served. Trusted workspaces only (workspace files become cluster objects). Argument `{ names: [...] }` (CRD names,
 * test suite only: it skips the pick).
 */
export async function installCrdCommand(lab: ReconcileLab, arg: unknown): Promise<CommandResult<InstallCrdsResult>> {
  if (!vscode.workspace.isTrusted) return refuseUntrusted(arg, 'Install CRD applies manifests from this workspace to the cluster, so it only runs in a trusted workspace.');
  const refused = refusePrivileged(arg, ['names']);
  if (refused) return refused;
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  const roots = lab.go.crdSearchRoots();
  const found = distinctCrds(findCrdManifests(roots));
  if (!found.length) {
    return fail('notFound', `No CustomResourceDefinition manifest (apiextensions.k8s.io/v1) in ${roots.length ? roots.join(', ') : 'the workspace'}: a kubebuilder project has them in config/crd/bases once make manifests has run.`);
  }
  const names = typeof arg === 'object' && arg !== null ? (arg as { names?: unknown }).names : undefined;
  let chosen: CrdManifest[];
  if (Array.isArray(names)) {
    const missing = names.filter((n) => !found.some((m) => m.name === n));
    if (missing.length) return fail('notFound', `No manifest in the workspace defines ${missing.join(', ')} (found: ${found.map((m) => m.name).join(', ')}).`);
    chosen = found.filter((m) => names.includes(m.name));
  } else {
    const installed = await installedNames(s, found);
    const items = found.map((m) => ({
      label: m.name,
      description: `${m.kind} · ${m.servedVersions.join(', ') || 'no served version'} · ${installed.has(m.name) ? 'installed (applied again: updated to the file)' : 'not installed'}`,
      detail: shownPath(m.file),
      picked: !installed.has(m.name),
      manifest: m,
    }));
    const picked = await ui.pick(items, {
      canPickMany: true,
      title: `Reconcile Lab: Install CRDs into the cluster of context ${s.contextName}`,
      placeHolder: 'CRDs to apply (server-side apply; nothing else changes)',
    });
    if (!picked?.length) return fail('cancelled', 'No CRD chosen.');
    chosen = picked.map((p) => p.manifest);
  }
  return { ok: true, ...(await installCrdsOnChoice(lab, chosen, s, arg === undefined)) };
}

/**
 * The notice of a restart after Install CRD: what was installed (`done`), what of the program waited for it
 * (`waiting`: controller names, or "the watch of <Kind>" from its output) and why it restarts.
 * "Reconcile Lab: planters.greenhouse.example.net installed. Restarting your Go program: its controller planter
 * waited for it, and controller-runtime finds a kind only when its program starts."
 */
export function restartNotice(done: string, waiting: readonly string[], installed: number): string {
  const who = waiting.map((w) => (w.startsWith('the watch of ') ? w : `its controller ${w}`));
  const list = who.length > 1 ? `${who.slice(0, -1).join(', ')} and ${who[who.length - 1]}` : (who[0] ?? 'it');
  return `Reconcile Lab: ${done}. Restarting your Go program: ${list} waited for ${installed === 1 ? 'it' : 'them'}, and controller-runtime finds a kind only when its program starts.`;
}

/**
 * Installs `manifests` (the person chose them: the pick of Install CRD…, or the Install CRD button of the warning
 * about a Go controller's unserved kind) under a progress notification, one after another; makes the connection learn
 * the new resources (watched when it watches every custom resource); then runs the program Run Controller… launched
 * again when one of its controllers waited for one of these kinds. Says what happened; never throws.
 */
export async function installCrdsOnChoice(lab: ReconcileLab, manifests: readonly CrdManifest[], session?: Session, tell = true): Promise<InstallCrdsResult> {
  const s = session ?? lab.session;
  if (!s) {
    if (tell) void ui.warn('Reconcile Lab: not connected to a cluster: connect, then install the CRD again.');
    return { installed: [], failed: manifests.map((m) => ({ name: m.name, file: m.file, message: 'not connected' })), restarted: false };
  }
  const installed: Array<CrdInstalled & { file: string }> = [];
  const failed: Array<{ name: string; file: string; message: string }> = [];
  await ui.progress({ location: vscode.ProgressLocation.Notification, title: 'Reconcile Lab: installing CRDs', cancellable: true }, async (p, token) => {
    const ac = new AbortController();
    token.onCancellationRequested(() => ac.abort(new Error('Install CRD cancelled')));
    for (const m of manifests) {
      if (ac.signal.aborted) {
        failed.push({ name: m.name, file: m.file, message: 'cancelled' });
        continue;
      }
      p.report({ message: `${m.name} (waiting until the server serves it)` });
      try {
        installed.push({ ...(await installCrd(m, { client: s.client, clock: lab.clock, fieldManager: FIELD_MANAGER, signal: ac.signal })), file: m.file });
        lab.log.info('CRD installed', { crd: m.name, file: m.file });
      } catch (e) {
        failed.push({ name: m.name, file: m.file, message: ac.signal.aborted ? 'cancelled' : (e as Error).message });
        lab.log.warn('CRD install failed', { crd: m.name, file: m.file, error: (e as Error).message });
      }
    }
  });
  const byName = new Map(manifests.map((m) => [m.name, m]));
  if (installed.length && s === lab.session) {
    await s.learnResources(installed.map((i) => i.name), undefined).catch((e: unknown) => lab.log.warn('discovery after installing CRDs failed', { error: (e as Error).message }));
  }
  const kinds = new Set(installed.map((i) => byName.get(i.name)).filter((m): m is CrdManifest => m !== undefined).map((m) => `${m.group}/${m.kind}`));
  const waiting = kinds.size ? lab.go.launchedWaitingForCrd(kinds) : [];
  const done = installed.map((i) => `${i.name} ${i.created ? 'installed' : 'updated'}`).join(', ');
  let restarted = false;
  if (waiting.length) {
    if (tell) void ui.info(restartNotice(done, waiting, installed.length));
    try {
      restarted = (await lab.go.restartLaunched()) !== undefined;
    } catch (e) {
      if (tell) void ui.error(`Reconcile Lab: restarting the Go controller failed: ${(e as Error).message}`);
    }
  } else if (tell && installed.length) {
    const external = lab.go.all.filter((c) => c.controller.announcement.kind && kinds.has(`${c.controller.announcement.group ?? ''}/${c.controller.announcement.kind}`) && !c.controller.resourceId);
    const restart = external.length ? ` Restart ${external.map((c) => c.controller.name).join(', ')} (your debug session or program) so the views follow it: its bridge named the kind when it started.` : '';
    void ui.info(`Reconcile Lab: ${done}.${restart}`);
  }
  const refused = failed.filter((f) => f.message !== 'cancelled');
  const cancelled = failed.filter((f) => f.message === 'cancelled');
  if (tell && refused.length) void ui.error(`Reconcile Lab: installing ${refused.length === 1 ? 'a CRD' : 'CRDs'} failed: ${refused.map((f) => `${f.name}: ${f.message}`).join('; ')}`);
  if (tell && cancelled.length) void ui.info(`Reconcile Lab: Install CRD cancelled before ${cancelled.map((f) => f.name).join(', ')} ${cancelled.length === 1 ? 'was' : 'were'} served (an apply the server had already taken stays; Install CRD… shows what the cluster has).`);
  return { installed, failed, restarted };
}

/** The names among `manifests` the cluster has a CRD of (a read refused or failed counts as not installed). */
async function installedNames(s: Session, manifests: readonly CrdManifest[]): Promise<Set<string>> {
  const have = new Set<string>();
  await Promise.all(
    manifests.slice(0, 100).map(async (m) => {
      try {
        await s.client.get(CRD_RESOURCE, undefined, m.name);
        have.add(m.name);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
      }
    }),
  );
  return have;
}

function shownPath(file: string): string {
  const folder = vscode.workspace.workspaceFolders?.find((f) => file.startsWith(`${f.uri.fsPath}/`))?.uri.fsPath;
  return folder ? relative(folder, file) : file;
}
