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
  /**
   * The Go expression that names it when that is not a string literal: `Named(controllerName)`,
   * `controller.New(names.Lamp, …)`. Passing the same expression to `bridge.Options` and `bridge.Wrap` is always
   * right; {@link name} is its value when a string constant or variable of the module gives it unambiguously.
   */
  readonly nameExpr?: string;
  /** The Go type given to `For`, as written (`api.Bucket`, `corev1.ConfigMap`), when there is one. */
  readonly forType?: string;
  /**
   * What a builder chain already passes, as written (whitespace collapsed; only short, single-expression texts):
   * `WithOptions(…)` (e.g. `controller.Options{MaxConcurrentReconciles: 3}`), `Complete(…)` (the reconciler) and a
   * `For(…)` that is not `&T{}` (an object in a variable: `For(gadget)`). Set Up Go Bridge… puts them into its two
   * calls, so that copying them keeps the options and the reconciler the controller has.
   */
  readonly withOptions?: string;
  readonly reconciler?: string;
  readonly forExpr?: string;
  /** Whether the chain already passes `bridge.Options` / `bridge.Wrap`. */
  readonly bridged: { readonly options: boolean; readonly wrap: boolean };
}

const SKIPPED = new Set(['vendor', 'testdata', 'node_modules']);
const BUILDER = /\b(?:New)?(?:Typed)?ControllerManagedBy(?:\[[^\]]*\])?\s*\(/g;
const IDENT = '[A-Za-z_]\\w*(?:\\.[A-Za-z_]\\w*)?';
const CONTROLLER_NEW = new RegExp(`\\bcontroller\\.New(?:Typed(?:\\[[^\\]]*\\])?)?\\s*\\(\\s*(?:"([^"]+)"|(${IDENT})\\s*,)`, 'g');
const NAMED = new RegExp(`\\.\\s*Named\\(\\s*(?:"([^"]+)"|(${IDENT}))\\s*\\)`);
/** A package-level `const` / `var` declaration of one string: `const name = "value"`, `var name string = "value"`. */
const STRING_DECL = /^(?:const|var)[ \t]+([A-Za-z_]\w*)(?:[ \t]+string)?[ \t]*=[ \t]*"([^"\n]*)"[ \t]*;?[ \t]*$/gm;
/** A `const (` / `var (` block at package level, up to its closing parenthesis at the start of a line. */
const DECL_BLOCK = /^(?:const|var)[ \t]*\(([^]*?)^\)/gm;
/** One string spec in such a block: `name = "value"`, `name string = "value"`. */
const BLOCK_SPEC = /^[ \t]*([A-Za-z_]\w*)(?:[ \t]+string)?[ \t]*=[ \t]*"([^"\n]*)"[ \t]*;?[ \t]*$/gm;

/**
 * Identifier → its string value, from `code`'s package-level string constants and variables (not a function's
 * locals: `name := "x"` in one function says nothing about a `name` elsewhere); an identifier given two values maps
 * to undefined.
 */
function stringConstants(code: string, into = new Map<string, string | undefined>()): Map<string, string | undefined> {
  const add = (id: string, value: string) => into.set(id, into.has(id) && into.get(id) !== value ? undefined : value);
  for (const m of code.matchAll(STRING_DECL)) add(m[1]!, m[2]!);
  for (const b of code.matchAll(DECL_BLOCK)) for (const m of b[1]!.matchAll(BLOCK_SPEC)) add(m[1]!, m[2]!);
  return into;
}

/** The value of a Go expression naming a controller (`controllerName`, `names.Lamp`): the file's own constant first, then the module's. */
function valueOf(expr: string, own: ReadonlyMap<string, string | undefined>, module?: ReadonlyMap<string, string | undefined>): string | undefined {
  const id = expr.split('.').pop()!;
  if (!expr.includes('.') && own.has(id)) return own.get(id);
  return module?.get(id);
}

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
  /**
   * Whether a file reads `os.Getenv("ENABLE_WEBHOOKS")`: kubebuilder's scaffold registers its webhooks only when that
   * variable is not "false", so setting it turns the program's webhook server off.
   */
  readonly readsEnableWebhooks: boolean;
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
  let readsEnableWebhooks = false;
  const files: Array<{ file: string; code: string }> = [];
  const constants = new Map<string, string | undefined>();
  forEachGoFile(moduleDir, maxFiles, (file, text) => {
    const code = stripComments(text);
    files.push({ file, code });
    stringConstants(code, constants);
    const setUp = /\bbridge\.Setup\s*\(/.test(code);
    for (const m of code.matchAll(/\b(?:ctrl\.NewManager|manager\.New)\s*\(/g)) managers.push({ file, line: lineOf(code, m.index), setUp });
    usesBridgeQueue ||= /\bbridge\.(?:Options|NewQueue)\s*(?:\[[^\]]*\])?\s*\(/.test(code);
    readsEnableWebhooks ||= /\bos\.(?:Getenv|LookupEnv)\(\s*"ENABLE_WEBHOOKS"\s*\)/.test(code);
  });
  for (const { file, code } of files) controllers.push(...controllersInCode(file, code, constants));
  return { controllers, managers, usesBridgeQueue, readsEnableWebhooks };
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

/**
 * {@link controllersInText} of text whose comments are already blanked; `module` holds the string constants of the
 * whole module (a name given as an identifier is looked up in the file first, then there).
 */
function controllersInCode(file: string, code: string, module?: ReadonlyMap<string, string | undefined>): ControllerInCode[] {
  const found: ControllerInCode[] = [];
  const lineAt = (i: number) => lineOf(code, i);
  const own = stringConstants(code);
  for (const m of code.matchAll(BUILDER)) {
    const chain = chainFrom(code, m.index!);
    const named = NAMED.exec(chain);
    const nameExpr = named?.[2];
    const forType = /\.\s*For\(\s*&\s*([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)?)\s*\{/.exec(chain)?.[1];
    const kind = forType?.split('.').pop();
    // Named(x) with x not a literal: its value if the code gives it, never the kind of For (controller-runtime uses x).
    const name = named ? (named[1] ?? valueOf(nameExpr!, own, module)) : kind?.toLowerCase();
    const withOptions = callArgument(chain, 'WithOptions');
    const reconciler = callArgument(chain, 'Complete');
    const forArg = forType === undefined ? callArgument(chain, 'For') : undefined;
    const forExpr = forArg !== undefined && /^&?[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$/.test(forArg) ? forArg : undefined;
    found.push({
      file,
      line: lineAt(m.index!),
      via: 'builder',
      ...(name !== undefined ? { name } : {}),
      ...(nameExpr !== undefined ? { nameExpr } : {}),
      ...(forType !== undefined ? { forType } : {}),
      ...(withOptions !== undefined ? { withOptions } : {}),
      ...(reconciler !== undefined ? { reconciler } : {}),
      ...(forExpr !== undefined ? { forExpr } : {}),
      bridged: { options: /\bbridge\.Options\s*\(/.test(chain), wrap: /\bbridge\.Wrap(?:Typed)?(?:\[[^\]]*\])?\s*\(/.test(chain) },
    });
  }
  for (const m of code.matchAll(CONTROLLER_NEW)) {
    const call = chainFrom(code, m.index!);
    const nameExpr = m[2];
    const name = m[1] ?? valueOf(nameExpr!, own, module);
    found.push({
      file,
      line: lineAt(m.index!),
      via: 'new',
      ...(name !== undefined ? { name } : {}),
      ...(nameExpr !== undefined ? { nameExpr } : {}),
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

/**
 * The argument of the chain's first `.name(…)` call, as written with whitespace collapsed; undefined when there is
 * none, when it is empty or longer than 160 characters, or holds a backtick or a top-level comma (not one expression).
 * Only for the set-up guide's text, where it stands in a code span.
 */
function callArgument(chain: string, name: string): string | undefined {
  const m = new RegExp(`\\.\\s*${name}\\s*\\(`).exec(chain);
  if (!m) return undefined;
  let depth = 0;
  const open = m.index + m[0].length - 1;
  for (let i = open; i < chain.length; i++) {
    const c = chain[i];
    if (c === '"' || c === '`' || c === "'") {
      let close = i + 1;
      while (close < chain.length && chain[close] !== c) close += c !== '`' && chain[close] === '\\' ? 2 : 1;
      i = close;
    } else if (c === '(' || c === '{' || c === '[') depth++;
    else if (c === ')' || c === '}' || c === ']') {
      depth--;
      if (depth === 0) {
        // One line: whitespace collapsed, and a composite literal's line breaks leave no `{ ` / `, }` behind.
        const arg = chain.slice(open + 1, i).replace(/\s+/g, ' ').replace(/\{ /g, '{').replace(/,? \}/g, '}').trim().replace(/,$/, '').trim();
        return arg && arg.length <= 160 && !arg.includes('`') ? arg : undefined;
      }
    } else if (c === ',' && depth === 1) return undefined;
  }
  return undefined;
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

/** A controller name read from the workspace's code, when it looks like one (else undefined: never shown as it is). */
export function plainName(x: string | undefined): string | undefined {
  return x !== undefined && /^[A-Za-z0-9][-A-Za-z0-9_.]*$/.test(x) ? x : undefined;
}

/**
 * Set Up Go Bridge…'s list of the module's own controllers (read from its code by readModuleCode), each with the two
 * calls under its exact name; empty when none is found. Every text from the code is in a code span and names are
 * only shown when they look like names (plainName), so nothing from the workspace renders as a link.
 */
export function controllerSetupLines(found: readonly ControllerInCode[]): string[] {
  if (!found.length) return [];
  const lines = ['', '   Found in your code:', ''];
  for (const c of found) {
    const where = `\`${c.file.replaceAll('`', '')}:${c.line}\``;
    const value = plainName(c.name);
    // Named(controllerName): the same expression in both calls is always right, whether or not its value was read.
    const expr = plainName(c.nameExpr);
    const name = value ?? expr;
    const arg = expr ?? `"${value}"`;
    const label = value ? `controller \`${value}\`${expr ? ` (\`${expr}\`)` : ''}` : `the controller named by \`${expr}\``;
    const forType = c.forType;
    if (c.bridged.options && c.bridged.wrap) {
      lines.push(`   - ${where}${name ? ` — \`${name}\`` : ''}: already bridged.`);
    } else if (!name) {
      lines.push(`   - ${where}: its name could not be read; add \`Named("…")\` to the chain and use that name in both calls.`);
    } else if (c.via === 'new') {
      lines.push(`   - ${where} — ${label}: \`controller.New(${arg}, mgr, bridge.Options(mgr, ${arg}, controller.Options{Reconciler: bridge.Wrap(mgr, ${arg}, r)}))\`.`);
    } else {
      const obj = forType ? `, &${forType}{}` : c.forExpr ? `, ${c.forExpr}` : '';
      // Its own options and reconciler, as the chain passes them (unless they are the bridge's already).
      const options = !c.bridged.options && c.withOptions && !/\bbridge\./.test(c.withOptions) ? c.withOptions : 'controller.Options{}';
      const reconciler = !c.bridged.wrap && c.reconciler && !/\bbridge\./.test(c.reconciler) ? c.reconciler : 'r';
      lines.push(`   - ${where} — ${label}${forType ? ` (For \`${forType}\`)` : ''}: \`WithOptions(bridge.Options(mgr, ${arg}, ${options}))\` and \`Complete(bridge.Wrap(mgr, ${arg}, ${reconciler}${obj}))\`${c.bridged.options ? ' (Options is there; wrap the reconciler)' : c.bridged.wrap ? ' (Wrap is there; add the Options)' : ''}.`);
    }
  }
  return lines;
}
