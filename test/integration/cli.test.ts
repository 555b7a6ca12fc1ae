import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNamespace, getTestCluster, installCrd, testCrd, uniqueName, waitUntil } from './support/cluster.ts';
import { CLI_MAIN, runCliProcess } from './support/cli.ts';
import type { KubeTransport } from '../../src/core/k8s/transport.ts';
import { client as makeClient, CONFIGMAPS, installLabCrd, ROOT, sampleWidgets, type LabCrd } from './reconcilers.support.ts';
import { runCli } from '../../src/cli/cli.ts';
import { toDisposable } from '../../src/core/lifecycle.ts';
import { isNotFound } from '../../src/core/k8s/client.ts';
import type { DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';

const NODE = process.execPath;
const cli = runCliProcess;

describe('reconcile-lab CLI against a real kube-apiserver', () => {
  let c: DynamicKubeClient;
  let crd: LabCrd;
  let ns: string;
  let kubeconfig: string;
  let transport: KubeTransport;
  let common: string[];

  before(async () => {
    const cluster = await getTestCluster();
    kubeconfig = cluster.kubeconfigPath;
    transport = cluster.transport;
    c = makeClient(cluster.transport);
    crd = await installLabCrd(cluster.transport);
    ns = await createNamespace(cluster.transport, 'cli');
    for (const w of sampleWidgets(crd, ns)) await c.create(crd.gvr, w);
    common = ['--kubeconfig', kubeconfig, '--resource', `widgets.${crd.group}`, '-n', ns];
  });

  test('--help exits 0; usage errors exit 2', async () => {
    const help = await cli(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Exit codes:/);
    const bad = await cli(['dry-run']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /dry-run needs exactly one <key>/);
    // An unknown flag gets the CLI's own message and where the usage is (not the whole help, which would bury the
    // error in a CI log), not Node's parseArgs text.
    const unknown = await cli(['report', '--bogus']);
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr, 'reconcile-lab: unknown option --bogus\nRun "reconcile-lab --help" for usage.\n');
    assert.doesNotMatch(unknown.stderr, /positional argument|place it at the end/);
  });

  test('--resource with a plural alone resolves to the one group serving it; served by several groups, a usage error names them (exit 2)', async () => {
    // A plural only this test serves: it resolves to its full name (said on stderr), as kubectl resolves it.
    const kind = `Gadget${uniqueName('x').slice(2)}`;
    const plural = `${kind.toLowerCase()}s`;
    const group = `${uniqueName('g')}.lab.reconcile.dev`;
    await installCrd(transport, testCrd({ group, kind, plural }));
    const one = await cli(['report', '--kubeconfig', kubeconfig, '--resource', plural, '-n', ns, '--reconciler', 'exec:true']);
    assert.equal(one.code, 0, one.stderr);
    assert.equal(one.stderr, `reconcile-lab: note: --resource ${plural} is ${plural}.${group}\n`);
    // "widgets" is served by one group per suite that installed the lab CRD on the shared control plane (a second one
    // installed here, so that it is ambiguous on a fresh one too): the CLI names every one of them (so the user picks).
    const other = await installLabCrd(transport);
    const r = await cli(['report', '--kubeconfig', kubeconfig, '--resource', 'widgets', '-n', ns]);
    assert.equal(r.code, 2, r.stderr);
    const m = r.stderr.match(/^reconcile-lab: --resource widgets is ambiguous: \d+ API groups serve it \((.+)\); name one with its group, e\.g\. --resource (\S+)\n$/);
    assert.ok(m, r.stderr);
    const suggested = m[1]!.split(', ');
    for (const g of [crd.group, other.group]) assert.ok(suggested.includes(`widgets.${g}`), `${JSON.stringify(suggested)} names widgets.${g}`);
    for (const s of suggested) assert.match(s, /^widgets\.[a-z0-9.-]+$/, `a full plural.group: ${s}`);
    assert.equal(new Set(suggested).size, suggested.length, `no duplicates: ${JSON.stringify(suggested)}`);
    assert.equal(m[2], suggested[0]);
  });

  test('a typo in a key, a namespace or a plural is named with what was probably meant; the loop still runs', async () => {
    const kc = ['--kubeconfig', kubeconfig];
    const widgets = ['--resource', `widgets.${crd.group}`];
    const typoNs = `${ns}x`;
    // run in a namespace that does not exist: a note (with the real one), and the loop runs (and exits 0) anyway.
    const run = await cli(['run', ...kc, ...widgets, '-n', typoNs, '--duration', '1']);
    assert.equal(run.code, 0, run.stderr);
    const nsNote = run.stderr.match(/^reconcile-lab: note: namespace "([^"]+)" does not exist \(did you mean (.+)\?\): the loop watches it and reconciles what is created there$/m);
    assert.ok(nsNote, run.stderr);
    assert.equal(nsNote[1], typoNs);
    assert.ok(nsNote[2]!.split(' or ').includes(ns), nsNote[2]);
    assert.match(run.stderr, new RegExp(`running on widgets\\.${crd.group.replace(/\./g, '\\.')} in ${typoNs} `));
    // step of an object that does not exist: the note names the close one; the reconcile still runs (deleted object).
    const step = await cli(['step', `${ns}/widget-redy`, ...kc, ...widgets]);
    assert.equal(step.code, 0, step.stderr);
    assert.match(step.stderr, new RegExp(`^reconcile-lab: note: widgets\\.\\S+ ${ns}/widget-redy does not exist on the server \\(did you mean ${ns}/widget-ready\\?\\); the reconciler runs as for a deleted object$`, 'm'));
    assert.match(step.stdout, new RegExp(`■ ${ns}/widget-redy done`));
    // A bare name is taken in the default namespace: the note names the object of that name in another namespace.
    const bare = await cli(['step', 'widget-ready', ...kc, ...widgets]);
    assert.equal(bare.code, 0, bare.stderr);
    const bareNote = bare.stderr.match(/^reconcile-lab: note: widgets\.\S+ default\/widget-ready does not exist on the server \(did you mean (.+)\?\); the reconciler runs as for a deleted object$/m);
    assert.ok(bareNote, bare.stderr);
    assert.ok(bareNote[1]!.split(' or ').includes(`${ns}/widget-ready`), bareNote[1]);
    // dry-run in a namespace that does not exist says that, rather than "no changes" alone.
    const dry = await cli(['dry-run', `${typoNs}/widget-ready`, ...kc, ...widgets]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stderr, new RegExp(`${typoNs}/widget-ready does not exist: namespace "${typoNs}" does not exist \\(did you mean [^)]*${ns}`));
    assert.match(dry.stdout, /Planned actions: none \(the object does not exist: the reconcile had nothing to do for it\)\./, 'not "already as desired" for an object that is not there');
    // An existing key gets no note.
    const fine = await cli(['dry-run', `${ns}/widget-ready`, ...kc, ...widgets]);
    assert.doesNotMatch(fine.stderr, /note:/);
    // check of a key that does not exist: usage error naming the close one.
    const check = await cli(['check', `${ns}/widget-redy`, ...kc, ...widgets]);
    assert.equal(check.code, 2, check.stderr);
    assert.match(check.stderr, new RegExp(`did you mean ${ns}/widget-ready\\?`));
    // A plural typo in a served group lists the group's resources; an API group nobody serves says to install the CRD.
    // Not served: a usage error (exit 2), as a bare name nobody serves.
    const plural = await cli(['report', ...kc, '--resource', `widgetz.${crd.group}`, '-n', ns]);
    assert.equal(plural.code, 2);
    assert.equal(plural.stderr, `reconcile-lab: the cluster does not serve widgetz.${crd.group}: API group ${crd.group} serves widgets (did you mean --resource widgets.${crd.group}?)\n`);
    const group = await cli(['report', ...kc, '--resource', 'ponds.not-installed.example.org', '-n', ns]);
    assert.equal(group.code, 2);
    assert.match(group.stderr, /no API group not-installed\.example\.org is served\. Install its CustomResourceDefinition .*kubectl api-resources --api-group=not-installed\.example\.org\n$/);
    // The kind, in any case, names the resource as kubectl does.
    const kind = await cli(['inspect', `${ns}/widget-ready`, ...kc, '--resource', `Widget.${crd.group}`]);
    assert.equal(kind.code, 0, kind.stderr);
    assert.match(kind.stdout, new RegExp(`${ns}/widget-ready: `));
  });

  test('an exec status with observedGeneration on a CRD without the status subresource stops with a terminal error, not a hot loop', async () => {
    const group = `${uniqueName('sheds')}.example.org`;
    const def = testCrd({ group, kind: 'Shed', plural: 'sheds' });
    delete (def.spec as { versions: Array<{ subresources?: unknown }> }).versions[0]!.subresources;
    await installCrd(transport, def);
    const gvr = { group, version: 'v1', resource: 'sheds' };
    const created = await c.create(gvr, { apiVersion: `${group}/v1`, kind: 'Shed', metadata: { name: 'tools', namespace: ns }, spec: { size: 2 } });
    const dir = mkdtempSync(join(tmpdir(), 'rl-cli-shed-'));
    const script = join(dir, 'shed.mjs');
    // The documented pattern: report the generation seen as status.observedGeneration.
    writeFileSync(script, `let s = ''; for await (const b of process.stdin) s += b; const o = JSON.parse(s).object; process.stdout.write(JSON.stringify(o ? { status: { ready: true, observedGeneration: o.metadata.generation } } : {}));\n`);
    try {
      const r = await cli(['run', '--kubeconfig', kubeconfig, '--resource', `sheds.${group}`, '-n', ns, '--reconciler', `exec:${NODE} ${script}`, '--duration', '3', '--json']);
      assert.equal(r.code, 1, r.stderr);
      const ends = r.stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((e) => e.kind === 'reconcileEnd');
      assert.equal(ends.length, 1, `one reconcile, not a loop: ${ends.length}`);
      assert.equal(ends[0].outcome.kind, 'terminal');
      assert.match(ends[0].outcome.message, /sheds has no status subresource .*status\.observedGeneration could never equal it .*Add "subresources: \{ status: \{\} \}" to the CRD's version/);
      const after = await c.get(gvr, ns, 'tools');
      assert.equal(after.metadata.generation, created.metadata.generation, 'nothing written: the generation did not move');
      assert.equal(after.status, undefined);
      // Without observedGeneration the status is written with the object, and at once: discovery lists no status
      // subresource for sheds, so the journal holds no refused /status write before it.
      writeFileSync(script, `let s = ''; for await (const b of process.stdin) s += b; const o = JSON.parse(s).object; process.stdout.write(JSON.stringify(o ? { status: { ready: true } } : {}));\n`);
      const ok = await cli(['step', `${ns}/tools`, '--kubeconfig', kubeconfig, '--resource', `sheds.${group}`, '--reconciler', `exec:${NODE} ${script}`, '--json']);
      assert.equal(ok.code, 0, ok.stderr);
      const writes = ok.stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((e) => e.kind === 'write');
      assert.deepEqual(writes.map((w) => `${w.verb} ${w.subresource ?? '-'} ${w.error ?? 'ok'}`), ['update - ok'], ok.stdout);
      assert.deepEqual((await c.get(gvr, ns, 'tools')).status, { ready: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('inspect of an object that is neither cached nor on the server is an error (exit 1)', async () => {
    const r = await cli(['inspect', 'no-such-widget', ...common]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`${ns}/no-such-widget not found`));
    // A typo names the object probably meant, as step and dry-run do.
    const typo = await cli(['inspect', 'widget-redy', ...common]);
    assert.equal(typo.code, 1);
    assert.match(typo.stderr, new RegExp(`${ns}/widget-redy not found: .* \\(did you mean ${ns}/widget-ready\\?\\)`), typo.stderr);
    const j = await cli(['inspect', 'no-such-widget', ...common, '--json']);
    assert.equal(j.code, 1);
    assert.equal(JSON.parse(j.stdout).exitCode, 1);
  });

  test('kubeconfig and connection problems exit 3', async () => {
    const missing = await cli(['report', '--kubeconfig', '/nonexistent/kubeconfig']);
    assert.equal(missing.code, 3);
    assert.match(missing.stderr, /The kubeconfig file \/nonexistent\/kubeconfig does not exist\. Check the path given to --kubeconfig\./);
    const badCtx = await cli(['report', '--kubeconfig', kubeconfig, '--context', 'nope']);
    assert.equal(badCtx.code, 3);
    assert.match(badCtx.stderr, /Context "nope" is not in the kubeconfig/);
    const dir = mkdtempSync(join(tmpdir(), 'rl-cli-'));
    const dead = join(dir, 'kubeconfig');
    writeFileSync(dead, `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\nusers: [{name: u, user: {token: abc}}]\n`);
    const unreachable = await cli(['report', '--kubeconfig', dead, '--json']);
    assert.equal(unreachable.code, 3);
    assert.equal(JSON.parse(unreachable.stdout).exitCode, 3);
    assert.match(unreachable.stderr, /Cannot reach the API server/);
    // No kubeconfig anywhere: the core message plus the CLI's own next step.
    const none = await cli(['report'], { HOME: dir, KUBECONFIG: '' });
    assert.equal(none.code, 3);
    assert.match(none.stderr, /No kubeconfig found: KUBECONFIG is not set and .* does not exist\. Pass --kubeconfig <file> or set KUBECONFIG\./);
    rmSync(dir, { recursive: true, force: true });
  });

  test('the lab reconciler refuses any resource but its Widget: no finalizer added, no <name>-config ConfigMap touched (exit 2)', async () => {
    // A ConfigMap "app" and its would-be child "app-config", which the lab reconciler would rewrite and own.
    await c.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: ns }, data: { k: 'v' } });
    await c.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app-config', namespace: ns }, data: { mine: 'yes' } });
    const before = await c.get(CONFIGMAPS, ns, 'app-config');
    for (const command of [['step', 'app'], ['run', '--duration', '1'], ['dry-run', 'app'], ['report']]) {
      const r = await cli([...command, '--kubeconfig', kubeconfig, '--resource', 'configmaps', '-n', ns]);
      assert.equal(r.code, 2, `${command[0]}: ${r.stderr}`);
      assert.match(r.stderr, /lab reconciler only reconciles its own Widget resource/);
    }
    const app = await c.get(CONFIGMAPS, ns, 'app');
    assert.deepEqual(app.metadata.finalizers ?? [], [], 'no finalizer added');
    const after = await c.get(CONFIGMAPS, ns, 'app-config');
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'the ConfigMap is untouched');
    assert.deepEqual(after.metadata.ownerReferences ?? [], []);
  });

  test('a relative --kubeconfig reaches exec programs as an absolute path (KUBECONFIG and the input), so one that changes directory still finds it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-cli-relkc-'));
    try {
      copyFileSync(kubeconfig, join(dir, 'kc'));
      const script = join(dir, 'r.mjs');
      writeFileSync(script, `import { readFileSync, writeFileSync } from 'node:fs';\nconst input = JSON.parse(readFileSync(0, 'utf8'));\nwriteFileSync(${JSON.stringify(join(dir, 'seen.json'))}, JSON.stringify({ env: process.env.KUBECONFIG, input: input.kubeconfig }));\nconsole.log('{}');\n`);
      // Run from `dir`, naming the kubeconfig relative to it (a go -C operator run ./cmd, or a script that cds, runs elsewhere).
      const r = spawnSync(NODE, [CLI_MAIN, 'step', 'widget-ready', '--kubeconfig', 'kc', '--resource', `widgets.${crd.group}`, '-n', ns, '--reconciler', `exec:${NODE} ${script}`], { cwd: dir, encoding: 'utf8', env: { ...process.env, KUBECONFIG: '' } });
      assert.equal(r.status, 0, r.stderr);
      // Before: both were "kc", relative to a directory the program need not be in.
      assert.deepEqual(JSON.parse(readFileSync(join(dir, 'seen.json'), 'utf8')), { env: join(dir, 'kc'), input: join(dir, 'kc') });
      // KUBECONFIG listing several files, relative: the program gets the list with every entry absolute (no one file
      // is named in the input: the program merges them as kubectl does).
      writeFileSync(join(dir, 'other'), 'apiVersion: v1\nkind: Config\n');
      const merged = spawnSync(NODE, [CLI_MAIN, 'step', 'widget-ready', '--resource', `widgets.${crd.group}`, '-n', ns, '--reconciler', `exec:${NODE} ${script}`], { cwd: dir, encoding: 'utf8', env: { ...process.env, KUBECONFIG: 'kc:other' } });
      assert.equal(merged.status, 0, merged.stderr);
      assert.deepEqual(JSON.parse(readFileSync(join(dir, 'seen.json'), 'utf8')), { env: `${join(dir, 'kc')}:${join(dir, 'other')}`, input: null });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a reconciler's control characters reach the terminal escaped (text and --json)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-cli-esc-'));
    try {
      const script = join(dir, 'r.sh');
      // An error with an OSC title sequence, a screen clear, a bell and a C1 CSI; log lines with a carriage return.
      writeFileSync(script, `#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '{"error": "\\u001b]0;pwned\\u0007\\u001b[2J boom \\u009b31m", "log": ["line\\rover"]}'\n`, { mode: 0o755 });
      for (const json of [false, true]) {
        const r = await cli(['step', 'widget-ready', ...common, '--reconciler', `exec:${script}`, '-v', ...(json ? ['--json'] : [])]);
        const all = r.stdout + r.stderr;
        assert.match(all, /boom/, all);
        // eslint-disable-next-line no-control-regex
        assert.doesNotMatch(all, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/, 'no raw control character');
        assert.match(all, /\\u001b\]0;pwned/, 'escaped, still readable');
        // The retry reads from the line's own time, as run's do: step prints after the step ended, when a first
        // failure's 5 ms retry is already due (it said "retry in 0 ms").
        if (!json) assert.match(r.stdout, /✗ error \(failure 1\), retry in [45] ms: /, r.stdout);
        if (json) for (const line of r.stdout.trim().split('\n')) JSON.parse(line);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('dry-run --json plans the writes and persists nothing (exit 0)', async () => {
    const before = await c.get(crd.gvr, ns, 'widget-ready');
    const r = await cli(['dry-run', 'widget-ready', ...common, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.key, `${ns}/widget-ready`);
    assert.equal(out.dryRun, true);
    assert.deepEqual(out.actions.map((a: { verb: string; resource: string }) => `${a.verb} ${a.resource}`), [`patch widgets.${crd.group}`, 'create configmaps', `update widgets.${crd.group}`]);
    assert.equal(out.outcome.kind, 'done');
    assert.equal((await c.get(crd.gvr, ns, 'widget-ready')).metadata.resourceVersion, before.metadata.resourceVersion);
    await assert.rejects(c.get(CONFIGMAPS, ns, 'widget-ready-config'), isNotFound);
    const human = await cli(['dry-run', `${ns}/widget-waiting`, ...common]);
    assert.equal(human.code, 0);
    assert.match(human.stdout, /Requeue decision: requeue after 15 s \(DependencyMissing/);
  });

  test('dry-run marks a planned write that changes nothing (an update of an object already as sent)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-cli-noop-'));
    try {
      const mod = join(dir, 'noop.mjs');
      writeFileSync(mod, 'export async function reconcile(req, ctx) {\n  const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal);\n  await ctx.client.update(ctx.primary, w, { signal: ctx.signal });\n  return {};\n}\n');
      const r = await cli(['dry-run', 'widget-ready', ...common, '--reconciler', `module:${mod}`]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`1\\. update widgets\\.${crd.group.replace(/\./g, '\\.')} ${ns}/widget-ready \\(rv \\d+\\) — changes nothing \\(the object already is as sent: compare before writing, or this write repeats on every pass\\)`), r.stdout);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('step shows what the reconciler logs (ctx.log at info) without -v, and not the loop\'s own debug lines', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-cli-log-'));
    try {
      const mod = join(dir, 'chatty.mjs');
      writeFileSync(mod, "export async function reconcile(req, ctx) {\n  ctx.log.info('checking the backup policy', { policy: 'nightly' });\n  ctx.log.debug('a detail only -v shows');\n  return {};\n}\n");
      const r = await cli(['step', 'widget-ready', ...common, '--reconciler', `module:${mod}`]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`^INFO checking the backup policy key=${ns}/widget-ready policy=nightly$`, 'm'), r.stderr);
      assert.doesNotMatch(r.stderr, /a detail only -v shows|^DEBUG/m, r.stderr);
      // The failed-reconcile dry-run no longer claims the state is as desired.
      const failing = join(dir, 'failing.mjs');
      writeFileSync(failing, "export async function reconcile() {\n  throw new Error('no backup policy yet');\n}\n");
      const d = await cli(['dry-run', 'widget-ready', ...common, '--reconciler', `module:${failing}`]);
      assert.equal(d.code, 1, d.stderr);
      assert.match(d.stdout, /Planned actions: none before it failed \(a failed reconcile says nothing about the desired state\)\./, d.stdout);
      assert.doesNotMatch(d.stdout, /already as desired/, d.stdout);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a module whose predicates or options exports are wrong is a usage error (exit 2) for run, step and check, not a loop without them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-cli-exports-'));
    try {
      const pred = join(dir, 'pred.mjs');
      writeFileSync(pred, "export const predicates = ['generation-change'];\nexport async function reconcile() {\n  return {};\n}\n");
      const step = await cli(['step', 'widget-ready', ...common, '--reconciler', `module:${pred}`]);
      assert.equal(step.code, 2, step.stderr);
      assert.match(step.stderr, /predicates\[0\]: unknown predicate "generation-change" \(predicates: generation-changed, [^)]*\): fix the module's predicates \/ options exports/, step.stderr);
      const opt = join(dir, 'opt.mjs');
      writeFileSync(opt, "export const options = { maxConcurrentReconcile: 2 };\nexport async function reconcile() {\n  return {};\n}\n");
      const run = await cli(['run', ...common, '--reconciler', `module:${opt}`, '--duration', '1']);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /unknown option "maxConcurrentReconcile" \(options: maxConcurrentReconciles, reconcileTimeoutMs, workQueue\)/, run.stderr);
      const check = await cli(['check', `${ns}/widget-ready`, ...common, '--reconciler', `module:${pred}`]);
      assert.equal(check.code, 2, check.stderr);
      assert.match(check.stderr, /unknown predicate "generation-change"/, check.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a failing reconciler makes dry-run exit 1 with the error', async () => {
    const r = await cli(['dry-run', 'widget-ready', ...common, '--reconciler', 'exec:/nonexistent/reconcile.sh', '--json']);
    assert.equal(r.code, 1);
    assert.match(JSON.parse(r.stdout).outcome.error, /program not found/);
    // The text header of an exec reconciler's dry-run does not claim for the program's own writes what only holds
    // for Reconcile Lab's: they persist unless the program honours RECONCILE_DRY_RUN.
    const human = await cli(['dry-run', 'widget-ready', ...common, '--reconciler', 'exec:/nonexistent/reconcile.sh']);
    assert.match(human.stdout, /^Dry-run reconcile of .*: every write made through Reconcile Lab .* nothing of it persisted; what the program writes itself \(kubectl, its own client\) persists unless it honours RECONCILE_DRY_RUN=true/, human.stdout);
  });

  test('step <key> reconciles once through the controller; report --json shows the pass; inspect --json', async () => {
    const step = await cli(['step', 'widget-ready', ...common]);
    assert.equal(step.code, 0, step.stderr);
    assert.match(step.stdout, /▶ .*widget-ready reconcile, 1st of this key/);
    assert.match(step.stdout, /✎ create configmaps .*widget-ready-config/);
    assert.match(step.stdout, /■ .*widget-ready done/);
    assert.ok((await c.get(CONFIGMAPS, ns, 'widget-ready-config')).metadata.uid);
    // The reconciler's Kubernetes Event reached the server before the CLI exited (kubectl describe shows it).
    const events = await c.list({ group: '', version: 'v1', resource: 'events' }, ns);
    const childCreated = events.items.find((e) => (e as { reason?: string }).reason === 'ChildCreated');
    assert.ok(childCreated, 'a ChildCreated Event was recorded');
    assert.equal((childCreated as { involvedObject?: { name?: string } }).involvedObject?.name, 'widget-ready');

    const rep = await cli(['report', ...common, '--json']);
    assert.equal(rep.code, 0, rep.stderr);
    const report = JSON.parse(rep.stdout);
    const byKey = new Map(report.entries.map((e: { key: string }) => [e.key, e]));
    const ready = byKey.get(`${ns}/widget-ready`) as { actions: unknown[]; resourceVersionBefore: string; resourceVersionAfter: string };
    assert.deepEqual(ready.actions, [], 'already reconciled by step: nothing to do');
    assert.equal(ready.resourceVersionBefore, ready.resourceVersionAfter);
    assert.equal((byKey.get(`${ns}/widget-waiting`) as { outcome: { kind: string } }).outcome.kind, 'requeueAfter');
    // Converged: no drift shown.
    assert.equal((ready as unknown as { diff: string }).diff, '', 'a converged object is not drift');
    const md = await cli(['report', ...common, '--dry-run']);
    assert.match(md.stdout, /^# Reconcile report/);
    assert.match(md.stdout, /\*\*dry-run\*\*/);
    assert.match(md.stdout, new RegExp(`## ${ns}/widget-ready\\n[\\s\\S]*?no difference \\(converged\\)`));
    assert.match(md.stdout, /\| Status it would write \|/);
    assert.doesNotMatch(md.stdout, /Status written/);

    // step --json: the result is the first line, the journal entries follow as JSON lines.
    const sj = await cli(['step', 'widget-ready', ...common, '--json']);
    assert.equal(sj.code, 0, sj.stderr);
    const lines = sj.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines[0].step.kind, 'reconciled');
    assert.equal(lines[0].step.key, `${ns}/widget-ready`);
    assert.ok(lines.slice(1).some((e) => e.kind === 'reconcileEnd'));

    const insp = await cli(['inspect', 'widget-ready', ...common, '--json']);
    assert.equal(insp.code, 0, insp.stderr);
    const i = JSON.parse(insp.stdout);
    assert.equal(i.state, 'in-sync');
    assert.equal(i.cachedResourceVersion, (await c.get(crd.gvr, ns, 'widget-ready')).metadata.resourceVersion);
  });

  test('a cluster-scoped kind with two served versions: preferred version, keys without a namespace, --namespace said not to apply', async () => {
    const group = `${uniqueName('sec')}.example.org`;
    const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
    await installCrd(transport, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `policies.${group}` },
      spec: {
        group,
        scope: 'Cluster',
        names: { kind: 'Policy', plural: 'policies', singular: 'policy', shortNames: ['pol'] },
        versions: [
          { name: 'v1', served: true, storage: false, subresources: { status: {} }, schema },
          { name: 'v2beta1', served: true, storage: true, subresources: { status: {} }, schema },
        ],
      },
    });
    const gvr = { group, version: 'v1', resource: 'policies' };
    await c.create({ ...gvr, version: 'v2beta1' }, { apiVersion: `${group}/v2beta1`, kind: 'Policy', metadata: { name: 'allow.egress-to-db.v2' }, spec: { level: 3 } });
    const dir = mkdtempSync(join(tmpdir(), 'rl-cli-policy-'));
    try {
      const script = join(dir, 'policy.sh');
      writeFileSync(script, '#!/bin/sh\ncat >/dev/null\n[ -n "$RECONCILE_NAMESPACE" ] && { echo "{\\"error\\": \\"got a namespace: $RECONCILE_NAMESPACE\\"}"; exit 0; }\necho "{\\"status\\": {\\"phase\\": \\"Active\\"}, \\"requeueAfterMs\\": 60000, \\"reason\\": \\"re-evaluate\\"}"\n', { mode: 0o755 });
      const args = ['--kubeconfig', kubeconfig, '--resource', `policies.${group}`, '--reconciler', `exec:${script}`];
      const json = await cli(['step', 'allow.egress-to-db.v2', '--json', ...args]);
      assert.equal(json.code, 0, json.stdout + json.stderr);
      const writes = json.stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((e) => e.kind === 'write');
      assert.deepEqual(writes.map((w) => [w.verb, w.gvr.version, w.objectKey, w.subresource]), [['update', 'v1', 'allow.egress-to-db.v2', 'status']], 'the preferred version v1, not the storage version');
      // The text names the resource as the flags do, without a version.
      await c.patch({ ...gvr, version: 'v2beta1' }, undefined, 'allow.egress-to-db.v2', 'merge', { spec: { level: 4 } });
      writeFileSync(script, readFileSync(script, 'utf8').replace('Active', 'Enforced'));
      const step = await cli(['step', 'allow.egress-to-db.v2', ...args]);
      assert.equal(step.code, 0, step.stdout + step.stderr);
      assert.match(step.stdout, new RegExp(`✎ update policies\\.${group.replace(/\./g, '\\.')} allow\\.egress-to-db\\.v2 \\(status\\) rv`));
      assert.match(step.stdout, /■ allow\.egress-to-db\.v2 requeue after 60 s \(re-evaluate\)/);
      assert.doesNotMatch(step.stdout, /default\/|\s\/allow/);
      assert.deepEqual((await c.get(gvr, undefined, 'allow.egress-to-db.v2')).status, { phase: 'Enforced' });
      const namespaced = await cli(['step', 'default/allow.egress-to-db.v2', ...args]);
      assert.equal(namespaced.code, 2);
      assert.match(namespaced.stderr, new RegExp(`policies\\.${group.replace(/\./g, '\\.')} is cluster-scoped: use a key without a namespace \\("allow\\.egress-to-db\\.v2"\\)`), 'the resource named as --resource names it');
      const rep = await cli(['report', ...args, '-n', ns, '--dry-run', '--json']);
      assert.equal(rep.code, 0, rep.stderr);
      assert.match(rep.stderr, new RegExp(`policies\\.${group.replace(/\./g, '\\.')} is cluster-scoped: --namespace ${ns} does not apply`));
      assert.deepEqual(JSON.parse(rep.stdout).entries.map((e: { key: string }) => e.key), ['allow.egress-to-db.v2']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('run streams the controller journal as JSON lines until --duration ends', async () => {
    await c.create(crd.gvr, { apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name: 'widget-run', namespace: ns }, spec: { data: { k: 'v' } } });
    const r = await cli(['run', ...common, '--duration', '4', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const entries = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const ends = entries.filter((e) => e.kind === 'reconcileEnd');
    assert.ok(ends.some((e) => e.key === `${ns}/widget-stuck` && e.outcome.kind === 'success'), r.stdout);
    assert.ok(ends.some((e) => e.key === `${ns}/widget-waiting` && e.outcome.kind === 'requeueAfter'));
    assert.ok(entries.some((e) => e.kind === 'write' && e.objectKey === `${ns}/widget-run-config` && e.verb === 'create'), r.stdout);
    assert.deepEqual((await c.get(CONFIGMAPS, ns, 'widget-run-config')).data, { k: 'v' });
    const summary = entries.at(-1);
    assert.ok(summary.summary, 'the last line is the summary');
    assert.deepEqual(summary.summary.failed, []);
    assert.ok(summary.summary.keys.some((k: { key: string; writes: number }) => k.key === `${ns}/widget-run` && k.writes >= 2));
  });

  test('run with a failing reconciler: failures and next retry in text, -v logs them, a summary, exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-cli-fail-'));
    const script = join(dir, 'fail.sh');
    writeFileSync(script, '#!/bin/sh\necho "first line of trouble" >&2\necho "second line of trouble" >&2\nexit 7\n', { mode: 0o755 });
    try {
      const r = await cli(['run', ...common, '--reconciler', `exec:${script}`, '--duration', '3', '-v']);
      assert.equal(r.code, 1, 'a key ended in error');
      // The first retry is due in about 5 ms (what is left of it when the line is printed): said in ms, not "0.0 s".
      assert.match(r.stdout, /■ \S+\/widget-ready ✗ error \(failure 1\), retry in [0-5] ms: /);
      assert.match(r.stdout, /✗ error \(failure [2-9]\d*\), retry in/, 'the failure count grows');
      // The multi-line error is one entry: its continuation lines are indented under it.
      assert.match(r.stdout, /first line of trouble\n\s+│ second line of trouble/);
      assert.match(r.stdout, /reconcile, 2nd of this key \(retry after failure 1\)/);
      assert.match(r.stdout, /\nSummary: \d+ key\(s\), \d+ reconcile\(s\), \d+ write\(s\), [1-9]\d* error\(s\), \d+ warning\(s\)\n/);
      assert.match(r.stdout, /key\s+reconciles\s+writes\s+errors\s+warnings\s+last outcome/);
      assert.match(r.stdout, /key\(s\) ended in error: .*widget-ready/);
      // -v: every failed reconcile is logged on stderr, on one line.
      const logged = r.stderr.split('\n').filter((l) => l.includes('Reconciler error'));
      assert.ok(logged.length >= 2, r.stderr);
      assert.match(logged[0]!, /error="[^"]*first line of trouble\\n/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('strip-finalizers: diagnosis, refusal without --yes (5), object changed (4), release (0)', async () => {
    await c.delete(crd.gvr, ns, 'widget-stuck');
    const refused = await cli(['strip-finalizers', 'widget-stuck', ...common, '--finalizer', 'legacy.example.com/external-dns']);
    assert.equal(refused.code, 5);
    assert.match(refused.stdout, /has been terminating for/);
    assert.match(refused.stdout, /finalizer legacy\.example\.com\/external-dns/);
    assert.match(refused.stdout, /owner running:  unknown/);
    assert.match(refused.stdout, /orphaned/);
    assert.match(refused.stderr, /Refusing to remove finalizer legacy\.example\.com\/external-dns/);

    // --dry-run previews the removal without --yes; nothing is removed.
    const preview = await cli(['strip-finalizers', 'widget-stuck', ...common, '--finalizer', 'legacy.example.com/external-dns', '--dry-run']);
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(preview.stdout, /\[dry-run\] would remove legacy\.example\.com\/external-dns/);
    // The last finalizer of a Terminating object: the server's answer (audit: "→ deleted") said in words too.
    const remaining = /remaining: (.*?)[;.]/.exec(preview.stdout)?.[1];
    if (remaining === 'none') assert.match(preview.stdout, /; remaining: none; its deletion would then complete \(the object would be gone\)\.\n/);
    else assert.doesNotMatch(preview.stdout, /would be gone/);
    assert.match(preview.stderr, /audit: patch \S+ \S+widget-stuck \(dry-run\) rv \d+ → (deleted|\d+) ok/);
    assert.ok((await c.get(crd.gvr, ns, 'widget-stuck')).metadata.finalizers?.includes('legacy.example.com/external-dns'));

    const notThere = await cli(['strip-finalizers', 'widget-stuck', ...common, '--finalizer', 'x.example.com/none', '--yes']);
    assert.equal(notThere.code, 1);
    assert.match(notThere.stderr, /has no finalizer "x\.example\.com\/none"/);
    // A typo in the name: the closest object is named, as step says.
    const typo = await cli(['strip-finalizers', 'widget-stuk', ...common, '--finalizer', 'legacy.example.com/external-dns', '--yes']);
    assert.equal(typo.code, 1);
    assert.match(typo.stderr, /widget-stuk does not exist on the server \(did you mean \S*widget-stuck\?\): nothing to strip/, typo.stderr);

    // In-process: between the diagnosis (printed) and the removal, another client changes the object.
    const out: string[] = [];
    const err: string[] = [];
    let poked = false;
    const code = await runCli(['strip-finalizers', 'widget-stuck', ...common, '--finalizer', 'legacy.example.com/external-dns', '--yes'], {
      stdout: (s) => {
        out.push(s);
        if (!poked && /has been terminating/.test(s)) {
          poked = true;
          // Synchronous on purpose: the change lands before the CLI continues.
          const r = spawnSync(NODE, ['--input-type=module', '-e', `
            import { loadKubeConfig } from ${JSON.stringify(join(ROOT, 'src/core/k8s/kubeconfig.ts'))};
            import { KubeTransport } from ${JSON.stringify(join(ROOT, 'src/core/k8s/transport.ts'))};
            const t = new KubeTransport(loadKubeConfig({ path: ${JSON.stringify(kubeconfig)} }));
            await t.json({ method: 'PATCH', path: ${JSON.stringify(`/apis/${crd.group}/v1alpha1/namespaces/${ns}/widgets/widget-stuck`)}, body: { metadata: { annotations: { poked: 'yes' } } }, contentType: 'application/merge-patch+json' });
          `], { encoding: 'utf8' });
          assert.equal(r.status, 0, r.stderr);
        }
      },
      stderr: (s) => err.push(s),
      env: {},
      onInterrupt: () => toDisposable(() => {}),
    });
    assert.equal(code, 4, err.join(''));
    assert.match(err.join(''), /changed since it was read .* refresh and retry/);
    const still = await c.get(crd.gvr, ns, 'widget-stuck');
    assert.ok(still.metadata.finalizers?.includes('legacy.example.com/external-dns'));

    // The lab finalizer is ours: with the loop stopped (CLI), strip everything after confirming.
    const released = await cli(['strip-finalizers', 'widget-stuck', ...common, '--yes', '--json']);
    assert.equal(released.code, 0, released.stderr);
    const res = JSON.parse(released.stdout);
    assert.equal(res.result.deleted, true);
    // It removed the last finalizer: the server deleted the object and answered with its unchanged resourceVersion,
    // which must not read as a no-op ("rv N → N").
    assert.match(released.stderr, /audit: patch widgets\.\S+ \S+\/widget-stuck rv \d+ → deleted ok/);
    // The removal is a journal entry: a write with the resourceVersion it was guarded by.
    const writes = (res.journal as Array<{ kind: string; verb: string; objectKey: string; dryRun: boolean; resourceVersionBefore?: string; deleted?: boolean }>).filter((e) => e.kind === 'write');
    assert.equal(writes.length, 1);
    assert.equal(writes[0]!.verb, 'patch');
    assert.equal(writes[0]!.objectKey, `${ns}/widget-stuck`);
    assert.equal(writes[0]!.dryRun, false);
    assert.ok(writes[0]!.resourceVersionBefore, 'the resourceVersion the removal was guarded by');
    assert.equal(writes[0]!.deleted, true, 'the journal entry says the write deleted the object');
    await assert.rejects(c.get(crd.gvr, ns, 'widget-stuck'), isNotFound);
  });

  test('strip-finalizers of an object with no finalizers says there is nothing to strip (exit 0, not a refusal); of one not being deleted, it notes that nothing is stuck', async () => {
    const cm = await c.create({ group: '', version: 'v1', resource: 'configmaps' }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain-soil', namespace: ns } });
    const none = await cli(['strip-finalizers', `${ns}/${cm.metadata.name}`, '--kubeconfig', kubeconfig, '--resource', 'configmaps']);
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stdout, new RegExp(`Nothing to strip: ${ns}/plain-soil has no finalizers\\.\\n$`));
    assert.doesNotMatch(none.stderr, /Refusing/);
    const json = await cli(['strip-finalizers', `${ns}/plain-soil`, '--kubeconfig', kubeconfig, '--resource', 'configmaps', '--yes', '--json']);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout).result, { removed: [], remaining: [] });
    const held = await c.create({ group: '', version: 'v1', resource: 'configmaps' }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held-soil', namespace: ns, finalizers: ['garden.example.net/compost'] } });
    try {
      const live = await cli(['strip-finalizers', `${ns}/${held.metadata.name}`, '--kubeconfig', kubeconfig, '--resource', 'configmaps']);
      assert.equal(live.code, 5, live.stderr);
      assert.match(live.stderr, new RegExp(`Note: ${ns}/held-soil is not being deleted, so nothing is stuck\\. A finalizer removed now is added back by its controller at its next reconcile`));
      // --json: the refusal has the {"error", "exitCode"} every failure has, and the diagnosis.
      const refusedJson = await cli(['strip-finalizers', `${ns}/held-soil`, '--kubeconfig', kubeconfig, '--resource', 'configmaps', '--json']);
      assert.equal(refusedJson.code, 5);
      const j = JSON.parse(refusedJson.stdout) as { error: string; exitCode: number; diagnosis: { key: string } };
      assert.match(j.error, new RegExp(`^Refusing to remove all finalizers from ${ns}/held-soil without --yes\\. Read the consequences in the diagnosis`));
      assert.equal(j.exitCode, 5);
      assert.equal(j.diagnosis.key, `${ns}/held-soil`);
    } finally {
      await c.patch({ group: '', version: 'v1', resource: 'configmaps' }, ns, 'held-soil', 'merge', { metadata: { finalizers: null } }).catch(() => {});
    }
  });

  test('strip-finalizers of a Namespace stuck on an object\'s finalizer names that object and the command that strips it, not only a count', async () => {
    const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };
    const stuck = await createNamespace(transport, 'held');
    await c.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'weed', namespace: stuck, finalizers: ['hold.example.org/forever'] } });
    await c.delete(NAMESPACES, undefined, stuck);
    try {
      // The namespace controller deletes its content and reports what remains in the namespace's conditions.
      await waitUntil(async () => ((await c.get(NAMESPACES, undefined, stuck)).status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions?.some((x) => x.type === 'NamespaceFinalizersRemaining' && x.status === 'True') === true, 'the namespace reports the finalizer remaining', 60_000);
      const r = await cli(['strip-finalizers', stuck, '--kubeconfig', kubeconfig, '--resource', 'namespaces']);
      assert.equal(r.code, 5, r.stderr);
      assert.match(r.stdout, new RegExp(`held up by \\(objects in ${stuck} that still have finalizers\\):\\n    configmaps ${stuck}/weed: hold\\.example\\.org/forever \\(Terminating\\)\\n      → reconcile-lab strip-finalizers ${stuck}/weed --resource configmaps\\n`), r.stdout);
      assert.match(r.stdout, /strip theirs \(above\), not the namespace's/);
      const j = await cli(['strip-finalizers', stuck, '--kubeconfig', kubeconfig, '--resource', 'namespaces', '--json']);
      assert.deepEqual((JSON.parse(j.stdout) as { holding: unknown }).holding, [{ resource: 'configmaps', key: `${stuck}/weed`, finalizers: ['hold.example.org/forever'], terminating: true }]);
    } finally {
      await c.patch(CONFIGMAPS, stuck, 'weed', 'merge', { metadata: { finalizers: null } }).catch(() => {});
    }
  });

  test('check: the real CLI process runs the robustness checks and prints the report as JSON', async () => {
    const key = `${ns}/widget-ready`;
    const before = await c.get(crd.gvr, ns, 'widget-ready');
    const good = await cli(['check', key, ...common, '--reconciler', 'module:samples/module-reconciler.ts', '--json']);
    assert.equal(good.code, 0, good.stderr);
    const report = JSON.parse(good.stdout) as { reconcilerKind: string; keys: string[]; checks: string[]; results: Array<{ check: string; status: string }>; totals: { findings: number; errors: number; checks: number }; cluster: { local: boolean } };
    assert.equal(report.reconcilerKind, 'module');
    assert.deepEqual(report.keys, [key]);
    assert.deepEqual(report.checks, ['runTwice', 'crashAfterWrite', 'staleCache', 'unobservedState', 'historyIndependence', 'convergence', 'deletion', 'childDrift']);
    assert.equal(report.totals.checks, 8);
    assert.equal(report.totals.findings, 0, good.stdout);
    assert.equal(report.totals.errors, 0, good.stdout);
    assert.equal(report.cluster.local, true, 'the test control plane is the local one (no confirmation needed)');

    // A buggy reconciler: exit 1, the finding in the JSON with its reproduce line.
    const bad = await cli(['check', key, ...common, '--reconciler', 'module:samples/buggy/generate-name-every-pass.ts', '--check', 'runTwice', '--json']);
    assert.equal(bad.code, 1, bad.stderr);
    const r2 = JSON.parse(bad.stdout) as { checks: string[]; findings: Array<{ check: string; severity: string; title: string; reproduce: string }> };
    assert.deepEqual(r2.checks, ['runTwice']);
    assert.equal(r2.findings.length, 1, bad.stdout);
    assert.equal(r2.findings[0]!.check, 'runTwice');
    assert.match(r2.findings[0]!.title, /Second reconcile created another configmaps \(generateName/);
    assert.match(r2.findings[0]!.reproduce, new RegExp(`^reconcile-lab check ${key} --check runTwice --resource widgets\\.${crd.group.replace(/\./g, '\\.')} --reconciler module:samples/buggy/generate-name-every-pass\\.ts`));
    assert.equal((await c.get(crd.gvr, ns, 'widget-ready')).metadata.resourceVersion, before.metadata.resourceVersion, 'the original untouched');

    // A key that names nothing: a usage error naming it, before any scratch namespace is made.
    const missing = await cli(['check', `${ns}/no-such-widget`, ...common, '--reconciler', 'module:samples/module-reconciler.ts']);
    assert.equal(missing.code, 2, missing.stderr + missing.stdout);
    assert.match(missing.stderr, new RegExp(`no widgets\\.\\S+ "${ns}/no-such-widget" to check`));

    // A change the server refuses (spec.data must be a map): a usage error with its reason, before any check runs.
    const refused = await cli(['check', key, ...common, '--reconciler', 'module:samples/module-reconciler.ts', '--transition', '{"spec":{"data":5}}']);
    assert.equal(refused.code, 2, refused.stderr + refused.stdout);
    assert.match(refused.stderr, /--transition \{"spec":\{"data":5\}\}: the server refuses it for \S*widget-ready \(.*\); give changes the resource's schema allows/, refused.stderr);
    assert.equal((await c.get(crd.gvr, ns, 'widget-ready')).metadata.resourceVersion, before.metadata.resourceVersion, 'the dry-run patch stored nothing');

    // A reconciler that always fails, convergence not selected: no finding, the check skipped; exit 1 and stderr says
    // why, the report says the last reconcile's error.
    const failing = await cli(['check', key, ...common, '--reconciler', 'exec:/bin/false', '--check', 'runTwice', '--convergence-bound', '3']);
    assert.equal(failing.code, 1, failing.stderr);
    assert.match(failing.stderr, new RegExp(`exit code 1: 1 check\\(s\\) skipped because the reference run did not settle \\(${key}\\): they checked nothing`), failing.stderr);
    assert.match(failing.stdout, /did not settle within 3000 ms; its last reconcile failed: .*\(--check convergence tells why it did not\)/, failing.stdout);
  });

  test('check interrupted (Ctrl+C): exit 1, the partial report on stdout and on stderr why the exit code is 1', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const handlers = new Set<() => void>();
    const interrupt = () => [...handlers].forEach((f) => f());
    const code = await runCli(['check', `${ns}/widget-ready`, ...common, '--check', 'runTwice'], {
      stdout: (t) => out.push(t),
      stderr: (t) => {
        err.push(t);
        // The first progress line: the check runs; Ctrl+C now.
        if (/^ {2}… /.test(t)) interrupt();
      },
      env: {},
      onInterrupt: (f) => {
        handlers.add(f);
        return toDisposable(() => handlers.delete(f));
      },
    });
    assert.equal(code, 1, err.join(''));
    assert.match(out.join(''), /\(aborted\)/, 'the report says it was aborted');
    assert.match(err.join(''), /reconcile-lab: check interrupted: the report above covers only what ran before it; its scratch namespaces were deleted\n/);
  });

  test('check: a reconciler that never settles fails the run (exit 1), though the checks it selected were skipped', async () => {
    // Before: every selected check "skipped: the reference run did not settle" and the command exited 0 — a CI gate that cannot fail.
    const dir = mkdtempSync(join(tmpdir(), 'rl-unsettled-'));
    try {
      const mod = join(dir, 'always-fails.mjs');
      writeFileSync(mod, 'export async function reconcile() { throw new Error("the dependency is missing"); }\n');
      const r = await cli(['check', `${ns}/widget-ready`, ...common, '--reconciler', `module:${mod}`, '--check', 'runTwice', '--convergence-bound', '2', '--json']);
      const report = JSON.parse(r.stdout) as { results: Array<{ check: string; status: string; message?: string }>; totals: { findings: number; errors: number } };
      assert.deepEqual(report.results.map((x) => [x.check, x.status]), [['runTwice', 'skipped']], r.stdout);
      assert.match(report.results[0]!.message ?? '', /did not settle/);
      assert.equal(r.code, 1, r.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('check --reconcile-timeout: the checks\' runs abort ctx.signal at that deadline, as run\'s loop does; a module that never returns is named so with its deadline, and the reproduce line keeps the flag', async () => {
    // Before: "--reconcile-timeout only applies to run and step" (exit 2), though the checks honour a module's
    // exported reconcileTimeoutMs and the editor's setting.
    const dir = mkdtempSync(join(tmpdir(), 'rl-never-returns-'));
    try {
      const mod = join(dir, 'never-returns.mjs');
      writeFileSync(mod, 'export async function reconcile() {\n  await new Promise(() => {}); // ignores ctx.signal\n  return {};\n}\n');
      const r = await cli(['check', `${ns}/widget-ready`, ...common, '--reconciler', `module:${mod}`, '--check', 'convergence', '--convergence-bound', '3', '--reconcile-timeout', '1', '--json']);
      assert.equal(r.code, 1, r.stderr + r.stdout);
      const report = JSON.parse(r.stdout) as { findings: Array<{ check: string; title: string; explanation: string; reproduce: string }> };
      const f = report.findings.find((x) => x.check === 'convergence');
      assert.ok(f, r.stdout);
      assert.match(f.title, /^Never returns: a reconcile was still running when the bound of 3 s passed \(1 reconcile\(s\) started\)$/, f.title);
      assert.match(f.explanation, /note that the reconcile deadline of 1000 ms aborted ctx\.signal and the reconcile still did not return: it ignores the signal/, f.explanation);
      assert.doesNotMatch(f.explanation, /give the loop a reconcile deadline/, 'it has one: the flag\'s');
      assert.match(f.reproduce, / --reconcile-timeout 1(?: |$)/, f.reproduce);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
