// Run Robustness Checks… in real VS Code against the run's control plane: the lab reconciler has zero findings, a
// buggy sample (samples/buggy/) is caught by the right check, the results view gets the report through its
// protocol, exports it and copies a reproduce line; a cluster that is not the local control plane is refused
// unless confirmed by name; the developer's object is never written; exec/module reconcilers need trust.
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { parse, stringify } from 'yaml';
import type { ReconcileLab } from '../../../src/host/reconcileLab.ts';
import { connectTo, lab, labCluster, ok, ROOT, run, runAsStranger, suiteWidgets, testNamespace, waitUntil, widget, widgetCrd, tooltipText } from './support/lab.ts';

type ChecksResult = { totals: { findings: number; passed: number; failed: number; skipped: number; errors: number; checks: number }; findings: Array<{ check: string; key: string; title: string; severity: string }>; aborted: boolean; durationMs: number };

/** The buggy sample every check family must catch, and the check that catches it (from samples/buggy/README or file names). */
function buggySample(): { path: string; check: string } | undefined {
  const dir = join(ROOT, 'samples/buggy');
  if (!existsSync(dir)) return undefined;
  // A create with generateName on every pass: caught by "run twice".
  const file = readdirSync(dir).find((f) => /generate-?name/i.test(f) && /\.(ts|js|mjs)$/.test(f));
  return file ? { path: join(dir, file), check: 'runTwice' } : undefined;
}

describe('Robustness checks', function () {
  this.timeout(300_000);
  let l: ReconcileLab;
  let ns = '';
  let tmp = '';

  before(async function () {
    this.timeout(120_000);
    ({ l, ns } = await suiteWidgets('ext-checks', [{ name: 'checked', data: { color: 'green', size: 'm' } }]));
    tmp = mkdtempSync(join(tmpdir(), 'rl-ext-checks-'));
  });

  after(async () => {
    rmSync(tmp, { recursive: true, force: true });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await l.disconnect();
  });

  it('live convergence: a stepped key reads "changing" until its writes stop, then "converged" in the Resources and Work Queue views', async () => {
    const c = await widgetCrd();
    await labCluster().client.create(c.gvr, widget(c, ns, 'converging'));
    await connectTo(ns);
    const key = `${ns}/converging`;
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, key)), 'widget cached');
    const description = () => {
      l.resourcesTree.flush();
      const node = l.resourcesTree.nodeFor(c.resourceId, key);
      return node ? String(l.resourcesTree.getTreeItem(node).description ?? '') : '';
    };
    assert.match(description(), /changing/, 'seen, not yet reconciled (the loop starts paused)');
    assert.match(l.session!.convergence(key)!.reason, /no reconcile has finished/);
    // The lab reconciler needs a few passes (finalizer, child, status); each write re-queues the key.
    ok(await run('reconcileLab.resumeLoop'));
    await waitUntil(() => l.session!.convergence(key)?.state === 'converged', 'converged after the quiet window', 20_000);
    assert.match(description(), /converged/);
    const c2 = l.session!.convergence(key)!;
    assert.ok(c2.writes >= 2, `the reconciles' writes were counted: ${JSON.stringify(c2)}`);
    assert.deepEqual(l.session!.convergenceTracker!.keysIn('converged').includes(key), true);
    // A spec change makes it changing again.
    await labCluster().client.patch(c.gvr, ns, 'converging', 'merge', { spec: { data: { color: 'red' } } });
    await waitUntil(() => l.session!.convergence(key)?.state === 'changing', 'changing after a spec change');
    assert.match(description(), /changing/);
    await waitUntil(() => l.session!.convergence(key)?.state === 'converged', 'converged again once the new spec is reconciled', 20_000);
  });

  it('runs every check on a key with the lab reconciler: zero findings, shown in the results view, the object untouched; the running loop is paused meanwhile and resumed after', async () => {
    const c = await widgetCrd();
    await connectTo(ns);
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/checked`)), 'widget cached');
    // The loop runs (a loop over every namespace would see the checks' scratch copies too): settled first.
    ok(await run('reconcileLab.resumeLoop'));
    const loop = l.session!.builtInController!;
    await waitUntil(() => (l.session!.keyState(`${ns}/checked`)?.reconciles ?? 0) > 0 && loop.snapshot().queue.length === 0 && loop.status().inFlight === 0, 'the loop settled');
    const before = await labCluster().client.get(c.gvr, ns, 'checked');
    let pausedDuring = false;
    const watch = setInterval(() => (pausedDuring ||= loop.status().paused), 20);
    const r = ok(await run<ChecksResult>('reconcileLab.runChecks', { key: `${ns}/checked`, resource: c.resourceId, checks: ['runTwice', 'crashAfterWrite', 'staleCache', 'unobservedState', 'convergence'], quiet: true }).finally(() => clearInterval(watch)));
    assert.equal(pausedDuring, true, 'the loop was paused while the checks ran');
    assert.equal(loop.status().paused, false, 'and runs again after');
    ok(await run('reconcileLab.pauseLoop'));
    assert.equal(r.aborted, false);
    const outcomes = JSON.stringify(l.checks.panel.current.results.map((x) => [x.check, x.status, x.message]));
    assert.equal(r.totals.findings, 0, `findings: ${JSON.stringify(r.findings)}`);
    assert.equal(r.totals.errors, 0, `every check could run: ${outcomes}`);
    assert.equal(r.totals.checks, 5);
    assert.ok(r.totals.passed >= 4, `passed ${r.totals.passed}, skipped ${r.totals.skipped}: ${outcomes}`);
    const after = await labCluster().client.get(c.gvr, ns, 'checked');
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'the developer\'s object was not written (copies only)');
    // The results view: open, handshake done, the finished model with one row per check.
    assert.equal(l.checks.panel.isOpen, true);
    await waitUntil(() => l.checks.panel.isReady, 'the results webview said ready');
    const m = l.checks.panel.current;
    assert.equal(m.phase, 'done');
    assert.equal(m.results.length, 5);
    assert.ok(m.results.every((x) => x.status === 'passed' || x.status === 'skipped'), JSON.stringify(m.results.map((x) => [x.check, x.status, x.message])));
    assert.match(m.status, /^Finished in .*: no findings/);
    const tab = vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputWebview && /Robustness Checks/.test(t.label));
    assert.ok(tab, 'the results view is an editor tab');
  });

  it("a loop over every namespace never queues the checks' scratch copies (nor their deletes when the checks clean up)", async () => {
    const c = await widgetCrd();
    await connectTo(ns, { namespaces: [] });
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/checked`)), 'widget cached');
    ok(await run<ChecksResult>('reconcileLab.runChecks', { key: `${ns}/checked`, resource: c.resourceId, checks: ['runTwice'], quiet: true }));
    // The scratch namespaces are gone (the checks wait for their deletion): every event of theirs has been seen.
    const scratch = l.session!.keyStates().map((k) => k.key).filter((k) => k.startsWith('rl-check-'));
    assert.deepEqual(scratch, [], 'no key of a scratch copy in the loop\'s queue or history');
    assert.ok(l.session!.journal.entries({ kinds: ['informer'] }).some((e) => e.kind === 'informer' && e.objectKey.startsWith('rl-check-') && e.filteredBy === 'robustness-check scratch copy'), 'the copies\' events were seen and dropped by the filter');
  });

  it('catches the buggy sample with the right check; export (Markdown, JSON) and the reproduce line work', async function () {
    const sample = buggySample();
    if (!sample) this.skip();
    const c = await widgetCrd();
    await connectTo(ns, { reconcilerKind: 'module', reconcilerModulePath: sample!.path });
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/checked`)), 'widget cached');
    const r = ok(await run<ChecksResult>('reconcileLab.runChecks', { key: `${ns}/checked`, resource: c.resourceId, checks: [sample!.check], quiet: true }));
    assert.ok(r.totals.findings >= 1, `the ${sample!.check} check found the bug: ${JSON.stringify(r)}`);
    assert.ok(r.findings.every((f) => f.check === sample!.check && f.key === `${ns}/checked`), JSON.stringify(r.findings));
    const m = l.checks.panel.current;
    const f = m.results.flatMap((x) => x.findings)[0]!;
    assert.ok(f.explanation.length > 40, 'a developer-readable explanation');
    assert.ok(f.perturbation.length > 0);
    assert.ok(f.journal.length > 0, 'the perturbed run\'s journal');
    assert.match(f.reproduce, /reconcile-lab check/);
    assert.match(f.reproduce, /--reconciler module:/);
    // Copy (as the webview's button does: by finding id) and export.
    await vscode.env.clipboard.writeText('');
    const report = l.checks.lastReport!;
    assert.ok(report);
    assert.match(await l.checks.copyReproduce(f.id), /Copied/);
    assert.equal(await vscode.env.clipboard.readText(), f.reproduce);
    const md = join(tmp, 'checks.md');
    const json = join(tmp, 'checks.json');
    assert.match(await l.checks.export('markdown', md), /Exported/);
    assert.match(await l.checks.export('json', json), /Exported/);
    assert.match(readFileSync(md, 'utf8'), /^# Robustness checks/, 'the CLI\'s Markdown');
    assert.match(readFileSync(md, 'utf8'), /^## (Error|Warning): /m, 'a section per finding');
    assert.equal((JSON.parse(readFileSync(json, 'utf8')) as { totals: { findings: number } }).totals.findings, r.totals.findings);
  });

  it('a module\'s checkTransitions edited between two runs: the second run applies the new transitions (no reconnect)', async () => {
    const c = await widgetCrd();
    const mod = join(tmp, 'transitions-reconciler.mjs');
    const source = (t: unknown[]) => `// written by the checks host test\nexport const checkTransitions = ${JSON.stringify(t)};\nexport async function reconcile() { return {}; }\n`;
    const label = (v: string) => ({ metadata: { labels: { 'checks-test/step': v } } });
    writeFileSync(mod, source([label('one')]));
    await connectTo(ns, { reconcilerKind: 'module', reconcilerModulePath: mod });
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/checked`)), 'widget cached');
    const unobserved = async () => {
      ok(await run<ChecksResult>('reconcileLab.runChecks', { key: `${ns}/checked`, resource: c.resourceId, checks: ['unobservedState'], quiet: true }));
      const x = l.checks.panel.current.results.find((r) => r.check === 'unobservedState');
      return `${x?.status}: ${x?.message}`;
    };
    assert.match(await unobserved(), /^passed: 1 state change\(s\)/, 'the transitions exported at connect');
    // The person edits the export (three states now) and runs the checks again, without reconnecting.
    writeFileSync(mod, source([label('one'), label('two'), label('three')]));
    assert.match(await unobserved(), /^passed: 3 state change\(s\)/, 'the edited transitions were applied');
  });

  it('the checks.transitions setting: the transitions of a reconciler that exports none (and in its reproduce line); a module\'s checkTransitions export wins', async () => {
    const c = await widgetCrd();
    const label = (v: string) => ({ metadata: { labels: { 'checks-test/setting': v } } });
    const cfg = () => vscode.workspace.getConfiguration('reconcileLab');
    // A reconciler with one real finding (a no-op update of the Widget on every pass: run twice warns), so that a reproduce line exists.
    const body = 'export async function reconcile(req, ctx) {\n  const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal).catch(() => undefined);\n  if (w && !w.metadata.deletionTimestamp) await ctx.client.update(ctx.primary, w, { signal: ctx.signal });\n  return {};\n}\n';
    const mod = join(tmp, 'setting-transitions.mjs');
    writeFileSync(mod, `// written by the checks host test\n${body}`);
    await cfg().update('checks.transitions', [label('a'), label('b')], vscode.ConfigurationTarget.Global);
    try {
      await connectTo(ns, { reconcilerKind: 'module', reconcilerModulePath: mod });
      await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/checked`)), 'widget cached');
      const r = ok(await run<ChecksResult>('reconcileLab.runChecks', { key: `${ns}/checked`, resource: c.resourceId, checks: ['runTwice', 'unobservedState'], quiet: true }));
      const unobserved = l.checks.panel.current.results.find((x) => x.check === 'unobservedState');
      assert.match(`${unobserved?.status}: ${unobserved?.message}`, /^passed: 2 state change\(s\)/, 'the setting\'s two transitions were walked');
      assert.ok(r.findings.some((f) => f.check === 'runTwice'), `run twice found the no-op update: ${JSON.stringify(r.findings)}`);
      const noOp = l.checks.lastReport?.findings.find((f) => f.check === 'runTwice');
      assert.ok(noOp, 'the report has the finding');
      assert.ok(noOp.reproduce.includes(`--transition '${JSON.stringify(label('a'))}' --transition '${JSON.stringify(label('b'))}'`), noOp.reproduce);
      // The module now exports its own: those win over the setting (read again at the run, no reconnect).
      writeFileSync(mod, `// written by the checks host test\nexport const checkTransitions = ${JSON.stringify([label('own')])};\n${body}`);
      ok(await run<ChecksResult>('reconcileLab.runChecks', { key: `${ns}/checked`, resource: c.resourceId, checks: ['unobservedState'], quiet: true }));
      const own = l.checks.panel.current.results.find((x) => x.check === 'unobservedState');
      assert.match(`${own?.status}: ${own?.message}`, /^passed: 1 state change\(s\)/, 'the module\'s export won');
    } finally {
      await cfg().update('checks.transitions', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('the checks.copy setting: an input the spec names in an unrecognised way is copied into the scratch namespaces (in the notes and the reproduce line); a bad entry stops the run with an error naming the setting', async () => {
    const c = await widgetCrd();
    const cfg = () => vscode.workspace.getConfiguration('reconcileLab');
    await labCluster().client.create({ group: '', version: 'v1', resource: 'configmaps' }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'extra-input', namespace: ns }, data: { mode: 'on' } });
    // Needs the ConfigMap extra-input, which no spec field names: without it, it waits (Ready False, requeue), and
    // on the real path it writes one no-op update per pass (run twice reports it), so that a reproduce line exists.
    const mod = join(tmp, 'needs-extra-input.mjs');
    writeFileSync(mod, [
      'export async function reconcile(req, ctx) {',
      '  const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal).catch(() => undefined);',
      '  if (!w || w.metadata.deletionTimestamp) return {};',
      "  const found = await ctx.client.get({ group: '', version: 'v1', resource: 'configmaps' }, req.namespace, 'extra-input', ctx.signal).then(() => true, () => false);",
      '  if (!found) return { requeueAfterMs: 30000, reason: "extra-input missing" };',
      '  await ctx.client.update(ctx.primary, w, { signal: ctx.signal });',
      '  return {};',
      '}',
      '',
    ].join('\n'));
    await cfg().update('checks.copy', ['configmap/extra-input'], vscode.ConfigurationTarget.Global);
    try {
      await connectTo(ns, { reconcilerKind: 'module', reconcilerModulePath: mod });
      await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/checked`)), 'widget cached');
      const r = ok(await run<ChecksResult>('reconcileLab.runChecks', { key: `${ns}/checked`, resource: c.resourceId, checks: ['runTwice'], quiet: true }));
      const report = l.checks.lastReport!;
      assert.ok(report.notes.some((n) => n.includes('ConfigMap extra-input (setting reconcileLab.checks.copy)') && /copied into every scratch namespace/.test(n)), report.notes.join('\n'));
      const noOp = report.findings.find((f) => f.check === 'runTwice');
      assert.ok(noOp, `the real path ran (the input was there), so run twice found its no-op update: ${JSON.stringify(r.findings)}\n${report.notes.join('\n')}`);
      assert.ok(noOp.reproduce.includes('--copy configmap/extra-input'), noOp.reproduce);
      await cfg().update('checks.copy', ['configmap/extra-input', 'service/web'], vscode.ConfigurationTarget.Global);
      const bad = await run<ChecksResult>('reconcileLab.runChecks', { key: `${ns}/checked`, resource: c.resourceId, checks: ['runTwice'], quiet: true });
      assert.ok(!bad.ok && bad.reason === 'invalidArgument' && /^The setting reconcileLab\.checks\.copy: "service\/web": only Secrets and ConfigMaps are copied/.test(bad.message), JSON.stringify(bad));
    } finally {
      await cfg().update('checks.copy', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('a key that really fails: the Work Queue row carries the backoff marker (Reset Backoff offered only then); after Reset Backoff the marker and counter are gone', async () => {
    const c = await widgetCrd();
    const mod = join(tmp, 'failing-reconciler.mjs');
    writeFileSync(mod, `export async function reconcile() { throw new Error('the backend is down (host test)'); }\n`);
    await labCluster().client.create(c.gvr, widget(c, ns, 'failing'));
    await connectTo(ns, { reconcilerKind: 'module', reconcilerModulePath: mod });
    const key = `${ns}/failing`;
    // Reset Backoff's menu entries, as package.json declares them for the Work Queue rows.
    const menus = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { contributes: { menus: Record<string, Array<{ command: string; when?: string }>> } }).contributes.menus;
    const whens = Object.values(menus).flat().filter((m) => m.command === 'reconcileLab.resetBackoff' && m.when?.includes('reconcileLab.queue')).map((m) => m.when!);
    assert.ok(whens.length >= 1, 'Reset Backoff is in the Work Queue\'s menus');
    const offered = (contextValue: string) => whens.every((w) => [...w.matchAll(/viewItem =~ \/(.+?)\/(?=[ )])/g)].some((m) => new RegExp(m[1]!).test(contextValue)));
    const row = () => {
      const n = l.queueTree.getChildren().find((x) => x.type === 'queueKey' && x.key === key);
      return n ? { item: l.queueTree.getTreeItem(n), node: n } : undefined;
    };
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, key)) && Boolean(row()), 'the key is listed in the Work Queue');
    assert.doesNotMatch(String(row()!.item.contextValue), /:backoff$/, 'no marker before any failure');
    assert.equal(offered(String(row()!.item.contextValue)), false, 'Reset Backoff is not offered on a key that never failed');
    const step = ok(await run<{ step: { kind: string; outcome?: { kind: string } } }>('reconcileLab.stepReconcile', { key, resource: c.resourceId, force: true }));
    assert.equal(step.step.outcome?.kind, 'error', JSON.stringify(step));
    await waitUntil(() => /:backoff$/.test(String(row()?.item.contextValue)), 'the failing key carries the backoff marker');
    const failed = row()!;
    assert.equal(offered(String(failed.item.contextValue)), true, `Reset Backoff is offered on ${String(failed.item.contextValue)}`);
    assert.match(String(failed.item.description), /backoff/, String(failed.item.description));
    const tip = tooltipText(l.queueTree.resolveTreeItem(failed.item, failed.node).tooltip);
    assert.match(tip, /Requeues \(backoff counter\): [1-9]/, tip);
    assert.match(tip, /the backend is down \(host test\)/, tip);
    ok(await run('reconcileLab.resetBackoff', { key, resource: c.resourceId }));
    await waitUntil(() => !/:backoff$/.test(String(row()?.item.contextValue)), 'the marker is gone after Reset Backoff');
    const after = row()!;
    assert.equal(offered(String(after.item.contextValue)), false, 'Reset Backoff is no longer offered');
    assert.doesNotMatch(String(after.item.description), /backoff/, String(after.item.description));
    assert.equal(l.session!.keyState(key)?.requeues, 0);
    const tipAfter = tooltipText(l.queueTree.resolveTreeItem(after.item, after.node).tooltip);
    assert.match(tipAfter, /Requeues \(backoff counter\): 0\n/, tipAfter);
  });

  it('a module reconciler owns ConfigMaps without a setting: the child it writes is watched, and deleting it queues its owner', async () => {
    const c = await widgetCrd();
    const mod = join(tmp, 'child-writer.mjs');
    writeFileSync(mod, [
      "const CM = { group: '', version: 'v1', resource: 'configmaps' };",
      'export async function reconcile(req, ctx) {',
      '  const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal).catch(() => undefined);',
      '  if (!w || w.metadata.deletionTimestamp) return {};',
      "  const name = `${req.name}-child`;",
      '  const have = await ctx.client.get(CM, req.namespace, name, ctx.signal).catch(() => undefined);',
      "  if (!have) await ctx.client.create(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: req.namespace, ownerReferences: [{ apiVersion: w.apiVersion, kind: w.kind, name: w.metadata.name, uid: w.metadata.uid, controller: true }] }, data: { a: 'b' } }, { signal: ctx.signal });",
      '  return {};',
      '}',
      '',
    ].join('\n'));
    await labCluster().client.create(c.gvr, widget(c, ns, 'parent'));
    // Only the custom resource is named: ConfigMaps are watched because the reconciler owns them.
    await connectTo(ns, { reconcilerKind: 'module', reconcilerModulePath: mod, resources: [c.resourceId] });
    assert.ok(l.session!.resources.some((r) => r.id === 'configmaps'), l.session!.resources.map((r) => r.id).join(', '));
    const key = `${ns}/parent`;
    const step = ok(await run<{ step: { kind: string; outcome?: { kind: string } } }>('reconcileLab.stepReconcile', { key, resource: c.resourceId, force: true }));
    assert.equal(step.step.outcome?.kind, 'success', JSON.stringify(step));
    await waitUntil(() => Boolean(l.session!.get('configmaps', `${ns}/parent-child`)), 'the child is in the cache');
    // Step the re-queue (the child's add) away, then delete the child: its owner is queued because of it.
    ok(await run('reconcileLab.stepReconcile', { key, resource: c.resourceId, force: true }));
    await labCluster().client.delete({ group: '', version: 'v1', resource: 'configmaps' }, ns, 'parent-child');
    await waitUntil(() => (l.session!.keyState(key)?.reasons ?? []).some((r) => r.kind === 'owned' && r.event === 'delete' && r.child === `${ns}/parent-child`), 'the owner queued by its child\'s delete');
  });

  it("the built-in loop: an event its reconcile's own write caused says so under the key in the Work Queue", async () => {
    const c = await widgetCrd();
    const mod = join(tmp, 'labelling-reconciler.mjs');
    // One write per object: a label, so the update it causes queues the key again (no generation change).
    writeFileSync(mod, [
      'export async function reconcile(req, ctx) {',
      '  const w = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal).catch(() => undefined);',
      "  if (w && !w.metadata.labels?.['host-test/seen']) await ctx.client.patch(ctx.primary, req.namespace, req.name, 'merge', { metadata: { labels: { 'host-test/seen': 'yes' } } }, { signal: ctx.signal });",
      '  return {};',
      '}',
      '',
    ].join('\n'));
    await labCluster().client.create(c.gvr, widget(c, ns, 'labelled'));
    await connectTo(ns, { reconcilerKind: 'module', reconcilerModulePath: mod });
    const key = `${ns}/labelled`;
    const details = () => {
      const n = l.queueTree.getChildren().find((x) => x.type === 'queueKey' && x.key === key);
      return n ? l.queueTree.getChildren(n).map((d) => `${String(l.queueTree.getTreeItem(d).label)} ${String(l.queueTree.getTreeItem(d).description ?? '')}`) : [];
    };
    await waitUntil(() => details().some((d) => d.startsWith('queued because initial list')), 'the key is queued by the initial list');
    assert.ok(details().every((d) => !d.includes('own write')), details().join('\n'));
    const step = ok(await run<{ step: { kind: string; outcome?: { kind: string } } }>('reconcileLab.stepReconcile', { key, resource: c.resourceId, force: true }));
    assert.equal(step.step.outcome?.kind, 'success', JSON.stringify(step));
    const written = (await labCluster().client.get(c.gvr, ns, 'labelled')).metadata.resourceVersion!;
    await waitUntil(() => details().some((d) => d.includes(`(rv ${written}, this key's own write)`)), `the update at rv ${written} named as the key's own write`, 10_000).catch((e) => {
      throw new Error(`${(e as Error).message}:\n${details().join('\n')}`);
    });
    assert.match(details().find((d) => d.includes(`rv ${written}`))!, new RegExp(`^queued because update of ${ns}/labelled \\(rv ${written}, this key's own write\\), `));
  });

  it('refuses a cluster that is not the local control plane unless it is confirmed by name; a stranger cannot confirm', async () => {
    const c = await widgetCrd();
    // The same server under another context name: not recognisably the local control plane.
    type Kc = { clusters: Array<{ name: string }>; contexts: Array<{ name: string; context: { cluster: string } }>; 'current-context': string };
    const kc = parse(readFileSync(labCluster().kubeconfigPath, 'utf8')) as Kc;
    for (const ctx of kc.contexts) {
      if (ctx.name !== kc['current-context']) continue;
      for (const cl of kc.clusters) if (cl.name === ctx.context.cluster) cl.name = 'staging-cluster';
      ctx.context.cluster = 'staging-cluster';
      ctx.name = 'staging';
    }
    kc['current-context'] = 'staging';
    const staging = join(tmp, 'staging.kubeconfig');
    writeFileSync(staging, stringify(kc));
    ok(await run('reconcileLab.connect', { kubeconfig: staging, namespaces: [ns], resources: [c.resourceId, 'configmaps'], reconcilerResource: c.resourceId, reconcilerKind: 'lab' }));
    await waitUntil(() => Boolean(l.session?.get(c.resourceId, `${ns}/checked`)), 'widget cached');
    const stranger = await runAsStranger('reconcileLab.runChecks', { key: `${ns}/checked`, resource: c.resourceId, checks: ['runTwice'], confirmCluster: 'staging' });
    assert.equal(stranger.ok, false);
    assert.equal(!stranger.ok && stranger.reason, 'invalidArgument');
    const wrong = await run('reconcileLab.runChecks', { key: `${ns}/checked`, resource: c.resourceId, checks: ['runTwice'], confirmCluster: 'production', quiet: true });
    assert.equal(!wrong.ok && wrong.reason, 'cancelled');
    assert.match(!wrong.ok ? wrong.message : '', /staging/);
    const confirmed = ok(await run<ChecksResult>('reconcileLab.runChecks', { key: `${ns}/checked`, resource: c.resourceId, checks: ['runTwice'], confirmCluster: 'staging', quiet: true }));
    assert.equal(confirmed.totals.findings, 0);
    assert.match(l.checks.panel.current.title, /cluster staging$/, 'not marked local');
  });

  it('[untrusted] does not run a workspace module reconciler in an untrusted workspace', async () => {
    assert.equal(vscode.workspace.isTrusted, false);
    const c = await widgetCrd();
    const untrustedNs = await testNamespace('ext-checks-untrusted');
    await labCluster().client.create(c.gvr, widget(c, untrustedNs, 'u'));
    await connectTo(untrustedNs, { reconcilerKind: 'module', reconcilerModulePath: join(ROOT, 'samples/module-reconciler.ts') });
    const r = await run('reconcileLab.runChecks', { key: `${untrustedNs}/u`, resource: c.resourceId, checks: ['runTwice'], quiet: true });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.reason, 'untrusted');
    await l.disconnect();
  });
});
