// A Run Controller… instance of the developer's Go controller that watches every namespace, paused while the robustness
// checks run (by the editor, or by its developer before): the bridge never passes the scratch copies' events to its
// handlers, so it never queues a key of theirs, and after the checks it holds only real keys, paused or resumed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createDynamicClient, type DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import { runChecks } from '../../src/core/checks/runChecks.ts';
import type { ResourceInfo } from '../../src/core/k8s/objects.ts';
import { createNamespace, getTestCluster, installCrd, type TestCluster } from './support/cluster.ts';
import { buildGoSample, haveGo, sampleDir } from './support/goSample.ts';
import { GoLaunches } from './support/goLaunch.ts';
import { sampleDocs } from './reconcilers.support.ts';
import type { RemoteController } from '../../src/core/bridge/remoteController.ts';

const WIDGETS: ResourceInfo = { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets', kind: 'Widget', namespaced: true };

function until(c: RemoteController, what: string, ok: () => boolean, timeoutMs = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!ok()) return false;
      sub.dispose();
      clearTimeout(timer);
      resolve();
      return true;
    };
    const sub = c.onDidChangeKeyState(() => void check());
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out waiting for ${what}: ${JSON.stringify(c.snapshot().keys.map((k) => [k.key, k.phase, k.lastOutcome]))}`));
    }, timeoutMs);
    check();
  });
}

describe('a Run Controller… instance watching every namespace, paused while the robustness checks run', { skip: (!haveGo() && 'go is not installed') || (!existsSync(sampleDir()) && 'samples/go-controller is not in this tree') }, () => {
  let cluster: TestCluster;
  let c: DynamicKubeClient;
  let ns: string;
  let bin: string;
  const launches = new GoLaunches();

  before(async () => {
    cluster = await getTestCluster();
    c = createDynamicClient(cluster.transport, { fieldManager: 'reconcile-lab-test' });
    await installCrd(cluster.transport, sampleDocs('crd.yaml')[0]!).catch((e: unknown) => {
      if (!/AlreadyExists|already exists/.test(String((e as Error).message))) throw e;
    });
    ns = await createNamespace(cluster.transport, 'gopaused');
    await c.create(WIDGETS, { apiVersion: 'lab.reconcile.dev/v1alpha1', kind: 'Widget', metadata: { name: 'real', namespace: ns }, spec: { data: { color: 'blue' } } });
    bin = buildGoSample();
  });
  after(() => launches.dispose());

  test('after the checks it shows only real keys again', async () => {
    const { r } = await launches.launch({ kubeconfigPath: cluster.kubeconfigPath, command: bin, args: [] });
    const ctl = r.controller;
    const real = `${ns}/real`;
    ctl.resume();
    await until(ctl, `${real} reconciled`, () => (ctl.keyState(real)?.reconciles ?? 0) > 0 && ctl.snapshot().keys.every((k) => k.phase === 'idle'));
    ctl.pause();
    const report = await runChecks({
      transport: cluster.transport,
      client: c,
      cluster: { name: 'test', local: true },
      primary: WIDGETS,
      keys: [real],
      convergenceBoundMs: 10_000,
      quietMs: 1_000,
      checks: ['runTwice'],
      go: { command: [bin], env: { KUBECONFIG: cluster.kubeconfigPath } },
      reconcilerSpec: { kind: 'go', command: [bin] },
    });
    assert.equal(report.totals.errors, 0, JSON.stringify(report.results));
    const scratch = () => ctl.keyBriefs().filter((b) => b.key.startsWith('rl-check-')).map((b) => `${b.key} ${b.phase}`);
    // A real object changed after the checks: its key is queued in the paused instance and must stay a key of it. The
    // program has one informer of Widgets over every namespace, so every event of the copies (their adds, updates and
    // deletes) reached it before this one.
    const before = ctl.keyState(real)!.reconciles;
    await c.patch(WIDGETS, ns, 'real', 'merge', { spec: { data: { color: 'green' } } });
    await until(ctl, `${real} queued`, () => ctl.keyState(real)?.phase === 'queued');
    assert.deepEqual(scratch(), [], 'the paused instance queued no scratch copy (it watches every namespace)');
    ctl.resume(); // as the editor does when the checks ended
    await until(ctl, 'the real key to be reconciled', () => ctl.keyState(real)?.phase === 'idle' && ctl.keyState(real)!.reconciles > before);
    assert.deepEqual(scratch(), []);
    assert.deepEqual(ctl.listedKeyBriefs().filter((b) => b.key.startsWith('rl-check-')), []);
    assert.ok(ctl.keyBriefs().some((b) => b.key === real), 'the real key stays');
    assert.equal(ctl.keyState(real)?.lastOutcome?.kind, 'success');
  });
});
