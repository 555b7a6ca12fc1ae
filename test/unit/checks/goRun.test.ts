import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GoCheckRunner, goContextProblem, notQueuedText, runWriteOf, splitGoRun } from '../../../src/core/checks/goRun.ts';
import { isIdleApply } from '../../../src/core/journal/writeText.ts';
import { bridgeResourceName } from '../../../src/core/bridge/causes.ts';
import { realClock } from '../../../src/core/clock.ts';

test('a go run command line becomes go build arguments and the program arguments', () => {
  assert.deepEqual(splitGoRun(['go', 'run', './cmd', '--leader-elect=false', '-v']), { buildArgs: ['./cmd'], programArgs: ['--leader-elect=false', '-v'] });
  assert.deepEqual(splitGoRun(['go', 'run', '-tags', 'e2e', '-race', './cmd/manager', 'x']), { buildArgs: ['-tags', 'e2e', '-race', './cmd/manager'], programArgs: ['x'] });
  assert.deepEqual(splitGoRun(['go', 'run', '-ldflags=-s', '.']), { buildArgs: ['-ldflags=-s', '.'], programArgs: [] });
  assert.equal(splitGoRun(['./bin/manager', '--x']), undefined, 'a binary is launched as it is');
  assert.equal(splitGoRun(['go', 'run']), undefined, 'no package: launched as it is (go reports the error)');
  // go -C dir (only first): built in that directory, and the program starts there as under go run.
  assert.deepEqual(splitGoRun(['go', '-C', 'orchard', 'run', './cmd', '--mode=x']), { buildArgs: ['./cmd'], programArgs: ['--mode=x'], chdir: 'orchard' });
  assert.deepEqual(splitGoRun(['go', '-C=/abs/orchard', 'run', '-tags', 'e2e', '.']), { buildArgs: ['-tags', 'e2e', '.'], programArgs: [], chdir: '/abs/orchard' });
  assert.deepEqual(splitGoRun(['go', '--C', 'o', 'run', '.']), { buildArgs: ['.'], programArgs: [], chdir: 'o' });
  assert.equal(splitGoRun(['go', '-C', 'orchard', 'build', '.']), undefined, 'not go run');
  assert.equal(splitGoRun(['go', '-C']), undefined);
});

test('a go -C dir run command is built once in dir, and each run starts the binary in dir (as go run would)', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'rl-gorun-'));
  try {
    const mod = join(ws, 'orchard');
    mkdirSync(join(mod, 'cmd'), { recursive: true });
    writeFileSync(join(mod, 'go.mod'), 'module example.org/orchard\n\ngo 1.22\n');
    writeFileSync(join(mod, 'cmd', 'main.go'), 'package main\n\nfunc main() {}\n');
    const runner = new GoCheckRunner({ command: ['go', '-C', 'orchard', 'run', './cmd', '--mode=x'], cwd: ws } as ConstructorParameters<typeof GoCheckRunner>[0]);
    assert.equal(runner.builds, true);
    assert.equal(runner.launchCwd, ws, 'before the build: the command\'s own directory');
    await runner.prepare(new AbortController().signal, realClock);
    assert.equal(runner.launchCwd, mod);
    assert.deepEqual(runner.launchCommand.slice(1), ['--mode=x']);
    assert.ok(existsSync(runner.launchCommand[0]!), 'the binary was built');
    assert.deepEqual(runner.givenCommand, ['go', '-C', 'orchard', 'run', './cmd', '--mode=x']);
    runner.dispose();
    assert.ok(!existsSync(runner.launchCommand[0]!), 'dispose removes the binary');
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test('cancelling the checks while a go run command is built stops go build and leaves no go-build directory in the temp directory', { timeout: 120_000 }, async () => {
  const ws = mkdtempSync(join(tmpdir(), 'rl-gorun-cancel-'));
  const tmp = join(ws, 'tmp');
  mkdirSync(tmp);
  const before = process.env.TMPDIR;
  process.env.TMPDIR = tmp; // where the runner's own directory goes (os.tmpdir), and go's default for its work directory
  try {
    writeFileSync(join(ws, 'go.mod'), 'module example.org/slow\n\ngo 1.22\n');
    writeFileSync(join(ws, 'main.go'), 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("built") }\n');
    // -a rebuilds every package (the runtime too): a build that lasts long enough to be cancelled in the middle.
    const runner = new GoCheckRunner({ command: ['go', 'run', '-a', '.'], cwd: ws } as ConstructorParameters<typeof GoCheckRunner>[0]);
    const abort = new AbortController();
    const built = runner.prepare(abort.signal, realClock);
    const workDirs = () => readdirSync(tmp, { recursive: true }).map(String).filter((p) => /go-build\d+$/.test(p));
    for (let i = 0; i < 600 && workDirs().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(workDirs().length, 1, `go build made its work directory: ${workDirs().join(', ')}`);
    assert.equal(workDirs()[0]!.includes('reconcile-lab-check-'), true, 'inside the runner\'s own directory');
    await new Promise((r) => setTimeout(r, 300));
    abort.abort(new Error('cancelled by the person'));
    await assert.rejects(built, /^Error: cancelled by the person$/);
    runner.dispose();
    assert.deepEqual(readdirSync(tmp), [], 'nothing left in the temp directory');
  } finally {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(ws, { recursive: true, force: true });
  }
});

test('a go run build stopped midway (Ctrl+C during check) leaves no go-build directory behind: go build works in the runner\'s own directory, which dispose removes', async () => {
  const ws = mkdtempSync(join(tmpdir(), 'rl-gorun-'));
  try {
    // A go that behaves as a killed go build does: it makes its work directory under GOTMPDIR (else the system temp
    // dir), says where, and is killed before it can remove it.
    const bin = join(ws, 'bin');
    mkdirSync(bin);
    const seen = join(ws, 'work.txt');
    writeFileSync(join(bin, 'go'), `#!/bin/sh\nw=$(mktemp -d "\${GOTMPDIR:-/tmp}/go-build-rl-test-XXXXXX")\necho "$w" > ${JSON.stringify(seen)}\nexec sleep 30\n`, { mode: 0o755 });
    const runner = new GoCheckRunner({ command: ['go', 'run', './cmd'], cwd: ws, env: { PATH: `${bin}:${process.env.PATH}` } } as ConstructorParameters<typeof GoCheckRunner>[0]);
    const stop = new AbortController();
    const built = runner.prepare(stop.signal, realClock);
    const end = Date.now() + 10_000;
    while (!existsSync(seen) || !readFileSync(seen, 'utf8').trim()) {
      assert.ok(Date.now() < end, 'the fake go did not start');
      await new Promise((r) => setTimeout(r, 20));
    }
    stop.abort(new Error('interrupted'));
    await assert.rejects(built);
    const work = readFileSync(seen, 'utf8').trim();
    runner.dispose();
    // Before: GOTMPDIR was not set, and /tmp/go-build-rl-test-… stayed.
    assert.ok(!existsSync(work), `go build's work directory ${work} is left behind`);
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test('a check runner builds only a go run command: a binary is run as it is (no "building" step is announced for it)', () => {
  const built = new GoCheckRunner({ command: ['go', 'run', './cmd'] } as ConstructorParameters<typeof GoCheckRunner>[0]);
  const binary = new GoCheckRunner({ command: ['./bin/manager', '--leader-elect=false'] } as ConstructorParameters<typeof GoCheckRunner>[0]);
  assert.equal(built.builds, true);
  assert.equal(binary.builds, false);
  assert.deepEqual(binary.launchCommand, ['./bin/manager', '--leader-elect=false']);
});

test('the bridge resource name is plural.version.group', () => {
  assert.equal(bridgeResourceName({ group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets' }), 'widgets.v1alpha1.lab.reconcile.dev');
  assert.equal(bridgeResourceName({ group: '', version: 'v1', resource: 'configmaps' }), 'configmaps.v1');
});

test('a write message of a check instance becomes a harness write with its bodies', () => {
  const w = runWriteOf({ type: 'write', controller: 'widget', key: 'ns/a', reconcileID: 'r', at: 5, write: { verb: 'update', group: '', version: 'v1', resource: 'configmaps', namespace: 'ns', name: 'a-config', subresource: 'status', resourceVersionBefore: '10', resourceVersionAfter: '10', dryRun: false, before: { metadata: { name: 'a-config' } }, after: { metadata: { name: 'a-config' } } } }, 7);
  assert.equal(w.key, 'ns/a');
  assert.equal(w.at, 7);
  assert.equal(w.record.key, 'ns/a-config');
  assert.equal(w.record.outcome, 'ok');
  assert.equal(w.record.resourceVersionBefore, w.record.resourceVersionAfter);
  assert.equal(w.record.subresource, 'status');
  assert.deepEqual(w.record.before, { metadata: { name: 'a-config' } });
  const e = runWriteOf({ type: 'write', at: 1, write: { verb: 'deleteAllOf', group: '', version: 'v1', resource: 'configmaps', name: '', dryRun: false, error: 'forbidden' } }, 2);
  assert.equal(e.record.verb, 'delete');
  assert.equal(e.record.outcome, 'error');
  assert.match(e.record.error!.message, /forbidden/);
  const warned = runWriteOf({ type: 'write', at: 1, write: { verb: 'update', group: 'shop.example.io', version: 'v1', resource: 'orders', namespace: 'ns', name: 'o', subresource: 'status', dryRun: false, warnings: ['unknown field "status.phase"'] } }, 2);
  assert.deepEqual(warned.record.warnings, ['unknown field "status.phase"'], "the server's warnings stay with the write");
});

test('a patch of the apply patch type (Patch(ctx, obj, client.Apply)) is a server-side apply to the checks; a no-op apply is no run-twice finding, one whose fields the server dropped is', () => {
  const patch = (patchType: string) => runWriteOf({ type: 'write', at: 1, write: { verb: 'patch', group: '', version: 'v1', resource: 'configmaps', namespace: 'ns', name: 'c', patchType, resourceVersionBefore: '5', resourceVersionAfter: '5', dryRun: false } }, 2).record;
  assert.equal(patch('application/apply-patch+yaml').verb, 'apply');
  assert.equal(patch('application/merge-patch+json').verb, 'patch');
  assert.equal(isIdleApply(patch('application/apply-patch+yaml')), true);
  assert.equal(isIdleApply(patch('application/merge-patch+json')), false, 'a merge patch that changes nothing stays a finding');
  assert.equal(isIdleApply({ verb: 'apply', warnings: ['unknown field "data.extra"'] }), false, 'fields the server drops are never stored: still a finding');
});

test('a selected context other than the kubeconfig\'s current-context is a problem for a Go program (it reads current-context)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rl-kc-'));
  const path = join(dir, 'config');
  writeFileSync(path, [
    'apiVersion: v1', 'kind: Config', 'current-context: a',
    'clusters:', '- name: c', '  cluster: {server: "https://127.0.0.1:1"}', '- name: d', '  cluster: {server: "https://127.0.0.1:2"}',
    '- name: c2', '  cluster: {server: "https://127.0.0.1:1"}',
    'users:', '- name: u', '  user: {}', '- name: u2', '  user: {}',
    'contexts:', '- name: a', '  context: {cluster: c, user: u}', '- name: b', '  context: {cluster: d, user: u}',
    '- name: same', '  context: {cluster: c2, user: u, namespace: other}', '- name: other-user', '  context: {cluster: c, user: u2}',
  ].join('\n'));
  try {
    assert.equal(goContextProblem(path, 'a'), undefined);
    assert.match(goContextProblem(path, 'b') ?? '', /current-context "a", not the selected context "b" \(another cluster or user\)[^]*kubectl config use-context b/);
    // Another context on the same server as the same user (another namespace): the program reaches the same cluster.
    assert.equal(goContextProblem(path, 'same'), undefined);
    assert.match(goContextProblem(path, 'other-user', 'it would act as another user') ?? '', /\(another cluster or user\): it would act as another user\./);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a copy its check instance never queued: the text names the controller\'s event filter (its cache does watch the scratch namespace), not a question about the namespace', () => {
  const t = notQueuedText('rl-check-5b50f476/fresh');
  assert.match(t, /^the Go controller did not queue rl-check-5b50f476\/fresh within 60 s, though its check instance's cache watches the scratch namespace: most likely an event filter of the controller \(builder\.WithPredicates, WithEventFilter\) lets through only a fixed namespace/);
  assert.doesNotMatch(t, /does it watch/);
});
