#!/usr/bin/env node
// Opens VS Code with the extension loaded, for `npm run lab`: desktop VS Code when `code` is on PATH (an Extension
// Development Host window on the repository), otherwise code-server on loopback for a browser, with the extension
// installed from the repository folder into the lab's own extensions dir. Either way VS Code gets
// RECONCILE_LAB_KUBECONFIG and KUBECONFIG, so the extension connects to that cluster on start-up.
//
// Standalone: node scripts/run.cjs open-vscode --help (OPEN_VSCODE_USAGE); runs until Ctrl-C, then stops code-server.
import { existsSync, statSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireScriptNode } from './scriptNode.mjs';

/** The `code` launcher on PATH, if any. */
export function findDesktopCode() {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, 'code');
    try {
      if (statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Opens VS Code on `workspace` with the extension in `root` and the cluster in `kubeconfig`.
 *
 * @param {object} options
 * @param {string} options.root        the extension's repository root (dist/ built)
 * @param {string} options.kubeconfig  kubeconfig of the cluster the extension should connect to
 * @param {string} options.workspace   folder to open
 * @param {'auto'|'desktop'|'browser'} [options.mode]  default env RECONCILE_LAB_VSCODE or 'auto' (desktop if `code`
 *   is on PATH)
 * @param {number} [options.port]      code-server port on 127.0.0.1 (default env RECONCILE_LAB_PORT or 0 = any free)
 * @param {(line: string) => void} [options.log]
 * @returns {Promise<{ mode: 'desktop'|'browser', url?: string, exited?: Promise<unknown>, dispose(): Promise<void> }>}
 *   browser: `url` to open, `exited` settles if code-server stops by itself, `dispose()` stops code-server and its
 *   extension host (idempotent). desktop: the window belongs to the user; `dispose()` has nothing to stop.
 */
export async function openVsCode({ root, kubeconfig, workspace, mode = process.env.RECONCILE_LAB_VSCODE ?? 'auto', port, log = (line) => console.log(line) }) {
  // RECONCILE_LAB_SHOW_VIEWS: the window opens on the Reconcile Lab views (not the Explorer).
  const env = { RECONCILE_LAB_KUBECONFIG: kubeconfig, KUBECONFIG: kubeconfig, RECONCILE_LAB_SHOW_VIEWS: '1' };
  const code = mode === 'browser' ? undefined : findDesktopCode();
  if (mode === 'desktop' && !code) throw new Error('`code` (desktop VS Code) is not on PATH');

  if (code) {
    const args = ['--new-window', `--extensionDevelopmentPath=${root}`, workspace];
    log(`opening desktop VS Code: code ${args.join(' ')}`);
    await new Promise((res, rej) => {
      // The launcher hands the window to the VS Code app and exits.
      const child = spawn(code, args, { env: { ...process.env, ...env }, stdio: 'inherit' });
      child.on('error', rej);
      child.on('exit', (status) => (status === 0 ? res() : rej(new Error(`code exited with ${status}`))));
    });
    return { mode: 'desktop', dispose: async () => {} };
  }

  // Loaded here, not at the top: code-server.mjs loads TypeScript sources (see scriptNode.mjs).
  const { cacheDir, ensureCodeServer, installExtensionCopy, startCodeServer } = await import('./code-server.mjs');
  const cs = await ensureCodeServer({ log: (line) => log(`[install] ${line}`) });
  const labDir = join(cacheDir(), 'lab');
  // One extensions folder per checkout: two checkouts' labs (or a lab beside a worktree's) would otherwise replace
  // each other's copy of the extension, and a running window would load the other checkout's build.
  const extensionsDir = join(labDir, `extensions-${createHash('sha256').update(resolve(root)).digest('hex').slice(0, 12)}`);
  const installed = await installExtensionCopy(extensionsDir, root);
  log(`extension installed at ${installed}`);
  const server = await startCodeServer({
    ...cs,
    userDataDir: join(labDir, 'user-data'), // kept between runs: the person's settings and layout
    extensionsDir,
    workspace,
    port: port ?? Number(process.env.RECONCILE_LAB_PORT ?? 0),
    env,
  });
  const url = `${server.url}?folder=${encodeURIComponent(workspace)}`;
  log(`VS Code (code-server) is at ${url}`);
  return { mode: 'browser', url, exited: server.exited, dispose: () => server.stop() };
}

/** What `node scripts/run.cjs open-vscode --help` prints. */
export const OPEN_VSCODE_USAGE = `usage: node scripts/run.cjs open-vscode [--kubeconfig <path>] [--workspace <folder>] [--browser] [--port <n>]

Opens VS Code with Reconcile Lab loaded from this repository (build it first: npm run build), connected to the
cluster of the kubeconfig: desktop VS Code when \`code\` is on PATH, otherwise code-server on 127.0.0.1 for a
browser (Ctrl-C stops it). npm run lab does this for you after starting its local control plane.

options:
  --kubeconfig <path>   the cluster to connect to (default: RECONCILE_LAB_KUBECONFIG, KUBECONFIG, ~/.kube/config)
  --workspace <folder>  the folder VS Code opens (default: the repository)
  --browser             code-server in a browser even when desktop \`code\` is on PATH
  --port <n>            code-server's port on 127.0.0.1 (default: any free port)
  -h, --help            print this text
`;

/**
 * Parses the standalone command line.
 *
 * @param {string[]} args
 * @returns {{ help: true } | { help: false, kubeconfig?: string, workspace?: string, browser: boolean, port?: number }}
 * @throws {Error} naming the offending argument: an unknown option, a missing value, a bad port
 */
export function parseOpenVsCodeArgs(args) {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        kubeconfig: { type: 'string' },
        workspace: { type: 'string' },
        browser: { type: 'boolean', default: false },
        port: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    // node:util's own wording suggests `--` for an unknown option, which this command has no use for.
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new Error(`unknown option ${args.find((a) => a.startsWith('-') && !['--kubeconfig', '--workspace', '--browser', '--port', '--help', '-h'].includes(a.split('=')[0])) ?? ''}`.trim());
    if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new Error(e.message.replace(/^Option '(--\w+)[^']*' argument missing$/, '$1 needs a value'));
    throw e;
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (positionals.length) throw new Error(`unexpected argument ${positionals[0]} (the folder is given with --workspace)`);
  if (values.port !== undefined && (!/^\d+$/.test(values.port) || Number(values.port) > 65535)) throw new Error(`--port needs a port number from 0 to 65535 (got ${values.port})`);
  return {
    help: false,
    browser: values.browser,
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.workspace !== undefined ? { workspace: values.workspace } : {}),
    ...(values.port !== undefined ? { port: Number(values.port) } : {}),
  };
}

// import.meta.main is undefined before Node 24: then the script path decides, so an old Node gets requireScriptNode's message.
if (import.meta.main ?? (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url))) {
  requireScriptNode('open-vscode');
  let parsed;
  try {
    parsed = parseOpenVsCodeArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`open-vscode: ${e.message}\n${OPEN_VSCODE_USAGE.split('\n')[0]}  (--help lists the options)`);
    process.exit(2);
  }
  if (parsed.help) {
    process.stdout.write(OPEN_VSCODE_USAGE);
    process.exit(0);
  }
  const root = resolve(import.meta.dirname, '..');
  const kubeconfig = parsed.kubeconfig ?? process.env.RECONCILE_LAB_KUBECONFIG ?? process.env.KUBECONFIG ?? join(process.env.HOME ?? '', '.kube/config');
  if (!existsSync(kubeconfig)) console.warn(`[lab] warning: kubeconfig ${kubeconfig} does not exist`);
  const vscode = await openVsCode({
    root, kubeconfig, workspace: resolve(parsed.workspace ?? root),
    mode: parsed.browser ? 'browser' : undefined,
    port: parsed.port,
  });
  if (vscode.mode === 'browser') {
    console.log('[lab] Ctrl-C stops it');
    const stop = () => vscode.dispose().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    await vscode.exited;
  }
}
