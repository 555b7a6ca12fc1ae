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
