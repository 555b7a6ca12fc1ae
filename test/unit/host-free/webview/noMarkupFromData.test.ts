// The webviews' scripts build every element with createElement and set text with textContent, so no cluster- or
// workspace-provided text can become HTML or a link: no HTML-parsing sink (innerHTML, outerHTML,
// insertAdjacentHTML, document.write, DOMParser, createContextualFragment), no anchor element and no href. Their
// stylesheets take colours from the theme: a colour literal only as the fallback of a --vscode-* variable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../../../..');

function filesUnder(dir: string, ext: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(ext))
    .map((e) => join(e.parentPath, e.name));
}

/** Source without comments (a comment may name what the code must not do). */
function code(file: string): string {
  return readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

describe('webview scripts and styles', () => {
  const scripts = filesUnder(join(root, 'src/webview'), '.ts');
  const styles = filesUnder(join(root, 'media'), '.css');

  it('finds the webviews it guards', () => {
    for (const view of ['checks', 'eventLog', 'timeline']) assert.ok(scripts.some((f) => f.includes(`/${view}/`)), `no script of ${view}`);
    assert.ok(styles.length >= 3, styles.join(', '));
  });

  it('use no HTML-parsing sink, anchor or href', () => {
    const sinks: [string, RegExp][] = [
      ['innerHTML / outerHTML', /\.(inner|outer)HTML\b/],
      ['insertAdjacentHTML', /insertAdjacentHTML/],
      ['document.write', /document\.write/],
      ['DOMParser', /DOMParser/],
      ['createContextualFragment', /createContextualFragment/],
      ['an anchor element', /createElement\(\s*['"]a['"]|\bh\(\s*['"]a['"]/],
      ['href', /\.href\b|['"]href['"]/],
    ];
    const found: string[] = [];
    for (const f of scripts) {
      const text = code(f);
      for (const [what, re] of sinks) if (re.test(text)) found.push(`${f.slice(root.length + 1)}: ${what}`);
    }
    assert.deepEqual(found, []);
  });

  it('take colours from the theme (a literal only as a --vscode-* fallback)', () => {
    const found: string[] = [];
    for (const f of styles) {
      const text = readFileSync(f, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
      // Drop each var(--vscode-…, fallback) whole, then look for any colour literal left.
      const bare = text.replace(/var\(--vscode-[\w-]+(?:\s*,\s*(?:var\([^()]*\)|[^()]|\([^()]*\))*)?\)/g, 'var()');
      for (const m of bare.matchAll(/#[0-9a-fA-F]{3,8}\b|\brgba?\(|\bhsla?\(/g)) {
        const line = bare.slice(0, m.index).split('\n').length;
        found.push(`${f.slice(root.length + 1)}:${line}: ${m[0]}`);
      }
    }
    assert.deepEqual(found, []);
  });
});
