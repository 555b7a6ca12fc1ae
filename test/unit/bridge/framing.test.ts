import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineDecoder } from '../../../src/core/bridge/framing.ts';

function decoder(max?: number) {
  const lines: string[] = [];
  const oversize: number[] = [];
  const d = new LineDecoder({ onLine: (l) => lines.push(l), onOversize: (b) => oversize.push(b), ...(max !== undefined ? { maxLineBytes: max } : {}) });
  return { d, lines, oversize };
}

test('lines split across chunks, CRLF and empty lines; a multi-byte character split between chunks is intact', () => {
  const { d, lines } = decoder();
  const bytes = Buffer.from('{"a":1}\r\n\n{"b":"é€"}\n{"c"', 'utf8');
  const cut = bytes.indexOf(Buffer.from('€')) + 1; // inside the 3-byte euro sign
  d.push(bytes.subarray(0, cut));
  d.push(bytes.subarray(cut));
  assert.deepEqual(lines, ['{"a":1}', '{"b":"é€"}']);
  d.push(Buffer.from(':3}\n'));
  assert.deepEqual(lines, ['{"a":1}', '{"b":"é€"}', '{"c":3}']);
});

test('a line over the limit is reported once and skipped to its newline; the next lines are delivered', () => {
  const { d, lines, oversize } = decoder(10);
  d.push(Buffer.from('short\n0123456789ABC'));
  d.push(Buffer.from('DEFGHIJ still the same line'));
  d.push(Buffer.from('\nok\n'));
  assert.deepEqual(lines, ['short', 'ok']);
  assert.equal(oversize.length, 1);
  assert.ok(oversize[0]! > 10);
});
