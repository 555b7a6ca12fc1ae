import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Emitter } from '../../../src/core/event.ts';
import { watchServerOutages, type OutageNote } from '../../../src/core/k8s/reachability.ts';
import type { Reachability } from '../../../src/core/k8s/transport.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';

test('an outage is said once when it begins and once when the server answers again, with how long it lasted', () => {
  const clock = new FakeClock();
  const emitter = new Emitter<Reachability>();
  const notes: OutageNote[] = [];
  const sub = watchServerOutages({ onDidChangeReachability: emitter.event }, clock, (n) => void notes.push(n));
  emitter.fire({ reachable: false, error: 'Cannot reach the API server at https://127.0.0.1:6443 (ECONNREFUSED).' });
  clock.step(18_000);
  emitter.fire({ reachable: true });
  assert.deepEqual(notes.map((n) => n.kind), ['away', 'back']);
  assert.match(notes[0]!.text, /^Cannot reach the API server at https:\/\/127\.0\.0\.1:6443 \(ECONNREFUSED\)\. The informers retry with backoff/);
  assert.match(notes[0]!.text, /queued keys and their backoffs are kept/);
  assert.equal(notes[1]!.awayMs, 18_000);
  assert.match(notes[1]!.text, /^The API server answers again \(its first answer came 18 s after the first failed connection\)/);
  assert.match(notes[1]!.text, /watches on from its last resourceVersion, or relists/);
  sub.dispose();
  emitter.fire({ reachable: false, error: 'x' });
  assert.equal(notes.length, 2, 'nothing after dispose');
});

test('probeServer asks /livez every interval, one at a time, whatever the answer; dispose stops it', async () => {
  const { probeServer, PROBE_PATH } = await import('../../../src/core/k8s/reachability.ts');
  const clock = new FakeClock();
  const sent: string[] = [];
  let settle!: () => void;
  const transport = {
    json: (req: { path: string }) => {
      sent.push(req.path);
      return new Promise<unknown>((_, reject) => (settle = () => reject(new Error('ECONNREFUSED'))));
    },
  };
  const probe = probeServer(transport, clock, 5_000);
  clock.step(4_999);
  assert.deepEqual(sent, []);
  clock.step(1);
  assert.deepEqual(sent, [PROBE_PATH]);
  clock.step(20_000);
  assert.equal(sent.length, 1, 'no second probe while one is in flight');
  settle();
  await new Promise((r) => setImmediate(r));
  clock.step(5_000);
  assert.equal(sent.length, 2, 'a failed probe is followed by the next');
  probe.dispose();
  settle();
  await new Promise((r) => setImmediate(r));
  clock.step(60_000);
  assert.equal(sent.length, 2, 'nothing after dispose');
});
