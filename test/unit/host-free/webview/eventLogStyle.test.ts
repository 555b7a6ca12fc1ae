// The Event Log's stylesheet: the Key column is plain text (a click selects the row, a double-click reveals the
// object), so it is drawn in the normal foreground, not in the link colour; a selected row keeps its selection colour.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const css = readFileSync(resolve(import.meta.dirname, '../../../../media/eventLog.css'), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');

/** The declarations of every rule whose selector list is exactly `selector`. */
function rules(selector: string): string[] {
  return [...css.matchAll(/([^{}]+)\{([^}]*)\}/g)].filter((m) => m[1]!.trim() === selector).map((m) => m[2]!);
}

describe('Event Log stylesheet', () => {
  it('draws the Key column in the foreground colour, not as a link', () => {
    const key = rules('.row .key');
    assert.equal(key.length, 1, 'one .row .key rule');
    assert.match(key[0]!, /color:\s*var\(--vscode-foreground\)/);
    assert.doesNotMatch(css, /\.key[^{]*\{[^}]*textLink/, 'no .key rule uses a textLink colour');
    assert.match(rules('.row.selected .key').join(''), /color:\s*inherit/, 'a selected row keeps its selection foreground');
  });
});
