// A Run Controller… instance of the developer's Go controller that watches every namespace sees the robustness checks'
// scratch copies: the editor pauses it while the checks run and resumes it after. Afterwards it holds only real keys.
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
    assert.ok(scratch().length > 0, 'the paused instance queued the scratch copies (it watches every namespace)');
    // A real object changed while the checks ran: its key is queued in the paused instance and must stay a key of it.
    const before = ctl.keyState(real)!.reconciles;
    await c.patch(WIDGETS, ns, 'real', 'merge', { spec: { data: { color: 'green' } } });
    await until(ctl, `${real} queued`, () => ctl.keyState(real)?.phase === 'queued');
    ctl.resume(); // as the editor does when the checks ended
    await until(ctl, 'the scratch copies\' keys to leave and the real key to be reconciled', () => scratch().length === 0 && ctl.keyState(real)?.phase === 'idle' && ctl.keyState(real)!.reconciles > before);
    assert.deepEqual(ctl.listedKeyBriefs().filter((b) => b.key.startsWith('rl-check-')), []);
    assert.ok(ctl.keyBriefs().some((b) => b.key === real), 'the real key stays');
    assert.equal(ctl.keyState(real)?.lastOutcome?.kind, 'success');
  });
});
