import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, type CliIo } from '../../../src/cli/cli.ts';
import { toDisposable } from '../../../src/core/lifecycle.ts';
import { KubeTransport, unreachableDetail } from '../../../src/core/k8s/transport.ts';
import { ApiError } from '../../../src/core/k8s/client.ts';
import { loadKubeConfig } from '../../../src/core/k8s/kubeconfig.ts';

const kubeconfig = (server: string) => `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "${server}" } }]
users: [{ name: u, user: { token: not-a-real-token } }]
contexts: [{ name: ctx, context: { cluster: c, user: u } }]
current-context: ctx
`;

test('an API server on a port fetch blocks (6000) is named as such, exit 3, not a bare "(bad port)"', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'reconcile-lab-badport-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'kubeconfig');
  // fetch refuses this port before any connection is tried: nothing needs to listen, nothing is faked.
  writeFileSync(file, kubeconfig('https://127.0.0.1:6000'));
  const out = { stdout: '', stderr: '' };
  const io: CliIo = { stdout: (s) => void (out.stdout += s), stderr: (s) => void (out.stderr += s), env: {}, onInterrupt: () => toDisposable(() => {}) };
  assert.equal(await runCli(['report', '--kubeconfig', file, '--json'], io), 3);
  const j = JSON.parse(out.stdout) as { error: string; exitCode: number };
  assert.equal(j.exitCode, 3);
  assert.match(j.error, /^Cannot reach the API server at https:\/\/127\.0\.0\.1:6000 \(bad port: Node's fetch, which Reconcile Lab connects with, never connects to port 6000 .*serve the API server on another port, e.g\. 6443\)\.$/);
  assert.doesNotMatch(j.error, /not-a-real-token/);

  // The error's cause stays fetch's own word, for code that tells causes apart (the reflector's ECONNREFUSED test).
  const transport = new KubeTransport(loadKubeConfig({ path: file }));
  t.after(() => transport.dispose());
  const e = await transport.json({ method: 'GET', path: '/version' }).then(() => undefined, (x: unknown) => x);
  assert.ok(e instanceof ApiError && e.code === 0, String(e));
  assert.deepEqual((e as ApiError).details, { cause: 'bad port' });
  assert.match((e as Error).message, /\(bad port: Node's fetch/);
});

test('unreachableDetail: a connect timeout is explained; other causes pass through as fetch named them', () => {
  assert.equal(unreachableDetail('ECONNREFUSED', 'https://127.0.0.1:6443'), 'ECONNREFUSED');
  assert.equal(unreachableDetail('ENOTFOUND', 'https://nowhere.example'), 'ENOTFOUND');
  assert.match(unreachableDetail('bad port', 'https://10.0.0.1:10080'), /never connects to port 10080 /);
  // undici's code alone told a person nothing: the address answers nothing, or not as a TLS server.
  assert.match(unreachableDetail('UND_ERR_CONNECT_TIMEOUT', 'https://10.0.0.1:6443'), /^UND_ERR_CONNECT_TIMEOUT: the connection and its TLS handshake did not complete in time; nothing answers there, a firewall drops the packets, or the port is not a TLS server$/);
});
