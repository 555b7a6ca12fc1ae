import * as vscode from 'vscode';
import * as ui from '../ui.ts';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { envFilesOf, readEnvFiles } from '../../core/bridge/delve.ts';
import { defaultDebugArgs, defaultDebugProgram, kubeconfigReplacedNote, leaderElectionFlag, leaderElectionFlagOf, leaderElectionFlagText } from '../../core/bridge/launcher.ts';
import { bridgeProblemIn, defaultWebhookCertPath, webhooksWouldStop } from '../../core/bridge/goModule.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import { DelveAdapter } from './delveAdapter.ts';

/** The launch-configuration flag that opts a Go debug configuration into Reconcile Lab. */
export const DEBUG_FLAG = 'reconcileLab';

/**
 * "Debug with Reconcile Lab": for Go launch configurations that carry
 * `"reconcileLab": true`, injects the bridge's environment (address, token,
 * and KUBECONFIG of the connection) so F5 under the Go extension runs the
 * controller connected to the views, connecting first (with the settings)
 * when the window is not connected yet. Warns when leader election looks on
 * (a breakpoint longer than the lease loses leadership). Any other
 * configuration is returned untouched.
 */
export function registerGoDebugging(lab: ReconcileLab, storageDir: string): vscode.Disposable[] {
  // Without the Go extension, Reconcile Lab debugs `go` configurations with Delve's own adapter (delveAdapter.ts).
  const delve = new DelveAdapter(storageDir, lab.log);
  const provider: vscode.DebugConfigurationProvider = {
    provideDebugConfigurations(folder) {
      return delve.active ? [defaultDebugConfiguration(folder?.uri.fsPath)] : [];
    },
    async resolveDebugConfiguration(folder, config) {
      // F5 with no launch.json (VS Code passes an empty configuration): debug the controller with Reconcile Lab.
      const generated = delve.active && !config.type && !config.request && !config.name;
      if (generated) config = defaultDebugConfiguration(folder?.uri.fsPath);
      if (config[DEBUG_FLAG] !== true) return config;
      if (!vscode.workspace.isTrusted) {
        void ui.warn('Reconcile Lab: the workspace is not trusted, so the debug session starts without Reconcile Lab.');
        return config;
      }
      // Not connected yet: connect with the settings first (the kubeconfig and context Connect would use), so F5 is
      // all it takes; a connection that fails leaves the debug session to start without Reconcile Lab.
      let s = lab.session;
      if (!s) {
        try {
          s = await ui.progress({ location: vscode.ProgressLocation.Notification, title: 'Reconcile Lab: connecting to the cluster for the debug session…' }, () => lab.sessionOrConnect());
        } catch (e) {
          void ui.warn(`Reconcile Lab: could not connect (${(e as Error).message}); the debug session starts without Reconcile Lab. Connect to a cluster (Reconcile Lab: Connect to Cluster…) and start it again.`);
          return config;
        }
      }
      const hub = await lab.go.ensureBridge(s);
      const own = (config.env as Record<string, string> | undefined) ?? {};
      const env = { ...own, ...lab.go.processEnv(s, hub) };
      // The envFile's variables reach the program under env's (the Go extension's order, and the Delve adapter's).
      const fromFile = envFileVariables(config, folder?.uri.fsPath);
      const fileKubeconfig = own.KUBECONFIG === undefined ? fromFile.from.KUBECONFIG : undefined;
      const replaced =
        kubeconfigReplacedNote(own, s.kubeconfigPath, `The launch configuration "${String(config.name)}"`) ??
        (fileKubeconfig ? kubeconfigReplacedNote(fromFile.env, s.kubeconfigPath, `The envFile ${fileKubeconfig} of the launch configuration "${String(config.name)}"`) : undefined);
      if (replaced) void ui.warn(`Reconcile Lab: ${replaced}`);
      const le = leaderElectionLooksOn(config, folder?.uri.fsPath);
      if (le) {
        void ui.warn(
          `Reconcile Lab: leader election looks enabled (${le.why}). A breakpoint held longer than the lease (15 s by default) loses leadership; pause and step in Reconcile Lab instead (the lease keeps being renewed), or debug with ${le.flag}=false in the configuration's args.`,
        );
      }
      // A program whose module does not use the bridge runs under the debugger but never shows in the views.
      const dir = programDir(config, folder?.uri.fsPath);
      const unbridged = dir ? bridgeProblemIn(dir) : undefined;
      if (unbridged) {
        void ui.warn(`Reconcile Lab: ${unbridged.problem}; the debug session starts, but the views will not show it.`, 'Set Up Go Bridge…').then((a) => {
          if (a) void vscode.commands.executeCommand('reconcileLab.setUpGoBridge');
        });
      }
      // kubebuilder's webhooks need a serving certificate a program run outside the cluster does not have: the
      // configuration F5 made itself runs without them (as make run ENABLE_WEBHOOKS=false), a launch.json's is told.
      if (dir && webhooksWouldStop(dir, { ...process.env, ...fromFile.env, ...env })) {
        if (generated) {
          env.ENABLE_WEBHOOKS = 'false';
          lab.log.info('debugging without webhooks (ENABLE_WEBHOOKS=false): no serving certificate', { certificate: defaultWebhookCertPath() });
        } else {
          void ui.warn(
            `Reconcile Lab: your program registers its webhooks unless ENABLE_WEBHOOKS is "false", and there is no serving certificate (${defaultWebhookCertPath()}): it will stop at start-up, before any controller. Add "env": {"ENABLE_WEBHOOKS": "false"} to the launch configuration "${String(config.name)}"${own.ENABLE_WEBHOOKS === undefined && fromFile.from.ENABLE_WEBHOOKS ? ` (it wins over the "${fromFile.env.ENABLE_WEBHOOKS}" of its envFile ${fromFile.from.ENABLE_WEBHOOKS}), or set ENABLE_WEBHOOKS=false there` : ''}.`,
          );
        }
      }
      lab.log.info('debug configuration connected to the bridge', { name: config.name });
      return { ...config, env };
    },
    resolveDebugConfigurationWithSubstitutedVariables(_folder, config) {
      let withEnv: vscode.DebugConfiguration;
      try {
        withEnv = delve.withEnvFile(config);
      } catch (e) {
        void ui.error(`Reconcile Lab: ${(e as Error).message}; the debug session does not start. Fix the path (or remove envFile) and start again.`);
        return undefined;
      }
      return delve.withOutput(delve.withProgramOutput(withEnv));
    },
  };
  const tracker: vscode.DebugAdapterTrackerFactory = {
    createDebugAdapterTracker(session) {
      if (session.configuration[DEBUG_FLAG] !== true) return undefined;
      const id = session.id;
      lab.go.debugState(id, { stopped: false });
      // Nothing in the views 20 s of running after the program started (waiting for a lease another instance holds,
      // never connected): said once, as Run Controller…'s progress says it, never while stopped in the debugger.
      const config = session.configuration;
      const le = leaderElectionLooksOn(config, session.workspaceFolder?.uri.fsPath);
      const watch = lab.go.watchDebuggee({ name: String(config.name), ...(le ? { leaderElection: le } : {}) });
      return {
        onDidSendMessage(m: { type?: string; event?: string; body?: { systemProcessId?: number; output?: unknown; category?: string } }) {
          if (m?.type !== 'event') return;
          if (m.event === 'stopped') {
            lab.go.debugState(id, { stopped: true });
            watch?.setStopped(true);
          } else if (m.event === 'continued') {
            lab.go.debugState(id, { stopped: false });
            watch?.setStopped(false);
          } else if (m.event === 'process' && typeof m.body?.systemProcessId === 'number') {
            lab.go.debugState(id, { pid: m.body.systemProcessId });
            watch?.setPid(m.body.systemProcessId);
          } else if (m.event === 'initialized') watch?.start(); // built and launched: its running time counts
          else if (m.event === 'output' && typeof m.body?.output === 'string' && m.body.category !== 'telemetry') watch?.output(m.body.output);
          else if (m.event === 'terminated' || m.event === 'exited') watch?.dispose();
        },
        onWillReceiveMessage(m: { type?: string; command?: string }) {
          // A resume request: the debuggee runs again even before the adapter says "continued".
          if (m?.type === 'request' && (m.command === 'continue' || m.command === 'next' || m.command === 'stepIn' || m.command === 'stepOut')) {
            lab.go.debugState(id, { stopped: false });
            watch?.setStopped(false);
          }
        },
        onExit() {
          watch?.dispose();
          lab.go.debugState(id, { ended: true });
        },
      };
    },
  };
  return [delve, vscode.debug.registerDebugConfigurationProvider('go', provider), vscode.debug.registerDebugAdapterTrackerFactory('go', tracker)];
}

/**
 * The configuration F5 uses without a launch.json, and the one offered for a new launch.json: the snippet's, with
 * `program` the main package Run Controller would run (`./cmd`, `./cmd/<name>` or `.`) of the workspace folder's Go
 * module, or of the one controller module below it.
 */
export function defaultDebugConfiguration(folder: string | undefined): vscode.DebugConfiguration {
  const program = defaultDebugProgram(folder);
  const dir = folder ? program.replace('${workspaceFolder}', folder) : undefined;
  return { name: 'Debug controller with Reconcile Lab', type: 'go', request: 'launch', mode: 'debug', program, args: defaultDebugArgs(dir), [DEBUG_FLAG]: true };
}

/**
 * Whether the configuration's program looks to run with leader election on: its args turn it on, or do not mention
 * the flag while the program's own flag defaults to true (flag.BoolVar(&x, "leader-elect", true, …)). The flag and
 * why, for people; undefined when it looks off.
 */
function leaderElectionLooksOn(config: vscode.DebugConfiguration, folder: string | undefined): { flag: string; why: string } | undefined {
  const args: unknown[] = Array.isArray(config.args) ? config.args : [];
  const le = leaderElectionFlag(args);
  if (le) return { flag: le.split(' ')[0]!.replace(/=.*$/, ''), why: leaderElectionFlagText(le) };
  const def = leaderElectionByDefault(args, mainPackageDir(config, folder));
  return def ? { flag: def.flag, why: `the ${def.flag} flag defined in ${relativeTo(def.file, folder)}:${def.line} defaults to true, and the configuration's args do not set it` } : undefined;
}

/** The leader-election flag of the program in `dir` when it defaults to true and `args` do not mention it at all. */
function leaderElectionByDefault(args: readonly unknown[], dir: string | undefined): { flag: string; file: string; line: number } | undefined {
  const def = dir ? leaderElectionFlagOf(dir) : undefined;
  if (!def?.defaultOn) return undefined;
  const mentioned = args.some((a) => typeof a === 'string' && new RegExp(`^--?${def.flag.slice(2)}(=|$)`).test(a));
  return mentioned ? undefined : def;
}

function relativeTo(file: string, folder: string | undefined): string {
  return folder && file.startsWith(`${folder}/`) ? file.slice(folder.length + 1) : file;
}

/**
 * The variables of the configuration's `envFile` (see readEnvFiles) and the file each came from, as far as they can
 * be read now: resolveDebugConfiguration sees the configuration before VS Code substitutes variables, so
 * `${workspaceFolder}` is replaced here, a relative path is taken from the workspace folder, and a file naming another
 * variable or that cannot be read is left out (the Go extension, or withEnvFile, reports it when the session starts).
 */
function envFileVariables(config: vscode.DebugConfiguration, folder: string | undefined): { env: Record<string, string>; from: Record<string, string> } {
  const files = envFilesOf(config.envFile)
    .map((f) => (folder ? f.replaceAll('${workspaceFolder}', folder) : f))
    .filter((f) => !f.includes('${'))
    .map((f) => (isAbsolute(f) || !folder ? f : join(folder, f)));
  return readEnvFiles(files, (f) => {
    try {
      return readFileSync(f, 'utf8');
    } catch {
      return '';
    }
  });
}

/**
 * The directory of the debugged program: `cwd`, else `program` (a directory, or a .go file's directory), with
 * `${workspaceFolder}` replaced (resolveDebugConfiguration sees the configuration before VS Code substitutes
 * variables); undefined when it names another variable or does not exist.
 */
function programDir(config: vscode.DebugConfiguration, folder: string | undefined): string | undefined {
  const raw = typeof config.cwd === 'string' ? config.cwd : typeof config.program === 'string' ? config.program : undefined;
  return existingDir(raw, folder);
}

/** The directory of the configuration's main package: `program` (a directory, or a .go file's directory), as {@link programDir} reads it. */
function mainPackageDir(config: vscode.DebugConfiguration, folder: string | undefined): string | undefined {
  return existingDir(typeof config.program === 'string' ? config.program : undefined, folder);
}

function existingDir(raw: string | undefined, folder: string | undefined): string | undefined {
  if (raw === undefined) return folder;
  const path = folder ? raw.replaceAll('${workspaceFolder}', folder) : raw;
  if (path.includes('${') || !existsSync(path)) return undefined;
  return statSync(path).isDirectory() ? path : dirname(path);
}
