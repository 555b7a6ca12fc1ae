import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatEntry, labelOther, RunSummary, SUMMARY_KEY_WIDTH } from '../../../src/cli/cli.ts';
import { WriteIndex } from '../../../src/core/journal/writeIndex.ts';
import { formatLogLine, JOURNALED_FIELD, LOG_CONTINUATION } from '../../../src/core/log.ts';
import type { JournalEntry } from '../../../src/core/journal/journal.ts';

const at = Date.UTC(2026, 0, 1, 12, 0, 0);
const entry = (e: object) => ({ seq: 1, at, controller: 'lab', ...e }) as JournalEntry;

test('text output: a failed reconcile shows the failure count and when it is retried', () => {
  const line = formatEntry(entry({ kind: 'reconcileEnd', key: 'ns/a', durationMs: 4, outcome: { kind: 'error', message: 'boom', retryAt: at + 2500, failures: 3 } }), false);
  assert.equal(line, '12:00:00.000 ■ ns/a ✗ error (failure 3), retry in 2.5 s: boom [4 ms]');
  const terminal = formatEntry(entry({ kind: 'reconcileEnd', key: 'ns/a', durationMs: 1, outcome: { kind: 'terminal', message: 'bad spec' } }), false);
  assert.match(terminal!, /terminal error, not retried until an event queues the key again: bad spec/);
});

test("text output: a Go controller's error says the retry delay its rate limiter gave, not the time left when the entry is printed", () => {
  // The entry was printed 60 ms after the backoff began: retryAt − now would read 0.2 s for the user's 250 ms.
  const line = formatEntry(entry({ kind: 'reconcileEnd', key: 'ns/a', durationMs: 4, outcome: { kind: 'error', message: 'boom', retryAt: at + 190, failures: 1, retryDelayMs: 250 } }), false);
  assert.equal(line, '12:00:00.000 ■ ns/a ✗ error (failure 1), retry in 250 ms: boom [4 ms]');
  const long = formatEntry(entry({ kind: 'reconcileEnd', key: 'ns/a', durationMs: 4, outcome: { kind: 'error', message: 'boom', retryAt: at + 3900, failures: 5, retryDelayMs: 4000 } }), false);
  assert.equal(long, '12:00:00.000 ■ ns/a ✗ error (failure 5), retry in 4.0 s: boom [4 ms]');
});

test('text output: a multi-line error stays one entry (continuation lines indented under it)', () => {
  const line = formatEntry(entry({ kind: 'reconcileEnd', key: 'ns/a', durationMs: 4, outcome: { kind: 'error', message: 'exit 1\nstderr: line one\nline two', retryAt: at, failures: 1 } }), false)!;
  const lines = line.split('\n');
  assert.equal(lines.length, 3);
  assert.ok(lines.slice(1).every((l) => /^\s+│ /.test(l)), line);
  // The log line form keeps it on one line.
  const log = formatLogLine('info', 'Reconciler error', { key: 'ns/a', error: 'exit 1\nstderr: x' });
  assert.equal(log.split('\n').length, 1);
  assert.equal(log, 'INFO Reconciler error key=ns/a error="exit 1\\nstderr: x"');
  // The journaled marker is for sinks, not shown.
  assert.equal(formatLogLine('warn', 'Hot loop', { key: 'ns/a', code: 'hotLoop', [JOURNALED_FIELD]: true }), 'WARN Hot loop key=ns/a code=hotLoop');
});

test('log line: a multi-line message (a module\'s compile errors) is written as real lines indented under the entry, never as escaped \\n', () => {
  const msg = 'the module\'s predicates and options could not be read: cannot compile /w/bad.ts:\nbad.ts:2:20: Unexpected ";"\n    2 | const x: number = ;\nbad.ts:5:9: Unexpected ")"\n';
  const text = formatLogLine('warn', msg, { code: 'x' });
  assert.doesNotMatch(text, /\\n/);
  assert.deepEqual(text.split('\n'), [
    'WARN the module\'s predicates and options could not be read: cannot compile /w/bad.ts: code=x',
    `${LOG_CONTINUATION}bad.ts:2:20: Unexpected ";"`,
    `${LOG_CONTINUATION}    2 | const x: number = ;`,
    `${LOG_CONTINUATION}bad.ts:5:9: Unexpected ")"`,
  ]);
  assert.equal(formatLogLine('warn', 'one line', {}), 'WARN one line');
  assert.equal(formatLogLine('error', 'a\r\nb', {}), `ERROR a\n${LOG_CONTINUATION}b`);
});

test('run summary: a key longer than the key column is cut to its start and end; the error line and rows() keep it whole', () => {
  const long = `team-a/${'policy-'.repeat(30)}final`;
  const s = new RunSummary();
  s.add(entry({ kind: 'reconcileEnd', key: long, durationMs: 1, outcome: { kind: 'error', message: 'boom' } }));
  s.add(entry({ kind: 'reconcileEnd', key: 'ns/short', durationMs: 1, outcome: { kind: 'success' } }));
  const lines = s.render().split('\n');
  const row = lines.find((l) => l.includes('…'))!;
  assert.ok(row, lines.join('\n'));
  const cell = row.trim().split(/\s{2,}/)[0]!;
  assert.equal(cell.length, SUMMARY_KEY_WIDTH);
  assert.ok(cell.startsWith('team-a/policy-'), cell);
  assert.ok(cell.endsWith('policy-final'), cell);
  // Every row's columns start where the header's do: the key column is exactly SUMMARY_KEY_WIDTH wide.
  const header = lines.find((l) => l.trim().startsWith('key '))!;
  assert.equal(header.indexOf('reconciles'), 2 + SUMMARY_KEY_WIDTH + 2);
  assert.ok(lines.every((l) => l.length < 200 || l.includes('ended in error')), lines.join('\n'));
  assert.match(lines.find((l) => l.includes('ns/short'))!, /^ {2}ns\/short {2,}1 {2,}/);
  assert.equal(lines.at(-1), `1 key(s) ended in error: ${long}`);
  assert.ok(s.rows().some((r) => r.key === long));
});

test('text output: the reconcile counter is an ordinal of the key, and a retry names the failure it follows', () => {
  const line = formatEntry(entry({ kind: 'reconcileStart', key: 'ns/a', attempt: 3, via: 'worker', triggers: [{ kind: 'backoff', attempt: 2, delayMs: 10, at }] }), false);
  assert.equal(line, '12:00:00.000 ▶ ns/a reconcile, 3rd of this key (retry after failure 2)');
  assert.doesNotMatch(line!, /#3/);
  assert.match(formatEntry(entry({ kind: 'reconcileStart', key: 'ns/a', attempt: 11, via: 'worker', triggers: [] }), false)!, /11th of this key/);
});

test('text output: each trigger of a reconcile names the object whose event queued the key and its resourceVersion (a mapped watch, an owned child, the key itself)', () => {
  const line = formatEntry(
    entry({
      kind: 'reconcileStart',
      key: 'brew/k1',
      attempt: 2,
      via: 'worker',
      triggers: [
        { kind: 'informer', event: 'update', resource: 'kettles.v1.brew.example.io', objectKey: 'brew/k1', resourceVersion: '41', at },
        { kind: 'watch', event: 'update', resource: 'configmaps.v1', objectKey: 'brew/top-shelf', objectKind: 'ConfigMap', resourceVersion: '40', at },
        { kind: 'owned', event: 'delete', resource: 'deployments.v1.apps', child: 'brew/kettle-k1', childKind: 'Deployment', resourceVersion: '39', at },
        { kind: 'manual', action: 'enqueue', note: 'added outside an informer event (a channel source or the program itself)', at },
      ],
    }),
    false,
  );
  assert.equal(
    line,
    '12:00:00.000 ▶ brew/k1 reconcile, 2nd of this key (update rv 41, update of watched ConfigMap brew/top-shelf rv 40, delete of owned Deployment brew/kettle-k1 rv 39, added outside an informer event (a channel source or the program itself))',
  );
  const initial = formatEntry(entry({ kind: 'reconcileStart', key: 'k1', attempt: 1, via: 'step', triggers: [{ kind: 'manual', action: 'step', at }, { kind: 'informer', event: 'add', resource: 'stoves.v1.brew.example.io', objectKey: 'k1', resourceVersion: '7', initial: true, at }, { kind: 'watch', event: 'add', resource: 'secrets.v1', objectKey: 'brew/s', at }] }), false);
  assert.equal(initial, '12:00:00.000 ▶ k1 reconcile, 1st of this key (step, initial list rv 7, add of watched secrets brew/s)');
});

test('text output: a write the server accepted without change says so; a requeue-after and a retry read in seconds from one second on; a terminal error is not prefixed twice', () => {
  const w = (more: object) => formatEntry(entry({ kind: 'write', key: 'ns/k', verb: 'update', resource: 'deployments.v1.apps', gvr: { group: 'apps', version: 'v1', resource: 'deployments' }, objectKey: 'ns/k-web', dryRun: false, resourceVersionBefore: '323', resourceVersionAfter: '323', ...more }), false);
  assert.equal(w({}), '12:00:00.000   ✎ update deployments.apps ns/k-web rv 323 → 323 (no change)');
  assert.equal(w({ resourceVersionAfter: '324' }), '12:00:00.000   ✎ update deployments.apps ns/k-web rv 323 → 324');
  assert.equal(w({ dryRun: true }), '12:00:00.000   ✎ update deployments.apps ns/k-web rv 323 → 323 (dry-run)', 'a dry run never changes the resourceVersion');
  assert.equal(w({ deleted: true }), '12:00:00.000   ✎ update deployments.apps ns/k-web rv 323 → deleted');
  assert.equal(w({ subresource: 'status', resourceVersionAfter: '324' }), '12:00:00.000   ✎ update deployments.apps ns/k-web (status) rv 323 → 324', 'the subresource in parentheses after the object, as in the Event Log and the checks');
  assert.equal(
    formatEntry(entry({ kind: 'write', key: 'acme', verb: 'update', resource: 'tenants.v1.infra.example.dev', gvr: { group: 'infra.example.dev', version: 'v1', resource: 'tenants' }, objectKey: 'acme', subresource: 'status', dryRun: false, resourceVersionBefore: '5', resourceVersionAfter: '6' }), false),
    '12:00:00.000   ✎ update tenants.infra.example.dev acme (status) rv 5 → 6',
    'a cluster-scoped object\'s subresource never reads as a namespaced name ("acme/status")',
  );
  assert.equal(
    w({ resourceVersionAfter: '324', warnings: ['unknown field "spec.replicsa"', 'unknown field "spec.imag"'] }),
    '12:00:00.000   ✎ update deployments.apps ns/k-web rv 323 → 324 ⚠ server warnings: unknown field "spec.replicsa"; unknown field "spec.imag"',
    'the fields the server dropped are named after the write',
  );
  const end = (outcome: object) => formatEntry(entry({ kind: 'reconcileEnd', key: 'ns/k', durationMs: 3, outcome }), false);
  assert.equal(end({ kind: 'requeueAfter', afterMs: 45_000 }), '12:00:00.000 ■ ns/k requeue after 45 s [3 ms]');
  assert.equal(end({ kind: 'requeueAfter', afterMs: 250 }), '12:00:00.000 ■ ns/k requeue after 250 ms [3 ms]');
  assert.equal(end({ kind: 'error', message: 'boom', failures: 12, retryAt: at + 10_240, retryDelayMs: 10_240 }), '12:00:00.000 ■ ns/k ✗ error (failure 12), retry in 10 s: boom [3 ms]');
  assert.equal(end({ kind: 'error', message: 'not ready', failures: 1, retryAt: at + 5, retryDelayMs: 5, ignored: 'RequeueAfter 30 s' }), '12:00:00.000 ■ ns/k ✗ error (failure 1), retry in 5 ms (its RequeueAfter 30 s is ignored: with an error, controller-runtime drops the Result, retried with backoff): not ready [3 ms]');
  assert.equal(end({ kind: 'terminal', message: 'bad spec', ignored: 'Requeue: true' }), '12:00:00.000 ■ ns/k ✗ terminal error, not retried until an event queues the key again (its Requeue: true is ignored: with an error, controller-runtime drops the Result, not requeued): bad spec [3 ms]');
});

test("text output: a trigger caused by a write the command printed names whose write it was (this key's own, another key's, another controller's); a write that changed nothing is no one's cause", () => {
  const writes = new WriteIndex();
  const write = (controller: string, key: string, objectKey: string, before: string, after: string) =>
    formatEntry(entry({ kind: 'write', controller, key, verb: 'update', resource: 'deployments.v1.apps', gvr: { group: 'apps', version: 'v1', resource: 'deployments' }, objectKey, dryRun: false, resourceVersionBefore: before, resourceVersionAfter: after }), false, writes);
  const start = (controller: string, key: string, triggers: object[]) => formatEntry(entry({ kind: 'reconcileStart', controller, key, attempt: 2, via: 'worker', triggers }), false, writes)!;
  const owned = (child: string, rv: string) => ({ kind: 'owned', event: 'update', resource: 'deployments.v1.apps', child, childKind: 'Deployment', resourceVersion: rv, at });
  write('kettle', 'brew/k1', 'brew/kettle-k1', '10', '11');
  write('kettle', 'brew/k1', 'brew/kettle-k2', '12', '13');
  write('stove', 'main', 'brew/kettle-k3', '14', '15');
  write('kettle', 'brew/k4', 'brew/kettle-k4', '16', '16'); // accepted, nothing changed: no event follows it
  assert.match(start('kettle', 'brew/k1', [owned('brew/kettle-k1', '11')]), /\(update of owned Deployment brew\/kettle-k1 rv 11 \(this key's own write\)\)$/);
  assert.match(start('kettle', 'brew/k2', [owned('brew/kettle-k2', '13')]), /rv 13 \(a write of the reconcile of brew\/k1\)\)$/);
  assert.match(start('kettle', 'brew/k3', [owned('brew/kettle-k3', '15')]), /rv 15 \(a write of stove's reconcile of main\)\)$/);
  assert.match(start('kettle', 'brew/k4', [owned('brew/kettle-k4', '16')]), /rv 16\)$/);
  assert.match(start('kettle', 'brew/k1', [owned('brew/kettle-k1', '17')]), /rv 17\)$/, 'another resourceVersion: someone else\'s change');
  // The object's own update after its status write (no generation-changed predicate): the classic second reconcile.
  formatEntry(entry({ kind: 'write', controller: 'kettle', key: 'brew/k5', verb: 'update', subresource: 'status', resource: 'kettles.v1.brew.example.io', gvr: { group: 'brew.example.io', version: 'v1', resource: 'kettles' }, objectKey: 'brew/k5', dryRun: false, resourceVersionBefore: '20', resourceVersionAfter: '21' }), false, writes);
  assert.match(start('kettle', 'brew/k5', [{ kind: 'informer', event: 'update', resource: 'kettles.v1.brew.example.io', objectKey: 'brew/k5', resourceVersion: '21', at }]), /\(update rv 21 \(this key's own write\)\)$/);
});

test('text output: a requeue-after or a backoff retry that another cause cut short (the reconcile started before it was due) says so', () => {
  const start = (triggers: object[]) => formatEntry(entry({ kind: 'reconcileStart', key: 'ns/k', attempt: 2, via: 'worker', triggers }), false)!;
  assert.match(start([{ kind: 'requeueAfter', afterMs: 45_000, at: at + 40_000 }, { kind: 'informer', event: 'update', resource: 'kettles.v1.x', objectKey: 'ns/k', resourceVersion: '7', at }]), /\(requeue-after, not yet due \(in 40 s\): another cause ran it first, update rv 7\)$/);
  assert.match(start([{ kind: 'backoff', attempt: 3, delayMs: 20, at: at - 1 }]), /\(retry after failure 3\)$/, 'a due retry');
  assert.match(start([{ kind: 'requeueAfter', afterMs: 45_000, at }]), /\(requeue-after\)$/, 'due right now');
});

test('run summary: per-key reconciles, writes, errors, warnings; keys whose last reconcile failed', () => {
  const s = new RunSummary();
  s.add(entry({ kind: 'reconcileEnd', key: 'ns/a', durationMs: 1, outcome: { kind: 'success' } }));
  s.add(entry({ kind: 'write', key: 'ns/a', verb: 'create', resource: 'configmaps.v1', objectKey: 'ns/a-config', dryRun: false }));
  s.add(entry({ kind: 'write', key: 'ns/a', verb: 'patch', resource: 'configmaps.v1', objectKey: 'ns/a-config', dryRun: false, error: '409' }));
  s.add(entry({ kind: 'reconcileEnd', key: 'ns/b', durationMs: 1, outcome: { kind: 'success' } }));
  s.add(entry({ kind: 'reconcileEnd', key: 'ns/b', durationMs: 1, outcome: { kind: 'error', message: 'boom\nmore' } }));
  s.add(entry({ kind: 'warning', key: 'ns/b', code: 'hotLoop', message: 'hot' }));
  s.add(entry({ kind: 'reconcileEnd', key: 'ns/c', durationMs: 1, outcome: { kind: 'error', message: 'once' } }));
  s.add(entry({ kind: 'reconcileEnd', key: 'ns/c', durationMs: 1, outcome: { kind: 'success' } }));
  assert.deepEqual(s.rows().map((r) => [r.key, r.reconciles, r.writes, r.errors, r.warnings]), [['ns/a', 1, 1, 0, 0], ['ns/b', 2, 0, 1, 1], ['ns/c', 2, 0, 1, 0]]);
  assert.deepEqual(s.failed().map((r) => r.key), ['ns/b'], 'c recovered; b ended in error');
  const text = s.render();
  assert.match(text, /^Summary: 3 key\(s\), 5 reconcile\(s\), 1 write\(s\), 2 error\(s\), 1 warning\(s\)/);
  assert.match(text, /ns\/b\s+2\s+0\s+1\s+1\s+error: boom\n/);
  assert.match(text, /1 key\(s\) ended in error: ns\/b$/);
  // A last reconcile cancelled by the stop is said, with the outcome before it.
  s.add(entry({ kind: 'reconcileEnd', key: 'ns/a', durationMs: 1, outcome: { kind: 'cancelled', message: 'controller stopped' } }));
  s.add(entry({ kind: 'reconcileEnd', key: 'ns/d', durationMs: 1, outcome: { kind: 'cancelled', message: 'controller stopped' } }));
  assert.match(s.render(), /ns\/a\s+2\s+1\s+0\s+0\s+cancelled by the stop \(before: done\)\n/);
  assert.match(s.render(), /ns\/d\s+1\s+0\s+0\s+0\s+cancelled by the stop\n/);
});

test('run of a Go program with several controllers: the other controllers\' lines and summary rows are labelled with their name', () => {
  const s = new RunSummary('harbor-keeper');
  const mine = entry({ kind: 'reconcileEnd', key: 'rotterdam', controller: 'harbor-keeper', durationMs: 1, outcome: { kind: 'success' } });
  const other = entry({ kind: 'reconcileEnd', key: 'shop/web', controller: 'deployment', durationMs: 1, outcome: { kind: 'error', message: 'boom' } });
  s.add(mine);
  s.add(other);
  s.add(entry({ kind: 'reconcileEnd', key: 'rotterdam', controller: 'deployment', durationMs: 1, outcome: { kind: 'success' } }));
  assert.deepEqual(s.rows().map((r) => [r.key, r.controller, r.reconciles]), [['rotterdam', 'deployment', 1], ['shop/web', 'deployment', 1], ['rotterdam', undefined, 1]]);
  assert.match(s.render(), /\n {2}\[deployment\] rotterdam +1 .*\n {2}\[deployment\] shop\/web +1 .*\n {2}rotterdam +1 /);
  assert.match(s.render(), /1 key\(s\) ended in error: \[deployment\] shop\/web$/);
  // --json: keys as the controllers name them (a script can use them), the controller apart; never the text's label.
  const json = JSON.parse(JSON.stringify(s.json())) as { keys: { key: string; controller?: string }[]; failed: unknown[]; failedOther?: unknown[] };
  assert.deepEqual(json.keys.map((r) => [r.key, r.controller]), [['rotterdam', 'deployment'], ['shop/web', 'deployment'], ['rotterdam', undefined]]);
  assert.deepEqual([json.failed, json.failedOther], [[], [{ key: 'shop/web', controller: 'deployment' }]]);
  s.add(entry({ kind: 'reconcileEnd', key: 'amsterdam', controller: 'harbor-keeper', durationMs: 1, outcome: { kind: 'error', message: 'boom' } }));
  assert.deepEqual([s.json().failed, s.json().failedOther], [['amsterdam'], [{ key: 'shop/web', controller: 'deployment' }]], "the followed controller's failed keys stay plain texts, one type per list");
  assert.equal('failedOther' in new RunSummary('x').json(), false, 'no failedOther without another controller\'s failure');
  assert.equal(labelOther('12:00 ■ rotterdam done', mine, 'harbor-keeper'), '12:00 ■ rotterdam done');
  assert.equal(labelOther('12:00 ■ shop/web ✗ error', other, 'harbor-keeper'), '[deployment] 12:00 ■ shop/web ✗ error');
});

test("run of a Go program: a write no reconcile made (a Runnable's, an unwrapped controller's) is labelled, not counted as a key of the followed controller", () => {
  const s = new RunSummary('secret');
  const outside = { seq: 1, at, kind: 'write', key: 'shop/heartbeat', verb: 'create', resource: 'configmaps.v1', objectKey: 'shop/heartbeat', dryRun: false } as JournalEntry;
  const inside = entry({ kind: 'write', controller: 'secret', key: 'shop/creds', verb: 'update', resource: 'secrets.v1', objectKey: 'shop/creds', dryRun: false });
  s.add(outside);
  s.add(inside);
  s.add(entry({ kind: 'reconcileEnd', key: 'shop/creds', controller: 'secret', durationMs: 1, outcome: { kind: 'success' } }));
  assert.deepEqual(s.rows().map((r) => [r.key, r.outsideReconcile, r.reconciles, r.writes]), [['shop/heartbeat', true, 0, 1], ['shop/creds', undefined, 1, 1]]);
  assert.match(s.render(), /\n {2}\[outside a reconcile\] shop\/heartbeat +0 +1 /);
  assert.deepEqual(s.json().keys.map((r) => [r.key, r.outsideReconcile]), [['shop/heartbeat', true], ['shop/creds', undefined]]);
  assert.equal(labelOther('12:00   ✎ create configmaps shop/heartbeat', outside, 'secret'), '[outside a reconcile] 12:00   ✎ create configmaps shop/heartbeat');
  assert.equal(labelOther('12:00   ✎ update secrets shop/creds', inside, 'secret'), '12:00   ✎ update secrets shop/creds');
});

test('text output: a write with neither resourceVersion known (a Go Delete of an object built by name) has no "rv — → —"; one with either keeps it', () => {
  const write = (more: object) => formatEntry(entry({ kind: 'write', key: 'h1-shop/open', verb: 'delete', resource: 'configmaps.v1', gvr: { group: '', version: 'v1', resource: 'configmaps' }, objectKey: 'h1-external/h1-shop.open', dryRun: false, ...more }), false);
  assert.equal(write({}), '12:00:00.000   ✎ delete configmaps h1-external/h1-shop.open');
  // A delete of an object gone already is what an idempotent cleanup expects (client.IgnoreNotFound): not FAILED.
  assert.equal(write({ error: 'configmaps "h1-shop.open" not found' }), '12:00:00.000   ✎ delete configmaps h1-external/h1-shop.open not found (already gone): configmaps "h1-shop.open" not found');
  assert.equal(write({ error: 'configmaps "h1-shop.open" is forbidden: User "x" cannot delete resource' }), '12:00:00.000   ✎ delete configmaps h1-external/h1-shop.open FAILED configmaps "h1-shop.open" is forbidden: User "x" cannot delete resource');
  assert.equal(write({ verb: 'update', error: 'configmaps "h1-shop.open" not found' }), '12:00:00.000   ✎ update configmaps h1-external/h1-shop.open FAILED configmaps "h1-shop.open" not found');
  assert.equal(write({ resourceVersionBefore: '41' }), '12:00:00.000   ✎ delete configmaps h1-external/h1-shop.open rv 41 → —');
  assert.equal(write({ verb: 'create', resourceVersionAfter: '42' }), '12:00:00.000   ✎ create configmaps h1-external/h1-shop.open rv — → 42');
});

test("run summary: the server's warnings about a key's writes (an unknown field it dropped) count in its warnings column", () => {
  const s = new RunSummary('order');
  const write = (more: object) => entry({ kind: 'write', controller: 'order', key: 'shop/o1', verb: 'update', resource: 'orders.v1.shop.example.io', gvr: { group: 'shop.example.io', version: 'v1', resource: 'orders' }, objectKey: 'shop/o1', subresource: 'status', dryRun: false, ...more });
  s.add(write({ warnings: ['unknown field "status.phase"'] }));
  s.add(write({ warnings: ['unknown field "status.phase"'] }));
  s.add(write({}));
  const [row] = s.rows();
  assert.deepEqual([row!.writes, row!.warnings], [3, 2]);
  assert.match(s.render(), /^Summary: 1 key\(s\), 0 reconcile\(s\), 3 write\(s\), 0 error\(s\), 2 warning\(s\)/);
});
