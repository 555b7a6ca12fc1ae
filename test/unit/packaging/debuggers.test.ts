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
