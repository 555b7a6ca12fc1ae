import * as vscode from 'vscode';
import { applyEdit, editableYaml, type ApplyEditResult } from '../../core/actions/editObject.ts';
import type { KubeClient } from '../../core/k8s/client.ts';
import type { ObjectKey } from '../../core/k8s/keys.ts';
import type { GroupVersionResource, KubeObject } from '../../core/k8s/objects.ts';
import { Schemes } from '../ids.ts';

/** One object opened for editing. */
export interface EditEntry {
  readonly resource: string;
  readonly key: ObjectKey;
  readonly gvr: GroupVersionResource;
  /** The server's object the next apply is based on (its resourceVersion is the precondition). */
  base: KubeObject;
  /** The document's text as last read or saved. */
  text: string;
  mtime: number;
  /** What the last apply (Apply to Cluster or a save) did. */
  lastResult?: ApplyEditResult;
  /** The apply in flight, if any: the next one waits for it. */
  pending?: Promise<void>;
}

/**
 * Writable documents under the `reconcile-lab-edit:` scheme, one per object
 * opened with **Edit Spec as YAML…**: `reconcile-lab-edit:/<resource>/<key>.yaml`.
 * **Apply to Cluster** ({@link apply}) and a manual save apply it ({@link applyEdit}): an update
 * carrying the resourceVersion the document was opened at; an auto-save only keeps a draft. A save that is not applied
 * (conflict, invalid text, rejected) fails, so the document stays dirty and
 * the edit is never lost; `onDidNotApply` lets the UI offer what to do.
 * After an apply the document shows the server's answer (new resourceVersion).
 */
export class EditDocuments implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  private readonly notApplied = new vscode.EventEmitter<{ uri: vscode.Uri; entry: EditEntry; result: ApplyEditResult }>();
  /** Fires when a save was refused (conflict, invalid, rejected, gone). */
  readonly onDidNotApply = this.notApplied.event;
  private readonly applied = new vscode.EventEmitter<{ uri: vscode.Uri; entry: EditEntry; result: ApplyEditResult }>();
  /** Fires when a save was applied (or changed nothing). */
  readonly onDidApply = this.applied.event;
  private readonly draft = new vscode.EventEmitter<{ uri: vscode.Uri; entry: EditEntry }>();
  /** Fires when a save that was not manual (auto-save) kept the text as a draft without applying it. */
  readonly onDidSaveDraft = this.draft.event;
  private readonly entries = new Map<string, EditEntry>();
  /** The reason of the save about to happen, per document (from onWillSaveTextDocument; consumed by writeFile). */
  private readonly saveReasons = new Map<string, vscode.TextDocumentSaveReason>();
  private readonly willSave = vscode.workspace.onWillSaveTextDocument((ev) => {
    if (ev.document.uri.scheme === Schemes.edit) this.saveReasons.set(ev.document.uri.toString(), ev.reason);
  });
  private client: KubeClient | undefined;

  /** The client saves write through (undefined while disconnected: saves fail). */
  setClient(client: KubeClient | undefined): void {
    this.client = client;
  }

  uriOf(resource: string, key: ObjectKey): vscode.Uri {
    return vscode.Uri.from({ scheme: Schemes.edit, path: `/${resource}/${key}.yaml` });
  }

  entry(uri: vscode.Uri): EditEntry | undefined {
    return this.entries.get(uri.toString());
  }

  /** Registers (or re-bases, when open already and not dirty) an object for editing; returns its URI. */
  open(resource: string, key: ObjectKey, gvr: GroupVersionResource, obj: KubeObject): vscode.Uri {
    const uri = this.uriOf(resource, key);
    const dirty = vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString() && d.isDirty);
    const existing = this.entries.get(uri.toString());
    if (existing && dirty) return uri; // keep the person's unsaved edit and its base
    this.entries.set(uri.toString(), { resource, key, gvr, base: obj, text: editableYaml(obj), mtime: Date.now() });
    if (existing) this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    return uri;
  }

  /** Makes the next save apply on `server` (the person chose to keep their edit over the latest version). */
  rebase(uri: vscode.Uri, server: KubeObject): void {
    const e = this.entries.get(uri.toString());
    if (e) e.base = server;
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => {});
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const e = this.entries.get(uri.toString());
    if (!e) throw vscode.FileSystemError.FileNotFound(uri);
    return { type: vscode.FileType.File, ctime: e.mtime, mtime: e.mtime, size: Buffer.byteLength(e.text) };
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions('Reconcile Lab edit documents have no folders.');
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const e = this.entries.get(uri.toString());
    if (!e) throw vscode.FileSystemError.FileNotFound(uri);
    return Buffer.from(e.text, 'utf8');
  }

  /**
   * Applies `text` as the edit of `uri` on the entry's base (its resourceVersion is the precondition), without
   * going through a document save: Apply to Cluster calls this with the editor's current text, and a save
   * ({@link writeFile}) calls it with the saved bytes. Applies to one entry run one at a time, in call order.
   * On `applied` the entry is re-based on the server's answer and its text becomes that answer; on `unchanged` the
   * entry keeps `text`; anything else leaves the entry as it was (the edit stays in the editor) and fires
   * {@link onDidNotApply}. Never throws for a server answer. The file's mtime does not change here: the caller
   * puts the answer into the open document and saves it (a save of the entry's own text writes nothing), so VS
   * Code never sees the file "modified since" it was read.
   */
  apply(uri: vscode.Uri, text: string): Promise<ApplyEditResult> {
    const e = this.entries.get(uri.toString());
    if (!e) return Promise.reject(new Error(`${uri.path} is not open for editing: open the object with "Edit Spec as YAML…" first.`));
    const run = async (): Promise<ApplyEditResult> => {
      if (!this.client) throw new Error('Not connected to a cluster: nothing was applied. Connect and apply again.');
      const textBefore = e.text;
      const result = await applyEdit({ client: this.client, gvr: e.gvr, base: e.base, text });
      e.lastResult = result;
      switch (result.kind) {
        case 'applied':
          e.base = result.object;
          // A draft saved while the apply ran (typing went on) is kept; otherwise the file is the server's answer.
          if (e.text === textBefore || e.text === text) e.text = editableYaml(result.object);
          this.applied.fire({ uri, entry: e, result });
          break;
        case 'unchanged':
          e.text = text;
          this.applied.fire({ uri, entry: e, result });
          break;
        default:
          this.notApplied.fire({ uri, entry: e, result });
      }
      return result;
    };
    const next = (e.pending ?? Promise.resolve()).then(run, run);
    e.pending = next.then(() => undefined, () => undefined);
    return next;
  }

  /**
   * Makes the server's `server` object the entry's base and text (the person chose to discard their edit and
   * reload); the caller puts that text into the open document and saves it (as after {@link apply}).
   */
  reload(uri: vscode.Uri, server: KubeObject): void {
    const e = this.entries.get(uri.toString());
    if (!e) return;
    e.base = server;
    e.text = editableYaml(server);
    delete e.lastResult;
  }

  /**
   * A save. Only a **manual** save (Ctrl+S, File › Save: {@link onWillSaveTextDocument} said so for this document
   * just before) applies: {@link apply} with the saved bytes, and a save that is not applied fails, so the
   * document stays dirty. Any other save (auto-save, which the browser's VS Code does after every pause in typing,
   * or one whose reason never arrived) keeps the text as a **draft**: nothing is written to the cluster, the
   * document reads as saved, and Apply to Cluster applies it later. A save of the entry's own text does nothing.
   */
  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const e = this.entries.get(uri.toString());
    if (!e) throw vscode.FileSystemError.NoPermissions('Open the object with "Edit Spec as YAML…" first: only its edit document applies.');
    const text = Buffer.from(content).toString('utf8');
    const reason = this.saveReasons.get(uri.toString());
    this.saveReasons.delete(uri.toString());
    if (text === e.text) return;
    if (reason !== vscode.TextDocumentSaveReason.Manual) {
      e.text = text;
      e.mtime = Date.now();
      this.draft.fire({ uri, entry: e });
      return;
    }
    if (!this.client) throw vscode.FileSystemError.Unavailable('Not connected to a cluster: nothing was applied. Connect and save again.');
    const result = await this.apply(uri, text);
    if (result.kind !== 'applied' && result.kind !== 'unchanged') throw vscode.FileSystemError.Unavailable(result.message);
    e.mtime = Date.now();
    // The document re-reads the server's answer (the new resourceVersion in its header).
    if (result.kind === 'applied') setTimeout(() => this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]), 0);
  }

  delete(): void {
    throw vscode.FileSystemError.NoPermissions('Use Delete… in the Resources view to delete an object.');
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions('An object cannot be renamed.');
  }

  dispose(): void {
    this.changed.dispose();
    this.notApplied.dispose();
    this.applied.dispose();
    this.draft.dispose();
    this.willSave.dispose();
    this.entries.clear();
    this.saveReasons.clear();
  }
}
