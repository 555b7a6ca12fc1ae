// What Choose Reconciler… offers and how it ranks a workspace's files (no vscode import, so it is unit-tested).
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { splitCommandLine } from '../../core/reconcilers/commandLine.ts';
import { shebangProblem } from '../../core/reconcilers/execReconciler.ts';
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

/**
 * Why a typed exec command line cannot run; undefined when it can (as far as can be told before running it). Beyond an
 * empty line or an unterminated quote, its program is looked at as the exec reconciler will start it (from
 * `workspaceFolder`, a bare name on `path`), so what would fail every reconcile is said while typing: a file that does
 * not exist, a folder, a file without the execute bit, a `#!` interpreter that does not exist or a `#!` line ending
 * in CRLF, and a bare name that is not on PATH (a file of the workspace folder then needs `./`). A relative path with
 * no workspace folder is not checked.
 */
export function execCommandProblem(text: string, workspaceFolder?: string, path: string | undefined = process.env.PATH): string | undefined {
  if (!text.trim()) return 'Type the command to run for each reconcile, e.g. ./reconcile.sh or python3 reconcile.py.';
  let program: string;
  try {
    program = splitCommandLine(text)[0]!;
  } catch (e) {
    return `${(e as Error).message[0]!.toUpperCase()}${(e as Error).message.slice(1)}.`;
  }
  const stat = (p: string) => {
    try {
      return statSync(p);
    } catch {
      return undefined;
    }
  };
  let file: string | undefined;
  if (program.includes('/')) {
    if (!isAbsolute(program) && !workspaceFolder) return undefined;
    file = isAbsolute(program) ? program : resolve(workspaceFolder!, program);
    const st = stat(file);
    if (!st) return isAbsolute(program) ? `There is no file ${program}.` : `There is no file ${program} in the workspace folder (${workspaceFolder}).`;
    if (st.isDirectory()) return `${program} is a folder, not a program.`;
  } else {
    file = (path ?? '').split(delimiter).filter(Boolean).map((d) => join(d, program)).find((p) => stat(p)?.isFile());
    if (!file) {
      const beside = workspaceFolder && stat(join(workspaceFolder, program))?.isFile();
      return beside
        ? `${program} is a file of the workspace folder, but a name without a slash is looked up on PATH only: type ./${program}.`
        : `${program} is not on PATH${workspaceFolder ? ' nor a file of the workspace folder' : ''}: type its path (./${program} for a file of the workspace folder).`;
    }
  }
  try {
    accessSync(file, constants.X_OK);
  } catch {
    return `${program} is not executable: chmod +x ${program}, or type its interpreter first (python3 ${program}, bash ${program}).`;
  }
  const interpreter = shebangProblem(program, workspaceFolder, path);
  return interpreter ? `${program} cannot start: ${interpreter}.` : undefined;
}
