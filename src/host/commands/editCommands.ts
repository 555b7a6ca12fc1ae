import * as vscode from 'vscode';
import type { ApplyEditResult } from '../../core/actions/editObject.ts';
import { editableYaml } from '../../core/actions/editObject.ts';
import { splitKey } from '../../core/k8s/keys.ts';
import { Schemes } from '../ids.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import * as ui from '../ui.ts';
import { fail, isFailure, stringArg, type CommandResult } from './args.ts';
import { requireSession, resolveTarget } from './pickers.ts';

const COMPARE = 'Compare with Server';
const KEEP_MINE = 'Keep My Edit on the Latest Version';

/**
 * Edit Spec as YAML…: a fresh GET of the object (not the cache, so the
 * resourceVersion is the server's latest) opened as a writable YAML document;
 * saving it applies it with that resourceVersion (see EditDocuments). Secret
 * values are hidden. An object already open with unsaved changes is shown
 * as it is.
 */
export async function editObject(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ uri: string; resourceVersion: string | undefined }>> {
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  const t = await resolveTarget(s, lab.clock.now(), arg, { title: 'Edit which object?' });
  if (isFailure(t)) return t;
  const info = s.info(t.resource);
  if (!info) return fail('notFound', `${t.resource} is not served by ${s.server}.`);
  const { namespace, name } = splitKey(t.key);
  const obj = await s.client.get(info, info.namespaced ? namespace : undefined, name);
  const uri = lab.edits.open(t.resource, t.key, info, obj);
  const doc = await vscode.workspace.openTextDocument(uri);
  if (doc.languageId !== 'yaml') await vscode.languages.setTextDocumentLanguage(doc, 'yaml').then(undefined, () => undefined);
  await vscode.window.showTextDocument(doc, { preview: false });
  return { ok: true, uri: uri.toString(), resourceVersion: lab.edits.entry(uri)?.base.metadata.resourceVersion };
}

/** What a save that was not applied offers: compare with the server's object, or keep the edit on it. */
export function offerConflictChoices(lab: ReconcileLab, uri: vscode.Uri, result: ApplyEditResult): void {
  if (result.kind !== 'conflict') {
    if (result.kind === 'invalid' || result.kind === 'rejected' || result.kind === 'gone') void ui.error(`Reconcile Lab: not applied. ${result.message}`);
    return;
  }
  void ui.warn(`Reconcile Lab: ${result.message} Your edit is kept in the editor.`, COMPARE, ...(result.server ? [KEEP_MINE] : [])).then(async (choice) => {
    if (choice === COMPARE) await compareWithServer(lab, uri, result);
    else if (choice === KEEP_MINE && result.server) {
      lab.edits.rebase(uri, result.server);
      void ui.info(`Reconcile Lab: the next save applies your edit on resourceVersion ${result.server.metadata.resourceVersion}: save again to apply it.`);
    }
  });
}

async function compareWithServer(lab: ReconcileLab, uri: vscode.Uri, result: Extract<ApplyEditResult, { kind: 'conflict' }>): Promise<void> {
  const name = uri.path.split('/').pop() ?? 'object.yaml';
  const left = lab.documents.snapshot(name.replace(/\.yaml$/, '.server.yaml'), result.server ? editableYaml(result.server) : '# deleted on the server\n');
  await vscode.commands.executeCommand('vscode.diff', left, uri, `${name}: server now ↔ your edit`);
}

/**
 * Apply to Cluster: saves the edit document (which applies it). Arguments for
 * scripts and tests: `{ uri, text }` replaces the document's text first;
 * `{ uri, resolve: 'keepMine' }` after a conflict re-bases the edit on the
 * server's latest object (an explicit choice) and saves again.
 */
export async function applyObjectEdit(
  lab: ReconcileLab,
  arg: unknown,
): Promise<CommandResult<{ result: 'applied' | 'unchanged'; resourceVersion: string | undefined; diff: string }> | (ReturnType<typeof fail> & { serverResourceVersion?: string; diff?: string })> {
  const given = stringArg(arg, 'uri');
  const uri = given ? vscode.Uri.parse(given) : vscode.window.activeTextEditor?.document.uri;
  if (!uri || uri.scheme !== Schemes.edit) return fail('invalidArgument', 'Open an object with "Edit Spec as YAML…" first: Apply to Cluster applies that document.');
  const entry = lab.edits.entry(uri);
  if (!entry) return fail('notFound', `${uri.path} is not open for editing.`);
  const doc = await vscode.workspace.openTextDocument(uri);
  const text = stringArg(arg, 'text');
  if (text !== undefined) {
    const edit = new vscode.WorkspaceEdit();
    edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), text);
    if (!(await vscode.workspace.applyEdit(edit))) return fail('error', 'Could not change the document.');
  }
  if (stringArg(arg, 'resolve') === 'keepMine') {
    const last = entry.lastResult;
    if (last?.kind !== 'conflict' || !last.server) return fail('invalidArgument', 'There is no conflict to resolve.');
    lab.edits.rebase(uri, last.server);
  }
  delete entry.lastResult;
  const saved = await doc.save().then((x) => x, () => false);
  const r = entry.lastResult as ApplyEditResult | undefined;
  if (r?.kind === 'applied') return { ok: true, result: 'applied', resourceVersion: r.resourceVersionAfter, diff: r.diff };
  if (r?.kind === 'unchanged' || (saved && !r)) return { ok: true, result: 'unchanged', resourceVersion: entry.base.metadata.resourceVersion, diff: '' };
  if (r?.kind === 'conflict') return { ...fail('conflict', r.message), ...(r.server?.metadata.resourceVersion ? { serverResourceVersion: r.server.metadata.resourceVersion } : {}), diff: r.diff };
  return fail('error', r && 'message' in r ? r.message : 'The document was not saved.');
}
