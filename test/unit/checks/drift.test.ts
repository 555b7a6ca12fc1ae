import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createsOutsideScratch, dataChange, driftTargets, MAX_DRIFT_TARGETS, ownsHint, unownedChildCause } from '../../../src/core/checks/drift.ts';
import { normalizeEndState, type RawEndState } from '../../../src/core/checks/mask.ts';
import type { WriteRecord } from '../../../src/core/k8s/dynamicClient.ts';
import type { GroupVersionResource, KubeObject } from '../../../src/core/k8s/objects.ts';

const NS = 'rl-check-0a1b2c3d';
const WIDGETS: GroupVersionResource = { group: 'lab.reconcile.dev', version: 'v1alpha1', resource: 'widgets' };
const CM: GroupVersionResource = { group: '', version: 'v1', resource: 'configmaps' };
const SECRET: GroupVersionResource = { group: '', version: 'v1', resource: 'secrets' };
const DEPLOY: GroupVersionResource = { group: 'apps', version: 'v1', resource: 'deployments' };
const label = (g: GroupVersionResource) => (g.group ? `${g.resource}.${g.group}` : g.resource);

let n = 0;
function obj(name: string, extra: Partial<KubeObject> & Record<string, unknown> = {}): KubeObject {
  n++;
  return { metadata: { name, namespace: NS, uid: `uid-${name}`, resourceVersion: String(100 + n), creationTimestamp: `2026-12-04T00:00:${String(n).padStart(2, '0')}Z` }, ...extra } as KubeObject;
}
function create(gvr: GroupVersionResource, after: KubeObject, more: Partial<WriteRecord> = {}): WriteRecord {
  return { verb: 'create', gvr, namespace: after.metadata.namespace, name: after.metadata.name ?? '', key: `${NS}/${after.metadata.name}`, dryRun: false, outcome: 'ok', after, ...more } as WriteRecord;
}
function state(objects: Array<[GroupVersionResource, KubeObject]>): { raw: RawEndState; end: ReturnType<typeof normalizeEndState> } {
  const raw: RawEndState = { namespace: NS, objects: objects.map(([g, o]) => ({ resource: label(g), object: o })) };
  return { raw, end: normalizeEndState(raw) };
}

test('targets: children the controller created in the scratch namespace, in creation order, with a data change for ConfigMaps only', () => {
  const widget = obj('w');
  const cm = obj('w-settings', { data: { b: '2', a: 'one' } });
  const secret = obj('w-creds', { data: { token: Buffer.from('s3cret').toString('base64') } });
  const deploy = obj('w-web', { spec: { replicas: 2 } });
  const { raw, end } = state([[WIDGETS, widget], [CM, cm], [SECRET, secret], [DEPLOY, deploy]]);
  const t = driftTargets([create(CM, cm), create(SECRET, secret), { ...create(WIDGETS, widget), verb: 'update', subresource: 'status' } as WriteRecord, create(DEPLOY, deploy)], raw, end, WIDGETS, label, new Set());
  assert.deepEqual(t.map((x) => `${x.endKey} ${x.uid}`), ['configmaps/w-settings uid-w-settings', 'secrets/w-creds uid-w-creds', 'deployments.apps/w-web uid-w-web']);
  assert.deepEqual(t[0]!.change, { path: 'data.a', patch: { data: { a: 'one-drifted' } } }, 'the first key in sorted order');
  assert.equal(t[1]!.change, undefined, 'a Secret is only deleted: its data is often written once on purpose');
  assert.equal(t[2]!.change, undefined, 'kinds with server-defaulted fields are only deleted');
});

test('a child made by server-side apply (client.Apply of an object not there yet) is a target; an apply to an object that was there, or one the apply found already made, is not a create', () => {
  const widget = obj('w');
  const svc = obj('w-svc', { spec: { ports: [{ port: 80 }] } });
  const cm = obj('w-settings', { data: { a: '1' } });
  const SERVICES: GroupVersionResource = { group: '', version: 'v1', resource: 'services' };
  const { raw, end } = state([[WIDGETS, widget], [SERVICES, svc], [CM, cm]]);
  const applied = (gvr: GroupVersionResource, o: KubeObject, more: Partial<WriteRecord> = {}) => create(gvr, o, { verb: 'apply', ...more });
  const t = driftTargets([applied(SERVICES, svc), applied(CM, cm, { before: cm, resourceVersionBefore: cm.metadata.resourceVersion! })], raw, end, WIDGETS, label, new Set());
  assert.deepEqual(t.map((x) => x.endKey), ['services/w-svc'], 'the apply that made the Service; not the apply to a ConfigMap that existed before it');
  assert.deepEqual(createsOutsideScratch([applied(SERVICES, { ...svc, metadata: { ...svc.metadata, namespace: 'elsewhere' } }, { namespace: 'elsewhere' })], NS, WIDGETS, label), ['services elsewhere/w-svc']);
});

test('not targets: the primary, failed / dry-run / status writes, generateName children, objects gone or elsewhere, events, Jobs and Pods', () => {
  const widget = obj('w');
  const gen = obj('w-report-x7k2p', { data: { a: '1' } });
  gen.metadata.generateName = 'w-report-';
  const gone = obj('w-old', { data: { a: '1' } });
  const elsewhere = { ...obj('w-other'), metadata: { ...obj('w-other').metadata, namespace: 'default' } } as KubeObject;
  const failed = obj('w-failed');
  const dry = obj('w-dry');
  const event = obj('w.17a');
  const job = obj('w-migrate');
  const pod = obj('w-probe');
  const JOBS = { group: 'batch', version: 'v1', resource: 'jobs' };
  const PODS = { group: '', version: 'v1', resource: 'pods' };
  const { raw, end } = state([[WIDGETS, widget], [CM, gen], [CM, failed], [CM, dry], [{ group: '', version: 'v1', resource: 'events' }, event], [JOBS, job], [PODS, pod]]);
  const t = driftTargets([
    create(WIDGETS, widget),
    create(CM, gen),
    create(CM, gone),
    create(CM, elsewhere),
    { ...create(CM, failed), outcome: 'error' } as WriteRecord,
    { ...create(CM, dry), dryRun: true },
    create({ group: '', version: 'v1', resource: 'events' }, event),
    create(JOBS, job),
    create(PODS, pod),
  ], raw, end, WIDGETS, label, new Set());
  assert.deepEqual(t, []);
});

test('a child masked whole by the reference runs is no target; a masked data key is not the one changed', () => {
  const a = obj('w-a', { data: { stamp: 't1', color: 'blue' } });
  const b = obj('w-b', { data: { x: '1' } });
  const { raw, end } = state([[CM, a], [CM, b]]);
  const t = driftTargets([create(CM, a), create(CM, b)], raw, end, WIDGETS, label, new Set(['configmaps/w-a::data.color', 'configmaps/w-b::*']));
  assert.deepEqual(t.map((x) => x.endKey), ['configmaps/w-a']);
  assert.deepEqual(t[0]!.change, { path: 'data.stamp', patch: { data: { stamp: 't1-drifted' } } });
});

test(`at most ${MAX_DRIFT_TARGETS} targets, each once`, () => {
  const cms = Array.from({ length: 5 }, (_, i) => obj(`w-${i}`));
  const { raw, end } = state(cms.map((o) => [CM, o] as [GroupVersionResource, KubeObject]));
  const t = driftTargets([create(CM, cms[0]!), create(CM, cms[0]!), ...cms.slice(1).map((o) => create(CM, o))], raw, end, WIDGETS, label, new Set());
  assert.deepEqual(t.map((x) => x.name), ['w-0', 'w-1', 'w-2']);
});

test('dataChange: nothing for other kinds (Secrets too), empty or non-string data, every key masked, or an immutable object', () => {
  assert.equal(dataChange(DEPLOY, { data: { a: '1' } }, () => false), undefined);
  assert.equal(dataChange(CM, {}, () => false), undefined);
  assert.equal(dataChange(CM, { data: {} }, () => false), undefined);
  assert.equal(dataChange(CM, { data: { a: '1' } }, () => true), undefined);
  assert.equal(dataChange(CM, { data: { a: '1' }, immutable: true } as { data: unknown }, () => false), undefined, 'an immutable ConfigMap cannot be changed by anyone');
  assert.equal(dataChange(SECRET, { data: { a: 'MQ==' } }, () => false), undefined);
  assert.deepEqual(dataChange(CM, { data: { a: '1' } }, () => false), { path: 'data.a', patch: { data: { a: '1-drifted' } } });
});

test('ownsHint: the Owns line in the package names a kubebuilder project uses', () => {
  assert.equal(ownsHint({ gvr: CM, kind: 'ConfigMap' }), 'Owns(&corev1.ConfigMap{})');
  assert.equal(ownsHint({ gvr: DEPLOY, kind: 'Deployment' }), 'Owns(&appsv1.Deployment{})');
  assert.equal(ownsHint({ gvr: { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' }, kind: 'Ingress' }), 'Owns(&networkingv1.Ingress{})');
  assert.equal(ownsHint({ gvr: WIDGETS, kind: 'Widget' }), 'Owns(&labv1alpha1.Widget{})');
  assert.equal(ownsHint({ gvr: CM, kind: '' }), 'Owns(&corev1.ConfigMap{})');
});

test('a child without a controller ownerReference: the target says so, and the cause named first is the missing reference (what to set, or how to watch a child kept unowned on purpose)', () => {
  const owned = obj('w-settings', { data: { a: '1' } });
  owned.metadata.ownerReferences = [{ apiVersion: 'lab.reconcile.dev/v1alpha1', kind: 'Widget', name: 'w', uid: 'uid-w', controller: true }];
  const notController = obj('w-audit', { data: { a: '1' } });
  notController.metadata.ownerReferences = [{ apiVersion: 'lab.reconcile.dev/v1alpha1', kind: 'Widget', name: 'w', uid: 'uid-w' }];
  const bare = obj('w-entry', { data: { a: '1' } });
  const { raw, end } = state([[WIDGETS, obj('w')], [CM, owned], [CM, notController], [CM, bare]]);
  const t = driftTargets([create(CM, owned), create(CM, notController), create(CM, bare)], raw, end, WIDGETS, label, new Set());
  assert.deepEqual(t.map((x) => `${x.name} ${x.noController}`), ['w-settings false', 'w-audit true', 'w-entry true']);
  assert.equal(unownedChildCause(t[0]!, true, ownsHint(t[0]!)), undefined, 'an owned child: the usual causes apply');
  const go = unownedChildCause(t[2]!, true, 'Owns(&corev1.ConfigMap{})')!;
  assert.match(go, /^configmaps\/w-entry has no ownerReference with controller: true, so `Owns\(&corev1\.ConfigMap\{\}\)` maps none of its events/);
  assert.match(go, /controllerutil\.SetControllerReference/);
  assert.match(go, /`Watches\(&corev1\.ConfigMap\{\}, handler\.EnqueueRequestsFromMapFunc\(…\)\)`/);
  const loop = unownedChildCause(t[1]!, false, ownsHint(t[1]!))!;
  assert.match(loop, /^configmaps\/w-audit has no ownerReference with controller: true, so Reconcile Lab's loop[^]*controller: true/);
  assert.doesNotMatch(loop, /Owns|Watches/, 'no Go advice for a module or exec reconciler');
});
