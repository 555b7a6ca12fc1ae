import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SharedIndexInformer } from '../../../src/core/cache/sharedIndexInformer.ts';
import { onInitialListRefused, refusedListMessage, type RefusedList } from '../../../src/core/cache/refusedList.ts';
import { toApiError } from '../../../src/core/k8s/transport.ts';
import { FakeClock } from '../../fakes/fakeClock.ts';
import { FakeListerWatcher } from '../../fakes/fakeListerWatcher.ts';
import { recordingLogger, settle, widget, widgets } from './helpers.ts';

const FORBIDDEN_ALL = 'widgets.lab.reconcile.dev is forbidden: User "system:serviceaccount:h2-shop:dev" cannot list resource "widgets" in API group "lab.reconcile.dev" at the cluster scope';

function setup() {
  const clock = new FakeClock();
  const lw = new FakeListerWatcher();
  const { logger } = recordingLogger();
  const informer = new SharedIndexInformer({ listerWatcher: lw, resource: widgets, clock, logger, random: () => 0, watchList: false });
  return { clock, lw, informer };
}

const forbidden = (message: string) => toApiError(403, JSON.stringify({ kind: 'Status', reason: 'Forbidden', message }), 'GET /apis/lab.reconcile.dev/v1/widgets');

test('a 403 on the initial list is reported once, with the resource and the scope; a 500 is not', async () => {
  const t = setup();
  const seen: RefusedList[] = [];
  const sub = onInitialListRefused([{ informer: t.informer }], (r) => void seen.push(r));
  t.lw.failNextList(toApiError(500, '{"message":"etcd is down"}', 'GET x'));
  t.lw.failNextList(forbidden(FORBIDDEN_ALL), 2);
  t.informer.run();
  await settle();
  assert.equal(seen.length, 0, 'a 500 is retried silently, as client-go does');
  t.clock.step(60_000);
  await settle();
  t.clock.step(60_000);
  await settle();
  assert.equal(seen.length, 1, 'said once, though the list was refused twice');
  assert.equal(seen[0]!.code, 403);
  assert.equal(seen[0]!.namespace, undefined);
  assert.equal(seen[0]!.resource, widgets);
  assert.match(seen[0]!.error, /cannot list resource "widgets"/);
  sub.dispose();
  t.informer.dispose();
});

test('an informer that synced is not looked at: a right revoked later is the running loop\'s failure', async () => {
  const t = setup();
  t.lw.add(widget('a'));
  t.informer.run();
  await settle();
  assert.ok(t.informer.hasSynced());
  const seen: RefusedList[] = [];
  const sub = onInitialListRefused([{ informer: t.informer }], (r) => void seen.push(r));
  const codes: Array<number | undefined> = [];
  const states = t.informer.onDidChangeState((st) => void (st.phase === 'backoff' && codes.push(st.code)));
  t.lw.failNextList(forbidden(FORBIDDEN_ALL), 3);
  t.lw.failNextWatch(forbidden(FORBIDDEN_ALL), 3);
  t.lw.dropWatch();
  t.clock.step(600_000);
  await settle();
  assert.ok(codes.includes(403), `the informer backed off after a 403 (codes: ${codes.join(', ')})`);
  assert.deepEqual(seen, []);
  states.dispose();
  sub.dispose();
  t.informer.dispose();
});

test('the message: cluster-wide refusal offers the context\'s namespace, the missing right and the can-i line, once', () => {
  const error = forbidden(FORBIDDEN_ALL).message;
  const text = refusedListMessage({ resource: widgets, code: 403, error }, { restrict: (ns) => `--namespace ${ns}`, contextNamespace: 'h2-shop' });
  assert.match(text, /^You may not list widgets\.lab\.reconcile\.dev in all namespaces \(403 Forbidden: /);
  assert.match(text, /Watch one namespace instead: --namespace h2-shop \(your context's namespace\)/);
  assert.match(text, /Missing right: list on widgets\.lab\.reconcile\.dev cluster-wide/);
  assert.equal(text.split('kubectl auth can-i').length - 1, 1, 'one can-i line');
  assert.match(text, /kubectl auth can-i list widgets\.lab\.reconcile\.dev --all-namespaces/);
  const noCtx = refusedListMessage({ resource: widgets, code: 403, error: 'GET x: forbidden by a webhook' }, { restrict: (ns) => `--namespace ${ns}` });
  assert.match(noCtx, /Watch one namespace you may list instead: --namespace <namespace>/);
  assert.match(noCtx, /Check your rights with: kubectl auth can-i list widgets\.lab\.reconcile\.dev --all-namespaces/);
});

test('the message: a namespaced refusal names the namespace and a Role; a 401 names the context', () => {
  const ns = refusedListMessage({ resource: widgets, namespace: 'default', code: 403, error: 'no' }, { restrict: (n) => `--namespace ${n}`, contextNamespace: 'h2-shop' });
  assert.match(ns, /You may not list widgets\.lab\.reconcile\.dev in namespace default/);
  assert.match(ns, /a Role and RoleBinding there/);
  assert.match(ns, /kubectl auth can-i list widgets\.lab\.reconcile\.dev -n default/);
  const unauth = refusedListMessage({ resource: widgets, code: 401, error: 'GET x: Unauthorized' }, { restrict: (n) => n, context: 'limited' });
  assert.match(unauth, /did not accept the credentials of context "limited" \(401 Unauthorized\)/);
});
