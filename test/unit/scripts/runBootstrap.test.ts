import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../../..');

// scripts/run.cjs in a throw-away project: its own package-lock.json, a node_modules with the pinned Node (a shell
// script that says which script it runs) and an `npm` on PATH that records being called and installs that again.
function project() {
  const dir = mkdtempSync(join(tmpdir(), 'rl-bootstrap-'));
  mkdirSync(join(dir, 'scripts'));
  for (const f of ['run.cjs', 'installState.cjs']) copyFileSync(join(root, 'scripts', f), join(dir, 'scripts', f));
  writeFileSync(join(dir, 'package-lock.json'), '{"lockfileVersion":3,"packages":{}}\n');
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const install = [
    'mkdir -p node_modules/node/bin',
    'echo "{}" > node_modules/.package-lock.json',
    `printf '#!/bin/sh\\necho "ran $1"\\n' > node_modules/node/bin/node`,
    'chmod +x node_modules/node/bin/node',
  ].join('\n');
  writeFileSync(join(bin, 'npm'), `#!/bin/sh\necho "npm $*" >> "${join(dir, 'npm-calls')}"\nrm -rf node_modules\n${install}\n`);
  chmodSync(join(bin, 'npm'), 0o755);
  const run = () => {
    const r = spawnSync(process.execPath, [join(dir, 'scripts/run.cjs'), 'lab'], { cwd: dir, encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`ran ${join(dir, 'scripts/lab.mjs').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
    return r.stdout;
  };
  const npmCalls = () => (existsSync(join(dir, 'npm-calls')) ? readFileSync(join(dir, 'npm-calls'), 'utf8').trim().split('\n').length : 0);
  return { dir, run, npmCalls };
}

test('run.cjs installs when node_modules is missing, and again only when package-lock.json\'s content changes (not its mtime)', () => {
  const p = project();
  try {
    p.run();
    assert.equal(p.npmCalls(), 1, 'installed: no node_modules');
    assert.match(readFileSync(join(p.dir, 'node_modules/.reconcile-lab-lock-sha256'), 'utf8'), /^[0-9a-f]{64}\n$/);
    // A checkout or a clone rewrites an identical lock: newer than the install, same content.
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(p.dir, 'package-lock.json'), later, later);
    p.run();
    assert.equal(p.npmCalls(), 1, 'not installed again for an identical lock');
    writeFileSync(join(p.dir, 'package-lock.json'), '{"lockfileVersion":3,"packages":{"node_modules/yaml":{}}}\n');
    p.run();
    assert.equal(p.npmCalls(), 2, 'installed again: the lock changed');
    p.run();
    assert.equal(p.npmCalls(), 2);
    // Installed by hand (no stamp): by mtime, as before.
    rmSync(join(p.dir, 'node_modules/.reconcile-lab-lock-sha256'));
    utimesSync(join(p.dir, 'package-lock.json'), later, later);
    p.run();
    assert.equal(p.npmCalls(), 3, 'a lock newer than a hand-made install is installed from');
  } finally {
    rmSync(p.dir, { recursive: true, force: true });
  }
});
