import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Disposable } from '../lifecycle.ts';

/**
 * Delve, the Go debugger, for debugging a controller without VS Code's Go extension: finding a `dlv`, installing
 * the pinned version from the Go module proxy when there is none, and running its Debug Adapter Protocol server
 * (`dlv dap`), which speaks DAP itself (a launch request with `program`, `args`, `env`, `cwd`, `buildFlags`, `mode`
 * builds and starts the program under the debugger).
 */

/** The Delve release installed when none is found (the tests use the same). */
export const DELVE_VERSION = 'v1.27.2';
export const DELVE_MODULE = 'github.com/go-delve/delve/cmd/dlv';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The `dlv` to use: `configured` (a setting; returned as is when set, so that a wrong path is reported, not
 * silently replaced), else one on PATH, in `$GOBIN`, in `$(go env GOPATH)/bin`, or installed before in
 * `installDir`. Undefined when there is none.
 */
export function findDelve(o: { configured?: string; env?: NodeJS.ProcessEnv; installDir?: string; goPath?: () => string | undefined }): string | undefined {
  if (o.configured) return o.configured;
  const env = o.env ?? process.env;
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    if (executable(join(dir, 'dlv'))) return join(dir, 'dlv');
  }
  if (env.GOBIN && executable(join(env.GOBIN, 'dlv'))) return join(env.GOBIN, 'dlv');
  const goPath = (o.goPath ?? (() => goEnv('GOPATH', env)))();
  for (const p of (goPath ?? '').split(delimiter).filter(Boolean)) {
    if (executable(join(p, 'bin', 'dlv'))) return join(p, 'bin', 'dlv');
  }
  if (o.installDir && executable(join(o.installDir, DELVE_VERSION, 'dlv'))) return join(o.installDir, DELVE_VERSION, 'dlv');
  return undefined;
}

function goEnv(name: string, env: NodeJS.ProcessEnv): string | undefined {
  try {
    return execFileSync('go', ['env', name], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Installs Delve {@link DELVE_VERSION} with `go install` into `<installDir>/<version>/dlv` (the Go module proxy and
 * build cache of the environment) and resolves with its path; rejects with go's last output lines when it fails.
 * Aborting `signal` kills the build.
 */
export function installDelve(installDir: string, o: { env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {}): Promise<string> {
  const bin = join(installDir, DELVE_VERSION);
  mkdirSync(bin, { recursive: true });
  return new Promise((resolve, reject) => {
    const child = spawn('go', ['install', `${DELVE_MODULE}@${DELVE_VERSION}`], { env: { ...(o.env ?? process.env), GOBIN: bin }, stdio: ['ignore', 'ignore', 'pipe'], ...(o.signal ? { signal: o.signal } : {}) });
    let err = '';
    child.stderr!.on('data', (b: Buffer) => (err = (err + b.toString()).slice(-4000)));
    child.once('error', (e) => reject(new Error(`could not run go install ${DELVE_MODULE}@${DELVE_VERSION}: ${e.message}`)));
    child.once('exit', (code) => {
      if (code === 0 && existsSync(join(bin, 'dlv'))) resolve(join(bin, 'dlv'));
      else reject(new Error(`go install ${DELVE_MODULE}@${DELVE_VERSION} failed (exit ${code}):\n${err.trim().split('\n').slice(-10).join('\n')}`));
    });
  });
}

/** The pids of `pid`'s child processes (`pgrep -P`); empty when there are none or pgrep is missing. */
function childrenOf(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => Number.isInteger(n) && n > 0);
  } catch {
    return [];
  }
}

/**
 * A running `dlv dap` server; dispose kills it and everything it started: its process group, and the debuggee,
 * which Delve starts in a process group of its own.
 */
export interface DelveServer extends Disposable {
  readonly port: number;
  readonly process: ChildProcess;
  /** Resolves when dlv exited (after dispose, or on its own when the debug session ended). */
  readonly exited: Promise<void>;
}

/**
 * Starts `dlv dap --listen=127.0.0.1:0` in `cwd` (its own process group) and resolves once it listens. The server
 * serves one debug session and exits when that session disconnects; dispose kills the group (SIGTERM, on which dlv
 * ends its debuggee; SIGKILL after `killGraceMs`), then the process groups of dlv's children (the debuggee has its
 * own), so no debuggee outlives its owner. Rejects with dlv's output when it exits before listening
 * or does not listen within `startTimeoutMs`.
 */
export function startDelveDap(dlvPath: string, o: { cwd?: string; env?: NodeJS.ProcessEnv; startTimeoutMs?: number; killGraceMs?: number } = {}): Promise<DelveServer> {
  const child = spawn(dlvPath, ['dap', '--listen=127.0.0.1:0'], { ...(o.cwd ? { cwd: o.cwd } : {}), env: o.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  let done = false;
  /** dlv's children when dispose began: the debuggee, which Delve starts in a process group of its own. */
  let children: number[] = [];
  const kill = (signal: NodeJS.Signals) => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // gone already
    }
  };
  const dispose = () => {
    if (done) return;
    done = true;
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) children = childrenOf(child.pid);
    kill('SIGTERM');
    const t = setTimeout(() => kill('SIGKILL'), o.killGraceMs ?? 2_000);
    t.unref();
    void exited.then(() => {
      clearTimeout(t);
      // Whatever is left of dlv's group goes too, and of each child's own group: Delve starts the debuggee in a
      // process group of its own and kills it on SIGTERM, but a dlv that needed SIGKILL left it running.
      for (const pid of [child.pid, ...children]) {
        if (pid === undefined) continue;
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone (or not a group leader)
        }
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    });
  };
  return new Promise<DelveServer>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => {
      dispose();
      reject(new Error(`dlv dap did not listen within ${Math.round((o.startTimeoutMs ?? 30_000) / 1000)} s: ${text.trim()}`));
    }, o.startTimeoutMs ?? 30_000);
    const onData = (b: Buffer) => {
      text = (text + b.toString()).slice(-4000);
      const m = /listening at:\s*127\.0\.0\.1:(\d+)/.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve({ port: Number(m[1]), process: child, exited, dispose });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', (e) => {
      clearTimeout(timer);
      done = true;
      reject(new Error(`could not start ${dlvPath}: ${e.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      done = true;
      reject(new Error(`dlv dap exited (${signal ?? `code ${code}`}) before listening: ${text.trim()}`));
    });
  });
}

/**
 * The variables of an `envFile` of a Go launch configuration (the Go extension's attribute, which `dlv dap` does not
 * know): one `NAME=value` per line, an optional `export ` before the name, blank lines and lines starting with `#`
 * skipped; a value in double quotes is unquoted with `\n` read as a newline, one in single quotes is taken as is.
 * A line of any other shape is skipped. Pure, for tests.
 */
export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^(?:export\s+)?([\w.-]+)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    let value = m[2]!;
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1).replace(/\\n/g, '\n');
    else if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) value = value.slice(1, -1);
    env[m[1]!] = value;
  }
  return env;
}

/**
 * The files a launch configuration's `envFile` names (the Go extension's attribute: a path, or a list of paths read
 * in order), in order; anything else (a number, an empty string) is not a file. Empty without `envFile`.
 */
export function envFilesOf(envFile: unknown): string[] {
  if (envFile === undefined) return [];
  return (Array.isArray(envFile) ? envFile : [envFile]).filter((f): f is string => typeof f === 'string' && f !== '');
}

/**
 * The variables of `files` (an `envFile` list, read in order with {@link parseEnvFile}: a later file's variable wins
 * over an earlier one's, as the Go extension merges them), and for each variable the file it came from. `read`
 * returns a file's text; what it throws is thrown.
 */
export function readEnvFiles(files: readonly string[], read: (file: string) => string): { env: Record<string, string>; from: Record<string, string> } {
  const env: Record<string, string> = {};
  const from: Record<string, string> = {};
  for (const f of files) {
    for (const [k, v] of Object.entries(parseEnvFile(read(f)))) {
      env[k] = v;
      from[k] = f;
    }
  }
  return { env, from };
}
