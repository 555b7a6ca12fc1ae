import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { programEnding } from '../../../src/cli/cli.ts';
import { programExitHint } from '../../../src/core/bridge/runGoController.ts';

test('programEnding: how the Go program ended reads as a sentence (was killed by …), with its last output when there is any', () => {
  assert.equal(programEnding('killed by SIGKILL', []), 'The Go program was killed by SIGKILL.');
  assert.equal(programEnding('exited with code 3', ['boom']), 'The Go program exited with code 3. Last output:\n  boom');
});

test('programEnding: a program that ended after announcing its controllers because a watched kind never synced (another controller\'s CRD not installed) gets the advice the launch gives', () => {
  const tail = ['2026-12-06T16:31:06Z\tERROR\tsetup\tproblem running manager\t{"error": "failed to wait for cachequota caches to sync kind source: *v1.CacheQuota: timed out waiting for cache to be synced for kind source: *v1.CacheQuota"}', 'exit status 1'];
  const text = programEnding('exited with code 1', tail);
  assert.match(text, /^The Go program exited with code 1\. Last output:\n/);
  assert.match(text, /\nIts cache never synced CacheQuota objects: is the CacheQuota CRD installed in this cluster\?.*make install/);
  assert.equal(programExitHint(['panic: boom'], process.cwd()), undefined);
  assert.match(programExitHint(['error listening on :8081: listen tcp :8081: bind: address already in use'], process.cwd()) ?? '', /^Another process already listens on :8081/);
});

test('programEnding: a kubebuilder program whose webhook server found no certificate after its controllers were announced (controller-runtime starts it in Start, after the bridge announced them) gets the ENABLE_WEBHOOKS advice', () => {
  const root = mkdtempSync(join(tmpdir(), 'rl-ending-webhooks-'));
  try {
    writeFileSync(join(root, 'go.mod'), 'module example.org/cache\n\ngo 1.26\n');
    mkdirSync(join(root, 'cmd'));
    writeFileSync(join(root, 'cmd', 'main.go'), 'package main\n\nimport "os"\n\nfunc main() {\n\tif os.Getenv("ENABLE_WEBHOOKS") != "false" {\n\t\tsetUpWebhooks()\n\t}\n}\n');
    const tail = ['2026-12-06T16:40:02Z\tERROR\tsetup\tproblem running manager\t{"error": "open /tmp/k8s-webhook-server/serving-certs/tls.crt: no such file or directory"}', 'exit status 1'];
    const text = programEnding('exited with code 1', tail, root);
    assert.match(text, /\nIts webhook server found no serving certificate \(\/tmp\/k8s-webhook-server\/serving-certs\/tls\.crt\).*skips its webhooks when ENABLE_WEBHOOKS=false/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
