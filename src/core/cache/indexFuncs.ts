import type { KubeObject } from '../k8s/objects.ts';
import type { IndexFunc } from './interfaces.ts';

/**
 * Built-in index functions. Each is total (never throws) and returns the
 * values an object is filed under; an object may have none.
 * The namespace index lives in indexer.ts because every store has it.
 */

/** Conventional index names for the functions below. */
export const OWNER_UID_INDEX = 'ownerUid';
export const FINALIZER_INDEX = 'finalizer';
export const TERMINATING_INDEX = 'terminating';
export const labelIndexName = (labelKey: string): string => `label:${labelKey}`;

/** The UIDs of every owner reference (find children of an owner with `byIndex(OWNER_UID_INDEX, uid)`). */
export const ownerUidIndexFunc: IndexFunc = (obj: KubeObject) => {
  const refs = obj.metadata.ownerReferences;
  if (!refs || refs.length === 0) return [];
  const out: string[] = [];
  for (const r of refs) if (r.uid && !out.includes(r.uid)) out.push(r.uid);
  return out;
};

/**
 * Files an object under the value of its label `labelKey` (objects without the
 * label are not indexed). Register it as `{ [labelIndexName(key)]: labelIndexFunc(key) }`.
 */
export function labelIndexFunc(labelKey: string): IndexFunc {
  return (obj: KubeObject) => {
    const v = obj.metadata.labels?.[labelKey];
    return v === undefined ? [] : [v];
  };
}

/** Every finalizer the object carries, once each. */
export const finalizerIndexFunc: IndexFunc = (obj: KubeObject) => {
  const f = obj.metadata.finalizers;
  if (!f || f.length === 0) return [];
  return f.length === 1 ? [f[0]!] : [...new Set(f)];
};

/**
 * `["true"]` for an object being deleted (deletionTimestamp set), otherwise no
 * value: `byIndex(TERMINATING_INDEX, "true")` lists the objects stuck in
 * deletion without indexing the others.
 */
export const terminatingIndexFunc: IndexFunc = (obj: KubeObject) => (obj.metadata.deletionTimestamp ? ['true'] : []);
