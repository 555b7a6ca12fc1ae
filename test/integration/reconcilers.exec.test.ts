import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveBinaries } from '../../src/core/controlplane/localControlPlane.ts';
import { createNamespace, getTestCluster } from './support/cluster.ts';
import { client as makeClient, CONFIGMAPS, installLabCrd, ROOT, sampleWidgets, type LabCrd } from './reconcilers.support.ts';
import { createExecReconciler } from '../../src/core/reconcilers/execReconciler.ts';
import { createReconcileContext, staticCache } from '../../src/core/actions/context.ts';
import { recordingClient, type DynamicKubeClient, type WriteRecord } from '../../src/core/k8s/dynamicClient.ts';
import { ApiError, isNotFound } from '../../src/core/k8s/client.ts';
import { conditionOf, type KubeObject } from '../../src/core/k8s/objects.ts';
import { createLogger } from '../../src/core/log.ts';

const have = (cmd: string, args: string[], env?: NodeJS.ProcessEnv) => spawnSync(cmd, args, { stdio: 'ignore', env }).status === 0;

/**
 * PATH for the sample: kubectl from the control plane's multicall binary (same version as the apiserver,
 * present wherever the integration tests can run), else whatever kubectl is on PATH.
 */
let wrapperDir: string | undefined;
async function toolPath(): Promise<string> {
  try {
    const [bin] = (await resolveBinaries()).apiserver;
    if (bin && have(bin, ['kubectl', 'version', '--client'])) {
      const dir = (wrapperDir = mkdtempSync(join(tmpdir(), 'rl-kubectl-')));
      writeFileSync(join(dir, 'kubectl'), `#!/bin/sh\nexec '${bin}' kubectl "$@"\n`, { mode: 0o755 });
      return `${dir}:${process.env.PATH ?? ''}`;
    }
  } catch {
    // no multicall binary: fall back to PATH
  }
  return process.env.PATH ?? '';
}
const PATH = await toolPath();
const tools = have('kubectl', ['version', '--client'], { ...process.env, PATH }) && have('jq', ['--version']);

// samples/exec-reconciler.sh needs kubectl and jq; without them this suite is skipped (the exec protocol
// itself is covered by test/unit/reconcilers/execReconciler.test.ts with small bash scripts).
describe('samples/exec-reconciler.sh (kubectl + jq) through the exec reconciler', { skip: tools ? false : 'kubectl or jq not installed' }, () => {
  let c: DynamicKubeClient;
  let crd: LabCrd;
  let ns: string;
  let kubeconfigPath: string;

  before(async () => {
    const cluster = await getTestCluster();
    kubeconfigPath = cluster.kubeconfigPath;
    c = makeClient(cluster.transport);
    crd = await installLabCrd(cluster.transport);
    ns = await createNamespace(cluster.transport, 'exec');
    for (const w of sampleWidgets(crd, ns)) await c.create(crd.gvr, w);
  });

  after(() => {
    if (wrapperDir) rmSync(wrapperDir, { recursive: true, force: true });
  });

  async function reconcile(name: string, dryRun = false) {
    const writes: WriteRecord[] = [];
    const logs: string[] = [];
    const r = createExecReconciler({ command: [join(ROOT, 'samples/exec-reconciler.sh')], kubeconfigPath, timeoutMs: 60_000, env: { PATH } });
    const ctx = createReconcileContext({
      client: recordingClient(c, { dryRun, onWrite: (w) => writes.push(w) }),
      primary: crd.gvr,
      dryRun,
      log: createLogger((_l, msg) => logs.push(msg)),
    });
    try {
      const result = await r.reconcile({ key: `${ns}/${name}`, namespace: ns, name }, ctx);
      return { result, writes, logs };
    } finally {
      r.dispose();
    }
  }

  test('ready: child created, finalizer added, status written by the runner; the second run writes nothing', async () => {
    const first = await reconcile('widget-ready');
    assert.deepEqual(first.result, {});
    assert.ok(first.logs.includes('created ConfigMap widget-ready-config'), first.logs.join('\n'));
    const w = await c.get(crd.gvr, ns, 'widget-ready');
    assert.ok(w.metadata.finalizers?.includes('lab.reconcile.dev/cleanup'));
    assert.equal(conditionOf(w, 'Ready')?.status, 'True');
    const child = await c.get(CONFIGMAPS, ns, 'widget-ready-config');
    assert.deepEqual(child.data, { color: 'blue', size: 'medium' });
    assert.equal(child.metadata.ownerReferences?.[0]?.uid, w.metadata.uid);

    const second = await reconcile('widget-ready');
    assert.deepEqual(second.result, {});
    assert.deepEqual(second.logs, []);
    assert.deepEqual(second.writes, [], 'status unchanged: not rewritten');
    assert.equal((await c.get(CONFIGMAPS, ns, 'widget-ready-config')).metadata.resourceVersion, child.metadata.resourceVersion);
    assert.equal((await c.get(crd.gvr, ns, 'widget-ready')).metadata.resourceVersion, w.metadata.resourceVersion);
  });

  test('dependency missing: delayed requeue with a reason, Ready=False', async () => {
    const { result } = await reconcile('widget-waiting');
    assert.equal(result.requeueAfterMs, 15000);
    assert.match(result.reason ?? '', /DependencyMissing: waiting for ConfigMap .*widget-waiting-settings/);
    assert.equal(conditionOf(await c.get(crd.gvr, ns, 'widget-waiting'), 'Ready')?.reason, 'DependencyMissing');
    await assert.rejects(c.get(CONFIGMAPS, ns, 'widget-waiting-config'), isNotFound);
  });

  test('dry-run: the script passes --dry-run=server, the runner forces dryRun on the status write: nothing persists', async () => {
    const before = await c.get(crd.gvr, ns, 'widget-stuck');
    const { result, logs, writes } = await reconcile('widget-stuck', true);
    assert.deepEqual(result, {});
    assert.ok(logs.includes('created ConfigMap widget-stuck-config'));
    assert.ok(writes.every((w) => w.dryRun));
    await assert.rejects(c.get(CONFIGMAPS, ns, 'widget-stuck-config'), isNotFound);
    const after = await c.get(crd.gvr, ns, 'widget-stuck');
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
    assert.deepEqual(after.metadata.finalizers, ['legacy.example.com/external-dns']);
  });

  test('deletion: cleanup and finalizer removal', async () => {
    await c.delete(crd.gvr, ns, 'widget-ready');
    const { logs } = await reconcile('widget-ready');
    assert.deepEqual(logs, ['deleted ConfigMap widget-ready-config', 'removed finalizer lab.reconcile.dev/cleanup']);
    await assert.rejects(c.get(crd.gvr, ns, 'widget-ready'), isNotFound);
    await assert.rejects(c.get(CONFIGMAPS, ns, 'widget-ready-config'), isNotFound);
  });
});

// The status an exec program returns is computed from the object it was given, which may be a stale cache copy.
describe('exec reconciler: a status computed from a stale object is not written onto a newer spec', () => {
  let c: DynamicKubeClient;
  let crd: LabCrd;
  let ns: string;
  let dir: string;

  before(async () => {
    const cluster = await getTestCluster();
    c = makeClient(cluster.transport);
    crd = await installLabCrd(cluster.transport);
    ns = await createNamespace(cluster.transport, 'exec-stale');
    dir = mkdtempSync(join(tmpdir(), 'rl-exec-stale-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the cache lags one spec change behind the server: 409, the status is not written; a fresh view writes it', async () => {
    // A user's program: reports the generation and spec it was given, as observedGeneration and a message.
    const program = join(dir, 'report-spec.mjs');
    writeFileSync(
      program,
      `let input = '';\nfor await (const b of process.stdin) input += b;\nconst { object } = JSON.parse(input);\n` +
        `console.log(JSON.stringify({ status: { observedGeneration: object.metadata.generation, childName: 'color-' + object.spec.data.color } }));\n`,
    );
    await c.create(crd.gvr, { apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name: 'w', namespace: ns }, spec: { data: { color: 'blue' } } });
    const stale = await c.get(crd.gvr, ns, 'w');
    await c.patch(crd.gvr, ns, 'w', 'merge', { spec: { data: { color: 'red' } } });
    const r = createExecReconciler({ command: [process.execPath, program] });
    const writes: WriteRecord[] = [];
    const run = (cached: KubeObject) =>
      r.reconcile(
        { key: `${ns}/w`, namespace: ns, name: 'w' },
        createReconcileContext({ client: recordingClient(c, { dryRun: false, onWrite: (w) => writes.push(w) }), primary: crd.gvr, cache: staticCache([{ gvr: crd.gvr, objects: [cached] }]) }),
      );
    try {
      await assert.rejects(run(stale), (e: unknown) =>
        e instanceof ApiError && e.code === 409 &&
        e.message === `${process.execPath}: the spec of ${ns}/w changed (generation 1 → 2) between the object the program was given and the status write (a stale cache, or an edit while it ran): the status it returned is about the old spec and was not written; reconciling again`);
      assert.deepEqual(writes, []);
      assert.equal((await c.get(crd.gvr, ns, 'w')).status, undefined, 'the old spec is not reported as observed');

      assert.deepEqual(await run(await c.get(crd.gvr, ns, 'w')), {});
      assert.deepEqual((await c.get(crd.gvr, ns, 'w')).status, { observedGeneration: 2, childName: 'color-red' });
    } finally {
      r.dispose();
    }
  });
});
