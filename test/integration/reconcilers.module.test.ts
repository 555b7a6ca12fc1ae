import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNamespace, getTestCluster } from './support/cluster.ts';
import { client as makeClient, CONFIGMAPS, installLabCrd, ROOT, sampleWidgets, type LabCrd } from './reconcilers.support.ts';
import { createModuleReconciler } from '../../src/core/reconcilers/moduleReconciler.ts';
import { createReconcileContext } from '../../src/core/actions/context.ts';
import { recordingClient, type DynamicKubeClient, type WriteRecord } from '../../src/core/k8s/dynamicClient.ts';

describe('samples/module-reconciler.ts through the module reconciler', () => {
  let c: DynamicKubeClient;
  let crd: LabCrd;
  let ns: string;

  before(async () => {
    const cluster = await getTestCluster();
    c = makeClient(cluster.transport);
    crd = await installLabCrd(cluster.transport);
    ns = await createNamespace(cluster.transport, 'module');
    for (const w of sampleWidgets(crd, ns)) await c.create(crd.gvr, w);
  });

  async function reconcile(r: ReturnType<typeof createModuleReconciler>, name: string) {
    const writes: WriteRecord[] = [];
    const ctx = createReconcileContext({ client: recordingClient(c, { dryRun: false, onWrite: (w) => writes.push(w) }), primary: crd.gvr });
    const result = await r.reconcile({ key: `${ns}/${name}`, namespace: ns, name }, ctx);
    return { result, writes };
  }

  test('the sample reconciles the lab scenario idempotently', async () => {
    const r = createModuleReconciler({ path: join(ROOT, 'samples/module-reconciler.ts') });
    const first = await reconcile(r, 'widget-ready');
    assert.deepEqual(first.result, {});
    assert.deepEqual(first.writes.map((w) => `${w.verb}${w.subresource ? '/' + w.subresource : ''} ${w.gvr.resource}`), ['create configmaps', 'update/status widgets']);
    const child = await c.get(CONFIGMAPS, ns, 'widget-ready-module');
    assert.deepEqual(child.data, { color: 'blue', size: 'medium' });
    const second = await reconcile(r, 'widget-ready');
    assert.deepEqual(second.writes, []);
    assert.equal((await c.get(CONFIGMAPS, ns, 'widget-ready-module')).metadata.resourceVersion, child.metadata.resourceVersion);
    const waiting = await reconcile(r, 'widget-waiting');
    assert.equal(waiting.result.requeueAfterMs, 10_000);
    assert.match(waiting.result.reason ?? '', /waiting for ConfigMap widget-waiting-settings/);
    r.dispose();
  });

  test('an edited copy is reloaded between reconciles (new behaviour without restarting)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-module-it-'));
    const copy = join(dir, 'reconciler.ts');
    const src = readFileSync(join(ROOT, 'samples/module-reconciler.ts'), 'utf8').replace("from '../src/core/controller/reconcile.ts'", `from ${JSON.stringify(join(ROOT, 'src/core/controller/reconcile.ts'))}`);
    writeFileSync(copy, src);
    const r = createModuleReconciler({ path: copy });
    await reconcile(r, 'widget-stuck');
    assert.deepEqual((await c.get(CONFIGMAPS, ns, 'widget-stuck-module')).data, { color: 'red' });
    writeFileSync(copy, src.replace('const desired = spec.data ?? {};', "const desired = { ...(spec.data ?? {}), edited: 'yes' };"));
    const t = Date.now() / 1000 + 5;
    utimesSync(copy, t, t);
    const { writes } = await reconcile(r, 'widget-stuck');
    assert.deepEqual(writes.map((w) => `${w.verb} ${w.gvr.resource}`), ['update configmaps']);
    assert.deepEqual((await c.get(CONFIGMAPS, ns, 'widget-stuck-module')).data, { color: 'red', edited: 'yes' });
    r.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
});
