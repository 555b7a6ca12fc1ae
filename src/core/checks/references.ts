import type { KubeObject } from '../k8s/objects.ts';
import { isRecord } from '../record.ts';

/**
 * The Secrets and ConfigMaps an object's `spec` refers to, recognised the way Kubernetes APIs name such references,
 * so that the robustness checks can copy them into a scratch namespace next to the copy of the object.
 *
 * Contract:
 * - Only `spec` is read (not metadata, not status), at any depth, arrays included.
 * - A reference is recognised by the key that holds it, never by a bare `name`:
 *   - an object `{name[, namespace][, key]}` under a key `secretRef`, `configMapRef`, `secretKeyRef`,
 *     `configMapKeyRef` or one ending in `SecretRef`, `SecretKeyRef`, `ConfigMapRef`, `ConfigMapKeyRef`
 *     (`envFrom[].secretRef`, `valueFrom.secretKeyRef`, `tlsSecretRef`, `nodePublishSecretRef`…); such a key may also
 *     hold a plain string (the name) or a list of either;
 *   - a string under `secretName`, `configMapName` or a key ending in `SecretName` / `ConfigMapName`
 *     (`volumes[].secret.secretName`, `tlsSecretName`); its namespace is a sibling `namespace`, or the sibling
 *     `<prefix>Namespace` (`secretNamespace` next to `secretName`);
 *   - an object under `secret` or `configMap` with a string `name` (`volumes[].configMap.name`, a projected volume's
 *     `sources[].secret.name`);
 *   - `imagePullSecrets: [{name}]`;
 *   - the lab's own convention `dependsOn: [{kind: Secret|ConfigMap, name}]`;
 *   - any other key ending in `Ref` or `Refs` (`credentialsRef`, `databaseRefs`) holding a `{name[, namespace]}`
 *     object without a `kind` (or with `kind: Secret|ConfigMap`, then that kind only), a plain string or a list of
 *     either: reported for both kinds with `guessed` (see {@link SpecReference.guessed}); a `{kind: Issuer, name}` is
 *     not.
 * - A name that is not a valid object name (empty, a template such as `{{ .name }}`) is no reference.
 * - Each (kind, namespace, name) is reported once, with the first path it was found at; `namespace` is set only when
 *   the reference names one (the caller compares it with the object's own namespace).
 * - Pure: no I/O, deterministic (keys visited in their order in the object).
 */
export interface SpecReference {
  kind: 'Secret' | 'ConfigMap';
  name: string;
  /** The namespace the reference names next to the name; absent: the object's own namespace. */
  namespace?: string;
  /** Where in the object it was found, e.g. `spec.template.spec.volumes[0].secret.secretName`. */
  path: string;
  /**
   * Found under a key ending in `Ref`/`Refs` that names no kind (`credentialsRef: {name}`, with no `kind` or a `kind`
   * of Secret or ConfigMap): it may name a Secret, a ConfigMap or an object of another kind, so it is reported once
   * for each of the two kinds, copied where one exists and left out silently where none does.
   */
  guessed?: true;
}

/**
 * A Secret or ConfigMap named by the person for the checks to copy (CLI `--copy secret/db-creds`, the setting
 * `reconcileLab.checks.copy`), for a reference the spec makes in a way {@link specReferences} does not recognise
 * (`spec.credentials: db-creds`, a name built from the object's): `kind/name`, the kind as kubectl names it
 * (`secret`, `secrets`, `configmap`, `configmaps`, `cm`; any case), the name a valid object name. Throws an Error
 * saying what is wrong.
 */
export function parseCopySpec(spec: string): { kind: 'Secret' | 'ConfigMap'; name: string } {
  const m = /^([^/]+)\/(.+)$/.exec(spec.trim());
  const example = 'secret/<name> or configmap/<name> (e.g. secret/db-creds)';
  if (!m) throw new Error(`"${spec}" is not kind/name: ${example}`);
  const word = m[1]!.toLowerCase();
  const kind = word === 'secret' || word === 'secrets' ? 'Secret' : word === 'configmap' || word === 'configmaps' || word === 'cm' ? 'ConfigMap' : undefined;
  if (!kind) throw new Error(`"${spec}": only Secrets and ConfigMaps are copied (what a spec refers to as input), not ${m[1]}: ${example}`);
  const name = m[2]!;
  if (!validName(name)) throw new Error(`"${spec}": "${name}" is not a valid ${kind} name (lowercase letters, digits, '-' and '.'), and a ${kind} in another namespace is never copied`);
  return { kind, name };
}

/** {@link specReferences} and then each of `extra` (named by the person) that the spec does not name already. */
export function withExtraReferences(found: SpecReference[], extra: readonly SpecReference[]): SpecReference[] {
  const seen = new Set(found.map((r) => `${r.kind}/${r.namespace ?? ''}/${r.name}`));
  return [...found, ...extra.filter((r) => !seen.has(`${r.kind}/${r.namespace ?? ''}/${r.name}`))];
}

/** A key that names a namespace: `namespace`, or `<prefix>Namespace` (`targetNamespace`, `secretNamespace`). */
export const NAMESPACE_KEY = /^(?:namespace|.+Namespace)$/;

const REF_KEY = /^(?:(secret|configMap)(?:Key)?Refs?|.+(Secret|ConfigMap)(?:Key)?Refs?)$/;
/** Any other reference key (`credentialsRef`, `databaseRefs`): of no stated kind. */
const ANY_REF_KEY = /^.+Refs?$/;
const NAME_KEY = /^(?:(secret|configMap)Name|(.+)(Secret|ConfigMap)Name)$/;
/** A DNS subdomain (RFC 1123), as Secret and ConfigMap names must be. */
const VALID_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
/** Bounds on the walk (a spec is small; a pathological one must not stall the checks). */
const MAX_DEPTH = 64;
const MAX_REFERENCES = 100;

function kindOf(word: string): 'Secret' | 'ConfigMap' {
  return word.toLowerCase() === 'secret' ? 'Secret' : 'ConfigMap';
}


function validName(v: unknown): v is string {
  return typeof v === 'string' && v.length <= 253 && VALID_NAME.test(v);
}

function namespaceOf(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The Secrets and ConfigMaps `obj.spec` refers to (see the module's contract). */
export function specReferences(obj: Pick<KubeObject, 'spec'>): SpecReference[] {
  const out: SpecReference[] = [];
  const seen = new Set<string>();
  const add = (kind: 'Secret' | 'ConfigMap', name: unknown, namespace: string | undefined, path: string, guessed?: true) => {
    if (!validName(name) || out.length >= MAX_REFERENCES) return;
    const id = `${kind}/${namespace ?? ''}/${name}`;
    if (seen.has(id)) return;
    seen.add(id);
    out.push({ kind, name, ...(namespace ? { namespace } : {}), path, ...(guessed ? { guessed } : {}) });
  };
  /** The value of a `…Ref` key of no stated kind: a Secret or a ConfigMap (or neither: the caller finds out). */
  const anyRef = (v: unknown, path: string) => {
    if (Array.isArray(v)) v.forEach((x, i) => anyRef(x, `${path}[${i}]`));
    else if (typeof v === 'string') for (const kind of ['Secret', 'ConfigMap'] as const) add(kind, v, undefined, path, true);
    else if (isRecord(v)) {
      const kinds = v.kind === undefined ? (['Secret', 'ConfigMap'] as const) : v.kind === 'Secret' || v.kind === 'ConfigMap' ? [v.kind as 'Secret' | 'ConfigMap'] : [];
      for (const kind of kinds) add(kind, v.name, namespaceOf(v.namespace), `${path}.name`, v.kind === undefined ? true : undefined);
    }
  };
  /** The value of a `…Ref` key: a `{name, namespace}` object, a plain name, or a list of either. */
  const refValue = (kind: 'Secret' | 'ConfigMap', v: unknown, path: string) => {
    if (Array.isArray(v)) v.forEach((x, i) => refValue(kind, x, `${path}[${i}]`));
    else if (typeof v === 'string') add(kind, v, undefined, path);
    else if (isRecord(v)) add(kind, v.name, namespaceOf(v.namespace), `${path}.name`);
  };
  const walk = (v: unknown, path: string, depth: number) => {
    if (depth > MAX_DEPTH || out.length >= MAX_REFERENCES) return;
    if (Array.isArray(v)) {
      v.forEach((x, i) => walk(x, `${path}[${i}]`, depth + 1));
      return;
    }
    if (!isRecord(v)) return;
    for (const [k, x] of Object.entries(v)) {
      const p = `${path}.${k}`;
      const ref = REF_KEY.exec(k);
      const named = NAME_KEY.exec(k);
      if (ref) refValue(kindOf(ref[1] ?? ref[2]!), x, p);
      else if (ANY_REF_KEY.test(k)) anyRef(x, p);
      else if (named && typeof x === 'string') {
        const prefix = named[1] ? named[1] : `${named[2]}${named[3]}`;
        add(kindOf(named[1] ?? named[3]!), x, namespaceOf(v[`${prefix}Namespace`]) ?? namespaceOf(v.namespace), p);
      } else if ((k === 'secret' || k === 'configMap') && isRecord(x)) {
        // A volume source (`secret.secretName` is found by the walk below) or a projected volume's source.
        if (typeof x.name === 'string') add(kindOf(k), x.name, namespaceOf(x.namespace), `${p}.name`);
      } else if (k === 'imagePullSecrets' && Array.isArray(x)) {
        x.forEach((s, i) => { if (isRecord(s)) add('Secret', s.name, undefined, `${p}[${i}].name`); });
      } else if (k === 'dependsOn' && Array.isArray(x)) {
        x.forEach((d, i) => { if (isRecord(d) && (d.kind === 'Secret' || d.kind === 'ConfigMap')) add(d.kind, d.name, undefined, `${p}[${i}].name`); });
      }
      walk(x, p, depth + 1);
    }
  };
  walk(obj.spec, 'spec', 0);
  return out;
}

/** What the harness did with one reference when it made a scratch copy. */
export type ReferenceOutcome =
  /** Copied into the scratch namespace (a Secret server side: its values are never read into a message). */
  | 'copied'
  /** Not in the object's namespace: stays missing in the copy, as in the original. */
  | 'missing'
  /** The reference names another namespace: nothing is copied across namespaces. */
  | 'otherNamespace'
  /** The checked object is cluster-scoped and the reference names no namespace: there is none to copy from. */
  | 'clusterScoped'
  /** Owned by the checked object itself: a child its controller makes (an output), not an input. */
  | 'owned'
  /** The scratch namespace already had one, made by the cluster itself (`kube-root-ca.crt`): kept, not copied. */
  | 'present'
  /** The copy failed (`error` says why, without any value). */
  | 'failed';

export interface CopiedReference extends SpecReference {
  outcome: ReferenceOutcome;
  error?: string;
  /** `missing` and named by the person (`--copy`): names of that kind in the namespace it most likely meant. */
  suggestions?: string[];
}

function listOf(refs: CopiedReference[]): string {
  const meant = (r: CopiedReference) => (r.suggestions?.length ? `; did you mean ${r.suggestions.map((n) => `${r.kind === 'Secret' ? 'secret' : 'configmap'}/${n}`).join(' or ')}?` : '');
  return refs.map((r) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name} (${r.path}${r.error ? `: ${r.error}` : ''}${meant(r)})`).join(', ');
}

/**
 * The report's note on what the scratch copies of `key` got besides the object: the Secrets and ConfigMaps copied
 * (names and where the spec names them, never values) and those that were not, with why. Undefined when the spec
 * refers to none.
 */
export function referencesNote(key: string, refs: CopiedReference[]): string | undefined {
  if (!refs.length) return undefined;
  const by = (o: ReferenceOutcome) => refs.filter((r) => r.outcome === o);
  const parts: string[] = [];
  const copied = by('copied');
  if (copied.length) parts.push(`copied into every scratch namespace of ${key} (each run its own copies, deleted with the namespace; Secrets copied server side, values never shown): ${listOf(copied)}`);
  const missing = by('missing');
  if (missing.length) parts.push(`not found in the object's namespace, so missing in the copies too: ${listOf(missing)}`);
  const other = by('otherNamespace');
  if (other.length) parts.push(`in another namespace, not copied (the checks copy only from the object's own namespace; a controller that reads them reads your real objects or, confined to its scratch namespace, fails): ${listOf(other)}`);
  const cluster = by('clusterScoped');
  if (cluster.length) parts.push(`not copied, ${key} is cluster-scoped and these name no namespace to copy from: ${listOf(cluster)}`);
  const owned = by('owned');
  if (owned.length) parts.push(`not copied, owned by ${key} itself (children its controller makes, so each run makes its own): ${listOf(owned)}`);
  const present = by('present');
  if (present.length) parts.push(`not copied, the cluster makes its own in every namespace: ${listOf(present)}`);
  const failed = by('failed');
  if (failed.length) parts.push(`could not be copied (missing in the copies): ${listOf(failed)}`);
  const named = refs.some((r) => !r.path.startsWith('spec')) ? ' or that you named to copy' : '';
  return `Objects the spec of ${key} refers to${named} — ${parts.join('; ')}.`;
}
