import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CheckReport, CheckResult, Finding } from '../../../../src/core/checks/types.ts';
import { parseChecksWebviewMessage } from '../../../../src/shared/checksProtocol.ts';
import { emptyChecksModel, reconcilerTitle, reportChecksModel, reproduceOf, runningChecksModel, writeLine } from '../../../../src/host/webview/checksView.ts';

const HOSTILE = 'evil [click](command:workbench.action.terminal.new) <img src=x onerror=alert(1)> **bold**';
const AT = Date.parse('2026-12-01T20:00:00Z');

const finding: Finding = {
  id: 'runTwice:ns/w:1',
  check: 'runTwice',
  severity: 'error',
  key: 'ns/w',
  title: 'Second reconcile created another configmaps object (generateName)',
  explanation: `The second pass created ${HOSTILE} again.`,
  perturbation: { check: 'runTwice', description: 'reconciled the same state a second time' },
  diff: '--- reference\n+++ perturbed\n@@\n-a: 1\n+a: 2\n',
  writes: [{ verb: 'create', resource: 'configmaps', objectKey: 'scratch-1/w-abcde', outcome: 'ok', resourceVersionAfter: '12', diff: '+data:\n+  x: y\n' }],
  journal: [
    { seq: 1, at: AT, kind: 'reconcileStart', key: 'ns/w', controller: 'lab', triggers: [], attempt: 2, via: 'worker' },
    { seq: 2, at: AT + 5, kind: 'write', key: 'ns/w', verb: 'create', resource: 'configmaps.v1', gvr: { group: '', version: 'v1', resource: 'configmaps' }, objectKey: 'scratch-1/w-abcde', dryRun: false, resourceVersionAfter: '12' },
  ],
  reproduce: 'reconcile-lab check ns/w --check runTwice --reconciler module:samples/buggy/generate-name.ts',
};

const results: CheckResult[] = [
  { check: 'runTwice', key: 'ns/w', status: 'failed', findings: [finding], durationMs: 1200, parts: [] },
  { check: 'crashAfterWrite', key: 'ns/w', status: 'skipped', message: 'one write: no crash point', findings: [], durationMs: 10, parts: [] },
];

const report: CheckReport = {
  generatedAt: '2026-12-01T20:00:01Z',
  resource: 'widgets.lab.reconcile.dev',
  reconciler: 'generate-name',
  reconcilerKind: 'module',
  cluster: { name: 'reconcile-lab', local: true },
  keys: ['ns/w'],
  checks: ['runTwice', 'crashAfterWrite'],
  results,
  findings: [finding],
  masked: [{ path: 'metadata.uid', reason: 'volatile' }, { path: 'configmaps/<generated #1>.data.at', reason: 'learned' }],
  notes: [`note with ${HOSTILE}`],
  totals: { keys: 1, checks: 2, passed: 0, failed: 1, skipped: 1, errors: 0, findings: 1 },
  durationMs: 1300,
  parts: [{ part: 'reference run 1', ms: 400 }],
  aborted: false,
};
const run = { keys: ['ns/w'], checks: ['runTwice', 'crashAfterWrite'] as const, reconciler: 'module reconciler samples/buggy/generate-name.ts', cluster: 'reconcile-lab (local)' };

describe('checks results view model', () => {
  it('a finished report: per check the status, per finding everything the view shows', () => {
    const m = reportChecksModel({ ...run, checks: [...run.checks] }, report, 'widgets.lab.reconcile.dev');
    assert.equal(m.phase, 'done');
    assert.equal(m.title, 'Robustness checks of ns/w · module reconciler samples/buggy/generate-name.ts · cluster reconcile-lab (local)');
    // The status line stays one line; the time per run goes below the results.
    assert.match(m.status, /^Finished in 1\.3s: 1 finding · 0 passed, 1 failed, 1 skipped, 0 could not run$/);
    assert.equal(m.timings, 'reference run 1 400ms');
    assert.deepEqual(m.results.map((r) => [r.checkTitle, r.status, r.findings.length]), [['Run twice', 'failed', 1], ['Crash after write', 'skipped', 0]]);
    // A check's time as the CLI writes delays: milliseconds below a second, never "0.0 s".
    assert.deepEqual(m.results.map((r) => r.durationText), ['1.2 s', '10 ms']);
    const f = m.results[0]!.findings[0]!;
    assert.equal(f.explanation, finding.explanation, 'text is passed through as text; the webview sets it with textContent');
    assert.equal(f.perturbation, 'reconciled the same state a second time');
    assert.deepEqual(f.writes, ['create configmaps scratch-1/w-abcde rv ∅→12 ok']);
    assert.deepEqual(f.writeDiffs, ['+data:\n+  x: y\n']);
    assert.equal(f.journal.length, 2);
    assert.match(f.journal[1]!.summary, /^create configmaps scratch-1\/w-abcde rv ∅→12/);
    // The journal names kinds in the Event Log's words; the internal names stay beside them (tooltip, Export…).
    assert.deepEqual(f.journal.map((l) => [l.kind, l.kindLabel]), [['reconcileStart', 'Reconcile started'], ['write', 'API write']]);
    assert.match(f.journal[1]!.kindTitle, /^API write: .*\n"kind": "write" in Export…/);
    assert.equal(f.reproduce, finding.reproduce);
    assert.deepEqual(m.masked, ['metadata.uid (always volatile)', 'configmaps/<generated #1>.data.at (differed between the two reference runs)']);
    assert.ok(m.canExport && m.canRerun);
    assert.equal(reproduceOf(report, finding.id), finding.reproduce);
    assert.equal(reproduceOf(report, 'nope'), undefined);
  });

  it('a finished report lists its results in the running view\'s order (convergence, reported first by the core, last)', () => {
    const conv: CheckResult = { check: 'convergence', key: 'ns/w', status: 'passed', findings: [], durationMs: 5, parts: [] };
    const m = reportChecksModel({ ...run, checks: ['runTwice', 'crashAfterWrite', 'convergence'] }, { ...report, results: [conv, ...results] }, undefined);
    assert.deepEqual(m.results.map((r) => r.checkTitle), ['Run twice', 'Crash after write', 'Convergence']);
  });

  it('a run in progress lists every (key, check): finished, running, pending', () => {
    const m = runningChecksModel({ ...run, checks: ['runTwice', 'crashAfterWrite', 'convergence'] }, [results[0]!], new Set(['ns/w|crashAfterWrite']), 'reference run 1', undefined);
    assert.equal(m.phase, 'running');
    assert.deepEqual(m.results.map((r) => r.status), ['failed', 'running', 'pending']);
    assert.equal(m.status, 'Running: 1 of 3 check(s) done, 1 finding so far · reference run 1');
    assert.equal(m.canExport, false);
    assert.equal(emptyChecksModel().phase, 'empty');
  });

  it('write lines name failures', () => {
    assert.equal(writeLine({ verb: 'delete', resource: 'configmaps', objectKey: 'a/b', outcome: 'error', error: 'not found', diff: '' }), 'delete configmaps a/b failed: not found');
  });

  it('a subresource write reads as in its API path, as finding headings name it', () => {
    assert.equal(writeLine({ verb: 'update', subresource: 'status', resource: 'planters.garden.example.org', objectKey: 'yard/p1', outcome: 'ok', resourceVersionBefore: '41', resourceVersionAfter: '42', diff: '' }), 'update planters.garden.example.org yard/p1 (status) rv 41→42 ok');
  });

  it('the title names the reconciler; a Go controller by the name its program announced', () => {
    assert.equal(reconcilerTitle({ spec: { kind: 'lab' }, flag: 'lab' }), 'lab reconciler');
    assert.equal(reconcilerTitle({ spec: { kind: 'exec', command: ['./r.sh'] }, flag: 'exec:./r.sh' }), 'exec reconciler ./r.sh');
    assert.equal(reconcilerTitle({ spec: { kind: 'module', path: 'samples/x.ts' }, flag: 'module:samples/x.ts' }), 'module reconciler samples/x.ts');
    const go = { spec: { kind: 'go' as const, command: ['go', 'run', './cmd'] }, flag: 'go:go run ./cmd' };
    assert.equal(reconcilerTitle(go, 'planter'), 'Go controller planter');
    assert.equal(reconcilerTitle(go), 'Go controller', 'no name known: still says what it is');
    const m = reportChecksModel({ ...run, checks: [...run.checks], reconciler: reconcilerTitle(go, 'planter') }, { ...report, reconcilerKind: 'go', reconciler: 'go run ./cmd' }, undefined);
    assert.equal(m.title, 'Robustness checks of ns/w · Go controller planter · cluster reconcile-lab (local)');
  });
});

describe('checks webview protocol', () => {
  it('accepts only well-formed messages and drops unknown fields', () => {
    assert.deepEqual(parseChecksWebviewMessage({ type: 'ready', version: 1, x: 1 }), { type: 'ready', version: 1 });
    assert.deepEqual(parseChecksWebviewMessage({ type: 'copy', findingId: 'a', text: 'rm -rf /' }), { type: 'copy', findingId: 'a' });
    assert.deepEqual(parseChecksWebviewMessage({ type: 'export', format: 'markdown' }), { type: 'export', format: 'markdown' });
    assert.deepEqual(parseChecksWebviewMessage({ type: 'rerun' }), { type: 'rerun' });
    assert.deepEqual(parseChecksWebviewMessage({ type: 'reveal', key: 'ns/w' }), { type: 'reveal', key: 'ns/w' });
    for (const bad of [null, 'ready', [], { type: 'export', format: 'html' }, { type: 'copy', findingId: '' }, { type: 'copy', findingId: 'x'.repeat(2000) }, { type: 'reveal' }, { type: 'eval', code: '1' }, { type: 'ready' }]) {
      assert.equal(parseChecksWebviewMessage(bad), undefined, JSON.stringify(bad));
    }
  });
});
