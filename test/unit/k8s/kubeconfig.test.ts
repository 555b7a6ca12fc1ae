import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfigError, loadKubeConfig } from '../../../src/core/k8s/kubeconfig.ts';
import { listKubeContexts } from '../../../src/host/connection/kubeContexts.ts';

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

test('KUBECONFIG with several files merges as kubectl does: missing files skipped, the first name and the first current-context win', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
  const saved = process.env.KUBECONFIG;
  const file = (server: string, ctx: string, ns: string) =>
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}"}}]\nusers: [{name: admin, user: {token: t-${ctx}}}]\ncontexts: [{name: ${ctx}, context: {cluster: c, user: admin, namespace: ${ns}}}, {name: shared, context: {cluster: c, user: admin, namespace: ${ns}}}]\ncurrent-context: ${ctx}\n`;
  try {
    // Two clusters' files that both name their cluster "c", their user "admin" and a context "shared" (client-node's
    // own merge throws "Duplicate cluster: c" on them, and takes the last file's current-context).
    writeFileSync(join(dir, 'one'), file('https://one.example:6443', 'one', 'team-one'));
    writeFileSync(join(dir, 'two'), file('https://two.example:6443', 'two', 'team-two'));
    process.env.KUBECONFIG = [join(dir, 'missing'), join(dir, 'one'), join(dir, 'two')].join(':');
    const kc = loadKubeConfig();
    assert.equal(kc.getCurrentContext(), 'one');
    assert.equal(kc.getCurrentCluster()?.server, 'https://one.example:6443');
    assert.deepEqual(kc.getContexts().map((c) => c.name), ['one', 'shared', 'two']);
    assert.equal(kc.getContextObject('shared')?.namespace, 'team-one', 'the first file\'s "shared" wins');
    // Another file's context uses the names as the first file defined them (kubectl: the same).
    const two = loadKubeConfig({ context: 'two' });
    assert.equal(two.getCurrentCluster()?.server, 'https://one.example:6443');
    assert.equal(two.getContextObject('two')?.namespace, 'team-two');
    assert.deepEqual(listKubeContexts(undefined).map((c) => `${c.name}${c.current ? '*' : ''}`), ['one*', 'shared', 'two']);
    process.env.KUBECONFIG = [join(dir, 'missing'), join(dir, 'gone')].join(':');
    assert.throws(() => loadKubeConfig(), (e: unknown) => e instanceof KubeConfigError && e.problem === 'noKubeconfig' && /none of the files in KUBECONFIG=/.test(e.message));
    writeFileSync(join(dir, 'bad'), 'clusters: [ this is : not yaml');
    process.env.KUBECONFIG = [join(dir, 'one'), join(dir, 'bad')].join(':');
    assert.throws(() => loadKubeConfig(), (e: unknown) => e instanceof KubeConfigError && e.problem === 'unreadable' && e.message.includes(join(dir, 'bad')));
  } finally {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
    rmSync(dir, { recursive: true, force: true });
  }
});
