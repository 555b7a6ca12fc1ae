import { test } from 'node:test';
import assert from 'node:assert/strict';
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
