import { createTwoFilesPatch } from 'diff';
import { stringify } from 'yaml';
import type { KubeObject } from '../k8s/objects.ts';

/**
 * A copy of `obj` without the noise people do not want in a diff:
 * managedFields always, and (with `volatile`) the fields every write changes
 * (resourceVersion, generation, uid, creationTimestamp) which are shown elsewhere.
 */
export function cleanForDiff(obj: unknown, options: { volatile?: boolean } = {}): unknown {
  if (!obj || typeof obj !== 'object') return obj;
  const o = structuredClone(obj) as KubeObject;
  if (o.metadata && typeof o.metadata === 'object') {
    delete o.metadata.managedFields;
    if (options.volatile) {
      delete o.metadata.resourceVersion;
      delete o.metadata.generation;
      delete o.metadata.uid;
      delete o.metadata.creationTimestamp;
    }
  }
  return o;
}

/** YAML text of a value ("" for undefined), with stable output for diffs. */
export function toYaml(value: unknown): string {
  if (value === undefined || value === null) return '';
  return stringify(value, { sortMapEntries: false, lineWidth: 0 });
}

/**
 * A unified diff of two states rendered as YAML ("" when they are the same).
 * `before` undefined means "does not exist" (a create), `after` undefined a delete.
 */
export function yamlDiff(label: string, before: unknown, after: unknown, options: { volatile?: boolean; beforeName?: string; afterName?: string } = {}): string {
  const a = toYaml(cleanForDiff(before, options));
  const b = toYaml(cleanForDiff(after, options));
  if (a === b) return '';
  return createTwoFilesPatch(label, label, a, b, options.beforeName ?? 'observed', options.afterName ?? 'desired', { context: 3 })
    .split('\n')
    .filter((l) => !l.startsWith('=====') && !l.startsWith('Index: '))
    .join('\n')
    .trimEnd();
}
