import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createNamespace, getTestCluster, installCrd, testCrd, uniqueName, type TestCluster } from './support/cluster.ts';
import { join } from 'node:path';
import { client as makeClient, ROOT } from './reconcilers.support.ts';
import { haveGo } from './support/goSample.ts';
import type { DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import { isNotFound } from '../../src/core/k8s/client.ts';
import type { KubeObject, ResourceInfo } from '../../src/core/k8s/objects.ts';
import type { Reconciler } from '../../src/core/controller/reconcile.ts';
import { writeStatusIfChanged } from '../../src/core/reconcilers/statusWriter.ts';
import { runChecks } from '../../src/core/checks/runChecks.ts';
import type { CheckReport, RunChecksOptions } from '../../src/core/checks/types.ts';

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };
const CRDS = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };
const SECRETS = { group: '', version: 'v1', resource: 'secrets' };
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const SECRET_VALUE = 'h3-s3cr3t-value-never-shown';

/** The hash a reconciler derives from a Secret's data (sorted keys): what the child ConfigMap records. */
function hashOf(data: Record<string, string> | undefined): string {
  return createHash('sha256').update(JSON.stringify(Object.entries(data ?? {}).sort())).digest('hex').slice(0, 16);
}

/**
 * A reconciler as people write them: it reads the Secret and the ConfigMap its spec names (`spec.credentials.secretRef`,
 * `spec.settingsConfigMapName`), waits (Ready False, requeue after 30 s) while either is missing, and otherwise keeps a
 * child ConfigMap `<name>-derived` with a hash of the Secret's data and the ConfigMap's mode. `buggy`: the child is
 * created with generateName on every pass once the Secret is there (the waiting path is fine, so only the real path
 * shows the bug). `seen` records, per reconcile, whether the Secret was there and the hash it derived.
 */
function shopReconciler(buggy: boolean, seen: Array<{ ns: string; hash?: string }>): () => Reconciler {
  return () => ({
    name: buggy ? 'shop-child-every-pass' : 'shop-derived',
    async reconcile(req, ctx) {
      const shop = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal).catch((e: unknown) => {
        if (isNotFound(e)) return undefined; // gone: nothing to do
        throw e;
      });
      if (!shop || shop.metadata.deletionTimestamp) return {};
      const spec = shop.spec as { credentials: { secretRef: { name: string } }; settingsConfigMapName: string; tier?: string };
      let secret: KubeObject;
      let settings: KubeObject;
      try {
        secret = await ctx.client.get(SECRETS, req.namespace, spec.credentials.secretRef.name, ctx.signal);
        settings = await ctx.client.get(CONFIGMAPS, req.namespace, spec.settingsConfigMapName, ctx.signal);
      } catch (e) {
        if (!isNotFound(e)) throw e;
        seen.push({ ns: req.namespace! });
        await writeStatusIfChanged(ctx, ctx.primary, shop, () => ({ conditions: [{ type: 'Ready', status: 'False', reason: 'InputMissing', message: (e as Error).message.split('\n')[0] }] }));
        return { requeueAfterMs: 30_000 };
      }
      const hash = hashOf((secret as { data?: Record<string, string> }).data);
      seen.push({ ns: req.namespace!, hash });
      const data = { hash, mode: (settings as { data?: Record<string, string> }).data?.mode ?? '', tier: spec.tier ?? 'basic' };
      const owner = [{ apiVersion: shop.apiVersion!, kind: shop.kind!, name: shop.metadata.name!, uid: shop.metadata.uid!, controller: true }];
      if (buggy) {
        // BUG: a new child every pass (not owned, so its creation queues nothing: the key settles, one more child each time).
        await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: `${req.name}-derived-`, namespace: req.namespace }, data }, { signal: ctx.signal });
      } else {
        const name = `${req.name}-derived`;
        let child: KubeObject | undefined;
        try {
          child = await ctx.client.get(CONFIGMAPS, req.namespace, name, ctx.signal);
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
        if (!child) await ctx.client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: req.namespace, ownerReferences: owner }, data }, { signal: ctx.signal });
        else if (JSON.stringify((child as { data?: unknown }).data) !== JSON.stringify(data)) await ctx.client.update(CONFIGMAPS, { ...child, data } as KubeObject, { signal: ctx.signal });
      }
      await writeStatusIfChanged(ctx, ctx.primary, shop, () => ({ conditions: [{ type: 'Ready', status: 'True', reason: 'Derived', message: 'child up to date' }] }));
      return {};
    },
  });
}

describe('robustness checks copy the Secrets and ConfigMaps the spec refers to (real control plane)', () => {
  let cluster: TestCluster;
  let c: DynamicKubeClient;
  let ns: string;
  let shops: ResourceInfo;
  let crdName: string;
  let secretRv: string;

  before(async () => {
    cluster = await getTestCluster();
    c = makeClient(cluster.transport);
    const group = `${uniqueName('refs')}.h3.example.org`;
    crdName = `shops.${group}`;
    await installCrd(cluster.transport, testCrd({ group, kind: 'Shop', plural: 'shops' }));
    shops = { group, version: 'v1', resource: 'shops', kind: 'Shop', namespaced: true };
    ns = await createNamespace(cluster.transport, 'h3-refs');
    const made = await c.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'orders-creds', namespace: ns }, stringData: { password: SECRET_VALUE } });
    secretRv = made.metadata.resourceVersion!;
    await c.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'orders-settings', namespace: ns }, data: { mode: 'fast' } });
    const shop = await c.create(shops, {
      apiVersion: `${group}/v1`, kind: 'Shop', metadata: { name: 'orders', namespace: ns },
      spec: {
        credentials: { secretRef: { name: 'orders-creds' } },
        settingsConfigMapName: 'orders-settings',
        // Neither is copied: one does not exist, the other is in another namespace.
        audit: { tokenSecretName: 'orders-audit-token' },
        upstream: { caConfigMapRef: { name: 'kube-root-ca.crt', namespace: 'kube-system' } },
        owner: { name: 'not-a-reference' },
        // An output: the Secret its controller writes (owned by the Shop), so each run makes its own.
        tls: { certSecretName: 'orders-tls' },
      },
    });
    await c.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'orders-tls', namespace: ns, ownerReferences: [{ apiVersion: shop.apiVersion!, kind: 'Shop', name: 'orders', uid: shop.metadata.uid!, controller: true }] }, stringData: { 'tls.key': SECRET_VALUE } });
  });

  after(async () => {
    await c.delete(NAMESPACES, undefined, ns).catch(() => {});
    await c.delete(CRDS, undefined, crdName).catch(() => {});
  });

  function options(o: Pick<RunChecksOptions, 'createReconciler' | 'reconcilerSpec'> & Partial<RunChecksOptions>): RunChecksOptions {
    return {
      transport: cluster.transport, client: c, cluster: { name: 'test', local: true }, primary: shops, keys: [`${ns}/orders`],
      convergenceBoundMs: 6_000, quietMs: 600, transitions: [{ spec: { tier: 'gold' } }], ...o,
    };
  }
  const summary = (r: CheckReport) => r.results.map((x) => `${x.check}: ${x.status} (${x.message ?? ''})${x.findings.map((f) => `\n    ${f.title}`).join('')}`).join('\n') + `\nnotes:\n${r.notes.join('\n')}`;
  const noValue = (r: CheckReport) => {
    const text = JSON.stringify(r);
    assert.ok(!text.includes(SECRET_VALUE) && !text.includes(Buffer.from(SECRET_VALUE).toString('base64')), 'the Secret\'s value is in no finding, journal, diff or note');
  };

  test('the correct reconciler is judged on its real path in every run (each with its own copies) and has no findings', async () => {
    const seen: Array<{ ns: string; hash?: string }> = [];
    const r = await runChecks(options({ createReconciler: shopReconciler(false, seen), reconcilerSpec: { kind: 'module', path: 'shop-derived.ts' } }));
    assert.equal(r.findings.length, 0, summary(r));
    assert.deepEqual(r.results.map((x) => `${x.check}: ${x.status}`).sort(), ['childDrift: passed', 'convergence: passed', 'crashAfterWrite: passed', 'deletion: passed', 'historyIndependence: passed', 'runTwice: passed', 'staleCache: passed', 'unobservedState: passed'], summary(r));
    // The real path: the child and the status are two writes, so there is a crash point in between (the waiting path makes one).
    assert.match(r.results.find((x) => x.check === 'crashAfterWrite')!.message!, /^1 crash point\(s\): the end state equals the reference each time$/, summary(r));
    const scratch = new Set(seen.map((s) => s.ns));
    assert.ok(scratch.size >= 8 && [...scratch].every((n) => n.startsWith('rl-check-')), `reconciled in the scratch namespaces only: ${[...scratch].join(', ')}`);
    assert.deepEqual(seen.filter((s) => !s.hash), [], 'every run of every check found the Secret and the ConfigMap in its own scratch namespace');
    assert.deepEqual([...new Set(seen.map((s) => s.hash))], [hashOf({ password: Buffer.from(SECRET_VALUE).toString('base64') })], 'the copies hold the original data');
    assert.ok(!r.notes.some((n) => /settled waiting/.test(n)), summary(r));
    assert.ok(r.notes.includes(`Objects the spec of ${ns}/orders refers to — copied into every scratch namespace of ${ns}/orders (each run its own copies, deleted with the namespace; Secrets copied server side, values never shown): Secret orders-creds (spec.credentials.secretRef.name), ConfigMap orders-settings (spec.settingsConfigMapName); `
      + 'not found in the object\'s namespace, so missing in the copies too: Secret orders-audit-token (spec.audit.tokenSecretName); '
      + 'in another namespace, not copied (the checks copy only from the object\'s own namespace; a controller that reads them reads your real objects or, confined to its scratch namespace, fails): ConfigMap kube-system/kube-root-ca.crt (spec.upstream.caConfigMapRef.name); '
      + `not copied, owned by ${ns}/orders itself (children its controller makes, so each run makes its own): Secret orders-tls (spec.tls.certSecretName).`), summary(r));
    noValue(r);
    assert.equal((await c.get(SECRETS, ns, 'orders-creds')).metadata.resourceVersion, secretRv, 'the original Secret was not written');
    const left = (await c.list(NAMESPACES, undefined, { labelSelector: 'checks.reconcile-lab.dev/scratch=true' })).items.filter((n) => scratch.has(n.metadata.name!) && !n.metadata.deletionTimestamp);
    assert.deepEqual(left.map((n) => n.metadata.name), [], 'the scratch namespaces (and the copies in them) are deleted');
  });

  test('a Secret the spec names in a way the checks do not recognise (spec.vault) is copied when the person names it (--copy secret/orders-creds); without it the copies lack it', async () => {
    await c.create(shops, { apiVersion: `${shops.group}/v1`, kind: 'Shop', metadata: { name: 'odd', namespace: ns }, spec: { vault: 'orders-creds' } });
    const seen: Array<{ ns: string; found: boolean }> = [];
    const vaultReader = (): Reconciler => ({
      name: 'vault-reader',
      async reconcile(req, ctx) {
        const shop = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal).catch(() => undefined);
        if (!shop || shop.metadata.deletionTimestamp) return {};
        const found = await ctx.client.get(SECRETS, req.namespace, (shop.spec as { vault: string }).vault, ctx.signal).then(() => true, (e: unknown) => {
          if (isNotFound(e)) return false;
          throw e;
        });
        seen.push({ ns: req.namespace!, found });
        await writeStatusIfChanged(ctx, ctx.primary, shop, () => ({ conditions: [{ type: 'Ready', status: found ? 'True' : 'False', reason: found ? 'Unlocked' : 'VaultMissing', message: '' }] }));
        return found ? {} : { requeueAfterMs: 30_000 };
      },
    });
    const opts = { createReconciler: vaultReader, reconcilerSpec: { kind: 'module' as const, path: 'vault-reader.ts' }, keys: [`${ns}/odd`], checks: ['convergence' as const] };
    const without = await runChecks(options(opts));
    assert.ok(seen.length > 0 && seen.every((x) => !x.found), `not recognised, so not copied: ${JSON.stringify(seen)}\n${summary(without)}`);
    assert.ok(without.notes.some((n) => /settled waiting/.test(n)), summary(without));
    seen.length = 0;
    const withCopy = await runChecks(options({ ...opts, copies: [{ kind: 'Secret', name: 'orders-creds', path: '--copy' }] }));
    assert.ok(seen.length > 0 && seen.every((x) => x.found && x.ns.startsWith('rl-check-')), `copied into every scratch namespace: ${JSON.stringify(seen)}\n${summary(withCopy)}`);
    assert.ok(withCopy.notes.includes(`Objects the spec of ${ns}/odd refers to or that you named to copy — copied into every scratch namespace of ${ns}/odd (each run its own copies, deleted with the namespace; Secrets copied server side, values never shown): Secret orders-creds (--copy).`), summary(withCopy));
    assert.ok(!withCopy.notes.some((n) => /settled waiting/.test(n)), summary(withCopy));
    noValue(withCopy);
    // A typo in the name: missing in the copies, and the note names the Secret it most likely meant (names only).
    seen.length = 0;
    const typo = await runChecks(options({ ...opts, copies: [{ kind: 'Secret', name: 'order-creds', path: '--copy' }] }));
    assert.ok(seen.length > 0 && seen.every((x) => !x.found), `a misspelt name copies nothing: ${JSON.stringify(seen)}\n${summary(typo)}`);
    assert.ok(typo.notes.includes(`Objects the spec of ${ns}/odd refers to or that you named to copy — not found in the object's namespace, so missing in the copies too: Secret order-creds (--copy; did you mean secret/orders-creds?).`), summary(typo));
    noValue(typo);
    assert.equal((await c.get(SECRETS, ns, 'orders-creds')).metadata.resourceVersion, secretRv, 'the original Secret was not written');
  });

  test('a reference of no stated kind (spec.credentialsRef: {name}) is copied when a Secret of that name exists; a kind that says otherwise, or no such object, copies nothing and is not named', async () => {
    await c.create(shops, { apiVersion: `${shops.group}/v1`, kind: 'Shop', metadata: { name: 'by-ref', namespace: ns }, spec: {
      credentialsRef: { name: 'orders-creds' }, issuerRef: { name: 'orders-settings', kind: 'Issuer' }, databaseRef: { name: 'no-such-db' },
    } });
    const seen: Array<{ ns: string; found: boolean; settings: boolean }> = [];
    const refReader = (): Reconciler => ({
      name: 'ref-reader',
      async reconcile(req, ctx) {
        const shop = await ctx.client.get(ctx.primary, req.namespace, req.name, ctx.signal).catch(() => undefined);
        if (!shop || shop.metadata.deletionTimestamp) return {};
        const has = (res: typeof SECRETS, name: string) => ctx.client.get(res, req.namespace, name, ctx.signal).then(() => true, (e: unknown) => {
          if (isNotFound(e)) return false;
          throw e;
        });
        const found = await has(SECRETS, (shop.spec as { credentialsRef: { name: string } }).credentialsRef.name);
        seen.push({ ns: req.namespace!, found, settings: await has(CONFIGMAPS, 'orders-settings') });
        await writeStatusIfChanged(ctx, ctx.primary, shop, () => ({ conditions: [{ type: 'Ready', status: found ? 'True' : 'False', reason: found ? 'Unlocked' : 'CredentialsMissing', message: '' }] }));
        return found ? {} : { requeueAfterMs: 30_000 };
      },
    });
    const r = await runChecks(options({ createReconciler: refReader, reconcilerSpec: { kind: 'module', path: 'ref-reader.ts' }, keys: [`${ns}/by-ref`], checks: ['convergence'] }));
    assert.ok(seen.length > 0 && seen.every((x) => x.found && !x.settings && x.ns.startsWith('rl-check-')), `the Secret copied, the Issuer's name not looked up as a ConfigMap: ${JSON.stringify(seen)}\n${summary(r)}`);
    assert.ok(r.notes.includes(`Objects the spec of ${ns}/by-ref refers to — copied into every scratch namespace of ${ns}/by-ref (each run its own copies, deleted with the namespace; Secrets copied server side, values never shown): Secret orders-creds (spec.credentialsRef.name).`), summary(r));
    assert.ok(!r.notes.some((n) => /no-such-db|settled waiting/.test(n)), summary(r));
    noValue(r);
    assert.equal((await c.get(SECRETS, ns, 'orders-creds')).metadata.resourceVersion, secretRv, 'the original Secret was not written');
  });

  test('the buggy variant (a new child every pass once the Secret is there) is caught by run twice', async () => {
    const seen: Array<{ ns: string; hash?: string }> = [];
    const r = await runChecks(options({ createReconciler: shopReconciler(true, seen), reconcilerSpec: { kind: 'module', path: 'shop-child-every-pass.ts' }, checks: ['runTwice', 'convergence'] }));
    const f = r.findings.find((x) => x.check === 'runTwice');
    assert.ok(f, summary(r));
    assert.equal(r.results.find((x) => x.check === 'convergence')?.status, 'passed', summary(r));
    assert.equal(f.title, 'Second reconcile created another configmaps (generateName "orders-derived-")', summary(r));
    assert.ok(seen.length && seen.every((s) => s.hash), 'it took the real path');
    noValue(r);
  });
});

describe('robustness checks copy what the spec refers to, for a Go controller (test/fixtures/go-secret-hash)', { skip: !haveGo() && 'go is not installed' }, () => {
  let cluster: TestCluster;
  let c: DynamicKubeClient;
  let ns: string;
  let shops: ResourceInfo;
  let group: string;

  before(async () => {
    cluster = await getTestCluster();
    c = makeClient(cluster.transport);
    group = `${uniqueName('gorefs')}.h3.example.org`;
    await installCrd(cluster.transport, testCrd({ group, kind: 'Shop', plural: 'shops' }));
    shops = { group, version: 'v1', resource: 'shops', kind: 'Shop', namespaced: true };
    ns = await createNamespace(cluster.transport, 'h3-gorefs');
    await c.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'orders-creds', namespace: ns }, stringData: { password: SECRET_VALUE } });
    await c.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'orders-settings', namespace: ns }, data: { mode: 'fast' } });
    await c.create(shops, { apiVersion: `${group}/v1`, kind: 'Shop', metadata: { name: 'orders', namespace: ns }, spec: { credentials: { secretRef: { name: 'orders-creds' } }, settingsConfigMapName: 'orders-settings' } });
  });

  after(async () => {
    await c.delete(NAMESPACES, undefined, ns).catch(() => {});
    await c.delete(CRDS, undefined, `shops.${group}`).catch(() => {});
  });

  const run = (buggy: boolean) => {
    const command = ['go', 'run', '.', `--group=${group}`, ...(buggy ? ['--buggy'] : [])];
    return runChecks({
      transport: cluster.transport, client: c, cluster: { name: 'test', local: true }, primary: shops, keys: [`${ns}/orders`],
      convergenceBoundMs: 8_000, quietMs: 1_000, checks: ['convergence', 'runTwice'],
      go: { command, cwd: join(ROOT, 'test/fixtures/go-secret-hash'), env: { KUBECONFIG: cluster.kubeconfigPath } }, reconcilerSpec: { kind: 'go', command },
    });
  };
  const summary = (r: CheckReport) => r.results.map((x) => `${x.check}: ${x.status} (${x.message ?? ''})${x.findings.map((f) => `\n    ${f.title}`).join('')}`).join('\n') + `\nnotes:\n${r.notes.join('\n')}`;

  test('the Go controller finds the copied Secret and ConfigMap (it writes its child: 1 write, no waiting), and its buggy variant is caught by run twice', async () => {
    const good = await run(false);
    assert.equal(good.findings.length, 0, summary(good));
    // Before the copies it only waited (requeue after 30 s, 0 writes); now it made the child from the Secret.
    assert.match(good.results.find((x) => x.check === 'convergence')!.message!, /^idle after \d+ ms and 1 write\(s\)$/, summary(good));
    assert.ok(good.notes.some((n) => n.includes('Secret orders-creds (spec.credentials.secretRef.name), ConfigMap orders-settings (spec.settingsConfigMapName)')), summary(good));
    const bad = await run(true);
    assert.equal(bad.findings.find((f) => f.check === 'runTwice')?.title, 'Second reconcile created another configmaps (generateName "orders-derived-")', summary(bad));
    for (const r of [good, bad]) {
      const text = JSON.stringify(r);
      assert.ok(!text.includes(SECRET_VALUE) && !text.includes(Buffer.from(SECRET_VALUE).toString('base64')), 'the Secret\'s value is in no finding, journal or note');
    }
  });
});
