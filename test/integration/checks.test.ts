import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createNamespace, getTestCluster, type TestCluster } from './support/cluster.ts';
import { client as makeClient, installLabCrd, ROOT, sampleWidgets, type LabCrd } from './reconcilers.support.ts';
import type { DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import { runChecks, CheckRefusedError } from '../../src/core/checks/runChecks.ts';
import type { CheckKind, CheckReport, RunChecksOptions } from '../../src/core/checks/types.ts';
import { createLabReconciler } from '../../src/core/reconcilers/labReconciler.ts';
import { createModuleReconciler } from '../../src/core/reconcilers/moduleReconciler.ts';
import { createExecReconciler } from '../../src/core/reconcilers/execReconciler.ts';
import { predicatesFromExport } from '../../src/core/controller/predicateSpec.ts';

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };

describe('robustness checks (issue 11) on the real control plane', () => {
  let cluster: TestCluster;
  let c: DynamicKubeClient;
  let crd: LabCrd;
  let ns: string;

  before(async () => {
    cluster = await getTestCluster();
    c = makeClient(cluster.transport);
    crd = await installLabCrd(cluster.transport);
    ns = await createNamespace(cluster.transport, 'checks');
    for (const w of sampleWidgets(crd, ns)) await c.create(crd.gvr, w);
  });

  function options(o: Partial<RunChecksOptions> & Pick<RunChecksOptions, 'createReconciler' | 'reconcilerSpec'>): RunChecksOptions {
    return {
      transport: cluster.transport,
      client: c,
      cluster: { name: 'test', local: true },
      primary: { ...crd.gvr, kind: 'Widget', namespaced: true },
      keys: [`${ns}/widget-ready`],
      convergenceBoundMs: 8_000,
      quietMs: 600,
      ...o,
    };
  }

  function summary(r: CheckReport): string {
    return r.results.map((x) => `${x.check}: ${x.status}${x.message ? ` (${x.message})` : ''}${x.findings.map((f) => `\n    ${f.severity} ${f.title}`).join('')}`).join('\n');
  }

  async function scratchLeft(): Promise<string[]> {
    return (await c.list(NAMESPACES, undefined, { labelSelector: 'checks.reconcile-lab.dev/scratch=true' })).items.filter((n) => !n.metadata.deletionTimestamp).map((n) => n.metadata.name!);
  }

  test('the lab reconciler: zero findings, copies cleaned up, the original untouched', async () => {
    const before = await c.get(crd.gvr, ns, 'widget-ready');
    const r = await runChecks(options({ createReconciler: () => createLabReconciler(), reconcilerSpec: { kind: 'lab' } }));
    assert.equal(r.findings.length, 0, summary(r));
    assert.equal(r.totals.errors, 0, summary(r));
    assert.equal(r.results.find((x) => x.check === 'crashAfterWrite')?.status, 'passed', summary(r));
    assert.deepEqual(await scratchLeft(), []);
    assert.equal((await c.get(crd.gvr, ns, 'widget-ready')).metadata.resourceVersion, before.metadata.resourceVersion);
  });

  test('refuses a cluster that is not the local control plane unless confirmed by name', async () => {
    await assert.rejects(runChecks(options({ cluster: { name: 'prod', local: false }, createReconciler: () => createLabReconciler(), reconcilerSpec: { kind: 'lab' } })), CheckRefusedError);
  });
});
