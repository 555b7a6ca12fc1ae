import { createRequire, SourceMap } from 'node:module';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Disposable } from '../lifecycle.ts';
import type { Logger } from '../log.ts';
import { nullLogger } from '../log.ts';
import type { ReconcileContext, Reconciler, Request, Result } from '../controller/reconcile.ts';
import type { Predicate } from '../controller/predicate.ts';
import { predicatesFromExport } from '../controller/predicateSpec.ts';
import type { WorkQueueKind } from '../workqueue/priorityQueue.ts';
import { unknownFieldsMessage } from '../text/closest.ts';

/** The shape a user module exports: `export async function reconcile(request, ctx)` (or a default export of it). */
export type ReconcileFunction = (request: Request, ctx: ReconcileContext) => Promise<Result | void> | Result | void;

/** `throw`: a JavaScript runtime error (TypeError, ReferenceError, …) thrown by the module's code while reconciling. */
export type ModuleFailureKind = 'not-found' | 'compile' | 'load' | 'export' | 'result' | 'throw';

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

export interface ModuleReconcilerOptions {
  /** The user's .ts/.mts/.js/.mjs file. */
  path: string;
  log?: Logger;
  /** Finds esbuild (default: beside Reconcile Lab, else in the module's workspace); tests pass one that finds none. */
  findEsbuild?: (modulePath: string) => Promise<EsbuildLike | undefined>;
  /** Whether this Node strips TypeScript types itself (default: `process.features.typescript`); for tests. */
  nodeStripsTypes?: boolean;
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

/** The part of an esbuild message (`BuildFailure.errors[i]`) the compile error uses. */
export interface EsbuildMessage {
  text: string;
  location?: { file: string; line: number; column: number; lineText?: string } | null;
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
 * diagnostic, `file:line:column: message` (file relative to the module's folder), followed by the offending source
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
    lines.push(`${loc.file}:${loc.line}:${loc.column}: ${oneLine(m.text)}`);
    if (loc.lineText?.trim()) lines.push(`    ${loc.line} | ${oneLine(loc.lineText)}`);
  }
  if (errors.length > MAX_DIAGNOSTICS) lines.push(`… and ${errors.length - MAX_DIAGNOSTICS} more error(s)`);
  return lines.join('\n');
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
 * (kind `throw` for the latter, the original error as `cause`); any other
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
      throw new ModuleReconcilerError('not-found', `reconciler module not found: ${path}`);
    }
    const esbuild = await (options.findEsbuild ?? loadEsbuild)(path);
    const ext = extname(path);
    if (!esbuild) {
      const typescript = ext === '.ts' || ext === '.mts' || ext === '.cts';
      // Node 22.18+ strips types itself (erasable syntax only; relative imports spell out .ts): import the file as is.
      if (typescript && !(options.nodeStripsTypes ?? Boolean((process.features as { typescript?: unknown }).typescript))) {
        throw new ModuleReconcilerError('compile', `cannot compile ${path}: esbuild was found neither beside Reconcile Lab nor in the module's workspace, and this Node (${process.version}) does not strip TypeScript types. Run npm i -D esbuild in the module's folder, or write the reconciler in JavaScript`);
      }
      const signature = signatureOf([path]);
      const url = `${pathToFileURL(path).href}?v=${encodeURIComponent(signature)}`;
      const frames: FrameMapper = (u, line, column) => (u === url ? { file: path, line, column } : undefined);
      const mod = await importModule(url, frames, typescript);
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

  async function importModule(url: string, frames: FrameMapper, strippedByNode = false): Promise<Record<string, unknown>> {
    try {
      return (await import(url)) as Record<string, unknown>;
    } catch (e) {
      // The stack of the temporary bundle (deleted by now) and of Reconcile Lab says nothing: name the user's lines.
      const at = userFrames((e as Error | undefined)?.stack, frames);
      const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      // Node's own type stripping refuses what esbuild compiles (an enum, a namespace, parameter properties, a
      // relative import without its .ts): say what would compile it.
      const code = (e as { code?: unknown } | undefined)?.code;
      const hint = strippedByNode && (code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX' || code === 'ERR_INVALID_TYPESCRIPT_SYNTAX' || code === 'ERR_MODULE_NOT_FOUND')
        ? '\n(loaded with Node\'s own TypeScript type stripping, as no esbuild was found: it takes erasable syntax only — no enum, namespace or parameter properties — and relative imports written with their .ts extension; npm i -D esbuild in the module\'s folder compiles the rest)'
        : '';
      throw new ModuleReconcilerError('load', `loading ${path} failed: ${what}${at.map((l) => `\n    ${l}`).join('')}${hint}`, { cause: e });
    }
  }

  function exportOf(mod: Record<string, unknown>): ReconcileFunction {
    const def = mod.default as { reconcile?: unknown } | ((...a: unknown[]) => unknown) | undefined;
    const fn = mod.reconcile ?? (typeof def === 'function' ? def : def?.reconcile);
    if (typeof fn !== 'function') {
      throw new ModuleReconcilerError('export', `${path} must export a function "reconcile(request, ctx)" (named export, default export, or default { reconcile })`);
    }
    return fn as ReconcileFunction;
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
      throw e;
    }
    if (r === undefined || r === null) return {};
    if (typeof r !== 'object') throw new ModuleReconcilerError('result', `${path}: reconcile() must resolve to a Result object or undefined (got ${typeof r})`);
    // A misspelt field ("requeueAfter", Go's "RequeueAfter") would be dropped silently, and with it the requeue.
    const unknown = unknownFieldsMessage(Object.keys(r), RESULT_FIELDS, 'a Result has');
    if (unknown) throw new ModuleReconcilerError('result', `${path}: reconcile() returned a Result with ${unknown}`);
    const ms = (r as Result).requeueAfterMs;
    if (ms !== undefined && (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)) {
      throw new ModuleReconcilerError('result', `${path}: requeueAfterMs must be a number >= 0 (got ${JSON.stringify(ms)})`);
    }
    return r as Result;
  }

  /** Reads and validates the `predicates` and `options` exports (named, or on a default object export). */
  async function controllerConfig(): Promise<ModuleControllerConfig> {
    const { exports: mod } = await current();
    const def = mod.default && typeof mod.default === 'object' ? (mod.default as Record<string, unknown>) : {};
    let predicates: Predicate[];
    try {
      predicates = predicatesFromExport(mod.predicates ?? def.predicates, path);
    } catch (e) {
      throw new ModuleReconcilerError('export', (e as Error).message, { cause: e });
    }
    const transitions = mod.checkTransitions ?? def.checkTransitions;
    if (transitions !== undefined && (!Array.isArray(transitions) || transitions.some((t) => !t || typeof t !== 'object' || Array.isArray(t)))) {
      throw new ModuleReconcilerError('export', `${path}: "checkTransitions" must be an array of JSON merge patches (objects)`);
    }
    const extra = transitions !== undefined ? { checkTransitions: transitions as unknown[] } : {};
    const raw = mod.options ?? def.options;
    if (raw === undefined) return { predicates, options: {}, ...extra };
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ModuleReconcilerError('export', `${path}: "options" must be an object`);
    const o = raw as Record<string, unknown>;
    const bad = (field: string, want: string) => new ModuleReconcilerError('export', `${path}: options.${field} must be ${want} (got ${JSON.stringify(o[field])})`);
    const out: ModuleControllerOptions = {};
    for (const k of Object.keys(o)) {
      if (k !== 'maxConcurrentReconciles' && k !== 'reconcileTimeoutMs' && k !== 'workQueue') throw new ModuleReconcilerError('export', `${path}: unknown option "${k}" (options: maxConcurrentReconciles, reconcileTimeoutMs, workQueue)`);
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
    },
  };
}
