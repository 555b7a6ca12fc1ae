import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PROTOCOL, ProtocolError, checkFields, encode, parseFromGo } from '../../../src/core/bridge/protocol.ts';

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
  assert.deepEqual(PROTOCOL.env, json.env);
  // The envelope (the "type" field naming each message) is in protocol.json since the Go side wrote it down.
  if (json.envelope !== undefined) assert.deepEqual(PROTOCOL.envelope, json.envelope);
  assert.deepEqual(PROTOCOL.types, json.types, 'types differ: update src/core/bridge/protocol.ts to match bridge/protocol.json');
  assert.deepEqual(PROTOCOL.messages, json.messages, 'messages differ: update src/core/bridge/protocol.ts to match bridge/protocol.json');
});

test('a valid message of every kind the Go side sends parses', () => {
  const lines = [
    { type: 'hello', protocol: 1, token: 't', pid: 42, program: './cmd', goVersion: 'go1.26', controllerRuntime: 'v0.25.3', instance: 'i1' },
    { type: 'controller', name: 'widget', group: 'lab.reconcile.dev', priorityQueue: true, paused: true },
    { type: 'queue', controller: 'widget', key: 'ns/a', transition: 'added', priority: -100, causes: [{ kind: 'informer', event: 'add', initial: true, at: 1 }], at: 2 },
    { type: 'reconcileStart', controller: 'widget', key: 'ns/a', reconcileID: 'r', triggers: [], dryRun: false, at: 3 },
    { type: 'reconcileEnd', controller: 'widget', key: 'ns/a', reconcileID: 'r', durationMs: 4, result: { requeueAfterMs: 10 }, dryRun: false, at: 5 },
    { type: 'write', write: { verb: 'create', group: '', version: 'v1', resource: 'configmaps', name: 'c', dryRun: true, after: {} }, at: 6 },
    { type: 'ping', at: 7 },
    { type: 'reply', id: 1, ok: true, reconcile: { controller: 'w', key: 'ns/a', reconcileID: 'r', durationMs: 1, dryRun: true, at: 8 }, writes: [] },
  ];
  for (const l of lines) assert.equal(parseFromGo(JSON.stringify(l)).type, l.type);
  assert.equal(parseFromGo('{"type":"ping","at":1,"future":"ignored"}').type, 'ping', 'unknown fields are ignored (additive growth)');
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
