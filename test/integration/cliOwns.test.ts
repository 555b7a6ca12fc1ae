import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNamespace, getTestCluster, installCrd, testCrd, uniqueName } from './support/cluster.ts';
import { runCliProcess, startCliProcess } from './support/cli.ts';
import { client as makeClient, CONFIGMAPS } from './reconcilers.support.ts';
import type { DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { isNotFound } from '../../src/core/k8s/client.ts';

const cli = runCliProcess;

type Entry = { kind: string; key?: string; triggers?: Array<{ kind: string; event?: string; child?: string; resource?: string }> };

/** Polls `fn` every 100 ms until it returns a value (not undefined), or fails after `ms`. */
async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('reconcile-lab run / step: owned children (--owns) and bare --resource names against a real kube-apiserver', () => {
  let c: DynamicKubeClient;
  let kubeconfig: string;
  let ns: string;
  let group: string;
  let plural: string;
  let kind: string;
  let dir: string;

  before(async () => {
    const cluster = await getTestCluster();
    kubeconfig = cluster.kubeconfigPath;
    c = makeClient(cluster.transport);
    // A plural only this suite serves, so that the bare name is unambiguous on the shared control plane.
    kind = `Order${uniqueName('x').slice(2)}`;
    plural = `${kind.toLowerCase()}s`;
    group = `${uniqueName('shop')}.example.io`;
    await installCrd(cluster.transport, testCrd({ group, kind, plural }));
    ns = await createNamespace(cluster.transport, 'cli-owns');
    await c.create({ group, version: 'v1', resource: plural }, { apiVersion: `${group}/v1`, kind, metadata: { name: 'cart', namespace: ns }, spec: { items: 2 } });
    dir = mkdtempSync(join(tmpdir(), 'rl-cli-owns-'));
    return () => rmSync(dir, { recursive: true, force: true });
  });

  /** Creates `<name>-child`, a ConfigMap whose controller owner is the primary, when it is missing. */
  const childMaker = (file: string, kindName: string) => {
    const path = join(dir, file);
    const body = `
async function reconcileOnce(request, ctx) {
  let obj;
  try { obj = await ctx.client.get(ctx.primary, request.namespace, request.name, ctx.signal); } catch (e) { if (e.code === 404) return {}; throw e; }
  const cm = { group: '', version: 'v1', resource: 'configmaps' };
  try { await ctx.client.get(cm, request.namespace, request.name + '-child', ctx.signal); return {}; } catch (e) { if (e.code !== 404) throw e; }
  await ctx.client.create(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: request.name + '-child', namespace: request.namespace,
    ownerReferences: [{ apiVersion: obj.apiVersion, kind: ${JSON.stringify(kindName)}, name: obj.metadata.name, uid: obj.metadata.uid, controller: true }] }, data: { items: String(obj.spec.items) } });
  return {};
}
export async function reconcile(request, ctx) { return reconcileOnce(request, ctx); }
`;
    writeFileSync(path, body);
    return path;
  };

  test('run with a module reconciler owns its ConfigMaps: deleting the child reconciles the owner, which recreates it', async () => {
    const module = childMaker('orders.mjs', kind);
    const p = startCliProcess(['run', '--kubeconfig', kubeconfig, '--resource', `${plural}.${group}`, '-n', ns, '--reconciler', `module:${module}`, '--json', '--duration', '60']);
    try {
      const first = await until('the child created by the first reconcile', async () => {
        try {
          return await c.get(CONFIGMAPS, ns, 'cart-child');
        } catch (e) {
          if (isNotFound(e)) return undefined;
          throw e;
        }
      });
      // The child's ADD has reached the loop's ConfigMap informer (an owned event enqueued the owner) before it is deleted.
      await until('the owned add of the child', async () => (/"kind":"owned"/.test(p.stdout()) ? true : undefined));
      await c.delete(CONFIGMAPS, ns, 'cart-child');
      const second = await until('the child recreated', async () => {
        try {
          const cm = await c.get(CONFIGMAPS, ns, 'cart-child');
          return cm.metadata.uid !== first.metadata.uid ? cm : undefined;
        } catch (e) {
          if (isNotFound(e)) return undefined;
          throw e;
        }
      });
      assert.equal((second as KubeObject & { data?: Record<string, string> }).data?.items, '2');
    } finally {
      p.kill('SIGINT');
    }
    const { code, stdout, stderr } = await p.exited;
    assert.equal(code, 0, stderr);
    const entries = stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Entry);
    const starts = entries.filter((e) => e.kind === 'reconcileStart' && e.key === `${ns}/cart`);
    const byDelete = starts.find((e) => e.triggers?.some((t) => t.kind === 'owned' && t.event === 'delete' && t.child === `${ns}/cart-child`));
    assert.ok(byDelete, `a reconcile triggered by the child's deletion: ${JSON.stringify(starts.map((s) => s.triggers))}`);
  });

  test('--owns secrets: an owned Secret\'s events reconcile its controller owner; a resource the cluster does not serve is a usage error with a suggestion', async () => {
    const base = ['--kubeconfig', kubeconfig, '--resource', `${plural}.${group}`, '-n', ns, '--reconciler', `module:${childMaker('quiet.mjs', kind)}`];
    const p = startCliProcess(['run', ...base, '--owns', 'secrets', '--json', '--duration', '60']);
    const secrets = { group: '', version: 'v1', resource: 'secrets' };
    try {
      await until('the first reconcile', async () => (/"kind":"reconcileEnd"/.test(p.stdout()) ? true : undefined));
      const cart = await c.get({ group, version: 'v1', resource: plural }, ns, 'cart');
      await c.create(secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'cart-token', namespace: ns, ownerReferences: [{ apiVersion: `${group}/v1`, kind, name: 'cart', uid: cart.metadata.uid!, controller: true }] }, stringData: { token: 'x' } });
      await until('a reconcile of the owner triggered by the Secret', async () => (p.stdout().includes(`"child":"${ns}/cart-token"`) ? true : undefined));
    } finally {
      p.kill('SIGINT');
    }
    const { code, stdout, stderr } = await p.exited;
    assert.equal(code, 0, stderr);
    const starts = stdout.trim().split('\n').map((l) => JSON.parse(l) as Entry).filter((e) => e.kind === 'reconcileStart' && e.key === `${ns}/cart`);
    assert.ok(starts.some((e) => e.triggers?.some((t) => t.kind === 'owned' && t.event === 'add' && t.child === `${ns}/cart-token` && t.resource?.startsWith('secrets'))), JSON.stringify(starts.map((s) => s.triggers)));
    const typo = await cli(['run', ...base, '--owns', 'secretz', '--duration', '1']);
    assert.equal(typo.code, 2, typo.stderr);
    assert.equal(typo.stderr, 'reconcile-lab: the cluster does not serve secretz (did you mean --owns secrets?)\n');
    const json = await cli(['step', ...base, '--owns', 'deploymentz.apps', '--json']);
    assert.equal(json.code, 2, json.stderr);
    const j = JSON.parse(json.stdout) as { error: string; exitCode: number };
    assert.equal(j.exitCode, 2);
    assert.match(j.error, /^the cluster does not serve deploymentz\.apps: API group apps serves deployments.* \(did you mean --owns deployments\.apps\?\)$/);
  });

  test('a module\'s own indexes (configmaps and secrets by label) and the owner-UID index answer in step and in a check\'s runs; an index on a resource the cluster does not serve is a usage error', { timeout: 240_000 }, async () => {
    const path = join(dir, 'indexed.mjs');
    writeFileSync(path, `
const CM = { group: '', version: 'v1', resource: 'configmaps' };
const SECRETS = { group: '', version: 'v1', resource: 'secrets' };
const byOrder = (o) => (o.metadata.labels?.['shop/order'] ? [o.metadata.labels['shop/order']] : []);
export const indexes = [
  { resource: 'configmaps', name: 'order', index: byOrder },
  { resource: { group: '', version: 'v1', resource: 'secrets' }, name: 'order', index: byOrder },
];
export async function reconcile(request, ctx) {
  let obj;
  try { obj = await ctx.client.get(ctx.primary, request.namespace, request.name, ctx.signal); } catch (e) { if (e.code === 404) return {}; throw e; }
  const names = (os) => os.filter((o) => o.metadata.namespace === request.namespace).map((o) => o.metadata.name).sort().join(',');
  // Keys in the order the server returns them (sorted), so that an unchanged result compares equal and is not written.
  const data = {
    configmaps: names(ctx.cache.indexer(CM).byIndex('order', request.name)),
    owned: names(ctx.cache.indexer(CM).byIndex('ownerUid', obj.metadata.uid)),
    secrets: names(ctx.cache.indexer(SECRETS).byIndex('order', request.name)),
  };
  const name = request.name + '-seen';
  let seen;
  try { seen = await ctx.client.get(CM, request.namespace, name, ctx.signal); } catch (e) { if (e.code !== 404) throw e; }
  if (!seen) await ctx.client.create(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: request.namespace }, data }, { signal: ctx.signal });
  else if (JSON.stringify(seen.data) !== JSON.stringify(data)) await ctx.client.update(CM, { ...seen, data }, { signal: ctx.signal });
  return {};
}
`);
    const orders = { group, version: 'v1', resource: plural };
    const basket = await c.create(orders, { apiVersion: `${group}/v1`, kind, metadata: { name: 'basket', namespace: ns }, spec: { items: 1 } });
    const label = { 'shop/order': 'basket' };
    for (const n of ['basket-b', 'basket-a']) await c.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, namespace: ns, labels: label } });
    await c.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'basket-owned', namespace: ns, ownerReferences: [{ apiVersion: `${group}/v1`, kind, name: 'basket', uid: basket.metadata.uid!, controller: true }] } });
    await c.create({ group: '', version: 'v1', resource: 'secrets' }, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'basket-key', namespace: ns, labels: label }, stringData: { k: 'v' } });
    const base = ['--kubeconfig', kubeconfig, '--resource', `${plural}.${group}`, '-n', ns];
    const r = await cli(['step', `${ns}/basket`, ...base, '--reconciler', `module:${path}`]);
    assert.equal(r.code, 0, r.stderr);
    const seen = (await c.get(CONFIGMAPS, ns, 'basket-seen')) as KubeObject & { data?: Record<string, string> };
    assert.deepEqual(seen.data, { configmaps: 'basket-a,basket-b', owned: 'basket-owned', secrets: 'basket-key' });

    // A check's runs build their own informers over copies: the module's indexes (and the owner-UID one) are there too,
    // or its reconcile would fail with "Index with name order does not exist".
    const checked = await cli(['check', `${ns}/basket`, ...base, '--reconciler', `module:${path}`, '--check', 'runTwice', '--copy', 'configmap/basket-a', '--json']);
    const report = JSON.parse(checked.stdout) as { totals: { errors: number; passed: number; findings: number } };
    assert.equal(report.totals.errors, 0, checked.stdout + checked.stderr);
    assert.deepEqual({ passed: report.totals.passed, findings: report.totals.findings }, { passed: 1, findings: 0 }, checked.stdout);

    const typo = join(dir, 'indexed-typo.mjs');
    writeFileSync(typo, `export const indexes = [{ resource: 'secretz', name: 'order', index: () => [] }];\nexport function reconcile() { return {}; }\n`);
    const bad = await cli(['step', `${ns}/basket`, ...base, '--reconciler', `module:${typo}`]);
    assert.equal(bad.code, 2, bad.stderr);
    assert.equal(bad.stderr, 'reconcile-lab: the module\'s index "order": the cluster does not serve secretz (did you mean resource: secrets?)\n');
  });

  test('--resource: a bare plural, kind or singular resolves to the one group serving it; a typo in the group is exit 2, as a bare name nobody serves', async () => {
    for (const given of [plural, kind, kind.toLowerCase()]) {
      const r = await cli(['inspect', `${ns}/cart`, '--kubeconfig', kubeconfig, '--resource', given]);
      assert.equal(r.code, 0, `${given}: ${r.stderr}`);
      assert.equal(r.stderr, `reconcile-lab: note: --resource ${given.toLowerCase()} is ${plural}.${group}\n`);
      assert.match(r.stdout, new RegExp(`^${ns}/cart: `));
    }
    const typo = await cli(['report', '--kubeconfig', kubeconfig, '--resource', `${plural}z.${group}`, '-n', ns, '--reconciler', 'exec:true']);
    assert.equal(typo.code, 2, typo.stderr);
    assert.equal(typo.stderr, `reconcile-lab: the cluster does not serve ${plural}z.${group}: API group ${group} serves ${plural} (did you mean --resource ${plural}.${group}?)\n`);
    const bare = await cli(['report', '--kubeconfig', kubeconfig, '--resource', `${plural}z`, '-n', ns, '--reconciler', 'exec:true', '--json']);
    assert.equal(bare.code, 2, bare.stderr);
    assert.equal(JSON.parse(bare.stdout).exitCode, 2);
    assert.match(bare.stderr, new RegExp(`^reconcile-lab: the cluster does not serve ${plural}z`));
  });

  test('--resource: a bare name two API groups serve is a usage error naming both', async () => {
    const cluster = await getTestCluster();
    const twin = `twin${uniqueName('x').slice(2)}s`;
    const groups = [`${uniqueName('a')}.example.io`, `${uniqueName('b')}.example.io`].sort();
    for (const g of groups) await installCrd(cluster.transport, testCrd({ group: g, kind: 'Twin', plural: twin }));
    const r = await cli(['report', '--kubeconfig', kubeconfig, '--resource', twin, '-n', ns, '--reconciler', 'exec:true']);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr, `reconcile-lab: --resource ${twin} is ambiguous: 2 API groups serve it (${groups.map((g) => `${twin}.${g}`).join(', ')}); name one with its group, e.g. --resource ${twin}.${groups[0]}\n`);
  });
});
