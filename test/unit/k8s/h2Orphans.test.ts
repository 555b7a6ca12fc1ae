// The HTTP/2 orphan drain (src/core/k8s/h2Orphans.ts) on Node's diagnostics channel, with stand-in streams and
// sessions: which streams it takes (answers on sessions that carry a request to a leased authority, nobody listening
// for them), which it leaves alone, and that the subscription ends with the last lease. The real scenario against
// kube-apiserver is in test/integration/transportDispose.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { channel } from 'node:diagnostics_channel';
import { EventEmitter } from 'node:events';
import { drainOrphanedHttp2Answers } from '../../../src/core/k8s/h2Orphans.ts';

const created = channel('http2.client.stream.created');
const tick = () => new Promise<void>((r) => process.nextTick(r));

class FakeStream extends EventEmitter {
  resumed = 0;
  closedWith: number[] = [];
  destroyed = false;
  readonly session: EventEmitter;
  constructor(session: EventEmitter) {
    super();
    this.session = session;
  }
  resume(): this {
    this.resumed++;
    return this;
  }
  close(code: number): void {
    this.closedWith.push(code);
  }
}

function request(session: EventEmitter, authority: string): void {
  created.publish({ stream: new FakeStream(session), headers: { ':method': 'GET', ':path': '/api', ':authority': authority } });
}

function answer(session: EventEmitter): FakeStream {
  const stream = new FakeStream(session);
  created.publish({ stream, headers: { ':status': 200, 'content-type': 'application/json' } });
  return stream;
}

describe('drainOrphanedHttp2Answers', () => {
  it('drains and resets an answer stream on a session that carried a request to the leased authority', async () => {
    const lease = drainOrphanedHttp2Answers('127.0.0.1:6443');
    try {
      const session = new EventEmitter();
      request(session, '127.0.0.1:6443');
      const orphan = answer(session);
      assert.equal(orphan.listenerCount('error'), 1, 'it gets an error listener');
      assert.equal(orphan.resumed, 1, 'it is read to its end');
      assert.deepEqual(orphan.closedWith, [], 'not reset while Node is still setting it up');
      await tick();
      assert.deepEqual(orphan.closedWith, [8], 'then reset with CANCEL (8)');
      assert.doesNotThrow(() => orphan.emit('error', new Error('session destroyed')), 'an error on it is not uncaught');
      const gone = answer(session);
      gone.destroyed = true;
      await tick();
      assert.deepEqual(gone.closedWith, [], 'a stream destroyed meanwhile is not reset');
    } finally {
      lease.dispose();
    }
  });

  it('leaves streams of other sessions, of other authorities and of sessions that listen for streams alone', async () => {
    const lease = drainOrphanedHttp2Answers('127.0.0.1:6443');
    try {
      const unknown = answer(new EventEmitter());
      const elsewhere = new EventEmitter();
      request(elsewhere, 'example.com:443');
      const other = answer(elsewhere);
      const listening = new EventEmitter();
      listening.on('stream', () => {});
      request(listening, '127.0.0.1:6443');
      const received = answer(listening);
      await tick();
      for (const [what, s] of [['a session never seen', unknown], ['another authority', other], ['a session with a stream listener', received]] as const) {
        assert.equal(s.listenerCount('error'), 0, `${what}: no listener added`);
        assert.equal(s.resumed, 0, `${what}: not read`);
        assert.deepEqual(s.closedWith, [], `${what}: not reset`);
      }
    } finally {
      lease.dispose();
    }
  });

  it('counts leases per authority and unsubscribes with the last one (dispose is idempotent)', () => {
    assert.equal(created.hasSubscribers, false, 'no subscriber before any lease');
    const a = drainOrphanedHttp2Answers('127.0.0.1:6443');
    const b = drainOrphanedHttp2Answers('127.0.0.1:6443');
    assert.equal(created.hasSubscribers, true);
    a.dispose();
    a.dispose();
    const session = new EventEmitter();
    request(session, '127.0.0.1:6443');
    assert.equal(answer(session).resumed, 1, 'the second lease still drains');
    b.dispose();
    assert.equal(created.hasSubscribers, false, 'the last lease ended the subscription');
    const later = new EventEmitter();
    request(later, '127.0.0.1:6443');
    assert.equal(answer(later).resumed, 0, 'nothing is drained without a lease');
  });
});
