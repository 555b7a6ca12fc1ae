import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createExecReconciler, execEnvironment, ExecReconcilerError, parseExecOutput } from '../../../src/core/reconcilers/execReconciler.ts';
import { isTerminal } from '../../../src/core/controller/reconcile.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { statusOnlyClient, testContext, until, widget } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'rl-exec-test-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function script(name: string, body: string): string {
  const p = join(dir, name);
  writeFileSync(p, `#!/usr/bin/env bash\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

const req = { key: 'ns1/w1', namespace: 'ns1', name: 'w1' };

function isDead(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
}

test('parseExecOutput accepts the documented fields and rejects bad ones with the field name', () => {
  assert.deepEqual(parseExecOutput(' {"requeueAfterMs": 5000, "reason": "wait", "log": ["a"]}\n'), { requeueAfterMs: 5000, reason: 'wait', log: ['a'] });
  assert.deepEqual(parseExecOutput('{"error":"boom","terminal":true,"status":{"x":1}}'), { error: 'boom', terminal: true, status: { x: 1 } });
  assert.throws(() => parseExecOutput(''), /printed nothing/);
  assert.throws(() => parseExecOutput('hello'), /not valid JSON/);
  assert.throws(() => parseExecOutput('[1]'), /one JSON object/);
  assert.throws(() => parseExecOutput('{"requeueAfterMs": -1}'), /"requeueAfterMs" must be a number of milliseconds >= 0/);
  // A duration written as Go or kubectl would write it: the unit is said.
  assert.throws(() => parseExecOutput('{"requeueAfterMs": "5s"}'), (e: Error) => e.message === '"requeueAfterMs" must be a number of milliseconds >= 0, e.g. 5000 for 5 s (got "5s")');
  assert.throws(() => parseExecOutput('{"terminal": "yes"}'), /"terminal" must be a boolean/);
  assert.throws(() => parseExecOutput('{"log": [1]}'), /"log" must be/);
  assert.deepEqual(parseExecOutput('{"requeueAfterMs": 10, "priority": -100}'), { requeueAfterMs: 10, priority: -100 });
  assert.throws(() => parseExecOutput('{"priority": 1.5}'), /"priority" must be an integer/);
  assert.throws(() => parseExecOutput('{"priority": "high"}'), /"priority" must be an integer/);
});

test('parseExecOutput: a misspelt field is an error naming the field meant (the requeue would be lost); progress lines before the JSON are named as such', () => {
  assert.throws(() => parseExecOutput('{"requeueAfter": 5000}'), (e: Error) =>
    e.message === 'unknown field "requeueAfter" (did you mean "requeueAfterMs"?); the output fields are requeueAfterMs, reason, priority, error, terminal, status, log');
  assert.throws(() => parseExecOutput('{"RequeueAfter": 5000, "message": "x"}'), /^Error: unknown fields "RequeueAfter" \(did you mean "requeueAfterMs"\?\), "message"; the output fields are /);
  assert.throws(() => parseExecOutput('configmap/w-config created\nreconciling\n{"status": {}}\n'), (e: Error) =>
    e.message === 'stdout must hold only the JSON result, but 2 other line(s) come before it (the first: "configmap/w-config created"); send progress and command output to stderr (echo … >&2, kubectl … >&2)');
  assert.throws(() => parseExecOutput('done\nnot json either'), /^Error: stdout is not valid JSON \(/);
});

test('parseExecOutput: JSON that is no object (a bare number, true, a string, null, a list) names the output that was probably meant', () => {
  const said = (out: string, message: string) => assert.throws(() => parseExecOutput(out), (e: Error) => e.message === message || assert.fail(`${out}: ${e.message}`));
  said('15000\n', 'stdout must be one JSON object, got 15000: to look again after 15000 ms, print {"requeueAfterMs": 15000}; when done, print {}');
  said('true', 'stdout must be one JSON object, got true: to look again later, print {"requeueAfterMs": <ms>, "reason": "…"}; when done, print {}');
  said('"waiting for payment"', 'stdout must be one JSON object, got "waiting for payment": to wait with a reason, print {"requeueAfterMs": <ms>, "reason": "waiting for payment"}; to fail, print {"error": "waiting for payment"}; when done, print {}');
  said('null', 'stdout must be one JSON object, got null: when done, print {}');
  said('[{}]', 'stdout must be one JSON object, got an array: print one object, such as {} when done (not a list of them)');
});

test('parseExecOutput: every problem of the output in one message, each with its fix', () => {
  assert.throws(() => parseExecOutput('{"terminal": "yes", "requeueAfter": 5000}'), (e: Error) =>
    e.message === '2 problems: "terminal" must be a boolean (got "yes"); unknown field "requeueAfter" (did you mean "requeueAfterMs"?); the output fields are requeueAfterMs, reason, priority, error, terminal, status, log');
  assert.throws(() => parseExecOutput('{"requeueAfterMs": "5s", "priority": 1.5}'), (e: Error) =>
    e.message === '2 problems: "requeueAfterMs" must be a number of milliseconds >= 0, e.g. 5000 for 5 s (got "5s"); "priority" must be an integer (got 1.5)');
});

test('parseExecOutput: a JSON object printed over several lines (json.dumps(indent=2)) with progress lines before or after it names those lines', () => {
  const pretty = '{\n  "requeueAfterMs": 1000,\n  "reason": "pretty"\n}';
  assert.throws(() => parseExecOutput(`progress: working\n${pretty}\n`), (e: Error) =>
    e.message === 'stdout must hold only the JSON result, but 1 other line(s) come before it (the first: "progress: working"); send progress and command output to stderr (echo … >&2, kubectl … >&2)');
  assert.throws(() => parseExecOutput('{"reason": "a"}\ndone!\n'), (e: Error) =>
    e.message === 'stdout must hold only the JSON result, but 1 other line(s) come after it (the first: "done!"); send progress and command output to stderr (echo … >&2, kubectl … >&2)');
  assert.throws(() => parseExecOutput(`configmap/x created\n${pretty}\nbye\nsee you\n`), (e: Error) =>
    e.message === 'stdout must hold only the JSON result, but 1 other line(s) come before it (the first: "configmap/x created") and 2 after it (the first: "bye"); send progress and command output to stderr (echo … >&2, kubectl … >&2)');
  assert.deepEqual(parseExecOutput(`${pretty}\n`), { requeueAfterMs: 1000, reason: 'pretty' });
});

test('parseExecOutput: looking for a JSON object among other lines is bounded (400 lines of Python dict reprs, which start and end as JSON does, are not parsed in every combination)', () => {
  const line = `{'level': 'info', 'msg': '${'x'.repeat(2000)}'}`;
  const text = Array.from({ length: 400 }, () => line).join('\n');
  const parse = JSON.parse;
  let parsed = 0;
  JSON.parse = ((t: string, r?: (this: unknown, k: string, v: unknown) => unknown) => {
    parsed += t.length;
    return parse(t, r);
  }) as typeof JSON.parse;
  try {
    assert.throws(() => parseExecOutput(text), /^Error: stdout is not valid JSON/);
  } finally {
    JSON.parse = parse;
  }
  // Every start and end line tried: over 20 GB of text parsed (20 s with the event loop blocked). Now at most 4 MiB
  // besides the whole output once.
  assert.ok(parsed <= 4 * 1024 * 1024 + text.length, `${parsed} characters parsed`);
});

test('parseExecOutput: output that is no JSON at all quotes the start of stdout once, not again inside the parser\'s message', () => {
  assert.throws(() => parseExecOutput('starting\n{not json'), (e: Error) => {
    assert.equal(e.message.split('starting').length - 1, 1, e.message);
    return /^stdout is not valid JSON \(Unexpected token 's'\); it starts with "starting\\n\{not json"$/.test(e.message);
  });
});

test('happy path: stdin JSON and env vars reach the program; requeue, reason and log lines come back', async () => {
  const echo = script('echo.sh', `
input=$(cat)
printf '%s' "$input" > "${dir}/input.json"
env | grep -E '^(RECONCILE_|KUBECONFIG=)' | sort > "${dir}/env.txt"
echo "diagnostic on stderr" >&2
echo '{"requeueAfterMs": 7000, "reason": "waiting for dep", "log": ["hello from exec"]}'`);
  const r = createExecReconciler({ command: [echo], kubeconfigPath: '/tmp/some/kubeconfig', context: 'lab' });
  const { ctx, logs } = testContext(statusOnlyClient([]), { objects: [widget('w1')], dryRun: true });
  const result = await r.reconcile(req, ctx);
  assert.deepEqual(result, { requeueAfterMs: 7000, reason: 'waiting for dep' });
  const input = JSON.parse(readFileSync(join(dir, 'input.json'), 'utf8'));
  assert.equal(input.key, 'ns1/w1');
  assert.equal(input.namespace, 'ns1');
  assert.equal(input.name, 'w1');
  assert.equal(input.object.metadata.uid, 'uid-w1');
  assert.equal(input.kubeconfig, '/tmp/some/kubeconfig');
  assert.equal(input.context, 'lab');
  assert.equal(input.dryRun, true);
  assert.deepEqual(input.resource, { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets' });
  const env = readFileSync(join(dir, 'env.txt'), 'utf8');
  for (const line of ['KUBECONFIG=/tmp/some/kubeconfig', 'RECONCILE_KEY=ns1/w1', 'RECONCILE_NAMESPACE=ns1', 'RECONCILE_NAME=w1', 'RECONCILE_DRY_RUN=true', 'RECONCILE_CONTEXT=lab', 'RECONCILE_RESOURCE=widgets.lab.reconcile.dev']) {
    assert.ok(env.includes(line), `env has ${line}:\n${env}`);
  }
  assert.ok(logs.some((l) => l.level === 'info' && l.msg === 'hello from exec'));
  assert.ok(logs.some((l) => l.level === 'debug' && l.msg === 'diagnostic on stderr'));
  r.dispose();
});

test('"priority" in the output becomes Result.priority (with or without a requeue)', async () => {
  const { ctx } = testContext(statusOnlyClient([]), { objects: [widget('w1')] });
  const later = createExecReconciler({ command: [script('prio.sh', `cat >/dev/null; echo '{"requeueAfterMs": 500, "reason": "later", "priority": 7}'`)] });
  assert.deepEqual(await later.reconcile(req, ctx), { requeueAfterMs: 500, reason: 'later', priority: 7 });
  const done = createExecReconciler({ command: [script('prio0.sh', `cat >/dev/null; echo '{"priority": -3}'`)] });
  assert.deepEqual(await done.reconcile(req, ctx), { priority: -3 });
  // With an error it is the retry's priority (controller-runtime's Result.Priority returned with an error).
  const failing = createExecReconciler({ command: [script('prioErr.sh', `cat >/dev/null; echo '{"error": "quota", "priority": 10}'`)] });
  await assert.rejects(failing.reconcile(req, ctx), (e: unknown) => e instanceof Error && /quota$/.test(e.message) && (e as { priority?: unknown }).priority === 10);
  const plain = createExecReconciler({ command: [script('plainErr.sh', `cat >/dev/null; echo '{"error": "quota"}'`)] });
  await assert.rejects(plain.reconcile(req, ctx), (e: unknown) => e instanceof Error && !('priority' in e) && !('ignoredResult' in e));
  // A requeue beside an error is dropped (as controller-runtime drops a Result returned with an error), and the error says so.
  const both = createExecReconciler({ command: [script('bothErr.sh', `cat >/dev/null; echo '{"error": "quota", "requeueAfterMs": 5000}'`)] });
  await assert.rejects(both.reconcile(req, ctx), (e: unknown) => e instanceof Error && (e as { ignoredResult?: unknown }).ignoredResult === 'requeueAfterMs 5000');
  const bothTerminal = createExecReconciler({ command: [script('bothTerm.sh', `cat >/dev/null; echo '{"error": "bad", "terminal": true, "requeueAfterMs": 100}'`)] });
  await assert.rejects(bothTerminal.reconcile(req, ctx), (e: unknown) => isTerminal(e) && (e as { ignoredResult?: unknown }).ignoredResult === 'requeueAfterMs 100');
});

test('after a normal exit, whatever the program left running in its group is killed', async () => {
  const pidFile = join(dir, 'background.pid');
  // A background sleep with its output detached: without the group kill it would outlive the run.
  const s = script('bg.sh', `cat >/dev/null; sleep 300 >/dev/null 2>&1 & echo $! > "${pidFile}"; echo '{}'`);
  const r = createExecReconciler({ command: [s] });
  const { ctx } = testContext(statusOnlyClient([]), { objects: [widget('w1')] });
  assert.deepEqual(await r.reconcile(req, ctx), {});
  const bg = Number(readFileSync(pidFile, 'utf8'));
  await until(() => isDead(bg));
  assert.ok(isDead(bg), 'the background process died with its group');
  r.dispose();
});

test('the program gets the documented environment: inherited variables without the editor\'s plumbing, then env, then the protocol variables', () => {
  const env = execEnvironment(
    { PATH: '/bin', HOME: '/h', VSCODE_IPC_HOOK_CLI: '/tmp/x.sock', ELECTRON_RUN_AS_NODE: '1', RECONCILE_LAB_BRIDGE_TOKEN: 'secret', RECONCILE_KEY: 'spoofed', KUBECONFIG: '/old' },
    { env: { EXTRA: 'x', RECONCILE_NAME: 'spoofed' }, kubeconfigPath: '/k', context: 'c' },
    { key: 'ns/n', namespace: 'ns', name: 'n', dryRun: false, resource: { group: '', version: 'v1', resource: 'configmaps' } },
  );
  assert.deepEqual(env, {
    PATH: '/bin', HOME: '/h', EXTRA: 'x', KUBECONFIG: '/k', RECONCILE_CONTEXT: 'c',
    RECONCILE_KEY: 'ns/n', RECONCILE_NAMESPACE: 'ns', RECONCILE_NAME: 'n', RECONCILE_DRY_RUN: 'false', RECONCILE_RESOURCE: 'configmaps',
  });
});

test('the returned status is written through /status only when it differs', async () => {
  const w = widget('w1', { status: { phase: 'Old' } });
  const client = statusOnlyClient([w]);
  const s = script('status.sh', `cat >/dev/null; echo '{"status": {"phase": "Ready"}}'`);
  const r = createExecReconciler({ command: [s] });
  const { ctx } = testContext(client, { objects: [w] });
  assert.deepEqual(await r.reconcile(req, ctx), {});
  assert.equal(client.statusWrites.length, 1);
  assert.deepEqual(client.statusWrites[0]!.status, { phase: 'Ready' });
  await r.reconcile(req, ctx);
  assert.equal(client.statusWrites.length, 1, 'same status again: no second write');
});

test('"error" is a retryable error; with "terminal": true a TerminalError', async () => {
  const { ctx } = testContext(statusOnlyClient([]), { objects: [widget('w1')] });
  const soft = createExecReconciler({ command: [script('err.sh', `echo '{"error": "dependency API down"}'`)] });
  await assert.rejects(soft.reconcile(req, ctx), (e: Error) => !isTerminal(e) && /dependency API down/.test(e.message));
  const hard = createExecReconciler({ command: [script('term.sh', `echo '{"error": "spec is invalid", "terminal": true}'`)] });
  await assert.rejects(hard.reconcile(req, ctx), (e: Error) => isTerminal(e) && /spec is invalid/.test(e.message));
});

test('non-zero exit: an error with the exit code and the stderr tail', async () => {
  const { ctx } = testContext(statusOnlyClient([]), { objects: [widget('w1')] });
  const r = createExecReconciler({ command: [script('fail.sh', `for i in $(seq 1 2000); do echo "noise line $i" >&2; done; echo "kubectl: connection refused" >&2; exit 3`)] });
  await assert.rejects(r.reconcile(req, ctx), (e: unknown) => {
    assert.ok(e instanceof ExecReconcilerError);
    assert.equal(e.kind, 'exit');
    assert.equal(e.exitCode, 3);
    assert.match(e.message, /exited with code 3/);
    assert.match(e.message, /kubectl: connection refused/);
    assert.ok(e.stderrTail.length <= 4100, 'only the tail is kept');
    assert.doesNotMatch(e.stderrTail, /noise line 1\n/);
    return true;
  });
});

test('non-zero exit after a call RBAC refused: the error names the missing right and the can-i line before the stderr tail', async () => {
  const { ctx } = testContext(statusOnlyClient([]), { objects: [widget('w1')] });
  const refused = 'Error from server (Forbidden): widgets.lab.reconcile.dev \\"w1\\" is forbidden: User \\"system:serviceaccount:shop:dev\\" cannot patch resource \\"widgets\\" in API group \\"lab.reconcile.dev\\" in the namespace \\"shop\\"';
  const r = createExecReconciler({ command: [script('forbidden.sh', `echo "an earlier line" >&2; echo "${refused}" >&2; exit 1`)] });
  await assert.rejects(r.reconcile(req, ctx), (e: unknown) => {
    assert.ok(e instanceof ExecReconcilerError);
    assert.match(e.message, /exited with code 1\. Missing right: patch on widgets\.lab\.reconcile\.dev in namespace shop \(ask for it in a Role\); check with: kubectl auth can-i patch widgets\.lab\.reconcile\.dev -n shop\nstderr \(tail\):\n/);
    assert.match(e.message, /Error from server \(Forbidden\)/, 'the stderr tail is kept');
    return true;
  });
});

test('invalid and oversized output are clear errors', async () => {
  const { ctx } = testContext(statusOnlyClient([]), { objects: [widget('w1')] });
  const bad = createExecReconciler({ command: [script('bad.sh', `echo 'Reconciled OK!'`)] });
  await assert.rejects(bad.reconcile(req, ctx), (e: unknown) => e instanceof ExecReconcilerError && e.kind === 'invalid-output' && /not valid JSON/.test(e.message));
  const empty = createExecReconciler({ command: [script('empty.sh', `true`)] });
  await assert.rejects(empty.reconcile(req, ctx), (e: unknown) => e instanceof ExecReconcilerError && e.kind === 'invalid-output' && /printed nothing/.test(e.message));
  const big = createExecReconciler({ command: [script('big.sh', `head -c 200000 /dev/zero | tr '\\0' 'x'`)], maxOutputBytes: 50_000 });
  await assert.rejects(big.reconcile(req, ctx), (e: unknown) => e instanceof ExecReconcilerError && e.kind === 'output-too-large' && /exceeded 50000 bytes; killed \(stdout holds only the JSON result: send logs and command output to stderr\)/.test(e.message));
});

test('a missing or non-executable program is a clear error, not a crash', async () => {
  const { ctx } = testContext(statusOnlyClient([]), { objects: [widget('w1')] });
  const missing = createExecReconciler({ command: [join(dir, 'does-not-exist.sh')] });
  await assert.rejects(missing.reconcile(req, ctx), (e: unknown) => e instanceof ExecReconcilerError && e.kind === 'not-found' && /program not found \(check the path, or that it is on PATH\)$/.test(e.message));
  // A file of the working directory named without ./ (looked up on PATH only, as a shell does): say how.
  writeFileSync(join(dir, 'planter-rl.py'), '#!/bin/sh\necho {}\n');
  chmodSync(join(dir, 'planter-rl.py'), 0o755);
  const bare = createExecReconciler({ command: ['planter-rl.py'], cwd: dir });
  await assert.rejects(bare.reconcile(req, ctx), (e: unknown) => e instanceof ExecReconcilerError && e.kind === 'not-found' && /^planter-rl\.py: program not found \(check the path, or that it is on PATH\); planter-rl\.py is in the working directory, but a name without a slash is looked up on PATH only: give \.\/planter-rl\.py$/.test(e.message));
  const p = join(dir, 'noexec.sh');
  writeFileSync(p, '#!/bin/sh\necho {}\n');
  chmodSync(p, 0o644);
  const noexec = createExecReconciler({ command: [p] });
  await assert.rejects(noexec.reconcile(req, ctx), (e: unknown) => e instanceof ExecReconcilerError && e.kind === 'not-executable' && /permission denied/.test(e.message));
});

test('timeout kills the whole process group (grandchildren too), SIGKILL after the grace period', async () => {
  const clock = new FakeClock();
  const pidFile = join(dir, 'grandchild.pid');
  // Ignores SIGTERM and starts a grandchild that would outlive a plain kill of the parent.
  const slow = script('slow.sh', `trap '' TERM; sleep 300 & echo $! > "${pidFile}"; wait; echo '{}'`);
  const r = createExecReconciler({ command: [slow], timeoutMs: 5_000, killGraceMs: 1_000, clock, timeoutSetting: 'reconcileLab.reconciler.execTimeoutSeconds' });
  const { ctx } = testContext(statusOnlyClient([]), { objects: [widget('w1')] });
  const p = r.reconcile(req, ctx);
  let error: unknown;
  p.catch((e) => (error = e));
  await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 5_000_000);
  const grandchild = Number(readFileSync(pidFile, 'utf8'));
  clock.step(4_999);
  await new Promise((res) => setImmediate(res));
  assert.equal(error, undefined, 'not yet timed out');
  clock.step(1); // timeout: SIGTERM to the group (ignored by the trap, fatal to sleep)
  clock.step(1_000); // grace over: SIGKILL
  await assert.rejects(p, (e: unknown) => e instanceof ExecReconcilerError && e.kind === 'timeout' && e.message === `${slow}: timed out after 5000 ms; killed its process group (a program that needs longer: raise reconcileLab.reconciler.execTimeoutSeconds, 0 for no limit)`);
  // A signalled process dies when the kernel next schedules it (a busy machine shows it alive for a moment).
  await until(() => isDead(grandchild), 5_000_000).catch(() => {});
  assert.ok(isDead(grandchild), 'the grandchild was killed with its group');
  assert.equal(clock.pendingTimers, 0, 'no timer left behind');
});

test('an aborted reconcile kills the program', async () => {
  const ac = new AbortController();
  const r = createExecReconciler({ command: [script('wait.sh', `sleep 300; echo '{}'`)], timeoutMs: 60_000, clock: new FakeClock() });
  const { ctx } = testContext(statusOnlyClient([]), { objects: [widget('w1')], signal: ac.signal });
  const p = r.reconcile(req, ctx);
  await new Promise((res) => setImmediate(res));
  ac.abort();
  await assert.rejects(p, (e: unknown) => e instanceof ExecReconcilerError && e.kind === 'aborted');
});

test('a program whose #! interpreter is missing, or whose #! line ends in CRLF, says so rather than "program not found"', async () => {
  const { ctx } = testContext(statusOnlyClient([]), { objects: [widget('w1')] });
  const file = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    chmodSync(p, 0o755);
    return p;
  };
  // The kernel reports a missing interpreter as ENOENT, the error of a missing program.
  const direct = file('crlf-direct.py', '#!/bin/sh\r\necho {}\r\n');
  await assert.rejects(createExecReconciler({ command: [direct] }).reconcile(req, ctx), (e: unknown) =>
    e instanceof ExecReconcilerError && e.kind === 'not-found' &&
    e.message === `${direct}: cannot start: its #! line, "#!/bin/sh\\r", ends in a carriage return (the file has Windows CRLF line endings), so its interpreter is not found; convert the file to LF line endings (dos2unix ${direct}, or sed -i 's/\\r$//' ${direct})`);
  // Through env, the program runs and env exits 127 naming "sh\r": the same hint is added to the exit message.
  const viaEnv = file('crlf-env.sh', '#!/usr/bin/env sh\r\necho {}\r\n');
  await assert.rejects(createExecReconciler({ command: [viaEnv] }).reconcile(req, ctx), (e: unknown) =>
    e instanceof ExecReconcilerError && e.kind === 'exit' && e.exitCode === 127 &&
    e.message.startsWith(`${viaEnv} exited with code 127 (its #! line, "#!/usr/bin/env sh\\r", ends in a carriage return (the file has Windows CRLF line endings), so its interpreter is not found; convert the file to LF line endings (dos2unix ${viaEnv}, `));
  const missing = file('python9.py', '#!/no/such/python9 -u\nprint("{}")\n');
  await assert.rejects(createExecReconciler({ command: [missing] }).reconcile(req, ctx), (e: unknown) =>
    e instanceof ExecReconcilerError && e.kind === 'not-found' &&
    e.message === `${missing}: cannot start: the interpreter its #! line names, /no/such/python9, does not exist (install it, or point the #! line at one that does: #!/usr/bin/env NAME finds NAME on PATH)`);
  // Found on PATH by its bare name, relative to cwd: the same.
  const onPath = createExecReconciler({ command: ['python9.py'], env: { PATH: dir } });
  await assert.rejects(onPath.reconcile(req, ctx), (e: unknown) => e instanceof ExecReconcilerError && /^python9\.py: cannot start: the interpreter its #! line names, \/no\/such\/python9, does not exist/.test(e.message));
  // A working directory that is gone (a removed workspace folder): spawn says ENOENT for it too.
  const gone = createExecReconciler({ command: [direct], cwd: join(dir, 'removed-folder') });
  await assert.rejects(gone.reconcile(req, ctx), (e: unknown) => e instanceof ExecReconcilerError && e.kind === 'spawn' &&
    e.message === `${direct}: cannot start: its working directory ${join(dir, 'removed-folder')} does not exist (or is no directory)`);
  const relative = createExecReconciler({ command: ['./python9.py'], cwd: dir });
  await assert.rejects(relative.reconcile(req, ctx), (e: unknown) => e instanceof ExecReconcilerError && /^\.\/python9\.py: cannot start: the interpreter its #! line names/.test(e.message));
});
