// A new user's cluster-scoped primary resource in the editor's views: a `Tenant` (cluster-scoped, with a finalizer of
// its own) whose module reconciler creates a ConfigMap of the same name in each of the tenant's namespaces. The
// Resources tree lists Tenants without a namespace level and shows the owned ConfigMaps, which live in other
// namespaces than their owner (it has none), under the Tenant, each named with its namespace; the Work Queue names
// the keys as they are; Inspect Cache vs Server, Dry-Run, Step and Strip Finalizers… take the bare name.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ReconcileLab } from '../../../src/host/reconcileLab.ts';
import type { ResourceNode } from '../../../src/host/views/resourcesTree.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { installCrd } from '../../integration/support/cluster.ts';
import { lab, labCluster, ok, run, testNamespace, tooltipText, treeLabel, uniqueName, waitUntil } from './support/lab.ts';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

const reconcilerSource = (finalizer: string) => `
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
export async function reconcile(request, ctx) {
  if (request.namespace !== undefined) throw new Error('a cluster-scoped key came with a namespace: ' + request.namespace);
  const t = await ctx.client.get(ctx.primary, undefined, request.name, ctx.signal);
  // Deletion: the cleanup is left to a person (the finalizer stays), so the Tenant stays Terminating.
  if (t.metadata.deletionTimestamp) return {};
  const fins = t.metadata.finalizers ?? [];
  if (!fins.includes('${finalizer}')) {
    await ctx.client.patch(ctx.primary, undefined, request.name, 'merge', { metadata: { resourceVersion: t.metadata.resourceVersion, finalizers: [...fins, '${finalizer}'] } }, { signal: ctx.signal });
    return { requeueAfterMs: 1, reason: 'finalizer added' };
  }
  for (const ns of t.spec.namespaces ?? []) {
    try {
      await ctx.client.get(CONFIGMAPS, ns, 'tenant-info', ctx.signal);
    } catch (e) {
      if (e.code !== 404) throw e;
      await ctx.client.create(CONFIGMAPS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'tenant-info', namespace: ns, ownerReferences: [{ apiVersion: t.apiVersion, kind: t.kind, name: t.metadata.name, uid: t.metadata.uid, controller: true, blockOwnerDeletion: true }] },
        data: { tenant: t.metadata.name },
      }, { signal: ctx.signal });
    }
  }
  return {};
}
`;

describe('a cluster-scoped primary resource (Tenant) owning namespaced ConfigMaps, in the views', function () {
  this.timeout(180_000);
  let l: ReconcileLab;
  let dir = '';
  let nsA = '';
  let nsB = '';
  /** A namespace of the tenant's that the connection does not watch. */
  let nsC = '';
  const group = `${uniqueName('platform')}.acme.io`;
  const id = `tenants.${group}`;
  const gvr = { group, version: 'v1', resource: 'tenants' };
  const finalizer = `${group}/cleanup`;

  function kindRow(resource: string): ResourceNode {
    l.resourcesTree.flush();
    const kind = l.resourcesTree.getChildren().find((n) => n.type === 'kind' && n.resource === resource);
    assert.ok(kind, `a kind row for ${resource}`);
    return kind;
  }
  function tenantRow(name: string): ResourceNode & { type: 'object' } {
    const row = l.resourcesTree.getChildren(kindRow(id)).find((n) => n.type === 'object' && n.key === name);
    assert.ok(row && row.type === 'object', `a row for Tenant ${name}`);
    return row;
  }

  before(async function () {
    this.timeout(120_000);
    l = await lab();
    nsA = await testNamespace('ext-tenant-a');
    nsB = await testNamespace('ext-tenant-b');
    nsC = await testNamespace('ext-tenant-c');
    await installCrd(labCluster().transport, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: id },
      spec: {
        group,
        scope: 'Cluster',
        names: { kind: 'Tenant', plural: 'tenants', singular: 'tenant', listKind: 'TenantList' },
        versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    });
    const tenant = (name: string): KubeObject => ({ apiVersion: `${group}/v1`, kind: 'Tenant', metadata: { name }, spec: { namespaces: [nsA, nsB, nsC] } });
    await labCluster().client.create(gvr, tenant('acme'));
    await labCluster().client.create(gvr, tenant('globex'));
    dir = mkdtempSync(join(tmpdir(), 'rl-tenant-module-'));
    const modulePath = join(dir, 'tenant-reconciler.mjs');
    writeFileSync(modulePath, reconcilerSource(finalizer));
    ok(await run('reconcileLab.connect', { kubeconfig: labCluster().kubeconfigPath, namespaces: [nsA, nsB], resources: [id, 'configmaps'], reconcilerResource: id, reconcilerKind: 'module', reconcilerModulePath: modulePath }));
    await waitUntil(() => l.session?.list(id).length === 2, 'the two Tenants cached');
  });

  after(async function () {
    this.timeout(60_000);
    await l?.disconnect();
    const { client } = labCluster();
    for (const t of (await client.list(gvr, undefined).catch(() => ({ items: [] as KubeObject[] }))).items) {
      if (t.metadata.finalizers?.length) await client.patch(gvr, undefined, t.metadata.name!, 'merge', { metadata: { finalizers: null } }).catch(() => {});
    }
    await client.delete({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' }, undefined, id).catch(() => {});
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the Work Queue lists the keys as bare names, queued by the initial list', async () => {
    assert.equal(l.session?.primaryInfo?.namespaced, false);
    await waitUntil(() => l.session?.queuedKeys().length === 2, 'both keys queued (paused loop)');
    l.queueTree.flush();
    const rows = l.queueTree.getChildren();
    const labels = rows.map((n) => String(l.queueTree.getTreeItem(n).label));
    assert.deepEqual([...labels].sort(), ['acme', 'globex']);
    const acme = rows.find((n) => n.type === 'queueKey' && n.key === 'acme')!;
    assert.equal(acme.id, 'q|acme');
    const why = l.queueTree.getChildren(acme).map((d) => (d.type === 'detail' ? `${d.label}: ${d.description}` : ''));
    assert.match(why[0] ?? '', /^queued because: initial list of acme \(rv \d+\), /, why.join('\n'));
  });

  it('Step This Key reconciles the bare key: the finalizer, then a ConfigMap in each of the tenant\'s namespaces', async () => {
    for (let i = 0; i < 3 && !(l.session?.get('configmaps', `${nsB}/tenant-info`)); i++) {
      const r = ok(await run<{ step: { kind: string; key?: string } }>('reconcileLab.stepReconcile', { key: 'acme', force: true }));
      assert.equal(r.step.kind, 'reconciled', JSON.stringify(r.step));
      await waitUntil(() => Boolean(l.session?.get(id, 'acme')?.metadata.finalizers?.includes(finalizer)), 'the finalizer is cached');
    }
    await waitUntil(() => Boolean(l.session?.get('configmaps', `${nsA}/tenant-info`) && l.session?.get('configmaps', `${nsB}/tenant-info`)), 'both ConfigMaps cached');
    for (const ns of [nsA, nsC]) assert.equal((await labCluster().client.get(CONFIGMAPS, ns, 'tenant-info')).metadata.ownerReferences?.[0]?.name, 'acme');
  });

  it('the Resources tree: Tenants right under their kind; the owned ConfigMaps under their Tenant, named with their namespace', () => {
    const rows = l.resourcesTree.getChildren(kindRow(id));
    assert.deepEqual(rows.map((n) => `${n.type} ${treeLabel(l, n)}`), ['object acme', 'object globex']);
    const acme = tenantRow('acme');
    assert.equal(acme.id, `o|${id}|acme`);
    assert.equal(l.resourcesTree.getParent(acme)?.type, 'kind');
    assert.equal(l.resourcesTree.nodeFor(id, 'acme'), acme);
    const item = l.resourcesTree.getTreeItem(acme);
    assert.equal(item.contextValue, 'reconcileLab:object:live:finalizers:primary');
    const children = l.resourcesTree.getChildren(acme).filter((n) => n.type === 'object');
    // Two ConfigMaps called tenant-info: told apart by their namespace (the owner has none to share with them). The
    // one in a namespace the connection does not watch is not shown (nor offered as a "not in cache" row).
    assert.deepEqual(
      children.map((n) => treeLabel(l, n)),
      [`ConfigMap ${nsA}/tenant-info`, `ConfigMap ${nsB}/tenant-info`],
    );
    assert.equal(new Set(children.map((n) => n.id)).size, 2);
    for (const c of children) assert.equal(l.resourcesTree.getParent(c), acme);
    // The ConfigMaps' own kind groups them by namespace: the two namespaces, no empty one.
    const cmGroups = l.resourcesTree.getChildren(kindRow('configmaps')).map((n) => (n.type === 'namespace' ? n.namespace : `${n.type}?`));
    assert.deepEqual([...cmGroups].sort(), [nsA, nsB].sort());
  });

  it('the Work Queue names the owned ConfigMaps that queued the Tenant again by namespace and name', async () => {
    const owned = new RegExp(`^queued because: add of owned ConfigMap ${nsA}/tenant-info \\(rv \\d+, this key's own write\\), `);
    const details = () => {
      l.queueTree.flush();
      const row = l.queueTree.getChildren().find((n) => n.type === 'queueKey' && n.key === 'acme');
      return row ? l.queueTree.getChildren(row).map((d) => (d.type === 'detail' ? `${d.label}: ${d.description}` : '')) : [];
    };
    await waitUntil(() => details().some((d) => owned.test(d)), 'the owned ConfigMap\'s add is a reason of acme').catch(() => {});
    assert.ok(details().some((d) => owned.test(d)), details().join('\n'));
  });

  it('Inspect Cache vs Server and Dry-Run take the bare key', async () => {
    const inspected = ok(await run<{ key: string; state: string }>('reconcileLab.inspectCache', { key: 'acme', resource: id, open: false }));
    assert.equal(inspected.key, 'acme');
    assert.equal(inspected.state, 'in-sync');
    const before = await labCluster().client.get(gvr, undefined, 'globex');
    const dry = ok(await run<{ key: string; actions: Array<{ verb: string; key: string }>; summary: string }>('reconcileLab.dryRunReconcile', { key: 'globex', open: false }));
    assert.equal(dry.key, 'globex');
    assert.deepEqual(dry.actions.map((a) => `${a.verb} ${a.key}`), ['patch globex'], dry.summary);
    assert.equal((await labCluster().client.get(gvr, undefined, 'globex')).metadata.resourceVersion, before.metadata.resourceVersion);
  });

  it('Step with no argument steps the Tenant selected in the Resources view, by its bare name', async () => {
    ok(await run('reconcileLab.revealObject', { key: 'globex', resource: id }));
    await waitUntil(() => l.stepTarget()?.key === 'globex', 'the selection is the step target', 10_000).catch(() => {});
    assert.deepEqual(l.stepTarget(), { key: 'globex', source: 'selection' });
    const r = ok(await run<{ step: { kind: string; key?: string }; summary: string }>('reconcileLab.stepReconcile', {}));
    assert.equal(r.step.key, 'globex');
    assert.match(r.summary, /^globex: requeue after /);
    await waitUntil(async () => Boolean((await labCluster().client.get(gvr, undefined, 'globex')).metadata.finalizers?.includes(finalizer)), 'globex got its finalizer');
  });

  it('a deleted Tenant is Terminating with its finalizer, and Strip Finalizers… on its finalizer row releases it', async () => {
    await labCluster().client.delete(gvr, undefined, 'acme');
    await waitUntil(() => Boolean(l.session?.get(id, 'acme')?.metadata.deletionTimestamp), 'the cache sees the deletion');
    const acme = tenantRow('acme');
    const item = l.resourcesTree.getTreeItem(acme);
    assert.match(String(item.description), new RegExp(`^Terminating \\d+s \\(${finalizer.replace(/\./g, '\\.')}\\)`));
    assert.equal(item.contextValue, 'reconcileLab:object:terminating:finalizers:primary');
    assert.match(tooltipText(l.resourcesTree.resolveTreeItem(new vscode.TreeItem('acme'), acme).tooltip), /^\*\*Tenant acme\*\*/);
    const fins = l.resourcesTree.getChildren(acme).find((n) => n.type === 'finalizers')!;
    const [row] = l.resourcesTree.getChildren(fins);
    assert.ok(row && row.type === 'finalizer' && row.key === 'acme' && row.finalizer === finalizer);
    assert.equal(l.resourcesTree.getTreeItem(row).description, 'blocking deletion');
    const r = ok(await run<{ key: string; removed: string[]; deleted: boolean }>('reconcileLab.stripFinalizers', { key: row.key, resource: row.resource, finalizer: row.finalizer, confirmed: true }));
    assert.equal(r.key, 'acme');
    assert.deepEqual(r.removed, [finalizer]);
    await waitUntil(() => !l.session?.get(id, 'acme'), 'the Tenant is gone from the cache');
  });
});
