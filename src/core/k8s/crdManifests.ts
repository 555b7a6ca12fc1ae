/**
 * CustomResourceDefinition manifests in a developer's project (a kubebuilder project's `config/crd/bases`, a Helm
 * chart's `crds/`, a generated `dist/install.yaml`), and installing one into the cluster the way `make install` /
 * `kubectl apply` would, then waiting until the server serves it.
 *
 * Reading is bounded (directories, files, bytes) and synchronous: it runs when a Go controller announces a kind the
 * cluster does not serve, and from the Install CRD command. Nothing here runs workspace code; installing writes one
 * cluster-scoped object, so callers offer it only on the person's explicit choice.
 */
import { readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { walkDirs } from '../dirWalk.ts';
import { parseAllDocuments } from 'yaml';
import { sleep, type Clock } from '../clock.ts';
import { ApiError, type KubeClient } from './client.ts';
import type { GroupVersionResource, KubeObject } from './objects.ts';

/** apiextensions.k8s.io/v1 customresourcedefinitions. */
export const CRD_RESOURCE: GroupVersionResource = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };

/** One CustomResourceDefinition document found in a file. */
export interface CrdManifest {
  /** Absolute path of the file. */
  readonly file: string;
  /** Which YAML document of the file (0-based). */
  readonly index: number;
  /** metadata.name: `<plural>.<group>`. */
  readonly name: string;
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** Versions with `served: true`, in the manifest's order. */
  readonly servedVersions: readonly string[];
  /** The document as parsed (a fresh copy per call of {@link findCrdManifests}; callers may not mutate it). */
  readonly object: KubeObject;
}

/** Directories never entered (besides names starting with `.` or `_`). */
const SKIPPED_DIRS = new Set(['node_modules', 'vendor', 'testdata', 'bin']);
const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/** The bounds of a search: how deep, how many directories, how many files read, how large a file may be. */
export interface CrdSearchLimits {
  maxDepth?: number;
  maxDirs?: number;
  maxFiles?: number;
  maxFileBytes?: number;
}

/**
 * Every apiextensions.k8s.io/v1 CustomResourceDefinition document in YAML or JSON files in and below `roots`
 * (duplicates of one CRD in several files are all returned). Order: files under a `config/crd` directory first (the
 * kubebuilder layout `make install` applies), then shallower files, then by path. A file that is not YAML, a template
 * (a document holding `{{`), an older apiextensions version or an incomplete CRD is skipped, never an error; so is a
 * directory or file that cannot be read. Looks at most `maxDepth` (6) directories deep, at `maxDirs` (3,000)
 * directories, reads at most `maxFiles` (2,000) files that mention CustomResourceDefinition, each at most
 * `maxFileBytes` (4 MiB).
 */
export function findCrdManifests(roots: readonly string[], limits: CrdSearchLimits = {}): CrdManifest[] {
  let fileBudget = limits.maxFiles ?? 2000;
  const maxBytes = limits.maxFileBytes ?? 4 * 1024 * 1024;
  const found: Array<CrdManifest & { rank: number; depth: number }> = [];
  walkDirs(roots, { maxDepth: limits.maxDepth ?? 6, maxDirs: limits.maxDirs ?? 3000, skip: SKIPPED_DIRS }, (dir, entries, depth, root) => {
    for (const e of entries) {
      if (!e.isFile() || !MANIFEST_FILE.test(e.name) || fileBudget <= 0) continue;
      const path = join(dir, e.name);
      let text: string;
      try {
        if (statSync(path).size > maxBytes) continue;
        text = readFileSync(path, 'utf8');
      } catch {
        continue;
      }
      if (!text.includes('CustomResourceDefinition')) continue;
      fileBudget--;
      const rel = relative(root, path).split(sep).join('/');
      const rank = /(^|\/)config\/crd\//.test(rel) ? 0 : 1;
      for (const m of crdsInText(path, text)) found.push({ ...m, rank, depth });
    }
  });
  return found
    .sort((a, b) => a.rank - b.rank || a.depth - b.depth || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) || a.index - b.index)
    .map(({ rank: _rank, depth: _depth, ...m }) => m);
}

/** The CRD documents of one file's text (see {@link findCrdManifests} for what is skipped). */
export function crdsInText(file: string, text: string): CrdManifest[] {
  let docs;
  try {
    docs = parseAllDocuments(text);
  } catch {
    return [];
  }
  const out: CrdManifest[] = [];
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, index) => {
    if (doc.errors.length) return;
    const source = doc.toString();
    if (source.includes('{{')) return;
    let o: unknown;
    try {
      o = doc.toJS();
    } catch {
      return;
    }
    // A List (kubectl get crd -o yaml) holds them as items.
    const items = typeof o === 'object' && o !== null && (o as { kind?: unknown }).kind === 'List' && Array.isArray((o as { items?: unknown }).items) ? ((o as { items: unknown[] }).items) : [o];
    for (const item of items) {
      const m = crdOf(item);
      if (m) out.push({ file, index, ...m });
    }
  });
  return out;
}

function crdOf(o: unknown): Omit<CrdManifest, 'file' | 'index'> | undefined {
  if (typeof o !== 'object' || o === null) return undefined;
  const obj = o as KubeObject & { spec?: unknown };
  if (obj.apiVersion !== 'apiextensions.k8s.io/v1' || obj.kind !== 'CustomResourceDefinition') return undefined;
  const spec = obj.spec as { group?: unknown; names?: { kind?: unknown; plural?: unknown }; scope?: unknown; versions?: unknown } | undefined;
  const group = spec?.group;
  const kind = spec?.names?.kind;
  const plural = spec?.names?.plural;
  if (typeof group !== 'string' || typeof kind !== 'string' || typeof plural !== 'string' || !Array.isArray(spec?.versions)) return undefined;
  const name = typeof obj.metadata?.name === 'string' ? obj.metadata.name : '';
  if (name !== `${plural}.${group}`) return undefined; // the server refuses any other name
  const servedVersions = (spec.versions as Array<{ name?: unknown; served?: unknown }>).filter((v) => v.served === true && typeof v.name === 'string').map((v) => v.name as string);
  return { name, group, kind, plural, namespaced: spec.scope !== 'Cluster', servedVersions, object: obj };
}

/**
 * The manifests defining `kind` of `group` (a Go controller's announcement), optionally serving `version`; each CRD
 * once (the first file in {@link findCrdManifests}' order).
 */
export function crdManifestsFor(manifests: readonly CrdManifest[], want: { group?: string; kind?: string; version?: string }): CrdManifest[] {
  const out: CrdManifest[] = [];
  for (const m of manifests) {
    if (m.group !== (want.group ?? '') || m.kind !== want.kind) continue;
    if (want.version && !m.servedVersions.includes(want.version)) continue;
    if (!out.some((o) => o.name === m.name)) out.push(m);
  }
  return out;
}

/** Each CRD once: the first manifest of each name in the given order. */
export function distinctCrds(manifests: readonly CrdManifest[]): CrdManifest[] {
  const byName = new Map<string, CrdManifest>();
  for (const m of manifests) if (!byName.has(m.name)) byName.set(m.name, m);
  return [...byName.values()];
}

/** What {@link installCrd} did. */
export interface CrdInstalled {
  readonly name: string;
  /** True when the CRD did not exist before (created), false when an existing one was updated to the manifest. */
  readonly created: boolean;
  /** The served versions, as the server now has them. */
  readonly servedVersions: readonly string[];
}

export interface InstallCrdOptions {
  client: KubeClient;
  clock: Clock;
  /** The field manager of the server-side apply. */
  fieldManager: string;
  signal?: AbortSignal;
  /** How long to wait for Established and for the resource to be served (default 30 s). */
  timeoutMs?: number;
  /** Between reads while waiting (default 200 ms). */
  pollMs?: number;
}

/**
 * Installs `manifest` as `kubectl apply --server-side` would (server-side apply under `fieldManager`, never forcing
 * another manager's fields: a conflict is an error naming them), then waits until the server reports the CRD
 * `Established` and its first served version answers a list, so a program started afterwards finds the kind in
 * discovery. Rejects with a clear message when the server refuses the manifest (invalid schema, a conflicting name:
 * `NamesAccepted` False) or it is not established in time. Never deletes or changes anything else.
 */
export async function installCrd(manifest: CrdManifest, o: InstallCrdOptions): Promise<CrdInstalled> {
  const { client, clock, signal } = o;
  let existed = true;
  try {
    await client.get(CRD_RESOURCE, undefined, manifest.name, signal);
  } catch (e) {
    if (!(e instanceof ApiError && e.code === 404)) throw new Error(`cannot read CustomResourceDefinition ${manifest.name}: ${firstLine(e)}`);
    existed = false;
  }
  const body = { ...manifest.object } as KubeObject & { status?: unknown };
  delete body.status; // controller-gen once wrote an empty status; the server ignores it on the main resource anyway
  try {
    await client.apply(CRD_RESOURCE, body, { fieldManager: o.fieldManager, ...(signal ? { signal } : {}) });
  } catch (e) {
    const why = e instanceof ApiError && e.code === 409 ? ' (another field manager owns these fields: kubectl apply --server-side --force-conflicts takes them over, if you mean to)' : '';
    throw new Error(`the server refused CustomResourceDefinition ${manifest.name} from ${manifest.file}: ${firstLine(e)}${why}`);
  }
  const timeoutMs = o.timeoutMs ?? 30_000;
  const pollMs = o.pollMs ?? 200;
  const deadline = clock.now() + timeoutMs;
  let crd: KubeObject | undefined;
  for (;;) {
    crd = await client.get(CRD_RESOURCE, undefined, manifest.name, signal);
    const conds = ((crd as { status?: { conditions?: Array<{ type?: string; status?: string; message?: string }> } }).status?.conditions) ?? [];
    const names = conds.find((c) => c.type === 'NamesAccepted');
    if (names?.status === 'False') throw new Error(`CustomResourceDefinition ${manifest.name} was stored but its names were not accepted: ${names.message ?? 'no reason given'}`);
    if (conds.some((c) => c.type === 'Established' && c.status === 'True')) break;
    if (clock.now() >= deadline) throw new Error(`CustomResourceDefinition ${manifest.name} was stored but the server did not report it Established within ${Math.round(timeoutMs / 1000)} s`);
    await sleep(clock, pollMs, signal);
  }
  const served = ((crd.spec as { versions?: Array<{ name: string; served?: boolean }> }).versions ?? []).filter((v) => v.served).map((v) => v.name);
  const version = served[0];
  if (version) {
    const gvr = { group: manifest.group, version, resource: manifest.plural };
    for (;;) {
      try {
        await client.list(gvr, undefined, { fieldSelector: 'metadata.name=reconcile-lab-probe', ...(signal ? { signal } : {}) });
        break;
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 404) || clock.now() >= deadline) throw new Error(`CustomResourceDefinition ${manifest.name} is Established but ${manifest.plural}.${manifest.group}/${version} does not answer yet: ${firstLine(e)}`);
      }
      await sleep(clock, pollMs, signal);
    }
  }
  return { name: manifest.name, created: !existed, servedVersions: served };
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
}
