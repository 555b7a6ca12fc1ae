import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execCommandProblem, looksLikeReconcilerModule, modulePathSetting, reconcilerChoiceItems } from '../../../src/host/commands/reconcilerChoice.ts';

test('Choose Reconciler offers lab, module, exec and the Go controller, marks the current kind, and says when the workspace must be trusted first', () => {
  const trusted = reconcilerChoiceItems('module', true);
  assert.deepEqual(trusted.map((i) => i.choice), ['lab', 'module', 'exec', 'go']);
  assert.deepEqual(trusted.filter((i) => i.description === 'current').map((i) => i.choice), ['module']);
  assert.ok(trusted.every((i) => !/trust the folder/.test(i.detail)));
  const untrusted = reconcilerChoiceItems('lab', false);
  assert.deepEqual(untrusted.filter((i) => /trust the folder first/.test(i.detail)).map((i) => i.choice), ['module', 'exec'], 'only the kinds that run workspace code');
  assert.equal(untrusted.find((i) => i.choice === 'lab')!.description, 'current');
});

test('a module candidate exports reconcile (function, const, re-export, CommonJS) or has a default export; declaration files and other code do not count', () => {
  for (const text of [
    'export async function reconcile(req, ctx) { return {}; }',
    'export function reconcile() {}',
    'export const reconcile = async () => ({});',
    'const reconcile = () => ({});\nexport { predicates, reconcile };',
    'export default { reconcile };',
    'exports.reconcile = async function () {};',
    'module.exports = { reconcile };',
  ]) assert.equal(looksLikeReconcilerModule('r.ts', text), true, text);
  for (const text of ['export function reconciled() {}', 'function reconcile() {}', 'export const reconcileAll = 1;', 'import { reconcile } from "./x";']) {
    assert.equal(looksLikeReconcilerModule('r.ts', text), false, text);
  }
  assert.equal(looksLikeReconcilerModule('types.d.ts', 'export function reconcile(): void;'), false);
  assert.equal(looksLikeReconcilerModule('types.d.mts', 'export default x;'), false);
});

test('the module setting is workspace-relative (forward slashes) inside the folder, absolute outside it', () => {
  const ws = join('/home', 'me', 'kitchen');
  assert.equal(modulePathSetting(join(ws, 'ctrl', 'oven.ts'), ws), 'ctrl/oven.ts');
  assert.equal(modulePathSetting(join('/home', 'me', 'other', 'oven.ts'), ws), join('/home', 'me', 'other', 'oven.ts'));
  assert.equal(modulePathSetting(join('/home', 'me', 'kitchen-old', 'oven.ts'), ws), join('/home', 'me', 'kitchen-old', 'oven.ts'), 'a sibling whose name starts the same is outside');
  assert.equal(modulePathSetting('/x/oven.ts', undefined), '/x/oven.ts');
});

test('an exec command must not be empty', () => {
  assert.match(execCommandProblem('  ')!, /Type the command/);
  assert.equal(execCommandProblem('./reconcile.sh'), undefined);
});

test('an exec command is checked as it will be started: a missing file, a folder, no execute bit, a bad #! line, a bare name off PATH', () => {
  const ws = mkdtempSync(join(tmpdir(), 'rl-choice-exec-'));
  try {
    const file = (name: string, text: string, mode: number) => {
      writeFileSync(join(ws, name), text);
      chmodSync(join(ws, name), mode);
    };
    file('backup.py', '#!/bin/sh\necho {}\n', 0o755);
    file('plain.py', '#!/bin/sh\necho {}\n', 0o644);
    file('crlf.py', '#!/bin/sh\r\necho {}\r\n', 0o755);
    file('py9.py', '#!/no/such/python9\n', 0o755);
    mkdirSync(join(ws, 'reconcilers'));
    const bin = join(ws, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'backup-reconciler'), '#!/bin/sh\necho {}\n', { mode: 0o755 });

    assert.equal(execCommandProblem('./backup.py --verbose', ws, bin), undefined);
    assert.equal(execCommandProblem(`${join(ws, 'backup.py')}`, undefined, bin), undefined);
    assert.equal(execCommandProblem('backup-reconciler', ws, bin), undefined, 'found on PATH');
    assert.equal(execCommandProblem('./elsewhere.py', undefined, bin), undefined, 'a relative path with no workspace folder is not checked');
    assert.equal(execCommandProblem('./backup.py \'unclosed', ws, bin), 'Unterminated single quote in the command line: ./backup.py \'unclosed.');
    assert.equal(execCommandProblem('./bakup.py', ws, bin), `There is no file ./bakup.py in the workspace folder (${ws}).`);
    assert.equal(execCommandProblem('/no/such/backup.py', ws, bin), 'There is no file /no/such/backup.py.');
    assert.equal(execCommandProblem('./reconcilers', ws, bin), './reconcilers is a folder, not a program.');
    assert.equal(execCommandProblem('./plain.py', ws, bin), './plain.py is not executable: chmod +x ./plain.py, or type its interpreter first (python3 ./plain.py, bash ./plain.py).');
    assert.match(execCommandProblem('./crlf.py', ws, bin)!, /^\.\/crlf\.py cannot start: its #! line, "#!\/bin\/sh\\r", ends in a carriage return \(the file has Windows CRLF line endings\)/);
    assert.equal(execCommandProblem('./py9.py', ws, bin), './py9.py cannot start: the interpreter its #! line names, /no/such/python9, does not exist (install it, or point the #! line at one that does: #!/usr/bin/env NAME finds NAME on PATH).');
    assert.equal(execCommandProblem('backup.py', ws, bin), 'backup.py is a file of the workspace folder, but a name without a slash is looked up on PATH only: type ./backup.py.');
    assert.equal(execCommandProblem('bakup-reconciler', ws, bin), 'bakup-reconciler is not on PATH nor a file of the workspace folder: type its path (./bakup-reconciler for a file of the workspace folder).');
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});
