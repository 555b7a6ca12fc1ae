import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createModuleReconciler, formatCompileErrors, locateModuleSyntaxError, moduleExtensionProblem, moduleNotFoundMessage, ModuleReconcilerError, resultProblem, swcMessageAt, syntaxErrorAt, userFrames } from '../../../src/core/reconcilers/moduleReconciler.ts';
import { isTerminal } from '../../../src/core/controller/reconcile.ts';
import { statusOnlyClient, testContext, until, widget } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'rl-module-test-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));
const req = { key: 'ns1/w1', namespace: 'ns1', name: 'w1' };
let tick = 1_700_000_000;

/** Writes a file with a strictly newer mtime than any previous write (mtime is the reload signal). */
function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  tick += 10;
  utimesSync(p, tick, tick);
  return p;
}

test('a TypeScript module is compiled and called with the request and context', async () => {
  const p = write('ts-basic.ts', `
    import type { Request } from './types.ts';
    import { delay } from './helper.ts';
    interface Ctx { dryRun: boolean; log: { info(m: string): void } }
    export async function reconcile(req: Request, ctx: Ctx): Promise<{ requeueAfterMs?: number; reason?: string }> {
      ctx.log.info('hello ' + req.key);
      return { requeueAfterMs: delay, reason: ctx.dryRun ? 'dry' : 'live' };
    }`);
  write('types.ts', 'export interface Request { key: string }\n');
  write('helper.ts', 'export const delay: number = 1234;\n');
  const r = createModuleReconciler({ path: p });
  const { ctx, logs } = testContext(statusOnlyClient([]), { objects: [widget('w1')], dryRun: true });
  assert.deepEqual(await r.reconcile(req, ctx), { requeueAfterMs: 1234, reason: 'dry' });
  assert.ok(logs.some((l) => l.msg === 'hello ns1/w1'));
  r.dispose();
});

test('an edited module, or an edited import, is reloaded fresh; an unchanged one is reused', async () => {
  const helper = write('dep.ts', 'export const n = 1;\n');
  const p = write('reload.ts', `import { n } from './dep.ts'; let calls = 0; export function reconcile() { calls++; return { requeueAfterMs: n * 1000 + calls }; }`);
  const r = createModuleReconciler({ path: p });
  const { ctx } = testContext(statusOnlyClient([]));
  assert.deepEqual(await r.reconcile(req, ctx), { requeueAfterMs: 1001 });
  assert.deepEqual(await r.reconcile(req, ctx), { requeueAfterMs: 1002 }, 'same module instance: state kept');
  write('reload.ts', `import { n } from './dep.ts'; export function reconcile() { return { requeueAfterMs: n * 2000 }; }`);
  assert.deepEqual(await r.reconcile(req, ctx), { requeueAfterMs: 2000 }, 'main file changed');
  write('dep.ts', 'export const n = 5;\n');
  assert.deepEqual(await r.reconcile(req, ctx), { requeueAfterMs: 10000 }, 'imported file changed');
  assert.ok(helper);
  r.dispose();
});

test('JavaScript modules work too, including a default export', async () => {
  const p = write('plain.mjs', 'export default { reconcile: async (req) => ({ requeueAfterMs: req.name.length }) };\n');
  const r = createModuleReconciler({ path: p });
  assert.deepEqual(await r.reconcile(req, testContext(statusOnlyClient([])).ctx), { requeueAfterMs: 2 });
  r.dispose();
});

test('a default-exported object (a class instance) has its reconcile called on itself: this works as written', async () => {
  const ts = write('instance.ts', 'class Shop { step = 7; reconcile(req: { name: string }) { return { requeueAfterMs: this.step * req.name.length }; } }\nexport default new Shop();\n');
  const cjs = write('instance.cjs', 'class Shop { constructor() { this.step = 3; } reconcile(req) { return { requeueAfterMs: this.step * req.name.length }; } }\nmodule.exports = new Shop();\n');
  for (const [p, want] of [[ts, 14], [cjs, 6]] as const) {
    const r = createModuleReconciler({ path: p });
    assert.deepEqual(await r.reconcile(req, testContext(statusOnlyClient([])).ctx), { requeueAfterMs: want }, p);
    r.dispose();
  }
});

test('compile errors name the file, line and column; a fix is picked up', async () => {
  const p = write('broken.ts', 'export function reconcile( {\n  return {};\n}\n');
  const r = createModuleReconciler({ path: p });
  const { ctx } = testContext(statusOnlyClient([]));
  await assert.rejects(r.reconcile(req, ctx), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'compile' && /broken\.ts:\d+:\d+/.test(e.message));
  write('broken.ts', 'export function reconcile() { return {}; }\n');
  assert.deepEqual(await r.reconcile(req, ctx), {});
  r.dispose();
});

test('compile errors are readable lines: one per diagnostic (file:line:column: message) with its source line under it', async () => {
  // Three imports that do not resolve: esbuild reports each of them.
  const p = write('unresolved.ts', "import { a } from './no-a.ts';\nimport { b } from './no-b.ts';\nimport { c } from './no-c.ts';\nexport function reconcile() { return { requeueAfterMs: a + b + c }; }\n");
  const r = createModuleReconciler({ path: p });
  const err = await r.reconcile(req, testContext(statusOnlyClient([])).ctx).then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof ModuleReconcilerError && err.kind === 'compile', String(err));
  const lines = err.message.split('\n');
  assert.doesNotMatch(err.message, /\\n/);
  assert.equal(lines[0], `cannot compile ${p}:`);
  const diagnostics = lines.filter((l) => /^unresolved\.ts:\d+:\d+: /.test(l));
  assert.deepEqual(diagnostics.map((l) => l.split(':')[1]), ['1', '2', '3'], err.message);
  assert.ok(diagnostics.every((l) => /no-[abc]\.ts/.test(l)), err.message);
  assert.ok(lines.includes("    2 | import { b } from './no-b.ts';"), err.message);
  r.dispose();
});

test('formatCompileErrors: at most five diagnostics then a count; a line break inside a message is folded; no location is the text alone; columns count from 1 (esbuild\'s from 0)', () => {
  const at = (line: number) => ({ text: `bad\nthing ${line}`, location: { file: 'm.ts', line, column: 4, lineText: `  let x${line} = ;` } });
  const text = formatCompileErrors([1, 2, 3, 4, 5, 6, 7].map(at));
  const lines = text.split('\n');
  assert.equal(lines[0], 'm.ts:1:5: bad thing 1');
  assert.equal(lines[1], '    1 | let x1 = ;');
  assert.equal(lines.filter((l) => l.startsWith('m.ts:')).length, 5);
  assert.equal(lines.at(-1), '… and 2 more error(s)');
  assert.equal(formatCompileErrors([{ text: 'Could not resolve "x"', location: null }]), 'Could not resolve "x"');
  assert.equal(formatCompileErrors([{ text: 'oops', location: { file: 'm.ts', line: 3, column: 0, lineText: '' } }]), 'm.ts:3:1: oops');
  assert.equal(formatCompileErrors([{ text: 'oops', location: { file: 'm.ts', line: 3, lineText: 'x(' } }]), 'm.ts:3: oops\n    3 | x(');
});

test('a module file that does not exist: the error names the module file beside it that a typo meant (the CLI and the editor both say it)', async () => {
  const typoDir = mkdtempSync(join(tmpdir(), 'rl-module-typo-'));
  try {
    writeFileSync(join(typoDir, 'oven-reconciler.ts'), 'export function reconcile() { return {}; }\n');
    writeFileSync(join(typoDir, 'oven-reconciler.md'), 'not a module\n');
    const m = createModuleReconciler({ path: join(typoDir, 'oven-reconciller.ts') });
    await assert.rejects(m.controllerConfig(), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'not-found' && e.message === `reconciler module not found: ${join(typoDir, 'oven-reconciller.ts')} (did you mean oven-reconciler.ts?)`);
    m.dispose();
    // Nothing close (and a folder that does not exist): no suggestion.
    assert.equal(moduleNotFoundMessage(join(typoDir, 'planter.ts')), `reconciler module not found: ${join(typoDir, 'planter.ts')}`);
    assert.equal(moduleNotFoundMessage(join(typoDir, 'no-dir', 'x.ts')), `reconciler module not found: ${join(typoDir, 'no-dir', 'x.ts')}`);
  } finally {
    rmSync(typoDir, { recursive: true, force: true });
  }
});

test('missing file, missing export, a throw at load time and an invalid result are clear errors', async () => {
  const { ctx } = testContext(statusOnlyClient([]));
  const missing = createModuleReconciler({ path: join(dir, 'nope.ts') });
  await assert.rejects(missing.reconcile(req, ctx), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'not-found');
  const noExport = createModuleReconciler({ path: write('noexport.ts', 'export const x = 1;\n') });
  await assert.rejects(noExport.reconcile(req, ctx), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'export' && /must export a function "reconcile\(request, ctx\)" \(named export, default export, or default \{ reconcile \}\)$/.test(e.message));
  // What it exports instead is named when it is close to reconcile, or not a function.
  for (const [file, code, said] of [
    ['typo.ts', 'export async function reconcilee() { return {}; }\n', '(it exports reconcilee: did you mean reconcile?)'],
    // Go's capital, named as written: no default. of the import's namespace, for ESM and CommonJS alike.
    ['capital.ts', 'export default { Reconcile() { return {}; } };\n', '(it exports Reconcile: did you mean reconcile?)'],
    ['capital.cjs', 'module.exports = { Reconcile() { return {}; } };\n', '(it exports Reconcile: did you mean reconcile?)'],
    ['capital-exports.js', 'exports.Reconcile = async () => ({});\n', '(it exports Reconcile: did you mean reconcile?)'],
    ['capital.cts', 'module.exports = { Reconciler: () => ({}) };\n', '(it exports Reconciler: did you mean reconcile?)'],
    ['notfn.ts', 'export const reconcile = { run() {} };\n', '(its reconcile export is an object, not a function)'],
    ['number.ts', 'export default 42;\n', '(its default export is a number, not a function)'],
    ['holder.ts', 'export const reconciler = { async reconcile() { return {}; } };\n', '(it exports reconciler, an object with a reconcile method: make it the default export, export default reconciler, or export the method, export const reconcile = reconciler.reconcile.bind(reconciler))'],
    // The method one level down in module.exports (or a default object): where it is, and the fix in the file's own
    // syntax (it was "it exports reconciler: did you mean reconcile?", and a .cjs file was told export default).
    ['nested.cjs', 'async function reconcile() { return {}; }\nmodule.exports = { reconciler: { reconcile } };\n', '(it exports reconciler.reconcile, one level down: export reconcile itself, module.exports = { reconcile }, or make the object under reconciler module.exports itself)'],
    ['nested-var.js', 'const reconciler = { async reconcile() { return {}; } };\nmodule.exports = { reconciler };\n', '(it exports reconciler.reconcile, one level down: export reconcile itself, module.exports = { reconcile }, or make the object under reconciler module.exports itself)'],
    ['nested.ts', 'export default { reconciler: { async reconcile() { return {}; } } };\n', '(it exports reconciler.reconcile, one level down: export reconcile itself, export const reconcile = …, or make the object under reconciler the default export)'],
  ] as const) {
    await assert.rejects(createModuleReconciler({ path: write(file, code) }).reconcile(req, ctx), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'export' && e.message.endsWith(said) || assert.fail(`${file}: ${(e as Error).message}`));
  }
  // Imported as is (no esbuild): Node's import of the CommonJS file shows its own names too; the same advice.
  await assert.rejects(createModuleReconciler({ path: join(dir, 'nested.cjs'), findEsbuild: async () => undefined }).reconcile(req, ctx), (e: unknown) => e instanceof ModuleReconcilerError && e.message.endsWith('(it exports reconciler.reconcile, one level down: export reconcile itself, module.exports = { reconcile }, or make the object under reconciler module.exports itself)') || assert.fail((e as Error).message));
  const throwsOnLoad = createModuleReconciler({ path: write('throws.ts', 'throw new Error("bad top-level code");\nexport function reconcile() {}\n') });
  await assert.rejects(throwsOnLoad.reconcile(req, ctx), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'load' && /bad top-level code/.test(e.message));
  const badResult = createModuleReconciler({ path: write('badresult.ts', 'export function reconcile() { return { requeueAfterMs: "soon" }; }\n') });
  await assert.rejects(badResult.reconcile(req, ctx), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'result');
  // Go's RequeueAfter, or a missing "Ms": the requeue would be lost without a word.
  const misspelt = createModuleReconciler({ path: write('misspelt.ts', 'export function reconcile() { return { requeueAfter: 5000, reason: "waiting" }; }\n') });
  await assert.rejects(misspelt.reconcile(req, ctx), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'result' &&
    e.message.endsWith('misspelt.ts: reconcile() returned a Result with unknown field "requeueAfter" (did you mean "requeueAfterMs"?); a Result has requeueAfterMs, reason, priority, requeue'));
  // Every problem of a Result at once, each with its fix (a fix of one must not merely uncover the next).
  const twoWrong = createModuleReconciler({ path: write('twowrong.ts', 'export function reconcile() { return { requeue: "yes", requeueAfter: 5000 }; }\n') });
  await assert.rejects(twoWrong.reconcile(req, ctx), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'result' &&
    e.message === `${join(dir, 'twowrong.ts')}: reconcile() returned a Result with 2 problems: requeue must be a boolean (got "yes"); unknown field "requeueAfter" (did you mean "requeueAfterMs"?); a Result has requeueAfterMs, reason, priority, requeue`);
  assert.equal(resultProblem({ requeueAfterMs: -1, reason: 7, priority: 1.5 }), 'reconcile() returned a Result with 3 problems: requeueAfterMs must be a number >= 0 (got -1); reason must be a string (got 7); priority must be an integer (got 1.5)');
  assert.equal(resultProblem({ requeue: 1 }), 'requeue must be a boolean (got 1)');
  assert.equal(resultProblem({ requeueAfterMs: 'soon' }), 'requeueAfterMs must be a number >= 0 (got "soon")');
  assert.equal(resultProblem({ RequeueAfter: 5, Requeue: true }), 'reconcile() returned a Result with unknown fields "RequeueAfter" (did you mean "requeueAfterMs"?), "Requeue" (did you mean "requeue"?); a Result has requeueAfterMs, reason, priority, requeue');
  assert.equal(resultProblem({ requeueAfterMs: 0, reason: '', priority: -3, requeue: false }), undefined);
  // The loop keeps running: the next reconcile, of the fixed file, succeeds.
  write('twowrong.ts', 'export function reconcile() { return { requeue: true }; }\n');
  assert.deepEqual(await twoWrong.reconcile(req, ctx), { requeue: true });
  const allKnown = createModuleReconciler({ path: write('allknown.ts', 'export function reconcile() { return { requeueAfterMs: 5, reason: "r", priority: 1, requeue: false }; }\n') });
  assert.deepEqual(await allKnown.reconcile(req, ctx), { requeueAfterMs: 5, reason: 'r', priority: 1, requeue: false });
});

test('a result that is not an object names the Result that was probably meant (a delay, a requeue, a reason), and the loop picks up the fix', async () => {
  const { ctx } = testContext(statusOnlyClient([]));
  for (const [file, code, said] of [
    ['number.ts', 'export function reconcile() { return 15000; }\n', 'reconcile() must resolve to a Result object or undefined (got number 15000): to look again after 15000 ms, return { requeueAfterMs: 15000 }; when done, return {} or nothing'],
    ['true.ts', 'export function reconcile() { return true; }\n', 'reconcile() must resolve to a Result object or undefined (got boolean true): to be requeued, return { requeue: true } (or { requeueAfterMs: <ms> } to wait); when done, return {} or nothing'],
    ['false.ts', 'export function reconcile() { return false; }\n', 'reconcile() must resolve to a Result object or undefined (got boolean false): when done, return {} or nothing'],
    ['string.ts', 'export async function reconcile() { return "waiting for the payment secret"; }\n', 'reconcile() must resolve to a Result object or undefined (got string "waiting for the payment secret"): to wait with a reason, return { requeueAfterMs: <ms>, reason: "waiting for the payment secret" }; to fail, throw an Error; when done, return {} or nothing'],
    ['bigint.ts', 'export function reconcile() { return 5n; }\n', 'reconcile() must resolve to a Result object or undefined (got bigint)'],
  ] as const) {
    await assert.rejects(createModuleReconciler({ path: write(file, code) }).reconcile(req, ctx), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'result' && e.message === `${join(dir, file)}: ${said}` || assert.fail(`${file}: ${(e as Error).message}`));
  }
  const fixed = createModuleReconciler({ path: join(dir, 'number.ts') });
  await assert.rejects(fixed.reconcile(req, ctx), ModuleReconcilerError);
  write('number.ts', 'export function reconcile() { return { requeueAfterMs: 15000 }; }\n');
  assert.deepEqual(await fixed.reconcile(req, ctx), { requeueAfterMs: 15000 });
});

test('a TypeError in the module names its own file:line (through the source map), not the temporary bundle', async () => {
  const helper = write('frames-helper.ts', [
    'interface G { spec?: { beds?: { soil: string } } }',
    'export function soilOf(g: G): string {',
    '  return g.spec!.beds!.soil.toUpperCase();',
    '}',
    '',
  ].join('\n'));
  const p = write('frames.ts', [
    "import { soilOf } from './frames-helper.ts';",
    'type Ctx = { dryRun: boolean };',
    'export async function reconcile(_req: unknown, _ctx: Ctx) {',
    '  return { reason: soilOf({ spec: {} }) };',
    '}',
    '',
  ].join('\n'));
  const r = createModuleReconciler({ path: p });
  const err = await r.reconcile(req, testContext(statusOnlyClient([])).ctx).then(() => assert.fail('resolved'), (e: unknown) => e as ModuleReconcilerError);
  assert.ok(err instanceof ModuleReconcilerError && err.kind === 'throw', String(err));
  assert.ok(err.cause instanceof TypeError, 'the original error is the cause');
  const lines = err.message.split('\n');
  assert.match(lines[0]!, /^TypeError: Cannot read properties of undefined \(reading 'soil'\)$/);
  assert.equal(lines[1], `    at soilOf (${helper}:3:24)`);
  assert.equal(lines[2], `    at reconcile (${p}:4:20)`);
  assert.equal(lines.length, 3, 'no frame of Node or of Reconcile Lab: ' + err.message);
  assert.doesNotMatch(err.message, /reconcile-lab-module-|\.mjs|node:internal/);
  r.dispose();
});

test('a throw while loading names the line of the module that threw', async () => {
  const p = write('load-frames.ts', 'const x: number = 1;\nif (x) throw new RangeError("no beds");\nexport function reconcile() {}\n');
  const r = createModuleReconciler({ path: p });
  await assert.rejects(r.reconcile(req, testContext(statusOnlyClient([])).ctx), (e: unknown) =>
    e instanceof ModuleReconcilerError && e.kind === 'load' && e.message === `loading ${p} failed: RangeError: no beds\n    at ${p}:2:14`);
});

test('userFrames keeps only the frames the mapper claims, with function names, at most five', () => {
  const url = 'file:///tmp/reconcile-lab-module-x/reconciler-1.mjs';
  const stack = [
    'TypeError: x',
    `    at inner (${url}:10:5)`,
    '    at process.processTicksAndRejections (node:internal/process/task_queues:105:5)',
    `    at async outer (${url}:20:7)`,
    '    at async Object.reconcile (/opt/reconcile-lab/dist/cli.js:100:20)',
    `    at ${url}:1:1`,
    ...Array.from({ length: 6 }, (_, i) => `    at f${i} (${url}:${30 + i}:1)`),
  ].join('\n');
  const map = (u: string, line: number, column: number) => (u === url ? { file: '/src/my.ts', line: line - 1, column } : undefined);
  assert.deepEqual(userFrames(stack, map), ['at inner (/src/my.ts:9:5)', 'at outer (/src/my.ts:19:7)', 'at /src/my.ts:0:1', 'at f0 (/src/my.ts:29:1)', 'at f1 (/src/my.ts:30:1)']);
  assert.deepEqual(userFrames(undefined, map), []);
  assert.deepEqual(userFrames('Error: y\n    at g (/opt/reconcile-lab/dist/cli.js:1:2)', map), []);
});

test('errors thrown by the user code propagate unchanged (TerminalError-like stays terminal)', async () => {
  const p = write('terminal.ts', 'export function reconcile() { const e = new Error("invalid spec") as Error & { terminal: boolean }; e.terminal = true; throw e; }\n');
  const r = createModuleReconciler({ path: p });
  await assert.rejects(r.reconcile(req, testContext(statusOnlyClient([])).ctx), (e: Error) => isTerminal(e) && e.message === 'invalid spec');
});

test('a module has no deadline of its own: a long reconcile() is awaited, never abandoned (the controller owns the timeout)', { timeout: 60_000 }, async () => {
  const p = write('slow.mjs', `export async function reconcile(req, ctx) { globalThis.__rlSlowSignal = ctx.signal; return new Promise((res) => { globalThis.__rlSlowDone = res; }); }\n`);
  const r = createModuleReconciler({ path: p });
  const outer = new AbortController();
  const done = r.reconcile(req, testContext(statusOnlyClient([]), { signal: outer.signal }).ctx);
  let settled = false;
  done.then(() => (settled = true), () => (settled = true));
  await until(() => typeof (globalThis as { __rlSlowDone?: unknown }).__rlSlowDone === 'function', 5_000_000);
  // 31 s of real time would be needed for the old 30 s default; the signal it got is the caller's, untouched.
  const signal = (globalThis as { __rlSlowSignal?: AbortSignal }).__rlSlowSignal!;
  assert.equal(signal, outer.signal, 'the module gets the controller\'s signal itself (no private deadline wrapped around it)');
  assert.equal(settled, false);
  (globalThis as { __rlSlowDone?: (v: unknown) => void }).__rlSlowDone!({ requeueAfterMs: 5 });
  assert.deepEqual(await done, { requeueAfterMs: 5 });
  delete (globalThis as { __rlSlowDone?: unknown }).__rlSlowDone;
  delete (globalThis as { __rlSlowSignal?: unknown }).__rlSlowSignal;
  r.dispose();
});

test('the caller aborting (the controller\'s deadline or stop) reaches the module', { timeout: 60_000 }, async () => {
  const p = write('quick.mjs', `export async function reconcile(req, ctx) { globalThis.__rlQuickStarted = true; return new Promise((res, rej) => ctx.signal.addEventListener('abort', () => rej(new Error('stopped by signal')))); }\n`);
  const r = createModuleReconciler({ path: p });
  const outer = new AbortController();
  const done = r.reconcile(req, testContext(statusOnlyClient([]), { signal: outer.signal }).ctx);
  await until(() => (globalThis as { __rlQuickStarted?: boolean }).__rlQuickStarted === true, 5_000_000);
  delete (globalThis as { __rlQuickStarted?: boolean }).__rlQuickStarted;
  outer.abort();
  await assert.rejects(done, /stopped by signal/);
  r.dispose();
});

test('a module may export its predicates (names or predicate objects) and controller options; bad ones are clear errors', async () => {
  const p = write('withConfig.mjs', `
    export function reconcile() { return {}; }
    export const predicates = ['generation-changed', { name: 'onlyA', create: (e) => e.object.metadata.name === 'a', update: () => true, delete: () => true }];
    export const options = { maxConcurrentReconciles: 2, reconcileTimeoutMs: 5000, workQueue: 'client-go' };
  `);
  const r = createModuleReconciler({ path: p });
  const cfg = await r.controllerConfig();
  assert.deepEqual(cfg.predicates.map((x) => x.name), ['generationChanged', 'onlyA']);
  assert.equal(cfg.predicates[1]!.create({ object: widget('b'), isInInitialList: false }), false);
  assert.deepEqual(cfg.options, { maxConcurrentReconciles: 2, reconcileTimeoutMs: 5000, workQueue: 'client-go' });
  const none = createModuleReconciler({ path: write('plain.mjs', 'export function reconcile() { return {}; }\n') });
  assert.deepEqual(await none.controllerConfig(), { predicates: [], options: {}, indexes: [] });
  const bad = async (name: string, text: string, re: RegExp) => {
    const m = createModuleReconciler({ path: write(name, `export function reconcile() { return {}; }\n${text}\n`) });
    await assert.rejects(m.controllerConfig(), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'config' && re.test(e.message));
  };
  // A module with no reconcile export is another kind of problem (its loop still runs and reports it each reconcile).
  const noReconcile = createModuleReconciler({ path: write('noReconcile.mjs', `export const predicates = ['generation-changed'];\n`) });
  await assert.rejects(noReconcile.controllerConfig(), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'export');
  await bad('badPred.mjs', `export const predicates = ['generation'];`, /predicates\[0\]: unknown predicate "generation"/);
  await bad('badPredType.mjs', `export const predicates = 'generation-changed';`, /"predicates" must be an array/);
  await bad('badOpt.mjs', `export const options = { workers: 2 };`, /unknown option "workers"/);
  await bad('badWorkers.mjs', `export const options = { maxConcurrentReconciles: 0 };`, /maxConcurrentReconciles must be an integer from 1 to 64/);
  await bad('badQueue.mjs', `export const options = { workQueue: 'fifo' };`, /workQueue must be "priority" or "client-go"/);
  r.dispose();
});

test('a module may export its own cache indexes (resource by name or as ctx.client takes it); the loop adds them to the informers; wrong ones are clear errors', async () => {
  const p = write('withIndexes.mjs', `
    export function reconcile() { return {}; }
    export const indexes = [
      { resource: 'configmaps', name: 'order', index: (o) => (o.metadata.labels?.order ? [o.metadata.labels.order] : []) },
      { resource: { group: 'apps', version: 'v1', resource: 'deployments' }, name: 'image', index: (o) => o.spec.template.spec.containers.map((c) => c.image) },
      { resource: 'configmaps', name: 'broken', index: () => 'not-an-array' },
    ];
  `);
  const r = createModuleReconciler({ path: p });
  const { indexes } = await r.controllerConfig();
  assert.deepEqual(indexes.map((x) => [x.resourceId, x.name]), [['configmaps', 'order'], ['deployments.apps', 'image'], ['configmaps', 'broken']]);
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'n', labels: { order: 'cart' } } };
  assert.deepEqual(indexes[0]!.index(cm), ['cart']);
  assert.throws(() => indexes[2]!.index(cm), new RegExp(`^Error: the index "broken" of ${p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} returned "not-an-array": an index function returns an array of strings \\(\\[\\] for none\\)$`));

  // Added to the informer of each one's resource (matched by group and resource); the broken one files nothing, and
  // an object it throws on is still stored under the other indexes.
  const { Indexer } = await import('../../../src/core/cache/indexer.ts');
  const errors: string[] = [];
  const store = new Indexer({}, (name, key, e) => errors.push(`${name} ${key}: ${(e as Error).message.split(':')[0]}`));
  const informer = (resource: { group: string; version: string; resource: string }, indexer?: InstanceType<typeof Indexer>) => ({ resource, addIndexers: (x: Record<string, never>) => indexer?.addIndexers(x) });
  const { addModuleIndexes } = await import('../../../src/core/reconcilers/moduleIndexes.ts');
  const informers = [informer({ group: '', version: 'v1', resource: 'configmaps' }, store), informer({ group: 'apps', version: 'v1', resource: 'deployments' })] as never[];
  addModuleIndexes(indexes, informers);
  store.add(cm as never);
  assert.deepEqual(store.byIndex('order', 'cart').map((o) => o.metadata.name), ['a']);
  assert.deepEqual(store.listIndexFuncValues('broken'), []);
  assert.deepEqual(errors, [`broken n/a: the index "broken" of ${p} returned "not-an-array"`]);
  assert.throws(() => addModuleIndexes(indexes.slice(0, 1), [informers[1]!]), /^Error: the index "order" is on configmaps, which this loop does not watch$/);

  const bad = async (name: string, text: string, re: RegExp) => {
    const m = createModuleReconciler({ path: write(name, `export function reconcile() { return {}; }\n${text}\n`) });
    await assert.rejects(m.controllerConfig(), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'config' && re.test(e.message), name);
  };
  await bad('idxNotArray.mjs', `export const indexes = { resource: 'configmaps', name: 'x', index: () => [] };`, /"indexes" must be an array of \{ resource, name, index \} \(got object\)$/);
  await bad('idxField.mjs', `export const indexes = [{ resource: 'configmaps', nmae: 'x', index: () => [] }];`, /indexes\[0\] has unknown field "nmae" \(did you mean "name"\?\); an index has resource, name, index$/);
  await bad('idxResource.mjs', `export const indexes = [{ resource: 'Config Maps', name: 'x', index: () => [] }];`, /indexes\[0\]\.resource must name a resource: "configmaps", "deployments\.apps", or \{ group: 'apps', version: 'v1', resource: 'deployments' \} \(got "Config Maps"\)$/);
  await bad('idxName.mjs', `export const indexes = [{ resource: 'configmaps', name: '', index: () => [] }];`, /indexes\[0\]\.name must be a non-empty string \(got ""\)$/);
  await bad('idxBuiltIn.mjs', `export const indexes = [{ resource: 'configmaps', name: 'ownerUid', index: () => [] }];`, /indexes\[0\]\.name "ownerUid" is one of the indexes every informer has \(namespace, ownerUid, finalizer, terminating\): use it as it is, or give yours another name$/);
  await bad('idxTwice.mjs', `export const indexes = [{ resource: 'configmaps', name: 'x', index: () => [] }, { resource: { group: '', resource: 'configmaps' }, name: 'x', index: () => [] }];`, /indexes\[1\]: configmaps has two indexes named "x"$/);
  await bad('idxFn.mjs', `export const indexes = [{ resource: 'configmaps', name: 'x', index: 'metadata.labels.x' }];`, /indexes\[0\]\.index must be a function \(object\) => string\[\] \(got string\)$/);
  r.dispose();
});

test('without esbuild (a packaged extension, a workspace without it), TypeScript loads through Node\'s own type stripping; syntax that needs a compiler says how to get one; an older Node says what to do', async () => {
  const noEsbuild = async () => undefined;
  write('strip-helper.ts', 'export const base: number = 40;\n');
  const p = write('strip-basic.ts', `
    import { base } from './strip-helper.ts';
    import type { Unused } from './nowhere.ts';
    interface Result { requeueAfterMs?: number }
    export async function reconcile(req: { name: string }): Promise<Result> {
      const n: number = base + req.name.length;
      return { requeueAfterMs: n };
    }`);
  const r = createModuleReconciler({ path: p, findEsbuild: noEsbuild, nodeStripsTypes: true });
  assert.deepEqual(await r.reconcile(req, testContext(statusOnlyClient([])).ctx), { requeueAfterMs: 42 });
  r.dispose();
  // An enum is not erasable: Node refuses it, and the error says what compiles it.
  const e = write('strip-enum.ts', 'enum Mode { A, B }\nexport function reconcile() { return { requeueAfterMs: Mode.B }; }\n');
  const re = createModuleReconciler({ path: e, findEsbuild: noEsbuild, nodeStripsTypes: true });
  await assert.rejects(re.reconcile(req, testContext(statusOnlyClient([])).ctx), (err: unknown) => err instanceof ModuleReconcilerError && err.kind === 'compile' && /^cannot compile .*strip-enum\.ts:\nstrip-enum\.ts:1:1: TypeScript enum is not supported[^\n]*\n    1 \| enum Mode \{ A, B \}\n\(loaded with Node's own TypeScript type stripping, as no esbuild was found: it takes erasable syntax only — no enum, namespace or parameter properties[^]*npm i -D esbuild in the module's folder/.test(err.message));
  re.dispose();
  const old = createModuleReconciler({ path: p, findEsbuild: noEsbuild, nodeStripsTypes: false });
  await assert.rejects(old.reconcile(req, testContext(statusOnlyClient([])).ctx), (err: unknown) => err instanceof ModuleReconcilerError && /cannot compile .*strip-basic\.ts: esbuild was found neither beside Reconcile Lab nor in the module's workspace, and this Node \(v[\d.]+\) does not strip TypeScript types\. Run npm i -D esbuild in the module's folder, or write the reconciler in JavaScript$/.test(err.message));
  old.dispose();
});

test('without esbuild, a plain syntax error names file:line:column and shows the source line, as esbuild\'s compile errors do, without the type-stripping hint; a fix is picked up', async () => {
  const noEsbuild = async () => undefined;
  const ctx = testContext(statusOnlyClient([])).ctx;
  const failure = async (name: string, text: string) => {
    const r = createModuleReconciler({ path: write(name, text), findEsbuild: noEsbuild, nodeStripsTypes: true });
    const err = await r.reconcile(req, ctx).then(() => undefined, (e: unknown) => e);
    r.dispose();
    assert.ok(err instanceof ModuleReconcilerError, String(err));
    assert.equal(err.kind, 'compile', err.message);
    assert.doesNotMatch(err.message, /type stripping|esbuild/);
    return err.message;
  };
  // TypeScript, through Node's type stripping (ERR_INVALID_TYPESCRIPT_SYNTAX: its location is above the stack).
  const ts = await failure('syntax.ts', 'export function reconcile() { return {}; }\nconst x = {;\n');
  assert.match(ts, new RegExp(`^cannot compile ${join(dir, 'syntax.ts').replace(/[.\\]/g, '\\$&')}:\nsyntax\\.ts:2:12: Unexpected token \`;\`[^\n]*\n    2 \\| const x = \\{;$`), ts);
  // The line before the offending one is empty (Node quotes it too): the location is still found.
  const blank = await failure('syntax-blank.ts', 'export function reconcile() { return {}; }\n\nconst broken = ;\n');
  assert.match(blank, new RegExp(`^cannot compile ${join(dir, 'syntax-blank.ts').replace(/[.\\]/g, '\\$&')}:\nsyntax-blank\\.ts:3:16: Expression expected\n    3 \\| const broken = ;$`), blank);
  // An ES module: V8 keeps the location to itself; module syntax before the error does not hide it.
  const js = await failure('syntax.js', "import { join } from 'node:path';\nexport const here = import.meta.url;\nexport default function reconcile() { return {}; }\nexport { join as j };\nawait 0;\nconst x = {;\n");
  assert.equal(js, `cannot compile ${join(dir, 'syntax.js')}:\nsyntax.js:6:12: Unexpected token ';'\n    6 | const x = {;`);
  // CommonJS: Node prints the location above the stack.
  const cjs = await failure('syntax.cjs', "exports.reconcile = () => ({});\n\tif (true {\n");
  assert.equal(cjs, `cannot compile ${join(dir, 'syntax.cjs')}:\nsyntax.cjs:2:11: Unexpected token '{'\n    2 | if (true {`);
  // Fixed: loaded.
  const p = write('syntax-fixed.mjs', 'export function reconcile() { return {}; }\nconst x = {;\n');
  const r = createModuleReconciler({ path: p, findEsbuild: noEsbuild, nodeStripsTypes: true });
  await assert.rejects(r.reconcile(req, ctx), /syntax-fixed\.mjs:2:12: Unexpected token ';'/);
  write('syntax-fixed.mjs', 'export function reconcile() { return { requeueAfterMs: 7 }; }\n');
  assert.deepEqual(await r.reconcile(req, ctx), { requeueAfterMs: 7 });
  r.dispose();
  // A SyntaxError the module's code throws while loading (JSON.parse) is not a compile error: its frame says where.
  const rt = createModuleReconciler({ path: write('syntax-runtime.mjs', 'export function reconcile() {}\nJSON.parse("{");\n'), findEsbuild: noEsbuild, nodeStripsTypes: true });
  await assert.rejects(rt.reconcile(req, ctx), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'load' && /SyntaxError: .*JSON[^]*\n    at .*syntax-runtime\.mjs:2:\d+/.test(e.message));
  rt.dispose();
});

test('locateModuleSyntaxError: finds V8\'s own location of an ES module\'s syntax error without running it; none when the source compiles or fails otherwise', () => {
  const g = globalThis as { __rlRan?: boolean };
  g.__rlRan = false;
  const src = "#!/usr/bin/env node\nimport * as fs from 'node:fs';\nexport * from 'node:os';\nexport { fs };\nglobalThis.__rlRan = true;\nexport class A {}\n  let y = 1 +;\n";
  assert.deepEqual(locateModuleSyntaxError(src, '/m.mjs', "Unexpected token ';'"), { line: 7, column: 13, lineText: '  let y = 1 +;' });
  assert.equal(g.__rlRan, false);
  // Strict, as a module is.
  assert.deepEqual(locateModuleSyntaxError('with (a) {}', '/m.mjs', 'Strict mode code may not include a with statement'), { line: 1, column: 0, lineText: 'with (a) {}' });
  assert.equal(locateModuleSyntaxError("import './other.js';\nexport const a = 1;\n", '/m.mjs', "Unexpected token ';'"), undefined);
  assert.equal(locateModuleSyntaxError('const x = {;', '/m.mjs', 'some other message'), undefined);
});

test('syntaxErrorAt: reads the location Node prints above a stack; none when the stack starts with the error', () => {
  assert.deepEqual(syntaxErrorAt("file:///w/m.mts?v=1:2\nexport const a = 1;\nconst x = {;\n           ^\n\nSyntaxError [ERR_INVALID_TYPESCRIPT_SYNTAX]: Unexpected token\n    at parseTypeScript (node:internal/modules/typescript:72:36)"), { where: 'file:///w/m.mts?v=1', line: 2, column: 11, lineText: 'const x = {;' });
  // The line Node quotes before the offending one is empty (a blank line between two blocks): still found.
  assert.deepEqual(syntaxErrorAt('/w/t.ts:4\n\nconst broken = ;\n               ^\n\nSyntaxError [ERR_INVALID_TYPESCRIPT_SYNTAX]: Expression expected\n    at parseTypeScript (node:internal/modules/typescript:72:36)'), { where: '/w/t.ts', line: 4, column: 15, lineText: 'const broken = ;' });
  // VS Code's extension host writes the frames with a tab and no error code.
  assert.deepEqual(syntaxErrorAt('/w/t.ts:4\n\nconst broken = ;\n               ^\n\nSyntaxError: Expression expected\n\tat parseTypeScript (node:internal/modules/typescript:72:36)'), { where: '/w/t.ts', line: 4, column: 15, lineText: 'const broken = ;' });
  assert.equal(syntaxErrorAt("SyntaxError: Unexpected token ';'\n    at compileSourceTextModule (node:internal/modules/esm/utils:357:16)"), undefined);
  assert.equal(syntaxErrorAt('Error: bad offset:12\n    at f (/w/m.js:1:1)\n\nnot an error line'), undefined);
});

test('swcMessageAt: reads the location from swc\'s message (Node 22\'s ERR_INVALID_TYPESCRIPT_SYNTAX before it named the file)', () => {
  assert.deepEqual(swcMessageAt("  x TypeScript enum is not supported in strip-only mode\n   ,----\n 1 | enum Foo{}\n   : ^^^^^^^^^^\n   `----\n"), { text: 'TypeScript enum is not supported in strip-only mode', at: { line: 1, column: 0, lineText: 'enum Foo{}' } });
  assert.deepEqual(swcMessageAt("  x Expected ident\n   ,-[2:12]\n 1 | export function f() {}\n 2 | const x = {;\n   :            ^\n   `----\n"), { text: 'Expected ident', at: { line: 2, column: 11, lineText: 'const x = {;' } });
  assert.equal(swcMessageAt("Unexpected token ';'"), undefined);
});

test('a module path whose extension no loader handles is refused by name, naming the accepted extensions, and never reaches esbuild', async () => {
  for (const ok of ['r.ts', 'r.mts', 'r.cts', 'r.js', 'r.mjs', 'r.cjs', './dir.v2/r.ts']) assert.equal(moduleExtensionProblem(ok), undefined, ok);
  assert.equal(moduleExtensionProblem('good.ts.bak'), 'good.ts.bak is not a JavaScript or TypeScript file (".bak"): a reconciler module\'s name must end in .ts, .mts, .cts, .js, .mjs or .cjs');
  assert.match(moduleExtensionProblem('./reconciler')!, /^\.\/reconciler is not a JavaScript or TypeScript file \(no extension\)/);
  assert.match(moduleExtensionProblem('r.tsx')!, /"\.tsx"/);
  assert.match(moduleExtensionProblem('R.TS')!, /"\.TS"/);
  const p = write('good.ts.bak', 'export function reconcile() { return {}; }\n');
  let searched = false;
  const r = createModuleReconciler({ path: p, findEsbuild: async () => { searched = true; return undefined; } });
  await assert.rejects(r.reconcile(req, testContext(statusOnlyClient([])).ctx), (e: unknown) => e instanceof ModuleReconcilerError && e.kind === 'compile' && e.message === moduleExtensionProblem(p));
  assert.equal(searched, false);
  r.dispose();
});

test('a loaded module claims the errors that escape every reconcile (all of them by default, or those its claimStray accepts, told whether the stack has its frames)', async () => {
  // In a process of its own: the claimers are process-wide, and other tests here leave modules loaded.
  const p = write('claims.mjs', 'export function reconcile() { return {}; }\n');
  const src = (f: string) => JSON.stringify(join(import.meta.dirname, '../../../src/core/reconcilers', f));
  const script = `
    const { createModuleReconciler } = await import(${src('moduleReconciler.ts')});
    const { describeStrayError } = await import(${src('strayErrors.ts')});
    const req = { key: 'ns1/w1', namespace: 'ns1', name: 'w1' };
    const ctx = { signal: new AbortController().signal };
    const foreign = Object.assign(new Error('elsewhere'), { stack: 'Error: elsewhere\\n    at x (/other/place.js:1:1)' });
    const asked = [];
    const picky = createModuleReconciler({ path: ${JSON.stringify(p)}, claimStray: (_e, framed) => (asked.push(framed), framed) });
    await picky.reconcile(req, ctx);
    const byPicky = describeStrayError(foreign) ?? null;
    const all = createModuleReconciler({ path: ${JSON.stringify(p)} });
    await all.reconcile(req, ctx);
    const byAll = describeStrayError(foreign) ?? null;
    all.dispose();
    picky.dispose();
    const afterDispose = describeStrayError(foreign) ?? null;
    console.log(JSON.stringify({ byPicky, asked, byAll, afterDispose }));
  `;
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { byPicky: string | null; asked: boolean[]; byAll: string | null; afterDispose: string | null };
  assert.equal(out.byPicky, null, 'not claimed by a module that accepts only errors with its frames');
  assert.deepEqual(out.asked, [false, false], 'asked each time (first in order), told the stack has none of its frames');
  assert.match(out.byAll ?? '', /^an error escaped every reconcile of the reconciler module .*claims\.mjs .*: elsewhere\nAwait every promise/);
  assert.equal(out.afterDispose, null, 'a disposed module claims nothing');
});

test('a value thrown that is not an Error (a string, an object) is shown, cut short, with the advice to throw an Error; still a failed reconcile (retried), a { terminal: true } stays terminal', async () => {
  const p = write('throws-values.ts', [
    'export async function reconcile(req: { name: string }) {',
    "  if (req.name === 'str') throw 'not ready';",
    "  if (req.name === 'long') throw 'x'.repeat(500);",
    "  if (req.name === 'obj') throw { code: 1 };",
    "  if (req.name === 'priority') throw { priority: 10 };",
    "  if (req.name === 'terminal') throw { terminal: true, why: 'gone' };",
    "  if (req.name === 'secret') throw { kind: 'Secret', apiVersion: 'v1', metadata: { name: 'db' }, data: { password: 'aHVudGVyMg==' } };",
    "  throw new Error('a real one');",
    '}',
    '',
  ].join('\n'));
  const r = createModuleReconciler({ path: p });
  const { ctx } = testContext(statusOnlyClient([]));
  const thrown = (name: string) => r.reconcile({ key: `ns1/${name}`, namespace: 'ns1', name }, ctx).then(() => assert.fail('resolved'), (e: unknown) => e);
  const hint = "throw an Error (new Error('…')) so the message and stack are kept";
  const str = await thrown('str');
  assert.ok(str instanceof ModuleReconcilerError && str.kind === 'throw', String(str));
  assert.equal(str.message, `reconcile() threw the string "not ready", which is not an Error: ${hint} (it is still a failed reconcile, retried with backoff)`);
  assert.equal(str.cause, 'not ready');
  assert.equal(isTerminal(str), false, 'retried with backoff, as before');
  const long = (await thrown('long')) as Error;
  assert.match(long.message, new RegExp(`^reconcile\\(\\) threw the string "${'x'.repeat(80)}…", which is not an Error`));
  const obj = (await thrown('obj')) as Error;
  assert.match(obj.message, /^reconcile\(\) threw the object \{"code":1\}, which is not an Error: throw an Error/);
  assert.equal(isTerminal(obj), false);
  assert.equal(isTerminal(await thrown('terminal')), true, 'a thrown { terminal: true } still stops retries');
  assert.equal((await thrown('priority') as { priority?: unknown }).priority, 10, 'a thrown { priority } still sets the retry\'s priority');
  const secret = (await thrown('secret')) as Error;
  assert.doesNotMatch(secret.message, /aHVudGVyMg==/, 'a Secret\'s values are masked');
  const real = await thrown('real');
  assert.ok(real instanceof Error && !(real instanceof ModuleReconcilerError) && real.message === 'a real one', 'an Error propagates unchanged');
  r.dispose();
});
