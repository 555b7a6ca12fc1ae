import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { inert, inertMarkdown, MAX_SHOWN_CHARS, rendersLink, safe } from '../../../src/host/safeText.ts';

const root = join(import.meta.dirname, '../../..');

// Crafted values from each source of untrusted text the host shows.
const crafted = {
  // An admission webhook's (or a ValidatingAdmissionPolicy's) rejection message, as the server returns it.
  serverError: 'admission webhook "deny.example.com" denied the request: [Open settings](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22rm%20-rf%20~%5Cn%22%7D)',
  // An exec reconciler's {"error": …}.
  execError: 'failed; see [details](COMMAND:workbench.action.openSettings "click")',
  // An ownerReference kind (the server does not validate it).
  ownerKind: '[Widget](https://evil.example/x)',
  // A field manager name (shown as a finalizer's probable owner).
  fieldManager: 'mgr [x](command:workbench.action.quit)\nsecond line',
  // A workspace setting (reconcileLab.resources entry).
  setting: 'widgets.example.com [fix it](file:///etc/passwd) $(alert)',
  // Nested brackets.
  nested: '[[a](command:x)](command:y)',
};

describe('inert: untrusted text shown in notifications, modals and quick picks', () => {
  for (const [source, value] of Object.entries(crafted)) {
    it(`renders no link from a crafted ${source}`, () => {
      assert.ok(rendersLink(value), `the crafted ${source} is a link before`);
      const out = inert(value);
      assert.equal(rendersLink(out), false, out);
      assert.equal(rendersLink(inert(value, { multiline: true })), false);
      assert.doesNotMatch(out, /\$\(/, 'no icon syntax');
      assert.doesNotMatch(out, /\n/, 'one line');
    });
  }

  it('keeps ordinary text readable and is idempotent', () => {
    assert.equal(inert('Widget ns/name: requeue after 15s (waiting for dep)'), 'Widget ns/name: requeue after 15s (waiting for dep)');
    assert.equal(inert('[a](command:x)'), '[a] (command:x)');
    for (const v of Object.values(crafted)) assert.equal(inert(inert(v)), inert(v));
  });

  it('escapes control, bidi and zero-width characters and caps the length', () => {
    assert.equal(inert('a\u001b[31mb\u202ec\u200bd\u0000'), 'a\\x1b[31mb\\u202ec\\u200bd\\x00');
    assert.equal(inert('line1\r\nline2\tx'), 'line1 line2 x');
    assert.equal(inert('line1\nline2', { multiline: true }), 'line1\nline2');
    const long = inert('x'.repeat(MAX_SHOWN_CHARS * 3));
    assert.equal(long.length, MAX_SHOWN_CHARS);
    assert.ok(long.endsWith('…'));
  });

  it('converts non-strings (an Error gives its message)', () => {
    assert.equal(inert(new Error('[a](command:b)')), '[a] (command:b)');
    assert.equal(inert(42), '42');
    assert.equal(inert(undefined), '');
    assert.equal(inert({ a: '[x](command:y)' }), '{"a":"[x] (command:y)"}');
  });

  it('safe`` makes only the interpolated values inert', () => {
    const s = safe`Remove ${crafted.ownerKind} from ${'ns/a'}?`;
    assert.equal(s, 'Remove [Widget] (https://evil.example/x) from ns/a?');
    assert.equal(rendersLink(s), false);
  });
});

// What VS Code's Markdown renderer (marked with GitHub's extensions) makes a link, image, HTML or icon of, in text
// that reaches it unescaped: a finalizer is a qualified name and may be "www.…/…"; a condition message, an Event's
// message or a server error can be anything.
const markdownHostile = [
  'https://evil.example/a',
  'www.evil.example/pwn',
  'mail@evil.example',
  '<https://evil.example/b>',
  '<command:workbench.action.terminal.new>',
  '[x](command:workbench.action.terminal.new)',
  '![i](https://evil.example/i.png)',
  '<img src=x onerror=alert(1)>',
  '&lt;b&gt;',
  '`code` **bold** _em_ ~~del~~',
  '# heading',
  '$(alert) $(sync~spin)',
];

/** The text a CommonMark renderer shows for `md` when every character `\` precedes is literal (the contract). */
const unescape = (md: string) => md.replace(/\\(.)/g, '$1');

describe('inertMarkdown: untrusted text in a tooltip (vscode.MarkdownString)', () => {
  for (const value of markdownHostile) {
    it(`leaves no Markdown syntax in ${JSON.stringify(value)}: every punctuation character is escaped`, () => {
      const out = inertMarkdown(value);
      // Outside escapes there is no ASCII punctuation at all: no link, autolink, tag, entity, emphasis, icon.
      assert.doesNotMatch(out.replace(/\\[!-/:-@[-`{-~]/g, ''), /[!-/:-@[-`{-~]/, out);
      assert.equal(unescape(out), value, 'reads as the text itself');
    });
  }

  it('escapes theme icons for a MarkdownString with supportThemeIcons: the rendered text holds "\\$(name)", which VS Code shows as "$(name)"', () => {
    const out = inertMarkdown('$(alert) and $(sync~spin) and $(not an icon)', { themeIcons: true });
    assert.equal(unescape(out), '\\$(alert) and \\$(sync~spin) and $(not an icon)');
  });

  it('one line: line breaks become spaces; control, bidi and zero-width characters are escaped visibly; the length is capped', () => {
    assert.equal(unescape(inertMarkdown('a\nb\r\nc\td')), 'a b c d');
    assert.equal(unescape(inertMarkdown('x\u202ey\u001b[2Jz\u200b')), 'x\\u202ey\\x1b[2Jz\\u200b');
    assert.equal(unescape(inertMarkdown('y'.repeat(MAX_SHOWN_CHARS * 2))).length, MAX_SHOWN_CHARS);
  });

  it('keeps letters, digits, spaces and non-ASCII text as they are', () => {
    assert.equal(inertMarkdown('Ready True 3 Größe ✓'), 'Ready True 3 Größe ✓');
  });
});

describe('src/host puts text into Markdown only through inertMarkdown', () => {
  it('no file in src/host calls MarkdownString.appendText (its escaping leaves bare URLs, www. names and <…> autolinks as links)', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (p.endsWith('.ts')) {
          readFileSync(p, 'utf8').split('\n').forEach((line, i) => {
            if (/\.appendText\s*\(/.test(line)) offenders.push(`${relative(root, p)}:${i + 1}: ${line.trim()}`);
          });
        }
      }
    };
    walk(join(root, 'src/host'));
    assert.deepEqual(offenders, [], 'use inertMarkdown (src/host/safeText.ts) with appendMarkdown');
  });
});

describe('src/host shows text only through src/host/ui.ts', () => {
  it('no file but ui.ts calls vscode.window.show*Message / showQuickPick / createQuickPick / withProgress / setStatusBarMessage / showInputBox', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (p.endsWith('.ts') && !p.endsWith(join('host', 'ui.ts'))) {
          readFileSync(p, 'utf8').split('\n').forEach((line, i) => {
            if (/window\s*\.\s*(show(Information|Warning|Error)Message|showQuickPick|createQuickPick|withProgress|setStatusBarMessage|showInputBox|createInputBox)\b/.test(line)) {
              offenders.push(`${relative(root, p)}:${i + 1}: ${line.trim()}`);
            }
          });
        }
      }
    };
    walk(join(root, 'src/host'));
    assert.deepEqual(offenders, [], 'use src/host/ui.ts (it makes every shown string inert)');
  });

  it('the scan finds a direct call (the check can fail)', () => {
    assert.match('void vscode.window.showWarningMessage(`x`)', /window\s*\.\s*(show(Information|Warning|Error)Message)\b/);
  });
});
