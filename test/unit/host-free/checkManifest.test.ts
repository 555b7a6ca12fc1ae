import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
// @ts-expect-error: a plain .mjs script without type declarations
import { checkManifest, loadIdModules } from '../../../scripts/checkManifest.mjs';

const root = resolve(import.meta.dirname, '../../..');
const readPkg = () => JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));

describe('scripts/checkManifest', () => {
  it('accepts the real manifest', async () => {
    const { problems, counts } = checkManifest(readPkg(), await loadIdModules());
    assert.deepEqual(problems, []);
    assert.ok(counts.commands >= 15);
  });

  it('reports a command declared in package.json but missing from CommandIds, and the reverse', async () => {
    const pkg = readPkg();
    pkg.contributes.commands.push({ command: 'reconcileLab.bogus', title: 'Bogus', category: 'Reconcile Lab' });
    pkg.contributes.commands = pkg.contributes.commands.filter((c: { command: string }) => c.command !== 'reconcileLab.stepReconcile');
    const { problems } = checkManifest(pkg, await loadIdModules());
    assert.ok(problems.some((p: string) => p.includes('reconcileLab.bogus') && p.includes('not in CommandIds')), problems.join('\n'));
    assert.ok(problems.some((p: string) => p.includes('reconcileLab.stepReconcile') && p.includes('not declared')), problems.join('\n'));
    // the menus that use the removed command are reported too
    assert.ok(problems.some((p: string) => p.startsWith('menu ') && p.includes('reconcileLab.stepReconcile')), problems.join('\n'));
  });

  it('reports undeclared context keys, unknown viewItem nouns and loop states in when clauses', async () => {
    const pkg = readPkg();
    pkg.contributes.menus['view/title'].push(
      { command: 'reconcileLab.connect', when: 'reconcileLab.nonsense && view == reconcileLab.resources' },
      { command: 'reconcileLab.connect', when: 'viewItem == reconcileLab:gizmo' },
      { command: 'reconcileLab.connect', when: 'reconcileLab.loopState == sleeping' },
    );
    const { problems } = checkManifest(pkg, await loadIdModules());
    assert.ok(problems.some((p: string) => p.includes('reconcileLab.nonsense')), problems.join('\n'));
    assert.ok(problems.some((p: string) => p.includes('"gizmo"')), problems.join('\n'));
    assert.ok(problems.some((p: string) => p.includes('"sleeping"')), problems.join('\n'));
  });

  it('offers Reset Backoff in the views only on rows marked :backoff (keys with failures or waiting in backoff)', () => {
    const items = (readPkg().contributes.menus['view/item/context'] as Array<{ command: string; when: string }>).filter((m) => m.command === 'reconcileLab.resetBackoff');
    assert.ok(items.length >= 2, 'an inline and a context-menu entry');
    // The clauses OR their viewItem tests: a row gets the entry when one of its regexes matches its contextValue.
    const offered = (when: string, viewItem: string) => [...when.matchAll(/viewItem =~ \/(.+?)\/(?=[ )]|$)/g)].some((m) => new RegExp(m[1]!).test(viewItem));
    const withBackoff = ['reconcileLab:object:live:primary:backoff', 'reconcileLab:object:live:finalizers:primary:backoff:secret', 'reconcileLab:queueItem:backoff:backoff', 'reconcileLab:queueItem:processing:backoff'];
    const without = ['reconcileLab:object:live:primary', 'reconcileLab:object:live:finalizers:primary', 'reconcileLab:object:live', 'reconcileLab:queueItem:queued', 'reconcileLab:queueItem:idle', 'reconcileLab:queueItem:requeueAfter'];
    for (const m of items) {
      for (const v of without) assert.equal(offered(m.when, v), false, `${m.when} offers it on ${v}`);
    }
    const menu = items.find((m) => m.when.includes('reconcileLab:object'))!;
    for (const v of withBackoff) assert.equal(offered(menu.when, v), true, `${menu.when} does not offer it on ${v}`);
    const inline = items.find((m) => !m.when.includes('reconcileLab:object'))!;
    for (const v of withBackoff.filter((x) => x.includes('queueItem'))) assert.equal(offered(inline.when, v), true, `${inline.when} does not offer it on ${v}`);
  });

  it('reports settings whose default differs, and settings not in SettingDefaults', async () => {
    const pkg = readPkg();
    const work = pkg.contributes.configuration.find((s: { title: string }) => s.title === 'Work Queue');
    work.properties['reconcileLab.workQueue.maxConcurrentReconciles'].default = 4;
    work.properties['reconcileLab.workQueue.extra'] = { type: 'string', default: '', description: 'x' };
    const { problems } = checkManifest(pkg, await loadIdModules());
    assert.ok(problems.some((p: string) => p.includes('maxConcurrentReconciles') && p.includes('default')), problems.join('\n'));
    assert.ok(problems.some((p: string) => p.includes('reconcileLab.workQueue.extra')), problems.join('\n'));
  });
});
