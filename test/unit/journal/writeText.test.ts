import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeWrite } from '../../../src/core/checks/runChecks.ts';
import { renderCheckMarkdown, renderCheckText } from '../../../src/core/checks/render.ts';
import type { CheckReport, CheckWrite, Finding } from '../../../src/core/checks/types.ts';
import { createJournal } from '../../../src/core/journal/journal.ts';
import { writeText } from '../../../src/core/journal/writeText.ts';
import type { WriteRecord } from '../../../src/core/k8s/dynamicClient.ts';
import { writeLine } from '../../../src/host/webview/checksView.ts';
import { entryDetail } from '../../../src/host/webview/entryDetail.ts';
import { toLogEntryView } from '../../../src/host/webview/journalView.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';

const planters = { group: 'garden.example.org', version: 'v1', resource: 'planters' };
const statusWrite: WriteRecord = {
  verb: 'update', subresource: 'status', gvr: planters, namespace: 'yard', name: 'p1', key: 'yard/p1', dryRun: false,
  resourceVersionBefore: '41', resourceVersionAfter: '42', outcome: 'ok', startedAt: 0, durationMs: 3,
};
const listed: CheckWrite = { verb: 'update', subresource: 'status', resource: 'planters.garden.example.org', objectKey: 'yard/p1', outcome: 'ok', resourceVersionBefore: '41', resourceVersionAfter: '42', diff: '' };

test('writeText: the subresource in parentheses after the object, namespaced or cluster-scoped; none: verb, resource, key', () => {
  assert.equal(writeText(listed), 'update planters.garden.example.org yard/p1 (status)');
  assert.equal(writeText({ verb: 'update', resource: 'tenants.infra.example.dev', objectKey: 'acme', subresource: 'status' }), 'update tenants.infra.example.dev acme (status)');
  assert.equal(writeText({ verb: 'create', resource: 'configmaps', objectKey: 'yard/p1-soil' }), 'create configmaps yard/p1-soil');
});

test("the editor names a subresource write of a cluster-scoped object as the CLI does: the Event Log row, the detail's Object and its diff never read \"acme/status\" (namespace acme, name status)", () => {
  const j = createJournal({ clock: new FakeClock(), delivery: 'sync' });
  const tenants = { group: 'infra.example.dev', version: 'v1', resource: 'tenants' };
  const obj = (rv: string, phase: string) => ({ apiVersion: 'infra.example.dev/v1', kind: 'Tenant', metadata: { name: 'acme', resourceVersion: rv }, status: { phase } });
  const w = j.recordWrite({
    verb: 'update', subresource: 'status', gvr: tenants, name: 'acme', controller: 'tenants', key: 'acme', dryRun: false, resourceVersionBefore: '5', resourceVersionAfter: '6',
    detail: { before: obj('5', 'Pending'), after: obj('6', 'Ready') },
  });
  const named = writeText({ verb: 'update', resource: 'tenants.infra.example.dev', objectKey: 'acme', subresource: 'status' });
  assert.equal(toLogEntryView(w, 'tenants.infra.example.dev').summary, `${named} rv 5→6`);
  const d = entryDetail(j, w.seq, 'tenants.infra.example.dev')!;
  assert.equal(d.fields.find((f) => f.label === 'Object')?.value, 'tenants.infra.example.dev acme (status)');
  assert.match(d.diff ?? '', /^--- tenants\.infra\.example\.dev\/acme \(status\)\tbefore$/m);
  // A namespaced object's reads the same way.
  const n = j.recordWrite({ verb: 'update', subresource: 'status', gvr: planters, namespace: 'yard', name: 'p1', controller: 'planters', key: 'yard/p1', dryRun: false, resourceVersionBefore: '41', resourceVersionAfter: '42' });
  assert.equal(toLogEntryView(n, 'planters.garden.example.org').summary, `${writeText(listed)} rv 41→42`);
  assert.equal(entryDetail(j, n.seq, 'planters.garden.example.org')!.fields.find((f) => f.label === 'Object')?.value, 'planters.garden.example.org yard/p1 (status)');
});

test('a finding heading names a write exactly as the write lists below it do (results view, text and Markdown reports)', () => {
  const named = describeWrite(statusWrite);
  assert.equal(named, 'update planters.garden.example.org yard/p1 (status)');
  assert.doesNotMatch(named, /update\/status/);
  // The editor's results view.
  assert.equal(writeLine(listed), `${named} rv 41→42 ok`);
  // The CLI's reports.
  const f: Finding = {
    id: 'convergence:yard/p1:1', check: 'convergence', severity: 'error', key: 'yard/p1', title: `Never converges: 12 × ${named} in 5 s`, explanation: '…',
    perturbation: { check: 'convergence', description: 'left the controller running' }, diff: '', writes: [listed], journal: [], reproduce: 'reconcile-lab check yard/p1 --check convergence',
  };
  const r: CheckReport = {
    generatedAt: '2026-01-01T00:00:00Z', resource: 'planters.garden.example.org', reconciler: 'go run ./cmd', reconcilerKind: 'go', cluster: { name: 'reconcile-lab', local: true }, keys: ['yard/p1'], checks: ['convergence'],
    results: [{ check: 'convergence', key: 'yard/p1', status: 'failed', findings: [f], durationMs: 5000, parts: [] }], findings: [f], masked: [], notes: [],
    totals: { keys: 1, checks: 1, passed: 0, failed: 1, skipped: 0, errors: 0, findings: 1 }, durationMs: 5000, parts: [], aborted: false,
  };
  const text = renderCheckText(r);
  assert.ok(text.includes(`Never converges: 12 × ${named} in 5 s`), text);
  assert.ok(text.includes(`      write: ${named} (rv 41 → 42)`), text);
  const md = renderCheckMarkdown(r);
  assert.ok(md.includes(`- ${named}, rv 41 → 42`), md);
  assert.doesNotMatch(text + md, /update\/status/);
  assert.doesNotMatch(text, /reference runs .* ended differently/, 'nothing masked: no note');
  // Fields the two reference runs left different are said in the text report too (generated names are by design).
  const masked: CheckReport = { ...r, masked: [{ path: '*.metadata.uid', reason: 'volatile' }, { path: 'configmaps/<random #n>: metadata.name', reason: 'learned' }, { path: 'configmaps yard/p1-ledger: data.entries', reason: 'learned' }] };
  assert.match(renderCheckText(masked), /\nnote: The two reference runs \(the same spec, nothing perturbed\) ended differently in configmaps yard\/p1-ledger: data\.entries, so no check compared it\. [^\n]*races with itself/);
});

test("a check's write the server warned about (a field it dropped) shows the warning in the results view and both reports; an error without an HTTP answer has no code 0", async () => {
  const warned: CheckWrite = { ...listed, warnings: ['unknown field "status.phase"'] };
  assert.equal(writeLine(warned), 'update planters.garden.example.org yard/p1 (status) rv 41→42 ok ⚠ server warning: unknown field "status.phase"');
  const f: Finding = {
    id: 'runTwice:yard/p1:1', check: 'runTwice', severity: 'warning', key: 'yard/p1', title: 'No-op write', explanation: '…',
    perturbation: { check: 'runTwice', description: 'reconciled twice' }, diff: '', writes: [warned], journal: [], reproduce: 'reconcile-lab check yard/p1 --check runTwice',
  };
  const r: CheckReport = {
    generatedAt: '2026-01-01T00:00:00Z', resource: 'planters.garden.example.org', reconciler: 'go run ./cmd', reconcilerKind: 'go', cluster: { name: 'reconcile-lab', local: true }, keys: ['yard/p1'], checks: ['runTwice'],
    results: [{ check: 'runTwice', key: 'yard/p1', status: 'failed', findings: [f], durationMs: 5000, parts: [] }], findings: [f], masked: [], notes: [],
    totals: { keys: 1, checks: 1, passed: 0, failed: 1, skipped: 0, errors: 0, findings: 1 }, durationMs: 5000, parts: [], aborted: false,
  };
  assert.ok(renderCheckText(r).includes('      write: update planters.garden.example.org yard/p1 (status) (rv 41 → 42) ⚠ server warning: unknown field "status.phase"'), renderCheckText(r));
  assert.ok(renderCheckMarkdown(r).includes('- update planters.garden.example.org yard/p1 (status), rv 41 → 42 — ⚠ server warning: unknown field "status.phase"'), renderCheckMarkdown(r));
  const { writeErrorText } = await import('../../../src/core/k8s/dynamicClient.ts');
  assert.equal(writeErrorText({ code: 0, reason: 'Error', message: 'configmaps "o2-audit" not found' }), 'Error: configmaps "o2-audit" not found');
  assert.equal(writeErrorText({ code: 404, reason: 'NotFound', message: 'gone' }), '404 NotFound: gone');
});
