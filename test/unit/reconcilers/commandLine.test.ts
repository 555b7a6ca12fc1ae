import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { splitCommandLine } from '../../../src/core/reconcilers/commandLine.ts';

describe('splitCommandLine', () => {
  const cases: Array<[string, string[]]> = [
    ['', []],
    ['   ', []],
    ['./reconcile.sh', ['./reconcile.sh']],
    ['bash  samples/exec-reconciler.sh --verbose', ['bash', 'samples/exec-reconciler.sh', '--verbose']],
    [`node "my dir/r.js" 'a b'`, ['node', 'my dir/r.js', 'a b']],
    [`echo "say \\"hi\\"" 'it''s'`, ['echo', 'say "hi"', 'its']],
    [`a\\ b c`, ['a b', 'c']],
    [`x "" y`, ['x', '', 'y']],
    [`'$HOME' "$HOME"`, ['$HOME', '$HOME']],
  ];
  for (const [input, want] of cases) it(JSON.stringify(input), () => assert.deepEqual(splitCommandLine(input), want));

  it('rejects an unterminated quote', () => {
    assert.throws(() => splitCommandLine(`bash "oops`), /unterminated double quote/);
    assert.throws(() => splitCommandLine(`bash 'oops`), /unterminated single quote/);
  });
});
