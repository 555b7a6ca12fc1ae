import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { createNamespace, getTestCluster, installCrd } from './support/cluster.ts';
import { namespacedUserToken, tokenKubeconfig } from './support/limitedUser.ts';
import { runCliUntil } from './support/cli.ts';
import { buildGoSample, haveGo, sampleDir } from './support/goSample.ts';
import type { KubeTransport } from '../../src/core/k8s/transport.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';

/**
 * The Go sample controller run by a user with namespaced rights only, as on a shared cluster: it may read Widgets and
 * ConfigMaps in one namespace, but not list them cluster-wide, not patch a Widget and not write its status.
 */
describe('reconcile-lab CLI --go as a user with namespaced RBAC rights only', { skip: (!haveGo() && 'go is not installed') || (!existsSync(sampleDir()) && 'samples/go-controller is not in this tree') }, () => {
  let admin: KubeTransport;
  let ns: string;
  let dir: string;
  let kubeconfig: string;
  let token: string;
  let bin: string;

  before(async () => {
    const cluster = await getTestCluster();
    admin = cluster.transport;
    bin = buildGoSample();
    await installCrd(admin, parseAllDocuments(readFileSync(join(sampleDir(), '..', 'crd.yaml'), 'utf8'))[0]!.toJS() as KubeObject);
    ns = await createNamespace(admin, 'limited-go');
    token = await namespacedUserToken(admin, ns, [
      { apiGroups: ['lab.reconcile.dev'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update'] },
    ]);
    await admin.json({ method: 'POST', path: `/apis/lab.reconcile.dev/v1alpha1/namespaces/${ns}/widgets`, body: { apiVersion: 'lab.reconcile.dev/v1alpha1', kind: 'Widget', metadata: { name: 'w' }, spec: { data: { a: 'b' } } } });
    dir = mkdtempSync(join(tmpdir(), 'rl-limited-go-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, tokenKubeconfig(cluster.kubeConfig.getCurrentCluster()!, token, [{ name: 'dev', namespace: ns }]), { mode: 0o600 });
  });

  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await admin.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  });

  test('a manager cache that may not list cluster-wide is said at once with the missing right (it ran silently and ended "0 keys, no error")', async () => {
    // Kept running 5 s after the first warning: the informer retries meanwhile, and each retry must not say it again.
    const r = await runCliUntil(['run', '--kubeconfig', kubeconfig, '--go', bin], (_, err) => err.includes("the program's cache may not list"), 'the cache warning', { thenMs: 5_000 });
    assert.match(r.stderr, /⚠ the program's cache may not list (configmaps|widgets\.lab\.reconcile\.dev) in all namespaces \(403 Forbidden\)\. Missing right: list on \S+ cluster-wide \(ask for it in a ClusterRole\); check with: kubectl auth can-i list \S+ --all-namespaces\./, r.stderr);
    assert.match(r.stderr, /limit the manager's cache to namespaces you may list/);
    const said = r.stderr.match(/⚠ the program's cache may not list configmaps in all namespaces/g) ?? [];
    assert.ok(said.length <= 1, `said once per resource and scope, not at every retry of the informer: ${r.stderr}`);
    assert.ok(!r.stderr.includes(token) && !r.stdout.includes(token), 'the token appears nowhere');
  });

  test('with its cache in the one namespace, the loop runs; a write RBAC refuses names the missing right and the can-i line', async () => {
    const endsOfW = (out: string) => out.split('\n').filter((l) => l.includes('"kind":"reconcileEnd"') && l.includes(`"key":"${ns}/w"`)).length;
    const r = await runCliUntil(['run', '--kubeconfig', kubeconfig, '--go', `${bin} -namespace ${ns}`, '--json'], (out) => endsOfW(out) >= 2, `two reconciles of ${ns}/w`);
    assert.doesNotMatch(r.stderr, /the program's cache may not/, r.stderr);
    const ends = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { kind?: string; key?: string; outcome?: { kind: string; message?: string } }).filter((e) => e.kind === 'reconcileEnd' && e.key === `${ns}/w`);
    assert.ok(ends.length >= 2, `retried with backoff, the loop kept running: ${r.stdout.slice(-1500)}`);
    const message = ends.at(-1)!.outcome!.message ?? '';
    assert.match(message, /is forbidden: User "system:serviceaccount:[^"]+" cannot (patch|update) resource "widgets(\/status)?"/);
    assert.match(message, new RegExp(`Missing right: (patch|update) on widgets\\.lab\\.reconcile\\.dev(/status)? in namespace ${ns} \\(ask for it in a Role\\); check with: kubectl auth can-i (patch|update) widgets\\.lab\\.reconcile\\.dev (--subresource=status )?-n ${ns}`));
    assert.ok(!r.stderr.includes(token) && !r.stdout.includes(token), 'the token appears nowhere');
  });
});
