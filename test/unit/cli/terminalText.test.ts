import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeControlChars } from '../../../src/core/text/terminal.ts';

test('control characters are escaped for the terminal; newlines, tabs and text are kept; JSON stays valid', () => {
  assert.equal(escapeControlChars('a\u001b[2Jb\u0007c\u009bd\re\n\tf'), 'a\\u001b[2Jb\\u0007c\\u009bd\\u000de\n\tf');
  assert.equal(escapeControlChars('plain ünïcode → ok'), 'plain ünïcode → ok');
  const json = JSON.stringify({ error: 'x\u009by' });
  assert.deepEqual(JSON.parse(escapeControlChars(json)), { error: 'x\u009by' });
});

test('bidi overrides and isolates, zero-width characters and line separators are escaped too: text shows as what it is', () => {
  assert.equal(escapeControlChars('a\u202eb\u2066c\u200bd\u2028e\ufefff'), 'a\\u202eb\\u2066c\\u200bd\\u2028e\\ufefff');
  assert.deepEqual(JSON.parse(escapeControlChars(JSON.stringify({ name: 'x\u202ey' }))), { name: 'x\u202ey' });
});
