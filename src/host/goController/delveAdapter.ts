import * as vscode from 'vscode';
import { join } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import * as ui from '../ui.ts';
import { readSettings } from '../config.ts';
import { DELVE_MODULE, DELVE_VERSION, findDelve, installDelve, startDelveDap, type DelveServer } from '../../core/bridge/delve.ts';
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
 *   - Delve is the `reconcileLab.goController.delvePath` setting, else one found on PATH / GOBIN / GOPATH, else the
 *     pinned version installed before into the extension's storage, else installed now with `go install` after the
 *     user agreed.
 */
export class DelveAdapter implements vscode.Disposable {
  private registration: vscode.Disposable | undefined;
  private readonly servers = new Map<string, DelveServer>();
  private readonly subscriptions: vscode.Disposable[] = [];
  private installing: Promise<string> | undefined;

  private readonly storageDir: string;
  private readonly log: Logger;

  constructor(storageDir: string, log: Logger) {
    this.storageDir = storageDir;
    this.log = log;
    this.update();
    this.subscriptions.push(
      vscode.extensions.onDidChange(() => this.update()),
      vscode.debug.onDidTerminateDebugSession((s) => this.stop(s.id)),
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
    this.servers.set(session.id, server);
    void server.exited.then(() => {
      if (this.servers.get(session.id) === server) this.servers.delete(session.id);
    });
    this.log.info('debugging with Delve (dlv dap)', { dlv, port: server.port, session: session.name });
    return new vscode.DebugAdapterServer(server.port, '127.0.0.1');
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
      const answer = await ui.info(
        `Debugging a Go program needs Delve, the Go debugger, and none was found (PATH, GOBIN, GOPATH/bin). Install Delve ${DELVE_VERSION} now with "go install ${DELVE_MODULE}@${DELVE_VERSION}" (about a minute; into Reconcile Lab's storage, nothing else changes)? VS Code's Go extension would debug it too.`,
        'Install Delve',
      );
      if (answer !== 'Install Delve') throw new Error('Delve is needed to debug a Go program: install it (or VS Code\'s Go extension), or set reconcileLab.goController.delvePath, and start again.');
      const installing = Promise.resolve(ui.progress({ location: vscode.ProgressLocation.Notification, title: `Reconcile Lab: installing Delve ${DELVE_VERSION} (go install)…` }, () => installDelve(installDir)));
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
    this.registration?.dispose();
    this.registration = undefined;
    for (const s of this.subscriptions) s.dispose();
    for (const server of this.servers.values()) server.dispose();
    this.servers.clear();
  }
}

/** Where dlv runs: the configuration's cwd, else its program's directory (a directory, or a file's). */
function cwdOf(session: vscode.DebugSession): string | undefined {
  const c = session.configuration;
  if (typeof c.cwd === 'string' && c.cwd && existsSync(c.cwd)) return c.cwd;
  if (typeof c.program === 'string' && existsSync(c.program)) return statSync(c.program).isDirectory() ? c.program : join(c.program, '..');
  return session.workspaceFolder?.uri.fsPath;
}
