import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Disposable } from '../lifecycle.ts';
import type { Logger } from '../log.ts';
import { nullLogger } from '../log.ts';
import type { ReconcileContext, Reconciler, Request, Result } from '../controller/reconcile.ts';
import type { Predicate } from '../controller/predicate.ts';
import { predicatesFromExport } from '../controller/predicateSpec.ts';
import type { WorkQueueKind } from '../workqueue/priorityQueue.ts';

/** The shape a user module exports: `export async function reconcile(request, ctx)` (or a default export of it). */
export type ReconcileFunction = (request: Request, ctx: ReconcileContext) => Promise<Result | void> | Result | void;

export type ModuleFailureKind = 'not-found' | 'compile' | 'load' | 'export' | 'result';

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
}

interface Loaded {
  signature: string;
  inputs: string[];
  fn: ReconcileFunction;
  exports: Record<string, unknown>;
}

/** The part of an esbuild message (`BuildFailure.errors[i]`) the compile error uses. */
export interface EsbuildMessage {
  text: string;
  location?: { file: string; line: number; column: number; lineText?: string } | null;
}

interface EsbuildLike {
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
 * Without esbuild installed, plain .js/.mjs files are imported directly (cache-busted
 * by mtime) and TypeScript is rejected with a clear error.
 *
 * Every problem (missing file, compile error with file:line:column, a throw
 * while evaluating the module, a missing export, an invalid result) is thrown
 * as a {@link ModuleReconcilerError}; nothing crashes the host. Each build's
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
    const esbuild = await loadEsbuild(path);
    const ext = extname(path);
    if (!esbuild) {
      if (ext === '.ts' || ext === '.mts' || ext === '.cts') {
        throw new ModuleReconcilerError('compile', `cannot compile ${path}: esbuild was found neither beside Reconcile Lab nor in the module's workspace (run npm i -D esbuild there), or write the reconciler in JavaScript`);
      }
      const signature = signatureOf([path]);
      const mod = await importModule(`${pathToFileURL(path).href}?v=${encodeURIComponent(signature)}`);
      return { signature, inputs: [path], fn: exportOf(mod), exports: mod };
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
      const mod = await importModule(pathToFileURL(out).href);
      return { signature, inputs: inputs.length ? inputs : [path], fn: exportOf(mod), exports: mod };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  async function importModule(url: string): Promise<Record<string, unknown>> {
    try {
      return (await import(url)) as Record<string, unknown>;
    } catch (e) {
      throw new ModuleReconcilerError('load', `loading ${path} failed: ${(e as Error)?.stack ?? String(e)}`, { cause: e });
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
    const { fn } = await current();
    // No deadline of its own: the controller's reconcile timeout (off by default) aborts ctx.signal, and the
    // call is awaited until it settles, so a key is never reconciled twice at once.
    const r = await fn(request, ctx);
    if (r === undefined || r === null) return {};
    if (typeof r !== 'object') throw new ModuleReconcilerError('result', `${path}: reconcile() must resolve to a Result object or undefined (got ${typeof r})`);
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
