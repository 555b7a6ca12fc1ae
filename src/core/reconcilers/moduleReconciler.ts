import { createRequire, SourceMap } from 'node:module';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Script } from 'node:vm';
import type { Disposable } from '../lifecycle.ts';
import type { Logger } from '../log.ts';
import { nullLogger } from '../log.ts';
import type { ReconcileContext, Reconciler, Request, Result } from '../controller/reconcile.ts';
import type { Predicate } from '../controller/predicate.ts';
import { predicatesFromExport } from '../controller/predicateSpec.ts';
import type { WorkQueueKind } from '../workqueue/priorityQueue.ts';
import { closestNames, unknownFields } from '../text/closest.ts';
import { claimStrayErrors } from './strayErrors.ts';
import { isErrorValue, nonErrorThrowMessage } from './thrownValue.ts';
import { moduleIndexesFromExport, type ModuleIndex } from './moduleIndexes.ts';

/** The shape a user module exports: `export async function reconcile(request, ctx)` (or a default export of it). */
export type ReconcileFunction = (request: Request, ctx: ReconcileContext) => Promise<Result | void> | Result | void;

/**
 * `throw`: a JavaScript runtime error (TypeError, ReferenceError, …) thrown by the module's code while reconciling,
 * or a value thrown that is not an Error (a string, an object).
 * `export`: no `reconcile` function is exported. `config`: the `predicates`, `options`, `checkTransitions` or `indexes`
 * exports are wrong (only the `controllerConfig()` of {@link createModuleReconciler} throws it).
 */
export type ModuleFailureKind = 'not-found' | 'compile' | 'load' | 'export' | 'config' | 'result' | 'throw';

/**
 * The controller settings a module may export as `options` (read once, when the loop is built):
 * `export const options = { maxConcurrentReconciles: 2, reconcileTimeoutMs: 10_000, workQueue: 'priority' }`.
 */
export interface ModuleControllerOptions {
  maxConcurrentReconciles?: number;
  reconcileTimeoutMs?: number;
  workQueue?: WorkQueueKind;
}

/** What a module exports besides `reconcile`: its predicates for the primary resource and its controller options. */
export interface ModuleControllerConfig {
  /** From `export const predicates = ['generation-changed', …]` (names, or predicate objects). */
  predicates: Predicate[];
  options: ModuleControllerOptions;
  /**
   * From `export const checkTransitions = [{ spec: … }, …]`: JSON merge patches of the primary for the robustness
   * checks (unobserved state, stale cache); undefined when not exported.
   */
  checkTransitions?: unknown[];
  /** From `export const indexes = [{ resource, name, index }, …]`: its own cache indexes ([] when not exported). */
  indexes: ModuleIndex[];
}

/** A user module that cannot be used. Thrown from `reconcile`, so the queue retries (and picks up a fix). */
export class ModuleReconcilerError extends Error {
  readonly kind: ModuleFailureKind;
  constructor(kind: ModuleFailureKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ModuleReconcilerError';
    this.kind = kind;
  }
}

/**
 * The file extensions a module reconciler may have: the ones both loaders take (esbuild, and Node importing the file
 * itself when no esbuild is found: JavaScript, and TypeScript through its type stripping). Case-sensitive.
 */
export const MODULE_EXTENSIONS = ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'] as const;

/**
 * Why `path` cannot be a module reconciler because of its name — an extension no loader handles (`reconciler.ts.bak`,
 * `reconciler.tsx`) or none at all — naming the accepted extensions; undefined when it ends in one of
 * {@link MODULE_EXTENSIONS}. Looks at the name only (a missing file is reported when the module is loaded). For
 * the CLI's `--reconciler module:<path>` and the extension's `reconcileLab.reconciler.modulePath`, so such a path is
 * refused before a loop starts rather than failing every reconcile.
 */
export function moduleExtensionProblem(path: string): string | undefined {
  const ext = extname(path);
  if ((MODULE_EXTENSIONS as readonly string[]).includes(ext)) return undefined;
  const accepted = `${MODULE_EXTENSIONS.slice(0, -1).join(', ')} or ${MODULE_EXTENSIONS.at(-1)}`;
  return `${path} is not a JavaScript or TypeScript file (${ext ? `"${ext}"` : 'no extension'}): a reconciler module's name must end in ${accepted}`;
}

/**
 * The `not-found` message for a module file that does not exist: its path, and the module files beside it whose
 * names are close to the one given (`reconciler module not found: /ws/oven-reconciller.ts (did you mean
 * oven-reconciler.ts?)`), so a typo in `--reconciler module:<path>` or `reconcileLab.reconciler.modulePath` names the
 * file meant. Reads the file's folder only (a missing folder: no suggestion).
 */
export function moduleNotFoundMessage(path: string): string {
  let siblings: string[] = [];
  try {
    siblings = readdirSync(dirname(path)).filter((f) => (MODULE_EXTENSIONS as readonly string[]).includes(extname(f)));
  } catch {
    // No such folder (or not readable): nothing to suggest.
  }
  const near = closestNames(basename(path), siblings);
  return `reconciler module not found: ${path}${near.length ? ` (did you mean ${near.join(' or ')}?)` : ''}`;
}

export interface ModuleReconcilerOptions {
  /** The user's file: one of {@link MODULE_EXTENSIONS} (another is a `compile` error on every reconcile). */
  path: string;
  log?: Logger;
  /** Finds esbuild (default: beside Reconcile Lab, else in the module's workspace); tests pass one that finds none. */
  findEsbuild?: (modulePath: string) => Promise<EsbuildLike | undefined>;
  /** Whether this Node strips TypeScript types itself (default: `process.features.typescript`); for tests. */
  nodeStripsTypes?: boolean;
  /**
   * Which errors that escaped every reconcile this module claims as its own (see strayErrors.ts), given whether the
   * error's stack has frames of the module's files. Default: every one (the CLI's process hosts nothing else). The
   * editor's extension host runs other extensions too, so it claims only errors with the module's frames or from
   * Reconcile Lab's own code (a `ctx.client` call the module did not await).
   */
  claimStray?: (e: unknown, framed: boolean) => boolean;
}

interface Loaded {
  signature: string;
  inputs: string[];
  fn: ReconcileFunction;
  exports: Record<string, unknown>;
  /** Maps a stack frame of the loaded code to the user's source (see {@link userFrames}). */
  frames: FrameMapper;
}

/**
 * Where a stack frame of the loaded code comes from in the user's files: `file:line:column` (1-based) of the source,
 * or undefined for a frame that is not the module's (Node internals, Reconcile Lab itself).
 */
export type FrameMapper = (url: string, line: number, column: number) => { file: string; line: number; column: number } | undefined;

/** The fields of a {@link Result}, as a module returns it. */
const RESULT_FIELDS = ['requeueAfterMs', 'reason', 'priority', 'requeue'] as const;

/**
 * What is wrong with a Result object a module's reconcile() returned, every problem at once (a fix of one must not
 * only uncover the next), each with its fix; undefined when nothing is. A misspelt field ("requeueAfter", Go's
 * "RequeueAfter") would be dropped silently, and with it the requeue, so it is a problem too. One problem keeps its
 * own sentence (`requeueAfterMs must be a number >= 0 (got "soon")`, `reconcile() returned a Result with unknown field
 * "requeueAfter" (did you mean "requeueAfterMs"?); a Result has …`); several are `reconcile() returned a Result with N
 * problems: …`, the wrong values first, the unknown fields and the list of a Result's fields last.
 */
export function resultProblem(r: Record<string, unknown>): string | undefined {
  const wrong: string[] = [];
  const bad = (field: string, want: string) => wrong.push(`${field} must be ${want} (got ${JSON.stringify(r[field]) ?? typeof r[field]})`);
  const { requeueAfterMs: ms, reason, priority, requeue } = r;
  if (ms !== undefined && (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)) bad('requeueAfterMs', 'a number >= 0');
  if (reason !== undefined && typeof reason !== 'string') bad('reason', 'a string');
  if (priority !== undefined && !Number.isSafeInteger(priority)) bad('priority', 'an integer');
  if (requeue !== undefined && typeof requeue !== 'boolean') bad('requeue', 'a boolean');
  const unknown = unknownFields(Object.keys(r), RESULT_FIELDS, 'a Result has');
  if (!unknown) return wrong.length > 1 ? `reconcile() returned a Result with ${wrong.length} problems: ${wrong.join('; ')}` : wrong[0];
  if (!wrong.length) return `reconcile() returned a Result with ${unknown.message}`;
  return `reconcile() returned a Result with ${wrong.length + unknown.count} problems: ${wrong.join('; ')}; ${unknown.message}`;
}

/**
 * What is wrong with a reconcile() result that is not an object (nor undefined/null), with the Result that was
 * probably meant: a number is taken for a delay (`return 15000` → `{ requeueAfterMs: 15000 }`), `true` for a requeue
 * (`{ requeue: true }`), `false` for done (`{}` or nothing), a string for a reason (`{ requeueAfterMs, reason }`).
 * The leading words stay `reconcile() must resolve to a Result object or undefined (got <type>)`.
 */
export function nonObjectResultProblem(r: unknown): string {
  const lead = `reconcile() must resolve to a Result object or undefined (got ${typeof r}`;
  if (typeof r === 'number' && Number.isFinite(r) && r >= 0) return `${lead} ${r}): to look again after ${r} ms, return { requeueAfterMs: ${r} }; when done, return {} or nothing`;
  if (r === true) return `${lead} true): to be requeued, return { requeue: true } (or { requeueAfterMs: <ms> } to wait); when done, return {} or nothing`;
  if (r === false) return `${lead} false): when done, return {} or nothing`;
  if (typeof r === 'string') return `${lead} ${JSON.stringify(r.length > 40 ? `${r.slice(0, 40)}…` : r)}): to wait with a reason, return { requeueAfterMs: <ms>, reason: ${JSON.stringify(r.length > 40 ? `${r.slice(0, 40)}…` : r)} }; to fail, throw an Error; when done, return {} or nothing`;
  return `${lead})`;
}

/** How many of the module's own stack frames an error message lists. */
const MAX_FRAMES = 5;

/** One V8 stack line: `    at [async ]fn (url:line:col)` or `    at url:line:col`. */
const FRAME = /^\s*at (?:async )?(?:(.+?) \()?((?:file:\/\/|\/)[^()]*?):(\d+):(\d+)\)?\s*$/;

/**
 * The frames of `stack` that are the module's own code, as `at fn (file:line:column)` lines in the user's source
 * (through `map`, the build's source map), innermost first, at most {@link MAX_FRAMES}. Frames of Node and of
 * Reconcile Lab are left out: they say nothing about where the module went wrong.
 */
export function userFrames(stack: string | undefined, map: FrameMapper): string[] {
  const out: string[] = [];
  for (const line of (stack ?? '').split('\n')) {
    const m = FRAME.exec(line);
    if (!m) continue;
    const at = map(m[2]!, Number(m[3]), Number(m[4]));
    if (!at) continue;
    const where = `${at.file}:${at.line}:${at.column}`;
    out.push(m[1] ? `at ${m[1]} (${where})` : `at ${where}`);
    if (out.length === MAX_FRAMES) break;
  }
  return out;
}

/** Maps frames of the bundle at `url` through its inline source map (sources relative to `baseDir`). */
function sourceMapFrames(url: string, code: string, baseDir: string): FrameMapper {
  let map: SourceMap | undefined;
  const inline = /\/\/# sourceMappingURL=data:application\/json;base64,([A-Za-z0-9+/=]+)\s*$/.exec(code);
  try {
    if (inline) map = new SourceMap(JSON.parse(Buffer.from(inline[1]!, 'base64').toString('utf8')) as ConstructorParameters<typeof SourceMap>[0]);
  } catch {
    map = undefined; // a frame then names no line: the message itself is still shown
  }
  return (frameUrl, line, column) => {
    if (frameUrl !== url || !map) return undefined;
    const e = map.findEntry(line - 1, column - 1) as { originalSource?: string; originalLine?: number; originalColumn?: number };
    if (e.originalSource === undefined || e.originalLine === undefined || e.originalColumn === undefined) return undefined;
    const src = e.originalSource.startsWith('file://') ? fileURLToPath(e.originalSource) : resolve(baseDir, e.originalSource);
    return { file: src, line: e.originalLine + 1, column: e.originalColumn + 1 };
  };
}

/** JavaScript's own error types: a bug in the module's code rather than a failure it reports on purpose. */
const RUNTIME_ERRORS = new Set(['TypeError', 'ReferenceError', 'RangeError', 'SyntaxError', 'URIError', 'EvalError']);

/**
 * The part of an esbuild message (`BuildFailure.errors[i]`) the compile error uses. As in esbuild, `line` is 1-based
 * and `column` 0-based; no column: the line is all that is known.
 */
export interface EsbuildMessage {
  text: string;
  location?: { file: string; line: number; column?: number; lineText?: string } | null;
}

export interface EsbuildLike {
  build(options: Record<string, unknown>): Promise<{ outputFiles?: Array<{ text: string }>; metafile?: { inputs: Record<string, unknown> } }>;
}

/**
 * esbuild, from the tool's own dependencies (development checkout, CLI) or else from the reconciler
 * module's workspace (a packaged extension ships no node_modules: `npm i -D esbuild` next to the module).
 */
async function loadEsbuild(modulePath: string): Promise<EsbuildLike | undefined> {
  const pick = (m: EsbuildLike & { default?: EsbuildLike }) => (typeof m.build === 'function' ? m : m.default);
  // A non-literal specifier keeps bundlers from inlining esbuild (a native tool) into dist/.
  const specifier = 'esbuild';
  try {
    return pick((await import(specifier)) as EsbuildLike & { default?: EsbuildLike });
  } catch {
    // not beside the tool: try the module's workspace
  }
  try {
    const resolved = createRequire(modulePath).resolve(specifier);
    return pick((await import(pathToFileURL(resolved).href)) as EsbuildLike & { default?: EsbuildLike });
  } catch {
    return undefined;
  }
}

/** How many compile diagnostics a message lists; the rest are counted on one line. */
const MAX_DIAGNOSTICS = 5;

/**
 * esbuild's errors as plain text a person reads in a terminal, the Output channel or the Event Log: one line per
 * diagnostic, `file:line:column: message` (file relative to the module's folder; line and column 1-based, as editors
 * and stack frames count them, so esbuild's 0-based column is printed plus one; `file:line: message` when the
 * location has no column), followed by the offending source
 * line indented under it (`    12 | const x: number = ;`). Real line breaks, never escaped `\n`; a line break
 * inside esbuild's text is folded into a space so a diagnostic stays one line. At most {@link MAX_DIAGNOSTICS}
 * are listed, then "… and N more error(s)". No markup: callers that render it must treat it as text.
 */
export function formatCompileErrors(errors: readonly EsbuildMessage[]): string {
  const oneLine = (t: string) => t.replace(/\s*\r?\n\s*/g, ' ').trim();
  const lines: string[] = [];
  for (const m of errors.slice(0, MAX_DIAGNOSTICS)) {
    const loc = m.location;
    if (!loc) {
      lines.push(oneLine(m.text));
      continue;
    }
    lines.push(`${loc.file}:${loc.line}${loc.column !== undefined ? `:${loc.column + 1}` : ''}: ${oneLine(m.text)}`);
    if (loc.lineText?.trim()) lines.push(`    ${loc.line} | ${oneLine(loc.lineText)}`);
  }
  if (errors.length > MAX_DIAGNOSTICS) lines.push(`… and ${errors.length - MAX_DIAGNOSTICS} more error(s)`);
  return lines.join('\n');
}

/** Where a syntax error is: 1-based line, 0-based column (as {@link EsbuildMessage}) when known, the source line. */
export interface SyntaxErrorAt {
  /** The file as the error names it (a path or a file: URL, possibly with a query); undefined: not named. */
  where?: string;
  line: number;
  column?: number;
  lineText?: string;
}

/**
 * The location Node prints above a syntax error's stack when it knows it — `where:line`, source lines, a caret line
 * (`   ^`, or `^^^^` under a span) under the offending one, then a blank line before `SyntaxError…` (a CommonJS file,
 * a TypeScript file that type stripping rejects, a script compiled with `vm`) — or undefined when the stack starts
 * with the error itself (an ES module's syntax error: V8 keeps its location from JavaScript). The quoted source lines
 * may include empty ones. The column is the caret's (0-based); without a caret line the line after the header is taken
 * as the source line, with no column.
 */
export function syntaxErrorAt(stack: string | undefined): SyntaxErrorAt | undefined {
  const lines = (stack ?? '').split('\n');
  const head = /^(.*):(\d+)$/.exec(lines[0] ?? '');
  if (!head) return undefined;
  // The error's own line follows a blank line (else `head` was an error message that happens to end in
  // `:<digits>`). Not the first blank line: a source line Node quotes may be empty itself (type stripping quotes the
  // line before the offending one, often a blank line between two blocks).
  const end = lines.findIndex((l, i) => i >= 1 && l === '' && /^\w*Error\b/.test(lines[i + 1] ?? ''));
  if (end < 0) return undefined;
  const body = lines.slice(1, end);
  const caret = body.findIndex((l, i) => i > 0 && /^[ \t]*\^+[ \t]*$/.test(l));
  const at: SyntaxErrorAt = { where: head[1]!, line: Number(head[2]) };
  if (caret > 0) return { ...at, column: body[caret]!.indexOf('^'), lineText: body[caret - 1]! };
  return body[0] !== undefined ? { ...at, lineText: body[0] } : at;
}

/**
 * The location in swc's own message format (`ERR_INVALID_TYPESCRIPT_SYNTAX` of Node 22 before its errors named the
 * file: `  x Expected …\n   ,----\n 2 | const x = {;\n   :            ^\n   \`----`), with the first line as the text;
 * undefined when the message is not in that form.
 */
export function swcMessageAt(message: string): { text: string; at?: SyntaxErrorAt } | undefined {
  const lines = message.split('\n');
  const first = lines.findIndex((l) => /^\s*x /.test(l));
  if (first < 0) return undefined;
  const text = lines[first]!.replace(/^\s*x /, '').trim();
  const caret = lines.findIndex((l, i) => i > first && /^\s*:\s*\^/.test(l));
  const src = caret > 0 ? /^\s*(\d+) \| ?(.*)$/.exec(lines[caret - 1]!) : null;
  if (!src) return { text };
  const c = lines[caret]!;
  return { text, at: { line: Number(src[1]), column: Math.max(0, c.indexOf('^') - (c.indexOf(':') + 2)), lineText: src[2]! } };
}

/** Replaces `[from, to)` of `s` with spaces, keeping line breaks (so every position after it keeps its line and column). */
function blank(s: string, from: number, to: number, lead = ''): string {
  const gap = s.slice(from, to).replace(/[^\r\n\u2028\u2029]/g, ' ');
  return s.slice(0, from) + lead + gap.slice(lead.length) + s.slice(to);
}

/** End (exclusive) of the string literal starting at or after `from` in `s`, or -1. */
function afterStringLiteral(s: string, from: number): number {
  const open = s.slice(from).search(/['"]/);
  if (open < 0) return -1;
  const q = from + open;
  const close = s.indexOf(s[q]!, q + 1);
  if (close < 0) return -1;
  const attrs = /^\s*(?:with|assert)\s*\{[^}]*\}/.exec(s.slice(close + 1));
  return close + 1 + (attrs ? attrs[0].length : 0);
}

/**
 * `s` with the module-only syntax at `offset` — where compiling `s` as a classic script stopped — replaced by
 * script syntax of the same length (an import declaration blanked, `export` blanked or `export default` made
 * `void`, `import.meta` made `Object.meta`, a top-level `await` made `void `), or undefined when something else is
 * there.
 */
function scriptSyntaxAt(s: string, offset: number): string | undefined {
  if (s.startsWith('import.meta', offset - 7)) return s.slice(0, offset - 7) + 'Object' + s.slice(offset - 1);
  if (s.startsWith('import.meta', offset)) return s.slice(0, offset) + 'Object' + s.slice(offset + 6);
  if (s.startsWith('await', offset)) return s.slice(0, offset) + 'void ' + s.slice(offset + 5);
  if (s.startsWith('import', offset)) {
    const end = afterStringLiteral(s, offset);
    return end < 0 ? undefined : blank(s, offset, end);
  }
  if (!s.startsWith('export', offset)) return undefined;
  const rest = s.slice(offset + 6);
  const def = /^\s+default\b/.exec(rest);
  if (def) return blank(s, offset, offset + 6 + def[0].length, 'void');
  const lead = /^\s*/.exec(rest)![0].length;
  const next = rest[lead];
  if (next === '*') {
    const end = afterStringLiteral(s, offset);
    return end < 0 ? undefined : blank(s, offset, end);
  }
  if (next === '{') {
    const close = s.indexOf('}', offset);
    if (close < 0) return undefined;
    const from = /^\s*from\s*['"]/.test(s.slice(close + 1)) ? afterStringLiteral(s, close + 1) : close + 1;
    return from < 0 ? undefined : blank(s, offset, from);
  }
  return blank(s, offset, offset + 6);
}

/** The offset in `s` of 1-based `line`, 0-based `column` (line breaks as JavaScript counts them). */
function offsetOf(s: string, line: number, column: number): number {
  const breaks = /\r\n|[\n\r\u2028\u2029]/g;
  let start = 0;
  for (let l = 1; l < line; l++) {
    const m = breaks.exec(s);
    if (!m) return -1;
    start = m.index + m[0].length;
  }
  return start + column;
}

/**
 * Where V8 finds the syntax error `message` in the ES module `source`: an ES module's compile error carries no
 * location a program can read (Node prints it only for an uncaught one), so the source is compiled — never run — as
 * a strict classic script with `vm`, the module-only syntax that stops that compile replaced with script syntax of
 * the same length, until the compile fails with the same message. Undefined when it never does (the error is in an
 * imported file, or the script form fails differently): no location is better than a wrong one.
 */
export function locateModuleSyntaxError(source: string, filename: string, message: string): SyntaxErrorAt | undefined {
  const prefix = "'use strict';";
  let s = source.startsWith('#!') ? `//${source.slice(2)}` : source;
  for (let i = 0; i < 500; i++) {
    let e: Error;
    try {
      new Script(prefix + s, { filename });
      return undefined;
    } catch (err) {
      e = err as Error;
    }
    const at = syntaxErrorAt(e.stack);
    if (!at || at.column === undefined) return undefined;
    const column = at.line === 1 ? at.column - prefix.length : at.column;
    if (column < 0) return undefined;
    if (e.message === message) {
      const lines = source.split(/\r\n|[\n\r\u2028\u2029]/);
      return { line: at.line, column, lineText: lines[at.line - 1] ?? '' };
    }
    const next = scriptSyntaxAt(s, offsetOf(s, at.line, column));
    if (next === undefined) return undefined;
    s = next;
  }
  return undefined;
}

/**
 * A reconciler implemented by a user's JS or TS module exporting
 * `reconcile(request, ctx)` (same contract as {@link Reconciler.reconcile}:
 * resolve a Result, throw to retry with backoff, throw a TerminalError to stop).
 *
 * Loading: the module is bundled with esbuild (its relative imports and
 * packages included, Node built-ins left external) into a temporary ESM file
 * that is imported and deleted at once. Before every reconcile the modification
 * times of every input file are compared with the loaded build's, so an edited
 * module (or one of its imports) is reloaded fresh; an unchanged one is reused.
 * Without esbuild installed, the file is imported directly (cache-busted by mtime; only the entry file is
 * watched for edits): plain .js/.mjs, and TypeScript when this Node strips types itself (22.18+: erasable syntax,
 * relative imports with their .ts); on an older Node TypeScript is rejected with a clear error.
 *
 * Every problem (missing file, compile error with file:line:column, a throw
 * while evaluating the module, a missing export, an invalid result) is thrown
 * as a {@link ModuleReconcilerError}; nothing crashes the host. A throw while
 * evaluating, and a JavaScript runtime error (TypeError, ReferenceError, …)
 * from `reconcile()`, carry the module's own frames mapped to its source files
 * (kind `throw` for the latter, the original error as `cause`). A value thrown
 * that is not an Error (`throw 'not ready'`, `throw { code: 1 }`) is a
 * ModuleReconcilerError of kind `throw` too, showing the value (cut short,
 * Secret values masked: {@link nonErrorThrowMessage}) with the advice to throw
 * an Error, the value as `cause` (a `{ terminal: true }` stays terminal, a
 * `priority` is kept); any other
 * error `reconcile()` throws propagates unchanged (terminal stays terminal). Each build's
 * compiled file lives in a temp dir only while it is imported, so nothing is
 * left on disk; `dispose()` drops the loaded module.
 */
export function createModuleReconciler(options: ModuleReconcilerOptions): Reconciler & Disposable & { reload(): Promise<void>; controllerConfig(): Promise<ModuleControllerConfig> } {
  const path = isAbsolute(options.path) ? options.path : resolve(options.path);
  const log = options.log ?? nullLogger;
  let loaded: Loaded | undefined;
  let loading: Promise<Loaded> | undefined;
  let generation = 0;

  function signatureOf(files: string[]): string {
    return files
      .map((f) => {
        try {
          const st = statSync(f);
          return `${f}:${st.mtimeMs}:${st.size}`;
        } catch {
          return `${f}:missing`;
        }
      })
      .join('|');
  }

  async function build(): Promise<Loaded> {
    try {
      statSync(path);
    } catch {
      throw new ModuleReconcilerError('not-found', moduleNotFoundMessage(path));
    }
    const ext = extname(path);
    const badName = moduleExtensionProblem(path);
    if (badName) throw new ModuleReconcilerError('compile', badName);
    const esbuild = await (options.findEsbuild ?? loadEsbuild)(path);
    if (!esbuild) {
      const typescript = ext === '.ts' || ext === '.mts' || ext === '.cts';
      // Node 22.18+ strips types itself (erasable syntax only; relative imports spell out .ts): import the file as is.
      if (typescript && !(options.nodeStripsTypes ?? Boolean((process.features as { typescript?: unknown }).typescript))) {
        throw new ModuleReconcilerError('compile', `cannot compile ${path}: esbuild was found neither beside Reconcile Lab nor in the module's workspace, and this Node (${process.version}) does not strip TypeScript types. Run npm i -D esbuild in the module's folder, or write the reconciler in JavaScript`);
      }
      const signature = signatureOf([path]);
      const url = `${pathToFileURL(path).href}?v=${encodeURIComponent(signature)}`;
      const frames: FrameMapper = (u, line, column) => (u === url ? { file: path, line, column } : undefined);
      const mod = await importModule(url, frames, { typescript });
      return { signature, inputs: [path], fn: exportOf(mod), exports: mod, frames };
    }
    let result: Awaited<ReturnType<EsbuildLike['build']>>;
    const absWorkingDir = dirname(path);
    try {
      result = await esbuild.build({
        entryPoints: [path],
        absWorkingDir,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node22',
        write: false,
        metafile: true,
        sourcemap: 'inline',
        logLevel: 'silent',
        // Bundled CommonJS dependencies may call require(); give them one rooted at the user's module.
        banner: { js: `import { createRequire as __rlCreateRequire } from 'node:module'; const require = __rlCreateRequire(${JSON.stringify(path)});` },
      });
    } catch (e) {
      const errors = (e as { errors?: EsbuildMessage[] }).errors;
      throw new ModuleReconcilerError('compile', `cannot compile ${path}:\n${errors?.length ? formatCompileErrors(errors) : (e as Error).message}`, { cause: e });
    }
    const inputs = Object.keys(result.metafile?.inputs ?? {}).map((f) => resolve(absWorkingDir, f));
    const signature = signatureOf(inputs.length ? inputs : [path]);
    const code = result.outputFiles?.[0]?.text ?? '';
    // Node's loader needs a file: write it to a private temp dir, import it, and remove the dir at once
    // (the loaded module lives in memory), so nothing is left behind whatever happens next.
    const dir = mkdtempSync(join(tmpdir(), 'reconcile-lab-module-'));
    const hash = createHash('sha256').update(code).digest('hex').slice(0, 12);
    const out = join(dir, `reconciler-${hash}-${++generation}.mjs`);
    try {
      writeFileSync(out, code);
      const url = pathToFileURL(out).href;
      const frames = sourceMapFrames(url, code, absWorkingDir);
      const mod = await importModule(url, frames);
      return { signature, inputs: inputs.length ? inputs : [path], fn: exportOf(mod), exports: mod, frames };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /**
   * Imports `url`; a failure is a {@link ModuleReconcilerError}. `direct`: the user's file itself is imported (no
   * esbuild), with Node's type stripping when `typescript`: a syntax error is then reported as esbuild's are
   * (`compile`, `file:line:column: message` and the source line, see {@link directSyntaxError}), with the hint
   * about esbuild only when type stripping refused TypeScript that esbuild compiles.
   */
  async function importModule(url: string, frames: FrameMapper, direct?: { typescript: boolean }): Promise<Record<string, unknown>> {
    try {
      return (await import(url)) as Record<string, unknown>;
    } catch (e) {
      // The stack of the temporary bundle (deleted by now) and of Reconcile Lab says nothing: name the user's lines.
      const at = userFrames((e as Error | undefined)?.stack, frames);
      const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      const code = (e as { code?: unknown } | undefined)?.code;
      // A syntax error while compiling the file (none of its code ran, so no frame of it): a compile error.
      const syntax = direct && e instanceof Error && e.name === 'SyntaxError' && at.length === 0 ? directSyntaxError(e) : undefined;
      // Node's own type stripping refuses what esbuild compiles (an enum, a namespace, parameter properties, a
      // relative import without its .ts; decorators, which it passes on to V8): say what would compile it. Not for
      // a plain syntax error, which esbuild rejects too.
      const unsupported = code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX' // Node 22.10+
        || (code === 'ERR_INVALID_TYPESCRIPT_SYNTAX' && /not supported in (?:strip-only|type strip) mode/i.test(e instanceof Error ? e.message : '')) // before it
        || code === 'ERR_MODULE_NOT_FOUND'
        || (code === undefined && syntax?.typescript === true); // V8 refused what type stripping accepted
      const hint = direct?.typescript && unsupported
        ? '\n(loaded with Node\'s own TypeScript type stripping, as no esbuild was found: it takes erasable syntax only — no enum, namespace or parameter properties — and relative imports written with their .ts extension; npm i -D esbuild in the module\'s folder compiles the rest)'
        : '';
      if (syntax) throw new ModuleReconcilerError('compile', `cannot compile ${path}:\n${formatCompileErrors([syntax.message])}${hint}`, { cause: e });
      throw new ModuleReconcilerError('load', `loading ${path} failed: ${what}${at.map((l) => `\n    ${l}`).join('')}${hint}`, { cause: e });
    }
  }

  /**
   * A syntax error of a file Node compiled itself, as an esbuild message: located where Node printed the location
   * above the stack (a TypeScript file, a CommonJS one), in swc's message (an older Node), or else — an ES module,
   * whose location V8 keeps to itself — by {@link locateModuleSyntaxError} in the entry file; the file relative to
   * the module's folder. Unlocated: the message alone. `typescript`: the error is in a TypeScript file.
   */
  function directSyntaxError(e: Error): { message: EsbuildMessage; typescript: boolean } {
    const swc = swcMessageAt(e.message);
    let text = swc?.text ?? e.message;
    let at = syntaxErrorAt(e.stack) ?? swc?.at;
    let file = path;
    if (at?.where) {
      const where = at.where.replace(/\?[^/\\]*$/, '');
      try {
        file = where.startsWith('file:') ? fileURLToPath(where) : resolve(where);
      } catch {
        file = path;
      }
    } else if (!at && /^\.[cm]?js$/.test(extname(path))) {
      try {
        at = locateModuleSyntaxError(readFileSync(path, 'utf8'), path, e.message);
      } catch {
        at = undefined; // unreadable now: the message alone
      }
    }
    if (!at) text = `${e.name}: ${text}`;
    const name = relative(dirname(path), file) || basename(file);
    const location = at ? { file: name, line: at.line, ...(at.column !== undefined ? { column: at.column } : {}), ...(at.lineText !== undefined ? { lineText: at.lineText } : {}) } : null;
    return { message: { text, location }, typescript: /^\.[cm]?ts$/.test(extname(file)) };
  }

  function exportOf(mod: Record<string, unknown>): ReconcileFunction {
    const def = mod.default as { reconcile?: unknown } | ((...a: unknown[]) => unknown) | undefined;
    // A default object's method is called on that object: `export default new MyReconciler()` (a class whose
    // reconcile uses this.client, this.log) works as written.
    const method = typeof def === 'object' && def !== null && typeof def.reconcile === 'function' ? (def.reconcile as (...a: unknown[]) => unknown).bind(def) : undefined;
    const fn = mod.reconcile ?? (typeof def === 'function' ? def : method ?? def?.reconcile);
    if (typeof fn !== 'function') {
      // What it exports instead, when one is close to "reconcile" (a typo such as reconcilee, or Go's Reconcile), named
      // as the user wrote it: a key of a default-exported object (export default { Reconcile }) and of a CommonJS
      // module.exports (which the import sees as the default export) is Reconcile, not default.Reconcile; the
      // import's own names for the CommonJS object (default, and Node's "module.exports") are no export of the user's.
      const names = [...new Set([...Object.keys(mod), ...(def && typeof def === 'object' ? Object.keys(def) : [])])]
        .filter((n) => n !== 'default' && n !== 'module.exports');
      const close = closestNames('reconcile', names);
      const a = (v: unknown) => `${/^[aeiou]/.test(typeof v) ? 'an' : 'a'} ${typeof v}`;
      const hasReconcile = (v: unknown) => typeof (v as { reconcile?: unknown } | null)?.reconcile === 'function';
      // A key of the default-exported object (a CommonJS module.exports) that holds the method one level down
      // (module.exports = { reconciler: { reconcile } }): named as the user wrote it, the fix in the module's own syntax.
      const nested = def && typeof def === 'object' ? Object.keys(def).find((k) => hasReconcile((def as Record<string, unknown>)[k])) : undefined;
      // A named export that is an object with a reconcile method (export const reconciler = { reconcile() {…} }).
      const holder = Object.keys(mod).find((k) => k !== 'default' && k !== 'module.exports' && hasReconcile(mod[k]));
      const found = mod.reconcile !== undefined
        ? ` (its reconcile export is ${a(mod.reconcile)}, not a function)`
        : nested
          ? ` (it exports ${nested}.reconcile, one level down: export reconcile itself, ${commonJs(mod) ? `module.exports = { reconcile }, or make the object under ${nested} module.exports itself` : `export const reconcile = …, or make the object under ${nested} the default export`})`
        : holder
          ? ` (it exports ${holder}, an object with a reconcile method: make it the default export, export default ${holder}, or export the method, export const reconcile = ${holder}.reconcile.bind(${holder}))`
        : close.length
          ? ` (it exports ${close[0]}: did you mean reconcile?)`
          : def !== undefined && typeof def !== 'object'
            ? ` (its default export is ${a(def)}, not a function)`
            : '';
      throw new ModuleReconcilerError('export', `${path} must export a function "reconcile(request, ctx)" (named export, default export, or default { reconcile })${found}`);
    }
    return fn as ReconcileFunction;
  }

  /**
   * Whether the user's module is CommonJS (advice is then in module.exports terms): Node's import of it shows the
   * "module.exports" name (a file imported as is), its extension says so, or its source assigns module.exports (a
   * bundled one, whose import shows only its default).
   */
  function commonJs(mod: Record<string, unknown>): boolean {
    if ('module.exports' in mod || /^\.c[jt]s$/.test(extname(path))) return true;
    try {
      return /\bmodule\.exports\s*=/.test(readFileSync(path, 'utf8'));
    } catch {
      return false; // unreadable now: the ES module's terms
    }
  }

  async function current(): Promise<Loaded> {
    if (loading) return loading;
    if (loaded && signatureOf(loaded.inputs) === loaded.signature) return loaded;
    const reloading = !!loaded;
    loading = build();
    try {
      loaded = await loading;
      log.info(reloading ? 'reconciler module changed; reloaded' : 'reconciler module loaded', { path });
      return loaded;
    } finally {
      loading = undefined;
    }
  }

  async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
    const { fn, frames } = await current();
    // No deadline of its own: the controller's reconcile timeout (off by default) aborts ctx.signal, and the
    // call is awaited until it settles, so a key is never reconciled twice at once.
    let r: Result | void;
    try {
      r = await fn(request, ctx);
    } catch (e) {
      // A TypeError and its kin are bugs in the module: say where (its own file:line, not the temporary bundle's).
      // Errors it throws on purpose (and API errors from ctx.client) propagate unchanged.
      if (e instanceof Error && RUNTIME_ERRORS.has(e.name)) {
        const at = userFrames(e.stack, frames);
        if (at.length) throw new ModuleReconcilerError('throw', `${e.name}: ${e.message}${at.map((l) => `\n    ${l}`).join('')}`, { cause: e });
      }
      // A thrown string or object has no message or stack the views could show: say what it was, and what to throw.
      // Its `terminal` is still read through the cause; its `priority` (read from the error itself) is kept here.
      if (!isErrorValue(e)) {
        const wrapped = new ModuleReconcilerError('throw', nonErrorThrowMessage(e), { cause: e });
        const priority = typeof e === 'object' && e !== null ? (e as { priority?: unknown }).priority : undefined;
        throw priority === undefined ? wrapped : Object.assign(wrapped, { priority });
      }
      throw e;
    }
    if (r === undefined || r === null) return {};
    if (typeof r !== 'object') throw new ModuleReconcilerError('result', `${path}: ${nonObjectResultProblem(r)}`);
    const problem = resultProblem(r as Record<string, unknown>);
    if (problem) throw new ModuleReconcilerError('result', `${path}: ${problem}`);
    return r as Result;
  }

  /** Reads and validates the `predicates`, `options`, `checkTransitions` and `indexes` exports (named, or on a default object export). */
  async function controllerConfig(): Promise<ModuleControllerConfig> {
    const { exports: mod } = await current();
    const def = mod.default && typeof mod.default === 'object' ? (mod.default as Record<string, unknown>) : {};
    let predicates: Predicate[];
    let indexes: ModuleIndex[];
    try {
      predicates = predicatesFromExport(mod.predicates ?? def.predicates, path);
      indexes = moduleIndexesFromExport(mod.indexes ?? def.indexes, path);
    } catch (e) {
      throw new ModuleReconcilerError('config', (e as Error).message, { cause: e });
    }
    const transitions = mod.checkTransitions ?? def.checkTransitions;
    if (transitions !== undefined && (!Array.isArray(transitions) || transitions.some((t) => !t || typeof t !== 'object' || Array.isArray(t)))) {
      throw new ModuleReconcilerError('config', `${path}: "checkTransitions" must be an array of JSON merge patches (objects)`);
    }
    const extra = { indexes, ...(transitions !== undefined ? { checkTransitions: transitions as unknown[] } : {}) };
    const raw = mod.options ?? def.options;
    if (raw === undefined) return { predicates, options: {}, ...extra };
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ModuleReconcilerError('config', `${path}: "options" must be an object`);
    const o = raw as Record<string, unknown>;
    const bad = (field: string, want: string) => new ModuleReconcilerError('config', `${path}: options.${field} must be ${want} (got ${JSON.stringify(o[field])})`);
    const out: ModuleControllerOptions = {};
    for (const k of Object.keys(o)) {
      if (k !== 'maxConcurrentReconciles' && k !== 'reconcileTimeoutMs' && k !== 'workQueue') throw new ModuleReconcilerError('config', `${path}: unknown option "${k}" (options: maxConcurrentReconciles, reconcileTimeoutMs, workQueue)`);
    }
    if (o.maxConcurrentReconciles !== undefined) {
      if (!Number.isInteger(o.maxConcurrentReconciles) || (o.maxConcurrentReconciles as number) < 1 || (o.maxConcurrentReconciles as number) > 64) throw bad('maxConcurrentReconciles', 'an integer from 1 to 64');
      out.maxConcurrentReconciles = o.maxConcurrentReconciles as number;
    }
    if (o.reconcileTimeoutMs !== undefined) {
      if (typeof o.reconcileTimeoutMs !== 'number' || !Number.isFinite(o.reconcileTimeoutMs) || o.reconcileTimeoutMs < 0) throw bad('reconcileTimeoutMs', 'a number >= 0 (0: none)');
      out.reconcileTimeoutMs = o.reconcileTimeoutMs;
    }
    if (o.workQueue !== undefined) {
      if (o.workQueue !== 'priority' && o.workQueue !== 'client-go') throw bad('workQueue', '"priority" or "client-go"');
      out.workQueue = o.workQueue;
    }
    return { predicates, options: out, ...extra };
  }

  // While loaded, errors that escape every reconcile in this process are taken as this module's (Reconcile Lab
  // awaits its own promises; options.claimStray narrows that where other code runs): the CLI and the editor say so,
  // with the module's frames when the stack has any, and keep running.
  const stray = claimStrayErrors((e) => {
    const message = e instanceof Error ? e.message : String(e);
    const frames = loaded ? userFrames(e instanceof Error ? e.stack : undefined, loaded.frames) : [];
    if (options.claimStray && !options.claimStray(e, frames.length > 0)) return undefined;
    return `an error escaped every reconcile of the reconciler module ${path} (a promise it did not await, or a timer or event callback that threw), so no reconcile reports it: ${message}${frames.length ? `\n  ${frames.join('\n  ')}` : ''}\nAwait every promise (await ctx.client.get(…)) and catch errors inside callbacks, so that an error fails the reconcile that made it.`;
  });
  return {
    name: `module:${path}`,
    reconcile,
    controllerConfig,
    async reload() {
      loaded = undefined;
      await current();
    },
    dispose() {
      loaded = undefined;
      stray.dispose();
    },
  };
}
