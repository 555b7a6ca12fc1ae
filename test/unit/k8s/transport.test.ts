import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retryAfterMs } from '../../../src/core/k8s/transport.ts';

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
