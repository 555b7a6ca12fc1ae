import { toDisposable } from '../core/lifecycle.ts';
import { runCli } from './cli.ts';

/** Runs the CLI on this process's argv and streams; sets the exit code. runCli never rejects. */
export function start(): void {
  void runCli(process.argv.slice(2), {
    stdout: (s) => void process.stdout.write(s),
    stderr: (s) => void process.stderr.write(s),
    env: process.env,
    onInterrupt(fn) {
      process.on('SIGINT', fn);
      process.on('SIGTERM', fn);
      return toDisposable(() => {
        process.off('SIGINT', fn);
        process.off('SIGTERM', fn);
      });
    },
  }).then((code) => {
    process.exitCode = code;
  });
}
