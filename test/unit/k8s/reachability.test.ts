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
