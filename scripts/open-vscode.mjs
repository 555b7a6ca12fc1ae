#!/usr/bin/env node
// Opens VS Code with the extension loaded, for `npm run lab`: desktop VS Code when `code` is on PATH (an Extension
// Development Host window on the repository), otherwise code-server on loopback for a browser, with the extension
// installed from the repository folder into the lab's own extensions dir. Either way VS Code gets
// RECONCILE_LAB_KUBECONFIG and KUBECONFIG, so the extension connects to that cluster on start-up.
//
// Standalone: node scripts/open-vscode.mjs [--kubeconfig <path>] [--workspace <folder>] [--browser] [--port <n>]
//   (runs until Ctrl-C, then stops code-server).
import { existsSync, statSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { delimiter, join, resolve } from 'node:path';
import { cacheDir, ensureCodeServer, installExtensionCopy, startCodeServer } from './code-server.mjs';

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

if (import.meta.main) {
  const args = process.argv.slice(2);
  const opt = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const root = resolve(import.meta.dirname, '..');
  const kubeconfig = opt('--kubeconfig') ?? process.env.RECONCILE_LAB_KUBECONFIG ?? process.env.KUBECONFIG ?? join(process.env.HOME ?? '', '.kube/config');
  if (!existsSync(kubeconfig)) console.warn(`[lab] warning: kubeconfig ${kubeconfig} does not exist`);
  const vscode = await openVsCode({
    root, kubeconfig, workspace: resolve(opt('--workspace') ?? root),
    mode: args.includes('--browser') ? 'browser' : undefined,
    port: opt('--port') ? Number(opt('--port')) : undefined,
  });
  if (vscode.mode === 'browser') {
    console.log('[lab] Ctrl-C stops it');
    const stop = () => vscode.dispose().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    await vscode.exited;
  }
}
