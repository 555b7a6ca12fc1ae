#!/usr/bin/env node
// `npm run lab`: the local lab in one command.
//   1. builds the extension bundles;
//   2. starts a real local control plane (etcd + kube-apiserver + kube-controller-manager; built from Go modules
//      on the first run and cached);
//   3. applies the sample CRD (samples/crd.yaml) and the three sample Widgets (samples/widgets.yaml);
//   4. opens VS Code with the extension connected to it (desktop `code` if on PATH, else code-server in a browser);
//   5. on Ctrl-C stops VS Code and the control plane and removes every file it made.
//
// The lab is one unit: it stops everything when any of its processes is told to stop or dies: SIGINT / SIGTERM /
// SIGHUP to this process or to scripts/run.cjs (which passes them on), the parent (run.cjs, npm) going away, or a
// component (etcd, kube-apiserver, kube-controller-manager, code-server) exiting by itself. If this process is
// killed outright (SIGKILL), its parent-death watchdog (src/core/process/ownerWatchdog.ts) ends the components, and
// the next start removes the temp dir left behind.
//
// Options (scripts/labOptions.mjs; `npm run lab -- --help` lists them): --no-vscode (cluster only), --browser (force
// code-server), --port <n> (code-server port), --folder <path> or a bare path (the folder VS Code opens instead of
// samples/). A wrong command line stops before anything starts, with exit status 2.
import { readFileSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { applyDocuments, loadDocuments } from './samples.mjs';
import { LAB_USAGE, LabUsageError, parseLabArgs } from './labOptions.mjs';
import { requireScriptNode } from './scriptNode.mjs';

// The TypeScript sources load only on a Node that strips types (a clear message otherwise, not a loader error).
requireScriptNode('lab');
const { startLocalControlPlane, resolveBinaries } = await import('../src/core/controlplane/localControlPlane.ts');
const { loadKubeConfig } = await import('../src/core/k8s/kubeconfig.ts');
const { KubeTransport } = await import('../src/core/k8s/transport.ts');

const root = resolve(import.meta.dirname, '..');
const say = (line) => console.log(`[lab] ${line}`);

let options;
try {
  // A relative folder is meant from where the person typed the command: npm (and scripts/run.cjs) run this script
  // in the repository root but pass that directory as INIT_CWD.
  options = parseLabArgs(process.argv.slice(2), { cwd: process.env.INIT_CWD ?? process.cwd(), root });
} catch (e) {
  if (!(e instanceof LabUsageError)) throw e;
  console.error(`[lab] ${e.message}\n${LAB_USAGE.split('\n')[0]}  (--help lists the options)`);
  process.exit(2);
}
if (options.help) {
  process.stdout.write(LAB_USAGE);
  process.exit(0);
}

const cleanups = [];
let stopping = false;
async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  say('stopping…');
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch (e) {
      console.error(`[lab] cleanup failed: ${e?.message ?? e}`);
    }
  }
  say('stopped; nothing left running');
  process.exit(code);
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => void shutdown(0));
// The parent (scripts/run.cjs, npm, a shell) died without passing a signal on, e.g. SIGKILL: this process was
// handed to another parent. Stop as on Ctrl-C.
const parentPid = process.ppid;
if (parentPid > 1) {
  setInterval(() => {
    if (process.ppid !== parentPid) {
      say(`the parent process (pid ${parentPid}) is gone`);
      void shutdown(0);
    }
  }, 500).unref();
}

async function applyFile(t, file) {
  await applyDocuments(t, loadDocuments(file), { log: say });
}

try {
  say('building the extension');
  const b = spawnSync(process.execPath, [join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'inherit' });
  if (b.status !== 0) throw new Error('build failed');

  const t0 = Date.now();
  const cp = await startLocalControlPlane({ repoRoot: root, log: (l) => say(l) });
  cleanups.push(() => cp.stop());
  cp.onDidExitUnexpectedly((e) => {
    say(`${e.component} exited by itself (${e.signal ?? `code ${e.code}`}); stopping everything`);
    void shutdown(1);
  });
  say(`control plane ready in ${((Date.now() - t0) / 1000).toFixed(1)} s at ${cp.server}`);

  const t = new KubeTransport(loadKubeConfig({ path: cp.kubeconfigPath }));
  cleanups.push(() => t.dispose());
  await applyFile(t, join(root, 'samples/crd.yaml'));
  await applyFile(t, join(root, 'samples/widgets.yaml'));

  // A stable path too, so a second terminal can always find the running lab's kubeconfig.
  const stable = join(root, '.cache/lab/kubeconfig');
  mkdirSync(join(root, '.cache/lab'), { recursive: true });
  copyFileSync(cp.kubeconfigPath, stable);
  cleanups.push(async () => (await import('node:fs')).rmSync(join(root, '.cache/lab'), { recursive: true, force: true }));
  // kubectl from the same multicall binary, for machines without one.
  const bins = await resolveBinaries({ repoRoot: root });
  if (bins.etcd.length === 2) {
    mkdirSync(join(root, '.cache/lab/bin'), { recursive: true });
    writeFileSync(join(root, '.cache/lab/bin/kubectl'), `#!/bin/sh\nexec '${bins.etcd[0]}' kubectl "$@"\n`, { mode: 0o755 });
  }

  console.log(`
Reconcile Lab is running.
  kubeconfig:  ${cp.kubeconfigPath}
  (copy):      ${stable}
  try:         PATH=${join(root, '.cache/lab/bin')}:$PATH kubectl --kubeconfig ${stable} get widgets -n reconcile-lab
  CLI:         node_modules/.bin/node dist/cli.js --kubeconfig ${stable} report   (the pinned Node 24; see README, CLI)
  VS Code:     set "reconcileLab.connection.kubeconfig" to the path above, or start VS Code with
               RECONCILE_LAB_KUBECONFIG=${stable}
`);

  if (options.vscode) {
    const { openVsCode } = await import('./open-vscode.mjs');
    const vs = await openVsCode({
      root,
      kubeconfig: stable,
      workspace: options.folder,
      mode: options.browser ? 'browser' : undefined,
      port: options.port,
      log: say,
    });
    cleanups.push(() => vs.dispose());
    vs.exited?.then((e) => {
      if (stopping) return;
      say(`VS Code (code-server) exited by itself (${e?.signal ?? `code ${e?.code}`}); stopping everything`);
      void shutdown(1);
    });
    if (vs.url) say(`open ${vs.url} in a browser (VS Code with Reconcile Lab connected to the lab cluster)`);
    else say('VS Code (desktop) opened with the extension connected to the lab cluster');
  }
  say('press Ctrl-C to stop everything');
  setInterval(() => {}, 1 << 30);
} catch (e) {
  console.error(`[lab] ${e?.message ?? e}`);
  await shutdown(1);
}
