import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { MIN_NODE, nodeIsSupported } from '../../../src/core/nodeVersion.ts';

const root = resolve(import.meta.dirname, '../../..');

test('nodeIsSupported compares major.minor with the minimum (22.19)', () => {
  assert.deepEqual(MIN_NODE, [22, 19]);
  assert.equal(nodeIsSupported('20.20.2'), false);
  assert.equal(nodeIsSupported('22.18.9'), false);
  assert.equal(nodeIsSupported('22.19.0'), true);
  assert.equal(nodeIsSupported('24.9.0'), true);
});

/** Every `node` on PATH plus /usr/bin/node, with its version. */
function nodesOnMachine(): Array<{ path: string; version: string }> {
  const paths = new Set<string>(['/usr/bin/node', '/usr/local/bin/node']);
  const which = spawnSync('which', ['-a', 'node'], { encoding: 'utf8' });
  for (const p of (which.stdout ?? '').split('\n')) if (p.trim()) paths.add(p.trim());
  const out: Array<{ path: string; version: string }> = [];
  for (const p of paths) {
    if (!existsSync(p)) continue;
    const v = spawnSync(p, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    if (v.status === 0) out.push({ path: p, version: v.stdout.trim() });
  }
  return out;
}

test('the built CLI on a Node older than it needs says which Node it needs and how to run it (exit 1), instead of crashing while loading', async (t) => {
  const old = nodesOnMachine().filter((n) => !nodeIsSupported(n.version));
  if (old.length === 0) {
    t.skip(`no Node older than ${MIN_NODE.join('.')} on this machine (found: ${nodesOnMachine().map((n) => n.version).join(', ') || 'none'})`);
    return;
  }
  // The same bundle as scripts/build.mjs makes for dist/cli.js, built fresh so the test never runs a stale dist/.
  const dir = mkdtempSync(join(tmpdir(), 'reconcile-lab-cli-'));
  try {
    writeFileSync(join(dir, 'package.json'), '{ "type": "commonjs" }\n');
    const outfile = join(dir, 'cli.js');
    await esbuild.build({
      entryPoints: [join(root, 'src/cli/main.ts')], outfile, bundle: true, platform: 'node', format: 'cjs', target: 'node22',
      banner: { js: '#!/usr/bin/env node' }, logLevel: 'silent', logOverride: { 'empty-import-meta': 'silent' }, absWorkingDir: root,
    });
    for (const n of old) {
      const r = spawnSync(n.path, [outfile, 'run', '--help'], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 1, `${n.path} (${n.version}): exit code; stderr: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /Cannot read properties|TypeError|at .*\(/, 'no stack trace from loading the client');
      assert.match(r.stderr, new RegExp(`needs Node\\.js ${MIN_NODE.join('\\.')} or newer; this is Node ${n.version.replace(/\./g, '\\.')}`));
      assert.match(r.stderr, /npx -y -p node@24 node .*cli\.js/, 'says how to run it with a newer Node');
      assert.match(r.stderr, /nvm install 24/);
      assert.equal(r.stdout, '');
    }
    // and the same bundle works on this (supported) Node
    const ok = spawnSync(process.execPath, [outfile, '--help'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /Usage: reconcile-lab <command>/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
