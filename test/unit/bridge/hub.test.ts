import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { BridgeHub } from '../../../src/core/bridge/bridgeHub.ts';
import { BridgeNotRespondingError } from '../../../src/core/bridge/connection.ts';
import { Journal } from '../../../src/core/journal/journal.ts';
import { PROTOCOL } from '../../../src/core/bridge/protocol.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { Peer, until } from './peer.ts';

async function hub(transport: 'unix' | 'tcp' = 'unix') {
  const clock = new FakeClock();
  const journal = new Journal({ clock, delivery: 'sync' });
  const h = await BridgeHub.start({ clock, journal, transport, silentAfterMs: 3000, commandTimeoutMs: 5000 });
  const env = h.env();
  return { clock, journal, h, address: env.RECONCILE_LAB_BRIDGE!, token: env.RECONCILE_LAB_BRIDGE_TOKEN! };
}

test('unix listener: socket in a fresh 0700 directory, a 64-hex-digit token in the env; dispose removes it', async () => {
  const { h, address, token } = await hub();
  assert.match(address, /^unix:\/\/\/.+\/bridge\.sock$/);
  assert.match(token, /^[0-9a-f]{64}$/);
  const dir = dirname(address.slice('unix://'.length));
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  h.dispose();
  assert.equal(existsSync(dir), false);
});

test('handshake: a wrong token or protocol version is rejected with a reason and closed; the right one is welcomed paused', async () => {
  const { h, address, token } = await hub();
  const refused: string[] = [];
  h.listener.onDidRefuse((r) => refused.push(r.reason));
  const bad = await Peer.hello(address, 'nope');
  assert.deepEqual(bad.answer, { type: 'reject', reason: 'wrong token' });
  await bad.peer.closed;
  const old = await Peer.hello(address, token, { protocol: 99 });
  assert.equal(old.answer.type, 'reject');
  assert.match(String(old.answer.reason), /protocol version 99 is not supported/);
  const notHello = await Peer.dial(address);
  notHello.send({ type: 'ping', at: 1 });
  assert.match(String((await notHello.next()).reason), /first message must be hello/);
  assert.equal(h.processes.length, 0);
  assert.equal(refused.length, 3);
  assert.ok(!refused.some((r) => r.includes(token)), 'the token never appears in a message');

  const ok = await Peer.hello(address, token);
  assert.deepEqual(ok.answer, { type: 'welcome', protocol: PROTOCOL.version, paused: true });
  await until(() => h.processes.length === 1, 'process registered');
  assert.equal(h.processes[0]!.pid, 4242);
  assert.equal(h.processes[0]!.liveness, 'connected');
  h.dispose();
  await ok.peer.closed;
});

test('tcp listener on loopback works the same', async () => {
  const { h, address, token } = await hub('tcp');
  assert.match(address, /^tcp:\/\/127\.0\.0\.1:\d+$/);
  const ok = await Peer.hello(address, token);
  assert.equal(ok.answer.type, 'welcome');
  h.dispose();
});

test('commands carry ids; a reply timeout says "not responding" and keeps the connection; silence is never death', async () => {
  const { h, clock, address, token } = await hub();
  const { peer } = await Peer.hello(address, token);
  peer.send({ type: 'controller', name: 'widget', group: 'lab.reconcile.dev', version: 'v1alpha1', kind: 'Widget', resource: 'widgets', priorityQueue: true, paused: true });
  const { process: p, controller: c } = await h.waitForController((x) => x.controller.name === 'widget');
  assert.equal(c.resourceId, 'widgets.lab.reconcile.dev');
  assert.equal(c.status().state, 'running');

  // A request nobody answers: after its timeout the one request fails, the connection stays.
  const pending = p.request({ op: 'pause', controller: 'widget' }, { timeoutMs: 5000 });
  const cmd = await peer.command('pause');
  assert.equal(typeof cmd.id, 'number');
  clock.step(5000);
  await assert.rejects(pending, (e: unknown) => e instanceof BridgeNotRespondingError && /not responding \(stopped in the debugger\?\)/.test(e.message));
  assert.notEqual(p.liveness, 'exited');

  // Silence past silentAfterMs: not responding; a debugger saying "stopped" makes it "stopped in the debugger".
  clock.step(3000);
  assert.equal(p.liveness, 'notResponding');
  p.setDebuggerStopped(true);
  assert.equal(p.liveness, 'stoppedInDebugger');
  assert.equal(c.status().state, 'running', 'a silent process is still running');
  peer.send({ type: 'ping', at: 1 });
  await until(() => p.liveness === 'connected', 'a ping makes it connected again');

  // Replies resolve by id, even out of order.
  const a = p.request({ op: 'resetBackoff', controller: 'widget', key: 'ns/a' });
  const b = p.request({ op: 'reconcileNow', controller: 'widget', key: 'ns/b' });
  const ca = await peer.command('resetBackoff');
  const cb = await peer.command('reconcileNow');
  peer.send({ type: 'reply', id: cb.id, ok: false, error: 'no such key' });
  peer.send({ type: 'reply', id: ca.id, ok: true });
  assert.deepEqual([(await a).ok, (await b).error], [true, 'no such key']);

  // Closed socket: exited; controllers stop; a pending request fails at once.
  const late = p.request({ op: 'step', controller: 'widget' });
  await peer.command('step');
  peer.close();
  await assert.rejects(late, /disconnected while "step" waited/);
  await until(() => p.liveness === 'exited', 'exited');
  assert.equal(c.status().state, 'stopped');
  h.dispose();
});

test('invalid lines and oversized lines are skipped with a clear error; the connection stays up', async () => {
  const { h, address, token } = await hub();
  const { peer } = await Peer.hello(address, token);
  await until(() => h.processes.length === 1, 'process');
  const p = h.processes[0]!;
  const errors: string[] = [];
  p.onProtocolError((e) => errors.push(e));
  peer.raw('this is not json\n');
  peer.send({ type: 'queue', controller: 'nobody', key: 'ns/a', transition: 'added', at: 1 });
  peer.send({ type: 'ping' });
  peer.send({ type: 'controller', name: 'widget', priorityQueue: false, paused: false });
  await h.waitForController();
  assert.equal(errors.length, 3);
  assert.match(errors[0]!, /not JSON/);
  assert.match(errors[1]!, /controller "nobody", which was never announced/);
  assert.match(errors[2]!, /ping\.at: missing/);
  assert.equal(p.liveness, 'connected');
  h.dispose();
});

test('a line over the size limit is skipped with an error; the next message is handled', async () => {
  const clock = new FakeClock();
  const journal = new Journal({ clock, delivery: 'sync' });
  const h = await BridgeHub.start({ clock, journal, maxLineBytes: 1024 });
  const { peer } = await Peer.hello(h.env().RECONCILE_LAB_BRIDGE!, h.env().RECONCILE_LAB_BRIDGE_TOKEN!);
  await until(() => h.processes.length === 1, 'process');
  const errors: string[] = [];
  h.processes[0]!.onProtocolError((e) => errors.push(e));
  peer.send({ type: 'ping', at: 1, padding: 'x'.repeat(5000) });
  peer.send({ type: 'controller', name: 'widget', priorityQueue: false, paused: false });
  await h.waitForController();
  assert.equal(errors.length, 1);
  assert.match(errors[0]!, /over the size limit/);
  h.dispose();
});

test('a reconnect of the same instance keeps the process and its controllers (key history survives)', async () => {
  const { h, address, token } = await hub();
  const first = await Peer.hello(address, token, { instance: 'run-7' });
  first.peer.send({ type: 'controller', name: 'widget', priorityQueue: true, paused: true });
  const { process: p, controller: c } = await h.waitForController();
  first.peer.send({ type: 'queue', controller: 'widget', key: 'ns/a', transition: 'added', causes: [{ kind: 'informer', event: 'add', objectKey: 'ns/a', at: 1 }], at: 1 });
  await until(() => c.keyState('ns/a')?.phase === 'queued', 'queued');
  first.peer.close();
  await until(() => p.liveness === 'exited', 'disconnected');
  assert.equal(c.keyState('ns/a')?.phase, 'idle', 'no queue while disconnected; history kept');

  const again = await Peer.hello(address, token, { instance: 'run-7' });
  again.peer.send({ type: 'controller', name: 'widget', priorityQueue: true, paused: true });
  await until(() => p.liveness === 'connected', 'reconnected');
  assert.equal(h.processes.length, 1);
  assert.equal(h.controllers.length, 1);
  assert.equal(h.controllers[0]!.controller, c);
  assert.equal(c.status().state, 'running');
  assert.equal(c.keyState('ns/a')?.reasons.length, 1, 'the why-queued history of before the reconnect is kept');
  h.dispose();
});

test('transitions frames: each item reaches the controller as its queue transition, in order; key ids are per connection; a bad item is skipped with an error', async () => {
  const { h, address, token } = await hub();
  const first = await Peer.hello(address, token, { instance: 'run-9' });
  first.peer.send({ type: 'controller', name: 'widget', priorityQueue: true, paused: true });
  const { process: p, controller: c } = await h.waitForController();
  const errors: string[] = [];
  p.onProtocolError((e) => errors.push(e));
  const cause = { kind: 'informer', event: 'add', objectKey: 'ns/a', at: 1000 };
  // added a (with its cause), added b, processing a, then (next frame, a by id only) done a; a bad item between.
  first.peer.send({ type: 'transitions', controller: 'widget', keys: [[1, 'ns/a'], [2, 'ns/b']], t0: 1000, items: [[0, 1, 0, 5, { causes: [cause] }], [0, 2, 1, 0], [3, 1, 2, 5]] });
  await until(() => c.keyState('ns/a')?.phase === 'processing', 'a processing');
  assert.equal(c.keyState('ns/b')?.phase, 'queued');
  assert.equal(c.keyState('ns/a')?.reasons.length, 1, "the added item's cause is a why-queued reason");
  first.peer.send({ type: 'transitions', controller: 'widget', t0: 1010, items: [[4, 7, 0], [4, 1, 0]] });
  await until(() => c.keyState('ns/a')?.phase === 'idle', 'a done');
  assert.equal(errors.length, 1);
  assert.match(errors[0]!, /transitions\.items\[0\]: key id 7 was never defined on this connection/);

  // A new connection of the same process: ids start again, id 1 is now another key.
  first.peer.close();
  await until(() => p.liveness === 'exited', 'disconnected');
  const again = await Peer.hello(address, token, { instance: 'run-9' });
  again.peer.send({ type: 'controller', name: 'widget', priorityQueue: true, paused: true });
  await until(() => p.liveness === 'connected', 'reconnected');
  again.peer.send({ type: 'transitions', controller: 'widget', keys: [[1, 'ns/c']], t0: 2000, items: [[0, 1, 0, 0]] });
  await until(() => c.keyState('ns/c')?.phase === 'queued', 'c queued');
  assert.notEqual(c.keyState('ns/a')?.phase, 'queued');
  h.dispose();
});

test('resync over a real socket: a queue message in the same chunk right after the snapshot reply is applied on top of the snapshot', async () => {
  const { h, address, token } = await hub();
  const { peer } = await Peer.hello(address, token);
  peer.send({ type: 'controller', name: 'widget', group: 'lab.reconcile.dev', version: 'v1alpha1', kind: 'Widget', resource: 'widgets', priorityQueue: true, paused: true });
  const { controller: c } = await h.waitForController((x) => x.controller.name === 'widget');
  const snapshot = { dropped: 0, controllers: [{ name: 'widget', paused: true, keys: [{ key: 'ns/old', state: 'ready', failures: 0, causes: [] }] }] };
  const first = await peer.command('snapshot'); // the resync of the announcement
  peer.send({ type: 'reply', id: first.id, ok: true, snapshot });
  await until(() => c.keyState('ns/old')?.phase === 'queued', 'the first resync applied');
  const done = c.resync();
  const cmd = await peer.command('snapshot');
  const added = { type: 'queue', controller: 'widget', key: 'ns/new', transition: 'added', priority: 0, causes: [{ kind: 'watch', note: 'added outside an informer event', at: 1 }], at: 1 };
  peer.raw(`${JSON.stringify({ type: 'reply', id: cmd.id, ok: true, snapshot })}\n${JSON.stringify(added)}\n`); // one write, read as one chunk
  assert.equal(await done, true);
  assert.equal(c.keyState('ns/new')?.phase, 'queued', 'the add read after the reply survives the resync');
  assert.equal(c.keyState('ns/old')?.phase, 'queued');
  h.dispose();
});

test('informers: the resources the program caches, as the controllers see them ("plural.group"), follow each message; a bad one changes nothing', async () => {
  const { h, address, token } = await hub();
  const first = await Peer.hello(address, token, { instance: 'run-8' });
  first.peer.send({ type: 'controller', name: 'bucket', priorityQueue: true, paused: true });
  const { process: p, controller: c } = await h.waitForController();
  assert.deepEqual(c.cachedResources, [], 'nothing said yet');
  let changes = 0;
  c.onDidChangeCachedResources(() => changes++);
  first.peer.send({ type: 'informers', resources: ['buckets.v1.storage.example.org', 'secrets.v1'] });
  await until(() => c.cachedResources.length === 2, 'the cached resources');
  assert.deepEqual(c.cachedResources, ['buckets.storage.example.org', 'secrets']);
  assert.deepEqual(p.cachedResources, ['buckets.v1.storage.example.org', 'secrets.v1']);
  first.peer.send({ type: 'informers', resources: ['buckets.v1.storage.example.org', 'buckets.v1beta1.storage.example.org', 'deployments.v1.apps', 'secrets.v1'] });
  await until(() => c.cachedResources.length === 3, 'one more, two versions of one resource counted once');
  assert.deepEqual(c.cachedResources, ['buckets.storage.example.org', 'deployments.apps', 'secrets']);
  assert.equal(changes, 2);
  // A bad message is a protocol error, and changes nothing.
  const problems: string[] = [];
  p.onProtocolError((e) => problems.push(e));
  first.peer.send({ type: 'informers', resources: 'secrets.v1' });
  await until(() => problems.length === 1, 'the bad message reported');
  assert.deepEqual(c.cachedResources, ['buckets.storage.example.org', 'deployments.apps', 'secrets']);
  h.dispose();
});
