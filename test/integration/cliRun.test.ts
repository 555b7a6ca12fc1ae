import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNamespace, getTestCluster, installCrd } from './support/cluster.ts';
import { CLI_MAIN, runCliProcess, startCliProcess, type CliRun } from './support/cli.ts';
import { client as makeClient, installLabCrd, sampleDocs, type LabCrd } from './reconcilers.support.ts';
import type { DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import { alive } from '../support/alive.ts';

type Run = CliRun;

/** Whether script(1) (util-linux) is there to run the CLI on a pseudo-terminal. */
const hasScript = () => spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

const cli = runCliProcess;

type Entry = { kind: string; key?: string; role?: string; outcome?: { kind: string; message?: string; timedOut?: boolean }; filteredBy?: string; event?: string };

const entriesOf = (r: Run): Entry[] => r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Entry);


describe('reconcile-lab run: workers, timeouts and predicates against a real kube-apiserver', () => {
  let c: DynamicKubeClient;
  let crd: LabCrd;
  let ns: string;
  let kubeconfig: string;
  let dir: string;
  let script: string;

  before(async () => {
    const cluster = await getTestCluster();
    kubeconfig = cluster.kubeconfigPath;
    c = makeClient(cluster.transport);
    crd = await installLabCrd(cluster.transport);
    ns = await createNamespace(cluster.transport, 'cli-run');
    dir = mkdtempSync(join(tmpdir(), 'rl-cli-run-'));
    // Hangs for the Widget "a-hang" (first in list order, so it is taken first), answers {} at once for the others.
    script = join(dir, 'reconcile.sh');
    writeFileSync(
      script,
      `#!/bin/sh\ncat >/dev/null\nif [ "$RECONCILE_NAME" = "a-hang" ]; then echo $$ >> "${dir}/hang.pids"; exec sleep 300; fi\necho '{}'\n`,
    );
    chmodSync(script, 0o755);
    for (const name of ['a-hang', 'b', 'c', 'd']) {
      await c.create(crd.gvr, { apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name, namespace: ns }, spec: {} });
    }
  });

  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    // A shared cluster keeps no namespace of ours: finalizers a lab reconciler run added have no loop left to remove them.
    const widgets = await c.list(crd.gvr, ns).catch(() => ({ items: [] }));
    for (const w of widgets.items) await c.patch(crd.gvr, ns, w.metadata.name!, 'merge', { metadata: { finalizers: null } }).catch(() => {});
    await c.delete({ group: '', version: 'v1', resource: 'namespaces' }, undefined, ns).catch(() => {});
  });

  const common = () => ['--kubeconfig', kubeconfig, '--resource', `widgets.${crd.group}`, '-n', ns, '--reconciler', `exec:${script}`, '--json'];

  const hangPids = () => (existsSync(join(dir, 'hang.pids')) ? readFileSync(join(dir, 'hang.pids'), 'utf8').trim().split('\n').map(Number) : []);

  test('with two workers a hung exec program no longer stalls the other keys; stopping kills it', async () => {
    // One worker: the hung program (exec timeout 60 s) holds the only worker for the whole run.
    const one = await cli(['run', ...common(), '--workers', '1', '--exec-timeout', '60', '--duration', '5']);
    assert.equal(one.code, 0, one.stderr);
    const endsOne = entriesOf(one).filter((e) => e.kind === 'reconcileEnd');
    assert.deepEqual(endsOne.filter((e) => e.outcome?.kind === 'success').map((e) => e.key), [], 'one worker: every other key stalls behind the hang');

    // Two workers: the others are reconciled while a-hang still runs.
    const two = await cli(['run', ...common(), '--workers', '2', '--exec-timeout', '60', '--duration', '5']);
    assert.equal(two.code, 0, two.stderr);
    const entries = entriesOf(two);
    const ok = entries.filter((e) => e.kind === 'reconcileEnd' && e.outcome?.kind === 'success').map((e) => e.key).sort();
    assert.deepEqual(ok, [`${ns}/b`, `${ns}/c`, `${ns}/d`]);
    const hang = entries.filter((e) => e.key === `${ns}/a-hang` && (e.kind === 'reconcileStart' || e.kind === 'reconcileEnd'));
    assert.deepEqual(hang.map((e) => e.kind), ['reconcileStart', 'reconcileEnd'], 'a-hang ran once, and only ended when the run stopped');
    assert.equal(hang[1]!.outcome?.kind, 'cancelled');
    // no program outlives the run
    const pids = hangPids();
    assert.ok(pids.length >= 2, `the hanging program ran in both runs (${pids.join(',')})`);
    for (const pid of pids) assert.equal(alive(pid), false, `hung program ${pid} was killed`);
  });

  test('--reconcile-timeout aborts the reconcile at its deadline (the exec program is killed), it backs off, and the other keys run', async () => {
    const r = await cli(['run', ...common(), '--workers', '1', '--reconcile-timeout', '1', '--duration', '5']);
    assert.equal(r.code, 1, `a-hang ended in error: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /did not stop when its signal was aborted/, 'the killed program stopped at once: no warning');
    const entries = entriesOf(r);
    const hangEnds = entries.filter((e) => e.kind === 'reconcileEnd' && e.key === `${ns}/a-hang`);
    assert.ok(hangEnds.length >= 1, r.stdout);
    assert.equal(hangEnds[0]!.outcome?.kind, 'error');
    assert.equal(hangEnds[0]!.outcome?.timedOut, true);
    assert.match(hangEnds[0]!.outcome?.message ?? '', /aborted \(reconcile timed out after 1000 ms\); killed its process group/);
    const ok = [...new Set(entries.filter((e) => e.kind === 'reconcileEnd' && e.outcome?.kind === 'success').map((e) => e.key))].sort();
    assert.deepEqual(ok, [`${ns}/b`, `${ns}/c`, `${ns}/d`], 'one worker is enough once the hung call is aborted at its deadline');
    // never two reconciles of a-hang at once: starts and ends alternate
    const seq = entries.filter((e) => e.key === `${ns}/a-hang` && (e.kind === 'reconcileStart' || e.kind === 'reconcileEnd')).map((e) => e.kind);
    seq.forEach((k, i) => assert.equal(k, i % 2 === 0 ? 'reconcileStart' : 'reconcileEnd', seq.join(',')));
  });

  test('--exec-timeout: the killed program\'s error says how to give it longer', async () => {
    const r = await cli(['step', `${ns}/a-hang`, ...common(), '--exec-timeout', '1']);
    assert.equal(r.code, 1, r.stderr);
    const end = entriesOf(r).find((e) => e.kind === 'reconcileEnd');
    assert.equal(end?.outcome?.kind, 'error', r.stdout);
    assert.equal(end?.outcome?.message, `${script}: timed out after 1000 ms; killed its process group (a program that needs longer: raise --exec-timeout <seconds>, 0 for no limit)`);
  });

  test('--predicate generation-changed drops the status writes of the lab reconciler; a bad predicate is a usage error', async () => {
    const labNs = ['--kubeconfig', kubeconfig, '--resource', `widgets.${crd.group}`, '-n', ns, '--json'];
    await c.create(crd.gvr, { apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name: 'e-lab', namespace: ns }, spec: { data: { k: 'v' } } });
    const r = await cli(['run', ...labNs, '--predicate', 'generation-changed', '--predicate', 'label-selector=app=none', '--duration', '3']);
    assert.equal(r.code, 0, r.stderr);
    const informer = entriesOf(r).filter((e) => e.kind === 'informer' && e.role === 'primary');
    assert.ok(informer.length >= 5, r.stdout);
    assert.ok(informer.every((e) => e.filteredBy !== undefined), 'label-selector=app=none drops every event of the reconciled resource');
    assert.equal(entriesOf(r).filter((e) => e.kind === 'reconcileStart').length, 0);
    const r2 = await cli(['run', ...labNs, '--predicate', 'generation-changed', '--duration', '4']);
    assert.equal(r2.code, 0, r2.stderr);
    const e2 = entriesOf(r2);
    assert.ok(e2.some((e) => e.kind === 'reconcileEnd' && e.key === `${ns}/e-lab`), r2.stdout);
    assert.ok(e2.some((e) => e.kind === 'informer' && e.event === 'update' && /generation/i.test(e.filteredBy ?? '')), 'the status write came back as an update and was filtered');
    const bad = await cli(['run', ...labNs, '--predicate', 'nope']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown predicate "nope" \(predicates: generation-changed, /);
  });

  test("run's banner names every predicate in force: the flags' and the module's exported ones", async () => {
    const mod = join(dir, 'filtered.mjs');
    writeFileSync(mod, "export const predicates = ['generation-changed'];\nexport async function reconcile() { return {}; }\n");
    const r = await cli(['run', '--kubeconfig', kubeconfig, '--resource', `widgets.${crd.group}`, '-n', ns, '--reconciler', `module:${mod}`, '--predicate', 'label-changed', '--duration', '2']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /running on .*\(1 worker\(s\), priority queue, predicates: labelChanged, generationChanged \(the module's\)\); Ctrl\+C to stop/, r.stderr);
    // stdout and stderr into one file, in the order written: the banner comes before the first reconcile's line.
    const both = join(dir, 'both.txt');
    const fd = openSync(both, 'w');
    const p = spawn(process.execPath, [CLI_MAIN, 'run', '--kubeconfig', kubeconfig, '--resource', `widgets.${crd.group}`, '-n', ns, '--reconciler', `module:${mod}`, '--duration', '2'], { stdio: ['ignore', fd, fd] });
    const code = await new Promise<number | null>((resolve, reject) => {
      p.on('error', reject);
      p.on('close', resolve);
    });
    closeSync(fd);
    const out = readFileSync(both, 'utf8');
    assert.equal(code, 0, out);
    const banner = out.indexOf('Ctrl+C to stop');
    const first = out.indexOf(' ▶ ');
    assert.ok(banner >= 0 && first > banner, `the banner first, then the reconciles:\n${out.slice(0, 2000)}`);
  });

  test('in a terminal, run reads keys: p pauses (a new object waits), s runs exactly one reconcile, Ctrl+C stops with the summary', { skip: !hasScript() && 'no script(1) to give the CLI a terminal' }, async () => {
    const cluster = await getTestCluster();
    const keysNs = await createNamespace(cluster.transport, 'cli-keys');
    const mod = join(dir, 'quiet.mjs');
    writeFileSync(mod, 'export async function reconcile() { return {}; }\n');
    await c.create(crd.gvr, { apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name: 'one', namespace: keysNs }, spec: {} });
    // script(1) runs the CLI on a pseudo-terminal and passes what is written to its stdin on as typed keys.
    const command = [process.execPath, CLI_MAIN, 'run', '--kubeconfig', kubeconfig, '--resource', `widgets.${crd.group}`, '-n', keysNs, '--reconciler', `module:${mod}`].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const p = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (b) => (out += b));
    p.stderr.on('data', (b) => (out += b));
    const exited = new Promise<number | null>((resolve, reject) => {
      p.on('error', reject);
      p.on('close', resolve);
    });
    const until = async (what: string, re: RegExp, ms = 30_000) => {
      const end = Date.now() + ms;
      while (!re.test(out)) {
        if (Date.now() > end) throw new Error(`no ${what} in:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    try {
      await until('banner with the keys', /keys: p pause\/resume, s step one reconcile, q quit/);
      await until('first reconcile', new RegExp(`▶ ${keysNs}/one reconcile, 1st`));
      p.stdin.write('p');
      await until('pause', /reconcile-lab: paused: s steps one reconcile, p resumes/);
      await c.create(crd.gvr, { apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name: 'two', namespace: keysNs }, spec: {} });
      await new Promise((r) => setTimeout(r, 1500));
      assert.doesNotMatch(out, new RegExp(`▶ ${keysNs}/two`), `paused: the new object waits in the queue:\n${out}`);
      p.stdin.write('s');
      await until('one stepped reconcile', new RegExp(`▶ ${keysNs}/two reconcile, 1st[^\n]*\n[^\n]*■ ${keysNs}/two done`));
      p.stdin.write('s');
      await until('an empty queue said', /reconcile-lab: nothing is queued/);
      p.stdin.write('\u0003');
      assert.equal(await exited, 0, out);
      assert.match(out, /Summary: 2 key\(s\), 2 reconcile\(s\)/, out);
    } finally {
      p.kill('SIGKILL');
    }
  });

  test('a controller warning (a hot loop) is read once: a ⚠ journal line on stdout and no WARN copy on stderr in text mode; with --json the entry on stdout and the WARN line on stderr', async () => {
    const cluster = await getTestCluster();
    const hotNs = await createNamespace(cluster.transport, 'cli-hot');
    // Writes an annotation on every pass: its own update queues the key again, over and over.
    const mod = join(dir, 'hot.mjs');
    writeFileSync(mod, [
      'export async function reconcile(req, ctx) {',
      "  await ctx.client.patch(ctx.primary, req.namespace, req.name, 'merge', { metadata: { annotations: { stamp: String(Date.now()) } } }, { signal: ctx.signal });",
      '  return {};',
      '}',
      '',
    ].join('\n'));
    await c.create(crd.gvr, { apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name: 'spinner', namespace: hotNs }, spec: {} });
    const args = ['run', '--kubeconfig', kubeconfig, '--resource', `widgets.${crd.group}`, '-n', hotNs, '--reconciler', `module:${mod}`, '--duration', '4'];
    const text = await cli(args);
    assert.equal(text.code, 0, text.stderr);
    const hot = /Hot loop: \S*spinner was reconciled/g;
    assert.equal(text.stdout.match(/⚠ Hot loop: \S*spinner was reconciled/g)?.length, 1, `one ⚠ line on stdout:\n${text.stdout.slice(-3000)}`);
    assert.equal(text.stderr.match(hot)?.length ?? 0, 0, `not said again on stderr:\n${text.stderr}`);
    const json = await cli([...args, '--json']);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(entriesOf(json).filter((e) => e.kind === 'warning' && (e as { code?: string }).code === 'hotLoop').length, 1, json.stdout.slice(-3000));
    assert.equal(json.stderr.match(hot)?.length, 1, `--json: stdout is for programs, the WARN line tells the person:\n${json.stderr}`);
  });

  test('run keeps running while the informer waits to retry a failing LIST (the resource was deleted), then ends with its summary', async () => {
    const cluster = await getTestCluster();
    const gone = await installLabCrd(cluster.transport);
    await c.create(gone.gvr, { apiVersion: gone.apiVersion, kind: 'Widget', metadata: { name: 'w', namespace: ns }, spec: {} });
    // An exec reconciler watches nothing else: no other informer's socket holds the process while the LIST fails.
    const p = spawn(process.execPath, [CLI_MAIN, 'run', '--kubeconfig', kubeconfig, '--resource', `widgets.${gone.group}`, '-n', ns, '--reconciler', `exec:${script}`, '--json', '--duration', '12'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let deleted: Promise<unknown> | undefined;
    p.stderr.on('data', (b) => (stderr += b));
    p.stdout.on('data', (b) => {
      stdout += b;
      // Once the informer has listed, delete the CRD: the watch ends and every relist fails until --duration.
      if (!deleted && /"kind":"informer"/.test(stdout)) {
        deleted = cluster.transport.json({ method: 'DELETE', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${gone.group}` });
      }
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      p.on('error', reject);
      p.on('close', resolve);
    });
    assert.ok(deleted, `the informer listed before the CRD was deleted: ${stdout}${stderr}`);
    await deleted;
    // Only a process that stayed alive until --duration prints the summary (it follows the stop).
    const last = stdout.trim().split('\n').at(-1) ?? '';
    assert.match(last, /^\{"summary":/, `the run ended before --duration, without its summary: ${stdout.slice(-2000)}\n${stderr.slice(-2000)}`);
    assert.equal(code, 0, stderr);
  });

  test('a module whose errors escape every reconcile (an unawaited call, a timer that throws) is named with its frames and the run goes on; process.exit in a module is said; a closed stdout ends the command quietly', async () => {
    const floating = join(dir, 'floating.ts');
    writeFileSync(floating, [
      'export async function reconcile(req: { namespace?: string; name: string }, ctx: any) {',
      "  ctx.client.get({ group: '', version: 'v1', resource: 'configmaps' }, req.namespace, 'not-there');",
      "  if (req.name === 'b') setTimeout(() => { throw new Error('timer boom'); }, 10);",
      '  return {};',
      '}',
      '',
    ].join('\n'));
    const base = ['--kubeconfig', kubeconfig, '--resource', `widgets.${crd.group}`, '-n', ns];
    const r = await cli(['run', ...base, '--reconciler', `module:${floating}`, '--duration', '4']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`⚠ an error escaped every reconcile of the reconciler module ${floating.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(a promise it did not await[^)]*\\), so no reconcile reports it: .*configmaps "not-there" not found`), r.stderr);
    assert.equal(r.stderr.match(/configmaps "not-there" not found/g)?.length, 1, 'the same escaped error is said once, not once per key');
    assert.match(r.stderr, new RegExp(`: timer boom\\n  at .*\\(${floating.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:3:\\d+\\)`), 'the timer\'s frame in the user\'s file');
    assert.doesNotMatch(r.stderr, /dist\/cli\.js|node:internal|internal error/, 'no stack trace of Reconcile Lab');
    assert.match(r.stdout, /\nSummary: \d+ key\(s\), \d+ reconcile\(s\)/, 'the run went on to its summary');

    const exits = join(dir, 'exits.ts');
    writeFileSync(exits, 'export async function reconcile() { process.exit(7); }\n');
    const e = await cli(['step', `${ns}/b`, ...base, '--reconciler', `module:${exits}`]);
    assert.equal(e.code, 7);
    assert.match(e.stderr, /the process was ended \(exit code 7\) before the command finished: the reconciler module called process\.exit; throw an error \(or a TerminalError\) instead/);

    // `report … | head -1`: the reader goes away after the first bytes.
    const p = spawn(process.execPath, [CLI_MAIN, 'report', ...base, '--reconciler', `exec:${script}`, '--exec-timeout', '1', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    p.stderr.on('data', (b) => (stderr += b));
    p.stdout.once('data', () => p.stdout.destroy());
    const code = await new Promise<number | null>((resolve, reject) => {
      p.on('error', reject);
      p.on('close', resolve);
    });
    assert.doesNotMatch(stderr, /EPIPE|Unhandled 'error' event/, stderr);
    assert.notEqual(code, null);
  });

  test('an escaped error of a module that carries terminal escape sequences (cluster text in its message) reaches the terminal escaped', async () => {
    const esc = join(dir, 'escapes.ts');
    // The message as a reconciler would build it from an object's annotation: an OSC 8 hyperlink, a clear screen, a bidi override.
    writeFileSync(esc, [
      'export async function reconcile(req: { name: string }) {',
      "  if (req.name === 'b') setTimeout(() => { throw new Error('note \\u001b]8;;https://evil.example\\u0007click\\u001b]8;;\\u0007 \\u001b[2J \\u202eevil'); }, 10);",
      '  return {};',
      '}',
      '',
    ].join('\n'));
    const r = await cli(['run', '--kubeconfig', kubeconfig, '--resource', `widgets.${crd.group}`, '-n', ns, '--reconciler', `module:${esc}`, '--duration', '3']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /⚠ an error escaped every reconcile .*: note \\u001b\]8;;https:\/\/evil\.example\\u0007click\\u001b\]8;;\\u0007 \\u001b\[2J \\u202eevil/, r.stderr);
    assert.doesNotMatch(r.stderr + r.stdout, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/, 'no raw control or bidi character');
  });

  test('a module it cannot use is a usage error (exit 2) for every command, saying what to fix: no such file, a misspelt reconcile export, a syntax error', async () => {
    const typo = join(dir, 'typo.ts');
    writeFileSync(typo, 'export async function reconcilee() { return {}; }\n');
    const syntax = join(dir, 'syntax.ts');
    writeFileSync(syntax, 'export async function reconcile( { return {}; }\n');
    const base = ['--kubeconfig', kubeconfig, '--resource', `widgets.${crd.group}`, '-n', ns];
    for (const cmd of [['step', `${ns}/b`], ['dry-run', `${ns}/b`], ['report'], ['check', `${ns}/b`], ['run', '--duration', '1']]) {
      const t = await cli([...cmd, ...base, '--reconciler', `module:${typo}`]);
      assert.equal(t.code, 2, `${cmd[0]}: ${t.stderr}`);
      assert.match(t.stderr, /typo\.ts must export a function "reconcile\(request, ctx\)" .*\(it exports reconcilee: did you mean reconcile\?\): fix the module's exports\n$/, `${cmd[0]}: ${t.stderr}`);
      const missing = await cli([...cmd, ...base, '--reconciler', 'module:no-such-reconciler.ts']);
      assert.equal(missing.code, 2, `${cmd[0]}: ${missing.stderr}`);
      assert.match(missing.stderr, /reconciler module not found: .*no-such-reconciler\.ts \(--reconciler module:<path to a \.ts or \.js file>, relative to the current directory /);
      if (cmd[0] === 'run') continue; // run starts its loop on a module that does not compile yet (a fixed file is picked up)
      const broken = await cli([...cmd, ...base, '--reconciler', `module:${syntax}`]);
      assert.equal(broken.code, 2, `${cmd[0]}: ${broken.stderr}`);
      assert.match(broken.stderr, /cannot compile .*syntax\.ts:\nsyntax\.ts:1:\d+: /, broken.stderr);
    }
  });

  test('step with --reconcile-timeout gives up on a reconcile that ignores its aborted signal (exit 1, saying so) instead of waiting for ever', async () => {
    const hang = join(dir, 'hang.ts');
    writeFileSync(hang, 'export async function reconcile() { await new Promise(() => {}); return {}; }\n');
    const r = await cli(['step', `${ns}/b`, '--kubeconfig', kubeconfig, '--resource', `widgets.${crd.group}`, '--reconciler', `module:${hang}`, '--reconcile-timeout', '1']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /reconcile-lab: the reconcile did not return 5\.0 s after its 1\.0 s timeout aborted its signal: it ignores ctx\.signal, so step gives up on it/, r.stderr);
  });

  test('your own reconciler without --resource: a note says it reconciles the default resource (the lab\'s Widgets) and how to name your own', async () => {
    const cluster = await getTestCluster();
    await installCrd(cluster.transport, sampleDocs('crd.yaml')[0]!).catch((e: unknown) => {
      if (!/AlreadyExists|already exists/.test(String((e as Error).message))) throw e;
    });
    const r = await cli(['report', '--kubeconfig', kubeconfig, '-n', ns, '--reconciler', `exec:${script}`, '--dry-run', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /reconcile-lab: note: no --resource: the program reconciles widgets\.lab\.reconcile\.dev \(the default, the built-in lab reconciler's resource\); pass --resource <plural\.group> for your own kind\n/);
    const given = await cli(['report', '--kubeconfig', kubeconfig, '-n', ns, '--resource', 'widgets.lab.reconcile.dev', '--reconciler', `exec:${script}`, '--dry-run', '--json']);
    assert.doesNotMatch(given.stderr, /no --resource/);
  });

  test('Ctrl+C or SIGTERM ends step, dry-run and a --go step still waiting for its program: exit 130 / 143, saying so, with the exec program, the Go program and the bridge socket directory gone; run (130) and a check --go still learning its resource (143) stop at once too', async () => {
    const waitFor = async (what: string, ok: () => boolean, ms = 20_000) => {
      const end = Date.now() + ms;
      while (!ok()) {
        if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    // An exec step holding its worker ("a-hang" runs sleep 300): before, Node's default ended the CLI (no exit code, no word).
    const before = hangPids().length;
    const step = startCliProcess(['step', `${ns}/a-hang`, ...common().filter((a) => a !== '--json')]);
    await waitFor('the hung exec program', () => hangPids().length > before);
    step.kill('SIGINT');
    const stepped = await step.exited;
    assert.equal(stepped.code, 130, stepped.stderr);
    assert.match(stepped.stderr, /reconcile-lab: interrupted: step stopped before it finished\n$/);
    await waitFor('the exec program to be killed', () => !alive(hangPids().at(-1)!), 5_000);
    const dry = startCliProcess(['dry-run', `${ns}/a-hang`, ...common()]);
    await waitFor('the hung exec program of the dry-run', () => hangPids().length > before + 1);
    dry.kill('SIGTERM');
    const dried = await dry.exited;
    assert.equal(dried.code, 143, dried.stderr);
    assert.deepEqual(JSON.parse(dried.stdout), { error: 'terminated (SIGTERM): dry-run stopped before it finished', exitCode: 143 });
    // A --go program that has not announced its controller yet (a go run still compiling): it and the bridge's socket
    // directory were left behind.
    const seen = join(dir, 'bridge.env');
    const go = startCliProcess(['step', `${ns}/b`, '--kubeconfig', kubeconfig, '--go', `sh -c 'echo "$RECONCILE_LAB_BRIDGE $$" > ${seen}; exec sleep 300'`]);
    await waitFor('the Go program to start', () => existsSync(seen) && readFileSync(seen, 'utf8').includes(' '));
    const [address, pid] = readFileSync(seen, 'utf8').trim().split(' ');
    const socketDir = address!.replace(/^unix:\/\//, '').replace(/\/bridge\.sock$/, '');
    assert.ok(existsSync(socketDir), socketDir);
    go.kill('SIGINT');
    const gone = await go.exited;
    assert.equal(gone.code, 130, gone.stderr);
    assert.match(gone.stderr, /reconcile-lab: interrupted: step stopped before it finished; stopping the Go program\n$/);
    await waitFor('the Go program to be stopped', () => !alive(Number(pid)), 10_000);
    assert.equal(existsSync(socketDir), false, `the bridge's socket directory ${socketDir} is left behind`);
    // run stops on Ctrl+C itself: also while its program has not announced a controller (before: it waited for the
    // announcement, up to --go-wait, 300 s by default).
    rmSync(seen);
    const run = startCliProcess(['run', '--kubeconfig', kubeconfig, '--go', `sh -c 'echo "$RECONCILE_LAB_BRIDGE $$" > ${seen}; exec sleep 300'`]);
    await waitFor('the Go program of run to start', () => existsSync(seen) && readFileSync(seen, 'utf8').includes(' '));
    const runPid = Number(readFileSync(seen, 'utf8').trim().split(' ')[1]);
    run.kill('SIGINT');
    // The signal, not --go-wait running out (300 s), ends it: the message below says so (no timing is asserted).
    const ran = await run.exited;
    // Nothing ran: the conventional 130, as every command interrupted before it did anything (it was 1).
    assert.equal(ran.code, 130, ran.stderr);
    assert.match(ran.stderr, /reconcile-lab: interrupted before the loop started: the Go program had not announced its controller yet\n/);
    await waitFor('the Go program of run to be stopped', () => !alive(runPid), 10_000);
    // check --go without --resource starts the program once to learn its resource: Ctrl+C then answered nothing
    // (Node's default ended the CLI, silent, and the program was left running).
    rmSync(seen);
    const checking = startCliProcess(['check', '--json', '--kubeconfig', kubeconfig, '--go', `sh -c 'echo "$RECONCILE_LAB_BRIDGE $$" > ${seen}; exec sleep 300'`]);
    await waitFor('the Go program of check to start', () => existsSync(seen) && readFileSync(seen, 'utf8').includes(' '));
    const checkPid = Number(readFileSync(seen, 'utf8').trim().split(' ')[1]);
    checking.kill('SIGTERM');
    const checked = await checking.exited;
    assert.equal(checked.code, 143, checked.stderr);
    assert.deepEqual(JSON.parse(checked.stdout), { error: 'terminated (SIGTERM): check stopped before it finished; stopping the Go program', exitCode: 143 });
    await waitFor('the Go program of check to be stopped', () => !alive(checkPid), 10_000);
  });

  test('a reconciler module is loaded once per command (its top-level code runs once, "loaded" is logged once), not once to check it and again to reconcile', async () => {
    const loads = join(dir, 'loads.txt');
    const mod = join(dir, 'once.mjs');
    writeFileSync(mod, `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(loads)}, 'loaded\\n');\nexport async function reconcile() { return {}; }\n`);
    for (const command of ['step', 'dry-run']) {
      rmSync(loads, { force: true });
      const r = await cli([command, `${ns}/b`, '--kubeconfig', kubeconfig, '--resource', `widgets.${crd.group}`, '--reconciler', `module:${mod}`, '-v']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(readFileSync(loads, 'utf8'), 'loaded\n', `${command}: the module's top-level code ran more than once`);
      assert.equal(r.stderr.match(/reconciler module loaded/g)?.length, 1, r.stderr);
    }
  });

  test('step in a namespace with nothing queued says what empty means and how to reconcile a key anyway', async () => {
    const cluster = await getTestCluster();
    const empty = await createNamespace(cluster.transport, 'cli-empty');
    const r = await cli(['step', '--kubeconfig', kubeconfig, '--resource', `widgets.${crd.group}`, '-n', empty, '--reconciler', `exec:${script}`]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `step: empty: nothing is queued (no object of widgets.${crd.group} in scope needs a reconcile); name a key to reconcile it anyway\n`);
  });
});
