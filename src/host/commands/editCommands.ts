import * as vscode from 'vscode';
import type { ApplyEditResult } from '../../core/actions/editObject.ts';
import { describeApplied, editableYaml } from '../../core/actions/editObject.ts';
import { splitKey } from '../../core/k8s/keys.ts';
import { Schemes } from '../ids.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import * as ui from '../ui.ts';
import { fail, isFailure, stringArg, type CommandResult } from './args.ts';
import { refusePrivileged } from './privileged.ts';
import { requireSession, resolveTarget } from './pickers.ts';

const COMPARE = 'Compare with Server';
const KEEP_MINE = 'Keep My Edit on the Latest Version';
const RELOAD = 'Reload from Server (Discard My Edit)';

/**
 * Edit Spec as YAML…: a fresh GET of the object (not the cache, so the
 * resourceVersion is the server's latest) opened as a writable YAML document;
 * Apply to Cluster (or saving it) applies it with that resourceVersion (see EditDocuments). Secret
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

/**
 * What an edit document's applies and saves leave behind. After an apply (Apply to Cluster or a manual save): a
 * notification naming the object and its new resourceVersion (a warning when status edits were ignored, see
 * describeApplied), or that nothing changed, and a status-bar note that replaces an earlier "not applied" one. After an
 * auto-save: a status-bar note that the draft was kept, not applied.
 */
export function editNotes(lab: ReconcileLab): vscode.Disposable {
  let note: vscode.Disposable | undefined;
  const replaceNote = (text: string, icon: string) => {
    note?.dispose();
    note = ui.statusMessage(text, 8000, icon);
  };
  return vscode.Disposable.from(
    lab.edits.onDidSaveDraft(() => replaceNote('Reconcile Lab: edit kept as a draft (auto-save), not applied: Apply to Cluster writes it', 'edit')),
    lab.edits.onDidApply((e) => {
      const said = describeApplied(e.result, e.result.kind === 'applied' ? e.result.object : e.entry.base);
      if (!said) return;
      replaceNote(
        e.result.kind === 'applied' ? `Reconcile Lab: applied, now at resourceVersion ${e.result.resourceVersionAfter ?? '?'}` : 'Reconcile Lab: nothing changed, nothing written',
        e.result.kind === 'applied' ? 'check' : 'info',
      );
      void (said.level === 'warning' ? ui.warn : ui.info)(`Reconcile Lab: ${said.message}`);
    }),
    { dispose: () => note?.dispose() },
  );
}

/** What an apply that was not applied offers: compare with the server's object, reload it, or keep the edit on it. */
export function offerConflictChoices(lab: ReconcileLab, uri: vscode.Uri, result: ApplyEditResult): void {
  if (result.kind !== 'conflict') {
    if (result.kind === 'invalid' || result.kind === 'rejected' || result.kind === 'gone') void ui.error(`Reconcile Lab: not applied. ${result.message}`);
    return;
  }
  void ui.warn(`Reconcile Lab: ${result.message} Your edit is kept in the editor.`, COMPARE, ...(result.server ? [KEEP_MINE, RELOAD] : [])).then(async (choice) => {
    if (choice === COMPARE) await compareWithServer(lab, uri, result);
    else if (choice === KEEP_MINE && result.server) {
      lab.edits.rebase(uri, result.server);
      void ui.info(`Reconcile Lab: Apply to Cluster (or a save) now applies your edit on resourceVersion ${result.server.metadata.resourceVersion}.`);
    } else if (choice === RELOAD && result.server) {
      lab.edits.reload(uri, result.server);
      await showEntryText(lab, uri);
    }
  });
}

async function compareWithServer(lab: ReconcileLab, uri: vscode.Uri, result: Extract<ApplyEditResult, { kind: 'conflict' }>): Promise<void> {
  const name = uri.path.split('/').pop() ?? 'object.yaml';
  const left = lab.documents.snapshot(name.replace(/\.yaml$/, '.server.yaml'), result.server ? editableYaml(result.server) : '# deleted on the server\n');
  await vscode.commands.executeCommand('vscode.diff', left, uri, `${name}: server now ↔ your edit`);
}

/**
 * Puts the entry's text (the server's answer after an apply, or the reloaded object) into the open edit document
 * and saves it, so it reads as saved: that save writes nothing (its text is the entry's own, see
 * EditDocuments.writeFile). Not a revert, which acts on whichever editor has focus. Resolves whether the document
 * is clean afterwards.
 */
async function showEntryText(lab: ReconcileLab, uri: vscode.Uri): Promise<boolean> {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  const text = lab.edits.entry(uri)?.text;
  if (!doc || text === undefined) return false;
  if (doc.getText() !== text) {
    const edit = new vscode.WorkspaceEdit();
    edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), text);
    if (!(await vscode.workspace.applyEdit(edit))) return false;
  }
  if (doc.isDirty) await doc.save().then(undefined, () => false);
  return !doc.isDirty;
}

type ApplyResult =
  | CommandResult<{ result: 'applied' | 'unchanged'; resourceVersion: string | undefined; diff: string }>
  | (ReturnType<typeof fail> & { serverResourceVersion?: string; diff?: string });

/**
 * Apply to Cluster: applies the edit document's current text directly (not through a save, which VS Code may
 * cancel), as an update carrying the resourceVersion the document was opened at (EditDocuments.apply). Applied:
 * the document then shows the server's answer and reads as saved. A conflict (someone else wrote meanwhile)
 * writes nothing, keeps the edit in the editor and offers Compare / Keep My Edit / Reload. The argument: the
 * document's URI (editor title), nothing (the active editor), or for scripts and tests `{ uri, text }` (the text
 * replaces the document's first), `{ uri, resolve: 'keepMine' }` (after a conflict, re-base the edit on the
 * server's latest object, an explicit choice, and apply again) and `{ uri, resolve: 'reload' }` (after a conflict,
 * discard the edit and show the server's object; nothing is written).
 */
export async function applyObjectEdit(lab: ReconcileLab, arg: unknown): Promise<ApplyResult> {
  // A document named by a string, text to put in it, or a conflict resolved without the prompt: writes the person
  // did not choose, so only from the test suite (an editor title passes a Uri, the palette nothing).
  const refused = arg instanceof vscode.Uri ? undefined : refusePrivileged(arg, ['uri', 'text', 'resolve']);
  if (refused) return refused;
  const given = arg instanceof vscode.Uri ? arg.toString() : stringArg(arg, 'uri');
  const uri = given ? vscode.Uri.parse(given) : vscode.window.activeTextEditor?.document.uri;
  if (!uri || uri.scheme !== Schemes.edit) return fail('invalidArgument', 'Open an object with "Edit Spec as YAML…" first: Apply to Cluster applies that document.');
  const entry = lab.edits.entry(uri);
  if (!entry) return fail('notFound', `${uri.path} is not open for editing.`);
  if (!lab.session) return fail('notConnected', 'Not connected to a cluster: nothing was applied. Connect, then apply again.');
  const doc = await vscode.workspace.openTextDocument(uri);
  const text = stringArg(arg, 'text');
  if (text !== undefined) {
    const edit = new vscode.WorkspaceEdit();
    edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), text);
    if (!(await vscode.workspace.applyEdit(edit))) return fail('error', 'Could not change the document.');
  }
  const resolve = stringArg(arg, 'resolve');
  if (resolve !== undefined) {
    const last = entry.lastResult;
    if (last?.kind !== 'conflict' || !last.server) return fail('invalidArgument', 'There is no conflict to resolve.');
    if (resolve === 'reload') {
      // Discard the edit: the document shows the server's object, and nothing is written.
      lab.edits.reload(uri, last.server);
      await showEntryText(lab, uri);
      return { ok: true, result: 'unchanged', resourceVersion: last.server.metadata.resourceVersion, diff: '' };
    }
    if (resolve !== 'keepMine') return fail('invalidArgument', `Unknown resolve "${resolve}": keepMine or reload.`);
    lab.edits.rebase(uri, last.server);
  }
  const applying = doc.getText();
  let r: ApplyEditResult;
  try {
    r = await lab.edits.apply(uri, applying);
  } catch (e) {
    const message = `Not applied: ${(e as Error).message}`;
    void ui.error(`Reconcile Lab: ${message}`);
    return fail('error', message);
  }
  if (r.kind === 'applied' || r.kind === 'unchanged') {
    // Still what was applied (no typing since): show the server's answer as saved. Otherwise the newer text stays.
    if (doc.getText() === applying) await showEntryText(lab, uri);
    return r.kind === 'applied'
      ? { ok: true, result: 'applied', resourceVersion: r.resourceVersionAfter, diff: r.diff }
      : { ok: true, result: 'unchanged', resourceVersion: entry.base.metadata.resourceVersion, diff: '' };
  }
  if (r.kind === 'conflict') return { ...fail('conflict', r.message), ...(r.server?.metadata.resourceVersion ? { serverResourceVersion: r.server.metadata.resourceVersion } : {}), diff: r.diff };
  return fail('error', r.message);
}
