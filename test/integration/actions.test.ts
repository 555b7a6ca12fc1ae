import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, getTestCluster } from './support/cluster.ts';
import { client as makeClient, CONFIGMAPS, installLabCrd, sampleWidgets, type LabCrd } from './reconcilers.support.ts';
import { createLabReconciler, LAB_FINALIZER } from '../../src/core/reconcilers/labReconciler.ts';
import { dryRunReconcile } from '../../src/core/actions/dryRun.ts';
import { diagnoseStuck, FinalizerNotFoundError, loopKnownController, NAMESPACE_GVR, ObjectChangedError, removeFinalizers } from '../../src/core/actions/finalizers.ts';
import { inspectKey } from '../../src/core/actions/inspect.ts';
import { displayPair, toYaml } from '../../src/core/actions/objectDiff.ts';
import { buildReconcileReport, renderReportJson, renderReportMarkdown } from '../../src/core/actions/report.ts';
import { ApiError, isNotFound, type KubeClient } from '../../src/core/k8s/client.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { namespacedUserToken, tokenKubeconfig } from './support/limitedUser.ts';
import { KubeTransport } from '../../src/core/k8s/transport.ts';
import { loadKubeConfig } from '../../src/core/k8s/kubeconfig.ts';
import type { DynamicKubeClient, WriteRecord } from '../../src/core/k8s/dynamicClient.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';
import { FakeClock } from '../fakes/fakeClock.ts';
import { createDynamicClient } from '../../src/core/k8s/dynamicClient.ts';
import { applyDocuments, SAMPLES_FIELD_MANAGER } from '../../scripts/samples.mjs';

describe('actions against a real kube-apiserver', () => {
  let c: DynamicKubeClient;
  let crd: LabCrd;
  let ns: string;
  const reconciler = createLabReconciler({ clock: new FakeClock(Date.parse('2026-02-01T00:00:00Z')) });

  before(async () => {
    const cluster = await getTestCluster();
    c = makeClient(cluster.transport);
    crd = await installLabCrd(cluster.transport);
    ns = await createNamespace(cluster.transport, 'actions');
    for (const w of sampleWidgets(crd, ns)) await c.create(crd.gvr, w);
  });

  const snapshot = async () => {
    const widgets = (await c.list(crd.gvr, ns)).items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`);
    const cms = (await c.list(CONFIGMAPS, ns)).items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`);
    return { widgets, cms };
  };

  test('dry-run reconcile plans finalizer, child and status with diffs, and persists nothing', async () => {
    const before = await snapshot();
    const r = await dryRunReconcile({ client: c, reconciler, primary: crd.gvr, key: `${ns}/widget-ready` });
    assert.equal(r.outcome.kind, 'done');
    assert.deepEqual(r.actions.map((a) => `${a.verb}${a.subresource ? '/' + a.subresource : ''} ${a.resource}`), [
      `patch widgets.${crd.group}`,
      'create configmaps',
      `update/status widgets.${crd.group}`,
    ]);
    assert.ok(r.actions.every((a) => a.record.dryRun && a.outcome === 'ok'));
    assert.match(r.actions[0]!.diff, new RegExp(`\\+\\s+- ${LAB_FINALIZER.replace('/', '\\/')}`));
    assert.match(r.actions[1]!.diff, /\+\s+color: blue/);
    assert.match(r.status?.diff ?? '', /\+\s+reason: Reconciled/);
    assert.equal((r.status?.after as { conditions: Array<{ status: string }> }).conditions[0]!.status, 'True');
    assert.ok(r.explanation?.notes.some((n) => n.includes('does not exist')));
    assert.deepEqual(await snapshot(), before, 'no resourceVersion changed, nothing created');
  });

  test('dry-run shows the delayed requeue decision for a missing dependency', async () => {
    const r = await dryRunReconcile({ client: c, reconciler, primary: crd.gvr, key: `${ns}/widget-waiting` });
    assert.equal(r.outcome.kind, 'requeueAfter');
    assert.match(r.outcome.kind === 'requeueAfter' ? (r.outcome.reason ?? '') : '', /widget-waiting-settings/);
    assert.ok(!r.actions.some((a) => a.resource === 'configmaps'), 'child not planned while the dependency is missing');
  });

  test('report (live) matches what happened; a second pass is all "unchanged"', async () => {
    const report = await buildReconcileReport({ client: c, reconciler, primary: crd.gvr, namespace: ns, dryRun: false });
    assert.deepEqual(report.entries.map((e) => e.key), [`${ns}/widget-ready`, `${ns}/widget-stuck`, `${ns}/widget-waiting`]);
    const ready = report.entries[0]!;
    assert.equal(ready.outcome.kind, 'done');
    assert.deepEqual(ready.actions.map((a) => `${a.verb}${a.subresource ? '/' + a.subresource : ''}`), ['patch', 'create', 'update/status']);
    const server = await c.get(crd.gvr, ns, 'widget-ready');
    assert.equal(ready.resourceVersionAfter, server.metadata.resourceVersion);
    assert.notEqual(ready.resourceVersionBefore, ready.resourceVersionAfter);
    assert.deepEqual(ready.statusWritten, server.status);
    const child = await c.get(CONFIGMAPS, ns, 'widget-ready-config');
    assert.equal(ready.actions[1]!.resourceVersionAfter, child.metadata.resourceVersion);
    assert.match(ready.diff, /\+\s+color: blue/, 'observed (nothing) → desired child');
    const waiting = report.entries[2]!;
    assert.equal(waiting.outcome.kind, 'requeueAfter');
    assert.match(waiting.requeue, /requeue after 15 s \(DependencyMissing/);
    assert.equal(report.totals.requeued, 1);

    const again = await buildReconcileReport({ client: c, reconciler, primary: crd.gvr, namespace: ns, dryRun: false });
    assert.equal(again.totals.writes, 0);
    assert.equal(again.totals.unchanged, 3);
    for (const e of again.entries) assert.equal(e.resourceVersionBefore, e.resourceVersionAfter);
    assert.equal(again.entries[0]!.diff, '', 'observed matches desired');

    const md = renderReportMarkdown(report);
    assert.match(md, /^# Reconcile report: widgets\./);
    assert.match(md, new RegExp(`\\| \`${ns}/widget-ready\` \\| patch widgets.*create configmaps`));
    assert.match(renderReportMarkdown(again), /\*\*Actions:\*\* none/);
    assert.deepEqual(JSON.parse(renderReportJson(report)).totals, report.totals);
  });

  test('inspect: a stale cached copy is reported with its diff and the RV lag', async () => {
    const cached = await c.get(crd.gvr, ns, 'widget-ready');
    const same = await inspectKey({ client: c, gvr: crd.gvr, key: `${ns}/widget-ready`, cached });
    assert.equal(same.state, 'in-sync');
    assert.equal(same.differs, false);
    assert.equal(same.resourceVersionLag, 0);
    await c.patch(crd.gvr, ns, 'widget-ready', 'merge', { metadata: { labels: { tier: 'gold' } } });
    const stale = await inspectKey({ client: c, gvr: crd.gvr, key: `${ns}/widget-ready`, cached });
    assert.equal(stale.state, 'stale');
    assert.match(stale.diff, /\+\s+tier: gold/);
    assert.ok((stale.resourceVersionLag ?? 0) > 0);
    const missing = await inspectKey({ client: c, gvr: crd.gvr, key: `${ns}/nope`, cached: undefined });
    assert.equal(missing.state, 'both-missing');
  });

  test('inspect: a Go program\'s typed copy (an empty status the server does not have) and a metadata-only copy compare as in sync; a real difference still shows', async () => {
    const cm = await c.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'inspect-typed', namespace: ns }, data: { a: '1' } });
    const key = `${ns}/inspect-typed`;
    const typed = { ...cm, status: {}, metadata: { ...cm.metadata, deletionGracePeriodSeconds: null } } as unknown as KubeObject;
    const r = await inspectKey({ client: c, gvr: CONFIGMAPS, key, cached: typed });
    assert.equal(r.state, 'in-sync', r.diff);
    assert.equal((r.cached as { status?: unknown }).status, undefined, 'the empty extra is left out of the shown copy');
    const metadataOnly = { apiVersion: 'v1', kind: 'ConfigMap', metadata: cm.metadata } as KubeObject;
    assert.equal((await inspectKey({ client: c, gvr: CONFIGMAPS, key, cached: metadataOnly })).state, 'stale', 'compared whole, the data is missing');
    const meta = await inspectKey({ client: c, gvr: CONFIGMAPS, key, cached: metadataOnly, metadataOnly: true });
    assert.equal(meta.state, 'in-sync', meta.diff);
    assert.equal((meta.server as { data?: unknown }).data, undefined, 'the server copy is shown as metadata only too');
    await c.patch(CONFIGMAPS, ns, 'inspect-typed', 'merge', { metadata: { labels: { tier: 'gold' } }, data: { a: '2' } });
    const later = await inspectKey({ client: c, gvr: CONFIGMAPS, key, cached: metadataOnly, metadataOnly: true });
    assert.equal(later.state, 'stale');
    assert.match(later.diff, /\+\s+tier: gold/);
    assert.doesNotMatch(later.diff, /a: "?2/, 'data is not compared for a metadata-only cache');
  });

  const SECRETS = { group: '', version: 'v1', resource: 'secrets' };
  test('inspect: a Go program\'s copy encoded with its keys sorted is shown in the server\'s key order: equal copies render as the same YAML, a difference as its own lines only', async () => {
    const secret = await c.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'inspect-order', namespace: ns, labels: { app: 'db' } }, type: 'Opaque', data: { password: 'cGFzcw==' } } as KubeObject);
    const key = `${ns}/inspect-order`;
    // The bridge encodes its cached copy from a map (runtime.DefaultUnstructuredConverter): every map's keys sorted.
    const sorted = (x: unknown): unknown => (Array.isArray(x) ? x.map(sorted) : x && typeof x === 'object' ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sorted((x as Record<string, unknown>)[k])])) : x);
    const cached = sorted(secret) as KubeObject;
    assert.notEqual(toYaml(cached), toYaml(secret), 'the server answers a Secret in its Go struct\'s order, not sorted');
    const r = await inspectKey({ client: c, gvr: SECRETS, key, cached, goTyped: true });
    assert.equal(r.state, 'in-sync', r.diff);
    const [shownCache, shownServer] = displayPair(r.cached, r.server);
    assert.equal(toYaml(shownCache), toYaml(shownServer), 'the two sides of the diff editor read the same');
    await c.patch(SECRETS, ns, 'inspect-order', 'merge', { metadata: { labels: { tier: 'gold' } } });
    const stale = await inspectKey({ client: c, gvr: SECRETS, key, cached, goTyped: true });
    assert.equal(stale.state, 'stale');
    const changed = stale.diff.split('\n').filter((l) => /^[+-](?![+-])/.test(l));
    assert.deepEqual(changed.map((l) => l.replace(/\s+/g, ' ').trim()).sort(), ['+ resourceVersion: "' + stale.serverResourceVersion + '"', '+ tier: gold', '- resourceVersion: "' + stale.cachedResourceVersion + '"'].sort(), stale.diff);
  });

  test('inspect: a Go program\'s typed copy that omits the server\'s zero values (omitempty) is in sync; a field its type lacks still differs', async () => {
    const cm = await c.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'inspect-omitempty', namespace: ns }, immutable: false, data: { a: '1' } } as KubeObject);
    assert.equal((cm as { immutable?: boolean }).immutable, false, 'the server keeps the false');
    const key = `${ns}/inspect-omitempty`;
    const { immutable: _omitted, ...typed } = cm as KubeObject & { immutable?: boolean };
    const r = await inspectKey({ client: c, gvr: CONFIGMAPS, key, cached: typed as KubeObject, goTyped: true });
    assert.equal(r.state, 'in-sync', r.diff);
    assert.equal(r.differs, false);
    assert.equal((r.server as { immutable?: boolean }).immutable, false, 'the server copy is shown whole');
    assert.equal((await inspectKey({ client: c, gvr: CONFIGMAPS, key, cached: typed as KubeObject })).state, 'stale', 'an informer copy lacking the field is another version');
    const { data: _lacks, ...withoutData } = typed as KubeObject & { data?: unknown };
    const lacking = await inspectKey({ client: c, gvr: CONFIGMAPS, key, cached: withoutData as KubeObject, goTyped: true });
    assert.equal(lacking.state, 'stale');
    assert.match(lacking.diff, /\+\s+a: "?1/);
  });

  test('diagnoseStuck: a Terminating object held by a controller-less finalizer', async () => {
    // The loop's finalizer, as the live report above adds it (so that this test also runs alone).
    const cur = await c.get(crd.gvr, ns, 'widget-stuck');
    if (!cur.metadata.finalizers?.includes(LAB_FINALIZER)) await c.patch(crd.gvr, ns, 'widget-stuck', 'merge', { metadata: { finalizers: [...(cur.metadata.finalizers ?? []), LAB_FINALIZER] } });
    await c.delete(crd.gvr, ns, 'widget-stuck');
    const clock = new FakeClock(Date.now() + 90_000);
    const d = await diagnoseStuck({ client: c, gvr: crd.gvr, namespace: ns, name: 'widget-stuck', clock, knownControllers: [{ name: 'Reconcile Lab (local loop)', finalizers: [LAB_FINALIZER], running: false }] });
    assert.equal(d.terminating, true);
    assert.ok((d.terminatingForMs ?? 0) >= 60_000);
    const byName = new Map(d.finalizers.map((f) => [f.finalizer, f]));
    const legacy = byName.get('legacy.example.com/external-dns')!;
    assert.equal(legacy.domain, 'legacy.example.com');
    assert.equal(legacy.running, 'unknown', 'nothing visible: honest "unknown"');
    assert.match(legacy.consequence, /orphaned/);
    const ours = byName.get(LAB_FINALIZER)!;
    assert.deepEqual(ours.addedBy, ['reconcile-lab-test'], 'attributed through managedFields');
    assert.match(ours.probableOwner, /Reconcile Lab/);
    assert.ok(ours.evidence.some((e) => /stopped in this session/.test(e)));
    assert.equal(ours.running, 'no', 'our own loop, stopped');
    assert.match(d.summary, /terminating for/);
  });

  test('diagnoseStuck on the lab samples: the sample manifest set the legacy finalizer; our own paused loop owns its finalizer', async () => {
    const cluster = await getTestCluster();
    const ns2 = await createNamespace(cluster.transport, 'samples');
    // Exactly what `npm run lab` does (scripts/samples.mjs), retargeted at this run's CRD and namespace.
    await applyDocuments(cluster.transport, sampleWidgets(crd, ns2));
    const ours = createDynamicClient(cluster.transport, { fieldManager: 'reconcile-lab' });
    // The extension's loop adds its finalizer (a merge patch re-sending the whole list, as the lab reconciler does).
    await ours.patch(crd.gvr, ns2, 'widget-stuck', 'merge', { metadata: { finalizers: ['legacy.example.com/external-dns', LAB_FINALIZER] } });
    await c.delete(crd.gvr, ns2, 'widget-stuck');
    // managedFields times have one-second precision: let the loop's next write land in a later second than the deletion.
    await new Promise((r) => setTimeout(r, 1100));
    await ours.patch(crd.gvr, ns2, 'widget-stuck', 'merge', { metadata: { annotations: { touched: 'by the loop' } } });
    const known = [{ name: "Reconcile Lab's lab loop", finalizers: [LAB_FINALIZER], managers: ['reconcile-lab'], running: false, state: 'paused' as const }];
    const d = await diagnoseStuck({ client: c, gvr: crd.gvr, namespace: ns2, name: 'widget-stuck', knownControllers: known });
    const byName = new Map(d.finalizers.map((f) => [f.finalizer, f]));
    const legacy = byName.get('legacy.example.com/external-dns')!;
    assert.ok(legacy.addedBy.includes(SAMPLES_FIELD_MANAGER), legacy.addedBy.join(','));
    assert.match(legacy.probableOwner, /added by field manager "reconcile-lab-samples"\)$/);
    assert.doesNotMatch(legacy.probableOwner, /"reconcile-lab"/, 'the loop re-sent the list; it did not add this finalizer');
    assert.equal(legacy.running, 'unknown', "the loop's own writes are no evidence for the legacy owner");
    const lab = byName.get(LAB_FINALIZER)!;
    assert.equal(lab.probableOwner, "Reconcile Lab's lab loop");
    assert.equal(lab.running, 'paused');
    assert.ok(lab.evidence.some((e) => /paused in this session: step or resume/.test(e)));
    assert.match(d.summary, /belongs to this session's paused loop/);
    const running = await diagnoseStuck({ client: c, gvr: crd.gvr, namespace: ns2, name: 'widget-stuck', knownControllers: [{ ...known[0]!, running: true, state: 'running' }] });
    assert.equal(running.finalizers.find((f) => f.finalizer === LAB_FINALIZER)!.running, 'yes');
    await removeFinalizers({ client: c, gvr: crd.gvr, namespace: ns2, name: 'widget-stuck' });
  });

  test("diagnoseStuck: a finalizer an exec or module reconciler added through Reconcile Lab's client is attributed to it, not hidden behind the lab loop", async () => {
    const cluster = await getTestCluster();
    const ns3 = await createNamespace(cluster.transport, 'ownfin');
    const ours = createDynamicClient(cluster.transport, { fieldManager: 'reconcile-lab' });
    const mine = 'gardens.example.org/cleanup';
    // Created by a manifest with a finalizer of its own; then the user's module reconciler (same field manager as
    // the lab loop) adds its finalizer with a merge patch re-sending the list, as a controller does.
    await createDynamicClient(cluster.transport, { fieldManager: 'kubectl-client-side-apply' }).create(crd.gvr, {
      apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name: 'rose', namespace: ns3, finalizers: ['legacy.example.com/compost'] }, spec: {},
    });
    await ours.patch(crd.gvr, ns3, 'rose', 'merge', { metadata: { finalizers: ['legacy.example.com/compost', mine] } });
    await c.delete(crd.gvr, ns3, 'rose');
    // A write by that manager after the deletion (one-second precision: a later second) is no proof for either owner.
    await new Promise((r) => setTimeout(r, 1100));
    await ours.patch(crd.gvr, ns3, 'rose', 'merge', { metadata: { annotations: { touched: 'by the lab loop' } } });
    // What the CLI passes: the lab reconciler owns only its own finalizer, and writes as "reconcile-lab".
    const known = [{ name: 'the Reconcile Lab lab reconciler', finalizers: [LAB_FINALIZER], managers: ['reconcile-lab'], running: false }];
    const d = await diagnoseStuck({ client: c, gvr: crd.gvr, namespace: ns3, name: 'rose', knownControllers: known });
    const byName = new Map(d.finalizers.map((f) => [f.finalizer, f]));
    const own = byName.get(mine)!;
    assert.deepEqual(own.addedBy, ['reconcile-lab'], 'managedFields record who added it');
    assert.match(own.probableOwner, /added by field manager "reconcile-lab"\)$/);
    assert.ok(!own.evidence.some((e) => /no managedFields entry/.test(e)), own.evidence.join(' | '));
    assert.ok(own.evidence.some((e) => /does not own this finalizer: another reconciler writing through the same client added it \(with Reconcile Lab: an exec or module reconciler\)/.test(e)), own.evidence.join(' | '));
    assert.ok(!own.evidence.some((e) => /after deletion was requested/.test(e)), 'a shared manager\'s write proves nothing');
    assert.equal(own.running, 'unknown');
    const compost = byName.get('legacy.example.com/compost')!;
    assert.deepEqual(compost.addedBy, ['kubectl-client-side-apply']);
    assert.ok(!compost.evidence.some((e) => /same client/.test(e)), compost.evidence.join(' | '));
    await removeFinalizers({ client: c, gvr: crd.gvr, namespace: ns3, name: 'rose' });
  });

  test("diagnoseStuck: while this session's loop runs a module reconciler, the finalizer its field manager alone added is that loop's (paused: step it), not an unknown owner's", async () => {
    const cluster = await getTestCluster();
    const ns4 = await createNamespace(cluster.transport, 'modfin');
    const ours = createDynamicClient(cluster.transport, { fieldManager: 'reconcile-lab' });
    const mine = 'tenants.example.org/record';
    // Created by a manifest with a finalizer of its own; the module adds its finalizer re-sending the whole list.
    await createDynamicClient(cluster.transport, { fieldManager: 'kubectl-client-side-apply' }).create(crd.gvr, {
      apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name: 'acme', namespace: ns4, finalizers: ['legacy.example.com/compost'] }, spec: {},
    });
    await ours.patch(crd.gvr, ns4, 'acme', 'merge', { metadata: { finalizers: ['legacy.example.com/compost', mine] } });
    await c.delete(crd.gvr, ns4, 'acme');
    // What the extension passes for its loop running module:tenant.ts on this resource, paused.
    const loop = loopKnownController({ name: 'module:/ws/tenant.ts', reconcilerKind: 'module', ownFinalizers: [], fieldManager: 'reconcile-lab', state: 'paused', primary: true });
    assert.ok(loop);
    const d = await diagnoseStuck({ client: c, gvr: crd.gvr, namespace: ns4, name: 'acme', knownControllers: [loop] });
    const byName = new Map(d.finalizers.map((f) => [f.finalizer, f]));
    const own = byName.get(mine)!;
    assert.equal(own.probableOwner, "Reconcile Lab's module:/ws/tenant.ts loop");
    assert.equal(own.knownOwner, "Reconcile Lab's module:/ws/tenant.ts loop");
    assert.equal(own.running, 'paused', own.evidence.join(' | '));
    assert.ok(own.evidence.some((e) => /"reconcile-lab", the field manager your reconciler writes with, added it/.test(e)), own.evidence.join(' | '));
    assert.ok(own.evidence.some((e) => /paused in this session: step or resume/.test(e)), own.evidence.join(' | '));
    assert.ok(!own.evidence.some((e) => /no visible sign/.test(e)), own.evidence.join(' | '));
    assert.match(d.summary, new RegExp(`${mine} belongs to this session's paused loop`));
    // The manifest's finalizer, re-sent by the module with its own, is listed by two managers: not claimed.
    const compost = byName.get('legacy.example.com/compost')!;
    assert.equal(compost.knownOwner, undefined);
    assert.equal(compost.running, 'unknown');
    // The same loop on another resource, or the lab reconciler (it owns its finalizer by name only), claims nothing.
    for (const other of [
      loopKnownController({ name: 'module:/ws/tenant.ts', reconcilerKind: 'module', ownFinalizers: [], fieldManager: 'reconcile-lab', state: 'paused', primary: false }),
      loopKnownController({ name: 'lab', reconcilerKind: 'lab', ownFinalizers: [LAB_FINALIZER], fieldManager: 'reconcile-lab', state: 'paused', primary: true }),
    ]) {
      const d2 = await diagnoseStuck({ client: c, gvr: crd.gvr, namespace: ns4, name: 'acme', knownControllers: other ? [other] : [] });
      assert.equal(d2.finalizers.find((f) => f.finalizer === mine)!.running, 'unknown', other?.name ?? 'no loop');
    }
    await removeFinalizers({ client: c, gvr: crd.gvr, namespace: ns4, name: 'acme' });
  });

  test('finalizer removal fails safely when the object changed (since it was looked at, or between read and patch)', async () => {
    const seen = await c.get(crd.gvr, ns, 'widget-stuck');
    // Another client changes the object after the person looked.
    await c.patch(crd.gvr, ns, 'widget-stuck', 'merge', { metadata: { annotations: { note: 'concurrent' } } });
    const writes: WriteRecord[] = [];
    await assert.rejects(
      removeFinalizers({ client: c, gvr: crd.gvr, namespace: ns, name: 'widget-stuck', finalizer: 'legacy.example.com/external-dns', expectedResourceVersion: seen.metadata.resourceVersion, onWrite: (w) => writes.push(w) }),
      (e: unknown) => e instanceof ObjectChangedError && /refresh and retry/.test(e.message),
    );
    assert.equal(writes.length, 0, 'nothing was sent');

    // Between our GET and our PATCH a live controller removes its own finalizer: the test ops reject our patch (422).
    let raced = false;
    const racing: KubeClient = {
      ...c,
      async patch(gvr, nsp, name, type, body, o) {
        if (!raced) {
          raced = true;
          const cur = await c.get(crd.gvr, ns, 'widget-stuck');
          const i = cur.metadata.finalizers!.indexOf(LAB_FINALIZER);
          await c.patch(crd.gvr, ns, 'widget-stuck', 'json', [{ op: 'remove', path: `/metadata/finalizers/${i}` }]);
        }
        return c.patch(gvr, nsp, name, type, body, o);
      },
    };
    await assert.rejects(
      removeFinalizers({ client: racing, gvr: crd.gvr, namespace: ns, name: 'widget-stuck', finalizer: 'legacy.example.com/external-dns', onWrite: (w) => writes.push(w) }),
      ObjectChangedError,
    );
    assert.equal(writes.length, 1);
    assert.equal(writes[0]!.outcome, 'error');
    assert.equal(writes[0]!.error?.code, 422);
    const now = await c.get(crd.gvr, ns, 'widget-stuck');
    assert.deepEqual(now.metadata.finalizers, ['legacy.example.com/external-dns'], 'the concurrent removal stands; ours was not applied');

    await assert.rejects(removeFinalizers({ client: c, gvr: crd.gvr, namespace: ns, name: 'widget-stuck', finalizer: 'nope.example.com/x' }), FinalizerNotFoundError);
  });

  test('escape hatch: the stuck object (no controller running) is released; dry-run first persists nothing', async () => {
    const before = await c.get(crd.gvr, ns, 'widget-stuck');
    const dry = await removeFinalizers({ client: c, gvr: crd.gvr, namespace: ns, name: 'widget-stuck', finalizer: 'legacy.example.com/external-dns', dryRun: true });
    assert.deepEqual(dry.removed, ['legacy.example.com/external-dns']);
    assert.equal(dry.deleted, false);
    assert.equal((await c.get(crd.gvr, ns, 'widget-stuck')).metadata.resourceVersion, before.metadata.resourceVersion, 'dry-run persisted nothing');

    const writes: WriteRecord[] = [];
    const r = await removeFinalizers({ client: c, gvr: crd.gvr, namespace: ns, name: 'widget-stuck', finalizer: 'legacy.example.com/external-dns', expectedResourceVersion: before.metadata.resourceVersion, onWrite: (w) => writes.push(w) });
    assert.deepEqual(r.removed, ['legacy.example.com/external-dns']);
    assert.deepEqual(r.remaining, []);
    assert.equal(r.deleted, true);
    await assert.rejects(c.get(crd.gvr, ns, 'widget-stuck'), isNotFound);
    assert.equal(writes.length, 1);
    assert.equal(writes[0]!.verb, 'patch');
    assert.equal(writes[0]!.patchType, 'json');
    assert.equal(writes[0]!.resourceVersionBefore, before.metadata.resourceVersion);
  });

  test('escape hatch works on built-in and cluster-scoped objects (ConfigMap, Namespace via /finalize)', async () => {
    const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: ns, finalizers: ['example.com/hold', 'example.com/hold-too'] } };
    await c.create(CONFIGMAPS, cm);
    await c.delete(CONFIGMAPS, ns, 'held');
    const r = await removeFinalizers({ client: c, gvr: CONFIGMAPS, namespace: ns, name: 'held' });
    assert.deepEqual(r.removed, ['example.com/hold', 'example.com/hold-too'], 'all of them');
    assert.equal(r.deleted, true);

    // A namespace held by its spec finalizer "kubernetes" and a metadata finalizer.
    const nsName = `${ns}-stuck`;
    await c.create(NAMESPACE_GVR, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: nsName, finalizers: ['example.com/ns-hold'] } });
    await c.delete(NAMESPACE_GVR, undefined, nsName);
    const d = await diagnoseStuck({ client: c, gvr: NAMESPACE_GVR, name: nsName });
    assert.deepEqual(d.finalizers.map((f) => `${f.location}:${f.finalizer}`).sort(), ['metadata:example.com/ns-hold', 'spec:kubernetes'].sort());
    // With a stale resourceVersion the /finalize PUT is refused with 409 → ObjectChangedError.
    const seen = await c.get(NAMESPACE_GVR, undefined, nsName);
    const staleBody = { ...seen, spec: { finalizers: [] } };
    await c.patch(NAMESPACE_GVR, undefined, nsName, 'merge', { metadata: { annotations: { poke: '1' } } });
    await assert.rejects(c.updateSubresource(NAMESPACE_GVR, staleBody, 'finalize'), (e: { code?: number }) => e.code === 409);
    const writes: WriteRecord[] = [];
    const released = await removeFinalizers({ client: c, gvr: NAMESPACE_GVR, name: nsName, onWrite: (w) => writes.push(w) });
    assert.deepEqual(released.removed.sort(), ['example.com/ns-hold', 'kubernetes'].sort());
    assert.deepEqual(writes.map((w) => `${w.verb}${w.subresource ? '/' + w.subresource : ''}`), ['patch', 'update/finalize']);
    assert.deepEqual(released.remaining, []);
  });
});

describe('diagnoseStuck as a user who may not list Leases or Deployments (a namespaced Role)', () => {
  test('the owner stays unknown and the evidence names what was not looked at and the can-i line, instead of "no matching Lease"; an admin still looks', async () => {
    const cluster = await getTestCluster();
    const admin = cluster.transport;
    const crd = await installLabCrd(admin);
    const ns = await createNamespace(admin, 'fin-unseen');
    const token = await namespacedUserToken(admin, ns, [{ apiGroups: [crd.group], resources: ['widgets'], verbs: ['get', 'list', 'watch'] }], 'reader');
    const dir = mkdtempSync(join(tmpdir(), 'rl-fin-unseen-'));
    const path = join(dir, 'kubeconfig');
    writeFileSync(path, tokenKubeconfig(cluster.kubeConfig.getCurrentCluster()!, token, [{ name: 'dev', namespace: ns }]), { mode: 0o600 });
    const transport = new KubeTransport(loadKubeConfig({ path }));
    const reader = createDynamicClient(transport, { fieldManager: 'reconcile-lab' });
    try {
      const c = makeClient(admin);
      // A finalizer whose domain names a controller (gaugeworks): its Lease and Deployment would be looked for.
      await c.create(crd.gvr, { apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name: 'held', namespace: ns, finalizers: ['gaugeworks.example.org/cleanup'] }, spec: { data: { color: 'blue' } } });
      // RBAC bindings take effect through the authorizer's cache: wait until the user may read.
      for (let i = 0; i < 100; i++) {
        if (await reader.get(crd.gvr, ns, 'held').then(() => true, () => false)) break;
        await new Promise((res) => setTimeout(res, 100));
      }
      const d = await diagnoseStuck({ client: reader, gvr: crd.gvr, namespace: ns, name: 'held' });
      const f = d.finalizers[0]!;
      assert.equal(f.running, 'unknown');
      const text = f.evidence.join(' | ');
      assert.match(text, /Leases not looked at: you may not list leases\.coordination\.k8s\.io in all namespaces \(check with: kubectl auth can-i list leases\.coordination\.k8s\.io --all-namespaces\)/, text);
      assert.match(text, /Deployments not looked at: you may not list deployments\.apps in all namespaces \(check with: kubectl auth can-i list deployments\.apps --all-namespaces\)/, text);
      assert.doesNotMatch(text, /no matching Lease/, 'what was not looked at is not said to be absent');
      assert.ok(!text.includes(token), 'the token appears nowhere');
      // The admin may list both: the same object reads as before.
      const seen = await diagnoseStuck({ client: c, gvr: crd.gvr, namespace: ns, name: 'held' });
      const adminText = seen.finalizers[0]!.evidence.join(' | ');
      assert.match(adminText, /no visible sign of the owning controller \(no matching Lease, Deployment or recent write\)/, adminText);
      assert.doesNotMatch(adminText, /not looked at/);
    } finally {
      // Also when an assertion failed: a finalizer left behind keeps the namespace Terminating on a shared cluster.
      await removeFinalizers({ client: makeClient(admin), gvr: crd.gvr, namespace: ns, name: 'held' }).catch(() => {});
      transport.dispose();
      rmSync(dir, { recursive: true, force: true });
      await admin.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
    }
  });
});

describe('removeFinalizers as a user who may update but not patch', () => {
  test('removes the finalizer with a guarded update; a user who may not write at all gets the 403 naming patch, and nothing changes', async () => {
    const cluster = await getTestCluster();
    const admin = cluster.transport;
    const crd = await installLabCrd(admin);
    const ns = await createNamespace(admin, 'fin-update');
    const writer = await namespacedUserToken(admin, ns, [{ apiGroups: [crd.group], resources: ['widgets'], verbs: ['get', 'list', 'watch', 'update'] }], 'updater');
    const reader = await namespacedUserToken(admin, ns, [{ apiGroups: [crd.group], resources: ['widgets'], verbs: ['get', 'list', 'watch'] }], 'reader');
    const dir = mkdtempSync(join(tmpdir(), 'rl-fin-update-'));
    const clientOf = (token: string, name: string) => {
      const path = join(dir, name);
      writeFileSync(path, tokenKubeconfig(cluster.kubeConfig.getCurrentCluster()!, token, [{ name: 'dev', namespace: ns }]), { mode: 0o600 });
      const transport = new KubeTransport(loadKubeConfig({ path }));
      return { transport, client: createDynamicClient(transport, { fieldManager: 'reconcile-lab' }) };
    };
    const w = clientOf(writer, 'writer');
    const r = clientOf(reader, 'reader');
    try {
      const c = makeClient(admin);
      for (const name of ['held', 'kept']) {
        await c.create(crd.gvr, { apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name, namespace: ns, finalizers: ['h9.example.org/hold'], labels: { keep: 'me' } }, spec: { data: { color: 'blue' } } });
        await c.delete(crd.gvr, ns, name);
      }
      // RBAC bindings take effect through the authorizer's cache: wait until the users may read.
      for (let i = 0; i < 100; i++) {
        const ok = await Promise.all([w.client.get(crd.gvr, ns, 'held'), r.client.get(crd.gvr, ns, 'kept')]).then(() => true, () => false);
        if (ok) break;
        await new Promise((res) => setTimeout(res, 100));
      }
      // The updater: the patch is forbidden, the guarded update removes the finalizer and the object goes.
      const done = await removeFinalizers({ client: w.client, gvr: crd.gvr, namespace: ns, name: 'held' });
      assert.deepEqual(done.removed, ['h9.example.org/hold']);
      assert.equal(done.deleted, true);
      await assert.rejects(c.get(crd.gvr, ns, 'held'), (e: unknown) => isNotFound(e));
      // The reader: the patch's 403 (it names the right to ask for), and the object keeps its finalizer and labels.
      await assert.rejects(removeFinalizers({ client: r.client, gvr: crd.gvr, namespace: ns, name: 'kept' }), (e: unknown) => e instanceof ApiError && e.code === 403 && /cannot patch resource "widgets"/.test(e.message));
      const kept = await c.get(crd.gvr, ns, 'kept');
      assert.deepEqual(kept.metadata.finalizers, ['h9.example.org/hold']);
      assert.deepEqual(kept.metadata.labels, { keep: 'me' });
      await removeFinalizers({ client: c, gvr: crd.gvr, namespace: ns, name: 'kept' });
    } finally {
      w.transport.dispose();
      r.transport.dispose();
      rmSync(dir, { recursive: true, force: true });
      await admin.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
    }
  });
});
