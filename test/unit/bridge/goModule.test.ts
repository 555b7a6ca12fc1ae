import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BRIDGE_MODULE_PATH, bridgeEditArgs, bridgeProblem, bridgeProblemIn, controllerModuleChoices, controllerRuntimeNote, findControllerModules, findGoMod, goCompileErrors, goExitDetails, goLaunchProblem, goModTidyHint, cacheSyncHint, forbiddenCacheList, forbiddenCacheHint, addressInUseHint, leaderElectionNamespaceHint, missingWebhookCert, webhookCertHint, webhooksWouldStop, readBridgeInGoMod, uninstalledKindProblem, unservedKindInOutput } from '../../../src/core/bridge/goModule.ts';
import { programExitHint } from '../../../src/core/bridge/runGoController.ts';

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

test('findControllerModules: the controller modules below a workspace that is not one, nearest first; skipped and too-deep directories not searched', () => {
  const root = mkdtempSync(join(tmpdir(), 'rl-modules-'));
  try {
    const mod = (dir: string, text: string) => {
      mkdirSync(join(root, dir), { recursive: true });
      writeFileSync(join(root, dir, 'go.mod'), text);
    };
    const cr = (name: string) => `module example.org/${name}\n\ngo 1.26\n\nrequire (\n\tk8s.io/client-go v0.37.0\n\tsigs.k8s.io/controller-runtime v0.25.3 // indirect\n)\n`;
    mod('operators/bucket', cr('bucket'));
    mod('tools/lint', 'module example.org/lint\n\nrequire golang.org/x/tools v0.30.0\n'); // a Go module, not a controller
    mod('queue-operator', `module example.org/queue\nrequire sigs.k8s.io/controller-runtime v0.25.0\n`);
    mod('bridged', `module example.org/bridged\nrequire ${BRIDGE_MODULE_PATH} v0.0.0\n`); // reaches controller-runtime through the bridge
    mod('vendor/x', cr('vendored'));
    mod('node_modules/y', cr('npm'));
    mod('.cache/z', cr('hidden'));
    mod('_old/w', cr('underscore'));
    mod('api/testdata/t', cr('fixture'));
    mod('a/b/c/d/deep', cr('deep'));
    writeFileSync(join(root, 'README.md'), 'a file, not a directory');
    assert.deepEqual(findControllerModules([root]), [join(root, 'bridged'), join(root, 'queue-operator'), join(root, 'operators/bucket')]);
    assert.deepEqual(findControllerModules([root], { maxDepth: 5 }).at(-1), join(root, 'a/b/c/d/deep'), 'deeper when asked');
    assert.deepEqual(findControllerModules([join(root, 'operators')]), [join(root, 'operators/bucket')]);
    assert.deepEqual(findControllerModules([join(root, 'operators'), root]).length, 3, 'a directory reached from two roots counts once');
    assert.deepEqual(findControllerModules([join(root, 'missing')]), [], 'a root that does not exist');
    assert.ok(findControllerModules([root], { maxDirs: 2 }).length < 3, 'the directory budget bounds the search');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('controllerRuntimeNote: an older minor release is raised by go mod tidy, a newer one is untested, the same one says nothing', () => {
  const bridge = 'module github.com/reconcile-lab/reconcile-lab/bridge\n\nrequire (\n\tk8s.io/client-go v0.37.0\n\tsigs.k8s.io/controller-runtime v0.25.3\n)\n';
  const mine = (v: string) => `module example.org/op\n\nrequire sigs.k8s.io/controller-runtime ${v} // indirect\n`;
  assert.match(controllerRuntimeNote(mine('v0.22.1'), bridge) ?? '', /^Your module requires controller-runtime v0\.22\.1; the bridge is built with v0\.25\.3, so `go mod tidy` raises it to v0\.25\.3 \(and k8s\.io\/\* with it\)/);
  assert.match(controllerRuntimeNote(mine('v0.26.0-beta.0'), bridge) ?? '', /requires controller-runtime v0\.26\.0-beta\.0; the bridge is built and tested with v0\.25\.3 \(v0\.25\.x\): a newer release may work/);
  assert.equal(controllerRuntimeNote(mine('v0.25.0'), bridge), undefined, 'another patch release of the same minor');
  assert.equal(controllerRuntimeNote('module example.org/plain\n', bridge), undefined, 'no controller-runtime');
  assert.equal(controllerRuntimeNote(mine('master'), bridge), undefined, 'a version it cannot read');
  // A kubebuilder project on v0.24 (go 1.24.0) against the real bridge go.mod (go 1.26.0): tidy raises its go directive too.
  const real = readFileSync(join(import.meta.dirname, '../../../bridge/go.mod'), 'utf8');
  const v024 = 'module example.org/queue-operator\n\ngo 1.24.0\n\nrequire (\n\tk8s.io/api v0.36.0\n\tsigs.k8s.io/controller-runtime v0.24.1\n)\n';
  assert.match(controllerRuntimeNote(v024, real) ?? '', /^Your module requires controller-runtime v0\.24\.1; the bridge is built with v0\.25\.\d+, so `go mod tidy` raises it to v0\.25\.\d+ \(and k8s\.io\/\* with it, and its go directive from 1\.24\.0 to 1\.26\.0, which needs Go 1\.26\.0 or newer\): Go keeps the highest version any module requires, so the bridge cannot be used with v0\.24\.1\./);
  assert.doesNotMatch(controllerRuntimeNote(v024.replace('go 1.24.0', 'go 1.26.2'), real) ?? '', /go directive/, 'a go directive already as high: nothing to say about it');
});

test('goModTidyHint: what go run prints when go.mod is not tidy after adding the bridge gets the command to run; other failures none', () => {
  assert.equal(goModTidyHint(['go: github.com/fxamacker/cbor/v2@v2.9.0: missing go.sum entry for go.mod file; to add it:', '\tgo mod download github.com/fxamacker/cbor/v2'], '/src/op'),
    'The module\'s go.mod is not tidy: run `go mod tidy` in /src/op (after adding the bridge\'s require and replace lines and its import; it raises an older controller-runtime to the bridge\'s), then run again.');
  assert.match(goModTidyHint(['go: updates to go.mod needed; to update it:', '\tgo mod tidy']) ?? '', /run `go mod tidy` in the module's directory/);
  assert.match(goModTidyHint(['cmd/main.go:20:2: no required module provides package github.com/reconcile-lab/reconcile-lab/bridge; to add it:']) ?? '', /not tidy/);
  assert.equal(goModTidyHint(['listen tcp :8081: bind: address already in use']), undefined);
  assert.equal(goModTidyHint([]), undefined);
});

test('goExitDetails: the first compile error inside the module (never a path outside it) and the exit code go run hid', () => {
  const dir = '/work/shop';
  assert.deepEqual(goExitDetails(['# example.org/shopop', './main.go:36:18: cannot use "not an int" (untyped string constant) as int value', 'internal/x.go:3:1: other'], dir), {
    location: { file: '/work/shop/main.go', line: 36, column: 18 },
  });
  assert.deepEqual(goExitDetails(['../elsewhere/evil.go:1:1: x', '/etc/passwd.go:1:1: y', 'api/v1/types.go:12:2: undefined: Foo'], dir), {
    location: { file: '/work/shop/api/v1/types.go', line: 12, column: 2 },
  }, 'paths that leave the module are skipped');
  assert.deepEqual(goExitDetails(['SHOP_REGION is not set', 'exit status 2', ''], dir), { programExitCode: 2 });
  assert.deepEqual(goExitDetails(['panic: boom', 'goroutine 1 [running]:', 'main.main()', '\t/work/shop/main.go:20 +0x1d', 'exit status 2'], dir), { programExitCode: 2 }, 'a panic trace line is not a compile error');
  assert.deepEqual(goExitDetails([], dir), {});
});

// A repository with go.work at its root and the operator in operator/ (cmd/manager/main.go): the root was taken for
// a module, so Run Controller… ran `go run .` there and Go answered "no Go files in <root>".
test('controllerModuleChoices: a folder inside a module offers none (it is the default); one with only a go.work at its root offers the controller modules below it', () => {
  const repo = mkdtempSync(join(tmpdir(), 'rl-choices-'));
  try {
    assert.deepEqual(controllerModuleChoices([]), []);
    const op = join(repo, 'operator');
    mkdirSync(join(op, 'cmd', 'manager'), { recursive: true });
    writeFileSync(join(op, 'go.mod'), 'module example.com/queue-operator\n\ngo 1.26.0\n\nrequire sigs.k8s.io/controller-runtime v0.25.3\n');
    assert.deepEqual(controllerModuleChoices([repo]), [op]);
    writeFileSync(join(repo, 'go.work'), 'go 1.26.0\n\nuse ./operator\n');
    assert.deepEqual(controllerModuleChoices([repo]), [op], 'a go.work does not make the root a module');
    assert.deepEqual(controllerModuleChoices([op]), [], 'the folder is the module');
    assert.deepEqual(controllerModuleChoices([join(op, 'cmd')]), [], 'inside the module');
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});

test('goLaunchProblem: go run from a monorepo root names the operator module below it; an unbridged module is named before building; a bridged one, a go.work and a built binary pass', () => {
  const root = mkdtempSync(join(tmpdir(), 'rl-launch-'));
  try {
    const bridge = join(root, 'bridge');
    mkdirSync(bridge);
    writeFileSync(join(bridge, 'go.mod'), `module ${BRIDGE_MODULE_PATH}\n`);
    const repo = join(root, 'repo');
    mkdirSync(join(repo, 'web'), { recursive: true });
    writeFileSync(join(repo, 'web', 'package.json'), '{}');
    const op = join(repo, 'operator');
    mkdirSync(join(op, 'cmd'), { recursive: true });
    writeFileSync(join(op, 'go.mod'), 'module example.org/shelf\n\ngo 1.26.0\n\nrequire sigs.k8s.io/controller-runtime v0.25.3\n');
    const atRoot = goLaunchProblem('go', ['run', './cmd'], repo);
    assert.match(atRoot!, /is in no Go module .*the controller module is in operator: run from there \(cd operator\)/);
    assert.equal(goLaunchProblem('go', ['-C', 'operator', 'run', './cmd'], repo)?.includes('no Go module'), false, 'go -C operator finds the module');
    assert.match(goLaunchProblem('go', ['run', './cmd'], op)!, /does not require .*Set Up Go Bridge/);
    assert.match(goLaunchProblem('/usr/local/go/bin/go', ['-C', 'operator', 'run', './cmd'], repo)!, /does not require/);
    writeFileSync(join(op, 'go.mod'), `module example.org/shelf\n\ngo 1.26.0\n\nrequire (\n\tsigs.k8s.io/controller-runtime v0.25.3\n\t${BRIDGE_MODULE_PATH} v0.0.0\n)\n\nreplace ${BRIDGE_MODULE_PATH} => ${bridge}\n`);
    assert.equal(goLaunchProblem('go', ['run', './cmd'], op), undefined, 'a bridged module');
    // Its replace target moved (an extension update): point the replace again; the code has the calls already.
    const moved = readFileSync(join(op, 'go.mod'), 'utf8');
    writeFileSync(join(op, 'go.mod'), moved.replace(`=> ${bridge}`, `=> ${join(root, 'gone', 'bridge')}`));
    const gone = goLaunchProblem('go', ['run', './cmd'], op)!;
    assert.match(gone, /which holds no go\.mod \(the directory moved, e\.g\. after the extension was updated\)\. Point the replace at the bridge again \(in the editor: Reconcile Lab: Set Up Go Bridge…/);
    assert.doesNotMatch(gone, /add bridge\.Setup/, 'the code is not told to add what it has');
    writeFileSync(join(op, 'go.mod'), moved);
    assert.equal(goLaunchProblem('./bin/manager', ['--leader-elect=false'], repo), undefined, 'a built program is not go');
    const empty = join(root, 'empty');
    mkdirSync(empty);
    assert.equal(goLaunchProblem('go', ['run', '.'], empty), undefined, 'no module anywhere: go says so itself');
    assert.equal(goLaunchProblem('go', ['-C=operator', 'run', './cmd'], repo), undefined, 'go -C=operator too');
    // A folder holding many controller modules (and a checkout of the bridge itself): the nearest five, then a count.
    const many = join(root, 'many');
    for (const n of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) {
      mkdirSync(join(many, n), { recursive: true });
      writeFileSync(join(many, n, 'go.mod'), `module example.org/${n}\n\nrequire sigs.k8s.io/controller-runtime v0.25.3\n`);
    }
    mkdirSync(join(many, '0-checkout', 'bridge'), { recursive: true });
    writeFileSync(join(many, '0-checkout', 'bridge', 'go.mod'), `module ${BRIDGE_MODULE_PATH}\n\nrequire sigs.k8s.io/controller-runtime v0.25.3\n`);
    assert.match(goLaunchProblem('go', ['run', './cmd'], many)!, /the controller module is one of a, b, c, d, e and 2 more: run from there \(cd a\)/);
    assert.ok(!findControllerModules([many]).some((d) => d.includes('0-checkout')), 'the bridge module is no controller');
    writeFileSync(join(repo, 'go.work'), 'go 1.26.0\n\nuse ./operator\n');
    assert.equal(goLaunchProblem('go', ['run', './operator/cmd'], repo), undefined, 'a go.work at the repository root decides');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('cacheSyncHint: a cache that never synced (CRD not installed) names the kind and how to install CRDs; other output none', () => {
  const timedOut = ['2026-12-04T16:10:20Z\tERROR\tsetup\tproblem running manager\t{"error": "failed to wait for shelf caches to sync kind source: *v1alpha1.Shelf: timed out waiting for cache to be synced for kind source: *v1alpha1.Shelf"}', 'exit status 1'];
  assert.match(cacheSyncHint(timedOut)!, /never synced Shelf objects: is the Shelf CRD installed.*kubectl apply -f config\/crd\/bases/);
  const noMatch = ['ERROR\tcontroller-runtime.source.EventHandler\tif kind is a CRD, it should be installed before calling Start\t{"kind": "Shelf.shop.h7.example.org", "error": "no matches for kind \\"Shelf\\" in version \\"shop.h7.example.org/v1alpha1\\""}'];
  assert.match(cacheSyncHint(noMatch)!, /the Shelf CRD/);
  assert.equal(cacheSyncHint(['panic: boom', 'exit status 2']), undefined);
});

test('addressInUseHint: a probe or metrics port taken (another make run) names the address and how to free or move it; other output none', () => {
  const taken = ['2026-12-04T16:15:31Z\tERROR\tsetup\tunable to start manager\t{"error": "error listening on :8081: listen tcp :8081: bind: address already in use"}', 'exit status 1'];
  assert.match(addressInUseHint(taken)!, /already listens on :8081 .*another instance of your program .*browser tab was closed or reloaded.*--metrics-bind-address=0 --health-probe-bind-address=0/);
  assert.match(addressInUseHint(['listen tcp 127.0.0.1:8080: bind: address already in use'])!, /on 127\.0\.0\.1:8080/);
  assert.equal(addressInUseHint(['panic: boom', 'exit status 2']), undefined);
});

test('leaderElectionNamespaceHint: leader election on outside the cluster without LeaderElectionNamespace says how to run it; other output none', () => {
  const out = ['2026-12-06T16:35:02Z\tERROR\tsetup\tunable to start manager\t{"error": "unable to find leader election namespace: not running in-cluster, please specify LeaderElectionNamespace"}', 'exit status 1'];
  assert.match(leaderElectionNamespaceHint(out)!, /leader election on but no LeaderElectionNamespace.*--leader-elect=false.*reconcileLab\.goController\.args.*set LeaderElectionNamespace/);
  assert.equal(leaderElectionNamespaceHint(['panic: boom', 'exit status 2']), undefined);
});

test('webhook certificates: the missing serving certificate is found in the output; the hint and goExitDetails say whether the program turns its webhooks off with ENABLE_WEBHOOKS', () => {
  const out = [
    '2026-12-05T09:00:01Z\tINFO\tcontroller-runtime.webhook\tStarting webhook server',
    '2026-12-05T09:00:01Z\tERROR\tsetup\tproblem running manager\t{"error": "open /tmp/k8s-webhook-server/serving-certs/tls.crt: no such file or directory"}',
    'exit status 1',
  ];
  assert.equal(missingWebhookCert(out), '/tmp/k8s-webhook-server/serving-certs/tls.crt');
  // A missing file that is not a webhook's certificate, or other output: none.
  assert.equal(missingWebhookCert(['open /etc/app/config.pem: no such file or directory']), undefined);
  assert.equal(missingWebhookCert(['panic: boom', 'exit status 2']), undefined);
  assert.equal(webhookCertHint(['panic: boom'], true), undefined);
  assert.match(webhookCertHint(out, true)!, /^Its webhook server found no serving certificate \(\/tmp\/k8s-webhook-server\/serving-certs\/tls\.crt\).*skips its webhooks when ENABLE_WEBHOOKS=false.*Run Without Webhooks.*put a certificate and key \(tls\.crt, tls\.key\) in \/tmp\/k8s-webhook-server\/serving-certs\.$/);
  assert.match(webhookCertHint(out, false)!, /Register the webhooks only when you want them.*os\.Getenv\("ENABLE_WEBHOOKS"\) != "false"/);

  const root = mkdtempSync(join(tmpdir(), 'rl-webhooks-'));
  try {
    writeFileSync(join(root, 'go.mod'), 'module example.org/shop\n\ngo 1.26\n');
    mkdirSync(join(root, 'cmd'));
    writeFileSync(join(root, 'cmd', 'main.go'), 'package main\n\nimport "os"\n\nfunc main() {\n\t// if os.Getenv("ENABLE_WEBHOOKS") != "false" { … }\n}\n');
    assert.deepEqual(goExitDetails(out, join(root, 'cmd')), { programExitCode: 1, webhookCert: '/tmp/k8s-webhook-server/serving-certs/tls.crt', readsEnableWebhooks: false }, 'a commented-out check does not count');
    writeFileSync(join(root, 'cmd', 'main.go'), 'package main\n\nimport "os"\n\nfunc main() {\n\tif os.Getenv("ENABLE_WEBHOOKS") != "false" {\n\t\tsetUpWebhooks()\n\t}\n}\n');
    assert.deepEqual(goExitDetails(out, join(root, 'cmd')), { programExitCode: 1, webhookCert: '/tmp/k8s-webhook-server/serving-certs/tls.crt', readsEnableWebhooks: true });
    assert.deepEqual(goExitDetails(['exit status 1'], join(root, 'cmd')), { programExitCode: 1 }, 'no certificate problem: nothing read');
    // Before a run (F5): the program would stop unless ENABLE_WEBHOOKS=false or the default certificate exists.
    const cert = join(root, 'certs', 'tls.crt');
    assert.equal(webhooksWouldStop(join(root, 'cmd'), {}, cert), true);
    assert.equal(webhooksWouldStop(join(root, 'cmd'), { ENABLE_WEBHOOKS: 'false' }, cert), false);
    assert.equal(webhooksWouldStop(join(root, 'cmd'), { ENABLE_WEBHOOKS: 'true' }, cert), true);
    mkdirSync(join(root, 'certs'));
    writeFileSync(cert, 'a certificate');
    assert.equal(webhooksWouldStop(join(root, 'cmd'), {}, cert), false, 'a certificate in place: the webhooks can run');
    rmSync(join(root, 'certs'), { recursive: true });
    writeFileSync(join(root, 'cmd', 'main.go'), 'package main\n\nfunc main() {}\n');
    assert.equal(webhooksWouldStop(join(root, 'cmd'), {}, cert), false, 'a program without the switch');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('uninstalledKindProblem: a kind announced without a resource (the RESTMapper found none: CRD not installed) is named with what to do; a resource, or no kind, is not a problem of this kind', () => {
  assert.match(
    uninstalledKindProblem('shelf', { group: 'shop.example.org', version: 'v1alpha1', kind: 'Shelf' })!,
    /^the Go controller shelf reconciles Shelf \(shop\.example\.org\/v1alpha1\), a kind the cluster does not serve .*: install its CRD \(a kubebuilder project: make install, or kubectl apply -f config\/crd\/bases\)$/,
  );
  assert.match(uninstalledKindProblem('legacy', { version: 'v1', kind: 'Gizmo' })!, /reconciles Gizmo \(v1\)/, 'a core-group kind names its version');
  assert.equal(uninstalledKindProblem('shelf', { group: 'shop.example.org', version: 'v1alpha1', kind: 'Shelf', resource: 'shelves' }), undefined);
  assert.equal(uninstalledKindProblem('shelf', {}), undefined, 'no bridge.Wrap object: nothing to name');
});

test('unservedKindInOutput: controller-runtime\'s "no matches for kind" in JSON and console logs names the kind, its group and version', () => {
  const json = String.raw`{"level":"error","ts":"2026-12-04T19:40:00Z","logger":"controller-runtime.source.EventHandler","msg":"if kind is a CRD, it should be installed before calling Start","kind":"Lamp.shop.example.org","error":"no matches for kind \"Lamp\" in version \"shop.example.org/v1\""}`;
  const consoleLine = String.raw`2026-12-04T19:40:00Z	ERROR	controller-runtime.source.EventHandler	if kind is a CRD, it should be installed before calling Start	{"kind": "Lamp.shop.example.org", "error": "no matches for kind \"Lamp\" in version \"shop.example.org/v1\""}`;
  for (const line of [json, consoleLine, 'no matches for kind "Lamp" in version "shop.example.org/v1"']) {
    assert.deepEqual(unservedKindInOutput(line), { kind: 'Lamp', group: 'shop.example.org', version: 'v1' }, line);
  }
  assert.deepEqual(unservedKindInOutput('no matches for kind "Lamp" in group "shop.example.org"'), { kind: 'Lamp', group: 'shop.example.org' });
  assert.deepEqual(unservedKindInOutput('no matches for kind "Pod" in version "v1"'), { kind: 'Pod', group: '', version: 'v1' });
  assert.equal(unservedKindInOutput('Starting workers {"controller": "shelf", "worker count": 1}'), undefined);
  assert.equal(unservedKindInOutput('no matches for kind'), undefined);
});

test('goCompileErrors: every compile error of a failed build inside the module, with its message, in output order', () => {
  const dir = '/work/shop';
  assert.deepEqual(goCompileErrors(['# example.org/shop/internal/controller', 'internal/controller/planter_controller.go:75:20: undefined: Growing', './main.go:36:18: cannot use x (variable of type string) as int value', '../elsewhere/evil.go:1:1: x', '\t/work/shop/main.go:20 +0x1d', 'exit status 1'], dir), [
    { file: '/work/shop/internal/controller/planter_controller.go', line: 75, column: 20, message: 'undefined: Growing' },
    { file: '/work/shop/main.go', line: 36, column: 18, message: 'cannot use x (variable of type string) as int value' },
  ]);
  assert.deepEqual(goCompileErrors(['a.go:1:1: one', 'a.go:2:1: two'], dir, 1).map((e) => e.line), [1], 'at most limit');
  assert.deepEqual(goCompileErrors(['panic: boom'], dir), []);
});

// What controller-runtime's UnhandledError logger prints (zap, JSON-escaped quotes) when the server's RBAC refuses an
// informer's list, as a Go controller run by a namespaced-only user prints it (captured from samples/go-controller).
const REFUSED_CLUSTER_WIDE = '2026-12-06T19:02:42Z\tERROR\tcontroller-runtime.cache.UnhandledError\tFailed to watch\t{"reflector": "pkg/mod/k8s.io/client-go@v0.37.0/tools/cache/reflector.go:343", "type": "*v1.ConfigMap", "error": "failed to list *v1.ConfigMap: configmaps is forbidden: User \\"system:serviceaccount:team:dev\\" cannot list resource \\"configmaps\\" in API group \\"\\" at the cluster scope"}';
const REFUSED_IN_NAMESPACE = 'E1206 19:02:42.1 reflector.go:205] "Failed to watch" err="failed to list *v1alpha1.Widget: widgets.lab.reconcile.dev is forbidden: User \\"dev\\" cannot list resource \\"widgets\\" in API group \\"lab.reconcile.dev\\" in the namespace \\"shop\\"" type="*v1alpha1.Widget"';

test('forbiddenCacheList: a refused informer list names the resource, the scope, the missing right and the can-i line; a reconcile\'s refusal is not a cache\'s', () => {
  const all = forbiddenCacheList(REFUSED_CLUSTER_WIDE)!;
  assert.deepEqual({ verb: all.verb, resource: all.resource, namespace: all.namespace }, { verb: 'list', resource: 'configmaps', namespace: undefined });
  assert.match(all.message, /^the program's cache may not list configmaps in all namespaces \(403 Forbidden\)\. Missing right: list on configmaps cluster-wide \(ask for it in a ClusterRole\); check with: kubectl auth can-i list configmaps --all-namespaces\./);
  assert.match(all.message, /CacheSyncTimeout \(2 minutes by default\): limit the manager's cache to namespaces you may list \(ctrl\.Options\{Cache: cache\.Options\{DefaultNamespaces/);
  const one = forbiddenCacheList(REFUSED_IN_NAMESPACE)!;
  assert.deepEqual({ resource: one.resource, namespace: one.namespace }, { resource: 'widgets.lab.reconcile.dev', namespace: 'shop' });
  assert.match(one.message, /may not list widgets\.lab\.reconcile\.dev in namespace shop .*kubectl auth can-i list widgets\.lab\.reconcile\.dev -n shop\..*leave shop out of the manager's cache/);
  // A Reconcile's own refused write or read is the reconcile's error, not a cache that never syncs.
  assert.equal(forbiddenCacheList('ERROR\tReconciler error\t{"error": "widgets.lab.reconcile.dev \\"w\\" is forbidden: User \\"dev\\" cannot patch resource \\"widgets\\" in API group \\"lab.reconcile.dev\\" in the namespace \\"shop\\""}'), undefined);
  assert.equal(forbiddenCacheList('ERROR\tReconciler error\t{"error": "configmaps is forbidden: User \\"dev\\" cannot list resource \\"configmaps\\" in API group \\"\\" in the namespace \\"shop\\""}'), undefined);
  assert.equal(forbiddenCacheList('panic: boom'), undefined);
});

test('forbiddenCacheHint: a program that ended with a refused cache is told about the right, not asked whether its CRD is installed', () => {
  const tail = [REFUSED_CLUSTER_WIDE, '2026-12-06T19:04:42Z\tERROR\tsetup\tproblem running manager\t{"error": "failed to wait for widget caches to sync kind source: *v1.ConfigMap: timed out waiting for cache to be synced for kind source: *v1.ConfigMap"}', 'exit status 1'];
  assert.match(forbiddenCacheHint(tail)!, /^The program's cache may not list configmaps in all namespaces \(403 Forbidden\)\. Missing right: /);
  assert.match(programExitHint(tail, process.cwd())!, /^The program's cache may not list configmaps/);
  assert.doesNotMatch(programExitHint(tail, process.cwd())!, /CRD installed/);
  assert.equal(forbiddenCacheHint(['panic: boom']), undefined);
});
