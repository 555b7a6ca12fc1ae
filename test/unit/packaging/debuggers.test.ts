// The manifest's debugger contribution: a `go` debugger (Reconcile Lab's Delve adapter when VS Code's Go extension
// is not installed) is useless without breakpoints in .go files, which VS Code allows (gutter click, F9) only for
// the languages a `breakpoints` contribution names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../../..');

test('package.json: every language of a contributed debugger takes breakpoints (a gutter click in a .go file sets one)', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    contributes: { debuggers?: Array<{ type: string; languages?: string[] }>; breakpoints?: Array<{ language: string }> };
  };
  const debuggers = pkg.contributes.debuggers ?? [];
  assert.ok(debuggers.some((d) => d.type === 'go'), 'a go debugger is contributed');
  const withBreakpoints = new Set((pkg.contributes.breakpoints ?? []).map((b) => b.language));
  for (const d of debuggers) {
    for (const language of d.languages ?? []) assert.ok(withBreakpoints.has(language), `breakpoints for ${language} (debugger ${d.type})`);
  }
});

test('package.json: the go debugger declares every attribute of its snippet and of the F5 configuration (a new launch.json has no "Property … is not allowed")', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    contributes: { debuggers: Array<{ type: string; configurationSnippets?: Array<{ body: Record<string, unknown> }>; configurationAttributes?: { launch?: { properties?: Record<string, unknown> } } }> };
  };
  const go = pkg.contributes.debuggers.find((d) => d.type === 'go')!;
  const declared = new Set(Object.keys(go.configurationAttributes?.launch?.properties ?? {}));
  // VS Code validates name, type and request itself; every other attribute needs the debugger's schema.
  const builtIn = new Set(['name', 'type', 'request']);
  // The snippet's keys are those of the F5 configuration (defaultDebugConfiguration in src/host/goController/debugProvider.ts).
  const keys = new Set<string>(['reconcileLab', ...(go.configurationSnippets ?? []).flatMap((s) => Object.keys(s.body))]);
  for (const k of ['program', 'mode', 'args', 'env', 'cwd', 'buildFlags']) keys.add(k); // what the README tells people to set
  for (const k of keys) if (!builtIn.has(k)) assert.ok(declared.has(k), `configurationAttributes.launch.properties.${k}`);
});
