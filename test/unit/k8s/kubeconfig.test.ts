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

test('a plain-http server, in any letter case and even with insecure-skip-tls-verify, is refused without suggesting to skip TLS verification', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
  try {
    for (const [server, skip] of [['http://127.0.0.1:8080', false], ['HTTP://127.0.0.1:8080', false], ['Http://127.0.0.1:8080', true]] as const) {
      const file = join(dir, 'config');
      writeFileSync(file, `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}"${skip ? ', insecure-skip-tls-verify: true' : ''}}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`);
      assert.throws(
        () => loadKubeConfig({ path: file }),
        (e: unknown) => e instanceof KubeConfigError && e.message.includes(server) && /https:\/\//.test(e.message) && !/insecure-skip-tls-verify|skip.*tls/i.test(e.message),
        server,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a malformed kubeconfig is reported without the lines around the mistake (tokens, client keys)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
  const token = 'sk-SECRETTOKEN1234567890abcdef';
  const key = 'LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2Z0lCQURBTkJna3Foa2lHOXcw';
  try {
    const yamlFile = join(dir, 'yaml');
    writeFileSync(yamlFile, `apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: ${token}\n    client-key-data: ${key}\n   bad: [\ncontexts: []\n`);
    const jsonFile = join(dir, 'json');
    writeFileSync(jsonFile, `{"users": [{"name": "u", "user": {"token": "${token}", "client-key-data": "${key}"}}], }}`);
    for (const file of [yamlFile, jsonFile]) {
      let message = '';
      assert.throws(() => loadKubeConfig({ path: file }), (e: unknown) => {
        message = (e as Error).message;
        return e instanceof KubeConfigError && (e as Error).cause === undefined;
      });
      assert.match(message, /Cannot read kubeconfig/);
      assert.ok(message.includes(file), 'says which file');
      for (const secret of [token, key, token.slice(0, 12), key.slice(0, 12)]) assert.ok(!message.includes(secret), `${message} contains ${secret}`);
      assert.doesNotMatch(message, /\n/, 'one line: no code frame');
    }
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

test('a missing kubeconfig file, and a current-context that is not one of the contexts, say so (and what to choose)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
  try {
    const missing = join(dir, 'nope');
    assert.throws(() => loadKubeConfig({ path: missing }), (e: unknown) => e instanceof KubeConfigError && e.problem === 'noKubeconfig' && e.message === `The kubeconfig file ${missing} does not exist.`);
    const file = join(dir, 'config');
    writeFileSync(file, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}, {name: y, context: {cluster: c, user: u}}]\ncurrent-context: gone\n');
    assert.throws(
      () => loadKubeConfig({ path: file }),
      (e: unknown) => e instanceof KubeConfigError && e.problem === 'noContext' && e.message === 'The kubeconfig\'s current-context "gone" is not one of its contexts (contexts: x, y): choose one of them.',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
