#!/usr/bin/env node
// Bootstrap for the README's two commands (`npm run lab`, `npm test`) on a fresh machine.
// It may run on any Node >= 18 (the system one): it installs the npm dependencies when they are missing or were
// installed from another package-lock.json (this brings the project's pinned Node 24 from the npm registry), then runs
// scripts/<name>.mjs with that Node, passing the remaining arguments through.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const { existsSync, readFileSync, statSync, writeFileSync } = require('node:fs');
const { join, resolve } = require('node:path');

const root = resolve(__dirname, '..');
const [name, ...rest] = process.argv.slice(2);
if (!name) {
  console.error('usage: node scripts/run.cjs <lab|test|...> [args]');
  process.exit(2);
}

const lock = join(root, 'package-lock.json');
const installed = join(root, 'node_modules/.package-lock.json');
const pinnedNode = join(root, 'node_modules/node/bin/node');
// The hash of the package-lock.json the dependencies were installed from (written after npm ci). With it, the
// install is stale only when the lock's content changed: a checkout or a clone that rewrote an identical lock (newer
// mtime) does not reinstall, nor wipe a node_modules another checkout shares. Without it (installed by hand), by mtime.
const stamp = join(root, 'node_modules/.reconcile-lab-lock-sha256');
const lockHash = () => createHash('sha256').update(readFileSync(lock)).digest('hex');
const staleByContent = () => (existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() !== lockHash() : statSync(installed).mtimeMs < statSync(lock).mtimeMs);
const stale = !existsSync(installed) || !existsSync(pinnedNode) || staleByContent();
if (stale) {
  // Several dependencies (and this project) declare Node >= 22.19, so npm ci under an older system Node prints an
  // EBADENGINE warning per package. They are expected (nothing runs on that Node: the pinned Node 24 is what npm ci
  // installs and what every script then uses), so they are said once here and npm runs at log level "error".
  const oldNode = Number(process.versions.node.split('.')[0]) < 22 || (process.versions.node.startsWith('22.') && Number(process.versions.node.split('.')[1]) < 19);
  console.log(
    oldNode
      ? `[reconcile-lab] installing npm dependencies (npm ci) under Node ${process.version}; engine warnings are hidden: dependencies want Node >= 22.19, which npm ci brings as the pinned Node 24 and every script runs on…`
      : '[reconcile-lab] installing npm dependencies (npm ci)…',
  );
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['ci', '--no-audit', '--no-fund', ...(oldNode ? ['--loglevel=error'] : [])], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`[reconcile-lab] npm ci failed (exit ${r.status}).`);
    process.exit(r.status || 1);
  }
  writeFileSync(stamp, `${lockHash()}\n`);
}

// Not spawnSync: this process must stay responsive to signals. SIGINT / SIGTERM / SIGHUP sent to it are passed on to
// the script, which stops everything it started; this process then exits as the script did. (If this process is
// killed outright, the script notices that its parent is gone; see scripts/lab.mjs.)
// The script runs in the repository root; INIT_CWD (as npm sets it) tells it where the command was typed, so that a
// relative path among its arguments (`npm run lab -- ../my-operator`) means what the person meant.
const env = { ...process.env, INIT_CWD: process.env.INIT_CWD ?? process.cwd() };
const child = spawn(pinnedNode, [join(root, 'scripts', `${name}.mjs`), ...rest], { cwd: root, stdio: 'inherit', env });
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    try {
      child.kill(sig);
    } catch {
      // already gone
    }
  });
}
child.on('error', (e) => {
  console.error(`[reconcile-lab] cannot run ${pinnedNode}: ${e.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  process.exit(code ?? (signal ? 128 + (require('node:os').constants.signals[signal] ?? 0) : 1));
});
