import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createKubeEventRecorder, EVENT_GVR } from '../../../src/core/k8s/eventRecorder.ts';
import type { KubeClient } from '../../../src/core/k8s/client.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { nullLogger } from '../../../src/core/log.ts';
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
});
