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

  it('checks the Get Started walkthrough: links, completion events and packaged images', async () => {
    const real = readPkg().contributes.walkthroughs;
    assert.equal(real.length, 1);
    assert.ok(real[0].steps.length >= 4 && real[0].steps.length <= 7, 'a handful of steps, not an excessive number');
    const pkg = readPkg();
    const steps = pkg.contributes.walkthroughs[0].steps;
    steps[0].description += '\n[Nope](command:reconcileLab.nope)';
    steps[1].completionEvents = ['onContext:reconcileLab.never', 'onView:reconcileLab.nowhere', 'onCommand:reconcileLab.nope'];
    steps[2].media.image = 'docs/images/dry-run.png';
    steps[3].description = 'No button at all.';
    steps[5].completionEvents = ['onCommand:reconcileLab.runChecks'];
    steps.push({ ...steps[4] });
    const { problems } = checkManifest(pkg, await loadIdModules());
    const has = (re: RegExp) => assert.ok(problems.some((p: string) => re.test(p)), `${re} in:\n${problems.join('\n')}`);
    has(/step connect links unknown command reconcileLab\.nope/);
    has(/step views: completion event onContext:reconcileLab\.never/);
    has(/step views: completion event onView:reconcileLab\.nowhere/);
    has(/step views: completion event onCommand:reconcileLab\.nope ticks the step even when the command fails/);
    has(/step checks: completion event onCommand:reconcileLab\.runChecks ticks the step even when the command fails/);
    has(/step step: image docs\/images\/dry-run\.png is not a file under media\//);
    has(/step eventLog links no command/);
    has(/step goController is declared twice/);
    has(/step checks does not complete on onContext:reconcileLab\.walkthrough\.checks/);
    pkg.contributes.walkthroughs[0].id = 'renamed';
    const renamed = checkManifest(pkg, await loadIdModules()).problems;
    assert.ok(renamed.some((p: string) => p.includes('walkthrough renamed, which is not in WalkthroughIds')), renamed.join('\n'));
    assert.ok(renamed.some((p: string) => p.includes('WalkthroughIds.gettingStarted is not declared')), renamed.join('\n'));
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
