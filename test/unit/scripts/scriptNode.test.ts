import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { stripsTypes } from '../../../scripts/scriptNode.mjs';
import { OPEN_VSCODE_USAGE, parseOpenVsCodeArgs } from '../../../scripts/open-vscode.mjs';

const root = resolve(import.meta.dirname, '../../..');

describe('scripts/scriptNode.mjs', () => {
  it('tells a Node that strips TypeScript types from one that does not', () => {
    for (const v of ['v22.18.0', 'v22.20.1', 'v23.0.0', 'v24.11.0']) assert.equal(stripsTypes(v), true, v);
    for (const v of ['v18.19.0', 'v20.20.2', 'v22.17.9', 'v22.6.0']) assert.equal(stripsTypes(v), false, v);
  });
});

describe('scripts/open-vscode.mjs command line', () => {
  it('--help and -h print the usage (exit 0) and open nothing', () => {
    for (const flag of ['--help', '-h']) {
      const r = spawnSync(process.execPath, [join(root, 'scripts/open-vscode.mjs'), flag], { cwd: root, encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, OPEN_VSCODE_USAGE);
    }
    for (const o of ['--kubeconfig <path>', '--workspace <folder>', '--browser', '--port <n>', '-h, --help']) assert.ok(OPEN_VSCODE_USAGE.includes(o), o);
  });

  it('a wrong command line is an error naming the argument (exit 2), before anything starts', () => {
    const cases: [string[], RegExp][] = [
      [['--prot', '3'], /^open-vscode: unknown option --prot\n/],
      [['--kubeconfig'], /^open-vscode: --kubeconfig needs a value\n/],
      [['--port', 'x'], /^open-vscode: --port needs a port number from 0 to 65535 \(got x\)\n/],
      [['/some/folder'], /^open-vscode: unexpected argument \/some\/folder \(the folder is given with --workspace\)\n/],
    ];
    for (const [args, re] of cases) {
      const r = spawnSync(process.execPath, [join(root, 'scripts/open-vscode.mjs'), ...args], { cwd: root, encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.match(r.stderr, /usage: node scripts\/run\.cjs open-vscode/);
    }
  });

  it('parses the options it lists', () => {
    assert.deepEqual(parseOpenVsCodeArgs(['--kubeconfig', '/k', '--workspace=/w', '--browser', '--port', '8080']), { help: false, browser: true, kubeconfig: '/k', workspace: '/w', port: 8080 });
    assert.deepEqual(parseOpenVsCodeArgs([]), { help: false, browser: false });
  });
});
