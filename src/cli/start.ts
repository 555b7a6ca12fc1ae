import { toDisposable } from '../core/lifecycle.ts';
import { runCli } from './cli.ts';

/** Runs the CLI on this process's argv and streams; sets the exit code. runCli never rejects. */
export function start(): void {
  void runCli(process.argv.slice(2), {
    stdout: (s) => void process.stdout.write(s),
    stderr: (s) => void process.stderr.write(s),
    env: process.env,
    onKeys(fn) {
      const stdin = process.stdin;
      if (!stdin.isTTY) return undefined;
      // Raw mode: each key as it is pressed, not echoed. It also turns off the terminal's own Ctrl+C, so that key is
      // sent on as SIGINT (onInterrupt's handlers stop the command). Whatever ends the process puts the mode back.
      const restore = () => {
        if (stdin.isRaw) stdin.setRawMode(false);
      };
      const onData = (chunk: Buffer) => {
        for (const ch of chunk.toString('utf8')) {
          if (ch === '\u0003') process.kill(process.pid, 'SIGINT');
          else fn(ch);
        }
      };
      stdin.setRawMode(true);
      stdin.on('data', onData);
      stdin.resume();
      process.on('exit', restore);
      return toDisposable(() => {
        stdin.off('data', onData);
        restore();
        stdin.pause();
        process.off('exit', restore);
      });
    },
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
