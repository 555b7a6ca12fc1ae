import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNamespace, getTestCluster } from './support/cluster.ts';
import { namespacedUserToken, tokenKubeconfig } from './support/limitedUser.ts';
import { runCliProcess } from './support/cli.ts';
import { client as makeClient, installLabCrd, type LabCrd } from './reconcilers.support.ts';
import type { KubeTransport } from '../../src/core/k8s/transport.ts';

const cli = runCliProcess;

/**
 * A user with only namespaced rights, as on a cluster that is not the lab's: a ServiceAccount (token from the
 * TokenRequest API) that may read and write Widgets and ConfigMaps in one namespace, but not list them cluster-wide,
 * not write a Widget's status, and not read Secrets. Its kubeconfig context names that namespace.
 */
describe('reconcile-lab CLI as a user with namespaced RBAC rights only', () => {
  let crd: LabCrd;
  let ns: string;
  let dir: string;
  let kubeconfig: string;
  let token: string;
  let admin: KubeTransport;

  before(async () => {
    const cluster = await getTestCluster();
    admin = cluster.transport;
    crd = await installLabCrd(admin);
    ns = await createNamespace(admin, 'limited');
    token = await namespacedUserToken(admin, ns, [
      { apiGroups: [crd.group], resources: ['widgets'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] },
    ]);
    await makeClient(admin).create(crd.gvr, { apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name: 'w', namespace: ns }, spec: { data: { color: 'blue' } } });
    const server = cluster.kubeConfig.getCurrentCluster()!;
    dir = mkdtempSync(join(tmpdir(), 'rl-limited-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, tokenKubeconfig(server, token, [{ name: 'dev', namespace: ns }, { name: 'dev-default' }]), { mode: 0o600 });
  });

  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    // The lab reconciler's finalizer on w has no loop left to remove it: without this the namespace stays Terminating
    // on a shared cluster.
    await admin.json({ method: 'PATCH', path: `/apis/${crd.group}/v1alpha1/namespaces/${ns}/widgets/w`, body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' }).catch(() => {});
    await admin.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  });

  const widgets = () => ['--kubeconfig', kubeconfig, '--resource', `widgets.${crd.group}`];

  test('a cluster-wide list it may not do is said at once (not after the cache-sync timeout), with --namespace <the context\'s namespace>', async () => {
    for (const command of [['step', 'w'], ['run', '--duration', '30'], ['report']]) {
      const r = await cli([...command, ...widgets()]);
      assert.equal(r.code, 1, `${command[0]}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`You may not list (widgets\\.${crd.group.replace(/\./g, '\\.')}|configmaps) in all namespaces \\(403 Forbidden: `), `${command[0]}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`--namespace ${ns} \\(your context's namespace\\)`), `${command[0]}: ${r.stderr}`);
      assert.match(r.stderr, /kubectl auth can-i list \S+ --all-namespaces/, `${command[0]}: ${r.stderr}`);
      assert.ok(!r.stderr.includes(token) && !r.stdout.includes(token), 'the token appears nowhere');
      // One message: the reflector's WARN line with the same server text came just before it (step, run).
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, `${command[0]}: one line on stderr:\n${r.stderr}`);
      assert.match(r.stderr, /^reconcile-lab: You may not list /, `${command[0]}: ${r.stderr}`);
    }
    // -v keeps the reflector's own line (the detail of each attempt), before the same message.
    const verbose = await cli(['step', 'w', ...widgets(), '-v']);
    assert.equal(verbose.code, 1, verbose.stderr);
    assert.match(verbose.stderr, /^WARN list\/watch failed .*forbidden[^\n]*\n(.*\n)*reconcile-lab: You may not list /m);
  });

  test('a token the server does not accept: exit 3, what it means and what to do, the token in no output', async () => {
    const bad = join(dir, 'bad-token');
    writeFileSync(bad, readFileSync(kubeconfig, 'utf8').replace(token, `${token.slice(0, -8)}AAAAAAAA`), { mode: 0o600 });
    const r = await cli(['inspect', 'w', '--kubeconfig', bad, '--resource', `widgets.${crd.group}`]);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /Unauthorized\. The server did not accept the credentials of the kubeconfig's user .*renew them and try again/);
    assert.ok(!r.stderr.includes(token.slice(0, -8)) && !r.stdout.includes(token.slice(0, -8)), 'no part of the token appears');
  });

  test('check refuses before writing anything: the scratch namespaces it needs are beyond these rights (exit 5)', async () => {
    const r = await cli(['check', 'w', ...widgets(), '--confirm-cluster', 'dev']);
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /your user may not create or delete namespaces \(check with: kubectl auth can-i create namespaces\)/);
    assert.match(r.stderr, /the local control plane/);
  });

  test('a namespace it may not list (the context without a namespace: default) is named, with a Role to ask for', async () => {
    const r = await cli(['inspect', 'w', ...widgets(), '--context', 'dev-default']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`You may not list widgets\\.${crd.group.replace(/\./g, '\\.')} in namespace default`));
    assert.match(r.stderr, /a Role and RoleBinding there/);
    assert.match(r.stderr, /kubectl auth can-i list \S+ -n default/);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, `one message, no WARN line before it:\n${r.stderr}`);
  });

  test('in its namespace the loop runs; a forbidden status write names the verb, the subresource, the namespace and the can-i line; nothing else is lost', async () => {
    const r = await cli(['run', ...widgets(), '-n', ns, '--json', '--duration', '4']);
    assert.equal(r.code, 1, `the last reconcile of ${ns}/w failed: ${r.stderr}`);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { kind?: string; key?: string; outcome?: { kind: string; message?: string }; summary?: unknown });
    const ends = lines.filter((e) => e.kind === 'reconcileEnd' && e.key === `${ns}/w`);
    assert.ok(ends.length >= 2, `the key was retried with backoff, the loop kept running: ${r.stdout.slice(-1500)}`);
    const message = ends.at(-1)!.outcome!.message ?? '';
    assert.match(message, /cannot update resource "widgets\/status"/);
    assert.match(message, new RegExp(`Missing right: update on widgets\\.${crd.group.replace(/\./g, '\\.')}/status in namespace ${ns} \\(ask for it in a Role\\)`));
    assert.match(message, new RegExp(`kubectl auth can-i update widgets\\.${crd.group.replace(/\./g, '\\.')} --subresource=status -n ${ns}`));
    assert.ok(lines.at(-1)!.summary, 'the run ended with its summary');
    // The writes it may do were done: the child ConfigMap exists.
    const cm = await makeClient(admin).get({ group: '', version: 'v1', resource: 'configmaps' }, ns, 'w-config');
    assert.equal(cm.metadata.name, 'w-config');
    assert.ok(!r.stderr.includes(token) && !r.stdout.includes(token), 'the token appears nowhere');
  });
});
