import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cleanForDiff, toYaml, yamlDiff } from '../../../src/core/actions/objectDiff.ts';
import { describeDryRunOutcome, describeOutcome, outcomeOf, runOnce } from '../../../src/core/actions/runOnce.ts';
import { diagnoseStuck, goKnownController, lastReconcileOf, loopKnownController, managersOfFinalizer, namespaceHoldLines, NAMESPACE_GVR, notDeletingNote } from '../../../src/core/actions/finalizers.ts';
import type { KeyState } from '../../../src/core/controller/keyState.ts';
import { renderReportMarkdown, type ReconcileReport } from '../../../src/core/actions/report.ts';
import { staticCache } from '../../../src/core/actions/context.ts';
import { TerminalError, type Reconciler } from '../../../src/core/controller/reconcile.ts';
import { statusOnlyClient, widget, WIDGETS } from '../reconcilers/helpers.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';

test('toYaml: strings a YAML 1.1 reader takes for booleans (a label value yes, a key on) are quoted, as kubectl shows them; timestamps and other strings stay plain', () => {
  const text = toYaml({ metadata: { labels: { enabled: 'yes', legacy: 'Off', tier: 'n', plain: 'yesterday' } }, data: { on: 'x', when: '2026-12-08T00:00:00Z', t: 'true', n: 3, b: false } });
  assert.equal(text, [
    'metadata:',
    '  labels:',
    '    enabled: "yes"',
    '    legacy: "Off"',
    '    tier: "n"',
    '    plain: yesterday',
    'data:',
    '  "on": x',
    '  when: 2026-12-08T00:00:00Z',
    '  t: "true"',
    '  "n": 3', // a key too: go-yaml reads a plain n as false
    '  b: false',
    '',
  ].join('\n'));
  assert.match(yamlDiff('cm/x', { v: 'no' }, { v: 'yes' }), /-v: "no"\n\+v: "yes"/);
});

test('yamlDiff: unified diff of YAML, empty when equal, managedFields never shown', () => {
  const a = { metadata: { name: 'x', managedFields: [{ manager: 'm' }], resourceVersion: '1' }, data: { k: 'v' } };
  const b = { metadata: { name: 'x', managedFields: [{ manager: 'other' }], resourceVersion: '2' }, data: { k: 'w' } };
  assert.equal(yamlDiff('x', a, a), '');
  const d = yamlDiff('cm/x', a, b, { volatile: true });
  assert.match(d, /^--- cm\/x\tobserved\n\+\+\+ cm\/x\tdesired/);
  assert.match(d, /-  k: v\n\+  k: w/);
  assert.doesNotMatch(d, /managedFields|resourceVersion/);
  assert.match(yamlDiff('new', undefined, { a: 1 }), /@@ -0,0 \+1(,1)? @@\n\+a: 1/);
  assert.equal(toYaml(undefined), '');
  assert.deepEqual(cleanForDiff(a), { metadata: { name: 'x', resourceVersion: '1' }, data: { k: 'v' } });
  assert.equal(a.metadata.managedFields.length, 1, 'input untouched');
});

test('outcomeOf mirrors the controller result switch', () => {
  assert.deepEqual(outcomeOf({ result: {} }), { kind: 'done' });
  assert.deepEqual(outcomeOf({ result: { requeueAfterMs: 0 } }), { kind: 'done' });
  assert.deepEqual(outcomeOf({ result: { requeueAfterMs: 5, reason: 'r' } }), { kind: 'requeueAfter', requeueAfterMs: 5, reason: 'r' });
  assert.deepEqual(outcomeOf({ error: new Error('boom') }), { kind: 'error', error: 'boom' });
  assert.deepEqual(outcomeOf({ error: new TerminalError('bad') }), { kind: 'terminal', error: 'bad' });
  assert.match(describeOutcome({ kind: 'requeueAfter', requeueAfterMs: 5, reason: 'r' }), /requeue after 5 ms \(r\)/);
});

test('runOnce: the request is built from the key, writes are recorded, a throw is an outcome', async () => {
  const w = widget('w1');
  const client = statusOnlyClient([w]);
  const seen: string[] = [];
  const r: Reconciler = {
    name: 't',
    async reconcile(req, ctx) {
      seen.push(`${req.key}|${req.namespace}|${req.name}|${ctx.dryRun}|${ctx.cache.get(WIDGETS, req.key)?.metadata.uid}`);
      const cur = await ctx.client.get(WIDGETS, req.namespace, req.name);
      await ctx.client.updateStatus(WIDGETS, { ...cur, status: { childName: 'x' } });
      throw new Error('after the write');
    },
  };
  const res = await runOnce({ client, reconciler: r, primary: WIDGETS, key: 'ns1/w1', dryRun: false, cache: staticCache([{ gvr: WIDGETS, objects: [w] }]), clock: new FakeClock() });
  assert.deepEqual(seen, ['ns1/w1|ns1|w1|false|uid-w1']);
  assert.deepEqual(res.outcome, { kind: 'error', error: 'after the write' });
  assert.equal(res.writes.length, 1);
  assert.equal(res.writes[0]!.subresource, 'status');
  assert.equal(res.writes[0]!.resourceVersionBefore, '10');
  assert.equal(res.writes[0]!.resourceVersionAfter, '11');
});

test('managersOfFinalizer reads who added a finalizer from managedFields', () => {
  const mf = [
    { manager: 'kubectl-create', fieldsV1: { 'f:metadata': { 'f:finalizers': { '.': {}, 'v:"a.example.com/x"': {} } } } },
    { manager: 'my-operator', fieldsV1: { 'f:metadata': { 'f:finalizers': { 'v:"b.example.com/y"': {} } } } },
    { manager: 'other', fieldsV1: { 'f:spec': {} } },
  ];
  assert.deepEqual(managersOfFinalizer(mf, 'b.example.com/y'), ['my-operator']);
  assert.deepEqual(managersOfFinalizer(mf, 'a.example.com/x'), ['kubectl-create']);
  assert.deepEqual(managersOfFinalizer(mf, 'c.example.com/z'), []);
  assert.deepEqual(managersOfFinalizer(undefined, 'x'), []);
});

test('goKnownController: a Go program owns the finalizers its field manager (its program name) added, in its state', () => {
  const obj = {
    apiVersion: 'storage.example.org/v1', kind: 'Bucket',
    metadata: {
      name: 'photos', namespace: 'team-a', finalizers: ['storage.example.org/release', 'legacy.example.com/x'],
      managedFields: [
        { manager: 'bucket-operator', fieldsV1: { 'f:metadata': { 'f:finalizers': { '.': {}, 'v:"storage.example.org/release"': {} } } } },
        { manager: 'kubectl-edit', fieldsV1: { 'f:metadata': { 'f:finalizers': { 'v:"legacy.example.com/x"': {} } } } },
      ],
    },
  };
  const program = { program: 'bucket-operator', pid: 4242, exited: false, stoppedInDebugger: false, controllers: [{ name: 'bucket', paused: false }] };
  assert.deepEqual(goKnownController(program, obj), { name: 'the Go controller bucket (bucket-operator, pid 4242)', shortName: 'your Go controller', finalizers: ['storage.example.org/release'], managers: ['bucket-operator'], running: true, state: 'running' });
  assert.equal(goKnownController({ ...program, controllers: [{ name: 'bucket', paused: true }] }, obj)?.state, 'paused');
  assert.equal(goKnownController({ ...program, stoppedInDebugger: true }, obj)?.state, 'paused', 'at a breakpoint it acts once continued');
  assert.equal(goKnownController({ ...program, exited: true }, obj)?.state, 'stopped');
  assert.equal(goKnownController({ ...program, program: 'other-operator' }, obj), undefined, 'another program added none of them');
  assert.match(goKnownController({ ...program, controllers: [{ name: 'bucket', paused: true }, { name: 'shelf', paused: false }] }, obj)!.name, /^the Go controllers bucket, shelf /);
  // Two controllers of one manager: the one reconciling the object's resource owns its finalizer, and its state counts.
  const two = { ...program, controllers: [{ name: 'deployment', paused: false, resource: 'deployments.apps' }, { name: 'bucket', paused: true, resource: 'buckets.storage.example.org' }] };
  assert.deepEqual(goKnownController(two, obj, 'buckets.storage.example.org'), { name: 'the Go controller bucket (bucket-operator, pid 4242)', shortName: 'your Go controller', finalizers: ['storage.example.org/release'], managers: ['bucket-operator'], running: false, state: 'paused' });
  assert.match(goKnownController(two, obj, 'shelves.storage.example.org')!.name, /^the Go controllers deployment, bucket /, 'no controller of that resource: all of them');
  assert.equal(goKnownController(two, obj, 'shelves.storage.example.org')!.state, 'running');
});

test('diagnoseStuck: a Go controller that reconciled the Terminating object and requeued (a cleanup waiting for a release annotation) is named so, not as about to remove the finalizer', async () => {
  const deletion = '2026-12-07T17:38:44Z';
  const deletionMs = Date.parse(deletion);
  const clock = new FakeClock(deletionMs + 9_000);
  const db = {
    apiVersion: 'data.example.org/v1alpha1', kind: 'Database',
    metadata: { name: 'orders', namespace: 'userdb', resourceVersion: '301', deletionTimestamp: deletion, finalizers: ['data.example.org/cleanup'], managedFields: [{ manager: 'cmd', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:finalizers': { '.': {}, 'v:"data.example.org/cleanup"': {} } } } }] },
  };
  const client = { get: async () => db, list: async () => ({ items: [] }) } as unknown as Parameters<typeof diagnoseStuck>[0]['client'];
  const last = { startedAt: deletionMs + 5, endedAt: deletionMs + 6, sawDeletion: true, outcome: { kind: 'requeueAfter' as const, afterMs: 10_000 } };
  const program = { program: 'cmd', pid: 31784, exited: false, stoppedInDebugger: false, controllers: [{ name: 'database', paused: false, resource: 'databases.data.example.org', lastReconcile: last }] };
  const go = goKnownController(program, db, 'databases.data.example.org')!;
  assert.deepEqual(go.lastReconcile, last, 'the last reconcile of the controller of that resource');
  const d = await diagnoseStuck({ client, gvr: { group: 'data.example.org', version: 'v1alpha1', resource: 'databases' }, namespace: 'userdb', name: 'orders', clock, knownControllers: [go] });
  const f = d.finalizers[0]!;
  assert.equal(f.leftByOwner, 'requeued');
  assert.deepEqual(f.evidence, ['your Go controller owns it (running in this session) and reconciled the object right after the delete was requested, and left the finalizer: it asked to run again in 10 s: a cleanup still waiting on something may remove it then; if every run leaves it, its reconciler does not remove it (a bug to fix in the reconciler)']);
  assert.doesNotMatch(f.evidence.join('\n'), /it removes the finalizer after its cleanup/);
  // A controller of another resource in the same program does not lend its reconcile of a key of the same name.
  const other = goKnownController({ ...program, controllers: [{ name: 'database', paused: false, resource: 'databases.data.example.org' }, { name: 'backup', paused: false, resource: 'backups.data.example.org', lastReconcile: last }] }, db, 'databases.data.example.org')!;
  assert.equal(other.lastReconcile, undefined);
});

test('Markdown report: summary table and per-object sections; pipes escaped', () => {
  const report: ReconcileReport = {
    generatedAt: '2026-01-01T00:00:00Z',
    resource: 'widgets.lab.reconcile.dev',
    reconciler: 'lab',
    dryRun: true,
    totals: { objects: 2, writes: 1, changed: 1, unchanged: 1, requeued: 1, errors: 0 },
    entries: [
      { key: 'ns/a', diff: '', explained: true, notes: ['ConfigMap a-config matches'], actions: [], outcome: { kind: 'done' }, requeue: 'done (no requeue)', resourceVersionBefore: '5', resourceVersionAfter: '5', durationMs: 1 },
      {
        key: 'ns/b', diff: '--- x\n+++ y', explained: true, notes: [], outcome: { kind: 'requeueAfter', requeueAfterMs: 10, reason: 'a|b' }, requeue: 'requeue after 10 ms (a|b)', durationMs: 2,
        actions: [{ verb: 'update', subresource: 'status', resource: 'widgets.lab.reconcile.dev', key: 'ns/b', dryRun: true, outcome: 'ok', diff: '+x', resourceVersionBefore: '7', resourceVersionAfter: '7' }],
        statusWritten: { childName: 'b-config' }, resourceVersionBefore: '7', resourceVersionAfter: '7',
      },
    ],
  };
  const md = renderReportMarkdown(report);
  assert.match(md, /\*\*dry-run\*\* \(nothing persisted\)/);
  assert.match(md, /\| `ns\/a` \| none \| done \(no requeue\) \| no \| 5 → 5 \|/);
  assert.match(md, /\| `ns\/b` \| update widgets.lab.reconcile.dev ns\/b \(status\) \| requeue after 10 ms \(a\\\|b\) \| yes \| 7 → 7 \|/);
  assert.match(md, /## ns\/a\n\n- ConfigMap a-config matches/);
  assert.match(md, /\*\*Actions:\*\* none \(already as desired; nothing written\)\./);
  assert.match(md, /```json\n\{\n  "childName": "b-config"\n\}\n```/);
  // A dry-run writes no status: it says "would write", in the table header and the section.
  assert.match(md, /\| Object \| Actions \| Requeue decision \| Status it would write \|/);
  assert.match(md, /\*\*Status it would write \(dry-run, not written\):\*\*/);
  assert.doesNotMatch(md, /Status written/);
  assert.match(md, /## ns\/a[\s\S]*no difference \(converged\)/);
  const live = renderReportMarkdown({ ...report, dryRun: false });
  assert.match(live, /\| Status written \|/);
  assert.match(live, /\*\*Status written:\*\*/);
});

test('Markdown report: a write that changed nothing advises comparing before writing, a server-side apply that changed nothing does not', () => {
  const action = (verb: 'apply' | 'patch') => ({ verb, resource: 'services', key: 'ns/q-svc', dryRun: true, outcome: 'ok' as const, diff: '', resourceVersionBefore: '9', resourceVersionAfter: '9' });
  const report: ReconcileReport = {
    generatedAt: '2026-01-01T00:00:00Z', resource: 'queues.messaging.example.org', reconciler: 'Go controller queue', dryRun: true,
    totals: { objects: 2, writes: 2, changed: 2, unchanged: 0, requeued: 0, errors: 0 },
    entries: (['apply', 'patch'] as const).map((verb) => ({ key: `ns/${verb}`, diff: '', explained: false, notes: [], actions: [action(verb)], outcome: { kind: 'done' as const }, requeue: 'done (no requeue)', resourceVersionBefore: '3', resourceVersionAfter: '3', durationMs: 1 })),
  };
  const md = renderReportMarkdown(report);
  assert.match(md, /## ns\/apply\n\n\*\*Requeue:\*\* done \(no requeue\)\n\n\*\*Actions:\*\*\n\n- apply services ns\/q-svc \(dry-run\): rv 9 → 9 — no change: the object already was as planned \(a server-side apply, sent with the whole intent on every pass: the server stored nothing\)\n/);
  assert.match(md, /- patch services ns\/q-svc \(dry-run\): rv 9 → 9 — no change: the object already was as planned \(a write on every pass; compare before writing\)/);
  assert.equal(md.match(/compare before writing/g)?.length, 1, 'only the patch is told to compare');
  assert.match(md, /2 write\(s\) planned \(2 changing nothing\)/);
});

test('report totals: a failed reconcile that wrote nothing is an error, not "unchanged"', async () => {
  const { buildReconcileReport } = await import('../../../src/core/actions/report.ts');
  const widgetGvr = { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets' };
  const objects: Record<string, { metadata: { name: string; namespace: string; resourceVersion: string } }> = {
    a: { metadata: { name: 'a', namespace: 'ns', resourceVersion: '1' } },
    b: { metadata: { name: 'b', namespace: 'ns', resourceVersion: '2' } },
  };
  const client = {
    get: async (_g: unknown, _ns: string, name: string) => objects[name],
    list: async () => ({ metadata: {}, items: Object.values(objects) }),
  } as never;
  const reconciler = {
    name: 'half-broken',
    reconcile: async (req: { name: string }) => {
      if (req.name === 'b') throw new Error('boom');
      return {};
    },
  };
  const report = await buildReconcileReport({ client, reconciler, primary: widgetGvr, dryRun: true });
  assert.deepEqual(report.totals, { objects: 2, writes: 0, changed: 0, unchanged: 1, requeued: 0, errors: 1 });
  const md = renderReportMarkdown(report);
  const section = (k: string) => md.split(/^## /m).find((part) => part.startsWith(`${k}\n`)) ?? '';
  assert.match(section('ns/a'), /\*\*Actions:\*\* none \(already as desired; nothing written\)\./);
  assert.match(section('ns/b'), /\*\*Actions:\*\* none before it failed \(a failed reconcile says nothing about the desired state\)\./);
  assert.doesNotMatch(section('ns/b'), /already as desired/);
});

test('report: a reconciler without explain() is not shown as drift (spec and status are not compared)', async () => {
  const { buildReconcileReport, renderReportMarkdown } = await import('../../../src/core/actions/report.ts');
  const gvr = { group: 'example.com', version: 'v1', resource: 'gadgets' };
  // A converged object: its status reflects its spec, but the two have different shapes.
  const obj = { metadata: { name: 'g', resourceVersion: '3', generation: 1 }, spec: { size: 2 }, status: { observedGeneration: 1, ready: true } };
  const client = { get: async () => obj, list: async () => ({ metadata: {}, items: [obj] }) } as never;
  const report = await buildReconcileReport({ client, reconciler: { name: 'exec', reconcile: async () => ({}) }, primary: gvr, dryRun: false });
  const e = report.entries[0]!;
  assert.equal(e.explained, false);
  assert.equal(e.diff, '');
  // The primary's spec and status under their own names: a JSON consumer must not read them as desired / observed.
  assert.deepEqual(e.spec, { size: 2 });
  assert.deepEqual(e.status, { observedGeneration: 1, ready: true });
  assert.equal('desired' in e || 'observed' in e, false, JSON.stringify(e));
  const md = renderReportMarkdown(report);
  assert.match(md, /not compared: only the built-in lab reconciler states what it wants apart from writing it/);
  assert.doesNotMatch(md, /explain\(\)/, "no internal hook a module author cannot use is named");
  // Said once for the report, not once per object; an object that does not exist is said so, not "already as desired".
  const two = renderReportMarkdown({ ...report, entries: [e, { ...e, key: 'gone', resourceVersionBefore: undefined, resourceVersionAfter: undefined }] });
  assert.equal(two.match(/not compared: only the built-in/g)?.length, 1, two);
  assert.match(two, /\| `gone` \| none \| done \(no requeue\) \| no \| \(not found\) \|/);
  assert.match(two, /## gone\n\n\*\*Requeue:\*\* done \(no requeue\)\n\n\*\*Actions:\*\* none \(the object does not exist: the reconcile had nothing to do for it\)\./, two);
  assert.doesNotMatch(md, /```diff/);
});

test('Markdown report escapes cluster text: no link, image, HTML, emphasis or broken table/fence from names, reasons or errors', () => {
  const evil = '[click](command:workbench.action.quit) ![i](https://x/y.png) <img src=x onerror=alert(1)> **bold** a|b `code` ~~s~~';
  const report: ReconcileReport = {
    generatedAt: '2026-01-01T00:00:00Z',
    resource: `widgets.lab.reconcile.dev ${evil}`,
    reconciler: 'exec:./r.sh ``` `',
    dryRun: false,
    totals: { objects: 1, writes: 1, changed: 1, unchanged: 0, requeued: 1, errors: 0 },
    entries: [{
      key: 'ns/a', diff: 'x\n````\n[l](command:y)', explained: true, notes: [`note ${evil}`], outcome: { kind: 'requeueAfter', requeueAfterMs: 10, reason: evil }, requeue: `requeue after 10 ms (${evil})\nsecond line`, durationMs: 1,
      actions: [{ verb: 'create', resource: 'configmaps', key: 'ns/a-config', dryRun: false, outcome: 'error', error: `admission webhook denied: ${evil}`, diff: '' }],
      resourceVersionBefore: '1', resourceVersionAfter: '1',
    }],
  };
  const md = renderReportMarkdown(report);
  // Outside fenced blocks, no unescaped link/image opener, no raw HTML tag, no unescaped emphasis from the values.
  const outsideFences = md.replace(/(`{3,})[^\n]*\n[\s\S]*?\n\1/g, '');
  assert.doesNotMatch(outsideFences, /(^|[^\\])\[[^\]]*[^\\]\]\(/, 'a link would render');
  assert.doesNotMatch(outsideFences, /<img/);
  assert.doesNotMatch(outsideFences, /(^|[^\\])\*\*bold/);
  assert.match(outsideFences, /\\\[click\\\]\(command\\:workbench.action.quit\)/, 'the text stays readable');
  assert.match(outsideFences, /&lt;img src=x/);
  // Every table row still has its five cells (the pipe in the values is escaped; the newline is gone).
  const row = md.split('\n').find((l) => l.startsWith('| `ns/a`'))!;
  assert.equal(row.split(/(?<!\\)\|/).length - 2, 5, row);
  // The diff holding a 4-backtick run stays inside one fence of 5.
  assert.match(md, /`````diff\nx\n````\n\[l\]\(command:y\)\n`````/);
  assert.match(md, /Reconciler ```` exec:.\/r.sh ``` ` ````/, "a code span fenced longer than its backticks");
});

test('diagnoseStuck: the summary of a cluster-scoped object held by a stopped owner reads as sentences (no " ." before a period)', async () => {
  const clock = new FakeClock(Date.parse('2026-12-02T10:00:00Z'));
  const policy = { apiVersion: 'sec.example.org/v1', kind: 'Policy', metadata: { name: 'deny-all', resourceVersion: '7', deletionTimestamp: '2026-12-02T09:58:00Z', finalizers: ['cleanup.thirdparty.dev/external-firewall', 'sec.example.org/cleanup'] } };
  const client = { get: async () => policy, list: async () => ({ items: [] }) } as unknown as Parameters<typeof diagnoseStuck>[0]['client'];
  const d = await diagnoseStuck({ client, gvr: { group: 'sec.example.org', version: 'v1', resource: 'policies' }, name: 'deny-all', clock, knownControllers: [{ name: 'policy loop', finalizers: ['sec.example.org/cleanup'], running: false, state: 'stopped' }] });
  assert.equal(d.key, 'deny-all', 'a cluster-scoped key has no namespace');
  assert.match(d.summary, /^Policy deny-all has been terminating for 2 min and is held by 2 finalizers: .*sec\.example\.org\/cleanup \(owner running: no\)\. The owner of sec\.example\.org\/cleanup appears to be down, which is why it is stuck\.$/);
  assert.doesNotMatch(d.summary, / \./);
});

test('diagnoseStuck: a live object (not being deleted) whose finalizer this session\'s paused loop owns: the loop adds it back, nothing says "step to remove it"; the owner is named once', async () => {
  const clock = new FakeClock(Date.parse('2026-12-02T10:00:00Z'));
  const oven = { apiVersion: 'kitchen.example.com/v1', kind: 'Oven', metadata: { name: 'cold-oven', namespace: 'kitchen', resourceVersion: '12', finalizers: ['kitchen.example.com/cleanup'], managedFields: [{ manager: 'reconcile-lab', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:finalizers': { '.': {}, 'v:"kitchen.example.com/cleanup"': {} } } } }] } };
  const client = { get: async () => oven, list: async () => ({ items: [] }) } as unknown as Parameters<typeof diagnoseStuck>[0]['client'];
  const loop = loopKnownController({ name: 'module:oven-reconciler.ts', reconcilerKind: 'module', ownFinalizers: [], fieldManager: 'reconcile-lab', state: 'paused', primary: true })!;
  const d = await diagnoseStuck({ client, gvr: { group: 'kitchen.example.com', version: 'v1', resource: 'ovens' }, namespace: 'kitchen', name: 'cold-oven', clock, knownControllers: [loop] });
  const f = d.finalizers[0]!;
  assert.equal(f.probableOwner, "Reconcile Lab's module:oven-reconciler.ts loop");
  assert.deepEqual(f.evidence, [
    '"reconcile-lab", the field manager your reconciler writes with, added it (managedFields)',
    'your reconciler owns it and is paused in this session: a finalizer removed now is added back when the loop is stepped or resumed',
  ]);
  assert.doesNotMatch(f.evidence.join('\n'), /removes the finalizer itself/);
  assert.equal(f.consequence, 'your reconciler does not get to run its cleanup before deletion: external resources it manages (cloud resources, DNS records, database rows…) may be orphaned');
  assert.equal([f.probableOwner, ...f.evidence, f.consequence].join('\n').match(/module:oven-reconciler\.ts/g)?.length, 1, 'the loop is named once');
  assert.equal(d.summary, 'Oven kitchen/cold-oven is not being deleted and has 1 finalizer: kitchen.example.com/cleanup (owner running: paused).');
  assert.equal(notDeletingNote('kitchen/cold-oven'), "kitchen/cold-oven is not being deleted, so nothing is stuck. A finalizer removed now is added back by its controller at its next reconcile (while that controller runs); if it is not, the controller's cleanup will not run when the object is deleted.");
});

test('diagnoseStuck: the session\'s loop that reconciled the object after its delete and left its finalizer is named as the cause, not as about to remove it', async () => {
  const deletion = '2026-12-02T09:59:00Z';
  const deletionMs = Date.parse(deletion);
  const clock = new FakeClock(Date.parse('2026-12-02T10:00:00Z'));
  const gadget = { apiVersion: 'lab.example.com/v1', kind: 'Gadget', metadata: { name: 'g', namespace: 'ns', resourceVersion: '12', deletionTimestamp: deletion, finalizers: ['lab.example.com/cleanup'] } };
  const client = { get: async () => gadget, list: async () => ({ items: [] }) } as unknown as Parameters<typeof diagnoseStuck>[0]['client'];
  const keyState = (o: Partial<KeyState>): KeyState => ({ key: 'ns/g', phase: 'idle', dirtyWhileProcessing: false, requeues: 0, reconciles: 3, reasons: [], droppedReasons: 0, lastTriggers: [], ...o });
  const diagnose = async (state: 'running' | 'paused', ks?: KeyState) => {
    const loop = loopKnownController({ name: 'gadget', reconcilerKind: 'lab', ownFinalizers: ['lab.example.com/cleanup'], fieldManager: 'reconcile-lab', state, primary: true, ...(ks ? { keyState: ks } : {}) })!;
    const d = await diagnoseStuck({ client, gvr: { group: 'lab.example.com', version: 'v1', resource: 'gadgets' }, namespace: 'ns', name: 'g', clock, knownControllers: [loop] });
    return { f: d.finalizers[0]!, summary: d.summary };
  };

  // A successful reconcile 4 s after the delete that left the finalizer: the reconciler does not remove it.
  const left = await diagnose('running', keyState({ lastStartedAt: deletionMs + 4000, lastDurationMs: 20, lastOutcome: { kind: 'success' } }));
  assert.equal(left.f.running, 'yes');
  assert.equal(left.f.leftByOwner, 'kept');
  assert.deepEqual(left.f.evidence, ["your reconciler owns it (running in this session) and reconciled the object 4 s after the delete was requested, and left the finalizer: its reconciler does not remove it (a bug to fix in the reconciler; stripping it skips that cleanup)"]);
  assert.doesNotMatch(left.f.evidence.join('\n'), /it removes the finalizer after its cleanup/);
  assert.match(left.summary, /lab\.example\.com\/cleanup was left on by its owner's reconcile after the delete: its reconciler does not remove it, so waiting does not help; fix the reconciler\.$/);
  assert.doesNotMatch(left.summary, /may still finish on its own/);
  // Paused: stepping it would not help either.
  const pausedLeft = await diagnose('paused', keyState({ lastStartedAt: deletionMs + 4000, lastDurationMs: 20, lastOutcome: { kind: 'success' } }));
  assert.match(pausedLeft.f.evidence[0]!, /owns it \(paused in this session\) and reconciled the object 4 s after the delete was requested, and left the finalizer: its reconciler does not remove it/);
  assert.doesNotMatch(pausedLeft.summary, /step or resume it/);
  // Triggered by the update that set deletionTimestamp, within its second: it saw the deletion.
  const sawIt = await diagnose('running', keyState({ lastStartedAt: deletionMs + 300, lastDurationMs: 20, lastOutcome: { kind: 'success' }, lastTriggers: [{ kind: 'informer', event: 'update', resource: 'gadgets', objectKey: 'ns/g', deletionRequested: true, at: deletionMs + 290 }] }));
  assert.match(sawIt.f.evidence[0]!, /reconciled the object right after the delete was requested, and left the finalizer/);
  // A failed reconcile after the delete: the failure is the cause, a retry may still remove it.
  const failed = await diagnose('running', keyState({ lastStartedAt: deletionMs + 10_000, lastDurationMs: 20, lastOutcome: { kind: 'error', message: 'bucket API down' } }));
  assert.equal(failed.f.leftByOwner, 'failed');
  assert.match(failed.f.evidence[0]!, /reconciled the object 10 s after the delete was requested, and left the finalizer: that reconcile failed \(bucket API down\), and a retry removes the finalizer only once its cleanup succeeds/);
  assert.match(failed.summary, /A live owner may still finish on its own/);

  // The other cases keep their wording: no reconcile since the delete (one before it, in the same second without the
  // deletion's trigger, one still running, or none known).
  const running = "your reconciler owns it and is running in this session: it removes the finalizer after its cleanup";
  for (const ks of [
    keyState({ lastStartedAt: deletionMs - 5000, lastDurationMs: 20, lastOutcome: { kind: 'success' } }),
    keyState({ lastStartedAt: deletionMs + 300, lastDurationMs: 20, lastOutcome: { kind: 'success' } }),
    keyState({ phase: 'processing', lastStartedAt: deletionMs + 4000, lastDurationMs: 20, lastOutcome: { kind: 'success' } }),
    undefined,
  ]) {
    const d = await diagnose('running', ks);
    assert.deepEqual(d.f.evidence, [running], JSON.stringify(ks));
    assert.equal(d.f.leftByOwner, undefined);
  }
  assert.match((await diagnose('paused')).f.evidence[0]!, /owns it and is paused in this session: step or resume the loop and it removes the finalizer itself/);
  assert.equal(lastReconcileOf(keyState({ lastStartedAt: 5, lastDurationMs: 2, lastOutcome: { kind: 'success' } }))?.endedAt, 7);
});

test('describeDryRunOutcome: a dry run says what the loop would do, never that it retried (it runs beside the queue)', () => {
  assert.equal(describeDryRunOutcome({ kind: 'error', error: 'warehouse API flaked' }), 'error (a real reconcile is retried with backoff): warehouse API flaked');
  assert.equal(describeDryRunOutcome({ kind: 'terminal', error: 'bad spec' }), 'terminal error (a real reconcile is not retried): bad spec');
  assert.equal(describeDryRunOutcome({ kind: 'requeueAfter', requeueAfterMs: 15000 }), 'requeue after 15 s (a real reconcile waits that long, then runs again)');
  assert.equal(describeDryRunOutcome({ kind: 'done' }), 'done (no requeue)');
});

test('inspectTitle: one resourceVersion when cache and server have the same, an arrow only when the server moved on', async () => {
  const { inspectTitle } = await import('../../../src/core/actions/inspect.ts');
  assert.equal(inspectTitle('Gadget', "Go controller gadget's cache", { key: 'h4-shop/g', state: 'in-sync', cachedResourceVersion: '485', serverResourceVersion: '485', resourceVersionLag: 0 }),
    "Gadget h4-shop/g: Go controller gadget's cache ↔ server (in-sync, rv 485)");
  assert.equal(inspectTitle('Gadget', 'cache', { key: 'h4-shop/g', state: 'stale', cachedResourceVersion: '480', serverResourceVersion: '485', resourceVersionLag: 5 }),
    'Gadget h4-shop/g: cache ↔ server (stale, rv 480 → 485)');
  assert.equal(inspectTitle('Gadget', 'cache', { key: 'h4-shop/g', state: 'server-missing', cachedResourceVersion: '480' }), 'Gadget h4-shop/g: cache ↔ server (server-missing)');
});

test('namespaceHoldLines: a Terminating Namespace names what its controller reports holding it, and to look at the objects inside', async () => {
  const clock = new FakeClock(Date.parse('2026-12-02T10:00:00Z'));
  const ns = {
    apiVersion: 'v1', kind: 'Namespace',
    metadata: { name: 'h5-stuck', resourceVersion: '9', deletionTimestamp: '2026-12-02T09:58:00Z' },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Terminating', conditions: [
      { type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
      { type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain', message: 'Some resources are remaining: configmaps. has 1 resource instances' },
      { type: 'NamespaceFinalizersRemaining', status: 'True', reason: 'SomeFinalizersRemain', message: 'Some content in the namespace has finalizers remaining: legacy.h5.example.org/external in 1 resource instances' },
    ] },
  };
  const client = { get: async () => ns, list: async () => ({ items: [] }) } as unknown as Parameters<typeof diagnoseStuck>[0]['client'];
  const d = await diagnoseStuck({ client, gvr: NAMESPACE_GVR, name: 'h5-stuck', clock });
  assert.deepEqual(d.finalizers.map((f) => [f.finalizer, f.location]), [['kubernetes', 'spec']]);
  assert.deepEqual(namespaceHoldLines(d), [
    'The namespace controller reports:',
    '   NamespaceContentRemaining: Some resources are remaining: configmaps. has 1 resource instances',
    '   NamespaceFinalizersRemaining: Some content in the namespace has finalizers remaining: legacy.h5.example.org/external in 1 resource instances',
    'Objects still in the namespace keep it Terminating: let their owners remove their finalizers (or strip those), and the namespace goes by itself.',
  ]);
  assert.deepEqual(namespaceHoldLines({ ...d, terminating: false }), []);
  assert.deepEqual(namespaceHoldLines({ terminating: true }), [], 'not a namespace');
});

test('buildReport with a per-key pass (a Go controller\'s): keys in the given order, one pass at a time, the status read back when the pass only knows it wrote one', async () => {
  const { buildReport } = await import('../../../src/core/actions/report.ts');
  const gvr = { group: 'shop.example.io', version: 'v1', resource: 'orders' };
  let rv = 10;
  const status: Record<string, unknown> = {};
  const client = {
    get: async (_g: unknown, ns: string, name: string) => ({ metadata: { name, namespace: ns, resourceVersion: String(rv) }, status: status[name] }),
    list: async () => assert.fail('keys were given: nothing is listed'),
  } as never;
  let running = 0;
  const order: string[] = [];
  const report = await buildReport({
    client,
    primary: gvr,
    keys: ['eu/o2', 'eu/o1'],
    dryRun: false,
    reconciler: 'Go controller order',
    pass: async (key) => {
      assert.equal(running++, 0, 'one pass at a time');
      order.push(key);
      await new Promise((r) => setTimeout(r, 1));
      running--;
      if (key === 'eu/o1') return { outcome: { kind: 'terminal', error: 'no price' }, durationMs: 3, actions: [] };
      rv++;
      status.o2 = { phase: 'Paid' };
      return { outcome: { kind: 'requeueAfter', requeueAfterMs: 5000 }, durationMs: 4, wroteStatus: true, actions: [{ verb: 'update', resource: 'orders.shop.example.io', key, subresource: 'status', dryRun: false, outcome: 'ok', resourceVersionBefore: '10', resourceVersionAfter: '11', diff: '' }] };
    },
  });
  assert.deepEqual(order, ['eu/o2', 'eu/o1'], 'the keys as given');
  assert.deepEqual(report.entries.map((e) => [e.key, e.resourceVersionBefore, e.resourceVersionAfter, e.statusWritten]), [
    ['eu/o2', '10', '11', { phase: 'Paid' }],
    ['eu/o1', '11', '11', undefined],
  ]);
  assert.equal(report.reconciler, 'Go controller order');
  assert.deepEqual(report.totals, { objects: 2, writes: 1, changed: 1, unchanged: 0, requeued: 1, errors: 1 });
  assert.match(renderReportMarkdown(report), /update orders\.shop\.example\.io eu\/o2 \(status\): rv 10 → 11/);
});

test('report totals: changed, unchanged and failed add up to the objects; a requeue after a delay is counted across them, not as a fourth kind', async () => {
  const { buildReport } = await import('../../../src/core/actions/report.ts');
  const gvr = { group: 'shop.example.io', version: 'v1', resource: 'orders' };
  const client = { get: async (_g: unknown, ns: string, name: string) => ({ metadata: { name, namespace: ns, resourceVersion: '7' } }) } as never;
  const write = (key: string) => ({ verb: 'patch' as const, resource: 'orders.shop.example.io', key, dryRun: false, outcome: 'ok' as const, resourceVersionBefore: '7', resourceVersionAfter: '8', diff: '' });
  const report = await buildReport({
    client,
    primary: gvr,
    keys: ['eu/waits', 'eu/writes-waits', 'eu/done', 'eu/fails'],
    dryRun: false,
    reconciler: 'Go controller order',
    pass: async (key) => {
      if (key === 'eu/waits') return { outcome: { kind: 'requeueAfter', requeueAfterMs: 30_000 }, durationMs: 1, actions: [] };
      if (key === 'eu/writes-waits') return { outcome: { kind: 'requeueAfter', requeueAfterMs: 30_000 }, durationMs: 1, actions: [write(key)] };
      if (key === 'eu/done') return { outcome: { kind: 'done' }, durationMs: 1, actions: [] };
      return { outcome: { kind: 'error', error: 'boom' }, durationMs: 1, actions: [write(key)] };
    },
  });
  assert.deepEqual(report.totals, { objects: 4, writes: 2, changed: 1, unchanged: 2, requeued: 2, errors: 1 });
  const t = report.totals;
  assert.equal(t.changed + t.unchanged + t.errors, t.objects);
  assert.match(renderReportMarkdown(report), /4 object\(s\): 1 written to, 2 unchanged, 1 failed; 2 of them asked to be requeued after a delay\. 2 write\(s\)\./);
  assert.match(renderReportMarkdown({ ...report, dryRun: true }), /4 object\(s\): 1 with writes planned, 2 unchanged, 1 failed; 2 of them asked to be requeued after a delay\. 2 write\(s\) planned\./);
});
