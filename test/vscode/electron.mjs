#!/usr/bin/env node
// `npm run test:electron`: the extension-host suite (dist/test/suite.js) in desktop VS Code through
// @vscode/test-electron, for developers whose machine can download VS Code (or has one). Not part of `npm test`: the
// project's CI machines cannot download VS Code, so `npm test` runs the same suite in code-server (test/vscode/run.mjs).
//
//   npm run test:electron [-- --vscode <path to a VS Code executable>] [-- --version <stable|insiders|1.x.y>]
//
// Env: VSCODE_EXECUTABLE (same as --vscode), RECONCILE_LAB_KUBECONFIG (a cluster for the suite; without it a private
// local control plane is started and stopped). Workspace trust is disabled by test-electron, so only the `trusted`
// variant runs here. On headless Linux run it under `xvfb-run -a`.
// Exit codes: 0 passed, 1 tests failed, 2 VS Code could not be downloaded or started.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '../..');
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const vscodeExecutablePath = opt('--vscode') ?? process.env.VSCODE_EXECUTABLE;
const version = opt('--version') ?? 'stable';

if (!existsSync(join(root, 'dist/test/suite.js')) || !existsSync(join(root, 'dist/extension.js'))) {
  console.error('dist/ is not built: run `npm run build` first.');
  process.exit(2);
}

const { runTests, downloadAndUnzipVSCode } = await import('@vscode/test-electron');

let executable = vscodeExecutablePath;
if (!executable) {
  try {
    executable = await downloadAndUnzipVSCode({ version, timeout: 30_000 });
  } catch (e) {
    console.error(
      `\nCannot download VS Code ${version} for @vscode/test-electron: ${e?.message ?? e}\n` +
        'This machine cannot reach the VS Code download server (the project machines and CI cannot: only package\n' +
        'registries are reachable). Either pass an installed VS Code with `npm run test:electron -- --vscode <path>`\n' +
        '(or VSCODE_EXECUTABLE), or run the same suite in code-server with `npm test` (phase "vscode").',
    );
    process.exit(2);
  }
}

let controlPlane;
let kubeconfig = process.env.RECONCILE_LAB_KUBECONFIG;
const scratch = mkdtempSync(join(tmpdir(), 'reconcile-lab-electron-'));
let exitCode = 1;
try {
  if (!kubeconfig) {
    const { startLocalControlPlane } = await import(pathToFileURL(join(root, 'src/core/controlplane/localControlPlane.ts')).href);
    controlPlane = await startLocalControlPlane({ log: (line) => console.log(`[control-plane] ${line}`) });
    kubeconfig = controlPlane.kubeconfigPath;
  }
  const workspace = join(scratch, 'workspace');
  const resultFile = join(scratch, 'result.json');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'README.md'), '# Reconcile Lab test workspace\n');
  try {
    await runTests({
      vscodeExecutablePath: executable,
      extensionDevelopmentPath: root,
      extensionTestsPath: join(root, 'dist/test/suite.js'),
      extensionTestsEnv: {
        RECONCILE_LAB_KUBECONFIG: kubeconfig,
        KUBECONFIG: kubeconfig,
        RECONCILE_LAB_TEST_TRUST: 'trusted',
        RECONCILE_LAB_TEST_RESULT: resultFile,
      },
      launchArgs: [workspace, '--disable-extensions', '--user-data-dir', join(scratch, 'user-data')],
    });
    exitCode = 0;
  } catch (e) {
    if (!existsSync(resultFile)) {
      console.error(`VS Code did not run the suite: ${e?.message ?? e}`);
      exitCode = 2;
    }
  }
  if (existsSync(resultFile)) {
    const r = JSON.parse(readFileSync(resultFile, 'utf8'));
    if (r.failures.length) console.log(`\nFailures:\n${r.failures.map((f) => `  - ${f}`).join('\n')}`);
    console.log(`\n${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped`);
    exitCode = r.failed > 0 || r.passed === 0 ? 1 : exitCode;
  }
} finally {
  await controlPlane?.stop();
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(exitCode);
