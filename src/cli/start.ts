import { readFileSync } from 'node:fs';
import { toDisposable } from '../core/lifecycle.ts';
import { describeStrayError, hostsUserCode } from '../core/reconcilers/strayErrors.ts';
import { escapeControlChars } from '../core/text/terminal.ts';
import { runCli } from './cli.ts';

/**
 * The process-wide guards of the CLI, which may host a reconciler module (user code) in this process:
 * - stdout's reader went away (`… | head`): the process ends quietly with the exit code so far (nothing more can be
 *   said), not with an unhandled EPIPE;
 * - an error that escaped every reconcile (an unawaited promise, a callback that threw) and that a loaded module
 *   claims is said on stderr and the command goes on; any other is said, and the process exits 1 as Node would;
 * - a process.exit before the command answered (only user code calls it) is said on stderr.
 * Returns a function to call once the command has answered.
 */
function installProcessGuards(): () => void {
  let answered = false;
  const end = (code: number) => {
    answered = true; // said already: not "ended before the command finished"
    process.exit(code);
  };
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    end(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });
  const said = new Set<string>();
  const stray = (e: unknown) => {
    const claimed = describeStrayError(e);
    if (claimed !== undefined) {
      // Said once: an unawaited call fails the same way for every key.
      // The error's text is the module's, and may carry cluster text: escaped like every line the CLI writes.
      if (!said.has(claimed)) process.stderr.write(`reconcile-lab: ⚠ ${escapeControlChars(claimed)}\n`);
      said.add(claimed);
      return;
    }
    process.stderr.write(`reconcile-lab: internal error: ${escapeControlChars(e instanceof Error ? (e.stack ?? e.message) : String(e))}\n`);
    end(1);
  };
  process.on('uncaughtException', stray);
  process.on('unhandledRejection', stray);
  process.on('exit', (code) => {
    if (answered) return;
    process.stderr.write(`reconcile-lab: the process was ended (exit code ${code}) before the command finished${hostsUserCode() ? ': the reconciler module called process.exit; throw an error (or a TerminalError) instead, so that the reconcile fails and the loop goes on' : ''}\n`);
  });
  return () => void (answered = true);
}

/** Runs the CLI on this process's argv and streams; sets the exit code. runCli never rejects. */
export function start(): void {
  const answered = installProcessGuards();
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
    answered();
    process.exitCode = code;
    // Once the command has answered and disposed of what it started, nothing of ours is left to wait for; the process
    // normally ends at once. What can still hold it is outside our reach: a TLS connection undici is still opening to
    // a server that never answers stays until undici's own 10 s connect timeout, whatever the dispatcher's close or
    // destroy (nodejs/undici#4405), so a Ctrl+C'd `report` lingered some 20 s after saying "interrupted". The timer is
    // unref'd: it never keeps the process alive itself, it only ends one that something else keeps alive.
    setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
  });
}

/** How long the process may outlive its command's answer (see start) before it is ended. */
const EXIT_GRACE_MS = 1000;

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
