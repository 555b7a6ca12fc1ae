import { toDisposable } from '../core/lifecycle.ts';
import { runCli } from './cli.ts';

// The `reconcile-lab` executable (bundled to dist/cli.js, CommonJS: no top-level await). Exit codes: see HELP in args.ts.
// runCli never rejects; it resolves with the exit code.
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
