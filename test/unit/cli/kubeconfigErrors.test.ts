import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../../src/cli/cli.ts';
import { toDisposable } from '../../../src/core/lifecycle.ts';

/** Runs the CLI in-process; the kubeconfig problems below fail before any network call. */
async function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const code = await runCli(args, { stdout: () => {}, stderr: (s) => void (stderr += s), env, onInterrupt: () => toDisposable(() => {}) });
  return { code, stderr };
}

test('a kubeconfig without contexts points to another file; one without a current-context to --context (exit 3)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rl-cli-kc-'));
  try {
    const empty = join(dir, 'empty');
    writeFileSync(empty, 'apiVersion: v1\nkind: Config\nclusters: []\n');
    const none = await cli(['inspect', 'x', '--kubeconfig', empty]);
    assert.equal(none.code, 3);
    assert.equal(none.stderr, 'reconcile-lab: The kubeconfig has no contexts. Pass --kubeconfig <file> with a context (kubectl config view shows what a file holds).\n');
    const noCurrent = join(dir, 'no-current');
    writeFileSync(noCurrent, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n');
    const unset = await cli(['inspect', 'x', '--kubeconfig', noCurrent]);
    assert.equal(unset.code, 3);
    assert.match(unset.stderr, /has no current-context \(contexts: a\): choose one of them\. Pass --context <name>/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a context naming a cluster no file defines says which cluster is missing, as kubectl does (exit 3)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rl-cli-kc-'));
  try {
    const f = join(dir, 'kc');
    writeFileSync(f, 'apiVersion: v1\nkind: Config\nclusters: [{name: lab, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: bad, context: {cluster: nope, user: u}}]\ncurrent-context: bad\n');
    const r = await cli(['inspect', 'x', '--kubeconfig', f]);
    assert.equal(r.code, 3);
    // Before: 'Context "bad" refers to a cluster without a server URL.' (the cluster does not exist at all).
    assert.match(r.stderr, /Context "bad" refers to cluster "nope", which is not in the kubeconfig \(clusters: lab\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a kubeconfig that does not exist: the next step fits where it was named (--kubeconfig, KUBECONFIG, neither) (exit 3)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rl-cli-kc-'));
  try {
    // Before: "Pass --kubeconfig <file> or set KUBECONFIG." to someone who had passed --kubeconfig (or set KUBECONFIG).
    const flag = await cli(['inspect', 'x', '--kubeconfig', join(dir, 'nope')]);
    assert.equal(flag.code, 3);
    assert.equal(flag.stderr, `reconcile-lab: The kubeconfig file ${join(dir, 'nope')} does not exist. Check the path given to --kubeconfig.\n`);
    // The kubeconfig loader reads the process's environment (as the CLI's io.env is): set it for these two.
    const saved = { KUBECONFIG: process.env.KUBECONFIG, HOME: process.env.HOME };
    try {
      Object.assign(process.env, { KUBECONFIG: join(dir, 'a'), HOME: dir });
      const env = await cli(['inspect', 'x'], { ...process.env });
      assert.equal(env.code, 3);
      assert.match(env.stderr, /none of the files in KUBECONFIG=.* exists\. Correct KUBECONFIG, or pass --kubeconfig <file>\.\n$/);
      delete process.env.KUBECONFIG;
      const none = await cli(['inspect', 'x'], { ...process.env });
      assert.equal(none.code, 3);
      assert.match(none.stderr, /KUBECONFIG is not set and .* does not exist\. Pass --kubeconfig <file> or set KUBECONFIG\.\n$/);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
