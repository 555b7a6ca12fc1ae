// `reconcile-lab run` while kube-apiserver goes away and comes back, on a PRIVATE control plane (the shared one is
// not disturbed): the loop keeps its keys and backoff counters, the outage is said once each way (not a line per
// retry), and what was created meanwhile is reconciled after the informer resumes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNamespace, installCrd, startPrivateCluster, testCrd, waitUntil, type TestCluster } from './support/cluster.ts';
import { CLI_MAIN } from './support/cli.ts';
import { buildGoSample, haveGo, sampleDir } from './support/goSample.ts';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import type { LocalControlPlane } from '../../src/core/controlplane/localControlPlane.ts';

const group = 'cli-outage-test.reconcile.dev';


/** Starts the CLI with `args`; `out` collects its output as it comes, `closed` resolves with its exit code. */
function startCli(args: string[]) {
  const p = spawn(process.execPath, [CLI_MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  p.stdout.on('data', (b) => (out.stdout += b));
  p.stderr.on('data', (b) => (out.stderr += b));
  const closed = new Promise<number | null>((resolve) => p.on('close', resolve));
  return { p, out, closed };
}
describe('reconcile-lab run across a kube-apiserver outage', () => {
  let c: TestCluster & { controlPlane: LocalControlPlane };
  let ns: string;
  let dir: string;
  let script: string;

  before(async () => {
    c = await startPrivateCluster();
    await installCrd(c.transport, testCrd({ group, kind: 'Widget', plural: 'widgets' }));
    ns = await createNamespace(c.transport, 'outage');
    dir = mkdtempSync(join(tmpdir(), 'rl-outage-'));
    // "bad" always fails (its backoff grows), "later" asks to be requeued, anything else is done.
    script = join(dir, 'reconcile.sh');
    writeFileSync(
      script,
      `#!/bin/sh\ncat >/dev/null\nif [ "$RECONCILE_NAME" = bad ]; then echo '{"error":"always failing"}'; exit 0; fi\nif [ "$RECONCILE_NAME" = later ]; then echo '{"requeueAfterMs":2000,"reason":"poll"}'; exit 0; fi\necho '{}'\n`,
    );
    chmodSync(script, 0o755);
    for (const name of ['ok', 'bad', 'later']) await create(name);
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await c?.controlPlane.stop();
  });

  const create = (name: string) => c.transport.json({ method: 'POST', path: `/apis/${group}/v1/namespaces/${ns}/widgets`, body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name }, spec: {} } });

  test('the loop rides it out: keys and backoff counters kept, one line when the server goes and one when it answers, the object created meanwhile reconciled', async () => {
    const { p, out, closed } = startCli(['run', '--kubeconfig', c.kubeconfigPath, '--resource', `widgets.${group}`, '-n', ns, '--reconciler', `exec:${script}`]);
    try {
      const failures = () => [...out.stdout.matchAll(new RegExp(`■ ${ns}/bad ✗ error \\(failure (\\d+)\\)`, 'g'))].map((m) => Number(m[1]));
      await waitUntil(() => failures().length >= 3 && out.stdout.includes(`■ ${ns}/later requeue after`), 'the loop running, bad failing', 60_000);

      await c.controlPlane.stopApiServer({ graceMs: 0 });
      await waitUntil(() => /Cannot reach the API server/.test(out.stderr), 'the outage said', 60_000);
      const failuresBefore = Math.max(...failures());
      await c.controlPlane.startApiServer();
      // Created while the informer may still be backing off: it must arrive by a watch from the last RV or a relist.
      await create('created-after');
      await waitUntil(() => out.stdout.includes(`■ ${ns}/created-after done`), 'the object created after the outage reconciled', 120_000);
      await waitUntil(() => Math.max(...failures()) > failuresBefore, 'bad retried after the outage', 60_000);

      assert.equal(out.stderr.match(/Cannot reach the API server/g)?.length, 1, `said once, not per retry:\n${out.stderr}`);
      assert.match(out.stderr, /queued keys and their backoffs are kept/);
      assert.equal(out.stderr.match(/The API server answers again/g)?.length, 1, out.stderr);
      assert.doesNotMatch(out.stderr, /\n\s+at /, 'no stack trace');
      // The backoff counter went on from where it was (a relist does not reset it: controller-runtime neither).
      const after = failures().filter((_, i, all) => i >= all.indexOf(failuresBefore));
      assert.deepEqual(after, after.map((_, i) => failuresBefore + i), `failure numbers continue: ${failures().join(', ')}`);
    } finally {
      p.kill('SIGINT');
    }
    const code = await closed;
    assert.match(out.stdout, /Summary: /, 'the run ended with its summary');
    assert.equal(code, 1, 'bad ended in error');
  });

  test('run --go: the Go program talks to the server itself; the CLI\'s probe still says the outage once each way', { skip: (!haveGo() && 'go is not installed') || (!existsSync(sampleDir()) && 'samples/go-controller is not in this tree') }, async () => {
    const bin = buildGoSample();
    const crd = parseAllDocuments(readFileSync(join(sampleDir(), '..', 'crd.yaml'), 'utf8'))[0]!.toJS() as KubeObject;
    await installCrd(c.transport, crd);
    const goNs = await createNamespace(c.transport, 'outage-go');
    const widget = (name: string) => c.transport.json({ method: 'POST', path: `/apis/lab.reconcile.dev/v1alpha1/namespaces/${goNs}/widgets`, body: { apiVersion: 'lab.reconcile.dev/v1alpha1', kind: 'Widget', metadata: { name }, spec: { data: { a: 'b' } } } });
    await widget('before');
    const { p, out, closed } = startCli(['run', '--kubeconfig', c.kubeconfigPath, '--go', bin]);
    try {
      await waitUntil(() => out.stdout.includes(`■ ${goNs}/before done`), 'the Go controller reconciled before the outage', 90_000);
      await c.controlPlane.stopApiServer({ graceMs: 0 });
      await waitUntil(() => /Cannot reach the API server/.test(out.stderr), 'the outage said while only the Go program talks to the server', 60_000);
      await c.controlPlane.startApiServer();
      await waitUntil(() => /The API server answers again/.test(out.stderr), 'the return said', 60_000);
      await widget('after');
      await waitUntil(() => new RegExp(`■ ${goNs}/after done`).test(out.stdout), 'the Widget created after the outage reconciled by the Go program', 120_000);
      assert.equal(out.stderr.match(/Cannot reach the API server/g)?.length, 1, out.stderr);
      assert.equal(out.stderr.match(/The API server answers again/g)?.length, 1, out.stderr);
    } finally {
      p.kill('SIGINT');
    }
    await closed;
    assert.match(out.stdout, /Summary: /, 'the run ended with its summary');
  });
});
