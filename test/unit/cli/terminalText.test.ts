import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeControlChars } from '../../../src/core/text/terminal.ts';

test('control characters are escaped for the terminal; newlines, tabs and text are kept; JSON stays valid', () => {
  assert.equal(escapeControlChars('a\u001b[2Jb\u0007c\u009bd\re\n\tf'), 'a\\u001b[2Jb\\u0007c\\u009bd\\u000de\n\tf');
  assert.equal(escapeControlChars('plain ünïcode → ok'), 'plain ünïcode → ok');
  const json = JSON.stringify({ error: 'x\u009by' });
  assert.deepEqual(JSON.parse(escapeControlChars(json)), { error: 'x\u009by' });
});
