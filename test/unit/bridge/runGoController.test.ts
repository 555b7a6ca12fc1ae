// runGoController's waiting for a program's controller (src/core/bridge/runGoController.ts): the program is a real
// process (`sleep`), the Go side of the bridge is the test's Peer, time is a fake clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BridgeHub } from '../../../src/core/bridge/bridgeHub.ts';
import { GoControllerNotAnnouncedError, leaderElectionNote, leaseWaitNotice, runGoController, whenEveryControllerAnnounced } from '../../../src/core/bridge/runGoController.ts';
import { Journal } from '../../../src/core/journal/journal.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { Peer, until } from './peer.ts';

/** runGoController's options the test gives; `spec` (default `sleep 600`) may be another program. */
type WaitOptions = Omit<Parameters<typeof runGoController>[0], 'hub' | 'spec' | 'clock'> & { spec?: Parameters<typeof runGoController>[0]['spec'] };

/**
 * A run of `sleep 600` waiting for a controller on a fresh hub with a fake clock. outcome() is undefined while it
 * waits, then the name of the controller it followed (the program is stopped then) or its error. The caller closes
 * its peers, awaits run and disposes hub.
 */
async function waitingRun(options: WaitOptions) {
  const clock = new FakeClock();
  const journal = new Journal({ clock, delivery: 'sync' });
  const hub = await BridgeHub.start({ clock, journal, silentAfterMs: 3_600_000 });
  let outcome: unknown;
  const run = runGoController({ hub, spec: { command: 'sleep', args: ['600'] }, clock, ...options }).then(
    async (r) => {
      outcome = r.controller.name;
      await r.launched.stop();
      r.launched.dispose();
    },
    (e: unknown) => (outcome = e),
  );
  return { clock, hub, env: hub.env(), run, outcome: (): unknown => outcome };
}

test('with wanted: a program that announces only after the first notice, and no controller it accepts, fails one notice period later naming what it announced (not after waitMs)', async () => {
  const notices: string[] = [];
  const { clock, hub, env, run, outcome } = await waitingRun({
    waitMs: 300_000,
    noticeAfterMs: 10_000,
    accept: (c) => c.controller.resourceId === 'widgets.lab.reconcile.dev',
    wanted: 'a controller reconciling widgets.lab.reconcile.dev',
    onNotice: (m) => notices.push(m),
  });
  try {
    clock.step(10_000);
    assert.equal(notices.length, 1);
    assert.match(notices[0]!, /has not connected to Reconcile Lab yet/);
    assert.equal(outcome(), undefined, 'nothing announced yet: still waiting');

    // The program connects late (a first go run compiles) and announces only another controller.
    const { peer, answer } = await Peer.hello(env.RECONCILE_LAB_BRIDGE!, env.RECONCILE_LAB_BRIDGE_TOKEN!);
    assert.equal(answer.type, 'welcome');
    peer.send({ type: 'controller', name: 'harbor-keeper', group: 'fleet.example.io', version: 'v1beta1', kind: 'Harbor', resource: 'harbors', priorityQueue: true, paused: true });
    await until(() => hub.controllers.length === 1, 'the controller is announced');
    clock.step(9_999);
    await until(() => true, 'a turn');
    assert.equal(outcome(), undefined, 'not before the next notice period');
    clock.step(1);
    await until(() => outcome() !== undefined, 'the run ends');
    const failure = outcome();
    assert.ok(failure instanceof GoControllerNotAnnouncedError, String(failure));
    assert.deepEqual(failure.announced, ['harbor-keeper']);
    assert.match(failure.message, /^sleep 600 announced harbor-keeper \(harbors\.fleet\.example\.io\), but not a controller reconciling widgets\.lab\.reconcile\.dev\.$/);
    clock.step(60_000);
    assert.equal(notices.length, 1, 'the notice is said once, and the run left no check behind');
    peer.close();
  } finally {
    await run;
    hub.dispose();
  }
});

test('two programs launched on one hub: each run ends only on its own program\'s refused handshake; one without a pid only while it is the only run waiting', async () => {
  const clock = new FakeClock();
  const journal = new Journal({ clock, delivery: 'sync' });
  const hub = await BridgeHub.start({ clock, journal, silentAfterMs: 3_600_000 });
  const env = hub.env();
  const pids: Record<string, number | undefined> = {};
  const outcomes: Record<string, unknown> = {};
  // The Go side of each program is the test's Peer, which says a pid in the launched program's process group.
  const group = new Map<number, number>();
  const start = (name: string) =>
    runGoController({
      hub,
      spec: { command: 'sleep', args: ['600'] },
      clock,
      noticeAfterMs: 3_600_000,
      onLaunched: (l) => (pids[name] = l.pid),
      processGroupOf: (pid) => group.get(pid),
      onNotice: () => {},
    }).then(
      () => (outcomes[name] = 'resolved'),
      (e: unknown) => (outcomes[name] = e),
    );
  const refusals: number[] = [];
  hub.listener.onDidRefuse((r) => refusals.push(r.pid ?? 0));
  const a = start('a');
  const b = start('b');
  try {
    assert.ok(pids.a && pids.b, 'both launched');
    group.set(7001, pids.a!); // a's go run child
    // Program a's compiled child speaks another protocol version: a ends, b keeps waiting.
    const old = await Peer.hello(env.RECONCILE_LAB_BRIDGE!, env.RECONCILE_LAB_BRIDGE_TOKEN!, { protocol: 99, pid: 7001 });
    assert.equal(old.answer.type, 'reject');
    await until(() => outcomes.a !== undefined, 'run a ends');
    assert.ok(outcomes.a instanceof Error && /was refused \(protocol version 99 is not supported/.test(outcomes.a.message), String(outcomes.a));
    assert.equal(outcomes.b, undefined, "a's refusal is not b's");
    // A refusal whose pid is in another process group (a program started elsewhere) is not b's, alone or not.
    group.set(9999, 1);
    const stranger = await Peer.hello(env.RECONCILE_LAB_BRIDGE!, 'wrong-token', { pid: 9999 });
    assert.equal(stranger.answer.type, 'reject');
    await until(() => refusals.includes(9999), 'the stranger refused');
    await until(() => true, 'a turn');
    assert.equal(outcomes.b, undefined, 'a stranger\'s refusal is not b\'s');
    // b is now the only run waiting: a refusal without a pid (not even JSON) can only be its program's.
    const garbled = await Peer.dial(env.RECONCILE_LAB_BRIDGE!);
    garbled.socket.write('not json\n');
    await until(() => outcomes.b !== undefined, 'run b ends');
    const endB = outcomes.b as unknown; // set by run b's callbacks
    assert.ok(endB instanceof Error && /was refused/.test(endB.message), String(endB));
    old.peer.close();
    stranger.peer.close();
    garbled.close();
  } finally {
    await Promise.all([a, b]);
    hub.dispose();
  }
});

test('an onLaunched callback that throws: the run rejects with its error and the launched program is stopped', async () => {
  const clock = new FakeClock();
  const journal = new Journal({ clock, delivery: 'sync' });
  const hub = await BridgeHub.start({ clock, journal, silentAfterMs: 3_600_000 });
  let pid: number | undefined;
  try {
    await assert.rejects(
      runGoController({
        hub,
        spec: { command: 'sleep', args: ['600'] },
        clock,
        onLaunched: (l) => {
          pid = l.pid;
          throw new Error('the caller could not take it');
        },
      }),
      /the caller could not take it/,
    );
    assert.ok(pid !== undefined, 'the program was launched');
    await until(() => {
      try {
        process.kill(pid!, 0);
        return false;
      } catch {
        return true;
      }
    }, 'the launched program is gone');
  } finally {
    hub.dispose();
  }
});

/**
 * Launches `sleep` as the program on a fresh hub, its Go side the test's Peer; `script` announces controllers and
 * moves the clock. Resolves with the name of the controller the run followed (the program is stopped).
 */
async function followedName(accept: Parameters<typeof runGoController>[0]['accept'], script: (announce: (name: string, order?: number) => Promise<void>, clock: FakeClock, outcome: () => unknown) => Promise<void>): Promise<string> {
  const { clock, hub, env, run, outcome } = await waitingRun({ noticeAfterMs: 10_000, onNotice: () => {}, ...(accept ? { accept } : {}) });
  const { peer, answer } = await Peer.hello(env.RECONCILE_LAB_BRIDGE!, env.RECONCILE_LAB_BRIDGE_TOKEN!);
  try {
    assert.equal(answer.type, 'welcome');
    let n = 0;
    const announce = async (name: string, order?: number) => {
      peer.send({ type: 'controller', name, group: 'brew.example.io', version: 'v1', kind: name, resource: `${name}s`, priorityQueue: true, paused: true, ...(order !== undefined ? { order } : {}) });
      n++;
      await until(() => hub.controllers.length === n, `${name} is announced`);
      await until(() => true, 'a turn');
    };
    await script(announce, clock, outcome);
    await until(() => outcome() !== undefined, 'the run ends');
  } finally {
    peer.close();
    await run;
    hub.dispose();
  }
  const followed = outcome();
  if (typeof followed !== 'string') throw followed;
  return followed;
}

test('a program whose manager announces its controllers in another order than it set them up: the run follows the first it set up (order 1), whatever comes first', async () => {
  const name = await followedName(undefined, async (announce, _clock, outcome) => {
    await announce('stove', 2);
    assert.equal(outcome(), undefined, 'the controller set up first (order 1) is not announced yet: still waiting');
    await announce('kettle', 1);
  });
  assert.equal(name, 'kettle');
});

test('the first controller set up is never announced (it waits for leadership): at the notice time the run follows the best announced', async () => {
  const name = await followedName(undefined, async (announce, clock, outcome) => {
    await announce('stove', 2);
    await announce('pot', 3);
    clock.step(9_999);
    await until(() => true, 'a turn');
    assert.equal(outcome(), undefined, 'not before the notice time');
    clock.step(1);
  });
  assert.equal(name, 'stove');
});

test('with accept (--resource): the lowest place among the accepted, once every controller set up before it was announced, accepted or not', async () => {
  const name = await followedName((c) => c.controller.name !== 'kettle', async (announce, _clock, outcome) => {
    await announce('kettle', 1);
    await announce('pot', 3);
    assert.equal(outcome(), undefined, 'order 2 may still be accepted: waiting');
    await announce('stove', 2);
  });
  assert.equal(name, 'stove');
});

test('a bridge that sends no order: the first controller announced, at once', async () => {
  const name = await followedName(undefined, async (announce) => {
    await announce('stove');
  });
  assert.equal(name, 'stove');
});

test('with wanted: once every controller the program set up is announced (declared) and none is accepted, the run fails at once; while one is missing it waits for the notice period', async () => {
  for (const declared of [2, 3]) {
    const { clock, hub, env, run, outcome } = await waitingRun({
      waitMs: 300_000,
      noticeAfterMs: 10_000,
      accept: (c) => c.controller.name === 'harbor-keper',
      wanted: 'the controller named harbor-keper: pass --controller with the name of one it runs',
      wantedName: 'harbor-keper',
      onNotice: () => undefined,
    });
    try {
      const { peer } = await Peer.hello(env.RECONCILE_LAB_BRIDGE!, env.RECONCILE_LAB_BRIDGE_TOKEN!);
      peer.send({ type: 'controller', name: 'deployment', group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', priorityQueue: false, paused: true, order: 2, declared });
      peer.send({ type: 'controller', name: 'harbor-keeper', group: 'fleet.example.io', version: 'v1beta1', kind: 'Harbor', resource: 'harbors', priorityQueue: true, paused: true, order: 1, declared });
      await until(() => hub.controllers.length === 2, 'both are announced');
      if (declared === 2) {
        await until(() => outcome() !== undefined, 'the run ends without waiting for the notice');
        const failure = outcome();
        assert.ok(failure instanceof Error, String(failure));
        assert.match(failure.message, /^sleep 600 announced deployment \(deployments\.apps\), harbor-keeper \(harbors\.fleet\.example\.io\), but not the controller named harbor-keper: pass --controller with the name of one it runs\. Did you mean --controller harbor-keeper\?$/);
      } else {
        await until(() => true, 'a turn');
        assert.equal(outcome(), undefined, 'a third controller set up is not announced yet (leader election): still waiting');
        clock.step(10_000);
        await until(() => outcome() !== undefined, 'the run ends at the notice');
        assert.ok(outcome() instanceof Error);
      }
      peer.close();
    } finally {
      await run;
      hub.dispose();
    }
  }
});

test('leaderElectionNote: a program launched with --leader-elect that announces nothing is told another instance may hold the lease; without the flag nothing is added', () => {
  assert.match(leaderElectionNote(['run', './cmd', '--leader-elect']), /runs with --leader-elect: its controllers start only after it wins the lease.*another instance of your program holding it.*run with --leader-elect=false \(/);
  assert.match(leaderElectionNote(['--leader-elect=true']), /runs with --leader-elect=true/);
  assert.equal(leaderElectionNote(['run', './cmd', '--leader-elect=false']), '');
  assert.equal(leaderElectionNote(['run', './cmd']), '');
  assert.match(leaderElectionNote(['run', './cmd', '--leader-elect', 'false']), /runs with --leader-elect false: a Go bool flag takes its value only after "=", so this turns --leader-elect on and passes "false" as an argument; --leader-elect=false turns it off; its controllers start only after it wins the lease.*run with --leader-elect=false \(/);
});

test('a program that never connects: the notice and the timeout speak of compiling only for go run, and point a binary at go version -m', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rgc-go-'));
  const fakeGo = join(dir, 'go'); // silent, like a go run compiling on a cold build cache
  writeFileSync(fakeGo, '#!/bin/sh\nexec sleep 600\n', { mode: 0o755 });
  try {
    for (const [spec, notice, timeout] of [
      [{ command: fakeGo, args: ['run', './cmd'] }, /a first go run compiles for a minute or more \(to skip that, build it once \(go build -o bin\/manager \.\/cmd\) and pass the binary, e.g\. --go \.\/bin\/manager\)/, /no controller announced within 30 s\. go run printed nothing: it may still have been compiling/],
      [{ command: 'sleep', args: ['600'] }, /never connects \(go version -m sleep lists github\.com\/reconcile-lab\/reconcile-lab\/bridge when the bridge is built in\)/, /^sleep: no controller announced within 30 s\.$/],
    ] as const) {
      const notices: string[] = [];
      const { clock, hub, run, outcome } = await waitingRun({ spec: { command: spec.command, args: [...spec.args] }, waitMs: 30_000, noticeAfterMs: 10_000, onNotice: (m) => notices.push(m) } as WaitOptions);
      try {
        clock.step(10_000);
        assert.equal(notices.length, 1);
        assert.match(notices[0]!, notice);
        if (spec.command === 'sleep') assert.doesNotMatch(notices[0]!, /compil/);
        clock.step(20_000);
        await until(() => outcome() !== undefined, 'the run ends');
        assert.ok(outcome() instanceof Error);
        assert.match((outcome() as Error).message, timeout);
        await run;
      } finally {
        hub.dispose();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the advice to build a go run program once names its package, go\'s own flags and its arguments (no <package> placeholder)', async () => {
  const { buildOnceAdvice } = await import('../../../src/core/bridge/runGoController.ts');
  assert.equal(buildOnceAdvice(['go', 'run', './cmd']), 'build it once (go build -o bin/manager ./cmd) and pass the binary, e.g. --go ./bin/manager');
  assert.equal(
    buildOnceAdvice(['go', 'run', './cmd', '--leader-elect=false']),
    'build it once (go build -o bin/manager ./cmd) and pass the binary, e.g. --go "./bin/manager --leader-elect=false"',
  );
  assert.equal(
    buildOnceAdvice(['go', '-C', 'operator', 'run', '-tags', 'e2e', '.']),
    'build it once (go -C operator build -o bin/manager -tags e2e .) and pass the binary, e.g. --go operator/bin/manager',
  );
  assert.equal(buildOnceAdvice(['go', 'run']), 'build it once (go build -o bin/manager <package>) and pass the binary, e.g. --go ./bin/manager');
});

test('a program that logs it waits for a leader-election Lease: the notice names the Lease and its holder read through leaseHolder; without a holder, the Lease alone', async () => {
  for (const [holder, line, want] of [
    [async () => ({ identity: 'laptop_1a2b3c', renewedAgoMs: 1500, durationMs: 15_000 }), 'I1207 04:40:00.123456   4242 leaderelection.go:257] attempting to acquire leader lease kube-system/foo...', /^sh -c .* connected \(pid \d+\) but announced no controller yet: it waits for leader election: Lease kube-system\/foo is held by laptop_1a2b3c \(another instance of your program[^]*Stop the other instance, or run with --leader-elect=false \(leader election/],
    [() => Promise.reject(new Error('forbidden')), '{"level":"info","msg":"Attempting to acquire leader lease...","lock":"system/my-op.example.com"}', /it waits for leader election: Lease system\/my-op\.example\.com is held by another instance \(/],
  ] as const) {
    const lines: string[] = [];
    const notices: string[] = [];
    const asked: unknown[] = [];
    const readFor: AbortSignal[] = [];
    const stop = new AbortController();
    const { clock, hub, env, run } = await waitingRun({
      signal: stop.signal,
      spec: { command: 'sh', args: ['-c', `echo '${line}'; exec sleep 600`, '--leader-elect'] },
      noticeAfterMs: 10_000,
      leaseHolder: (l, signal) => (asked.push(l), signal && readFor.push(signal), holder()),
      onOutput: (l) => lines.push(l),
      onNotice: (m) => notices.push(m),
    });
    const { peer } = await Peer.hello(env.RECONCILE_LAB_BRIDGE!, env.RECONCILE_LAB_BRIDGE_TOKEN!);
    try {
      await until(() => lines.length === 1 && hub.processes.length === 1, 'the lease line and the connection');
      clock.step(10_000);
      await until(() => notices.length === 1, 'the notice');
      assert.deepEqual(asked, [/kube-system/.test(line) ? { namespace: 'kube-system', name: 'foo' } : { namespace: 'system', name: 'my-op.example.com' }]);
      assert.match(notices[0]!, want);
      assert.doesNotMatch(notices[0]!, /makes no controller|has not connected/);
      assert.equal(readFor.length === 1 && !readFor[0]!.aborted, true, 'the read is given the run\'s lifetime');
    } finally {
      stop.abort(new Error('test over'));
      peer.close();
      await run;
      hub.dispose();
    }
    assert.equal(readFor[0]?.aborted, true, 'ended with the run: a read still waiting stops');
  }
});

test('a program that logged it acquired the Lease it waited for: the notice is the usual one (no Lease); leaseWaitNotice names the program\'s own flag', async () => {
  const lines: string[] = [];
  const notices: string[] = [];
  const stop = new AbortController();
  const { clock, hub, env, run } = await waitingRun({
    signal: stop.signal,
    spec: { command: 'sh', args: ['-c', 'echo "attempting to acquire leader lease default/x.example.com..."; echo "successfully acquired lease default/x.example.com"; exec sleep 600'] },
    noticeAfterMs: 10_000,
    leaseHolder: async () => ({ identity: 'someone' }),
    onOutput: (l) => lines.push(l),
    onNotice: (m) => notices.push(m),
  });
  const { peer } = await Peer.hello(env.RECONCILE_LAB_BRIDGE!, env.RECONCILE_LAB_BRIDGE_TOKEN!);
  try {
    await until(() => lines.length === 2 && hub.processes.length === 1, 'the lease lines and the connection');
    clock.step(10_000);
    await until(() => notices.length === 1, 'the notice');
    assert.match(notices[0]!, /connected \(pid \d+\) but announced no controller yet: each controller needs WithOptions/);
    assert.doesNotMatch(notices[0]!, /Lease|someone/);
  } finally {
    stop.abort(new Error('test over'));
    peer.close();
    await run;
    hub.dispose();
  }
  assert.match(leaseWaitNotice('./bin/manager --enable-leader-election', [], { namespace: 'ns', name: 'l' }, undefined, ['--enable-leader-election']), /^\.\/bin\/manager --enable-leader-election announced no controller yet: it waits for leader election: Lease ns\/l is held by another instance[^]*run with --enable-leader-election=false \(leader election/);
  assert.match(leaseWaitNotice('./bin/manager', [7], { namespace: 'ns', name: 'l' }, { identity: 'h' }, []), /run with --leader-elect=false \(or the flag of your program that turns leader election off\)/);
  assert.match(leaseWaitNotice('./bin/manager --leader-elect false', [7], { namespace: 'ns', name: 'l' }, { identity: 'h' }, ['--leader-elect', 'false']), /run with --leader-elect=false \(it runs with --leader-elect false: a Go bool flag takes its value only after "=", so this turns --leader-elect on/);
});

test('leaseWaitNotice: a holder that stopped renewing the Lease (an earlier run that did not give it back) is not called an instance to stop; the notice says the wait ends by itself after the Lease duration and how to skip it', () => {
  const lease = { namespace: 'default', name: 'gadget-operator.tools.example.com' };
  const gone = leaseWaitNotice('./bin/manager', [7], lease, { identity: 'vm_2bbe', renewedAgoMs: 11_400, durationMs: 15_000 }, []);
  assert.match(gone, /^\.\/bin\/manager connected \(pid 7\) but announced no controller yet: it waits for leader election: Lease default\/gadget-operator\.tools\.example\.com is held by vm_2bbe, which has not renewed it for 11 s /);
  assert.match(gone, /There is nothing to stop: client-go takes the lease over once it has seen it unrenewed for its whole duration \(15 s\), counted from this program's first try, however long ago the holder stopped/);
  assert.match(gone, /LeaderElectionReleaseOnCancel: true/);
  assert.match(gone, /run with --leader-elect=false \(or the flag of your program that turns leader election off\)/);
  assert.doesNotMatch(gone, /Stop the other instance|another instance of your program/);
  assert.match(leaseWaitNotice('./bin/manager', [], lease, { identity: 'vm_2bbe', renewedAgoMs: 40_000, durationMs: 15_000 }, []), /^\.\/bin\/manager announced no controller yet: [^]*not renewed it for 40 s [^]*nothing to stop: client-go takes the lease over once it has seen it unrenewed for its whole duration \(15 s\)/);
  // A holder that renews it: another instance runs, and stopping it is the advice.
  const live = leaseWaitNotice('./bin/manager', [7], lease, { identity: 'laptop_1a2b', renewedAgoMs: 1_200, durationMs: 15_000 }, []);
  assert.match(live, /is held by laptop_1a2b \(another instance of your program[^]*Stop the other instance/);
  assert.doesNotMatch(live, /nothing to stop/);
});

test('whenEveryControllerAnnounced: waits for the controllers a program declared that are announced after the first (true at once when all are there), false after its time, at once without a declared count, and when the connection closes', async () => {
  const clock = new FakeClock();
  const journal = new Journal({ clock, delivery: 'sync' });
  const hub = await BridgeHub.start({ clock, journal, silentAfterMs: 3_600_000 });
  const env = hub.env();
  const announce = (peer: Peer, name: string, more: Record<string, unknown>) =>
    peer.send({ type: 'controller', name, group: 'fleet.example.io', version: 'v1', kind: name, resource: `${name}s`, priorityQueue: true, paused: true, ...more });
  const peers: Peer[] = [];
  /** A program (a peer of its own instance) that announced the first of `declared` controllers. */
  const program = async (instance: string, declared: number | undefined) => {
    const { peer } = await Peer.hello(env.RECONCILE_LAB_BRIDGE!, env.RECONCILE_LAB_BRIDGE_TOKEN!, { instance, pid: 4242 + peers.length });
    peers.push(peer);
    announce(peer, 'first', declared === undefined ? {} : { order: 1, declared });
    await until(() => hub.processes.some((p) => p.instance === instance && p.controllers.length === 1), `${instance} announced its first controller`);
    return { peer, process: hub.processes.find((p) => p.instance === instance)! };
  };
  try {
    // Two set up, the second announced later (a busy machine starts them seconds apart).
    const a = await program('inst-a', 2);
    let done: boolean | undefined;
    void whenEveryControllerAnnounced(a.process, 10_000, clock).then((v) => (done = v));
    clock.step(9_000);
    await until(() => true, 'a turn');
    assert.equal(done, undefined, 'the second controller is not announced yet: still waiting');
    announce(a.peer, 'second', { order: 2, declared: 2 });
    await until(() => done !== undefined, 'the wait ends with the second announcement');
    assert.equal(done, true);
    assert.equal(await whenEveryControllerAnnounced(a.process, 10_000, clock), true, 'all announced: true at once');

    // Never announced: false once the time is up.
    const b = await program('inst-b', 3);
    let timedOut: boolean | undefined;
    void whenEveryControllerAnnounced(b.process, 10_000, clock).then((v) => (timedOut = v));
    clock.step(9_999);
    await until(() => true, 'a turn');
    assert.equal(timedOut, undefined);
    clock.step(1);
    await until(() => timedOut !== undefined, 'the wait ends at its time');
    assert.equal(timedOut, false);

    // A bridge that does not say how many it set up: nothing to wait for.
    const c = await program('inst-c', undefined);
    assert.equal(await whenEveryControllerAnnounced(c.process, 10_000, clock), false);

    // The program goes away while it is waited for.
    const d = await program('inst-d', 2);
    let gone: boolean | undefined;
    void whenEveryControllerAnnounced(d.process, 10_000, clock).then((v) => (gone = v));
    d.peer.close();
    await until(() => gone !== undefined, 'the wait ends when the connection closes');
    assert.equal(gone, false);
  } finally {
    for (const p of peers) p.close();
    hub.dispose();
  }
});
