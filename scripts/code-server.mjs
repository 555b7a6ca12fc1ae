// code-server as a real VS Code for the extension: install (cached by version), start, stop. Shared by
// test/vscode/run.mjs (extension-host suite and UI tests) and scripts/open-vscode.mjs (`npm run lab`).
//
// Ownership: every server returned by startCodeServer() runs in a process group of its own (the VS Code server, its
// extension hosts, pty host and file watchers); its `stop()` ends the whole group and must be called by whoever
// started it. If the starting process dies without calling it (SIGKILL, a crash), the group is registered with that
// process's parent-death watchdog (src/core/process/ownerWatchdog.ts), which ends it. Temp folders passed in stay
// the caller's to remove.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { protectProcessGroup } from '../src/core/process/ownerWatchdog.ts';

const root = resolve(import.meta.dirname, '..');

/** Where code-server and its state live: ${RECONCILE_LAB_CACHE:-$HOME/.cache/reconcile-lab}. */
export function cacheDir() {
  return process.env.RECONCILE_LAB_CACHE ?? join(process.env.HOME ?? '/tmp', '.cache', 'reconcile-lab');
}

/**
 * Installs code-server and its Node if needed (scripts/install-code-server.sh; a warm cache returns in well under a
 * second) and resolves to `{ entry, node }`: code-server's out/node/entry.js and the Node binary that must run it.
 * Progress of a cold install is written through `log`.
 */
export function ensureCodeServer({ log = (line) => console.error(line) } = {}) {
  return new Promise((resolvePaths, reject) => {
    const child = spawn('bash', [join(root, 'scripts/install-code-server.sh')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => {
      err += d;
      for (const line of d.split('\n')) if (line.trim()) log(line);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const entry = /^CODE_SERVER_ENTRY=(.+)$/m.exec(out)?.[1];
      const node = /^CODE_SERVER_NODE=(.+)$/m.exec(out)?.[1];
      if (code === 0 && entry && node) resolvePaths({ entry, node });
      else reject(new Error(`scripts/install-code-server.sh failed (exit ${code}):\n${err.slice(-4000)}`));
    });
  });
}

/** The extension's manifest and its installed folder name `<publisher>.<name>-<version>`. */
export function extensionFolderName(extRoot = root) {
  const pkg = JSON.parse(readFileSync(join(extRoot, 'package.json'), 'utf8'));
  return { pkg, id: `${pkg.publisher}.${pkg.name}`, folder: `${pkg.publisher}.${pkg.name}-${pkg.version}` };
}

/**
 * Installs the extension built in `extRoot` into `extensionsDir` as a folder copy of exactly the files its .vsix
 * carries (vsce's own file list, .vscodeignore applied: package.json, dist/, media/, the Go bridge module that Set Up
 * Go Bridge… points go.mod at, samples/, what Start Local Control Plane builds), replacing any earlier copy of the
 * same extension. Returns the installed folder. `dist/` must have been built.
 */
export async function installExtensionCopy(extensionsDir, extRoot = root) {
  const { pkg, id, folder } = extensionFolderName(extRoot);
  if (!existsSync(join(extRoot, pkg.main ?? 'dist/extension.js'))) {
    throw new Error(`${pkg.main} is missing: build the extension first (npm run build)`);
  }
  const { listFiles, PackageManager } = await import('@vscode/vsce');
  const files = await listFiles({ cwd: extRoot, packageManager: PackageManager.None });
  mkdirSync(extensionsDir, { recursive: true });
  for (const name of readdirSync(extensionsDir)) {
    if (name.startsWith(`${id}-`)) rmSync(join(extensionsDir, name), { recursive: true, force: true });
  }
  const target = join(extensionsDir, folder);
  mkdirSync(target);
  for (const file of files) {
    const to = join(target, file);
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(join(extRoot, file), to);
  }
  // VS Code keeps a registry of installed extensions (extensions.json). Without one it scans the folder and writes it;
  // with one it loads only what is listed. So replace this extension's entry (a stale one may name another version's
  // folder) with one for the copy, in the form VS Code writes, and keep everything else the person installed.
  const registry = join(extensionsDir, 'extensions.json');
  if (existsSync(registry)) {
    let entries;
    try {
      entries = JSON.parse(readFileSync(registry, 'utf8'));
    } catch {
      entries = undefined;
    }
    if (Array.isArray(entries)) {
      const others = entries.filter((e) => String(e?.identifier?.id).toLowerCase() !== id.toLowerCase());
      others.push({
        identifier: { id },
        version: pkg.version,
        location: { $mid: 1, path: target, scheme: 'file' },
        relativeLocation: folder,
      });
      writeFileSync(registry, JSON.stringify(others));
    } else rmSync(registry); // unreadable: let VS Code rebuild it from the folders
  }
  return target;
}

/**
 * User settings for a focused workbench: no welcome page or chat side bar in the way, nothing that calls the
 * (unreachable) marketplace, no telemetry.
 */
export const QUIET_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'workbench.enableExperiments': false,
  'chat.disableAIFeatures': true,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'telemetry.telemetryLevel': 'off',
};

/**
 * Starts code-server bound to loopback and resolves once it listens.
 *
 * Options: entry, node (from ensureCodeServer), userDataDir, extensionsDir (created if missing), workspace (folder the
 * server opens by default), host ('127.0.0.1'), port (0 = any free port), disableWorkspaceTrust (default true),
 * smokeTestDriver (VS Code's `enable-smoke-test-driver`, which makes the workbench honour the URL `payload` that
 * loads development extensions and extension tests), resolveShellEnv (default true: extension hosts get a login
 * shell's environment, as in desktop VS Code; tests turn it off and pass what they need in env), env (added to the server's environment, which its extension
 * hosts inherit), settings (user settings written to <userDataDir>/User/settings.json unless that file exists;
 * default QUIET_SETTINGS), log (receives every server output line), startTimeoutMs (default 60 s).
 *
 * Resolves to { url, host, port, pid, exited, output(), stop() }: `url` ends with '/', `exited` settles when the server
 * process exits, `output()` returns the recent server output, `stop()` ends the whole process group (SIGTERM, then
 * SIGKILL after 5 s) and is idempotent.
 */
export async function startCodeServer(options) {
  const {
    entry, node, userDataDir, extensionsDir, workspace, host = '127.0.0.1', port = 0, disableWorkspaceTrust = true,
    smokeTestDriver = false, resolveShellEnv = true, env = {}, settings = QUIET_SETTINGS, log = () => {}, startTimeoutMs = 60_000,
  } = options;
  mkdirSync(join(userDataDir, 'User'), { recursive: true });
  const settingsFile = join(userDataDir, 'User', 'settings.json');
  if (!existsSync(settingsFile)) writeFileSync(settingsFile, `${JSON.stringify(settings, null, 2)}\n`);
  mkdirSync(extensionsDir, { recursive: true });
  // An explicit (empty) config keeps code-server from writing ~/.config/code-server/config.yaml with a password.
  const config = join(userDataDir, 'code-server.yaml');
  if (!existsSync(config)) writeFileSync(config, 'auth: none\n');
  const args = [
    entry, '--auth', 'none', '--bind-addr', `${host}:${port}`, '--config', config,
    '--user-data-dir', userDataDir, '--extensions-dir', extensionsDir,
    '--disable-telemetry', '--disable-update-check', '--disable-getting-started-override', '--ignore-last-opened',
  ];
  if (disableWorkspaceTrust) args.push('--disable-workspace-trust');
  if (smokeTestDriver) args.push('--vscode-option', 'enable-smoke-test-driver');
  // Tests pass the environment they need: skip resolving a login shell's environment, which delays the extension
  // host's start by minutes on a loaded machine ("Unable to resolve your shell environment in a reasonable time").
  if (!resolveShellEnv) args.push('--vscode-option', 'force-disable-user-env');
  if (workspace) args.push(workspace);

  const child = spawn(node, args, {
    // VSCODE_IPC_HOOK_CLI would make a `code` inside another VS Code talk to that one.
    env: { ...process.env, VSCODE_IPC_HOOK_CLI: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so stop() reaches the extension hosts too
  });
  const guard = protectProcessGroup(child.pid);
  const recent = [];
  let exitState;
  const exited = new Promise((res) => {
    child.on('exit', (code, signal) => {
      // The server is gone: end what is left of its group (extension hosts), then stop watching its pgid.
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // ESRCH: the group is already empty
      }
      guard.dispose();
      res((exitState ??= { code, signal }));
    });
    child.on('error', (error) => {
      guard.dispose();
      res((exitState ??= { code: null, signal: null, error }));
    });
  });
  let onLine = () => {};
  for (const stream of [child.stdout, child.stderr]) {
    let buf = '';
    stream.setEncoding('utf8').on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        recent.push(line);
        if (recent.length > 400) recent.shift();
        log(line);
        onLine(line);
      }
    });
  }

  let stopping;
  const stop = () => (stopping ??= (async () => {
    const kill = (sig) => {
      try {
        process.kill(-child.pid, sig);
      } catch {
        // ESRCH: the group is already gone
      }
    };
    if (!exitState) {
      kill('SIGTERM');
      const timer = new Promise((res) => setTimeout(res, 5_000).unref());
      await Promise.race([exited, timer]);
    }
    kill('SIGKILL'); // whatever is left of the group (extension hosts that ignored SIGTERM)
    await exited;
  })());

  try {
    const url = await new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`code-server did not listen within ${startTimeoutMs} ms`)), startTimeoutMs);
      onLine = (line) => {
        const m = /HTTP server listening on (http:\/\/\S+?)\/?\s*$/.exec(line);
        if (m) {
          clearTimeout(timer);
          res(`${m[1]}/`);
        }
      };
      exited.then(({ code, signal, error }) => {
        clearTimeout(timer);
        rej(error ?? new Error(`code-server exited before listening (code ${code}, signal ${signal})`));
      });
    });
    onLine = () => {};
    const u = new URL(url);
    return { url, host: u.host, port: Number(u.port), pid: child.pid, exited, output: () => recent.join('\n'), stop };
  } catch (e) {
    await stop();
    e.message += `\n--- code-server output ---\n${recent.slice(-60).join('\n')}`;
    throw e;
  }
}
