import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { toYaml } from '../../core/actions/objectDiff.ts';
import { isSecret, maskSecret, MASK } from '../../core/k8s/secretMask.ts';
import type { KubeObject } from '../../core/k8s/objects.ts';
import { Schemes } from '../ids.ts';

/** Looks an object up in the informer cache by resource ("plural.group") and key. */
export type CacheResolver = (resource: string, key: string) => KubeObject | undefined;

const MAX_SNAPSHOTS = 200;

/**
 * Read-only virtual documents under the `reconcile-lab:` scheme:
 *
 * - `reconcile-lab:/cache/<resource>/<key>.yaml` is the informer's current
 *   copy of an object, re-read on every request; {@link ObjectDocuments.objectChanged}
 *   makes an open editor refresh (so "Open as YAML" follows the cache live);
 * - `reconcile-lab:/snapshot/<n>/<title>` is fixed text registered with
 *   {@link ObjectDocuments.snapshot} (diff sides, dry-run plans, reports). The
 *   newest 200 snapshots are kept;
 * - `reconcile-lab:/view/<title>` is a reusable result view ({@link ObjectDocuments.view}): one URI per
 *   title, so running a command again updates the one open editor instead of opening another tab.
 *
 * A Secret's values (data, stringData, the last-applied annotation) are masked
 * in the cache view. Only {@link ObjectDocuments.revealUri} (the Reveal Secret
 * Values command, after the person confirmed) makes a URI that shows them: it
 * carries a random token this provider issued, so no other URI (a link,
 * another extension guessing paths) can show them. Tokens end on disconnect.
 *
 * Documents are never writable: the scheme has no FileSystemProvider.
 */
export class ObjectDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly snapshots = new Map<string, string>();
  private readonly views = new Map<string, string>();
  private seq = 0;
  private resolver: CacheResolver | undefined;
  /** Tokens of reveal URIs issued by {@link revealUri}, valid until the resolver changes. */
  private readonly revealTokens = new Set<string>();

  /** Sets (or clears, on disconnect) where `cache` documents read from, and refreshes the open ones. */
  setResolver(resolver: CacheResolver | undefined): void {
    this.resolver = resolver;
    this.revealTokens.clear();
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme === Schemes.object && doc.uri.path.startsWith('/cache/')) this.changed.fire(doc.uri);
    }
  }

  /** The URI of the live cache view of an object. */
  cacheUri(resource: string, key: string): vscode.Uri {
    return vscode.Uri.from({ scheme: Schemes.object, path: `/cache/${resource}/${key}.yaml` });
  }

  /**
   * A URI of the live cache view of one object with its Secret values shown. Call only after the person asked
   * for it (the Reveal Secret Values command).
   */
  revealUri(resource: string, key: string): vscode.Uri {
    const token = randomBytes(16).toString('hex');
    this.revealTokens.add(token);
    return vscode.Uri.from({ scheme: Schemes.object, path: `/reveal/${token}/${resource}/${key}.yaml` });
  }

  /** Registers fixed text and returns its URI; `title` becomes the editor tab's name (keep its extension). */
  snapshot(title: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: Schemes.object, path: `/snapshot/${++this.seq}/${title.replace(/[\\?#]/g, '_')}` });
    this.snapshots.set(uri.toString(), text);
    while (this.snapshots.size > MAX_SNAPSHOTS) this.snapshots.delete(this.snapshots.keys().next().value!);
    return uri;
  }

  /**
   * Sets the text of the reusable view `title` (e.g. "Dry-run result.md") and returns its URI, which is the
   * same for every call with that title; an open editor of it re-reads the new text.
   */
  view(title: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: Schemes.object, path: `/view/${title.replace(/[\\/?#]/g, '_')}` });
    this.views.set(uri.toString(), text);
    this.changed.fire(uri);
    return uri;
  }

  /** Tells open editors of this object's cache view to re-read it. */
  objectChanged(resource: string, key: string): void {
    const uri = this.cacheUri(resource, key);
    for (const d of vscode.workspace.textDocuments) {
      if (d.uri.toString() === uri.toString()) this.changed.fire(uri);
      else if (d.uri.scheme === Schemes.object && d.uri.path.startsWith('/reveal/') && d.uri.path.endsWith(`/${resource}/${key}.yaml`)) this.changed.fire(d.uri);
    }
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    if (uri.path.startsWith('/view/')) return this.views.get(uri.toString()) ?? '# Nothing to show yet: run the command again.\n';
    if (uri.path.startsWith('/snapshot/')) {
      return this.snapshots.get(uri.toString()) ?? '# This snapshot is no longer available; run the command again.\n';
    }
    const reveal = /^\/reveal\/([0-9a-f]+)\/([^/]+)\/(.+)\.yaml$/.exec(uri.path);
    if (reveal && !this.revealTokens.has(reveal[1]!)) return '# This view of Secret values has ended (disconnected, or not opened by Reveal Secret Values).\n';
    const m = reveal ? [reveal[0], reveal[2], reveal[3]] : /^\/cache\/([^/]+)\/(.+)\.yaml$/.exec(uri.path);
    if (!m) return `# Unknown Reconcile Lab document: ${uri.path}\n`;
    const [, resource, key] = m as unknown as [string, string, string];
    if (!this.resolver) return `# Not connected: ${resource} ${key} is not in any cache.\n`;
    const obj = this.resolver(resource, key);
    if (!obj) return `# ${resource} ${key} is not in the informer cache (deleted, or not watched).\n`;
    // As kubectl get -o yaml (since 1.21): the field managers' bookkeeping would bury the spec. Inspect Cache vs
    // Server still shows the whole object.
    const { managedFields, ...metadata } = obj.metadata;
    const shown = managedFields ? { ...obj, metadata } : obj;
    const hidden = managedFields ? `# metadata.managedFields hidden, as kubectl get -o yaml hides them (Inspect Cache vs Server shows them).\n` : '';
    if (reveal || !isSecret(obj)) return hidden + toYaml(shown);
    return `# Secret values are hidden (${MASK}). To see them: Reconcile Lab: Reveal Secret Values.\n${hidden}${toYaml(maskSecret(shown))}`;
  }

  dispose(): void {
    this.changed.dispose();
    this.snapshots.clear();
    this.views.clear();
  }
}
