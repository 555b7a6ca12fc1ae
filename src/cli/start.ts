import { readFileSync } from 'node:fs';
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
      // Not in the background (`reconcile-lab run &`): changing the terminal's mode there would stop the process.
      if (!stdin.isTTY || !inForeground()) return undefined;
      // Raw mode: each key as it is pressed, not echoed. It also turns off the terminal's own Ctrl+C and Ctrl+Z, so
      // those keys are sent on as SIGINT (onInterrupt's handlers stop the command) and SIGTSTP (the mode is put back
      // first, and raw again when the shell brings the process back to the foreground). Whatever ends the process
      // puts the mode back.
      const restore = () => {
        if (stdin.isRaw) stdin.setRawMode(false);
      };
      let active = true;
      const onContinue = () => {
        if (active && inForeground()) stdin.setRawMode(true);
      };
      const onData = (chunk: Buffer) => {
        for (const ch of chunk.toString('utf8')) {
          if (ch === '\u0003') process.kill(process.pid, 'SIGINT');
          else if (ch === '\u001a') {
            restore();
            process.kill(process.pid, 'SIGTSTP');
            // Runs once the process continues, or at once when the signal was discarded (no job control here).
            setImmediate(onContinue);
          } else fn(ch);
        }
      };
      stdin.setRawMode(true);
      stdin.on('data', onData);
      stdin.resume();
      process.on('exit', restore);
      process.on('SIGCONT', onContinue);
      return toDisposable(() => {
        active = false;
        stdin.off('data', onData);
        restore();
        stdin.pause();
        process.off('exit', restore);
        process.off('SIGCONT', onContinue);
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

/**
 * Whether this process is in its terminal's foreground process group (Linux: /proc/self/stat's pgrp and tpgid).
 * Elsewhere, where that cannot be read, when stdout is a terminal too (a background job usually redirects it).
 */
function inForeground(): boolean {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // pid (comm) state ppid pgrp session tty_nr tpgid …: comm may hold spaces, so count from its closing parenthesis.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return f[2] === f[5];
  } catch {
    return process.stdout.isTTY === true;
  }
}
