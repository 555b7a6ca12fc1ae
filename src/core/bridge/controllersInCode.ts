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

/**
 * The controllers a Go module builds, read from its source text (not compiled: a best-effort reading for the set-up
 * guide, so a person sees the exact name each `bridge.Options` / `bridge.Wrap` call must get). Looks at the `.go`
 * files (not `_test.go`) in and below `moduleDir` (not in vendor, testdata or hidden directories; at most `maxFiles`),
 * for builder chains (`ctrl.NewControllerManagedBy(mgr)…Complete(…)`) and `controller.New("name", …)`. Ordered by
 * file and line. Never throws: an unreadable file is skipped.
 */
export function findControllersInCode(moduleDir: string, maxFiles = 2000): ControllerInCode[] {
  const out: ControllerInCode[] = [];
  forEachGoFile(moduleDir, maxFiles, (file, text) => out.push(...controllersInText(file, text)));
  return out;
}

/**
 * Whether any `.go` file of the module (same files as {@link findControllersInCode}) calls `bridge.Options` or
 * `bridge.NewQueue` — anywhere, not only inside a builder chain (options built in a variable count too).
 */
export function moduleUsesBridgeQueue(moduleDir: string, maxFiles = 2000): boolean {
  let uses = false;
  forEachGoFile(moduleDir, maxFiles, (_file, text) => {
    uses ||= /\bbridge\.(?:Options|NewQueue)\s*(?:\[[^\]]*\])?\s*\(/.test(stripComments(text));
  });
  return uses;
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

/** The manager constructions in the `.go` files in and below `moduleDir` (same files as {@link findControllersInCode}). */
export function findManagersInCode(moduleDir: string, maxFiles = 2000): ManagerInCode[] {
  const out: ManagerInCode[] = [];
  forEachGoFile(moduleDir, maxFiles, (file, text) => {
    const code = stripComments(text);
    const setUp = /\bbridge\.Setup\s*\(/.test(code);
    for (const m of code.matchAll(/\b(?:ctrl\.NewManager|manager\.New)\s*\(/g)) out.push({ file, line: code.slice(0, m.index).split('\n').length, setUp });
  });
  return out;
}

/** The controllers one Go file's text builds (see {@link findControllersInCode}); `file` names it in the results. */
export function controllersInText(file: string, text: string): ControllerInCode[] {
  const code = stripComments(text);
  const found: ControllerInCode[] = [];
  const lineAt = (i: number) => code.slice(0, i).split('\n').length;
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
