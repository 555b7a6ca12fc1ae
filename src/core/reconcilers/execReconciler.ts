import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { Clock, TimerHandle } from '../clock.ts';
import { realClock } from '../clock.ts';
import type { Disposable } from '../lifecycle.ts';
import type { GroupVersionResource, KubeObject } from '../k8s/objects.ts';
import { TerminalError, type ReconcileContext, type Reconciler, type Request, type Result } from '../controller/reconcile.ts';
import { protectProcessGroup } from '../process/ownerWatchdog.ts';
import { readFresh } from './readObject.ts';
import { ApiError } from '../k8s/client.ts';
import { writeStatusIfChanged } from './statusWriter.ts';
import { unknownFields } from '../text/closest.ts';
import { lastForbiddenHint } from '../k8s/forbidden.ts';

/** The JSON document an exec reconciler receives on stdin. */
export interface ExecInput {
  key: string;
  namespace: string | null;
  name: string;
  /** The primary resource, e.g. { group: "lab.reconcile.dev", version: "v1alpha1", resource: "widgets" }. */
  resource: GroupVersionResource;
  /** The object as the controller last saw it (informer cache, or a fresh GET), or null when it no longer exists. */
  object: KubeObject | null;
  /** The kubeconfig file and context the program must use (null: inherit KUBECONFIG / current-context). */
  kubeconfig: string | null;
  context: string | null;
  /** When true the program must not persist anything (e.g. pass `--dry-run=server` to kubectl). */
  dryRun: boolean;
}

/** The JSON document an exec reconciler prints on stdout (every field optional; `{}` means "done"). */
export interface ExecOutput {
  /** Ask to be called again after this many milliseconds (not an error: the backoff is reset). */
  requeueAfterMs?: number;
  /** Why the requeue was asked for. */
  reason?: string;
  /**
   * The priority of the requeue this output asks for (`Result.priority`, an integer; higher runs first, only the
   * priority queue uses it), also of the retry after an `error` (as controller-runtime's Result.Priority returned
   * with an error); a `terminal` error is not retried.
   */
  priority?: number;
  /** A failure: the key is retried with exponential backoff (or not at all with `terminal: true`). */
  error?: string;
  terminal?: boolean;
  /**
   * A status to write through `/status` (only written when it differs from the stored one, and only while the
   * object's generation is still that of the input's `object`).
   */
  status?: Record<string, unknown>;
  /** Lines to add to the controller log. */
  log?: string[] | string;
}

export type ExecFailureKind = 'not-found' | 'not-executable' | 'spawn' | 'timeout' | 'exit' | 'invalid-output' | 'output-too-large' | 'aborted';

/** A failed run of an exec reconciler. Thrown from `reconcile`, so the queue retries it with backoff. */
export class ExecReconcilerError extends Error {
  readonly kind: ExecFailureKind;
  readonly exitCode: number | null;
  readonly stderrTail: string;
  constructor(kind: ExecFailureKind, message: string, options: { exitCode?: number | null; stderrTail?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'ExecReconcilerError';
    this.kind = kind;
    this.exitCode = options.exitCode ?? null;
    this.stderrTail = options.stderrTail ?? '';
  }
}

export interface ExecReconcilerOptions {
  /** The program and its arguments (argv; no shell is involved). */
  command: readonly string[];
  cwd?: string;
  /** Passed to the program as KUBECONFIG and in the input; default: inherit the environment's KUBECONFIG. */
  kubeconfigPath?: string;
  context?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /**
   * Wall time allowed per run; on expiry the whole process group is killed and the run fails with a
   * `timeout` error (retried with backoff). Independent of the controller's reconcile timeout (whose
   * deadline aborts the signal, which kills the program too). Default 30 s; 0: no limit.
   */
  timeoutMs?: number;
  /**
   * Where the person running the loop changes `timeoutMs` (`--exec-timeout`, a setting's name): the timeout's error
   * names it, so a program that needs longer is not just killed again at every retry.
   */
  timeoutSetting?: string;
  /** Grace between SIGTERM and SIGKILL when killing. Default 2 s. */
  killGraceMs?: number;
  /** Largest accepted stdout; larger output kills the run. Default 1 MiB. */
  maxOutputBytes?: number;
  clock?: Clock;
}

const STDERR_TAIL_BYTES = 4096;

/**
 * Inherited variables an exec program does not get: the editor's own plumbing. `ELECTRON_RUN_AS_NODE` would
 * turn a `code` the program starts into plain Node, `VSCODE_IPC_HOOK*` would make it talk to this editor,
 * `RECONCILE_LAB_BRIDGE*` carry the Go bridge's address and secret token.
 */
const WITHHELD_ENV = /^(VSCODE_|ELECTRON_|RECONCILE_LAB_BRIDGE)/;

/**
 * The environment of one exec run: the inherited environment without {@link WITHHELD_ENV}, then
 * `options.env`, then the protocol's variables (RECONCILE_KEY, RECONCILE_NAMESPACE, RECONCILE_NAME,
 * RECONCILE_DRY_RUN, RECONCILE_RESOURCE; KUBECONFIG when a kubeconfig path is set; RECONCILE_CONTEXT when a
 * context is). Pure, for tests.
 */
export function execEnvironment(
  inherited: NodeJS.ProcessEnv,
  options: Pick<ExecReconcilerOptions, 'env' | 'kubeconfigPath' | 'context'>,
  input: Pick<ExecInput, 'key' | 'namespace' | 'name' | 'dryRun' | 'resource'>,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(inherited)) if (!WITHHELD_ENV.test(k)) env[k] = v;
  Object.assign(env, options.env, {
    RECONCILE_KEY: input.key,
    RECONCILE_NAMESPACE: input.namespace ?? '',
    RECONCILE_NAME: input.name,
    RECONCILE_DRY_RUN: input.dryRun ? 'true' : 'false',
    RECONCILE_RESOURCE: input.resource.group ? `${input.resource.resource}.${input.resource.group}` : input.resource.resource,
  });
  if (options.kubeconfigPath) env.KUBECONFIG = options.kubeconfigPath;
  if (options.context) env.RECONCILE_CONTEXT = options.context;
  return env;
}

function tail(s: string, max = STDERR_TAIL_BYTES): string {
  const t = s.length > max ? '…' + s.slice(-max) : s;
  return t.trimEnd();
}

/** The fields of the exec reconciler's output (see {@link ExecOutput}). */
const EXEC_OUTPUT_FIELDS = ['requeueAfterMs', 'reason', 'priority', 'error', 'terminal', 'status', 'log'] as const;

/**
 * The lines of `lines` that hold one JSON object (on one line or several, as `json.dumps(x, indent=2)` prints it), with
 * the lines before and after it; undefined when no run of lines is one. The last such object wins (progress lines
 * usually come first). Bounded: at most {@link MAX_SCANNED_LINES} lines, and {@link MAX_SCANNED_CHARS} characters
 * parsed in all (lines like Python's `{'a': 1}` start and end as JSON does and are tried in vain).
 */
function jsonObjectAmongLines(lines: readonly string[]): { before: string[]; after: string[] } | undefined {
  if (lines.length < 2 || lines.length > MAX_SCANNED_LINES) return undefined;
  // offsets[i]: the characters of lines[0..i) joined with newlines, so a run's length is known before it is built.
  const offsets = [0];
  for (const l of lines) offsets.push(offsets.at(-1)! + l.length + 1);
  let budget = MAX_SCANNED_CHARS;
  for (let start = lines.length - 1; start >= 0; start--) {
    if (!lines[start]!.trimStart().startsWith('{')) continue;
    for (let end = lines.length - 1; end >= start; end--) {
      if (!lines[end]!.trimEnd().endsWith('}')) continue;
      budget -= offsets[end + 1]! - offsets[start]!;
      if (budget < 0) return undefined;
      let doc: unknown;
      try {
        doc = JSON.parse(lines.slice(start, end + 1).join('\n'));
      } catch {
        continue;
      }
      if (doc && typeof doc === 'object' && !Array.isArray(doc)) {
        const other = (ls: string[]) => ls.filter((l) => l.trim() !== '');
        return { before: other(lines.slice(0, start)), after: other(lines.slice(end + 1)) };
      }
    }
  }
  return undefined;
}

/** The longest stdout (in lines) searched for a JSON object among other lines. */
const MAX_SCANNED_LINES = 400;
/** How many characters that search parses at most, in all its tries. */
const MAX_SCANNED_CHARS = 4 * 1024 * 1024;

/**
 * Why a program's stdout that is valid JSON but no object (a number, true, a string, null, an array) is refused, with
 * the output that was probably meant: a number is taken for a delay (`15000` → `{"requeueAfterMs": 15000}`), `true`
 * for a requeue, a string for a reason (or an error). Starts with `stdout must be one JSON object`.
 */
export function nonObjectOutputProblem(doc: unknown): string {
  const got = Array.isArray(doc) ? 'an array' : doc === null ? 'null' : JSON.stringify(typeof doc === 'string' && doc.length > 40 ? `${doc.slice(0, 40)}…` : doc);
  const lead = `stdout must be one JSON object, got ${got}`;
  if (typeof doc === 'number' && Number.isFinite(doc) && doc >= 0) return `${lead}: to look again after ${doc} ms, print {"requeueAfterMs": ${doc}}; when done, print {}`;
  if (doc === true) return `${lead}: to look again later, print {"requeueAfterMs": <ms>, "reason": "…"}; when done, print {}`;
  if (typeof doc === 'string') return `${lead}: to wait with a reason, print {"requeueAfterMs": <ms>, "reason": ${got}}; to fail, print {"error": ${got}}; when done, print {}`;
  if (Array.isArray(doc)) return `${lead}: print one object, such as {} when done (not a list of them)`;
  return `${lead}: when done, print {}`;
}

/**
 * Parses the program's stdout: exactly one JSON object of {@link EXEC_OUTPUT_FIELDS}. Throws a message for a person
 * on anything else: nothing printed, not JSON (other lines before or after the JSON are named as such), a field of the wrong
 * type, or a field the protocol does not have (with the one it probably meant).
 */
export function parseExecOutput(text: string): ExecOutput {
  const trimmed = text.trim();
  if (!trimmed) throw new Error('the program printed nothing on stdout; print a JSON object such as {} (or {"requeueAfterMs": 5000})');
  let doc: unknown;
  try {
    doc = JSON.parse(trimmed);
  } catch (e) {
    // The usual cause: progress lines (echo, kubectl's "configmap/x created") on stdout before or after the JSON.
    const found = jsonObjectAmongLines(trimmed.split(/\r?\n/));
    if (found) {
      const first = (ls: string[]) => JSON.stringify(ls[0]!.trim().slice(0, 80));
      const { before, after } = found;
      const beforeText = before.length ? `${before.length} other line(s) come before it (the first: ${first(before)})` : '';
      const afterText = after.length ? `${before.length ? `${after.length}` : `${after.length} other line(s) come`} after it (the first: ${first(after)})` : '';
      const where = [beforeText, afterText].filter(Boolean).join(' and ');
      throw new Error(`stdout must hold only the JSON result, but ${where}; send progress and command output to stderr (echo … >&2, kubectl … >&2)`);
    }
    // V8's message quotes the input again ('Unexpected token 's', "starting…" is not valid JSON'): it is shown once, below.
    const why = (e as Error).message.replace(/, ".*"(?:\.\.\.)? is not valid JSON$/s, '');
    throw new Error(`stdout is not valid JSON (${why}); it starts with ${JSON.stringify(trimmed.slice(0, 80))}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error(nonObjectOutputProblem(doc));
  const o = doc as Record<string, unknown>;
  // Every problem at once, each with its fix (a fix of one must not merely uncover the next): the wrong values first,
  // then the unknown fields (a misspelt one, "requeueAfter" or Go's "RequeueAfter", would be dropped silently, and
  // with it the requeue) with the list of the output's fields. One problem is its own sentence.
  const wrong: string[] = [];
  const bad = (field: string, want: string) => wrong.push(`"${field}" must be ${want} (got ${JSON.stringify(o[field])})`);
  if (o.requeueAfterMs !== undefined && (typeof o.requeueAfterMs !== 'number' || !Number.isFinite(o.requeueAfterMs) || o.requeueAfterMs < 0)) bad('requeueAfterMs', 'a number of milliseconds >= 0, e.g. 5000 for 5 s');
  if (o.reason !== undefined && typeof o.reason !== 'string') bad('reason', 'a string');
  if (o.priority !== undefined && !Number.isSafeInteger(o.priority)) bad('priority', 'an integer');
  if (o.error !== undefined && o.error !== null && typeof o.error !== 'string') bad('error', 'a string');
  if (o.terminal !== undefined && typeof o.terminal !== 'boolean') bad('terminal', 'a boolean');
  if (o.status !== undefined && o.status !== null && (typeof o.status !== 'object' || Array.isArray(o.status))) bad('status', 'an object');
  if (o.log !== undefined && typeof o.log !== 'string' && !(Array.isArray(o.log) && o.log.every((l) => typeof l === 'string'))) bad('log', 'a string or an array of strings');
  const unknown = unknownFields(Object.keys(o), EXEC_OUTPUT_FIELDS, 'the output fields are');
  const count = wrong.length + (unknown?.count ?? 0);
  if (unknown && !wrong.length) throw new Error(unknown.message);
  if (wrong.length === 1 && !unknown) throw new Error(wrong[0]);
  if (count > 1) throw new Error(`${count} problems: ${[...wrong, ...(unknown ? [unknown.message] : [])].join('; ')}`);
  const out: ExecOutput = {};
  if (typeof o.requeueAfterMs === 'number') out.requeueAfterMs = o.requeueAfterMs;
  if (typeof o.reason === 'string') out.reason = o.reason;
  if (typeof o.priority === 'number') out.priority = o.priority;
  if (typeof o.error === 'string' && o.error) out.error = o.error;
  if (o.terminal === true) out.terminal = true;
  if (o.status && typeof o.status === 'object') out.status = o.status as Record<string, unknown>;
  if (o.log !== undefined) out.log = o.log as string[] | string;
  return out;
}

/**
 * A reconciler that runs an external program once per reconcile (the lab's
 * "shell script reconciler"). Protocol: the {@link ExecInput} JSON on stdin and
 * RECONCILE_KEY / RECONCILE_NAMESPACE / RECONCILE_NAME / RECONCILE_DRY_RUN /
 * KUBECONFIG (+ RECONCILE_CONTEXT) in the environment; the {@link ExecOutput}
 * JSON on stdout; stderr is diagnostics.
 *
 * Every failure (program missing or not executable, timeout, abort, non-zero
 * exit with the stderr tail, invalid or oversized output) is thrown as an
 * {@link ExecReconcilerError}, so the work queue retries it with backoff; the
 * host process never crashes. Each run owns its child process: on timeout,
 * abort or {@link Disposable.dispose} the whole process group gets SIGTERM,
 * then SIGKILL after `killGraceMs`; once the program exited (also normally)
 * anything left in its group is killed; and if this process dies mid-run, the
 * parent-death watchdog ends the group. The environment is
 * {@link execEnvironment}.
 *
 * Writes the program makes itself (kubectl) bypass the controller's client, so
 * they are not in the journal and dry-run depends on the program honouring
 * `dryRun`; the `status` it returns is written through the context's client,
 * only when the server's `metadata.generation` still equals that of the object
 * the program was given (else a 409 {@link ApiError} is thrown and nothing is
 * written: the status describes a spec that is no longer the current one).
 */
export function createExecReconciler(options: ExecReconcilerOptions): Reconciler & Disposable {
  if (options.command.length === 0 || !options.command[0]) throw new Error('exec reconciler: empty command');
  const clock = options.clock ?? realClock;
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!(timeoutMs >= 0)) throw new RangeError('exec reconciler: timeoutMs must be >= 0');
  const killGraceMs = options.killGraceMs ?? 2_000;
  const maxOutputBytes = options.maxOutputBytes ?? 1024 * 1024;
  const running = new Set<ChildProcess>();
  const program = options.command[0];

  function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      try {
        child.kill(signal);
      } catch {
        // already gone
      }
    }
  }

  function run(input: ExecInput, signal: AbortSignal): Promise<{ stdout: string; stderr: string }> {
    return new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      if (signal.aborted) {
        reject(new ExecReconcilerError('aborted', `${program}: aborted before start`));
        return;
      }
      const env = execEnvironment(process.env, options, input);
      let child: ChildProcess;
      try {
        child = spawn(program, options.command.slice(1), { cwd: options.cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      } catch (e) {
        reject(new ExecReconcilerError('spawn', `${program}: cannot start (${(e as Error).message})`, { cause: e }));
        return;
      }
      running.add(child);
      // If this process dies mid-run, the watchdog ends the program's group (see ownerWatchdog.ts).
      const guard = protectProcessGroup(child.pid);
      // The program exited: whatever it left running in its group (a `kubectl … &`, a `sleep`) goes too,
      // after a normal exit as after a failure; then its pgid is free and no longer watched.
      child.once('exit', () => {
        if (child.pid !== undefined) {
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            // the group is empty
          }
        }
        guard.dispose();
      });
      const stdout: Buffer[] = [];
      let stdoutBytes = 0;
      let stderr = '';
      let failure: ExecReconcilerError | undefined;
      let killTimer: TimerHandle | undefined;
      const stop = (err: ExecReconcilerError) => {
        if (failure) return;
        failure = err;
        killGroup(child, 'SIGTERM');
        killTimer = clock.setTimeout(() => killGroup(child, 'SIGKILL'), killGraceMs);
      };
      const timer = timeoutMs > 0 ? clock.setTimeout(() => stop(new ExecReconcilerError('timeout', `${program}: timed out after ${timeoutMs} ms; killed its process group${options.timeoutSetting ? ` (a program that needs longer: raise ${options.timeoutSetting}, 0 for no limit)` : ''}`)), timeoutMs) : undefined;
      const onAbort = () => {
        const why = signal.reason instanceof Error && signal.reason.message ? signal.reason.message : 'the reconcile was cancelled';
        stop(new ExecReconcilerError('aborted', `${program}: aborted (${why}); killed its process group`));
      };
      signal.addEventListener('abort', onAbort, { once: true });

      child.stdout!.on('data', (b: Buffer) => {
        stdoutBytes += b.length;
        if (stdoutBytes > maxOutputBytes) stop(new ExecReconcilerError('output-too-large', `${program}: stdout exceeded ${maxOutputBytes} bytes; killed (stdout holds only the JSON result: send logs and command output to stderr)`));
        else stdout.push(b);
      });
      child.stderr!.on('data', (b: Buffer) => {
        stderr = (stderr + b.toString('utf8')).slice(-STDERR_TAIL_BYTES * 2);
      });
      // A program that does not read its input closes the pipe: that is not an error.
      child.stdin!.on('error', () => {});
      child.stdin!.end(JSON.stringify(input) + '\n');

      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) clock.clearTimeout(timer);
        if (killTimer) clock.clearTimeout(killTimer);
        signal.removeEventListener('abort', onAbort);
        running.delete(child);
        fn();
      };
      child.on('error', (e: NodeJS.ErrnoException) => {
        guard.dispose();
        finish(() => {
          // spawn says ENOENT for a missing working directory too.
          const noCwd = e.code === 'ENOENT' && options.cwd !== undefined && !statSync(options.cwd, { throwIfNoEntry: false })?.isDirectory();
          const interpreter = e.code === 'ENOENT' && !noCwd ? shebangProblem(program, options.cwd, env.PATH) : undefined;
          if (noCwd) reject(new ExecReconcilerError('spawn', `${program}: cannot start: its working directory ${options.cwd} does not exist (or is no directory)`, { cause: e }));
          else if (interpreter) reject(new ExecReconcilerError('not-found', `${program}: cannot start: ${interpreter}`, { cause: e }));
          else if (e.code === 'ENOENT') reject(new ExecReconcilerError('not-found', `${program}: program not found (check the path, or that it is on PATH)${besideHint(program, options.cwd)}`, { cause: e }));
          else if (e.code === 'EACCES') reject(new ExecReconcilerError('not-executable', `${program}: permission denied (is it executable? chmod +x)`, { cause: e }));
          else reject(new ExecReconcilerError('spawn', `${program}: cannot start (${e.message})`, { cause: e }));
        });
      });
      child.on('close', (code, sig) => {
        finish(() => {
          const stderrTail = tail(stderr);
          if (failure) {
            reject(new ExecReconcilerError(failure.kind, failure.message + (stderrTail ? `\nstderr (tail):\n${stderrTail}` : ''), { exitCode: code, stderrTail }));
          } else if (code !== 0) {
            const how = sig ? `was killed by ${sig}` : `exited with code ${code}`;
            // A call the server's RBAC refused (kubectl's "Error from server (Forbidden)"): the right to ask for and
            // the can-i line, as the built-in loop's errors say them.
            const rbac = lastForbiddenHint(stderrTail);
            // 127 is `env`'s "command not found": a `#!/usr/bin/env python3` line saved with CRLF looks for `python3\r`.
            const crlf = code === 127 ? shebangProblem(program, options.cwd, env.PATH, { crlfOnly: true }) : undefined;
            reject(new ExecReconcilerError('exit', `${program} ${how}${crlf ? ` (${crlf})` : ''}${rbac ? `. ${rbac}` : ''}${stderrTail ? `\nstderr (tail):\n${stderrTail}` : ' (no stderr)'}`, { exitCode: code, stderrTail }));
          } else {
            resolve({ stdout: Buffer.concat(stdout).toString('utf8'), stderr: stderrTail });
          }
        });
      });
    });
  }

  async function reconcile(request: Request, ctx: ReconcileContext): Promise<Result> {
    const object = ctx.cache.get(ctx.primary, request.key) ?? (await readFresh(ctx, ctx.primary, request.namespace, request.name)) ?? null;
    const input: ExecInput = {
      key: request.key,
      namespace: request.namespace ?? null,
      name: request.name,
      resource: { group: ctx.primary.group, version: ctx.primary.version, resource: ctx.primary.resource },
      object,
      kubeconfig: options.kubeconfigPath ?? null,
      context: options.context ?? null,
      dryRun: ctx.dryRun,
    };
    const { stdout, stderr } = await run(input, ctx.signal);
    for (const line of stderr.split('\n')) if (line.trim()) ctx.log.debug(line, { reconciler: 'exec', stream: 'stderr' });
    let out: ExecOutput;
    try {
      out = parseExecOutput(stdout);
    } catch (e) {
      throw new ExecReconcilerError('invalid-output', `${program}: invalid output: ${(e as Error).message}`);
    }
    const lines = typeof out.log === 'string' ? [out.log] : (out.log ?? []);
    for (const line of lines) ctx.log.info(line, { reconciler: 'exec' });
    if (out.status) {
      const current = await readFresh(ctx, ctx.primary, request.namespace, request.name);
      if (current) {
        // The program computed this status from `object` (maybe a stale cache copy): written onto a newer spec it
        // would report the old spec as observed (observedGeneration, messages), and nothing would ever correct it.
        const given = object?.metadata.generation;
        if (given !== undefined && current.metadata.generation !== undefined && current.metadata.generation !== given) {
          throw new ApiError(
            409,
            'Conflict',
            `${program}: the spec of ${request.key} changed (generation ${given} → ${current.metadata.generation}) between the object the program was given and the status write (a stale cache, or an edit while it ran): the status it returned is about the old spec and was not written; reconciling again`,
          );
        }
        const status = out.status;
        await writeStatusIfChanged(ctx, ctx.primary, current, () => status);
      } else {
        ctx.log.warn('the program returned a status but the object no longer exists', { key: request.key });
      }
    }
    if (out.error) {
      // A requeue beside an error is dropped, as controller-runtime drops a Result returned with an error: say so.
      const lost = out.requeueAfterMs !== undefined && out.requeueAfterMs > 0 ? { ignoredResult: `requeueAfterMs ${out.requeueAfterMs}` } : {};
      if (out.terminal) throw Object.assign(new TerminalError(`${program}: ${out.error}`), lost);
      const failure = Object.assign(new Error(`${program}: ${out.error}`), lost);
      throw out.priority !== undefined ? Object.assign(failure, { priority: out.priority }) : failure;
    }
    const result: Result = out.requeueAfterMs !== undefined && out.requeueAfterMs > 0 ? { requeueAfterMs: out.requeueAfterMs, reason: out.reason } : {};
    if (out.priority !== undefined) result.priority = out.priority;
    return result;
  }

  return {
    name: `exec:${options.command.join(' ')}`,
    reconcile,
    dispose() {
      for (const child of running) killGroup(child, 'SIGKILL');
      running.clear();
    },
  };
}

/**
 * A bare program name (no slash) that is not on PATH but is a file in the working directory: a shell would not run it
 * either; say how (`exec:./planter.py`). '' otherwise.
 */
function besideHint(program: string, cwd: string | undefined): string {
  if (program.includes('/')) return '';
  try {
    return statSync(join(cwd ?? process.cwd(), program)).isFile() ? `; ${program} is in the working directory, but a name without a slash is looked up on PATH only: give ./${program}` : '';
  } catch {
    return '';
  }
}

/**
 * Why a program file that exists cannot start although `spawn` said ENOENT: the kernel reports a missing `#!`
 * interpreter as a missing program. Reads the first line of the file `program` names (a path with a slash taken from
 * `cwd`, a bare name looked up on `path`): a `#!` line ending in a carriage return (the file was saved with Windows
 * CRLF line endings, so the interpreter looked for is `python3\r`) says so with how to convert the file; a `#!`
 * interpreter path that does not exist is named. With `crlfOnly`, only the first. undefined when the file is not
 * found or not readable, has no `#!` line, or neither applies.
 */
export function shebangProblem(program: string, cwd: string | undefined, path: string | undefined, opts: { crlfOnly?: boolean } = {}): string | undefined {
  const file = programFile(program, cwd, path);
  if (!file) return undefined;
  let first: string;
  try {
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.alloc(256);
      const n = readSync(fd, buf, 0, buf.length, 0);
      first = buf.subarray(0, n).toString('latin1').split('\n')[0]!;
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  if (!first.startsWith('#!')) return undefined;
  if (first.endsWith('\r')) {
    return `its #! line, ${JSON.stringify(first)}, ends in a carriage return (the file has Windows CRLF line endings), so its interpreter is not found; convert the file to LF line endings (dos2unix ${file}, or sed -i 's/\\r$//' ${file})`;
  }
  if (opts.crlfOnly) return undefined;
  const interpreter = first.slice(2).trim().split(/\s+/)[0];
  if (!interpreter) return `its #! line names no interpreter`;
  try {
    statSync(interpreter);
    return undefined;
  } catch {
    return `the interpreter its #! line names, ${interpreter}, does not exist (install it, or point the #! line at one that does: #!/usr/bin/env NAME finds NAME on PATH)`;
  }
}

/** The file a command's program names: a path with a slash from `cwd`, a bare name from the first `path` entry holding it. */
function programFile(program: string, cwd: string | undefined, path: string | undefined): string | undefined {
  const isFile = (p: string) => {
    try {
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (program.includes('/')) {
    const p = isAbsolute(program) ? program : resolve(cwd ?? process.cwd(), program);
    return isFile(p) ? p : undefined;
  }
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir && isFile(join(dir, program))) return join(dir, program);
  }
  return undefined;
}
