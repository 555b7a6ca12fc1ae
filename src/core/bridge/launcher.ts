import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import type { Clock } from '../clock.ts';
import { Emitter, type Event } from '../event.ts';
import type { Disposable } from '../lifecycle.ts';
import { nullLogger, type Logger } from '../log.ts';
import { createOwnedTempDir } from '../process/ownedTempDir.ts';
import { protectProcessGroup } from '../process/ownerWatchdog.ts';
import { splitCommandLine } from '../reconcilers/commandLine.ts';
import { findControllerModules } from './goModule.ts';

/** The prefix of the GOTMPDIR a launched `go` command gets (under the system temp directory). */
export const GO_TMP_PREFIX = 'reconcile-lab-go-';

/** What to run: a program with arguments, extra environment and working directory (no shell). */
export interface LaunchSpec {
  command: string;
  args: readonly string[];
  /** Added to the inherited environment (after it, before the bridge's variables). */
  env?: Readonly<Record<string, string>>;
  cwd?: string;
}

/** How a launched process ended. */
export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Spawning failed (program not found, not executable, bad cwd). */
  readonly error?: string;
}

export interface LaunchOptions {
  clock: Clock;
  log?: Logger;
  /** Variables that win over everything (the bridge's address and token). */
  bridgeEnv: Readonly<Record<string, string>>;
  /** Lines of output kept for {@link LaunchedProcess.tail} (each cut to {@link MAX_OUTPUT_LINE_CHARS}). Default 200. */
  keepLines?: number;
  /** Grace after SIGINT before SIGTERM, and after SIGTERM before SIGKILL, on stop. Default 3 s. */
  killGraceMs?: number;
}

/**
 * The default program for a controller project in `cwd`, like kubebuilder /
 * operator-sdk lay them out: `go run ./cmd` when `cmd/main.go` exists (the
 * kubebuilder v4 scaffold), `go run ./cmd/<name>` when `cmd/` holds exactly
 * one main package directory, else `go run .`.
 */
export function defaultGoLaunch(cwd: string | undefined): LaunchSpec {
  const base = cwd ?? process.cwd();
  const cmd = join(base, 'cmd');
  let target = '.';
  if (existsSync(join(cmd, 'main.go'))) target = './cmd';
  else {
    const dirs = cmdMainDirs(cmd);
    if (dirs.length === 1) target = `./cmd/${dirs[0]}`;
  }
  return { command: 'go', args: ['run', target], ...(cwd ? { cwd } : {}) };
}

/** The directories of `cmd` (sorted names) that hold a `main.go`. */
function cmdMainDirs(cmd: string): string[] {
  if (!existsSync(cmd)) return [];
  return readdirSync(cmd).filter((d) => {
    try {
      return statSync(join(cmd, d)).isDirectory() && existsSync(join(cmd, d, 'main.go'));
    } catch {
      return false;
    }
  }).sort();
}

/**
 * The programs {@link defaultGoLaunch} cannot choose between in `cwd`: `./cmd/<name>` of each `cmd/<name>/main.go`
 * (sorted) when there are two or more, `cmd/main.go` does not exist and `cwd` itself has no `.go` file of
 * `package main` (so its default, `go run .`, could only fail: "no Go files", or a package that is not a
 * command). Empty when the default is right or the directory cannot be read.
 */
export function ambiguousMainPackages(cwd: string): string[] {
  const cmd = join(cwd, 'cmd');
  if (existsSync(join(cmd, 'main.go'))) return [];
  const dirs = cmdMainDirs(cmd);
  if (dirs.length < 2) return [];
  try {
    const rootMain = readdirSync(cwd).some((f) => f.endsWith('.go') && !f.endsWith('_test.go') && /^package\s+main\b/m.test(readFileSync(join(cwd, f), 'utf8')));
    if (rootMain) return [];
  } catch {
    return [];
  }
  return dirs.map((d) => `./cmd/${d}`);
}

/**
 * The `program` of a Go launch configuration for the controller in workspace folder `folder`: the main package
 * {@link defaultGoLaunch} would run (`./cmd`, `./cmd/<name>` or `.`) of the folder's Go module, or of the one
 * controller module below it ({@link findControllerModules}), as `${workspaceFolder}/…`; `${workspaceFolder}` when
 * neither tells.
 */
export function defaultDebugProgram(folder: string | undefined): string {
  if (!folder) return '${workspaceFolder}';
  let dir = existsSync(join(folder, 'go.mod')) ? folder : undefined;
  if (!dir) {
    const modules = findControllerModules([folder]);
    if (modules.length === 1) dir = modules[0];
  }
  if (!dir) return '${workspaceFolder}';
  const path = relative(folder, join(dir, defaultGoLaunch(dir).args[1] ?? '.'));
  return path ? `\${workspaceFolder}/${path}` : '${workspaceFolder}';
}

/** A leader-election flag a main package defines (see {@link leaderElectionFlagOf}). */
export interface LeaderElectionFlagDef {
  /** `--leader-elect` (kubebuilder) or `--enable-leader-election` (older scaffolds). */
  readonly flag: string;
  /** Its default when the definition gives a literal: `flag.BoolVar(&x, "leader-elect", true, …)` → true. */
  readonly defaultOn?: boolean;
  /** The file defining it, and its 1-based line. */
  readonly file: string;
  readonly line: number;
}

/**
 * The leader-election flag the main package in directory `dir` defines, read from its non-test `.go` files: a bool
 * flag of the `flag` or `pflag` packages (`BoolVar`, `Bool`, `BoolVarP`, `BoolP`, also through `cmd.Flags()`) named
 * `leader-elect` or `enable-leader-election`, with its default when that is a literal. Undefined when none is defined
 * there or the directory cannot be read. Best effort, from the source text (a flag defined in another package is not
 * seen). Pure apart from reading the files, for tests.
 */
export function leaderElectionFlagOf(dir: string): LeaderElectionFlagDef | undefined {
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go')).sort();
  } catch {
    return undefined;
  }
  const def = /\.Bool(?:Var)?P?\(\s*(?:&?[\w.]+\s*,\s*)?"(leader-elect|enable-leader-election)"\s*,\s*(?:"[^"]*"\s*,\s*)?([\w.]+)/;
  for (const name of names) {
    let text: string;
    try {
      text = readFileSync(join(dir, name), 'utf8');
    } catch {
      continue;
    }
    const m = def.exec(text);
    if (!m) continue;
    const value = m[2];
    return {
      flag: `--${m[1]!}`,
      ...(value === 'true' || value === 'false' ? { defaultOn: value === 'true' } : {}),
      file: join(dir, name),
      line: text.slice(0, m.index).split('\n').length,
    };
  }
  return undefined;
}

/**
 * The `args` of the configuration F5 debugs without a launch.json, for the main package in `dir`: leader election off
 * with the flag the program defines (`--leader-elect=false`, `--enable-leader-election=false`; a breakpoint held longer
 * than the lease loses leadership), none when it defines neither — Go's flag package stops a program given a flag it
 * does not define (`flag provided but not defined: -leader-elect`, exit 2) before any controller starts.
 */
export function defaultDebugArgs(dir: string | undefined): string[] {
  const def = dir ? leaderElectionFlagOf(dir) : undefined;
  return def ? [`${def.flag}=false`] : [];
}

/**
 * What to tell when the person's own environment for the program (`where`: a launch configuration's `env`,
 * `reconcileLab.goController.env`) sets `KUBECONFIG` to another file than the connection's `connectionKubeconfig`:
 * the program gets the connection's, which wins over theirs (it must reach the cluster the views show), so theirs is
 * not used. Undefined when they set none, the same file, or the connection has no kubeconfig file to give (theirs is
 * used then). Names files only, never their content.
 */
export function kubeconfigReplacedNote(userEnv: Readonly<Record<string, unknown>> | undefined, connectionKubeconfig: string | undefined, where: string): string | undefined {
  const theirs = userEnv?.KUBECONFIG;
  if (typeof theirs !== 'string' || !theirs || !connectionKubeconfig || theirs === connectionKubeconfig) return undefined;
  return `${where} sets KUBECONFIG to ${theirs}, but the program gets the connection's kubeconfig (${connectionKubeconfig}) instead, so that it reaches the cluster the views show. To run it against ${theirs}, connect Reconcile Lab to that file (reconcileLab.connection.kubeconfig, or Connect to Cluster…); to silence this, remove KUBECONFIG there.`;
}

/** A launch spec from a command line ("go run ./cmd --leader-elect=false"), split like a shell without running one. */
export function launchSpecOf(commandLine: string, extra: Omit<LaunchSpec, 'command' | 'args'> = {}): LaunchSpec {
  const argv = splitCommandLine(commandLine);
  if (argv.length === 0) throw new Error('the command line is empty');
  return { command: argv[0]!, args: argv.slice(1), ...extra };
}

/**
 * Runs the developer's program with the bridge environment, its output
 * captured line by line.
 *
 * Nothing outlives its owner: the program runs in its own process group
 * (so `go run`'s child, the built binary, belongs to it too); {@link stop} /
 * {@link dispose} end the whole group the way Ctrl+C in a terminal does: SIGINT
 * first, so `go run` waits for its program and then removes its build directory
 * (`/tmp/go-build…`, tens of MB per run; SIGTERM would kill `go run` at once and
 * leave it behind) while controller-runtime's signal handler shuts the manager
 * down as it would on SIGTERM. A program that ignores SIGINT gets SIGTERM after
 * the grace period, then SIGKILL. If the owner itself dies without disposing (a
 * crashed or killed editor), the owner's parent-death watchdog
 * (src/core/process/ownerWatchdog.ts: a tiny `sh` that reads a pipe from the
 * owner) sees the pipe close and ends the group the same way.
 */
export class LaunchedProcess implements Disposable {
  readonly pid: number | undefined;
  readonly spec: LaunchSpec;
  /** Resolves once, when the program exited and its output was read (or it failed to spawn): {@link tail} then holds its last lines. */
  readonly exited: Promise<ProcessExit>;
  private exitValue: ProcessExit | undefined;
  private readonly child: ChildProcess;
  private watchdog: Disposable | undefined;
  private readonly lines: string[] = [];
  private readonly keepLines: number;
  /**
   * The program's first `panic:` / `fatal error:` line, or the first line of Go's `flag` (or spf13/pflag) package
   * refusing a command-line flag, kept even once it scrolled out of {@link lines}.
   */
  private firstFatal: string | undefined;
  private readonly clock: Clock;
  private readonly killGraceMs: number;
  private readonly outputEmitter = new Emitter<{ stream: 'stdout' | 'stderr'; line: string }>();
  private stopping: Promise<ProcessExit> | undefined;
  /** The GOTMPDIR of a `go` command (see the constructor), removed once the program exited. */
  private goTmpDir: string | undefined;
  /** One line of the program's output (without its newline). */
  readonly onOutput: Event<{ stream: 'stdout' | 'stderr'; line: string }> = this.outputEmitter.event;

  constructor(spec: LaunchSpec, o: LaunchOptions) {
    this.spec = spec;
    this.clock = o.clock;
    this.keepLines = o.keepLines ?? 200;
    this.killGraceMs = o.killGraceMs ?? 3000;
    const log = o.log ?? nullLogger;
    const env: NodeJS.ProcessEnv = { ...process.env, ...(spec.env ?? {}), ...o.bridgeEnv };
    // `go run` (or any go command) builds into GOTMPDIR: one of this launch's own, removed when the program has
    // exited, so not even a go killed outright (SIGKILL, or a write to the closed pipe of an owner that died) leaves
    // /tmp/go-build… behind; an owner that died leaves the directory, which the next launch's sweep removes. A
    // GOTMPDIR the developer set is kept.
    if (basename(spec.command) === 'go' && !env.GOTMPDIR) {
      try {
        this.goTmpDir = createOwnedTempDir(GO_TMP_PREFIX, { onLeftoverRemoved: (d) => log.info('removed a go build directory a launch that died left behind', { dir: d }) });
        env.GOTMPDIR = this.goTmpDir;
      } catch (e) {
        log.warn('could not make a build directory for go; go uses the system temp directory', { error: (e as Error).message });
      }
    }
    this.child = spawn(spec.command, [...spec.args], { cwd: spec.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    this.pid = this.child.pid;
    this.exited = new Promise<ProcessExit>((resolve) => {
      this.child.once('error', (e) => {
        const code = (e as NodeJS.ErrnoException).code;
        const why = code === 'ENOENT' ? notFoundText(spec) : code === 'EACCES' ? notExecutableText(spec) : e.message;
        this.finish({ code: null, signal: null, error: `could not start ${spec.command}: ${why}` });
        resolve(this.exitValue!);
      });
      this.child.once('exit', (code, signal) => {
        this.finish({ code, signal });
        // What the program printed just before it ended may still be in the pipes ('exit' can come first): resolve
        // once its output is read ('close'), so tail() holds its last words; at most OUTPUT_DRAIN_MS later when
        // something outside its process group keeps the pipes open.
        let settled = false;
        const settle = () => {
          if (settled) return;
          settled = true;
          this.clock.clearTimeout(drain);
          resolve(this.exitValue!);
        };
        const drain = this.clock.setTimeout(settle, OUTPUT_DRAIN_MS);
        this.child.once('close', settle);
      });
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      // A line longer than MAX_OUTPUT_LINE_CHARS is passed on cut (once) and the rest of it dropped until its
      // newline: neither the unfinished line nor the kept lines grow with what the program prints.
      let rest = '';
      let dropping = false;
      this.child[stream]!.setEncoding('utf8');
      this.child[stream]!.on('data', (s: string) => {
        const parts = (rest + s).split('\n');
        rest = parts.pop() ?? '';
        for (const line of parts) {
          if (dropping) dropping = false; // the end of a line already passed on cut
          else this.line(stream, cutLine(line));
        }
        if (rest.length > MAX_OUTPUT_LINE_CHARS) {
          if (!dropping) this.line(stream, cutLine(rest));
          dropping = true;
          rest = '';
        }
      });
      this.child[stream]!.on('end', () => {
        if (rest && !dropping) this.line(stream, cutLine(rest));
        rest = '';
      });
    }
    if (this.pid !== undefined && !this.exitValue) this.watchdog = protectProcessGroup(this.pid);
    log.info('launched', { command: spec.command, args: spec.args.join(' '), ...(spec.cwd ? { cwd: spec.cwd } : {}), pid: this.pid });
  }

  /** The exit, once it happened. */
  get exit(): ProcessExit | undefined {
    return this.exitValue;
  }

  /** The last lines of output (stdout and stderr interleaved as they arrived). */
  tail(n = this.keepLines): string[] {
    return this.lines.slice(-n);
  }

  /**
   * The last `n` lines of output for a failure: when the program printed a Go `panic:` or `fatal error:` line that
   * is not among them (a goroutine dump follows it: a stack overflow's runs to hundreds of lines), or a flag
   * package's refusal of a flag (`flag provided but not defined: -x`, followed by the usage of every flag: a
   * kubebuilder `main` prints some 25 lines of them), that line first, then `…`, then the last `n - 2` lines, so the
   * cause is always shown.
   */
  failureTail(n: number): string[] {
    const tail = this.lines.slice(-n);
    if (this.firstFatal === undefined || tail.includes(this.firstFatal)) return tail;
    return [this.firstFatal, '…', ...this.lines.slice(-(n - 2))];
  }

  /**
   * SIGINT to the process group; SIGTERM after the grace period if it still runs, SIGKILL one grace period later.
   * Resolves when the program exited. Idempotent.
   */
  stop(): Promise<ProcessExit> {
    if (this.exitValue) return Promise.resolve(this.exitValue);
    this.stopping ??= (async () => {
      this.kill('SIGINT');
      const timers = [
        this.clock.setTimeout(() => this.kill('SIGTERM'), this.killGraceMs),
        this.clock.setTimeout(() => this.kill('SIGKILL'), 2 * this.killGraceMs),
      ];
      try {
        return await this.exited;
      } finally {
        for (const t of timers) this.clock.clearTimeout(t);
      }
    })();
    return this.stopping;
  }

  /**
   * Synchronous teardown: {@link stop} without waiting for the exit, and no more output events. The group stays
   * registered with the owner's watchdog until it exited, so if the owner ends first the watchdog finishes the job.
   */
  dispose(): void {
    if (!this.exitValue) void this.stop();
    else this.stopWatchdog();
    this.outputEmitter.dispose();
  }

  private kill(signal: NodeJS.Signals): void {
    if (this.pid === undefined || this.exitValue) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      try {
        this.child.kill(signal);
      } catch {
        // already gone
      }
    }
  }

  private finish(e: ProcessExit): void {
    if (this.exitValue) return;
    this.exitValue = e;
    // The group leader exited; make sure nothing of its group (e.g. the binary `go run` built) lingers.
    if (this.pid !== undefined) {
      try {
        process.kill(-this.pid, 'SIGKILL');
      } catch {
        // the group is empty
      }
    }
    this.stopWatchdog();
    if (this.goTmpDir) {
      rmSync(this.goTmpDir, { recursive: true, force: true });
      this.goTmpDir = undefined;
    }
  }

  private stopWatchdog(): void {
    const w = this.watchdog;
    this.watchdog = undefined;
    w?.dispose();
  }

  private line(stream: 'stdout' | 'stderr', line: string): void {
    if (this.firstFatal === undefined && FATAL_LINE.test(line)) this.firstFatal = line;
    this.lines.push(line);
    if (this.lines.length > this.keepLines) this.lines.shift();
    this.outputEmitter.fire({ stream, line });
  }
}

/**
 * A Go runtime's first line about a crash: `panic: …` (also `panic: … [recovered]`) or `fatal error: …`; or the line
 * with which Go's `flag` package (`flag provided but not defined: -x`, `invalid value "v" for flag -x: …`,
 * `invalid boolean value "v" for -x: …`, `flag needs an argument: -x`, `bad flag syntax: …`) or spf13/pflag
 * (`unknown flag: --x`, `unknown shorthand flag: 'x' in -x`, `invalid argument "v" for "--x" flag: …`) refuses a command line before printing the usage.
 */
const FATAL_LINE = /^(panic: |fatal error: |flag provided but not defined: |invalid (boolean )?value "|invalid argument "|flag needs an argument: |bad flag syntax: |unknown (shorthand )?flag: )/;

/** How long {@link LaunchedProcess.exited} waits after the exit for the program's output pipes to close. */
const OUTPUT_DRAIN_MS = 500;

/** The longest line of a launched program's output passed on and kept (longer ones are cut: {@link cutLine}). */
export const MAX_OUTPUT_LINE_CHARS = 16 << 10;

/** `line` cut to {@link MAX_OUTPUT_LINE_CHARS}, marked with "… (line cut)" when it was longer. */
function cutLine(line: string): string {
  return line.length > MAX_OUTPUT_LINE_CHARS ? `${line.slice(0, MAX_OUTPUT_LINE_CHARS)}… (line cut)` : line;
}

/** Starts `spec` (see {@link LaunchedProcess}). */
export function launchProcess(spec: LaunchSpec, o: LaunchOptions): LaunchedProcess {
  return new LaunchedProcess(spec, o);
}

/** The words Go's `strconv.ParseBool` (and so the `flag` and `pflag` packages) read as a bool, by value. */
const GO_BOOL_WORDS: Readonly<Record<string, boolean>> = { 1: true, t: true, T: true, TRUE: true, true: true, True: true, 0: false, f: false, F: false, FALSE: false, false: false, False: false };

/**
 * Leader election looks enabled in these arguments, read as Go's `flag` (and `pflag`) packages read a bool flag:
 * `--leader-elect` (kubebuilder's flag) or `--enable-leader-election` (older scaffolds), alone or with `=` and a
 * value `strconv.ParseBool` takes as true (`=true`, `=1`, `=T`…); the last occurrence wins. A bool flag takes its
 * value only after `=`: in `--leader-elect false` the flag is on and `false` is an argument of its own, so that
 * returns both words (`"--leader-elect false"`; {@link leaderElectionFlagText} explains it). Undefined when the
 * last occurrence turns it off (`=false`, `=0`, `=F`…) or there is none. Pure, for tests.
 */
export function leaderElectionFlag(args: readonly unknown[]): string | undefined {
  const a = args.filter((x): x is string => typeof x === 'string');
  let on: string | undefined;
  for (let i = 0; i < a.length; i++) {
    const m = /^--?(leader-elect|enable-leader-election)(?:=(.*))?$/.exec(a[i]!);
    if (!m) continue;
    if (m[2] === undefined) {
      const next = a[i + 1];
      on = next !== undefined && GO_BOOL_WORDS[next] !== undefined ? `${a[i]!} ${next}` : a[i]!;
    } else on = GO_BOOL_WORDS[m[2]] === true ? a[i]! : undefined;
  }
  return on;
}

/**
 * How a message names what {@link leaderElectionFlag} returned: the flag itself, or, for a flag followed by a
 * separate value (`--leader-elect false`), that this turns it on, and the form that turns it off.
 */
export function leaderElectionFlagText(flag: string): string {
  const [name, value] = flag.split(' ');
  if (value === undefined) return flag;
  return `${flag}: a Go bool flag takes its value only after "=", so this turns ${name} on and passes "${value}" as an argument; ${name}=false turns it off`;
}

/**
 * Why a command could not be started (ENOENT), in the terms of what was given: a path names a file that is not
 * there; a word with shell syntax (~, $VAR) was not expanded (no shell runs it); a bare name is not on PATH.
 */
export function notFoundText(spec: { readonly command: string; readonly cwd?: string | undefined }): string {
  const from = spec.cwd ? ` (from ${spec.cwd})` : '';
  if (/[~$&|;<>*]/.test(spec.command)) return `no such command or file${from}: the command line is run without a shell, so ~, $VAR, &&, | and globs are not expanded: give a path, or run it through sh -c '…'`;
  if (spec.command.includes('/')) return `no such file${from}: build it first, or check the path`;
  return 'no such command on PATH: give its path, or install it';
}

/**
 * Why `spec.command` could not be executed (EACCES): a directory given as the program (`--go ./cmd`, the package
 * rather than a binary built from it) is told how to run or build it; anything else lacks the execute permission.
 */
export function notExecutableText(spec: { readonly command: string; readonly cwd?: string | undefined }): string {
  let directory = false;
  try {
    directory = statSync(resolve(spec.cwd ?? process.cwd(), spec.command)).isDirectory();
  } catch {
    // unreadable: say what the system said
  }
  if (directory) return `it is a directory, not a program: run its Go package with go run (--go "go run ${spec.command}"), or build it first (go build -o bin/manager ${spec.command}) and give the binary`;
  return 'permission denied (is it executable? chmod +x)';
}

/** A one-line description of an exit for people. */
export function describeExit(e: ProcessExit): string {
  if (e.error) return e.error;
  if (e.signal) return `killed by ${e.signal}`;
  return `exited with code ${e.code}`;
}

/**
 * The process group of process `pid` (a launched program runs in a group of its own whose id is its pid; `go run`'s
 * compiled child stays in it), undefined when it cannot be read (the process is gone). Linux reads /proc, other
 * systems ask `ps`.
 */
export function processGroupOf(pid: number): number | undefined {
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses, so split after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pgrp = Number(fields[2]);
    return Number.isSafeInteger(pgrp) && pgrp > 0 ? pgrp : undefined;
  } catch {
    if (process.platform === 'linux' || process.platform === 'win32') return undefined;
  }
  const r = spawnSync('ps', ['-o', 'pgid=', '-p', String(pid)], { encoding: 'utf8', timeout: 2000 });
  const pgid = Number(r.stdout?.trim());
  return r.status === 0 && Number.isSafeInteger(pgid) && pgid > 0 ? pgid : undefined;
}
