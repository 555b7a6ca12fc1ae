#!/usr/bin/env node
// Bootstrap for the README's two commands (`npm run lab`, `npm test`) on a fresh machine.
// It may run on any Node >= 18 (the system one): it installs the npm dependencies when they are missing or were
// installed from another package-lock.json (this brings the project's pinned Node 24 from the npm registry), then runs
// scripts/<name>.mjs with that Node, passing the remaining arguments through.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const { join, resolve } = require('node:path');
const { installState } = require('./installState.cjs');

const root = resolve(__dirname, '..');
const [name, ...rest] = process.argv.slice(2);
if (!name) {
  console.error('usage: node scripts/run.cjs <lab|test|...> [args]');
  process.exit(2);
}

const install = installState(root);
const pinnedNode = install.pinnedNode;
const stale = install.stale();
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
  install.recordInstall();
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
