import { test } from 'node:test';
import assert from 'node:assert/strict';
import { forbiddenHint, parseWarningHeaders, retryAfterMs, sendAgainOnFreshConnection, toApiError } from '../../../src/core/k8s/transport.ts';

const answer = (status: number, retryAfter?: string) => ({ status, headers: new Headers(retryAfter === undefined ? {} : { 'Retry-After': retryAfter }) });

test('retryAfterMs: a 429 or 5xx answer with Retry-After in whole seconds is retried after that wait (client-go checkWait); nothing else is', () => {
  assert.equal(retryAfterMs(answer(503, '5')), 5000, 'kube-apiserver starting up');
  assert.equal(retryAfterMs(answer(429, '1')), 1000);
  assert.equal(retryAfterMs(answer(504, ' 0 ')), 0);
  assert.equal(retryAfterMs(answer(503)), undefined, 'no Retry-After');
  assert.equal(retryAfterMs(answer(404, '5')), undefined, 'not a 429 / 5xx');
  assert.equal(retryAfterMs(answer(200, '5')), undefined);
  assert.equal(retryAfterMs(answer(503, 'Wed, 21 Oct 2026 07:28:00 GMT')), undefined, 'an HTTP date is not honoured (client-go reads seconds only)');
  assert.equal(retryAfterMs(answer(503, '-1')), undefined);
});

test('sendAgainOnFreshConnection: a GET on a dropped pooled connection, and any request put on an HTTP/2 session the server had ended with GOAWAY (never processed); nothing else', () => {
  const goaway = { code: 'UND_ERR_INFO', message: 'HTTP/2: "GOAWAY" frame received with code 0' };
  // Reproduced against the local control plane: after the client's event loop was blocked past kube-apiserver's
  // HTTP/2 idle timeout, the next POST failed with exactly this error; sent again, it was created (201).
  assert.equal(sendAgainOnFreshConnection('POST', goaway), true);
  assert.equal(sendAgainOnFreshConnection('PATCH', goaway), true);
  assert.equal(sendAgainOnFreshConnection('GET', goaway), true);
  assert.equal(sendAgainOnFreshConnection('DELETE', { code: 'UND_ERR_INFO', message: 'socket idle timeout' }), true, 'closed as idle before it was written');
  assert.equal(sendAgainOnFreshConnection('GET', { code: 'ECONNRESET' }), true);
  assert.equal(sendAgainOnFreshConnection('GET', { code: 'UND_ERR_SOCKET', message: 'other side closed' }), true);
  assert.equal(sendAgainOnFreshConnection('POST', { code: 'ECONNRESET' }), false, 'a write that may have reached the server is not sent twice');
  assert.equal(sendAgainOnFreshConnection('PUT', { code: 'UND_ERR_SOCKET', message: 'other side closed' }), false);
  assert.equal(sendAgainOnFreshConnection('POST', { code: 'UND_ERR_INFO', message: 'HTTP/2: stream closed before the response was complete' }), false, 'a stream the server may have processed');
  assert.equal(sendAgainOnFreshConnection('GET', { code: 'ECONNREFUSED' }), false, 'nothing listens: no stale connection to replace');
  assert.equal(sendAgainOnFreshConnection('GET', undefined), false);
});

test('a 403 of the RBAC authorizer ends with the missing right and the kubectl auth can-i line that checks it', () => {
  const status = (message: string) => JSON.stringify({ kind: 'Status', reason: 'Forbidden', code: 403, message });
  const sub = toApiError(403, status('widgets.lab.reconcile.dev "w" is forbidden: User "system:serviceaccount:shop:dev" cannot update resource "widgets/status" in API group "lab.reconcile.dev" in the namespace "shop"'), 'PUT /x');
  assert.equal(sub.code, 403);
  assert.match(sub.message, /^PUT \/x: widgets\.lab\.reconcile\.dev "w" is forbidden: .* in the namespace "shop"\. Missing right: update on widgets\.lab\.reconcile\.dev\/status in namespace shop \(ask for it in a Role\); check with: kubectl auth can-i update widgets\.lab\.reconcile\.dev --subresource=status -n shop$/);
  const core = toApiError(403, status('secrets is forbidden: User "dev" cannot list resource "secrets" in API group "" at the cluster scope'), 'GET /api/v1/secrets');
  assert.match(core.message, /Missing right: list on secrets cluster-wide \(ask for it in a ClusterRole\); check with: kubectl auth can-i list secrets --all-namespaces$/);
  // Another refusal (an admission webhook's) is left as the server said it.
  const other = toApiError(403, status('admission webhook "policy.example.com" denied the request: no'), 'POST /y');
  assert.equal(other.message, 'POST /y: admission webhook "policy.example.com" denied the request: no');
  assert.equal(forbiddenHint('not RBAC'), '');
});

test('a 401 says what it means and what to do; no credential is part of it', () => {
  const e = toApiError(401, JSON.stringify({ kind: 'Status', reason: 'Unauthorized', code: 401, message: 'Unauthorized' }), 'GET /api');
  assert.equal(e.code, 401);
  assert.match(e.message, /^GET \/api: Unauthorized\. The server did not accept the credentials of the kubeconfig's user \(an expired or revoked token, .*\): renew them and try again$/);
});

test('a 404 without a Status (an unserved version, a deleted CRD) says no such resource path, not a missing object', () => {
  const e = toApiError(404, '404 page not found\n', 'GET /apis/h9.example.org/v1/namespaces/h9-a/gadgets');
  assert.equal(e.code, 404);
  assert.equal(e.message, 'GET /apis/h9.example.org/v1/namespaces/h9-a/gadgets: 404 page not found (the server serves no such resource path: its CustomResourceDefinition was deleted, or this version is no longer among its served versions; reconnect to use a served version)');
  // A missing object (a Status with reason NotFound) keeps the server's words alone.
  const missing = toApiError(404, JSON.stringify({ kind: 'Status', reason: 'NotFound', code: 404, message: 'gadgets.h9.example.org "x" not found' }), 'GET /x');
  assert.equal(missing.message, 'GET /x: gadgets.h9.example.org "x" not found');
});

test('parseWarningHeaders: the texts of code-299 warnings, as client-go reads the Warning header (several per value, escapes, an optional date)', () => {
  assert.deepEqual(parseWarningHeaders(null), []);
  assert.deepEqual(parseWarningHeaders(''), []);
  assert.deepEqual(parseWarningHeaders('299 - "unknown field \\"spec.replicsa\\""'), ['unknown field "spec.replicsa"']);
  // fetch joins several Warning headers with ", "; commas inside the quoted text stay in it.
  assert.deepEqual(
    parseWarningHeaders('299 - "unknown field \\"spec.a\\"", 299 - "unknown field \\"spec.b\\", and more", 299 - "unknown field \\"spec.a\\""'),
    ['unknown field "spec.a"', 'unknown field "spec.b", and more'],
    'duplicates dropped, order kept',
  );
  assert.deepEqual(parseWarningHeaders('299 kube-apiserver "apps/v1beta1 Deployment is deprecated" "Mon, 01 Jan 2026 00:00:00 GMT"'), ['apps/v1beta1 Deployment is deprecated']);
  assert.deepEqual(parseWarningHeaders('199 - "not persistent", 299 - "kept"'), ['kept'], 'only code 299');
  assert.deepEqual(parseWarningHeaders('299 - "first", garbage here, 299 - "lost"'), ['first'], 'a malformed value yields what came before it');
});
