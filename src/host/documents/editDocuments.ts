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
  /** What the last save did. */
  lastResult?: ApplyEditResult;
}

/**
 * Writable documents under the `reconcile-lab-edit:` scheme, one per object
 * opened with **Edit Spec as YAML…**: `reconcile-lab-edit:/<resource>/<key>.yaml`.
 * Saving a document applies it ({@link applyEdit}): an update carrying the
 * resourceVersion the document was opened at. A save that is not applied
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
  private readonly entries = new Map<string, EditEntry>();
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

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const e = this.entries.get(uri.toString());
    if (!e) throw vscode.FileSystemError.NoPermissions('Open the object with "Edit Spec as YAML…" first: only its edit document applies.');
    if (!this.client) throw vscode.FileSystemError.Unavailable('Not connected to a cluster: nothing was applied. Connect and save again.');
    const text = Buffer.from(content).toString('utf8');
    const result = await applyEdit({ client: this.client, gvr: e.gvr, base: e.base, text });
    e.lastResult = result;
    switch (result.kind) {
      case 'applied':
        e.base = result.object;
        e.text = editableYaml(result.object);
        e.mtime = Date.now();
        this.applied.fire({ uri, entry: e, result });
        // The document re-reads the server's answer (the new resourceVersion in its header).
        setTimeout(() => this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]), 0);
        return;
      case 'unchanged':
        e.text = text;
        e.mtime = Date.now();
        this.applied.fire({ uri, entry: e, result });
        return;
      default:
        this.notApplied.fire({ uri, entry: e, result });
        throw vscode.FileSystemError.Unavailable(result.message);
    }
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
    this.entries.clear();
  }
}
