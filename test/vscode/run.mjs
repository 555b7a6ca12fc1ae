#!/usr/bin/env node
// The VS Code phase of `npm test`: the extension inside a real VS Code (code-server on Node 24, driven by Debian
// Chromium through playwright-core).
//
//   host  the extension-host suite (dist/test/suite.js, built from test/vscode/suite/index.ts) in the Node extension
//         host, with the repository loaded as the extension under development through the workbench URL `payload`
//         (honoured because code-server runs with `--vscode-option enable-smoke-test-driver`); results come back
//         through a result file and `codeAutomationExit`. Run twice: `trusted` (workspace trust disabled) and
//         `untrusted` (a folder opened with trust on and never granted; only tests tagged `[untrusted]`).
//   ui    test/vscode/ui/*.mjs against code-server with the extension installed from the repository folder into a
//         temp extensions dir, as a user would have it; screenshots go to test-output/screenshots/.
//
// `dist/` must be built first (npm test does it). Every server, browser and temp folder started here is stopped and
// removed before the promise settles, whatever happens.
//
// Standalone: node test/vscode/run.mjs [--only host,ui] [--kubeconfig <path>]
//   Without --kubeconfig (or RECONCILE_LAB_KUBECONFIG) it starts a private local control plane for the run.
// Env: RECONCILE_LAB_VSCODE_TIMEOUT (ms per code-server session, default 900000), RECONCILE_LAB_CHROMIUM (default
//   /usr/bin/chromium), RECONCILE_LAB_VSCODE_VERBOSE=1 (echo code-server output).
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { format } from 'node:util';
import { ensureCodeServer, installExtensionCopy, startCodeServer } from '../../scripts/code-server.mjs';
import { createOwnedTempDir } from '../../src/core/process/ownedTempDir.ts';

const RESULT_PREFIX = 'RECONCILE_LAB_SUITE_RESULT ';
const CHROMIUM = process.env.RECONCILE_LAB_CHROMIUM ?? '/usr/bin/chromium';
// Without the background-networking flags Chromium keeps dialling Google hosts that this closed network refuses.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--disable-default-apps'];
// Workbench log lines that reach the automation log while the suite runs (kept in the log file, not echoed).
const WORKBENCH_NOISE = /^(\[(AgentHost|ChatModelSelection|AccountPolicyGate|Service Worker|reconnection-grace-time)\]|Creating a socket|Resolv(ing|ed) connection token|Updating additional builtin|getaddrinfo ENOTFOUND|\s+at )/;
const sessionTimeoutMs = () => Number(process.env.RECONCILE_LAB_VSCODE_TIMEOUT ?? 900_000);
const verbose = process.env.RECONCILE_LAB_VSCODE_VERBOSE === '1';

/**
 * Runs the VS Code suites and resolves to their counts; never rejects for a test failure (a harness failure, such as
 * code-server failing to install, is counted as one failed test with the reason).
 *
 * @param {{ root: string, kubeconfig: string, only?: ('host'|'ui')[], log?: (line: string) => void }} options
 *   root: the repository (extension) root with dist/ built; kubeconfig: the test cluster, exported to the extension
 *   host as RECONCILE_LAB_KUBECONFIG and KUBECONFIG; only: a subset of the suites (default both).
 * @returns {Promise<{ passed: number, failed: number, skipped: number, failures: string[] }>}
 */
export async function runVsCodeSuites({ root, kubeconfig, only = ['host', 'ui'], log = (line) => console.log(line) }) {
  const totals = { passed: 0, failed: 0, skipped: 0, failures: [] };
  const add = (r) => {
    totals.passed += r.passed;
    totals.failed += r.failed;
    totals.skipped += r.skipped;
    totals.failures.push(...r.failures);
  };
  const harnessFailure = (what, e) => add({ passed: 0, failed: 1, skipped: 0, failures: [`${what}: ${e?.stack ?? e}`] });

  log('\n=== vscode: code-server ===');
  let t = Date.now();
  let cs;
  try {
    cs = await ensureCodeServer({ log: (line) => log(`[install] ${line}`) });
    log(`[vscode] code-server ready in ${seconds(t)} s: ${cs.entry} (node ${cs.node})`);
  } catch (e) {
    harnessFailure('install code-server', e);
    return totals;
  }
  for (const built of ['dist/extension.js', 'dist/test/suite.js']) {
    if (!existsSync(join(root, built))) {
      harnessFailure('build', `${built} is missing: run npm run build first`);
      return totals;
    }
  }
  const { chromium } = await import('playwright-core');
  const ctx = { root, kubeconfig, cs, chromium, log };

  if (only.includes('host')) {
    // RECONCILE_LAB_TEST_GREP (a regex over full test titles) runs a subset; the untrusted variant only if it asks for it.
    const grep = process.env.RECONCILE_LAB_TEST_GREP;
    for (const trust of ['trusted', 'untrusted']) {
      if (grep && trust === 'untrusted' && !/untrusted/.test(grep)) continue;
      log(`\n=== vscode: extension-host suite (${trust} workspace) ===`);
      t = Date.now();
      try {
        add(await runHostSuite(ctx, trust));
      } catch (e) {
        harnessFailure(`extension-host suite (${trust})`, e);
      }
      log(`[vscode] extension-host suite (${trust}) took ${seconds(t)} s`);
    }
  }
  if (only.includes('ui')) {
    log('\n=== vscode: UI tests (Playwright) ===');
    t = Date.now();
    try {
      add(await runUiTests(ctx));
    } catch (e) {
      harnessFailure('UI tests', e);
    }
    log(`[vscode] UI tests took ${seconds(t)} s`);
  }
  return totals;
}

function seconds(since) {
  return ((Date.now() - since) / 1000).toFixed(1);
}

/**
 * Temp folders for one code-server session; `dispose()` removes them. Owned by this process: the folders of a run
 * that died before removing them are removed by the next run (src/core/process/ownedTempDir.ts).
 */
function sessionDirs(label) {
  const dir = createOwnedTempDir(`reconcile-lab-${label}-`);
  const dirs = {
    dir,
    userData: join(dir, 'user-data'),
    extensions: join(dir, 'extensions'),
    workspace: join(dir, 'workspace'),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
  mkdirSync(dirs.workspace, { recursive: true });
  writeFileSync(join(dirs.workspace, 'README.md'), '# Reconcile Lab test workspace\n');
  return dirs;
}

function clusterEnv(kubeconfig) {
  return { RECONCILE_LAB_KUBECONFIG: kubeconfig, KUBECONFIG: kubeconfig };
}

async function launchChromium(chromium) {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/** Rejects after `ms` with `message`; the timer is cleared by the returned `cancel`. */
function deadline(ms, message) {
  let timer;
  const promise = new Promise((_, rej) => {
    timer = setTimeout(() => rej(new Error(message)), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/** One run of dist/test/suite.js in the extension host of a fresh code-server, in the given trust variant. */
async function runHostSuite({ root, kubeconfig, cs, chromium, log }, trust) {
  const dirs = sessionDirs(`host-${trust}`);
  const resultFile = join(dirs.dir, 'result.json');
  const logFile = join(root, `test-output/vscode/host-${trust}.log`);
  mkdirSync(dirname(logFile), { recursive: true });
  writeFileSync(logFile, '');
  const lines = [];
  let server;
  let browser;
  const limit = deadline(sessionTimeoutMs(), `the extension-host suite did not finish within ${sessionTimeoutMs()} ms`);
  try {
    server = await startCodeServer({
      ...cs, userDataDir: dirs.userData, extensionsDir: dirs.extensions,
      disableWorkspaceTrust: trust === 'trusted', smokeTestDriver: true, resolveShellEnv: false,
      env: { ...clusterEnv(kubeconfig), RECONCILE_LAB_TEST_TRUST: trust, RECONCILE_LAB_TEST_RESULT: resultFile, ...(process.env.RECONCILE_LAB_TEST_GREP ? { RECONCILE_LAB_TEST_GREP: process.env.RECONCILE_LAB_TEST_GREP } : {}) },
      log: verbose ? (line) => log(`[code-server] ${line}`) : undefined,
    });
    browser = await launchChromium(chromium);
    const page = await browser.newPage();
    let exit;
    const exited = new Promise((res) => (exit = res));
    // Both hooks must exist before the workbench loads: it looks them up when the extension host starts the tests.
    // The automation log carries the workbench's own log as well as the extension host's console: all of it goes to
    // the log file, and from the suite's first line on the terminal gets what is not known workbench chatter.
    let echo = false;
    await page.exposeFunction('codeAutomationLog', (type, args) => {
      const text = format(...(Array.isArray(args) ? args : [args]));
      for (const line of text.split('\n')) {
        lines.push(line);
        appendFileSync(logFile, `${type === 'info' || type === 'log' ? '' : `[${type}] `}${line}\n`);
        echo ||= line.startsWith('[suite] ');
        if (echo && !WORKBENCH_NOISE.test(line)) log(`  ${line}`);
      }
    });
    await page.exposeFunction('codeAutomationExit', (code) => exit(code));
    const remote = (p) => `vscode-remote://${server.host}${p}`;
    const payload = [
      ['extensionDevelopmentPath', remote(root)],
      ['extensionTestsPath', remote(join(root, 'dist/test/suite.js'))],
      ['skipWelcome', 'true'],
    ];
    await page.goto(`${server.url}?folder=${encodeURIComponent(dirs.workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`, { waitUntil: 'domcontentloaded', timeout: sessionTimeoutMs() });
    const code = await Promise.race([
      exited,
      server.exited.then(({ code, signal }) => { throw new Error(`code-server exited during the suite (code ${code}, signal ${signal})`); }),
      limit.promise,
    ]);
    const result = suiteResult(trust, code, resultFile, lines);
    if (result.failed && !echo) log(`  (the suite never started) last log lines:\n${lines.slice(-30).map((l) => `    ${l}`).join('\n')}`);
    if (result.failed) log(`  full log: ${logFile}`);
    return result;
  } catch (e) {
    if (server) e.message += `\n--- code-server output (tail) ---\n${server.output().split('\n').slice(-40).join('\n')}`;
    throw e;
  } finally {
    limit.cancel();
    await browser?.close().catch(() => {});
    await server?.stop();
    dirs.dispose();
  }
}

/** The suite's counts from its result file (or its summary log line), reconciled with the extension host's exit code. */
function suiteResult(trust, exitCode, resultFile, lines) {
  let result;
  if (existsSync(resultFile)) result = JSON.parse(readFileSync(resultFile, 'utf8'));
  else {
    const line = lines.findLast((l) => l.startsWith(RESULT_PREFIX));
    if (line) result = JSON.parse(line.slice(RESULT_PREFIX.length));
  }
  if (!result) {
    return { passed: 0, failed: 1, skipped: 0, failures: [`extension-host suite (${trust}): exited with code ${exitCode} without a result (see its log)`] };
  }
  const failures = result.failures.map((f) => `extension host (${trust}): ${f}`);
  let failed = result.failed;
  if (exitCode !== 0 && failed === 0) {
    failed = 1;
    failures.push(`extension host (${trust}): exited with code ${exitCode} although every test passed`);
  }
  return { passed: result.passed, failed, skipped: result.skipped, failures };
}

/**
 * Runs every test/vscode/ui/*.mjs against one code-server with the extension installed from the repository. Each file
 * gets a fresh page and exports `default async function (t)` with `t` = {
 *   page, url, workspace, kubeconfig, root, screenshotsDir, log,
 *   step(name, fn): runs one check, counted as a test; after a failed step the file's later steps are skipped,
 *   screenshot(name): saves test-output/screenshots/<name>.png and returns its path }.
 */
async function runUiTests({ root, kubeconfig, cs, chromium, log }) {
  const uiDir = join(root, 'test/vscode/ui');
  // RECONCILE_LAB_UI_FILES (a regex over file names, e.g. "timeline") runs a subset of the UI test files.
  const pick = process.env.RECONCILE_LAB_UI_FILES ? new RegExp(process.env.RECONCILE_LAB_UI_FILES) : undefined;
  const files = existsSync(uiDir) ? readdirSync(uiDir).filter((n) => n.endsWith('.mjs') && (!pick || pick.test(n))).sort() : [];
  const result = { passed: 0, failed: 0, skipped: 0, failures: [] };
  if (files.length === 0) return result;
  const screenshotsDir = join(root, 'test-output/screenshots');
  mkdirSync(screenshotsDir, { recursive: true });

  const dirs = sessionDirs('ui');
  let server;
  let browser;
  try {
    await installExtensionCopy(dirs.extensions, root);
    server = await startCodeServer({
      ...cs, userDataDir: dirs.userData, extensionsDir: dirs.extensions, workspace: dirs.workspace,
      disableWorkspaceTrust: true, resolveShellEnv: false, env: clusterEnv(kubeconfig),
      log: verbose ? (line) => log(`[code-server] ${line}`) : undefined,
    });
    browser = await launchChromium(chromium);
    for (const file of files) {
      log(`  ${file}`);
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      let failedStep;
      const t = {
        page, url: server.url, workspace: dirs.workspace, kubeconfig, root, screenshotsDir, log,
        screenshot: async (name) => {
          const path = join(screenshotsDir, `${name}.png`);
          await page.screenshot({ path });
          return path;
        },
        step: async (name, fn) => {
          if (failedStep) {
            result.skipped++;
            log(`    - ${name} (skipped: "${failedStep}" failed)`);
            return;
          }
          const started = Date.now();
          try {
            await fn();
            result.passed++;
            log(`    ✔ ${name} (${Date.now() - started} ms)`);
          } catch (e) {
            failedStep = name;
            result.failed++;
            result.failures.push(`ui ${file}: ${name}: ${String(e?.message ?? e).split('\n')[0]}`);
            log(`    ✖ ${name}\n${indent(e?.stack ?? String(e))}`);
            const shot = join(screenshotsDir, `failed-${basename(file, '.mjs')}.png`);
            await page.screenshot({ path: shot }).then(() => log(`      screenshot: ${shot}`), () => {});
            // What the extension said meanwhile (a command that ended early says why only there).
            for (const f of extensionLogs(dirs.userData)) log(`      ${basename(f)} (tail):\n${indent(readFileSync(f, 'utf8').trimEnd().split('\n').slice(-30).join('\n'))}`);
          }
        },
      };
      const limit = deadline(sessionTimeoutMs(), `${file} did not finish within ${sessionTimeoutMs()} ms`);
      try {
        const mod = await import(pathToFileURL(join(uiDir, file)).href);
        await Promise.race([mod.default(t), limit.promise]);
      } catch (e) {
        result.failed++;
        result.failures.push(`ui ${file}: ${String(e?.message ?? e).split('\n')[0]}`);
        log(`    ✖ ${file}\n${indent(e?.stack ?? String(e))}`);
      } finally {
        limit.cancel();
        await context.close().catch(() => {});
      }
    }
    return result;
  } catch (e) {
    if (server) e.message += `\n--- code-server output (tail) ---\n${server.output().split('\n').slice(-40).join('\n')}`;
    throw e;
  } finally {
    await browser?.close().catch(() => {});
    await server?.stop();
    dirs.dispose();
  }
}

/** The extension's output channel logs code-server wrote under `userData` (files named after its channels). */
function extensionLogs(userData) {
  const found = [];
  const walk = (dir, depth) => {
    let entries = [];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory() && depth < 6) walk(p, depth + 1);
      else if (e.isFile() && /Reconcile Lab.*\.log$/.test(e.name)) found.push(p);
    }
  };
  walk(join(userData, 'logs'), 0);
  return found;
}

function indent(text) {
  return text.split('\n').map((l) => `      ${l}`).join('\n');
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const opt = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const root = resolve(import.meta.dirname, '../..');
  let kubeconfig = opt('--kubeconfig') ?? process.env.RECONCILE_LAB_KUBECONFIG;
  let controlPlane;
  let r;
  try {
    if (!kubeconfig) {
      const { startLocalControlPlane } = await import(pathToFileURL(join(root, 'src/core/controlplane/localControlPlane.ts')).href);
      controlPlane = await startLocalControlPlane({ log: (line) => console.log(`[control-plane] ${line}`) });
      kubeconfig = controlPlane.kubeconfigPath;
    }
    r = await runVsCodeSuites({ root, kubeconfig, only: opt('--only')?.split(',') });
  } finally {
    await controlPlane?.stop();
  }
  if (r.failures.length) console.log(`\nFailures:\n${r.failures.map((f) => `  - ${f}`).join('\n')}`);
  console.log(`\n${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped`);
  process.exitCode = r.failed > 0 || r.passed === 0 ? 1 : 0;
}
