/**
 * The real CLI entry point (src/cli/main.ts, run by this Node) as a child process, for integration tests.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The CLI's entry point in this checkout. */
export const CLI_MAIN = join(fileURLToPath(new URL('../../..', import.meta.url)), 'src/cli/main.ts');

/** What a finished CLI process printed and its exit code. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A CLI process still running: what it printed so far, and its end. The caller must await `exited` (kill first). */
export interface RunningCli {
  stdout(): string;
  stderr(): string;
  /** Resolves with everything it printed and its exit code once it exited; rejects when it could not start. */
  exited: Promise<CliRun>;
  kill(signal?: NodeJS.Signals): void;
}

/** Starts the CLI with `args` (stdin closed; `env` added to this process's environment). */
export function startCliProcess(args: string[], env: Record<string, string> = {}): RunningCli {
  const p = spawn(process.execPath, [CLI_MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  p.stdout.on('data', (b) => (stdout += b));
  p.stderr.on('data', (b) => (stderr += b));
  const exited = new Promise<CliRun>((resolve, reject) => {
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { stdout: () => stdout, stderr: () => stderr, exited, kill: (signal = 'SIGTERM') => void p.kill(signal) };
}

/** Runs the CLI with `args` (stdin closed; `env` added to this process's environment) and resolves when it exits. */
export function runCliProcess(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return startCliProcess(args, env).exited;
}

/** How long {@link runCliUntil} waits for its condition, and how long the CLI keeps running after it held. */
export interface RunUntilOptions {
  /** Fail when `done` has not held after this long (default 90 s: a loaded machine starting a Go program). */
  timeoutMs?: number;
  /** Keep the CLI running this long after `done` held (what must not repeat gets the time to repeat). */
  thenMs?: number;
  env?: Record<string, string>;
}

/**
 * Runs `run` (or any long-running command) until `done(stdout, stderr)` holds, polled every 100 ms, then sends SIGINT
 * as Ctrl+C does and resolves with everything printed once the process exited. The end is the condition, not a
 * fixed `--duration` window that a slow start on a loaded machine can miss. Rejects with what it printed when the
 * process exited before `done` held, or `done` did not hold within `timeoutMs` (the process is interrupted first).
 */
export async function runCliUntil(args: string[], done: (stdout: string, stderr: string) => boolean, what: string, options: RunUntilOptions = {}): Promise<CliRun> {
  const p = startCliProcess(args, options.env);
  let exited: CliRun | undefined;
  let failed: unknown;
  void p.exited.then((r) => (exited = r), (e: unknown) => (failed = e ?? new Error('the CLI could not start')));
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  const printed = () => `\n--- stdout:\n${p.stdout()}\n--- stderr:\n${p.stderr()}`;
  while (!done(p.stdout(), p.stderr())) {
    if (failed) throw failed;
    if (exited) throw new Error(`the CLI exited (code ${exited.code}) before ${what}${printed()}`);
    if (Date.now() > deadline) {
      p.kill('SIGINT');
      await p.exited.catch(() => undefined);
      throw new Error(`timed out waiting for ${what}${printed()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (options.thenMs) await new Promise((r) => setTimeout(r, options.thenMs));
  p.kill('SIGINT');
  return p.exited;
}
