// Entry of the extension-host test suite: VS Code loads the bundle built from this file (dist/test/suite.js, see
// scripts/build.mjs) as `extensionTestsPath` and awaits `run()` inside the extension host; test/vscode/run.mjs starts
// it in code-server. A rejected `run()` makes the extension host exit with code 1.
//
// Every `*.test.ts` under test/vscode/suite/ is bundled (esbuild expands the template-literal import below into a glob
// over this folder) and loaded after Mocha has installed its BDD globals. The files are listed from the source folder
// at run time, so a test file missing from a stale bundle fails loudly instead of being silently skipped.
//
// Workspace-trust variants: test/vscode/run.mjs runs the suite twice. In the `trusted` variant (the default; trust
// disabled, so everything is trusted) tests whose full title contains `[untrusted]` are left out; in the `untrusted`
// variant (a folder opened with workspace trust on and never granted) only those tests run. The variant is in env
// RECONCILE_LAB_TEST_TRUST.
//
// Output: Mocha's spec reporter (forwarded to the runner through the workbench's automation log), then one line
//   RECONCILE_LAB_SUITE_RESULT {"passed":N,"failed":N,"skipped":N,"failures":["<full title>: <message>", ...]}
// and the same JSON in the file named by env RECONCILE_LAB_TEST_RESULT when set (the runner prefers the file).
import Mocha from 'mocha';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

/** Counts reported by the suite; `failures` holds one "<full title>: <first line of the error>" per failed test or hook. */
export interface SuiteResult {
  passed: number;
  failed: number;
  skipped: number;
  failures: string[];
}

export const RESULT_PREFIX = 'RECONCILE_LAB_SUITE_RESULT ';
const UNTRUSTED_TAG = /\[untrusted\]/;

/** A title filter that matches what `pattern` matches, except tests tagged `[untrusted]`. */
class TrustedTitles extends RegExp {
  constructor(pattern: string) {
    super(pattern);
  }
  override test(title: string): boolean {
    return super.test(title) && !UNTRUSTED_TAG.test(title);
  }
}

function listTestFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listTestFiles(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/** Loads one bundled test module by its path relative to this folder, without the `.test.ts` suffix. */
function loadBundled(name: string): Promise<unknown> {
  return import(`./${name}.test.ts`);
}

export async function run(): Promise<void> {
  // The bundle is dist/test/suite.js; the test sources stay in the repository it was built from.
  const sourceDir = resolve(__dirname, '../../test/vscode/suite');
  const variant = process.env.RECONCILE_LAB_TEST_TRUST === 'untrusted' ? 'untrusted' : 'trusted';
  const mocha = new Mocha({
    ui: 'bdd',
    reporter: 'spec',
    color: false,
    timeout: Number(process.env.RECONCILE_LAB_TEST_TIMEOUT ?? 60_000),
    grep: UNTRUSTED_TAG,
    invert: variant === 'trusted',
  });
  // A subset by title (env RECONCILE_LAB_TEST_GREP, e.g. from `npm test -- --only build,vscode --grep …`).
  const only = process.env.RECONCILE_LAB_TEST_GREP;
  // In the trusted variant it never picks an `[untrusted]` test (those can only pass in the untrusted workspace).
  if (only && variant === 'trusted') {
    mocha.grep(new TrustedTitles(only));
    mocha.options.invert = false;
  }
  // Install describe/it/before/... as globals for the test modules, as Mocha does before it requires a spec file.
  mocha.suite.emit('pre-require', globalThis, 'bundle', mocha);

  const result: SuiteResult = { passed: 0, failed: 0, skipped: 0, failures: [] };
  const files = listTestFiles(sourceDir);
  console.log(`[suite] ${variant} workspace: ${files.length} test file(s) in ${sourceDir}`);
  for (const file of files) {
    const name = relative(sourceDir, file).split(sep).join('/').replace(/\.test\.ts$/, '');
    try {
      await loadBundled(name);
    } catch (e) {
      result.failed++;
      result.failures.push(`load ${name}.test.ts: ${(e as Error)?.message ?? e} (rebuild dist/ with npm run build)`);
    }
  }

  await new Promise<void>((done) => {
    const runner = mocha.run(() => done());
    runner.on('pass', () => result.passed++);
    runner.on('pending', () => result.skipped++);
    runner.on('fail', (test, err: unknown) => {
      result.failed++;
      const message = err instanceof Error ? err.message : String(err);
      result.failures.push(`${test.fullTitle()}: ${message.split('\n')[0]}`);
    });
  });

  const line = JSON.stringify(result);
  console.log(`${RESULT_PREFIX}${line}`);
  if (process.env.RECONCILE_LAB_TEST_RESULT) writeFileSync(process.env.RECONCILE_LAB_TEST_RESULT, line);
  if (result.failed > 0) throw new Error(`${result.failed} test(s) failed`);
  if (result.passed === 0) throw new Error(`no test ran in the ${variant} variant`);
}
