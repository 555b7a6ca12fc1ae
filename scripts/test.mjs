#!/usr/bin/env node
// `npm test`: the whole test run, ending with one line "N passed, N failed, N skipped".
//
// Phases, in order:
//   build      esbuild bundles (extension, webview, CLI), package.json contributes check and `tsc` strict type-check
//   unit       test/unit/**/*.test.ts under node:test (fake clocks, fake lister-watchers; no cluster)
//   integration test/integration/**/*.test.ts against ONE real local control plane (etcd + kube-apiserver +
//              kube-controller-manager built from Go modules), shared by all suites via RECONCILE_LAB_KUBECONFIG
//   go         `go test -json ./...` in bridge/, samples/go-controller/, samples/buggy/go-status-every-reconcile/, samples/buggy/go-removes-finalizer-first/, samples/buggy/go-remembers-old-child/, samples/buggy/go-filters-child-events/, samples/buggy/go-fails-when-gone/, samples/buggy/go-never-prunes-keys/ and samples/buggy/go-already-exists-taken/ (the Go bridge, its sample, the buggy Go samples), with
//              RECONCILE_LAB_KUBECONFIG set; Go test passes/fails/skips count into the totals
//   vscode     the extension-host suite and the Playwright UI test inside code-server (real VS Code)
//
// Options: --only <phase>[,<phase>]   --skip <phase>[,<phase>]   --grep <regex> (node:test name pattern)
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readdirSync, statSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { requireScriptNode } from './scriptNode.mjs';

// The suites are TypeScript: a clear message on a Node that cannot load them (not a loader error per file).
requireScriptNode('test');

const root = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = opt('--only')?.split(',');
const skip = opt('--skip')?.split(',') ?? [];
const grep = opt('--grep');
const want = (phase) => (!only || only.includes(phase)) && !skip.includes(phase);

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.error(`reconcile-lab tests need Node >= 22.19 (found ${process.version}). Run them through npm (npm test), which puts the project's pinned Node first on PATH.`);
  process.exit(2);
}

const totals = { passed: 0, failed: 0, skipped: 0 };
const failures = [];

function listTests(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listTests(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/** Runs files under node:test with the spec reporter, adding leaf-test counts to the totals. */
async function runNodeTests(phase, files, { concurrency = 1, timeout = 300_000 } = {}) {
  if (files.length === 0) {
    console.log(`[${phase}] no test files`);
    return;
  }
  console.log(`\n=== ${phase}: ${files.length} file(s) ===`);
  const stream = run({ files, concurrency, timeout, testNamePatterns: grep ? [new RegExp(grep)] : undefined });
  stream.on('test:pass', (d) => {
    if (d.details?.type === 'suite') return;
    if (d.skip || d.todo) totals.skipped++;
    else totals.passed++;
  });
  stream.on('test:fail', (d) => {
    if (d.details?.type === 'suite' && d.details?.error?.failureType === 'subtestsFailed') return;
    totals.failed++;
    failures.push(`${phase}: ${d.name} (${d.file ?? ''})`);
  });
  await new Promise((res, rej) => {
    const out = stream.compose(spec);
    out.pipe(process.stdout, { end: false });
    out.on('end', res);
    out.on('error', rej);
  });
}

function step(name, cmd, cmdArgs) {
  console.log(`\n=== ${name} ===`);
  const r = spawnSync(cmd, cmdArgs, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    totals.failed++;
    failures.push(`${name} (exit ${r.status})`);
    return false;
  }
  return true;
}

/** Runs `go test -json ./...` in each Go module, echoing test output and adding test counts to the totals. */
async function runGoTests(dirs) {
  for (const dir of dirs) {
    console.log(`\n=== go: ${dir} ===`);
    const args = ['test', '-json', '-count=1', '-timeout', '600s', './...'];
    if (grep) args.push('-run', grep);
    const child = spawn('go', args, { cwd: join(root, dir), stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
    const exited = new Promise((res) => child.on('close', (code) => res(code)));
    let counted = 0;
    for await (const line of createInterface({ input: child.stdout })) {
      let ev;
      try {
        ev = JSON.parse(line);
      } catch {
        console.log(line);
        continue;
      }
      if (ev.Action === 'output' && ev.Output && (!ev.Test || /^\s*(--- |\S+_test\.go:\d+)/.test(ev.Output))) process.stdout.write(ev.Output);
      if (!ev.Test) continue;
      if (ev.Action === 'pass') totals.passed++, counted++;
      else if (ev.Action === 'skip') totals.skipped++, counted++;
      else if (ev.Action === 'fail') {
        totals.failed++, counted++;
        failures.push(`go: ${ev.Package} ${ev.Test}`);
      }
    }
    const code = await exited;
    if (code !== 0 && !failures.some((f) => f.startsWith('go: '))) {
      totals.failed++;
      failures.push(`go: ${dir} (go test exit ${code}, ${counted} tests counted)`);
    }
  }
}

let controlPlane;
try {
  if (want('build')) {
    step('build', process.execPath, ['scripts/build.mjs']);
    step('manifest', process.execPath, ['scripts/checkManifest.mjs']);
    step('typecheck', process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json']);
  }
  if (want('unit')) await runNodeTests('unit', listTests(join(root, 'test/unit')), { concurrency: 2 });

  const needCluster = want('integration') || want('vscode') || want('go');
  if (needCluster) {
    const { startLocalControlPlane } = await import(pathToFileURL(join(root, 'src/core/controlplane/localControlPlane.ts')).href);
    console.log('\n=== starting the local control plane (etcd + kube-apiserver + kube-controller-manager) ===');
    const t0 = Date.now();
    controlPlane = await startLocalControlPlane({ log: (line) => console.log(`[control-plane] ${line}`) });
    console.log(`[control-plane] ready in ${((Date.now() - t0) / 1000).toFixed(1)} s at ${controlPlane.server}; kubeconfig ${controlPlane.kubeconfigPath}`);
    process.env.RECONCILE_LAB_KUBECONFIG = controlPlane.kubeconfigPath;
  }
  if (want('integration')) await runNodeTests('integration', listTests(join(root, 'test/integration')), { concurrency: 1, timeout: 600_000 });
  if (want('go')) await runGoTests(['bridge', 'samples/go-controller', 'samples/buggy/go-status-every-reconcile', 'samples/buggy/go-removes-finalizer-first', 'samples/buggy/go-remembers-old-child', 'samples/buggy/go-filters-child-events', 'samples/buggy/go-fails-when-gone', 'samples/buggy/go-never-prunes-keys', 'samples/buggy/go-already-exists-taken']);
  if (want('vscode')) {
    const runner = join(root, 'test/vscode/run.mjs');
    if (existsSync(runner)) {
      const { runVsCodeSuites } = await import(pathToFileURL(runner).href);
      if (grep) process.env.RECONCILE_LAB_TEST_GREP = grep;
      const r = await runVsCodeSuites({ root, kubeconfig: controlPlane.kubeconfigPath });
      totals.passed += r.passed;
      totals.failed += r.failed;
      totals.skipped += r.skipped;
      failures.push(...r.failures.map((f) => `vscode: ${f}`));
    }
  }
} catch (e) {
  totals.failed++;
  failures.push(`harness: ${e?.stack ?? e}`);
  console.error(e);
} finally {
  if (controlPlane) {
    await controlPlane.stop();
    console.log('[control-plane] stopped, files removed');
  }
}

if (failures.length) {
  console.log('\nFailures:');
  for (const f of failures) console.log(`  - ${f}`);
}
console.log(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(totals.failed > 0 || totals.passed === 0 ? 1 : 0);
