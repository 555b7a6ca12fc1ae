// Whether this checkout's npm dependencies must be (re)installed, shared by scripts/run.cjs (which installs) and the
// tests that must not trigger an install. Plain CommonJS on purpose: it runs on any Node >= 18, before the pinned Node
// exists.
'use strict';
const { createHash } = require('node:crypto');
const { existsSync, readFileSync, statSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

/**
 * The state of `root`'s npm install.
 *
 * The stamp holds the hash of the package-lock.json the dependencies were installed from (written by
 * {@link recordInstall} after npm ci). With it, the install is stale only when the lock's content changed: a checkout
 * or a clone that rewrote an identical lock (newer mtime) does not reinstall, nor wipe a node_modules another
 * checkout shares. Without it (installed by hand), staleness falls back to the mtimes of the lock and of npm's
 * `node_modules/.package-lock.json`. A missing install or a missing pinned Node is always stale.
 * @param {string} root the project root (holds package-lock.json)
 */
function installState(root) {
  const lock = join(root, 'package-lock.json');
  const installed = join(root, 'node_modules/.package-lock.json');
  const pinnedNode = join(root, 'node_modules/node/bin/node');
  const stamp = join(root, 'node_modules/.reconcile-lab-lock-sha256');
  const lockHash = () => createHash('sha256').update(readFileSync(lock)).digest('hex');
  const staleByContent = () => (existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() !== lockHash() : statSync(installed).mtimeMs < statSync(lock).mtimeMs);
  return {
    pinnedNode,
    /** True when npm ci must run before any script. */
    stale: () => !existsSync(installed) || !existsSync(pinnedNode) || staleByContent(),
    /** Records that the dependencies now match the lock's content; call only after npm ci succeeded. */
    recordInstall: () => writeFileSync(stamp, `${lockHash()}\n`),
  };
}

module.exports = { installState };
