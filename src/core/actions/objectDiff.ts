import { createTwoFilesPatch } from 'diff';
import { Document, visit } from 'yaml';
import type { KubeObject } from '../k8s/objects.ts';
import { maskSecret, maskSecretPair } from '../k8s/secretMask.ts';

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

/**
 * The two sides of a comparison as shown to people: {@link cleanForDiff cleaned} and, unless `revealSecrets`,
 * with Secret values masked (changed ones marked, see src/core/k8s/secretMask.ts).
 */
export function displayPair(before: unknown, after: unknown, options: { volatile?: boolean; revealSecrets?: boolean } = {}): [unknown, unknown] {
  const a = cleanForDiff(before, options);
  const b = cleanForDiff(after, options);
  return options.revealSecrets ? [a, b] : maskSecretPair(a, b);
}

/** One object as shown to people: {@link cleanForDiff cleaned} and, unless `revealSecrets`, Secret values masked. */
export function displayOne(obj: unknown, options: { volatile?: boolean; revealSecrets?: boolean } = {}): unknown {
  const o = cleanForDiff(obj, options);
  return options.revealSecrets ? o : maskSecret(o);
}

/**
 * Strings a YAML 1.1 reader (go-yaml, which kubectl's output and many tools use) takes for booleans when plain:
 * `yes`, `no`, `on`, `off`, `y`, `n` in their three casings. YAML 1.2 reads them as strings, so they are plain in
 * 1.2 output; quoting them makes a label value `"yes"` read as the string it is, as kubectl shows it.
 */
const YAML11_BOOLEANS = /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$/;

/**
 * YAML text of a value ("" for undefined), with stable output for diffs: keys in their order, no line folding,
 * and strings that any YAML reader would take for something else quoted (YAML 1.2's and 1.1's booleans alike).
 */
export function toYaml(value: unknown): string {
  if (value === undefined || value === null) return '';
  const doc = new Document(value, { sortMapEntries: false });
  visit(doc, {
    Scalar(_, node) {
      if (typeof node.value === 'string' && YAML11_BOOLEANS.test(node.value)) node.type = 'QUOTE_DOUBLE';
    },
  });
  return doc.toString({ lineWidth: 0 });
}

/**
 * A unified diff of two states rendered as YAML ("" when they are the same).
 * `before` undefined means "does not exist" (a create), `after` undefined a delete.
 * Secret values are masked (a changed one shows as `*** (before)` / `*** (after)`) unless `revealSecrets`.
 */
export function yamlDiff(label: string, before: unknown, after: unknown, options: { volatile?: boolean; beforeName?: string; afterName?: string; revealSecrets?: boolean } = {}): string {
  const [ca, cb] = displayPair(before, after, options);
  const a = toYaml(ca);
  const b = toYaml(cb);
  if (a === b) return '';
  return createTwoFilesPatch(label, label, a, b, options.beforeName ?? 'observed', options.afterName ?? 'desired', { context: 3 })
    .split('\n')
    .filter((l) => !l.startsWith('=====') && !l.startsWith('Index: '))
    .join('\n')
    .trimEnd();
}

/**
 * The diff of one write (a create has no `before`; a delete's `after` is nothing unless finalizers kept the object), its sides named by what the
 * write was: a dry-run one's `current` → `planned` (nothing was stored), a live one's `before` → `after`. Every view
 * of a write's diff (dry-run, report, checks, the CLI) names its sides through this, whichever reconciler wrote.
 * Volatile fields are left out and Secret values masked (see {@link yamlDiff}).
 */
export function writeDiff(label: string, w: { verb: string; dryRun: boolean; before?: unknown; after?: unknown }): string {
  // A delete's object is gone, unless finalizers hold it: then the server returned it Terminating.
  const terminating = (w.after as { metadata?: { deletionTimestamp?: unknown } } | undefined)?.metadata?.deletionTimestamp;
  const after = w.verb === 'delete' && !terminating ? null : (w.after ?? null);
  return yamlDiff(label, w.before ?? null, after, { volatile: true, beforeName: w.dryRun ? 'current' : 'before', afterName: w.dryRun ? 'planned' : 'after' });
}
