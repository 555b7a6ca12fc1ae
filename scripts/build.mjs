#!/usr/bin/env node
// Bundles with esbuild: the extension (node, cjs, `vscode` external), the CLI (node, cjs, with a shebang)
// and the webviews (browser, iife). `--production` minifies; `--watch` rebuilds on change.
import * as esbuild from 'esbuild';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
mkdirSync(resolve(root, 'dist'), { recursive: true });
// The package is ESM ("type": "module") so Node runs the TypeScript sources directly; the bundles are CommonJS.
writeFileSync(resolve(root, 'dist/package.json'), '{ "type": "commonjs" }\n');

const node = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  sourcemap: production ? false : 'linked',
  minify: production,
  external: ['vscode'],
  logLevel: 'warning',
  // localControlPlane.ts reads import.meta.url when run as ESM source and falls back to a repo root argument in bundles.
  logOverride: { 'empty-import-meta': 'silent' },
  absWorkingDir: root,
};
const configs = [
  { ...node, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js' },
  { ...node, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' },
    // `reconcile-lab --version` (src/cli/args.ts cliVersion).
    define: { __RECONCILE_LAB_VERSION__: JSON.stringify(JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')).version) } },
  { ...node, entryPoints: ['test/vscode/suite/index.ts'], outfile: 'dist/test/suite.js', external: ['vscode', 'mocha'] },
  {
    bundle: true, platform: 'browser', format: 'iife', target: 'es2022', absWorkingDir: root, logLevel: 'warning',
    sourcemap: production ? false : 'linked', minify: production,
    entryPoints: ['src/webview/eventLog/main.ts'], outfile: 'dist/webview/eventLog.js',
  },
  {
    bundle: true, platform: 'browser', format: 'iife', target: 'es2022', absWorkingDir: root, logLevel: 'warning',
    sourcemap: production ? false : 'linked', minify: production,
    entryPoints: ['src/webview/checks/main.ts'], outfile: 'dist/webview/checks.js',
  },
  {
    bundle: true, platform: 'browser', format: 'iife', target: 'es2022', absWorkingDir: root, logLevel: 'warning',
    sourcemap: production ? false : 'linked', minify: production,
    entryPoints: ['src/webview/timeline/main.ts'], outfile: 'dist/webview/timeline.js',
  },
].filter((c) => existsSync(resolve(root, c.entryPoints[0])));

if (watch) {
  for (const c of configs) await (await esbuild.context(c)).watch();
  console.log(`watching ${configs.length} bundle(s)`);
} else {
  await Promise.all(configs.map((c) => esbuild.build(c)));
  console.log(`built ${configs.map((c) => c.outfile).join(', ')}`);
}
