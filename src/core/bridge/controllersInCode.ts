import { readdirSync, readFileSync, type Dirent } from 'node:fs';
import { join, relative } from 'node:path';

/** A controller-runtime controller found in a module's Go source by {@link findControllersInCode}. */
export interface ControllerInCode {
  /** The file, relative to the module directory, and the 1-based line where the builder chain (or controller.New) starts. */
  readonly file: string;
  readonly line: number;
  /** How it is built: a builder chain (`ctrl.NewControllerManagedBy(mgr)…`) or `controller.New`. */
  readonly via: 'builder' | 'new';
  /**
   * The name controller-runtime gives it: `Named("…")`, `controller.New("…", …)`, else the lower-cased kind of `For`
   * (undefined when neither can be read from the text).
   */
  readonly name?: string;
  /** The Go type given to `For`, as written (`api.Bucket`, `corev1.ConfigMap`), when there is one. */
  readonly forType?: string;
  /** Whether the chain already passes `bridge.Options` / `bridge.Wrap`. */
  readonly bridged: { readonly options: boolean; readonly wrap: boolean };
}

const SKIPPED = new Set(['vendor', 'testdata', 'node_modules']);
const BUILDER = /\b(?:New)?(?:Typed)?ControllerManagedBy(?:\[[^\]]*\])?\s*\(/g;
const CONTROLLER_NEW = /\bcontroller\.New(?:Typed(?:\[[^\]]*\])?)?\s*\(\s*"([^"]+)"/g;

/** What a Go module's source says about its controllers and the bridge ({@link readModuleCode}). */
export interface ModuleCode {
  /** Its controllers, by file and line. */
  readonly controllers: ControllerInCode[];
  /** Where it builds its manager. */
  readonly managers: ManagerInCode[];
  /**
   * Whether any file calls `bridge.Options` or `bridge.NewQueue` — anywhere, not only inside a builder chain (options
   * built in a variable count too).
   */
  readonly usesBridgeQueue: boolean;
}

/**
 * Reads a Go module's source text once (not compiled: a best-effort reading for the set-up guide, so a person sees
 * the exact name each `bridge.Options` / `bridge.Wrap` call must get): the `.go` files (not `_test.go`) in and below
 * `moduleDir`, not in vendor, testdata or hidden directories, at most `maxFiles`, comments blanked. Controllers are
 * builder chains (`ctrl.NewControllerManagedBy(mgr)…Complete(…)`) and `controller.New("name", …)`; managers are
 * `ctrl.NewManager(` / `manager.New(`. Never throws: an unreadable file is skipped.
 */
export function readModuleCode(moduleDir: string, maxFiles = 2000): ModuleCode {
  const controllers: ControllerInCode[] = [];
  const managers: ManagerInCode[] = [];
  let usesBridgeQueue = false;
  forEachGoFile(moduleDir, maxFiles, (file, text) => {
    const code = stripComments(text);
    controllers.push(...controllersInCode(file, code));
    const setUp = /\bbridge\.Setup\s*\(/.test(code);
    for (const m of code.matchAll(/\b(?:ctrl\.NewManager|manager\.New)\s*\(/g)) managers.push({ file, line: lineOf(code, m.index), setUp });
    usesBridgeQueue ||= /\bbridge\.(?:Options|NewQueue)\s*(?:\[[^\]]*\])?\s*\(/.test(code);
  });
  return { controllers, managers, usesBridgeQueue };
}

/** {@link readModuleCode}'s controllers. */
export function findControllersInCode(moduleDir: string, maxFiles = 2000): ControllerInCode[] {
  return readModuleCode(moduleDir, maxFiles).controllers;
}

/** {@link readModuleCode}'s usesBridgeQueue. */
export function moduleUsesBridgeQueue(moduleDir: string, maxFiles = 2000): boolean {
  return readModuleCode(moduleDir, maxFiles).usesBridgeQueue;
}

/** Calls `visit` with each `.go` file (not `_test.go`) in and below `moduleDir`, by path relative to it, in name order. */
function forEachGoFile(moduleDir: string, maxFiles: number, visit: (file: string, text: string) => void): void {
  let budget = maxFiles;
  const walk = (dir: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (budget <= 0) return;
      if (e.isDirectory()) {
        if (!e.name.startsWith('.') && !e.name.startsWith('_') && !SKIPPED.has(e.name)) walk(join(dir, e.name));
      } else if (e.isFile() && e.name.endsWith('.go') && !e.name.endsWith('_test.go')) {
        budget--;
        let text: string;
        try {
          text = readFileSync(join(dir, e.name), 'utf8');
        } catch {
          continue;
        }
        visit(relative(moduleDir, join(dir, e.name)), text);
      }
    }
  };
  walk(moduleDir);
}

/** Where a module builds its manager (`ctrl.NewManager(` / `manager.New(`), and whether `bridge.Setup` is called in that file. */
export interface ManagerInCode {
  readonly file: string;
  readonly line: number;
  readonly setUp: boolean;
}

/** {@link readModuleCode}'s managers. */
export function findManagersInCode(moduleDir: string, maxFiles = 2000): ManagerInCode[] {
  return readModuleCode(moduleDir, maxFiles).managers;
}

/** The controllers one Go file's text builds (see {@link findControllersInCode}); `file` names it in the results. */
export function controllersInText(file: string, text: string): ControllerInCode[] {
  return controllersInCode(file, stripComments(text));
}

/** {@link controllersInText} of text whose comments are already blanked. */
function controllersInCode(file: string, code: string): ControllerInCode[] {
  const found: ControllerInCode[] = [];
  const lineAt = (i: number) => lineOf(code, i);
  for (const m of code.matchAll(BUILDER)) {
    const chain = chainFrom(code, m.index!);
    const named = /\.\s*Named\(\s*"([^"]+)"\s*\)/.exec(chain)?.[1];
    const forType = /\.\s*For\(\s*&\s*([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)?)\s*\{/.exec(chain)?.[1];
    const kind = forType?.split('.').pop();
    const name = named ?? kind?.toLowerCase();
    found.push({
      file,
      line: lineAt(m.index!),
      via: 'builder',
      ...(name !== undefined ? { name } : {}),
      ...(forType !== undefined ? { forType } : {}),
      bridged: { options: /\bbridge\.Options\s*\(/.test(chain), wrap: /\bbridge\.Wrap(?:Typed)?(?:\[[^\]]*\])?\s*\(/.test(chain) },
    });
  }
  for (const m of code.matchAll(CONTROLLER_NEW)) {
    const call = chainFrom(code, m.index!);
    found.push({
      file,
      line: lineAt(m.index!),
      via: 'new',
      name: m[1]!,
      bridged: { options: /\bbridge\.Options\s*\(/.test(call), wrap: /\bbridge\.Wrap(?:Typed)?(?:\[[^\]]*\])?\s*\(/.test(call) },
    });
  }
  return found.sort((a, b) => a.line - b.line);
}

/**
 * The text of the call expression starting at `start`: up to the parenthesis that closes the last call of a chain
 * (a `.` after a closing parenthesis, across newlines, continues it), at most 4,000 characters.
 */
function chainFrom(code: string, start: number): string {
  let depth = 0;
  let i = code.indexOf('(', start);
  if (i < 0) return code.slice(start, start + 4000);
  const end = Math.min(code.length, start + 4000);
  for (; i < end; i++) {
    const c = code[i];
    if (c === '"' || c === '`' || c === "'") {
      let close = i + 1;
      while (close < end && code[close] !== c) close += c !== '`' && code[close] === '\\' ? 2 : 1;
      i = close;
    } else if (c === '(' || c === '{' || c === '[') depth++;
    else if (c === ')' || c === '}' || c === ']') {
      depth--;
      if (depth === 0 && c === ')') {
        const rest = /^\s*\./.exec(code.slice(i + 1, i + 200));
        if (!rest) return code.slice(start, i + 1);
      }
    }
  }
  return code.slice(start, end);
}

/** `text` with Go comments blanked (newlines kept, so line numbers hold); string literals are left alone. */
function stripComments(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === '`') {
      let j = i + 1;
      while (j < text.length && text[j] !== c && !(c === '"' && text[j] === '\n')) j += c === '"' && text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === '/' && text[i + 1] === '/') {
      const nl = text.indexOf('\n', i);
      const stop = nl < 0 ? text.length : nl;
      out += ' '.repeat(stop - i);
      i = stop - 1;
    } else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      const stop = close < 0 ? text.length : close + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop - 1;
    } else out += c;
  }
  return out;
}

/** The 1-based line of offset `i` in `text`. */
function lineOf(text: string, i: number): number {
  return text.slice(0, i).split('\n').length;
}
