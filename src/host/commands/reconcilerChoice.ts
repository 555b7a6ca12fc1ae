// What Choose Reconciler… offers and how it ranks a workspace's files (no vscode import, so it is unit-tested).
import { isAbsolute, relative, sep } from 'node:path';
import type { ReconcilerKind } from '../settings.ts';

/** A reconciler the person can choose: the three loop kinds, or their Go controller (Run Controller…). */
export type ReconcilerChoice = ReconcilerKind | 'go';

/** One entry of the first quick pick. */
export interface ReconcilerChoiceItem {
  readonly choice: ReconcilerChoice;
  readonly label: string;
  readonly description?: string;
  readonly detail: string;
}

/**
 * The first quick pick's entries, in this order: the built-in lab reconciler, a module, an exec program, a Go
 * controller. The one the settings name now is described as "current" (the Go entry never: it is not a setting).
 */
export function reconcilerChoiceItems(current: ReconcilerKind, trusted: boolean): ReconcilerChoiceItem[] {
  const own = trusted ? '' : ' Runs workspace code: trust the folder first.';
  const items: Array<Omit<ReconcilerChoiceItem, 'description'>> = [
    { choice: 'lab', label: 'Built-in lab reconciler', detail: 'The sample Widget controller that ships with Reconcile Lab (owned ConfigMap, finalizer, status); runs in Restricted Mode too.' },
    { choice: 'module', label: 'Your JavaScript or TypeScript module…', detail: `A file exporting reconcile(request, ctx), loaded into the loop and reloaded when you save it.${own}` },
    { choice: 'exec', label: 'Your program (exec)…', detail: `Any command: it reads the object as JSON on stdin and answers with JSON on stdout, once per reconcile.${own}` },
    { choice: 'go', label: 'Your Go controller…', detail: 'A controller-runtime program with the bridge: Run Controller… starts it and the views show it.' },
  ];
  return items.map((i) => (i.choice === current ? { ...i, description: 'current' } : i));
}

/** File name endings a module reconciler may have (as the loader accepts them). */
export const MODULE_EXTENSIONS = ['ts', 'mts', 'cts', 'js', 'mjs', 'cjs'] as const;

/**
 * Whether a file's text looks like a module reconciler: it exports `reconcile` (a function, a const, a re-export)
 * or has a default export. Declaration files never do. A cheap look at the text, not a parse: it only orders the
 * picker (the loader says what is wrong with a file that does not fit).
 */
export function looksLikeReconcilerModule(path: string, text: string): boolean {
  if (/\.d\.[mc]?ts$/.test(path)) return false;
  return /\bexport\s+(?:async\s+)?function\s*\*?\s*reconcile\b|\bexport\s+(?:const|let|var)\s+reconcile\b|\bexport\s*\{[^}]*\breconcile\b[^}]*\}|\bexport\s+default\b|\bmodule\.exports\b|\bexports\.reconcile\b/.test(text);
}

/**
 * The setting's value for a file the person chose: relative to the workspace folder when it lies inside it (the
 * setting then survives moving the folder), else the absolute path.
 */
export function modulePathSetting(file: string, workspaceFolder: string | undefined): string {
  if (!workspaceFolder) return file;
  const rel = relative(workspaceFolder, file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel.split(sep).join('/') : file;
}

/** Why a typed exec command line cannot be one; undefined when it can. */
export function execCommandProblem(text: string): string | undefined {
  if (!text.trim()) return 'Type the command to run for each reconcile, e.g. ./reconcile.sh or python3 reconcile.py.';
  return undefined;
}
