import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BRIDGE_MODULE_PATH, bridgeEditArgs, bridgeProblem, bridgeProblemIn, findGoMod, readBridgeInGoMod } from '../../../src/core/bridge/goModule.ts';

test('readBridgeInGoMod: single-line and block require / replace, comments, quotes; other modules ignored', () => {
  const blocks = `module example.com/widgets // the operator

go 1.26

require (
\tk8s.io/api v0.37.0
\t"${BRIDGE_MODULE_PATH}" v0.0.0 // Reconcile Lab
)

replace (
\tk8s.io/api => k8s.io/api v0.36.0
\t${BRIDGE_MODULE_PATH} => ../reconcile-lab/bridge
)
`;
  assert.deepEqual(readBridgeInGoMod('/src/widgets/go.mod', blocks), { module: 'example.com/widgets', requires: true, replace: '../reconcile-lab/bridge', replaceDir: '/src/reconcile-lab/bridge' });
  const single = `module m\nrequire ${BRIDGE_MODULE_PATH} v0.0.0\nreplace ${BRIDGE_MODULE_PATH} v0.0.0 => example.com/fork/bridge v1.2.3\n`;
  assert.deepEqual(readBridgeInGoMod('/x/go.mod', single), { module: 'm', requires: true, replace: 'example.com/fork/bridge v1.2.3' });
  const commented = `module m\n// require ${BRIDGE_MODULE_PATH} v0.0.0\nrequire ${BRIDGE_MODULE_PATH}x v1.0.0\n`;
  assert.deepEqual(readBridgeInGoMod('/x/go.mod', commented), { module: 'm', requires: false });
});

test('bridgeProblem / bridgeProblemIn: missing require, a replace into a directory without the module, a go.work deciding instead', () => {
  const root = mkdtempSync(join(tmpdir(), 'rlab-gomod-'));
  try {
    const bridge = join(root, 'bridge');
    mkdirSync(bridge);
    writeFileSync(join(bridge, 'go.mod'), `module ${BRIDGE_MODULE_PATH}\n`);
    const app = join(root, 'app');
    mkdirSync(join(app, 'cmd'), { recursive: true });
    writeFileSync(join(app, 'go.mod'), 'module example.com/app\n\ngo 1.26\n');
    assert.equal(findGoMod(join(app, 'cmd')), join(app, 'go.mod'), 'the nearest go.mod up the tree');
    assert.match(bridgeProblemIn(join(app, 'cmd'))!.problem, new RegExp(`does not require ${BRIDGE_MODULE_PATH.replace(/\./g, '\\.')}: the program never connects`));
    writeFileSync(join(app, 'go.mod'), `module example.com/app\nrequire ${BRIDGE_MODULE_PATH} v0.0.0\nreplace ${BRIDGE_MODULE_PATH} => ../bridge\n`);
    assert.equal(bridgeProblemIn(app), undefined);
    writeFileSync(join(app, 'go.mod'), `module example.com/app\nrequire ${BRIDGE_MODULE_PATH} v0.0.0\nreplace ${BRIDGE_MODULE_PATH} => ../gone/bridge\n`);
    assert.match(bridgeProblemIn(app)!.problem, /replaces .* with \.\.\/gone\/bridge, which holds no go\.mod/);
    assert.equal(bridgeProblem(join(bridge, 'go.mod'), `module ${BRIDGE_MODULE_PATH}\n`), undefined, 'the bridge module itself');
    writeFileSync(join(root, 'go.work'), 'go 1.26\nuse ./app\n');
    assert.equal(bridgeProblemIn(app), undefined, 'a go.work decides which modules the build sees');
    assert.equal(bridgeProblemIn(join(tmpdir(), 'no-such-dir-rlab')), undefined);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('bridgeEditArgs: go mod edit adds the require and the replace with the directory', () => {
  assert.deepEqual(bridgeEditArgs('/ext/bridge'), ['mod', 'edit', `-require=${BRIDGE_MODULE_PATH}@v0.0.0`, `-replace=${BRIDGE_MODULE_PATH}=/ext/bridge`]);
});
