import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, type CliIo } from '../../../src/cli/cli.ts';
import { toDisposable } from '../../../src/core/lifecycle.ts';
import { unreachableDetail } from '../../../src/core/k8s/transport.ts';

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
});

test('unreachableDetail: other causes pass through as fetch named them', () => {
  assert.equal(unreachableDetail('ECONNREFUSED', 'https://127.0.0.1:6443'), 'ECONNREFUSED');
  assert.equal(unreachableDetail('ENOTFOUND', 'https://nowhere.example'), 'ENOTFOUND');
  assert.match(unreachableDetail('bad port', 'https://10.0.0.1:10080'), /never connects to port 10080 /);
});
