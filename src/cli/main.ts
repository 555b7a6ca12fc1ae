import { MIN_NODE, nodeIsSupported } from '../core/nodeVersion.ts';

// The `reconcile-lab` executable (bundled to dist/cli.js, CommonJS: no top-level await). Exit codes: see HELP in args.ts.
// Nothing that needs the Kubernetes client is loaded before the Node version check: the rest of the CLI comes in
// through a dynamic import, which the bundle evaluates only when it runs.

/** What to tell someone running the CLI on a Node older than {@link MIN_NODE}. */
export function unsupportedNodeMessage(version: string, execPath: string, script: string): string {
  const min = MIN_NODE.join('.');
  return [
    `reconcile-lab needs Node.js ${min} or newer; this is Node ${version} (${execPath}).`,
    'Run it with a newer Node, for example:',
    `  npx -y -p node@24 node ${script} <command> …     (Node 24 from the npm registry, nothing installed globally)`,
    `  node_modules/.bin/node ${script} <command> …     (in a checkout of Reconcile Lab: its pinned Node 24)`,
    `or install Node ${min}+ (e.g. nvm install 24) and put it first on PATH.`,
    '',
  ].join('\n');
}

if (!nodeIsSupported(process.versions.node)) {
  process.stderr.write(unsupportedNodeMessage(process.versions.node, process.execPath, process.argv[1] ?? 'dist/cli.js'));
  process.exitCode = 1;
} else {
  void import('./start.ts').then((m) => m.start());
}
