// A Go controller shaped like a user's own kubebuilder project (samples/go-harbor-operator), driven from the core
// against the real local control plane: one manager with two controllers — "harbor-keeper" (Named, a cluster-scoped
// CRD of its own group, the priority queue, WithEventFilter) and "deployment" (the default name, a built-in type of
// the apps group, the client-go queue, 3 workers, GenerationChangedPredicate, Owns Secret, a mapped ConfigMap watch).
// Each test pins a bug a user met: a keyless step right after launch, an error's retry in the journal, the
// announcements, cluster-scoped keys, why-queued from a mapped watch and an owned child, a dry-run of a
// cluster-scoped key.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { parseAllDocuments } from 'yaml';
import type { RemoteController } from '../../src/core/bridge/remoteController.ts';
import type { Journal, JournalEntry } from '../../src/core/journal/journal.ts';
import { createDynamicClient, type DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import type { GroupVersionResource, KubeObject } from '../../src/core/k8s/objects.ts';
import { createNamespace, getTestCluster, installCrd, uniqueName, waitUntil, type TestCluster } from './support/cluster.ts';
import { buildGoProgram, harborOperatorDir, haveGo } from './support/goSample.ts';
import { GoLaunches } from './support/goLaunch.ts';
import { runCliProcess, runCliUntil } from './support/cli.ts';
import { ROOT, sampleDocs } from './reconcilers.support.ts';

const HARBORS: GroupVersionResource = { group: 'fleet.example.io', version: 'v1beta1', resource: 'harbors' };
const DEPLOYMENTS: GroupVersionResource = { group: 'apps', version: 'v1', resource: 'deployments' };
const CONFIGMAPS: GroupVersionResource = { group: '', version: 'v1', resource: 'configmaps' };
const SECRETS: GroupVersionResource = { group: '', version: 'v1', resource: 'secrets' };

const ends = (j: Journal, key: string) => j.entries({ kinds: ['reconcileEnd'], key }).filter((e): e is Extract<JournalEntry, { kind: 'reconcileEnd' }> => e.kind === 'reconcileEnd' && e.key === key);

function harbor(name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'fleet.example.io/v1beta1', kind: 'Harbor', metadata: { name }, spec };
}

function deployment(ns: string, name: string): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns },
    spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'example.invalid/none' }] } } },
  };
}

describe('a user-shaped Go controller (two controllers, a cluster-scoped CRD) through the bridge', { skip: (!haveGo() && 'go is not installed') || (!existsSync(harborOperatorDir()) && 'samples/go-harbor-operator is not in this tree') }, () => {
  let cluster: TestCluster;
  let client: DynamicKubeClient;
  let bin: string;
  const launches = new GoLaunches();

  before(async () => {
    cluster = await getTestCluster();
    client = createDynamicClient(cluster.transport, { fieldManager: 'reconcile-lab-test' });
    const crd = parseAllDocuments(readFileSync(join(harborOperatorDir(), 'config', 'crd.yaml'), 'utf8'))[0]!.toJSON() as KubeObject;
    await installCrd(cluster.transport, crd);
    // The CLI's default resource is the Widget: the "names the controllers" test needs it served (not only when
    // another file installed it first).
    await installCrd(cluster.transport, sampleDocs('crd.yaml')[0]!).catch((e: unknown) => {
      if (!/AlreadyExists|already exists/.test(String((e as Error).message))) throw e;
    });
    bin = buildGoProgram(harborOperatorDir(), 'harbor-operator');
  });

  after(() => launches.dispose());

  /** Launches the program on a fresh bridge (welcomed paused); resolves with both of its controllers. */
  async function start(): Promise<{ journal: Journal; keeper: RemoteController; deploy: RemoteController }> {
    const { hub, journal, r } = await launches.launch({
      kubeconfigPath: cluster.kubeconfigPath,
      command: bin,
      args: ['--health-probe-bind-address=0', '--metrics-bind-address=0'],
      accept: (c) => c.controller.name === 'harbor-keeper',
    });
    await waitUntil(() => hub.controllers.some((c) => c.controller.name === 'deployment'), 'the second controller is announced', 60_000);
    const deploy = hub.controllers.find((c) => c.controller.name === 'deployment')!.controller;
    return { journal, keeper: r.controller, deploy };
  }

  test('both controllers are announced as separate queues with their resource, queue kind and workers', { timeout: 180_000 }, async () => {
    const { keeper, deploy } = await start();
    assert.equal(keeper.resourceId, 'harbors.fleet.example.io');
    assert.equal(keeper.announcement.kind, 'Harbor');
    assert.equal(keeper.status().workQueue, 'priority');
    assert.equal(keeper.status().maxConcurrentReconciles, 1);
    assert.equal(deploy.resourceId, 'deployments.apps');
    assert.equal(deploy.status().workQueue, 'client-go', 'UsePriorityQueue: false on this controller only');
    assert.equal(deploy.status().maxConcurrentReconciles, 3);
    assert.equal(keeper.status().paused && deploy.status().paused, true);
  });

  test('a step without key right after launch reconciles the first key of the initial list (cluster-scoped: no namespace)', { timeout: 180_000 }, async () => {
    const name = uniqueName('harbor-first');
    await client.create(HARBORS, harbor(name, { berths: 2, namespace: 'default' }));
    const { journal, keeper } = await start();
    // No wait for the informer: the CLI's `step --go` steps as soon as the controller is announced.
    const r = await keeper.step();
    assert.equal(r.kind, 'reconciled', `a keyless step before the caches synced found the queue empty: ${JSON.stringify(r)}`);
    assert.ok(r.kind === 'reconciled' && !r.key.includes('/'), `a Harbor key has no namespace: ${r.kind === 'reconciled' ? r.key : ''}`);
    assert.equal(journal.entries({ kinds: ['reconcileStart'] }).length, 1, 'exactly one reconcile');
    // Its Event Log row says what was asked (the key is known only from the reconcile that follows), not an empty key.
    const asked = journal.entries({ kinds: ['control'] }).filter((e) => e.kind === 'control' && e.action === 'step');
    assert.deepEqual(asked.map((e) => (e.kind === 'control' ? [e.key, e.detail] : [])), [[undefined, 'the next key in its queue']]);
  });

  test('errors, terminal errors and a panic: each end entry says when the key is retried and after how many failures', { timeout: 180_000 }, async () => {
    const fail = uniqueName('harbor-fail');
    const terminal = uniqueName('harbor-terminal');
    const panics = uniqueName('harbor-panic');
    await client.create(HARBORS, harbor(fail, { mode: 'fail' }));
    await client.create(HARBORS, harbor(terminal, { mode: 'terminal' }));
    await client.create(HARBORS, harbor(panics, { mode: 'panic', namespace: 'default' }));
    const { journal, keeper } = await start();
    // What the journal holds for a key, for the failure messages.
    const trail = (key: string) => journal.entries({ key }).map((e) => JSON.stringify(e)).join('\n');
    for (let i = 1; i <= 3; i++) {
      const r = await keeper.step({ key: fail, force: true });
      assert.ok(r.kind === 'reconciled' && r.outcome.kind === 'error', `step ${i}: ${JSON.stringify(r)}\n${trail(fail)}`);
      await waitUntil(() => ends(journal, fail).length === i, `end entry ${i} journaled (with its retry)`, 30_000).catch((e: Error) => {
        throw new Error(`${e.message}\n${trail(fail)}`);
      });
      const o = ends(journal, fail)[i - 1]!.outcome;
      assert.ok(o.kind === 'error' && o.failures === i && typeof o.retryAt === 'number', `end ${i} carries failures and retryAt: ${JSON.stringify(o)}\n${trail(fail)}`);
    }
    const t = await keeper.step({ key: terminal, force: true });
    assert.ok(t.kind === 'reconciled' && t.outcome.kind === 'terminal', `${JSON.stringify(t)}\n${trail(terminal)}`);
    const p = await keeper.step({ key: panics, force: true });
    assert.ok(p.kind === 'reconciled' && p.outcome.kind === 'error' && /harbor keeper fell into the water/.test(p.outcome.message), `${JSON.stringify(p)}\n${trail(panics)}`);
    await waitUntil(() => ends(journal, panics).length === 1, 'the panic journaled', 30_000).catch((e: Error) => {
      throw new Error(`${e.message}\n${trail(panics)}`);
    });
    const again = await keeper.step({ key: panics, force: true });
    assert.ok(again.kind === 'reconciled' && again.outcome.kind === 'success', `it panics once: ${JSON.stringify(again)}\n${trail(panics)}`);
  });

  test('why queued on the deployment controller: a mapped ConfigMap watch and an owned Secret named like the Deployment are both causes of one reconcile; a label change is filtered', { timeout: 180_000 }, async () => {
    const ns = await createNamespace(cluster.transport, 'go-user');
    await client.create(DEPLOYMENTS, deployment(ns, 'web'));
    const { journal, deploy } = await start();
    const key = `${ns}/web`;
    await waitUntil(() => deploy.keyState(key)?.phase === 'queued', 'queued by its informer add', 60_000);
    const first = await deploy.step({ key });
    assert.ok(first.kind === 'reconciled' && first.outcome.kind === 'requeueAfter', JSON.stringify(first));
    const token = await client.get(SECRETS, ns, 'web');
    // Settle: the owned Secret's add queued the key again; run that too.
    await waitUntil(() => deploy.keyState(key)?.phase !== 'processing', 'settled', 10_000);
    if (deploy.keyState(key)?.phase === 'queued') await deploy.step({ key });
    await client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web-settings', namespace: ns, labels: { 'shipyard.example.io/deployment': 'web' } }, data: { a: 'b' } });
    await client.update(SECRETS, { ...token, metadata: { ...token.metadata, labels: { touched: 'yes' } } });
    await waitUntil(() => {
      const kinds = new Set((deploy.keyState(key)?.reasons ?? []).map((r) => r.kind));
      return kinds.has('watch') && kinds.has('owned');
    }, 'both causes recorded', 30_000);
    const r = await deploy.step({ key });
    assert.equal(r.kind, 'reconciled');
    const last = journal.entries({ kinds: ['reconcileStart'], key }).at(-1)!;
    assert.ok(last.kind === 'reconcileStart');
    assert.ok(last.triggers.some((t) => t.kind === 'watch' && t.objectKey === `${ns}/web-settings` && t.objectKind === 'ConfigMap'), `the mapped watch (a ConfigMap) among ${JSON.stringify(last.triggers)}`);
    assert.ok(last.triggers.some((t) => t.kind === 'owned' && t.child === `${ns}/web` && t.childKind === 'Secret'), `the owned Secret among ${JSON.stringify(last.triggers)}`);
    // GenerationChangedPredicate on For: a label change of the Deployment queues nothing.
    const d = await client.get(DEPLOYMENTS, ns, 'web');
    const rv = (await client.update(DEPLOYMENTS, { ...d, metadata: { ...d.metadata, labels: { foo: 'bar' } } })).metadata.resourceVersion;
    // A later mapped-watch event proves the label update was delivered before it, and filtered.
    const cm = await client.get(CONFIGMAPS, ns, 'web-settings');
    await client.update(CONFIGMAPS, { ...cm, data: { a: 'c' } });
    await waitUntil(() => (deploy.keyState(key)?.reasons ?? []).some((x) => x.kind === 'watch'), 'the later ConfigMap update queued it', 30_000);
    assert.ok(!(deploy.keyState(key)?.reasons ?? []).some((x) => x.kind === 'informer' && x.resourceVersion === rv), 'the label-only update was filtered by GenerationChangedPredicate');
  });

  test('a dry-run of a cluster-scoped key: its writes name no namespace for the Harbor, a namespace for its child, and nothing persists', { timeout: 180_000 }, async () => {
    const name = uniqueName('harbor-dry');
    await client.create(HARBORS, harbor(name, { berths: 7, namespace: 'default' }));
    const { keeper } = await start();
    await waitUntil(() => keeper.keyState(name)?.phase === 'queued', 'queued', 60_000);
    const before = await client.get(HARBORS, undefined, name);
    const d = await keeper.dryRun(name);
    assert.ok(d.writes.every((w) => w.dryRun), 'every write was sent with dryRun=All');
    const child = d.writes.find((w) => w.verb === 'create' && w.resource === 'configmaps');
    assert.ok(child && child.namespace === 'default' && child.name === `harbor-${name}`, JSON.stringify(d.writes));
    const status = d.writes.find((w) => w.resource === 'harbors' && w.subresource === 'status');
    assert.ok(status && status.namespace === undefined && status.name === name, JSON.stringify(d.writes));
    const after = await client.get(HARBORS, undefined, name);
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'the Harbor is unchanged');
    await assert.rejects(client.get(CONFIGMAPS, 'default', `harbor-${name}`), /not found|NotFound|404/i, 'no child was created');
  });

  test('CLI --go without --resource follows the program\'s controller (the first it sets up, or the one --controller picks; its resource is the command\'s); with a --resource none of them reconciles, it names the controllers it announced', { timeout: 180_000 }, async () => {
    const name = `cli-follow-${Date.now().toString(36)}`;
    await client.create(HARBORS, harbor(name, { berths: 1, namespace: 'default' }));
    try {
      const r = await runCliProcess(['step', name, '--kubeconfig', cluster.kubeconfigPath, '--controller', 'harbor-keeper', '--go', `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /controller harbor-keeper \(priority queue\)/, r.stderr);
      // The key has no namespace: the command took the cluster-scoped Harbors as its resource from the controller.
      assert.match(r.stdout, new RegExp(`▶ ${name} reconcile`), r.stdout);
      assert.match(r.stdout, new RegExp(`update harbors\\.fleet\\.example\\.io ${name} \\(status\\) rv`), r.stdout);
    } finally {
      await client.delete(HARBORS, undefined, name).catch(() => {});
    }
    // Without --controller: the first controller cmd/main.go sets up (harbor-keeper), though the manager starts both
    // at once and either may be announced first; a namespaced key says whose resource it is (and names the other
    // when it was announced by then).
    const byDefault = await runCliProcess(['step', `default/${name}`, '--kubeconfig', cluster.kubeconfigPath, '--go', `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`]);
    assert.equal(byDefault.code, 2, byDefault.stderr);
    assert.match(byDefault.stderr, /controller harbor-keeper \(priority queue\)/, byDefault.stderr);
    assert.match(byDefault.stderr, new RegExp(`harbors\\.fleet\\.example\\.io is cluster-scoped: use a key without a namespace \\("${name}"\\) \\(the resource of the Go controller harbor-keeper, the first the program sets up; --controller (deployment|<name>) follows another\\)`), byDefault.stderr);
    const widgets = await runCliProcess(['step', '--kubeconfig', cluster.kubeconfigPath, '--resource', 'widgets.lab.reconcile.dev', '--go', `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`]);
    assert.equal(widgets.code, 2, widgets.stderr);
    assert.match(widgets.stderr, /announced (harbor-keeper \(harbors\.fleet\.example\.io\), deployment \(deployments\.apps\)|deployment \(deployments\.apps\), harbor-keeper \(harbors\.fleet\.example\.io\)), but not a controller reconciling widgets\.lab\.reconcile\.dev: pass --resource/, widgets.stderr);
  });

  test('CLI --go: a namespaced key given while the cluster-scoped controller is followed, of an object another controller of the program reconciles, names that controller', { timeout: 180_000 }, async () => {
    const ns = await createNamespace(cluster.transport, 'go-user-other');
    try {
      await client.create(DEPLOYMENTS, deployment(ns, 'shipyard'));
      // step, dry-run, inspect and report each read the key the same way; inspect and step stand for them.
      for (const command of ['step', 'inspect']) {
        const r = await runCliProcess([command, `${ns}/shipyard`, '--kubeconfig', cluster.kubeconfigPath, '--controller', 'harbor-keeper', '--go', `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`]);
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, new RegExp(`${ns}/shipyard: deployments\\.apps ${ns}/shipyard exists: the resource of the program's controller deployment \\(--controller deployment follows it\\); harbors\\.fleet\\.example\\.io is cluster-scoped: use a key without a namespace \\("shipyard"\\)`), r.stderr);
      }
      // A key of nothing the program reconciles keeps the plain refusal, naming the other controller once announced.
      const none = await runCliProcess(['step', `${ns}/nothing`, '--kubeconfig', cluster.kubeconfigPath, '--go', `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`]);
      assert.equal(none.code, 2, none.stderr);
      assert.match(none.stderr, /harbors\.fleet\.example\.io is cluster-scoped: use a key without a namespace \("nothing"\) \(the resource of the Go controller harbor-keeper, the first the program sets up; --controller deployment follows another\)/, none.stderr);
      assert.doesNotMatch(none.stderr, /exists: the resource/, none.stderr);
    } finally {
      await cluster.transport.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => undefined);
    }
  });

  test('CLI step --go with --resource as a kind (Kind.group, as without --go): the controller reconciling the resolved resource is followed', { timeout: 180_000 }, async () => {
    const name = `cli-kind-${Date.now().toString(36)}`;
    await client.create(HARBORS, harbor(name, { berths: 1, namespace: 'default' }));
    try {
      const r = await runCliProcess(['step', name, '--kubeconfig', cluster.kubeconfigPath, '--resource', 'Harbor.fleet.example.io', '--go', `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /controller harbor-keeper \(priority queue\)/, r.stderr);
      assert.match(r.stdout, new RegExp(`▶ ${name} reconcile`), r.stdout);
    } finally {
      await client.delete(HARBORS, undefined, name).catch(() => {});
    }
  });

  test('CLI dry-run --go of a key that does not exist (a typo): a note names it and the closest, as step says', { timeout: 180_000 }, async () => {
    const name = `cli-typo-${Date.now().toString(36)}`;
    await client.create(HARBORS, harbor(name, { berths: 1, namespace: 'default' }));
    try {
      const r = await runCliProcess(['dry-run', `${name}x`, '--kubeconfig', cluster.kubeconfigPath, '--controller', 'harbor-keeper', '--go', `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`]);
      assert.match(r.stderr, new RegExp(`note: .*${name}x does not exist on the server \\(did you mean ${name}\\?\\)`), r.stderr);
      assert.doesNotMatch(r.stdout, /already as desired/, r.stdout);
    } finally {
      await client.delete(HARBORS, undefined, name).catch(() => {});
    }
  });

  test('CLI dry-run --go of a key that is the other controller\'s object (a Harbor\'s name given to the deployment controller): the note names the controller whose resource it is and the --controller that follows it', { timeout: 180_000 }, async () => {
    const name = `cli-other-${Date.now().toString(36)}`;
    await client.create(HARBORS, harbor(name, { berths: 1, namespace: 'default' }));
    try {
      // harbor-keeper is set up (and announced) before deployment, so it is known when the note is written.
      const r = await runCliProcess(['dry-run', `default/${name}`, '--kubeconfig', cluster.kubeconfigPath, '--controller', 'deployment', '--go', `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`]);
      assert.match(r.stderr, new RegExp(`note: deployments\\.apps default/${name} does not exist on the server; harbors\\.fleet\\.example\\.io ${name} exists: the resource of the program's controller harbor-keeper \\(--controller harbor-keeper follows it\\); the reconciler runs as for a deleted object`), r.stderr);
    } finally {
      await client.delete(HARBORS, undefined, name).catch(() => {});
    }
  });

  test('CLI check --go and inspect --go of a key that is the other controller\'s object: the error names the controller whose resource it is and the --resource that reaches it', { timeout: 240_000 }, async () => {
    const name = `cli-other-ci-${Date.now().toString(36)}`;
    await client.create(DEPLOYMENTS, deployment('default', name));
    try {
      const go = `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`;
      // check follows the first controller the program sets up (harbor-keeper: cluster-scoped Harbors); a bare name
      // of a Deployment in the default namespace is no typo of a Harbor.
      const check = await runCliProcess(['check', name, '--kubeconfig', cluster.kubeconfigPath, '--go', go]);
      assert.equal(check.code, 2, check.stderr);
      assert.match(check.stderr, new RegExp(`no harbors\\.fleet\\.example\\.io "${name}" to check[^\\n]*\\n.*deployments\\.apps default/${name} exists: the resource of the program's controller deployment \\(--resource deployments\\.apps checks it\\)`), check.stderr);
      // inspect follows the one --controller names: a Deployment's key whose object is the Harbor's name.
      await client.create(HARBORS, harbor(name, { berths: 1, namespace: 'default' }));
      await client.delete(DEPLOYMENTS, 'default', name);
      const inspect = await runCliProcess(['inspect', `default/${name}`, '--kubeconfig', cluster.kubeconfigPath, '--controller', 'deployment', '--go', go]);
      assert.notEqual(inspect.code, 0, inspect.stderr);
      assert.match(inspect.stderr, new RegExp(`default/${name} not found: no deployments\\.apps of that name is in the Go program's cache.*; harbors\\.fleet\\.example\\.io ${name} exists: the resource of the program's controller harbor-keeper \\(--resource harbors\\.fleet\\.example\\.io inspects it\\)`), inspect.stderr);
    } finally {
      await client.delete(HARBORS, undefined, name).catch(() => {});
      await client.delete(DEPLOYMENTS, 'default', name).catch(() => {});
    }
  });

  /**
   * Runs `body` with two fresh Harbors named after `prefix`: one labelled fleet.example.io/ignore (harbor-keeper's
   * event filter drops it) and one it queues, and the --go command line of the operator; deletes both after.
   */
  async function withIgnoredAndKept(prefix: string, body: (ignored: string, kept: string, go: string) => Promise<void>): Promise<void> {
    const ignored = `${prefix}-ignored-${Date.now().toString(36)}`;
    const kept = `${prefix}-kept-${Date.now().toString(36)}`;
    await client.create(HARBORS, { ...harbor(ignored, { berths: 1, namespace: 'default' }), metadata: { name: ignored, labels: { 'fleet.example.io/ignore': 'true' } } });
    await client.create(HARBORS, harbor(kept, { berths: 1, namespace: 'default' }));
    try {
      await body(ignored, kept, `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`);
    } finally {
      await client.delete(HARBORS, undefined, ignored).catch(() => {});
      await client.delete(HARBORS, undefined, kept).catch(() => {});
    }
  }

  test('CLI step --go of an object the controller\'s event filter drops (a Harbor labelled fleet.example.io/ignore): a note says only the step queued it; an object its events queue gets none', { timeout: 180_000 }, async () => {
    await withIgnoredAndKept('cli', async (ignored, kept, go) => {
      const a = await runCliProcess(['step', ignored, '--kubeconfig', cluster.kubeconfigPath, '--controller', 'harbor-keeper', '--go', go]);
      assert.match(a.stdout, new RegExp(`▶ ${ignored} reconcile, 1st of this key \\(step \\(force\\) from Reconcile Lab\\)`), a.stdout);
      assert.match(a.stderr, new RegExp(`note: ${ignored} was reconciled only because this step named it: none of harbor-keeper's watches queued it, though their initial list had it, so its predicates \\(builder\\.WithPredicates, WithEventFilter\\) or event handlers leave it out`), a.stderr);
      const b = await runCliProcess(['step', kept, '--kubeconfig', cluster.kubeconfigPath, '--controller', 'harbor-keeper', '--go', go]);
      assert.match(b.stdout, new RegExp(`▶ ${kept} reconcile, 1st of this key \\(step \\(force\\) from Reconcile Lab, initial list`), b.stdout);
      assert.doesNotMatch(b.stderr, /reconciled only because this step named it/, b.stderr);
    });
  });

  test('CLI report --go without keys: an object the controller\'s event filter drops (a Harbor labelled fleet.example.io/ignore) is left out, with a note, so a live report never writes what the running controller would not', { timeout: 180_000 }, async () => {
    await withIgnoredAndKept('rep', async (ignored, kept, go) => {
      const r = await runCliProcess(['report', '--kubeconfig', cluster.kubeconfigPath, '--controller', 'harbor-keeper', '--go', go, '--dry-run', '--json']);
      // Every Harbor of the cluster is reported (other tests' too, some of which fail on purpose: exit 1).
      assert.ok(r.code === 0 || r.code === 1, r.stderr);
      const entries = (JSON.parse(r.stdout) as { entries: Array<{ key: string; outcome: { kind: string } }> }).entries;
      assert.equal(entries.find((e) => e.key === kept)?.outcome.kind, 'done', JSON.stringify(entries.map((e) => [e.key, e.outcome])));
      const keys = entries.map((e) => e.key);
      assert.ok(keys.includes(kept), `the Harbor its watches queue is reported: ${JSON.stringify(keys)}`);
      assert.ok(!keys.includes(ignored), `the Harbor its event filter drops is not: ${JSON.stringify(keys)}`);
      assert.match(r.stderr, new RegExp(`note: \\d+ object\\(s\\) left out: none of harbor-keeper's watches queued them, though their initial list had them, so its predicates \\(builder\\.WithPredicates, WithEventFilter\\) or event handlers leave them out .*${ignored}`), r.stderr);
      // Named, it is reported all the same (as a step of it is).
      const named = await runCliProcess(['report', ignored, '--kubeconfig', cluster.kubeconfigPath, '--controller', 'harbor-keeper', '--go', go, '--dry-run', '--json']);
      assert.equal(named.code, 0, named.stderr);
      assert.deepEqual((JSON.parse(named.stdout) as { entries: Array<{ key: string }> }).entries.map((e) => e.key), [ignored]);
    });
  });

  test('CLI step --go with --leader-elect and no LeaderElectionNamespace (a kubebuilder main.go run outside the cluster): the failure says why and how to run it', { timeout: 180_000 }, async () => {
    const r = await runCliProcess(['step', '--kubeconfig', cluster.kubeconfigPath, '--controller', 'harbor-keeper', '--go', `${bin} --leader-elect --health-probe-bind-address=0 --metrics-bind-address=0`]);
    assert.notEqual(r.code, 0, r.stderr);
    assert.match(r.stderr, /unable to find leader election namespace/, r.stderr);
    assert.match(r.stderr, /\nIts manager has leader election on but no LeaderElectionNamespace: .*--leader-elect=false.*set LeaderElectionNamespace/, r.stderr);
  });

  test("CLI step/dry-run --go: a manager that fails to start after announcing its controllers (metrics port taken) fails with the program's own error, not only 'the controller process disconnected'", { timeout: 180_000 }, async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      for (const cmd of [['step'], ['dry-run', 'nowhere-harbor']]) {
        // controller-runtime reads its runnables' errors only after it has started the caches and controllers, so
        // a reconcile can legitimately complete (and the command succeed) before the manager gives up. Such an
        // attempt must show that reconcile; the failure path must be seen within three attempts.
        let failed: { stderr: string } | undefined;
        for (let attempt = 0; attempt < 3 && !failed; attempt++) {
          const r = await runCliProcess([...cmd, '--kubeconfig', cluster.kubeconfigPath, '--resource', 'harbors.fleet.example.io', '--go', `${bin} --health-probe-bind-address=0 --metrics-bind-address=127.0.0.1:${port}`]);
          if (r.code === 0) {
            assert.match(r.stdout, cmd[0] === 'step' ? / ■ \S+ |^step: empty: nothing is queued/m : /Dry-run reconcile of nowhere-harbor in the Go controller/, `a command that succeeded shows what ran:\n${r.stdout}`);
            continue;
          }
          assert.equal(r.code, 1, r.stderr);
          failed = r;
        }
        assert.ok(failed, `${cmd[0]}: the manager's failure was never seen in three attempts`);
        // The manager may exit before or after its controllers are announced (its metrics server starts beside the
        // bridge's dial): either way the error says how the program exited and shows its last output.
        assert.match(failed.stderr, /(The Go program exited with code 1|exited with code 1 before announcing a controller)\. Last output:\n/, failed.stderr);
        assert.match(failed.stderr, /address already in use/, failed.stderr);
      }
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  test('CLI run --go --json: the summary is the last line (the program\'s shutdown transitions, after it, are not printed)', { timeout: 180_000 }, async () => {
    // Interrupted once a journal line is out (the program runs), as a user's Ctrl+C would.
    const r = await runCliUntil(['run', '--json', '--kubeconfig', cluster.kubeconfigPath, '--controller', 'harbor-keeper', '--go', `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`], (out) => out.includes('"kind":'), 'a journal line');
    assert.ok(r.code === 0 || r.code === 1, `${r.code}: ${r.stderr}`); // 1: a key's last reconcile failed (harbors other tests left)
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(lines.length > 1, r.stdout);
    assert.ok('summary' in lines.at(-1)!, `last line: ${JSON.stringify(lines.at(-1))}`);
    assert.equal(lines.filter((l) => 'summary' in l).length, 1);
  });

  test('CLI run --go names the program\'s other controller once, with how its lines are labelled (not only [name] lines out of nowhere)', { timeout: 180_000 }, async () => {
    const r = await runCliUntil(['run', '--kubeconfig', cluster.kubeconfigPath, '--controller', 'harbor-keeper', '--go', `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`], (_, err) => err.includes('also runs controller') && err.includes('running on'), 'the banner');
    assert.match(r.stderr, /: controller harbor-keeper \(priority queue\), controller-runtime v0\.25\.\d+\n/, r.stderr);
    const also = r.stderr.split('\n').filter((l) => l.includes('also runs controller'));
    assert.deepEqual(also, ['reconcile-lab: the program also runs controller deployment (deployments.apps): its lines are labelled [deployment]'], r.stderr);
    // --namespace does not scope a Go program (its own cache does): run says so rather than "running … in <ns>".
    const scoped = await runCliUntil(['run', '--kubeconfig', cluster.kubeconfigPath, '--controller', 'deployment', '-n', 'nowhere-h1', '--go', `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`], (_, err) => err.includes('running on'), 'the banner');
    assert.match(scoped.stderr, /^reconcile-lab: note: --namespace nowhere-h1 does not limit a Go program: it reconciles what its manager's cache holds \(its cache\.Options\); --namespace only completes a key given without its namespace$/m, scoped.stderr);
    assert.match(scoped.stderr, /: controller deployment \(client-go queue\), controller-runtime v0\.25\.\d+\n/, scoped.stderr);
    assert.match(scoped.stderr, /^reconcile-lab: deployment running on deployments\.apps \(3 worker\(s\), client-go queue\); Ctrl\+C to stop$/m, scoped.stderr);
    assert.doesNotMatch(scoped.stderr, /the loop watches it|in nowhere-h1/, scoped.stderr);
  });

  test('CLI run --go -n on the program\'s cluster-scoped resource (Harbors): one note that --namespace does not apply and is ignored, whether the program or --resource names it', { timeout: 180_000 }, async () => {
    const note = /^reconcile-lab: note: harbors\.fleet\.example\.io is cluster-scoped: --namespace nowhere-h2 does not apply to it and is ignored \(every object of it is in scope\)$/m;
    for (const resource of [[], ['--resource', 'harbors.fleet.example.io']]) {
      const r = await runCliUntil(['run', '--kubeconfig', cluster.kubeconfigPath, '--controller', 'harbor-keeper', '-n', 'nowhere-h2', ...resource, '--go', `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`], (_, err) => err.includes('running on'), 'the banner');
      assert.match(r.stderr, note, r.stderr);
      assert.equal(r.stderr.split('\n').filter((l) => l.includes('nowhere-h2')).length, 1, `said once, and no other note about the namespace:\n${r.stderr}`);
    }
  });

  test('CLI run --go (text mode) runs the program\'s other controllers too, not only the followed one: their reconciles show, labelled', { timeout: 180_000 }, async () => {
    // Text mode starts the program paused (the banner comes first) and then resumed only the followed controller:
    // the others' queues filled and never ran, though run runs the whole program. --json never paused, so it hid this.
    const ns = await createNamespace(cluster.transport, 'go-user-run');
    await client.create(DEPLOYMENTS, deployment(ns, 'other'));
    const reconciledOther = (out: string) => out.split('\n').some((l) => l.startsWith('[deployment] ') && l.includes(`▶ ${ns}/other reconcile`)) && out.includes(`■ ${ns}/other `);
    const r = await runCliUntil(['run', '--kubeconfig', cluster.kubeconfigPath, '--controller', 'harbor-keeper', '--go', `${bin} --health-probe-bind-address=0 --metrics-bind-address=0`], reconciledOther, `the deployment controller reconciling ${ns}/other (start and end lines)`).finally(() =>
      cluster.transport.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => undefined),
    );
    assert.ok(r.code === 0 || r.code === 1, `${r.code}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^  \\[deployment\\] ${ns}/other +\\d+ `, 'm'), `its summary row:\n${r.stdout}`);
  });

  test('CLI step --go of a controller with bridge.Options but without bridge.Wrap: a warning says its reconciles are not reported and what to add, instead of printing nothing', { timeout: 180_000 }, async () => {
    const dir = join(ROOT, 'test/fixtures/go-external-cleanup');
    const bare = await runCliProcess(['step', 'default/not-wrapped', '--kubeconfig', cluster.kubeconfigPath, '--go', `go -C ${dir} run . --unwrapped`]);
    assert.equal(bare.code, 2, bare.stderr);
    assert.match(bare.stderr, /the Go controller widget does not name the resource it reconciles \(no bridge\.Wrap\(mgr, name, r, &YourKind\{\}\) gave its object, or it has no bridge\.Wrap\): pass --resource/, bare.stderr);
    const r = await runCliProcess(['step', 'default/not-wrapped', '--kubeconfig', cluster.kubeconfigPath, '--resource', 'widgets.lab.reconcile.dev', '--go', `go -C ${dir} run . --unwrapped`]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /⚠ controller widget handed out default\/not-wrapped and finished it without reporting a reconcile: its reconciler is not wrapped with bridge\.Wrap under this name\. Pass Complete\(bridge\.Wrap\(mgr, "widget", r, &YourKind\{\}\)\)/, r.stdout + r.stderr);
    assert.equal(r.stdout.match(/not wrapped/g)?.length, 1, `said once: ${r.stdout}`);
    assert.doesNotMatch(r.stderr, /not wrapped/, 'not repeated as a log line');
    // Wrapped (the same program without the flag): no such warning.
    const wrapped = await runCliProcess(['step', 'default/not-wrapped', '--kubeconfig', cluster.kubeconfigPath, '--go', `go -C ${dir} run .`]);
    assert.equal(wrapped.code, 0, wrapped.stderr);
    assert.match(wrapped.stdout, /▶ default\/not-wrapped reconcile/, wrapped.stdout);
    assert.doesNotMatch(wrapped.stdout + wrapped.stderr, /not wrapped/);
  });

  test('CLI step --go of a module whose go.mod is not tidy after adding the bridge (no go.sum yet): Go\'s own error, then the command that fixes it', { timeout: 180_000 }, async () => {
    // Go's advice for a missing go.sum entry is `go get <this module>`; what a user who just added the bridge's
    // lines needs is `go mod tidy` in the module.
    const dir = mkdtempSync(join(tmpdir(), 'rl-untidy-'));
    try {
      const fixture = join(ROOT, 'test/fixtures/go-external-cleanup');
      writeFileSync(join(dir, 'go.mod'), readFileSync(join(fixture, 'go.mod'), 'utf8').replaceAll('=> ../../../', `=> ${ROOT}/`));
      copyFileSync(join(fixture, 'main.go'), join(dir, 'main.go'));
      const r = await runCliProcess(['step', '--kubeconfig', cluster.kubeconfigPath, '--go', `go -C ${dir} run .`]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /exited with code 1 before announcing a controller\. Last output:\n[^]*missing go\.sum entry/, r.stderr);
      assert.ok(r.stderr.includes(`The module's go.mod is not tidy: run \`go mod tidy\` in ${dir} (after adding the bridge's require and replace lines`), r.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Last: its crashing Harbor would end any other test's program (Harbors are cluster-wide).
  test('CLI run --go ends when the program exits by itself (here: its reconciler exits), with the summary and exit code 1', { timeout: 180_000 }, async () => {
    const name = uniqueName('harbor-crash');
    await client.create(HARBORS, harbor(name, { mode: 'crash' }));
    try {
      const r = await runCliProcess(['run', '--kubeconfig', cluster.kubeconfigPath, '--resource', 'harbors.fleet.example.io', '--go', `${bin} --health-probe-bind-address=0`]);
      assert.match(r.stderr, /reconcile-lab: the Go program exited with code 3; stopping/, r.stderr);
      assert.match(r.stdout, /Summary: /, r.stdout);
      assert.equal(r.code, 1, 'a program that ended by itself is a failure');
    } finally {
      await client.delete(HARBORS, undefined, name);
    }
  });
});
