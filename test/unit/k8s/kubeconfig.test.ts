import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfigError, loadKubeConfig } from '../../../src/core/k8s/kubeconfig.ts';

/** Runs `fn` with HOME pointing at an empty temp dir and KUBECONFIG unset, restoring both afterwards. */
function withEmptyHome(fn: (home: string) => void): void {
  const home = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
  const saved = { HOME: process.env.HOME, KUBECONFIG: process.env.KUBECONFIG };
  process.env.HOME = home;
  delete process.env.KUBECONFIG;
  try {
    fn(home);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(home, { recursive: true, force: true });
  }
}

test('no kubeconfig anywhere is a KubeConfigError that says where it looked (not client-node\'s http://localhost:8080 fallback)', () => {
  withEmptyHome((home) => {
    assert.throws(
      () => loadKubeConfig(),
      (e: unknown) => e instanceof KubeConfigError && /No kubeconfig found/.test(e.message) && e.message.includes(join(home, '.kube', 'config')) && /--kubeconfig|KUBECONFIG/.test(e.message),
    );
  });
});

test('a plain-http server without insecure-skip-tls-verify is a KubeConfigError naming the server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
  try {
    const file = join(dir, 'config');
    writeFileSync(file, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:8080"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n');
    assert.throws(() => loadKubeConfig({ path: file }), (e: unknown) => e instanceof KubeConfigError && e.message.includes('http://127.0.0.1:8080') && /https|insecure-skip-tls-verify/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a valid https kubeconfig loads with its current context', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
  try {
    const file = join(dir, 'config');
    writeFileSync(file, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n');
    const kc = loadKubeConfig({ path: file });
    assert.equal(kc.getCurrentContext(), 'x');
    assert.equal(kc.getCurrentCluster()?.server, 'https://127.0.0.1:6443');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
