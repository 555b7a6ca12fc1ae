import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../../src/cli/cli.ts';
import { toDisposable } from '../../../src/core/lifecycle.ts';

/** Runs the CLI in-process; the kubeconfig problems below fail before any network call. */
async function cli(args: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const code = await runCli(args, { stdout: () => {}, stderr: (s) => void (stderr += s), env: {}, onInterrupt: () => toDisposable(() => {}) });
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
