import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createKubeEventRecorder, EVENT_GVR } from '../../../src/core/k8s/eventRecorder.ts';
import { ApiError, type KubeClient } from '../../../src/core/k8s/client.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { createLogger, nullLogger, type LogLevel } from '../../../src/core/log.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';

type Call = { verb: string; args: unknown[] };

function fakeClient(fail = false): { client: KubeClient; calls: Call[] } {
  const calls: Call[] = [];
  const rec = (verb: string) => async (...args: unknown[]) => {
    calls.push({ verb, args });
    if (fail) throw new Error('boom');
    return args[1] as KubeObject;
  };
  const client = { create: rec('create'), patch: rec('patch') } as unknown as KubeClient;
  return { client, calls };
}

const widget: KubeObject = { apiVersion: 'lab.reconcile.dev/v1alpha1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns', uid: 'u1', resourceVersion: '7' } };

describe('KubeEventRecorder', () => {
  it('creates a core/v1 Event naming the involved object, in its namespace', async () => {
    const { client, calls } = fakeClient();
    const r = createKubeEventRecorder({ client, component: 'reconcile-lab', clock: new FakeClock(), log: nullLogger });
    r.event(widget, 'Normal', 'ChildCreated', 'ConfigMap w-config created');
    await r.flush();
    assert.equal(calls.length, 1);
    const [gvr, ev] = calls[0]!.args as [unknown, KubeObject & Record<string, any>];
    assert.deepEqual(gvr, EVENT_GVR);
    assert.equal(ev.metadata.namespace, 'ns');
    assert.deepEqual(ev.involvedObject, { apiVersion: widget.apiVersion, kind: 'Widget', name: 'w', namespace: 'ns', uid: 'u1', resourceVersion: '7' });
    assert.equal(ev.reason, 'ChildCreated');
    assert.equal(ev.type, 'Normal');
    assert.equal(ev.count, 1);
    assert.equal(ev.source.component, 'reconcile-lab');
  });

  it('folds repeats into one Event with a growing count, in order', async () => {
    const { client, calls } = fakeClient();
    const clock = new FakeClock();
    const r = createKubeEventRecorder({ client, component: 'c', clock, log: nullLogger });
    r.event(widget, 'Warning', 'DependencyMissing', 'ConfigMap x not found');
    r.event(widget, 'Warning', 'DependencyMissing', 'ConfigMap x not found');
    r.event(widget, 'Normal', 'Ready', 'ok');
    await r.flush();
    assert.deepEqual(calls.map((c) => c.verb), ['create', 'patch', 'create']);
    const created = calls[0]!.args[1] as KubeObject;
    assert.equal(calls[1]!.args[2], created.metadata.name, 'the repeat patches the first Event');
    assert.equal((calls[1]!.args[4] as { count: number }).count, 2);
  });

  it('sends nothing while suppressed (dry-run) and never throws on a failed write', async () => {
    let dry = true;
    const { client, calls } = fakeClient(true);
    const r = createKubeEventRecorder({ client, component: 'c', clock: new FakeClock(), log: nullLogger, suppress: () => dry });
    r.event(widget, 'Normal', 'X', 'y');
    await r.flush();
    assert.equal(calls.length, 0);
    dry = false;
    assert.doesNotThrow(() => r.event(widget, 'Normal', 'X', 'y'));
    await r.flush();
    assert.equal(calls.length, 1, 'tried once, failure logged and dropped');
    r.dispose();
    r.event(widget, 'Normal', 'X', 'z');
    await r.flush();
    assert.equal(calls.length, 1, 'nothing after dispose');
  });

  it('a 403 (no create on events) is warned about once per namespace, naming the missing right; an accepted event re-arms it', async () => {
    const refusedIn = new Set(['ns', 'other']);
    const calls: string[] = [];
    const client = {
      create: async (_gvr: unknown, ev: KubeObject) => {
        const ns = ev.metadata.namespace!;
        calls.push(ns);
        if (refusedIn.has(ns)) {
          throw new ApiError(403, 'Forbidden', `POST /api/v1/namespaces/${ns}/events: events is forbidden: User "dev" cannot create resource "events" in API group "" in the namespace "${ns}". Missing right: create on events in namespace ${ns} (ask for it in a Role); check with: kubectl auth can-i create events -n ${ns}`);
        }
        return ev;
      },
      patch: async () => ({}) as KubeObject,
    } as unknown as KubeClient;
    const entries: Array<{ level: LogLevel; msg: string; error?: unknown }> = [];
    const log = createLogger((level, msg, fields) => entries.push({ level, msg, error: fields.error }));
    const r = createKubeEventRecorder({ client, component: 'c', clock: new FakeClock(), log });
    const other: KubeObject = { ...widget, metadata: { ...widget.metadata, namespace: 'other', uid: 'u2' } };
    for (let i = 0; i < 5; i++) r.event(widget, 'Normal', 'Reading', `level ${i}`);
    r.event(other, 'Normal', 'Reading', 'x');
    r.event(other, 'Normal', 'Reading', 'y');
    await r.flush();
    assert.equal(calls.length, 7, 'every event is still sent (a right granted later takes effect)');
    const warns = entries.filter((e) => e.level === 'warn');
    assert.equal(warns.length, 2, `one warning per namespace: ${JSON.stringify(warns)}`);
    assert.match(warns[0]!.msg, /events are not recorded in namespace ns/);
    assert.match(String(warns[0]!.error), /Missing right: create on events in namespace ns .*kubectl auth can-i create events -n ns/);
    assert.match(warns[1]!.msg, /namespace other/);
    assert.equal(entries.filter((e) => e.level === 'debug' && e.msg === 'could not record event').length, 5, 'the repeats (4 in ns, 1 in other) are kept at debug level');

    refusedIn.delete('ns');
    r.event(widget, 'Normal', 'Granted', 'now allowed');
    refusedIn.add('ns');
    r.event(widget, 'Normal', 'Revoked', 'refused again');
    await r.flush();
    assert.equal(entries.filter((e) => e.level === 'warn').length, 3, 'after an accepted event, a new refusal is warned about again');
  });

  it('a failure other than 403 is warned about every time', async () => {
    const { client } = fakeClient(true);
    const entries: LogLevel[] = [];
    const r = createKubeEventRecorder({ client, component: 'c', clock: new FakeClock(), log: createLogger((level) => entries.push(level)) });
    r.event(widget, 'Normal', 'X', 'a');
    r.event(widget, 'Normal', 'X', 'b');
    await r.flush();
    assert.deepEqual(entries.filter((l) => l === 'warn'), ['warn', 'warn']);
  });
});
