import { parse } from 'yaml';
import { isConflict, isNotFound, type KubeClient } from '../k8s/client.ts';
import type { GroupVersionResource, KubeObject } from '../k8s/objects.ts';
import { jsonEqual } from '../reconcilers/jsonEqual.ts';
import { cleanForDiff, toYaml, yamlDiff } from './objectDiff.ts';

/**
 * Edit an object as YAML and apply it with optimistic concurrency, as
 * `kubectl edit` does: the update carries the resourceVersion the person
 * opened, so a change made by anyone else meanwhile makes the server answer
 * 409 Conflict and nothing is written. A conflict is returned with the
 * server's current object and a diff; it is never retried on its own.
 *
 * Secret values are never shown: `data` and `stringData` values of a core
 * Secret read as {@link SECRET_MASK}; a value still equal to the mask when
 * applied is the stored one (restored from the opened object), any other
 * value replaces it.
 */
export const SECRET_MASK = '(hidden)';

const HEADER = [
  '# Reconcile Lab: edit, then Apply to Cluster (title button) or save (Ctrl+S). The update carries the resourceVersion below: if the object',
  '# changed on the server since it was opened, nothing is written and the conflict is shown (never overwritten).',
];

/** Said up front when the object has a status: editing it there usually does nothing. */
export const STATUS_NOTE = '# status is shown for reference: where it is a subresource (built-in kinds, CRDs with subresources.status) this update ignores it; the controller writes it through /status.';

function hasStatus(obj: KubeObject): boolean {
  const status = (obj as { status?: unknown }).status;
  return status !== undefined && status !== null && !(typeof status === 'object' && Object.keys(status).length === 0);
}

function isSecret(obj: KubeObject): boolean {
  return obj.kind === 'Secret' && (obj.apiVersion === 'v1' || obj.apiVersion === undefined);
}

/** The object as it is shown for editing: no managedFields, Secret values masked. */
export function editableObject(obj: KubeObject): KubeObject {
  const o = cleanForDiff(obj) as KubeObject & { data?: Record<string, unknown>; stringData?: Record<string, unknown> };
  if (isSecret(obj)) {
    for (const field of ['data', 'stringData'] as const) {
      const values = o[field];
      if (values && typeof values === 'object') for (const k of Object.keys(values)) values[k] = SECRET_MASK;
    }
  }
  return o;
}

/** The editing text: a short header (with the resourceVersion the apply will carry) and the YAML. */
export function editableYaml(obj: KubeObject): string {
  const header = [...HEADER];
  if (isSecret(obj)) header.push('# Secret values read (hidden): leave them to keep them; a value you replace is stored as given (data: base64, stringData: plain text).');
  if (hasStatus(obj)) header.push(STATUS_NOTE);
  header.push(`# ${obj.kind ?? 'Object'} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name} at resourceVersion ${obj.metadata.resourceVersion ?? '?'}`);
  return `${header.join('\n')}\n${toYaml(editableObject(obj))}`;
}

export type ApplyEditResult =
  | {
      kind: 'applied';
      object: KubeObject;
      resourceVersionBefore: string | undefined;
      resourceVersionAfter: string | undefined;
      diff: string;
      /**
       * The edit changed `status` and the server's answer does not have it: status is a subresource of this kind
       * (written through /status), which an update of the object ignores.
       */
      statusNotApplied?: true;
    }
  | { kind: 'unchanged' }
  | { kind: 'invalid'; message: string }
  | { kind: 'rejected'; message: string }
  | { kind: 'conflict'; server: KubeObject | undefined; message: string; diff: string }
  | { kind: 'gone'; message: string };

/**
 * Parses the edited text and updates the object with the opened
 * resourceVersion (`base.metadata.resourceVersion`, whatever the text says).
 * Refuses, without writing, text that is not one object, or that renames it
 * or changes its kind. Never throws for a server answer: a 409 is
 * `conflict` (with the server's object), 404 `gone`, other API errors
 * `rejected` with the server's message.
 */
export async function applyEdit(o: { client: KubeClient; gvr: GroupVersionResource; base: KubeObject; text: string; signal?: AbortSignal }): Promise<ApplyEditResult> {
  const { base } = o;
  let edited: unknown;
  try {
    edited = parse(o.text);
  } catch (e) {
    return { kind: 'invalid', message: `The YAML does not parse: ${(e as Error).message.split('\n')[0]}` };
  }
  if (!edited || typeof edited !== 'object' || Array.isArray(edited)) return { kind: 'invalid', message: 'The document must be one object (a YAML mapping).' };
  const obj = edited as KubeObject & { data?: Record<string, unknown>; stringData?: Record<string, unknown> };
  const meta = obj.metadata;
  if (!meta || typeof meta !== 'object') return { kind: 'invalid', message: 'The object has no metadata.' };
  for (const [what, mine, theirs] of [
    ['apiVersion', obj.apiVersion, base.apiVersion],
    ['kind', obj.kind, base.kind],
    ['metadata.name', meta.name, base.metadata.name],
    ['metadata.namespace', meta.namespace, base.metadata.namespace],
  ] as const) {
    if ((mine ?? '') !== (theirs ?? '')) return { kind: 'invalid', message: `${what} cannot change in an edit (${JSON.stringify(theirs ?? '')} → ${JSON.stringify(mine ?? '')}); create a new object instead.` };
  }
  if (isSecret(base)) {
    const stored = base as KubeObject & { data?: Record<string, unknown>; stringData?: Record<string, unknown> };
    for (const field of ['data', 'stringData'] as const) {
      const values = obj[field];
      if (!values || typeof values !== 'object') continue;
      for (const [k, v] of Object.entries(values)) {
        if (v !== SECRET_MASK) continue;
        const original = stored[field]?.[k];
        if (original === undefined) return { kind: 'invalid', message: `${field}.${k} is new but has the placeholder as its value: give it a value.` };
        values[k] = original;
      }
    }
  }
  meta.resourceVersion = base.metadata.resourceVersion;
  if (JSON.stringify(cleanForDiff(obj)) === JSON.stringify(cleanForDiff(base))) return { kind: 'unchanged' };
  try {
    const updated = await o.client.update(o.gvr, obj, o.signal ? { signal: o.signal } : {});
    const status = (x: KubeObject) => (x as { status?: unknown }).status;
    const statusNotApplied = !jsonEqual(status(obj), status(base)) && !jsonEqual(status(obj), status(updated));
    return {
      kind: 'applied',
      object: updated,
      resourceVersionBefore: base.metadata.resourceVersion,
      resourceVersionAfter: updated.metadata.resourceVersion,
      diff: yamlDiff(`${base.metadata.name}`, editableObject(base), editableObject(updated), { volatile: true, beforeName: 'before', afterName: 'after' }),
      ...(statusNotApplied ? { statusNotApplied: true as const } : {}),
    };
  } catch (e) {
    if (isConflict(e)) {
      let server: KubeObject | undefined;
      try {
        server = await o.client.get(o.gvr, base.metadata.namespace, base.metadata.name!, o.signal);
      } catch (g) {
        if (!isNotFound(g)) throw g;
      }
      return {
        kind: 'conflict',
        server,
        message: `${base.metadata.name} changed on the server since you opened it (resourceVersion ${base.metadata.resourceVersion} → ${server?.metadata.resourceVersion ?? 'deleted'}): nothing was written.`,
        diff: yamlDiff(`${base.metadata.name}`, server ? editableObject(server) : undefined, editableObject(obj), { volatile: true, beforeName: 'server now', afterName: 'your edit' }),
      };
    }
    if (isNotFound(e)) return { kind: 'gone', message: `${base.metadata.name} no longer exists on the server: nothing was written.` };
    return { kind: 'rejected', message: (e as Error).message };
  }
}

/**
 * What to tell the person after an apply that wrote (or needed) nothing: the object (`obj` names it: the base the
 * edit was applied on) and its resourceVersion now; that nothing changed; and, at warning level, that status edits
 * were not applied. Undefined for the other results (they are refusals, shown as such).
 */
export function describeApplied(result: ApplyEditResult, obj: KubeObject): { level: 'info' | 'warning'; message: string } | undefined {
  const what = `${obj.kind ?? 'Object'} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
  if (result.kind === 'unchanged') return { level: 'info', message: `Nothing changed: your text is ${what} as opened (resourceVersion ${obj.metadata.resourceVersion ?? '?'}), so nothing was written.` };
  if (result.kind !== 'applied') return undefined;
  const stored =
    result.resourceVersionAfter === result.resourceVersionBefore
      ? `Applied to ${what}, but the server stored nothing new: still resourceVersion ${result.resourceVersionAfter ?? '?'}.`
      : `Applied to ${what}: now at resourceVersion ${result.resourceVersionAfter ?? '?'} (was ${result.resourceVersionBefore ?? '?'}).`;
  if (!result.statusNotApplied) return { level: 'info', message: stored };
  return {
    level: 'warning',
    message: `${stored} Your status edits were not applied: status is a subresource of ${obj.kind ?? 'this kind'}, written through /status (by its controller), and an update of the object ignores it. The editor shows the server's status.`,
  };
}
