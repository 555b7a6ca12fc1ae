import { readFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import { resourceIdOfGvr } from '../../core/k8s/objects.ts';
import { WIDGET_GVR } from '../../core/reconcilers/labReconciler.ts';
import { readSettings, writeSetting } from '../config.ts';
import { CommandIds } from '../ids.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import type { ReconcilerKind } from '../settings.ts';
import * as ui from '../ui.ts';
import { fail, stringArg, type CommandResult } from './args.ts';
import { watchableResourceItems } from './pickers.ts';
import { refusePrivileged } from './privileged.ts';
import { execCommandProblem, looksLikeReconcilerModule, MODULE_EXTENSIONS, modulePathSetting, reconcilerChoiceItems, type ReconcilerChoice } from './reconcilerChoice.ts';

/** Files looked at for module candidates, and bytes read of each (a reconciler's export is near the top or not far). */
const MAX_CANDIDATE_FILES = 400;
const MAX_BYTES_READ = 256 * 1024;

/** The built-in lab reconciler's own resource (samples/crd.yaml). */
const LAB_WIDGETS = resourceIdOfGvr(WIDGET_GVR);

/** The picker entry that opens the file dialog instead. */
const BROWSE = Symbol('browse');

/**
 * Choose Reconciler…: which reconciler the loop runs, written to the workspace settings
 * (`reconcileLab.reconciler.kind`, `.modulePath` / `.command`, `.resource`) and applied by reconnecting at once (no
 * "settings changed" prompt). Pickers: the kind (lab, module, exec, or the Go controller, which hands over to Run
 * Controller…); for a module, the workspace's JS/TS files that export `reconcile` (or Browse…); for exec, the command
 * line; for a module or exec, the resource it reconciles (the served resources, custom ones first; the built-in lab
 * reconciler always reconciles Widgets). A module or exec program runs workspace code: in an untrusted workspace the
 * command says so and offers Manage Workspace Trust, writing nothing.
 *
 * Argument `{ kind, modulePath?, command?, resource? }` skips the pickers; every field runs or points at code, so it
 * is honoured only with the argument token (see privileged.ts). Not connected: the settings are written and apply
 * when you connect.
 */
export async function chooseReconciler(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ kind: ReconcilerChoice; resource?: string; modulePath?: string; command?: string }>> {
  const refused = refusePrivileged(arg, ['kind', 'modulePath', 'command', 'resource']);
  if (refused) return refused;
  const settings = readSettings();
  let kind = stringArg(arg, 'kind') as ReconcilerChoice | undefined;
  if (kind !== undefined && !['lab', 'module', 'exec', 'go'].includes(kind)) return fail('invalidArgument', `"kind" is ${JSON.stringify(kind)}: use lab, module, exec or go.`);
  if (!kind) {
    const picked = await ui.pick(reconcilerChoiceItems(settings['reconciler.kind'], vscode.workspace.isTrusted), { title: 'Which reconciler should the loop run?', matchOnDetail: true });
    if (!picked) return fail('cancelled', 'Nothing chosen.');
    kind = picked.choice;
  }
  if (kind === 'go') {
    await vscode.commands.executeCommand(CommandIds.runController);
    return { ok: true, kind };
  }
  if (kind !== 'lab' && !vscode.workspace.isTrusted) {
    const message = 'Your own reconciler runs code of this workspace, so Reconcile Lab runs it only in a trusted workspace. Trust this folder (Manage Workspace Trust), then choose it again.';
    void ui.warn(message, 'Manage Workspace Trust').then((c) => (c ? vscode.commands.executeCommand('workbench.trust.manage') : undefined));
    return fail('untrusted', message);
  }
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  let modulePath: string | undefined;
  let command: string | undefined;
  if (kind === 'module') {
    modulePath = stringArg(arg, 'modulePath') ?? (await pickModule(folder, settings['reconciler.modulePath']));
    if (modulePath === undefined) return fail('cancelled', 'No module chosen.');
  } else if (kind === 'exec') {
    command = stringArg(arg, 'command') ?? (await ui.input({
      title: 'Command to run for each reconcile',
      prompt: 'Run in the workspace folder, once per reconcile: it reads the object as JSON on stdin and prints JSON on stdout (README: Exec reconciler protocol). A file here: ./name.',
      value: settings['reconciler.command'],
      validate: (text) => execCommandProblem(text, folder),
    }));
    if (command === undefined) return fail('cancelled', 'No command given.');
  }
  let resource: string | undefined = stringArg(arg, 'resource');
  if (resource === undefined && kind === 'lab') {
    // The lab reconciler's default is Reconcile Lab's own Widgets; a Widget-shaped kind set before stays chosen.
    resource = !lab.session || lab.session.discovered.some((r) => resourceIdOfGvr(r) === LAB_WIDGETS) ? '' : undefined;
  } else if (resource === undefined) {
    const picked = await pickResource(lab, settings['reconciler.resource']);
    if (picked === undefined) return fail('cancelled', 'No resource chosen.');
    resource = picked;
  }
  const chosenKind: ReconcilerKind = kind;
  await lab.applySettings(async () => {
    await writeSetting('reconciler.kind', chosenKind);
    if (modulePath !== undefined) await writeSetting('reconciler.modulePath', modulePath);
    if (command !== undefined) await writeSetting('reconciler.command', command);
    if (resource !== undefined) await writeSetting('reconciler.resource', resource);
  });
  return { ok: true, kind, ...(resource !== undefined ? { resource } : {}), ...(modulePath !== undefined ? { modulePath } : {}), ...(command !== undefined ? { command } : {}) };
}

/** The module picker: the workspace's files that look like a reconciler (the current one first), then Browse…. */
async function pickModule(folder: string | undefined, current: string): Promise<string | undefined> {
  const files = await vscode.workspace.findFiles(`**/*.{${MODULE_EXTENSIONS.join(',')}}`, '**/{node_modules,dist,out,build,vendor,.git,.vscode-test}/**', MAX_CANDIDATE_FILES);
  const found: string[] = [];
  for (const f of files) {
    const text = await readFile(f.fsPath).then((b) => b.subarray(0, MAX_BYTES_READ).toString('utf8'), () => '');
    if (looksLikeReconcilerModule(f.fsPath, text)) found.push(modulePathSetting(f.fsPath, folder));
  }
  found.sort((a, b) => Number(b === current) - Number(a === current) || a.localeCompare(b));
  type Item = vscode.QuickPickItem & { value: string | typeof BROWSE };
  const items: Item[] = [
    ...found.map((p) => ({ label: p, value: p, ...(p === current ? { description: 'current' } : {}) })),
    { label: 'Browse…', detail: found.length ? 'Another file' : 'No file of this workspace exports reconcile yet: choose one', value: BROWSE },
  ];
  const picked = found.length ? await ui.pick(items, { title: 'Which module exports your reconcile(request, ctx)?', matchOnDescription: true }) : items[items.length - 1];
  if (!picked) return undefined;
  if (picked.value !== BROWSE) return picked.value;
  const chosen = await vscode.window.showOpenDialog({
    title: 'Module exporting reconcile(request, ctx)',
    canSelectMany: false,
    filters: { 'JavaScript / TypeScript': [...MODULE_EXTENSIONS] },
    ...(folder ? { defaultUri: vscode.Uri.file(folder) } : {}),
  });
  return chosen?.[0] ? modulePathSetting(chosen[0].fsPath, folder) : undefined;
}

/**
 * The resource picker for a module or exec reconciler: what the server serves (list and watch), custom resources
 * first, the current setting first of all. Not connected: the current setting as it is (nothing to list).
 */
async function pickResource(lab: ReconcileLab, current: string): Promise<string | undefined> {
  const s = lab.session;
  if (!s) return current;
  const picked = await ui.pick(watchableResourceItems(s, current), { title: 'Which resource does your reconciler reconcile?', matchOnDescription: true });
  return picked?.id;
}
