import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { COMMAND_OPS, PROTOCOL, ProtocolError, TransitionFrames, checkFields, encode, parseFromGo, type QueueMessage } from '../../../src/core/bridge/protocol.ts';
import { LineDecoder } from '../../../src/core/bridge/framing.ts';

const root = resolve(import.meta.dirname, '../../..');

/** protocol.json without its documentation keys ("$…"). */
function strip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strip);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([k]) => !k.startsWith('$')).map(([k, x]) => [k, strip(x)]));
  }
  return v;
}

test('the descriptor is bridge/protocol.json: same version, env, types and messages, field by field', () => {
  const json = strip(JSON.parse(readFileSync(resolve(root, 'bridge/protocol.json'), 'utf8'))) as Record<string, unknown>;
  assert.equal(PROTOCOL.version, json.version);
  assert.deepEqual(PROTOCOL.transitions, json.transitions, 'transition codes differ');
  assert.deepEqual(PROTOCOL.plainCause, json.plainCause, 'the plain cause differs');
  assert.deepEqual(PROTOCOL.env, json.env);
  assert.deepEqual(PROTOCOL.scratch, json.scratch, 'the scratch copies\' namespace prefix and label differ from core/checks/scratch.ts');
  // The envelope (the "type" field naming each message) is in protocol.json since the Go side wrote it down.
  if (json.envelope !== undefined) assert.deepEqual(PROTOCOL.envelope, json.envelope);
  assert.deepEqual(PROTOCOL.types, json.types, 'types differ: update src/core/bridge/protocol.ts to match bridge/protocol.json');
  assert.deepEqual(PROTOCOL.messages, json.messages, 'messages differ: update src/core/bridge/protocol.ts to match bridge/protocol.json');
  const ops = (JSON.parse(readFileSync(resolve(root, 'bridge/protocol.json'), 'utf8')) as { messages: { command: { $op: string } } }).messages.command.$op.split(' | ');
  assert.deepEqual([...COMMAND_OPS], ops, 'command ops differ from protocol.json\'s command $op');
});

test('a valid message of every kind the Go side sends parses', () => {
  const lines = [
    { type: 'hello', protocol: 2, token: 't', pid: 42, program: './cmd', goVersion: 'go1.26', controllerRuntime: 'v0.25.3', instance: 'i1' },
    { type: 'controller', name: 'widget', group: 'lab.reconcile.dev', priorityQueue: true, paused: true },
    { type: 'queue', controller: 'widget', key: 'ns/a', transition: 'added', priority: -100, causes: [{ kind: 'informer', event: 'add', initial: true, at: 1 }], at: 2 },
    { type: 'transitions', controller: 'widget', keys: [[1, 'ns/a']], t0: 2, items: [[0, 1, 0, -100, { causes: [{ kind: 'informer', at: 1 }] }], [4, 1, 1]] },
    { type: 'reconcileStart', controller: 'widget', key: 'ns/a', reconcileID: 'r', triggers: [], dryRun: false, at: 3 },
    { type: 'reconcileEnd', controller: 'widget', key: 'ns/a', reconcileID: 'r', durationMs: 4, result: { requeueAfterMs: 10 }, dryRun: false, at: 5 },
    { type: 'write', write: { verb: 'create', group: '', version: 'v1', resource: 'configmaps', name: 'c', dryRun: true, after: {} }, at: 6 },
    { type: 'ping', at: 7 },
    { type: 'reply', id: 1, ok: true, reconcile: { controller: 'w', key: 'ns/a', reconcileID: 'r', durationMs: 1, dryRun: true, at: 8 }, writes: [] },
  ];
  for (const l of lines) assert.equal(parseFromGo(JSON.stringify(l)).type, l.type);
  assert.equal(parseFromGo('{"type":"ping","at":1,"future":"ignored"}').type, 'ping', 'unknown fields are ignored (additive growth)');
});

test('a line that is not JSON is refused without the value of a token it carries (V8 quotes the text around the error)', () => {
  const token = '5ec4e7-0123456789abcdef0123456789abcdef';
  const lines = [
    `{"type":"hello","protocol":3,"token":"${token}","pid":x}`, // V8: Unexpected token 'x', ..."…" is not valid JSON
    `{"token":"${token}"x}`,
    `{"token" : "${token}`, // cut off inside the token
    `{"token":"${token.slice(0, 6)}\\"${token.slice(6)}",}`,
    `x{"token":"${token}"}`,
  ];
  for (const line of lines) {
    assert.throws(() => parseFromGo(line), (e: unknown) => {
      assert.ok(e instanceof ProtocolError);
      assert.match(e.message, /^not JSON: .*line starts/);
      assert.ok(!e.message.includes(token.slice(0, 6)) && !e.message.includes(token.slice(-6)), `no part of the token: ${e.message}`);
      return true;
    });
  }
  // Other lines keep their start, for telling what dialled.
  assert.throws(() => parseFromGo('GET / HTTP/1.1'), /line starts "GET \/ HTTP\/1.1"/);
});

test('bad input is a ProtocolError that says what is wrong, never a crash', () => {
  const cases: Array<[string, RegExp]> = [
    ['{nope', /not JSON/],
    ['[1,2]', /expected a JSON object, got array/],
    ['{"at":1}', /needs a string "type" field/],
    ['{"type":"welcome","protocol":1,"paused":true}', /unknown message type "welcome"/],
    ['{"type":"sing","at":1}', /unknown message type "sing"/],
    ['{"type":"ping"}', /invalid ping message: ping\.at: missing \(expected int\)/],
    ['{"type":"ping","at":1.5}', /ping\.at: expected int, got non-integer number/],
    ['{"type":"queue","controller":"c","key":"k","transition":"added","at":1,"causes":[{"kind":"informer","at":"x"}]}', /queue\.causes\[0\]\.at: expected int, got string/],
    ['{"type":"reply","id":1,"ok":"yes"}', /reply\.ok: expected bool, got string/],
    ['{"type":"transitions","controller":"c","t0":1,"items":{}}', /transitions\.items: expected any\[\], got object/],
    ['{"type":"write","write":{"verb":"create"},"at":1}', /write\.write\.group: missing/],
  ];
  for (const [line, re] of cases) {
    assert.throws(() => parseFromGo(line), (e: unknown) => e instanceof ProtocolError && re.test(e.message), line);
  }
});

test('checkFields validates editor messages too, and encode writes one line', () => {
  assert.equal(checkFields('command', { id: 1, op: 'step', controller: 'c', key: 'ns/a' }), undefined);
  assert.match(checkFields('command', { id: 1, op: 'step' }) ?? '', /command\.controller: missing/);
  const line = encode({ type: 'welcome', protocol: 1, paused: true });
  assert.equal(line, '{"type":"welcome","protocol":1,"paused":true}\n');
  assert.equal(line.indexOf('\n'), line.length - 1);
});

test('a transitions frame expands to its queue messages in order; bad items are skipped with a problem each', () => {
  const f = new TransitionFrames();
  const cause = { kind: 'backoff', failures: 2, delayMs: 10, at: 995 };
  const first = f.expand({
    type: 'transitions', controller: 'w', keys: [[1, 'ns/a'], [2, 'cluster-wide']], t0: 1000,
    items: [[0, 1, 0, 3], [6, 2, -5, 0, { dueAt: 1005, delayMs: 10, failures: 2, causes: [cause] }], [4, 1, 7], [7, 0, 9], [5, 2, 9, null], [0, 2, 12, null, { plainCause: true }]],
  });
  assert.deepEqual(first.problems, []);
  const want: QueueMessage[] = [
    { type: 'queue', controller: 'w', key: 'ns/a', transition: 'added', priority: 3, at: 1000 },
    { type: 'queue', controller: 'w', key: 'cluster-wide', transition: 'backoff', priority: 0, dueAt: 1005, delayMs: 10, failures: 2, causes: [cause], at: 995 },
    { type: 'queue', controller: 'w', key: 'ns/a', transition: 'done', at: 1007 },
    { type: 'queue', controller: 'w', key: '', transition: 'shutdown', at: 1009 },
    { type: 'queue', controller: 'w', key: 'cluster-wide', transition: 'forgotten', at: 1009 },
    {
      type: 'queue', controller: 'w', key: 'cluster-wide', transition: 'added', at: 1012,
      causes: [{ kind: 'watch', note: 'added outside an informer event (a channel source or the program itself)', at: 1012 }],
    },
  ];
  assert.deepEqual(first.messages, want);
  // Later frames use the ids; keysReset forgets them.
  assert.deepEqual(f.expand({ type: 'transitions', controller: 'w', t0: 2000, items: [[3, 2, 0, 1]] }).messages, [{ type: 'queue', controller: 'w', key: 'cluster-wide', transition: 'processing', priority: 1, at: 2000 }]);
  const bad = f.expand({
    type: 'transitions', controller: 'w', keysReset: true, keys: [[0, 'zero'], [3, 'ns/c']], t0: 1,
    items: [[0, 2, 0], [9, 3, 0], 'x', [0, 3, 0.5], [0, 3, 0, 'high'], [0, 3, 0, 1, { causes: [{ kind: 'watch' }] }], [2, 3, 4, 0]],
  });
  assert.equal(bad.problems.length, 7);
  assert.match(bad.problems[0]!, /keys\[0\]: expected \[id ≥ 1, key string\]/);
  assert.match(bad.problems[1]!, /items\[0\]: key id 2 was never defined/, 'keysReset forgot id 2');
  assert.match(bad.problems[2]!, /items\[1\]: transition must be an int below 8/);
  assert.match(bad.problems[3]!, /items\[2\]: expected \[transition, keyId, dt, priority\?, extra\?\]/);
  assert.match(bad.problems[4]!, /items\[3\]: keyId and dt must be ints/);
  assert.match(bad.problems[5]!, /items\[4\]: priority must be an int or null/);
  assert.match(bad.problems[6]!, /items\[5\]\.extra\.causes\[0\]\.at: missing/);
  assert.deepEqual(bad.messages, [{ type: 'queue', controller: 'w', key: 'ns/c', transition: 'ready', priority: 0, at: 5 }], 'the good item still arrives');
});

test("keys escaped by the Go side's hand-written frame encoder decode to the intended strings (bridge/testdata/tricky-keys.ndjson)", () => {
  // Written by the Go test TestTrickyKeysGolden with the encoder the bridge uses for transitions frames: quotes,
  // backslashes, control characters, <>&, non-ASCII, U+2028/2029 and invalid UTF-8 in keys, defined once and then
  // used by id. Each added item's cause note is the hex of the UTF-8 bytes the key must decode to (invalid bytes
  // as U+FFFD).
  const raw = readFileSync(resolve(root, 'bridge/testdata/tricky-keys.ndjson'));
  const lines: string[] = [];
  const d = new LineDecoder({ onLine: (l) => lines.push(l), onOversize: () => assert.fail('oversize line') });
  // Fed in small chunks, so multi-byte characters are split across pushes.
  for (let i = 0; i < raw.length; i += 7) d.push(raw.subarray(i, i + 7));
  assert.equal(lines.length, raw.toString('utf8').split('\n').length - 1);
  assert.ok(lines.length >= 18);
  const frames = new TransitionFrames();
  const added = new Set<string>();
  const again: string[] = [];
  for (const line of lines) {
    const m = parseFromGo(line);
    assert.equal(m.type, 'transitions');
    if (m.type !== 'transitions') continue;
    const { messages, problems } = frames.expand(m);
    assert.deepEqual(problems, []);
    for (const q of messages) {
      if (q.transition !== 'added') {
        again.push(q.key);
        continue;
      }
      const note = q.causes?.[0]?.note;
      assert.equal(typeof note, 'string');
      assert.equal(Buffer.from(q.key, 'utf8').toString('hex'), note, `key ${JSON.stringify(q.key)}`);
      added.add(q.key);
    }
  }
  assert.ok(added.has('ns/quote"inside') && added.has('ns/back\\slash') && added.has('ns/<script>&amp;</script>'));
  assert.ok(added.has('ns/line\u2028para\u2029end') && added.has('ns/lone\uFFFDcontinuation'));
  assert.equal(added.size, lines.length - 1, 'every key distinct');
  assert.deepEqual(new Set(again), added, 'the last frame names every key by its id only');
  assert.equal(again.length, 2 * added.size);
});
