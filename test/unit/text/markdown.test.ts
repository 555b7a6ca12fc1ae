import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { codeSpan, escapeMarkdown } from '../../../src/core/text/markdown.ts';

/** The text a CommonMark renderer shows for inline Markdown `md` (backslash escapes and the two entities undone). */
const shown = (md: string) => md.replace(/\\(.)/g, '$1').replace(/&lt;/g, '<').replace(/&amp;/g, '&');

// Plain text that GitHub (GFM autolinks), marked and VS Code's Markdown preview (markdown-it linkify) make a link of.
const autolinks = [
  'https://evil.example/a',
  'HTTP://EVIL.EXAMPLE',
  'ftp://evil.example/f',
  '//evil.example/protocol-relative',
  'www.evil.example/pwn',
  'WWW.evil.example',
  'mail@evil.example',
  'mailto:mail@evil.example',
  'xmpp:someone@evil.example',
  'command:workbench.action.terminal.new',
];

describe('escapeMarkdown: cluster text in the Markdown reports and the dry-run result', () => {
  for (const value of autolinks) {
    it(`leaves no autolink in ${JSON.stringify(value)} and reads as itself`, () => {
      const out = escapeMarkdown(`see ${value} now`);
      // The patterns the autolinkers start from: a scheme's ':' or '//', an e-mail's '@', 'www.'.
      assert.doesNotMatch(out, /(^|[^\\])(:(?=\S)|@|\/\/)/, out);
      assert.doesNotMatch(out, /\bwww\./i, out);
      assert.equal(shown(out), `see ${value} now`);
    });
  }

  it('escapes links, images, HTML, emphasis and table cells, and joins lines', () => {
    const value = '[x](https://evil.example) ![i](y) <img src=x onerror=alert(1)> **b** _e_ ~~s~~ `c` a|b &amp;\nnext';
    const out = escapeMarkdown(value);
    assert.doesNotMatch(out, /(^|[^\\])[[\]`*_|~]/, out);
    assert.doesNotMatch(out, /</);
    assert.equal(shown(out), value.replace('\n', ' '));
  });

  it('keeps ordinary text readable: a colon before a space, dots and single slashes stay as they are', () => {
    assert.equal(escapeMarkdown('Widget ns/name: requeue after 15s (widgets.lab.reconcile.dev)'), 'Widget ns/name: requeue after 15s (widgets.lab.reconcile.dev)');
  });

  it('codeSpan fences text longer than any backtick run in it', () => {
    assert.equal(codeSpan('a ``` b'), '````a ``` b````');
    assert.equal(codeSpan('`x'), '`` `x ``');
  });
});
