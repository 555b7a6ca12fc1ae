import * as vscode from 'vscode';
import { join } from 'node:path';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as ui from '../ui.ts';
import { readSettings } from '../config.ts';
import { DELVE_MODULE, DELVE_VERSION, envFilesOf, findDelve, installDelve, readEnvFiles, startDelveDap, type DelveServer } from '../../core/bridge/delve.ts';
import type { Logger } from '../../core/log.ts';

/** VS Code's Go extension: while it is installed, it debugs `go` configurations and this adapter stays away. */
export const GO_EXTENSION_ID = 'golang.go';

/**
 * F5 on a Go launch configuration without VS Code's Go extension (a fresh editor, code-server without the
 * marketplace): a debug adapter for type `go` that runs Delve's own DAP server, `dlv dap`, so the
 * "Debug with Reconcile Lab" configuration works as it does under the Go extension (the configuration provider in
 * debugProvider.ts adds the bridge's environment either way).
 *
 * Contracts:
 *   - Registered only while the Go extension is not installed; when it gets installed the registration is
 *     disposed at once (VS Code allows one adapter factory per type, and the Go extension's must win).
 *   - Trusted workspaces only: the adapter builds and runs the workspace's program.
 *   - One `dlv dap` per debug session, in its own process group with the debuggee; it is killed when the session
 *     terminates and when the extension is disposed, so no debugger or debuggee outlives its owner.
 *   - A program Delve builds goes into a temporary directory of its session (withOutput), not Delve's default
 *     `__debug_bin…` in the program's own folder; the directory is removed when the session ends.
 *   - Delve is the `reconcileLab.goController.delvePath` setting, else one found on PATH / GOBIN / GOPATH, else the
 *     pinned version installed before into the extension's storage, else installed now with `go install` after the
 *     user agreed.
 */
export class DelveAdapter implements vscode.Disposable {
  private registration: vscode.Disposable | undefined;
  private readonly servers = new Map<string, DelveServer>();
  private readonly subscriptions: vscode.Disposable[] = [];
  private installing: Promise<string> | undefined;
  /** The temporary directories Delve builds launched programs into (withOutput), removed when their session ends. */
  private readonly outputDirs = new Set<string>();
  /** Aborts a running `go install` of Delve (cancelled from its progress notification, or the extension stopped). */
  private readonly aborts = new Set<AbortController>();
  private disposed = false;

  private readonly storageDir: string;
  private readonly log: Logger;

  constructor(storageDir: string, log: Logger) {
    this.storageDir = storageDir;
    this.log = log;
    this.update();
    this.subscriptions.push(
      vscode.extensions.onDidChange(() => this.update()),
      vscode.debug.onDidTerminateDebugSession((s) => {
        this.stop(s.id);
        this.removeOutput(s.configuration.output);
      }),
    );
  }

  /** Whether this adapter debugs `go` configurations now (the Go extension is not installed). */
  get active(): boolean {
    return this.registration !== undefined;
  }

  private update(): void {
    const goExtension = vscode.extensions.getExtension(GO_EXTENSION_ID) !== undefined;
    if (goExtension && this.registration) {
      this.registration.dispose();
      this.registration = undefined;
      this.log.info('the Go extension is installed: it debugs Go configurations from now on');
    } else if (!goExtension && !this.registration) {
      this.registration = vscode.debug.registerDebugAdapterDescriptorFactory('go', { createDebugAdapterDescriptor: (session) => this.create(session) });
    }
  }

  private async create(session: vscode.DebugSession): Promise<vscode.DebugAdapterDescriptor> {
    if (!vscode.workspace.isTrusted) {
      throw new Error('Reconcile Lab debugs Go programs only in a trusted workspace (debugging builds and runs the workspace\'s code). Trust the folder (Manage Workspace Trust) and start again.');
    }
    const dlv = await this.delve();
    const cwd = cwdOf(session);
    const server = await startDelveDap(dlv, { ...(cwd ? { cwd } : {}) });
    // The window closed (the extension stopped) while Delve was installed or started: this dlv would serve nobody.
    if (this.disposed) {
      server.dispose();
      throw new Error('Reconcile Lab stopped before Delve was ready.');
    }
    this.servers.set(session.id, server);
    void server.exited.then(() => {
      if (this.servers.get(session.id) === server) this.servers.delete(session.id);
    });
    this.log.info('debugging with Delve (dlv dap)', { dlv, port: server.port, session: session.name });
    return new vscode.DebugAdapterServer(server.port, '127.0.0.1');
  }

  /**
   * config with `output` (where Delve puts the program it builds) in a fresh temporary directory, while this adapter
   * debugs: Delve's default is `__debug_bin<random>` in the program's own folder, an untracked file in the developer's
   * repository for as long as the session runs (and left behind when dlv is killed). Returned untouched: a
   * configuration with its own `output`, an attach, and modes that build nothing (exec, core, replay). Call it with
   * the configuration about to start (resolveDebugConfigurationWithSubstitutedVariables); the directory goes when the
   * session terminates, or at dispose for a configuration that never started.
   */
  withOutput(config: vscode.DebugConfiguration): vscode.DebugConfiguration {
    const mode = (config.mode as unknown) ?? 'debug';
    if (!this.active || config.request !== 'launch' || config.output !== undefined || (mode !== 'debug' && mode !== 'test')) return config;
    const dir = mkdtempSync(join(tmpdir(), 'reconcile-lab-dlv-'));
    this.outputDirs.add(dir);
    return { ...config, output: join(dir, mode === 'test' ? '__debug_test_bin' : '__debug_bin') };
  }

  /**
   * config with `outputMode: "remote"` while this adapter debugs a launch that sets none: Delve then sends the
   * program's stdout and stderr as the debug adapter's output events (the Debug Console, and what the debug session's
   * tracker reads, such as client-go's lease lines), where its default writes them to dlv's own output, which nobody
   * shows. Returned untouched otherwise (the Go extension shows the program's output itself).
   */
  withProgramOutput(config: vscode.DebugConfiguration): vscode.DebugConfiguration {
    if (!this.active || config.request !== 'launch' || config.outputMode !== undefined) return config;
    return { ...config, outputMode: 'remote' };
  }

  /**
   * config with the variables of its `envFile` (a path, or a list read in order) put into `env`, under those `env`
   * gives itself (and so under the bridge's), while this adapter debugs: the Go extension reads `envFile` itself and
   * `dlv dap` does not know it, so without this its variables were silently missing. Returned untouched when there is
   * no `envFile` or the Go extension debugs. Throws with the file and the reason when one cannot be read.
   */
  withEnvFile(config: vscode.DebugConfiguration): vscode.DebugConfiguration {
    if (!this.active || config.envFile === undefined) return config;
    const { env: fromFiles } = readEnvFiles(envFilesOf(config.envFile), (f) => {
      try {
        return readFileSync(f, 'utf8');
      } catch (e) {
        throw new Error(`could not read the envFile ${f} of the launch configuration "${String(config.name)}" (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      }
    });
    const { envFile: _read, ...rest } = config;
    return { ...rest, env: { ...fromFiles, ...((config.env as Record<string, string> | undefined) ?? {}) } } as vscode.DebugConfiguration;
  }

  private removeOutput(output: unknown): void {
    if (typeof output !== 'string') return;
    const dir = join(output, '..');
    if (!this.outputDirs.delete(dir)) return;
    rmSync(dir, { recursive: true, force: true });
  }

  /** The dlv to debug with (see the class contract); rejects with what to do when there is none and none is installed. */
  private async delve(): Promise<string> {
    const configured = readSettings()['goController.delvePath'].trim();
    const installDir = join(this.storageDir, 'delve');
    const found = findDelve({ ...(configured ? { configured } : {}), installDir });
    if (found) {
      if (configured && !existsSync(configured)) throw new Error(`Delve was not found at ${configured} (the setting reconcileLab.goController.delvePath).`);
      return found;
    }
    if (!this.installing) {
      // Modal: the debug session waits for the answer, and a notification would hide itself after a few seconds,
      // leaving F5 to look hung.
      const answer = await ui.confirmModal(
        'Debugging a Go program needs Delve, the Go debugger, and none was found (PATH, GOBIN, GOPATH/bin).',
        `Install Delve ${DELVE_VERSION} now with "go install ${DELVE_MODULE}@${DELVE_VERSION}"? It takes about a minute and goes into Reconcile Lab's storage; nothing else changes.\n\nOr install Delve yourself (or VS Code's Go extension, which then debugs), or set reconcileLab.goController.delvePath, and press F5 again.`,
        'Install Delve',
      );
      if (answer !== 'Install Delve') throw new Error('Delve is needed to debug a Go program: install it (or VS Code\'s Go extension), or set reconcileLab.goController.delvePath, and start again.');
      const installing = Promise.resolve(
        ui.progress({ location: vscode.ProgressLocation.Notification, title: `Reconcile Lab: installing Delve ${DELVE_VERSION} (go install)…`, cancellable: true }, (_p, token) => {
          const abort = new AbortController();
          const sub = token.onCancellationRequested(() => abort.abort());
          this.aborts.add(abort);
          return installDelve(installDir, { signal: abort.signal })
            .catch((e: unknown) => {
              throw abort.signal.aborted ? new Error('The Delve install was cancelled; press F5 to start again.') : e;
            })
            .finally(() => {
              sub.dispose();
              this.aborts.delete(abort);
            });
        }),
      );
      this.installing = installing;
      installing.catch(() => {
        if (this.installing === installing) this.installing = undefined;
      });
    }
    return this.installing;
  }

  private stop(sessionId: string): void {
    const server = this.servers.get(sessionId);
    this.servers.delete(sessionId);
    server?.dispose();
  }

  dispose(): void {
    this.disposed = true;
    for (const a of this.aborts) a.abort();
    this.aborts.clear();
    this.registration?.dispose();
    this.registration = undefined;
    for (const s of this.subscriptions) s.dispose();
    for (const server of this.servers.values()) server.dispose();
    this.servers.clear();
    for (const dir of this.outputDirs) rmSync(dir, { recursive: true, force: true });
    this.outputDirs.clear();
  }
}

/** Where dlv runs: the configuration's cwd, else its program's directory (a directory, or a file's). */
function cwdOf(session: vscode.DebugSession): string | undefined {
  const c = session.configuration;
  if (typeof c.cwd === 'string' && c.cwd && existsSync(c.cwd)) return c.cwd;
  if (typeof c.program === 'string' && existsSync(c.program)) return statSync(c.program).isDirectory() ? c.program : join(c.program, '..');
  return session.workspaceFolder?.uri.fsPath;
}
