// A third user-shaped Go controller (samples/go-relay-operator), unlike the first two: a namespaced CRD with two
// served versions, a manager cache limited to two namespaces (and to labelled Secrets), the builder controller
// "beacon" with a GenericEvent channel source, a metadata-only owned ConfigMap, its own slower rate limiter
// (250 ms doubling) and 4 workers, a finalizer flow with DeleteAllOf, server-side apply both ways (Patch with
// client.Apply, client.Apply), Create with generateName and Status().Patch; and "lamp-keeper" built with
// controller.New. Driven from the core against the real local control plane; each test pins what broke for this
// user: keys outside the cache's namespaces, the journal of generateName / DeleteAllOf / client.Apply writes, the
// dry-run of the finalizer removal, the user's own backoff delays, why-queued from the channel and the child.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { RemoteController } from '../../src/core/bridge/remoteController.ts';
import type { Journal, JournalEntry } from '../../src/core/journal/journal.ts';
import { createDynamicClient, type DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import type { GroupVersionResource, KubeObject } from '../../src/core/k8s/objects.ts';
import { createNamespace, getTestCluster, installCrd, waitUntil, type TestCluster } from './support/cluster.ts';
import { buildGoProgram, haveGo, relayOperatorDir } from './support/goSample.ts';
import { GoLaunches, type FreshBridge } from './support/goLaunch.ts';
import { runCliProcess } from './support/cli.ts';

const BEACONS: GroupVersionResource = { group: 'relay.example.io', version: 'v1alpha1', resource: 'beacons' };
const CONFIGMAPS: GroupVersionResource = { group: '', version: 'v1', resource: 'configmaps' };
const SECRETS: GroupVersionResource = { group: '', version: 'v1', resource: 'secrets' };
const LABEL = 'relay.example.io/beacon';
/** A Secret value that must never leave the Go process. */
const LAMP_OIL = 'lamp-oil-never-shown';

type End = Extract<JournalEntry, { kind: 'reconcileEnd' }>;
type Start = Extract<JournalEntry, { kind: 'reconcileStart' }>;
type Write = Extract<JournalEntry, { kind: 'write' }>;
const ends = (j: Journal, key: string) => j.entries({ kinds: ['reconcileEnd'], key }).filter((e): e is End => e.kind === 'reconcileEnd' && e.key === key);
const starts = (j: Journal, key: string) => j.entries({ kinds: ['reconcileStart'], key }).filter((e): e is Start => e.kind === 'reconcileStart' && e.key === key);
const writes = (j: Journal, key: string) => j.entries({ kinds: ['write'] }).filter((e): e is Write => e.kind === 'write' && e.key === key);

function beacon(ns: string, name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): KubeObject {
  return { apiVersion: 'relay.example.io/v1alpha1', kind: 'Beacon', metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) }, spec };
}

describe('an operator-sdk-shaped Go controller (cache namespaces, controller.New, a channel source, its own rate limiter) through the bridge', { skip: (!haveGo() && 'go is not installed') || (!existsSync(relayOperatorDir()) && 'samples/go-relay-operator is not in this tree') }, () => {
  let cluster: TestCluster;
  let client: DynamicKubeClient;
  let bin: string;
  let external: string;
  let nsA: string;
  let nsB: string;
  let nsC: string;
  const launches = new GoLaunches();

  before(async () => {
    cluster = await getTestCluster();
    client = createDynamicClient(cluster.transport, { fieldManager: 'reconcile-lab-test' });
    const crd = parseAllDocuments(readFileSync(join(relayOperatorDir(), 'config', 'crd', 'beacons.yaml'), 'utf8'))[0]!.toJSON() as KubeObject;
    await installCrd(cluster.transport, crd);
    bin = buildGoProgram(relayOperatorDir(), 'relay-operator');
    external = mkdtempSync(join(tmpdir(), 'rlab-relay-'));
    nsA = await createNamespace(cluster.transport, 'relay-a');
    nsB = await createNamespace(cluster.transport, 'relay-b');
    nsC = await createNamespace(cluster.transport, 'relay-c');
  });

  after(async () => {
    await launches.dispose();
    rmSync(external, { recursive: true, force: true });
  });

  /** Launches the program (welcomed paused) with its cache on nsA and nsB; resolves with the beacon controller. */
  async function start(): Promise<{ journal: Journal; beacons: RemoteController; hub: FreshBridge['hub'] }> {
    const { journal, r, hub } = await launches.launch({
      kubeconfigPath: cluster.kubeconfigPath,
      command: bin,
      args: ['--health-probe-bind-address=0', '--metrics-bind-address=0', `--namespaces=${nsA},${nsB}`, `--external-dir=${external}`, '--ping-every=300ms'],
      accept: (c) => c.controller.name === 'beacon',
    });
    return { journal, beacons: r.controller, hub };
  }

  test('the cache namespaces are announced; a key outside them is refused by step and dry-run with the reason; generateName, DeleteAllOf and client.Apply writes name their objects', { timeout: 180_000 }, async () => {
    await client.create(BEACONS, beacon(nsA, 'north', { message: 'hello' }));
    await client.create(BEACONS, beacon(nsC, 'outside', { message: 'nope' }));
    const { journal, beacons, hub } = await start();
    assert.deepEqual(beacons.announcement.cacheNamespaces, [nsA, nsB].sort());
    assert.equal(beacons.announcement.cacheLabelSelector, undefined);
    // controller.New's controller: the Secrets of its ByObject entry are listed with a label selector.
    await waitUntil(() => hub.controllers.some((c) => c.controller.name === 'lamp-keeper'), 'lamp-keeper announced', 60_000);
    const lamps = hub.controllers.find((c) => c.controller.name === 'lamp-keeper')!.controller;
    assert.equal(lamps.announcement.cacheLabelSelector, 'app=lamp');
    assert.match(lamps.outsideCache(`${nsA}/other`, { app: 'web' }) ?? '', /label selector app=lamp/);
    assert.equal(lamps.outsideCache(`${nsA}/lamp`, { app: 'lamp' }), undefined);
    assert.equal(beacons.status().maxConcurrentReconciles, 4);
    assert.match(beacons.outsideCache(`${nsC}/outside`) ?? '', /outside beacon's cache/);
    assert.equal(beacons.outsideCache(`${nsA}/north`), undefined);
    await assert.rejects(beacons.step({ key: `${nsC}/outside`, force: true }), /outside the cache of controller "beacon"/);
    await assert.rejects(beacons.dryRun(`${nsC}/outside`), /outside the cache of controller "beacon"/);
    assert.equal(starts(journal, `${nsC}/outside`).length, 0, 'nothing ran for the key outside');

    const key = `${nsA}/north`;
    const r = await beacons.step({ key });
    assert.ok(r.kind === 'reconciled' && r.outcome.kind === 'success', JSON.stringify(r));
    await waitUntil(() => writes(journal, key).some((w) => w.subresource === 'status'), 'the status patch journaled', 30_000);
    const w = writes(journal, key);
    const trail = w.map((x) => `${x.verb} ${x.resource} ${x.objectKey} ${x.resourceVersionBefore ?? '—'} → ${x.resourceVersionAfter ?? '—'}`).join('\n');
    const generated = w.find((x) => x.verb === 'create');
    assert.ok(generated && generated.objectKey.startsWith(`${nsA}/beacon-north-log-`) && generated.objectKey.length > `${nsA}/beacon-north-log-`.length, `the generated name:\n${trail}`);
    const applied = w.find((x) => x.verb === 'apply');
    assert.ok(applied && applied.objectKey === `${nsA}/beacon-north-applied` && applied.resource === 'configmaps.v1' && applied.resourceVersionAfter, `client.Apply:\n${trail}`);
  });

  test('finalizer flow: a dry-run of the Terminating Beacon plans the DeleteAllOf (namespace, selector) and the finalizer removal with its diff, persisting nothing; the step then cleans up', { timeout: 180_000 }, async () => {
    await client.create(BEACONS, beacon(nsA, 'gone', { message: 'bye' }));
    const { journal, beacons } = await start();
    const key = `${nsA}/gone`;
    const lit = await beacons.step({ key });
    assert.ok(lit.kind === 'reconciled' && lit.outcome.kind === 'success', JSON.stringify(lit));
    const children = async () => (await client.list(CONFIGMAPS, nsA)).items.filter((c) => c.metadata.labels?.[LABEL] === 'gone').length;
    await waitUntil(async () => (await children()) === 3, 'its three ConfigMaps exist', 30_000);
    assert.ok(existsSync(join(external, `${nsA}_gone`)), 'the external thing exists');

    await client.delete(BEACONS, nsA, 'gone');
    const terminating = await client.get(BEACONS, nsA, 'gone');
    assert.ok(terminating.metadata.deletionTimestamp && terminating.metadata.finalizers?.includes('relay.example.io/cleanup'));
    // The controller's cache has the Terminating object once its update queued the key (paused: it stays queued).
    await waitUntil(
      () => (beacons.keyState(key)?.reasons ?? []).some((x) => x.kind === 'informer' && x.resourceVersion === terminating.metadata.resourceVersion),
      'the deletion queued it',
      30_000,
    );
    const d = await beacons.dryRun(key);
    assert.ok(d.outcome.kind === 'success' && d.writes.every((x) => x.dryRun), JSON.stringify(d));
    const all = d.writes.find((x) => x.verb === 'deleteAllOf');
    assert.ok(all && all.namespace === nsA && all.selector === `${LABEL}=gone` && all.resource === 'configmaps', JSON.stringify(d.writes));
    const unfinalize = d.writes.find((x) => x.verb === 'patch' && x.resource === 'beacons' && !x.subresource);
    const finalizers = (o: Record<string, unknown> | undefined) => (o?.metadata as { finalizers?: string[] } | undefined)?.finalizers ?? [];
    assert.ok(unfinalize && finalizers(unfinalize.before).includes('relay.example.io/cleanup') && !finalizers(unfinalize.after).includes('relay.example.io/cleanup'), JSON.stringify(unfinalize));
    assert.equal(unfinalize.deleted, true, 'the dry-run says removing the last finalizer would delete the Beacon');
    const still = await client.get(BEACONS, nsA, 'gone');
    assert.equal(still.metadata.resourceVersion, terminating.metadata.resourceVersion, 'the dry-run persisted nothing on the Beacon');
    assert.equal(await children(), 3, 'the dry-run deleted no ConfigMap');
    assert.ok(existsSync(join(external, `${nsA}_gone`)), 'bridge.IsDryRun kept the external thing');

    const done = await beacons.step({ key });
    assert.ok(done.kind === 'reconciled' && done.outcome.kind === 'success', JSON.stringify(done));
    await assert.rejects(client.get(BEACONS, nsA, 'gone'), /not found|NotFound|404/i, 'the Beacon is gone once its finalizer is removed');
    assert.equal(await children(), 0);
    assert.ok(!existsSync(join(external, `${nsA}_gone`)), 'the external thing was cleaned up');
    assert.ok(writes(journal, key).some((x) => x.verb === 'delete' && x.objectKey === `${nsA}/*[${LABEL}=gone]`), 'the DeleteAllOf journaled with namespace and selector');
    const removal = writes(journal, key).filter((x) => x.verb === 'patch' && x.objectKey === key && !x.subresource).at(-1); // the step's last: the removal
    assert.ok(removal?.deleted && removal.resourceVersionAfter === removal.resourceVersionBefore, `the finalizer removal journaled as deleted (rv unchanged): ${JSON.stringify(removal)}`);
  });

  test("the user's own rate limiter: backoff 250 then 500 ms (not controller-runtime's 5 ms default); step this key while it backs off; reset backoff starts over", { timeout: 180_000 }, async () => {
    await client.create(BEACONS, beacon(nsB, 'broken', { message: 'x', fail: true }));
    const { journal, beacons } = await start();
    const key = `${nsB}/broken`;
    const trail = () => journal.entries({ key }).map((e) => JSON.stringify(e)).join('\n');
    const fail = async (n: number) => {
      const r = await beacons.step({ key, force: true });
      assert.ok(r.kind === 'reconciled' && r.outcome.kind === 'error', `step ${n}: ${JSON.stringify(r)}\n${trail()}`);
      await waitUntil(() => ends(journal, key).length === n, `end ${n} journaled with its retry`, 30_000);
    };
    await fail(1);
    await fail(2);
    await fail(3);
    const delays = starts(journal, key).flatMap((s) => s.triggers.filter((t) => t.kind === 'backoff').map((t) => (t.kind === 'backoff' ? `${t.attempt}:${t.delayMs}` : '')));
    assert.deepEqual(delays, ['1:250', '2:500'], `the backoffs of the user's limiter:\n${trail()}`);
    const third = ends(journal, key)[2]!.outcome;
    assert.ok(third.kind === 'error' && third.failures === 3, JSON.stringify(third));
    assert.equal(beacons.resetBackoff(key), true);
    await fail(4);
    const fourth = ends(journal, key)[3]!.outcome;
    assert.ok(fourth.kind === 'error' && fourth.failures === 1, `after reset backoff the count starts over: ${JSON.stringify(fourth)}\n${trail()}`);
  });

  test('why queued: the GenericEvent channel and the metadata-only owned ConfigMap are both causes of one reconcile', { timeout: 180_000 }, async () => {
    await client.create(BEACONS, beacon(nsA, 'pinged', { message: 'ping' }, { 'relay.example.io/ping': 'yes' }));
    const { journal, beacons } = await start();
    const key = `${nsA}/pinged`;
    const lit = await beacons.step({ key });
    assert.ok(lit.kind === 'reconciled' && lit.outcome.kind === 'success', JSON.stringify(lit));
    await waitUntil(() => beacons.keyState(key)?.phase !== 'processing', 'settled', 30_000);
    const cm = await client.get(CONFIGMAPS, nsA, 'beacon-pinged');
    await client.update(CONFIGMAPS, { ...cm, metadata: { ...cm.metadata, labels: { ...cm.metadata.labels, touched: 'yes' } } });
    await waitUntil(() => {
      const rs = beacons.keyState(key)?.reasons ?? [];
      return rs.some((x) => x.kind === 'owned' && x.child === `${nsA}/beacon-pinged` && x.event === 'update') && rs.some((x) => x.kind === 'manual' && /outside an informer event/.test(x.note ?? ''));
    }, 'the owned child update and a channel ping recorded', 30_000);
    const r = await beacons.step({ key });
    assert.equal(r.kind, 'reconciled');
    const triggers = starts(journal, key).at(-1)!.triggers;
    assert.ok(triggers.some((t) => t.kind === 'owned' && t.child === `${nsA}/beacon-pinged`), JSON.stringify(triggers));
    assert.ok(triggers.some((t) => t.kind === 'manual' && /channel source/.test(t.note ?? '')), JSON.stringify(triggers));
  });
  test('per-namespace cache scope (ByObject Namespaces with their own label selectors): announced for lamp-keeper only; an object its namespace\'s selector leaves out is refused by step, reconcile now and dry-run, in the editor and the CLI, until its labels change into it', { timeout: 240_000 }, async () => {
    const torchA = `${nsA}/torch-a`;
    const torchB = `${nsB}/torch-b`;
    const lampB = `${nsB}/lamp-b`;
    for (const [key, app] of [[torchA, 'torch'], [torchB, 'torch'], [lampB, 'lamp']] as const) {
      const [namespace, name] = key.split('/') as [string, string];
      await client.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace, labels: { app } }, stringData: { k: LAMP_OIL } });
    }
    const scope = `--lamp-scope=${nsA};${nsB}:app=torch`;
    const { journal, r, hub } = await launches.launch({
      kubeconfigPath: cluster.kubeconfigPath,
      command: bin,
      args: ['--health-probe-bind-address=0', '--metrics-bind-address=0', `--namespaces=${nsA},${nsB}`, `--external-dir=${external}`, scope],
      accept: (c) => c.controller.name === 'lamp-keeper',
    });
    const lamps = r.controller;
    const [first, second] = [nsA, nsB].sort();
    const label = (ns: string) => (ns === nsA ? 'app=lamp' : 'app=torch');
    assert.deepEqual(lamps.announcement.cacheSelectors, [{ namespace: first, label: label(first!) }, { namespace: second, label: label(second!) }]);
    assert.deepEqual(lamps.announcement.cacheNamespaces, [first, second]);
    // The other controller of the same manager: its namespaces, no selector — nothing of it is refused on labels.
    await waitUntil(() => hub.controllers.some((c) => c.controller.name === 'beacon'), 'beacon announced', 60_000);
    const beacons = hub.controllers.find((c) => c.controller.name === 'beacon')!.controller;
    assert.deepEqual(beacons.announcement.cacheSelectors, [{ namespace: first }, { namespace: second }]);
    assert.equal(beacons.outsideCache(`${nsA}/any`, { app: 'torch' }), undefined);

    // The editor's labels of each object, as its informer would have them (read from the server here).
    const labelsOf = new Map<string, Record<string, string>>();
    const read = async (key: string) => {
      const [namespace, name] = key.split('/') as [string, string];
      labelsOf.set(key, (await client.get(SECRETS, namespace, name)).metadata.labels ?? {});
    };
    for (const k of [torchA, torchB, lampB]) await read(k);
    lamps.setObjectLabels((k) => labelsOf.get(k));
    const outsideA = new RegExp(`key ${torchA} is outside the cache of controller "lamp-keeper": its manager's cache \\(cache\\.Options\\) lists Secret objects in namespace ${nsA} only with label selector app=lamp, which its labels \\(app=torch\\) do not match`);
    assert.equal(lamps.outsideCache(torchA, labelsOf.get(torchA)), `outside lamp-keeper's cache (label selector app=lamp in ${nsA})`);
    assert.equal(lamps.outsideCache(torchB, labelsOf.get(torchB)), undefined, `${nsB} has its own selector, app=torch`);
    await assert.rejects(lamps.step({ key: torchA, force: true }), outsideA);
    await assert.rejects(lamps.dryRun(torchA), outsideA);
    assert.equal(lamps.reconcileNow(torchA), false);
    assert.equal(starts(journal, torchA).length, 0, 'nothing ran for the key outside');

    // Inside its namespace's own selector: the step reconciles it (the cache has it: the reconciler marks it seen).
    const inB = await lamps.step({ key: torchB, force: true });
    assert.ok(inB.kind === 'reconciled' && inB.outcome.kind === 'success', JSON.stringify(inB));
    await waitUntil(async () => (await client.get(SECRETS, nsB, 'torch-b')).metadata.annotations?.['lamp.example.io/seen'] === 'true', 'torch-b seen', 30_000);

    // Its labels change into the selector: the cache sees it (queued by the add), the editor no longer refuses it.
    await client.patch(SECRETS, nsA, 'torch-a', 'merge', { metadata: { labels: { app: 'lamp' } } });
    await read(torchA);
    await waitUntil(() => lamps.keyState(torchA)?.phase === 'queued', 'torch-a queued once its labels match', 30_000);
    assert.equal(lamps.outsideCache(torchA, labelsOf.get(torchA)), undefined);
    // A dry-run of the Secret controller: the plan shows the annotation it would add, and no value leaves the process
    // (the bridge masks them; before, a Secret write carried no objects at all, so the plan showed no change).
    const plan = await lamps.dryRun(torchA);
    const planned = JSON.stringify(plan);
    assert.ok(!planned.includes(LAMP_OIL) && !planned.includes(Buffer.from(LAMP_OIL).toString('base64').slice(0, 16)), planned);
    const mark = plan.writes.find((x) => x.verb === 'patch' && x.resource === 'secrets');
    const annotations = (o: Record<string, unknown> | undefined) => (o?.metadata as { annotations?: Record<string, string> } | undefined)?.annotations ?? {};
    assert.ok(mark && mark.patch === undefined && annotations(mark.after)['lamp.example.io/seen'] === 'true' && annotations(mark.before)['lamp.example.io/seen'] === undefined, planned);
    assert.deepEqual((mark.after as { data?: unknown }).data, { k: '***' }, planned);
    assert.equal((await client.get(SECRETS, nsA, 'torch-a')).metadata.annotations?.['lamp.example.io/seen'], undefined, 'the dry-run persisted nothing');
    const inA = await lamps.step({ key: torchA });
    assert.ok(inA.kind === 'reconciled' && inA.outcome.kind === 'success', JSON.stringify(inA));

    // The CLI refuses the same keys with the same words: one a selector leaves out (the editor's check, labels read
    // from the server), one outside the namespaces (the process's own refusal).
    const program = `${bin} --health-probe-bind-address=0 --metrics-bind-address=0 --namespaces=${nsA},${nsB} --external-dir=${external} ${scope}`;
    const cliStep = await runCliProcess(['step', '--kubeconfig', cluster.kubeconfigPath, '--resource', 'secrets', '--go', program, lampB]);
    assert.notEqual(cliStep.code, 0, cliStep.stderr);
    assert.match(cliStep.stderr, new RegExp(`key ${lampB} is outside the cache of controller "lamp-keeper": its manager's cache \\(cache\\.Options\\) lists Secret objects in namespace ${nsB} only with label selector app=torch, which its labels \\(app=lamp\\) do not match`), cliStep.stderr);
    const cliDry = await runCliProcess(['dry-run', '--kubeconfig', cluster.kubeconfigPath, '--resource', 'secrets', '--go', program, `${nsC}/elsewhere`]);
    assert.notEqual(cliDry.code, 0, cliDry.stderr);
    assert.match(cliDry.stderr, new RegExp(`key ${nsC}/elsewhere is outside the cache of controller "lamp-keeper": its manager's cache \\(cache\\.Options\\) watches Secret only in namespace\\(s\\) ${first}, ${second}`), cliDry.stderr);
  });

  test('a custom request type (beacon-board, one key per namespace): announced with its type; its key is a text with every cause; dry-run, step and an unknown text by that text; the CLI steps it by text with --controller', { timeout: 240_000 }, async () => {
    // Namespaces of its own: the other tests leave Beacons in nsA and nsB.
    const nsA = await createNamespace(cluster.transport, 'relay-board-a');
    const nsB = await createNamespace(cluster.transport, 'relay-board-b');
    await client.create(BEACONS, beacon(nsA, 'north', { message: 'n' }));
    await client.create(BEACONS, beacon(nsA, 'south', { message: 's' }));
    await client.create(BEACONS, beacon(nsB, 'east', { message: 'e' }));
    const args = ['--health-probe-bind-address=0', '--metrics-bind-address=0', `--namespaces=${nsA},${nsB}`, `--external-dir=${external}`, '--board'];
    const { journal, r } = await launches.launch({ kubeconfigPath: cluster.kubeconfigPath, command: bin, args, accept: (c) => c.controller.name === 'beacon-board' });
    const board = r.controller;
    assert.equal(board.announcement.requestType, 'controller.BoardKey');
    assert.equal(board.resourceId, 'beacons.relay.example.io');
    const key = `Namespace=${nsA}`;
    await waitUntil(() => board.keyState(key)?.phase === 'queued', `${key} queued`, 60_000);
    const reasons = board.keyState(key)!.reasons;
    for (const name of ['north', 'south']) {
      assert.ok(reasons.some((x) => (x.kind === 'watch' || x.kind === 'informer') && x.objectKey === `${nsA}/${name}` && x.event === 'add'), `the add of ${name} is a cause: ${JSON.stringify(reasons)}`);
    }
    const plan = await board.dryRun(key);
    const created = plan.writes.find((w) => w.verb === 'create' && w.resource === 'configmaps');
    assert.ok(created && (created.after as { data?: Record<string, string> } | undefined)?.data?.beacons === 'north=\nsouth=', JSON.stringify(plan));
    await assert.rejects(client.get(CONFIGMAPS, nsA, 'relay-board'), /not ?found|404/i, 'the dry-run persisted nothing');
    const stepped = await board.step({ key });
    assert.ok(stepped.kind === 'reconciled' && stepped.key === key && stepped.outcome.kind === 'success', JSON.stringify(stepped));
    assert.equal(((await client.get(CONFIGMAPS, nsA, 'relay-board')) as { data?: Record<string, string> }).data?.beacons, 'north=\nsouth=');
    assert.equal(ends(journal, key).length, 1);
    assert.ok(writes(journal, key).some((w) => w.verb === 'create'), 'the write is journaled under the text key');
    await assert.rejects(board.step({ key: 'Namespace=nowhere', force: true }), /never queued a key shown as "Namespace=nowhere"/);
    assert.equal((await client.get(CONFIGMAPS, nsB, 'relay-board').catch(() => undefined)), undefined, `${nsB} was not reconciled`);

    // The CLI: the same program, the controller named, the key given as its text (no default namespace added).
    const program = [bin, ...args].join(' ');
    const cli = await runCliProcess(['step', '--kubeconfig', cluster.kubeconfigPath, '--resource', 'beacons.relay.example.io', '--go', program, '--controller', 'beacon-board', `Namespace=${nsB}`]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stderr + cli.stdout, new RegExp(`controller beacon-board`), cli.stderr);
    assert.equal(((await client.get(CONFIGMAPS, nsB, 'relay-board')) as { data?: Record<string, string> }).data?.beacons, 'east=');
  });

  test('inspect --go (CLI): the program\'s own cache, typed for its Beacons and metadata-only for the ConfigMaps it owns (only metadata compared); a resource it does not cache is a clear error', { timeout: 240_000 }, async () => {
    const ns = await createNamespace(cluster.transport, 'relay-inspect');
    await client.create(BEACONS, beacon(ns, 'inspected', { message: 'lens' }));
    await client.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'inspected-cm', namespace: ns }, data: { lamp: 'on' } } as KubeObject);
    const program = [bin, '--health-probe-bind-address=0', '--metrics-bind-address=0', `--namespaces=${ns}`, `--external-dir=${external}`].join(' ');
    const base = ['inspect', '--kubeconfig', cluster.kubeconfigPath, '--go', program];

    const typed = await runCliProcess([...base, '--resource', 'beacons.relay.example.io', '--json', `${ns}/inspected`]);
    assert.equal(typed.code, 0, typed.stderr);
    const t = JSON.parse(typed.stdout) as { state: string; cache: string; cached: KubeObject; cachedResourceVersion: string; serverResourceVersion: string };
    assert.equal(t.state, 'in-sync', typed.stdout);
    assert.match(t.cache, /^the Go program's cache \(its manager's, which its controllers share\)$/);
    assert.equal((t.cached.spec as { message?: string }).message, 'lens', 'the typed Beacon, spec and all');
    assert.equal(t.cachedResourceVersion, t.serverResourceVersion);

    const meta = await runCliProcess([...base, '--resource', 'configmaps', `${ns}/inspected-cm`]);
    assert.equal(meta.code, 0, meta.stderr);
    assert.match(meta.stdout, new RegExp(`^${ns}/inspected-cm: in-sync\\n  cache: the Go program's cache \\(its manager's, which its controllers share\\), metadata only: only metadata is compared\\n`), meta.stdout);

    const none = await runCliProcess([...base, '--resource', 'services', `${ns}/anything`]);
    assert.notEqual(none.code, 0);
    assert.match(none.stderr, /no informer for services\.v1: none of its watches asked for it \(it caches [^)]*configmaps\.v1/, none.stderr);
  });
});
