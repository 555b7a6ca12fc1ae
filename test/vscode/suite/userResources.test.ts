// A user's own resources, not the samples: a cluster-scoped kind of another group with an irregular plural and two
// served versions (storage on the second), dotted names, a foreign finalizer holding an object in Terminating, and a
// module reconciler of the user's (TypeScript, in a folder of its own) that adds a finalizer, writes status and asks
// for a requeue. The views, the status bar and the commands must show and take cluster-scoped keys as they are
// ("name": no "/", no invented "default" namespace), on the group's preferred version.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ReconcileLab } from '../../../src/host/reconcileLab.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { installCrd } from '../../integration/support/cluster.ts';
import { shortKey } from '../../../src/core/k8s/keys.ts';
import { lab, labCluster, ok, run, treeLabel, uniqueName, waitUntil } from './support/lab.ts';

const FOREIGN = 'cleanup.thirdparty.dev/external-firewall';

const reconcilerSource = (finalizer: string) => `
// Secrets by the policy their label names: the loop watches Secrets for this index alone (the connect names only Policies).
export const indexes = [{ resource: 'secrets', name: 'policy', index: (s) => (s.metadata.labels?.policy ? [s.metadata.labels.policy] : []) }];
const SECRETS = { group: '', version: 'v1', resource: 'secrets' };
export async function reconcile(request, ctx) {
  const obj = await ctx.client.get(ctx.primary, request.namespace, request.name, ctx.signal);
  if (request.namespace !== undefined) throw new Error('a cluster-scoped key came with a namespace: ' + request.namespace);
  if (obj.metadata.deletionTimestamp) return {};
  const fins = obj.metadata.finalizers ?? [];
  if (!fins.includes('${finalizer}')) {
    await ctx.client.patch(ctx.primary, undefined, request.name, 'merge', { metadata: { resourceVersion: obj.metadata.resourceVersion, finalizers: [...fins, '${finalizer}'] } }, { signal: ctx.signal });
    return { requeueAfterMs: 1, reason: 'finalizer added' };
  }
  const secrets = ctx.cache.indexer(SECRETS).byIndex('policy', request.name).map((x) => x.metadata.name).sort().join(',');
  const status = { observedGeneration: obj.metadata.generation, phase: obj.spec.level > 5 ? 'Pending' : 'Active', secrets };
  if (JSON.stringify(obj.status) !== JSON.stringify(status)) await ctx.client.updateStatus(ctx.primary, { ...obj, status }, { signal: ctx.signal });
  return obj.spec.level > 5 ? { requeueAfterMs: 60000, reason: 'level above 5: waiting for approval' } : {};
}
`;

describe('a user\'s cluster-scoped kind with two versions and a module reconciler of their own', function () {
  this.timeout(180_000);
  let l: ReconcileLab;
  let dir = '';
  const group = `${uniqueName('sec')}.example.org`;
  const id = `policies.${group}`;
  const gvr = { group, version: 'v1', resource: 'policies' };
  const mine = 'allow.egress-to-db.v2';
  const approval = 'needs-approval';
  const stuck = 'deny-all';
  const long = `a-very-long-policy-name-${'x'.repeat(200)}.example.org`;
  const SECRETS = { group: '', version: 'v1', resource: 'secrets' };
  const credentials = uniqueName('db-credentials');

  before(async function () {
    this.timeout(120_000);
    l = await lab();
    const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
    await installCrd(labCluster().transport, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: id },
      spec: {
        group,
        scope: 'Cluster',
        names: { kind: 'Policy', plural: 'policies', singular: 'policy', listKind: 'PolicyList', shortNames: ['pol'] },
        versions: [
          { name: 'v1', served: true, storage: false, subresources: { status: {} }, schema },
          { name: 'v2beta1', served: true, storage: true, subresources: { status: {} }, schema },
        ],
      },
    });
    const { client } = labCluster();
    const policy = (name: string, level: number, finalizers?: string[]): KubeObject => ({ apiVersion: `${group}/v1`, kind: 'Policy', metadata: { name, ...(finalizers ? { finalizers } : {}) }, spec: { level } });
    await client.create(gvr, policy(mine, 3));
    await client.create(gvr, policy(approval, 7));
    await client.create(gvr, policy(long, 1));
    await client.create(gvr, policy(stuck, 9, [FOREIGN]));
    await client.delete(gvr, undefined, stuck);
    await client.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: credentials, namespace: 'default', labels: { policy: approval } }, stringData: { password: 'not-shown' } });
    dir = mkdtempSync(join(tmpdir(), 'rl-user-module-'));
    const modulePath = join(dir, 'policy-reconciler.ts');
    writeFileSync(modulePath, reconcilerSource(`${group}/cleanup`));
    ok(await run('reconcileLab.connect', { kubeconfig: labCluster().kubeconfigPath, resources: [id], reconcilerResource: id, reconcilerKind: 'module', reconcilerModulePath: modulePath }));
    await waitUntil(() => l.session?.list(id).length === 4, 'the four Policies cached');
  });

  after(async function () {
    this.timeout(60_000);
    await l?.disconnect();
    const { client } = labCluster();
    for (const p of (await client.list(gvr, undefined).catch(() => ({ items: [] as KubeObject[] }))).items) {
      if (p.metadata.finalizers?.length) await client.patch(gvr, undefined, p.metadata.name!, 'merge', { metadata: { finalizers: null } }).catch(() => {});
    }
    await client.delete({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' }, undefined, id).catch(() => {});
    await client.delete(SECRETS, 'default', credentials).catch(() => {});
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('watches the preferred version (v1), not the storage version', () => {
    assert.equal(l.session?.primaryResource, id);
    assert.equal(l.session?.primaryInfo?.version, 'v1');
    assert.equal(l.session?.primaryInfo?.namespaced, false);
  });

  it('the Resources tree lists the objects under the kind, without a namespace level', () => {
    l.resourcesTree.flush();
    const kind = l.resourcesTree.getChildren().find((n) => n.type === 'kind' && n.resource === id);
    assert.ok(kind, 'a kind row for the Policies');
    const rows = l.resourcesTree.getChildren(kind);
    assert.ok(rows.every((n) => n.type === 'object'), `no namespace rows: ${rows.map((n) => n.type).join(', ')}`);
    assert.deepEqual(rows.map((n) => treeLabel(l, n)).sort(), [mine, stuck, approval, long].sort());
    const stuckRow = rows.find((n) => treeLabel(l, n) === stuck)!;
    assert.match(String(l.resourcesTree.getTreeItem(stuckRow).description), /Terminating/);
  });

  it('the Work Queue and the status bar name cluster-scoped keys as they are', () => {
    l.queueTree.refresh();
    const keys = l.queueTree.getChildren().flatMap((n) => (n.type === 'queueKey' ? [n.key] : []));
    assert.deepEqual([...keys].sort(), [mine, stuck, approval, long].sort());
    for (const n of l.queueTree.getChildren()) {
      const item = l.queueTree.getTreeItem(n);
      const text = `${typeof item.label === 'string' ? item.label : (item.label?.label ?? '')} ${String(item.description ?? '')}`;
      assert.doesNotMatch(text, /(^|\s)\/|default\//, text);
    }
    assert.doesNotMatch(l.statusBar.text, /default\/|\s\/[a-z]/, l.statusBar.text);
  });

  it('a 240-character name is cut in the status bar (start…end), whole in the tree', async () => {
    const kind = l.resourcesTree.getChildren().find((n) => n.type === 'kind' && n.resource === id)!;
    const row = l.resourcesTree.getChildren(kind).find((n) => treeLabel(l, n) === long);
    assert.ok(row, 'the long name is a row of its own');
    ok(await run('reconcileLab.revealObject', { key: long, resource: id }));
    await waitUntil(() => l.statusBar.text.includes(shortKey(long)), 'the status bar names the selected long key, shortened', 15_000);
    assert.ok(l.statusBar.text.length < 160, l.statusBar.text);
    assert.ok(!l.statusBar.text.includes(long), 'not the whole name');
  });

  it('Step Reconcile on a cluster-scoped key: the module adds its finalizer, then writes status (with what its own index finds) and requeues', async () => {
    assert.ok(l.session?.resources.some((r) => r.id === 'secrets'), 'Secrets are watched because the module\'s index is on them');
    const first = ok(await run<{ step: { kind: string; outcome?: { kind: string } } }>('reconcileLab.stepReconcile', { key: approval, force: true }));
    assert.equal(first.step.kind, 'reconciled');
    const second = ok(await run<{ step: { kind: string; outcome?: { kind: string; reason?: string } } }>('reconcileLab.stepReconcile', { key: approval, force: true }));
    assert.equal(second.step.outcome?.kind, 'requeueAfter', JSON.stringify(second.step));
    const stored = await labCluster().client.get(gvr, undefined, approval);
    assert.ok(stored.metadata.finalizers?.includes(`${group}/cleanup`));
    assert.deepEqual(stored.status, { observedGeneration: 1, phase: 'Pending', secrets: credentials }, 'byIndex found the Secret labelled with the policy');
  });

  it('Dry-Run Reconcile on a cluster-scoped key persists nothing', async () => {
    const before = await labCluster().client.get(gvr, undefined, mine);
    const r = ok(await run<{ actions: Array<{ verb: string; key: string }>; summary: string }>('reconcileLab.dryRunReconcile', { key: mine, open: false }));
    assert.ok(r.actions.length >= 1, r.summary);
    assert.ok(r.actions.every((a) => a.key === mine), JSON.stringify(r.actions));
    assert.doesNotMatch(r.summary, /default\/|\s\/allow/, r.summary);
    const after = await labCluster().client.get(gvr, undefined, mine);
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
    assert.equal(after.metadata.finalizers, undefined);
  });

  it('Strip Finalizers releases the stuck cluster-scoped object', async () => {
    const r = ok(await run<{ removed: string[]; remaining: string[]; key: string }>('reconcileLab.stripFinalizers', { key: stuck, resource: id, finalizer: FOREIGN, confirmed: true }));
    assert.equal(r.key, stuck);
    assert.deepEqual(r.removed, [FOREIGN]);
    assert.deepEqual(r.remaining, []);
    await waitUntil(async () => !(await labCluster().client.list(gvr, undefined)).items.some((p) => p.metadata.name === stuck), 'the stuck Policy is gone');
  });

  it('a key given with a namespace is refused with a clear message', async () => {
    const r = await run('reconcileLab.stepReconcile', { key: `default/${mine}` });
    assert.ok(!r.ok, 'refused');
    assert.ok(!r.ok && r.reason === 'invalidArgument' && /is cluster-scoped: its keys have no namespace \(use "allow\.egress-to-db\.v2"/.test(r.message), r.ok ? '' : r.message);
    const dry = await run('reconcileLab.dryRunReconcile', { key: `default/${mine}`, resource: id, open: false });
    assert.ok(!dry.ok && dry.reason === 'invalidArgument', JSON.stringify(dry));
    assert.equal((await labCluster().client.get(gvr, undefined, mine)).metadata.finalizers, undefined, 'nothing ran');
    void vscode;
  });
});
