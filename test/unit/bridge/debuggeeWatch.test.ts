// DebuggeeWatch: what F5 says when the debugged program shows nothing in the views (no controller announced after
// 20 s of running time): the lease it waits for (with its holder), or that it connected and announced nothing, or
// that it never connected; never while the debugger holds it stopped. The clock is a FakeClock: nothing sleeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DebuggeeWatch, type DebuggeeHub, type LeaseRef } from '../../../src/core/bridge/debuggeeWatch.ts';
import type { LeaseHolder } from '../../../src/core/bridge/leaseWait.ts';
import { Emitter } from '../../../src/core/event.ts';
import { FakeClock, flushMicrotasks } from '../../fakes/fakeClock.ts';

/** A hub with processes the test connects and controllers it announces. */
class FakeHub implements DebuggeeHub {
  readonly processes: Array<{ pid: number; controllers: string[] }> = [];
  private readonly added = new Emitter<{ process: { pid: number } }>();
  readonly onDidAddController = this.added.event;
  connect(pid: number): { pid: number; controllers: string[] } {
    const p = { pid, controllers: [] as string[] };
    this.processes.push(p);
    return p;
  }
  announce(p: { pid: number; controllers: string[] }, name: string): void {
    p.controllers.push(name);
    this.added.fire({ process: p });
  }
}

function watch(over: Omit<Partial<ConstructorParameters<typeof DebuggeeWatch>[0]>, 'hub'> = {}, hub = new FakeHub()) {
  const clock = new FakeClock();
  const notices: string[] = [];
  const w = new DebuggeeWatch({ clock, hub, name: 'Debug controller', onNotice: (m) => notices.push(m), ...over });
  return { clock, hub, notices, w };
}

test('waiting for a lease its holder stopped renewing (an earlier run that did not give it back): the notice says there is nothing to stop and that the wait ends by itself, not to stop another instance', async () => {
  const { clock, hub, notices, w } = watch({ leaseHolder: async () => ({ identity: 'vm_2bbe', renewedAgoMs: 8_000, durationMs: 15_000 }), leaderElection: { flag: '--leader-elect', why: '--leader-elect' } });
  hub.connect(4242);
  w.start();
  w.output('attempting to acquire leader lease default/gadget-operator.tools.example.com...\n');
  clock.step(20_000);
  await flushMicrotasks();
  assert.equal(notices.length, 1);
  assert.match(notices[0]!, /lease default\/gadget-operator\.tools\.example\.com, held by vm_2bbe, which has not renewed it for 8 s [^]*There is nothing to stop: client-go takes the lease over once it has seen it unrenewed for its whole duration \(15 s\)[^]*debug with --leader-elect=false in the configuration's args/);
  assert.doesNotMatch(notices[0]!, /Another instance of your program holds it/);
  w.dispose();
});

test('waiting for the lease another instance holds: told once after 20 s of running time, with the lease and its holder read from the cluster', async () => {
  const asked: LeaseRef[] = [];
  const { clock, hub, notices, w } = watch({ leaseHolder: async (l) => (asked.push(l), { identity: 'laptop_1a2b3c', renewedAgoMs: 900, durationMs: 15_000 }), leaderElection: { flag: '--leader-elect', why: '--leader-elect' } });
  hub.connect(4242);
  w.start();
  w.output('I1207 04:40:00.123456   4242 leaderelection.go:257] attempting to acquire leader lease default/');
  w.output('abc123.lab.reconcile.dev...\n');
  clock.step(19_999);
  await flushMicrotasks();
  assert.deepEqual(notices, [], 'not before 20 s');
  clock.step(1);
  await flushMicrotasks();
  assert.deepEqual(asked, [{ namespace: 'default', name: 'abc123.lab.reconcile.dev' }]);
  assert.equal(notices.length, 1);
  assert.match(notices[0]!, /^Reconcile Lab: the debug session "Debug controller" is waiting for the leader-election lease default\/abc123\.lab\.reconcile\.dev, held by laptop_1a2b3c: its controllers start only once it wins the lease[^]*Stop the other instance, or debug with --leader-elect=false in the configuration's args/);
  clock.step(600_000);
  await flushMicrotasks();
  assert.equal(notices.length, 1, 'once');
  assert.equal(clock.pendingTimers, 0, 'no timer left');
  w.dispose();
});

test('the lease line as client-go v0.35+ logs it (klog text, controller-runtime\'s zap, JSON), and a holder that cannot be read: the lease is named without a holder', async () => {
  for (const line of [
    'I1207 04:40:00.123456   4242 leaderelection.go:258] "Attempting to acquire leader lease..." lock="system/my-op.example.com"',
    '2026-12-07T04:40:00Z\tINFO\tAttempting to acquire leader lease...\t{"lock": "system/my-op.example.com"}',
    '{"level":"info","msg":"Attempting to acquire leader lease...","lock":"system/my-op.example.com"}',
  ]) {
    const { clock, hub, notices, w } = watch({ leaseHolder: () => Promise.reject(new Error('forbidden')) });
    hub.connect(7);
    w.start();
    w.output(`${line}\n`);
    clock.step(20_000);
    await flushMicrotasks();
    assert.equal(notices.length, 1, line);
    assert.match(notices[0]!, /waiting for the leader-election lease system\/my-op\.example\.com: its controllers/, line);
    w.dispose();
  }
});

test('never while stopped in the debugger: the time stopped does not count, and the notice comes after 20 s of running', async () => {
  const { clock, hub, notices, w } = watch();
  hub.connect(4242);
  w.start();
  clock.step(15_000);
  w.setStopped(true); // a breakpoint in main, before the manager starts
  clock.step(600_000);
  await flushMicrotasks();
  assert.deepEqual(notices, [], 'a breakpoint is not a hang');
  w.setStopped(false);
  clock.step(4_999);
  assert.deepEqual(notices, [], 'only 19.999 s of running so far');
  clock.step(1);
  assert.equal(notices.length, 1);
  assert.match(notices[0]!, /^Reconcile Lab: the debug session "Debug controller" connected \(pid 4242\) but announced no controller yet: each controller needs WithOptions\(bridge\.Options/);
  w.dispose();
});

test('stopped before it runs (stopOnEntry): time counts from the first continue only', () => {
  const { clock, notices, w } = watch();
  w.setStopped(true);
  w.start();
  clock.step(60_000);
  assert.deepEqual(notices, []);
  w.setStopped(false);
  clock.step(20_000);
  assert.equal(notices.length, 1);
  assert.match(notices[0]!, /has not connected to Reconcile Lab yet: a program that never calls bridge\.Setup or bridge\.Options never connects[^]*Debug Console/);
  w.dispose();
});

test('time counts from start (the program built and launched), not from the session\'s creation', () => {
  const { clock, notices, w } = watch();
  clock.step(120_000); // Delve compiles the program
  assert.deepEqual(notices, []);
  w.start();
  clock.step(19_000);
  assert.deepEqual(notices, []);
  clock.step(1_000);
  assert.equal(notices.length, 1);
  w.dispose();
});

test('a controller of the debuggee announced: nothing is told; one of another process (Run Controller…, pid not the debuggee\'s) does not count', () => {
  const running = new FakeHub();
  const other = running.connect(100); // Run Controller…'s copy, connected before the session
  running.announce(other, 'widget');
  const { clock, hub, notices, w } = watch({ leaderElection: { flag: '--leader-elect', why: 'the --leader-elect flag defined in cmd/main.go:7 defaults to true, and the configuration\'s args do not set it' } }, running);
  hub.announce(other, 'reporter'); // another controller of that copy, after the session started
  w.start();
  hub.connect(200); // the debuggee
  const third = hub.connect(300);
  w.setPid(200);
  hub.announce(third, 'widget');
  clock.step(20_000);
  assert.equal(notices.length, 1, 'the other processes\' controllers are not the debuggee\'s');
  assert.match(notices[0]!, /connected \(pid 200\) but announced no controller yet[^]*Leader election looks enabled \(the --leader-elect flag defined in cmd\/main\.go:7 defaults to true[^]*debug with --leader-elect=false/);
  w.dispose();

  const second = watch();
  second.w.start();
  const p = second.hub.connect(5);
  second.clock.step(10_000);
  second.hub.announce(p, 'widget');
  second.clock.step(600_000);
  assert.deepEqual(second.notices, [], 'its controllers show in the views');
  assert.equal(second.clock.pendingTimers, 0);
  second.w.dispose();
});

test('the lease once acquired is no longer named; the session ended while the holder was read: nothing is told', async () => {
  const { clock, hub, notices, w } = watch();
  hub.connect(1);
  w.start();
  w.output('"Attempting to acquire leader lease..." lock="default/x.example.com"\n"Successfully acquired lease" lock="default/x.example.com"\n');
  clock.step(20_000);
  assert.equal(notices.length, 1);
  assert.match(notices[0]!, /announced no controller yet/);
  w.dispose();

  let answer: (h: LeaseHolder) => void = () => {};
  let readFor: AbortSignal | undefined;
  const late = watch({ leaseHolder: (_lease, signal) => ((readFor = signal), new Promise((r) => (answer = r))) });
  late.hub.connect(1);
  late.w.start();
  late.w.output('attempting to acquire leader lease default/x.example.com...\n');
  late.clock.step(20_000);
  assert.equal(readFor?.aborted, false, 'the read is given the session\'s lifetime');
  late.w.dispose();
  assert.equal(readFor?.aborted, true, 'ended with the session: a read still waiting stops');
  answer({ identity: 'someone' });
  await flushMicrotasks();
  assert.deepEqual(late.notices, []);
});
