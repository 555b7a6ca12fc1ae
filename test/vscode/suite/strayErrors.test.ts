// A module reconciler that starts work it does not await: the error that escapes every reconcile is said in the
// editor (a warning naming the module, its lines in the output channel), once, and the loop goes on. An error of
// other code in the extension host (another extension's) is not claimed as the module's.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StepResult } from '../../../src/core/controller/controller.ts';
import { api, connectTo, ok, run, suiteWidgets, waitUntil, type SuiteWidgets } from './support/lab.ts';

const MODULE = `
export async function reconcile(request, ctx) {
  if (request.name === 'late') {
    // Not awaited: it rejects after this reconcile has succeeded.
    new Promise((_, reject) => setTimeout(() => reject(new Error('late boom from the module')), 10));
  }
  if (request.name === 'unawaited') {
    // A client call whose promise nobody awaits: a 404 from the server, with no frame of this file in its stack.
    ctx.client.get(ctx.primary, request.namespace, 'no-such-widget-anywhere');
  }
  return {};
}
`;

describe('a module reconciler\'s error that escapes every reconcile', function () {
  this.timeout(120_000);
  let w: SuiteWidgets;
  let dir = '';
  let path = '';

  before(async function () {
    this.timeout(90_000);
    w = await suiteWidgets('ext-stray', ['late', 'unawaited', 'calm']);
    dir = mkdtempSync(join(tmpdir(), 'rl-stray-'));
    path = join(dir, 'careless-reconciler.mjs');
    writeFileSync(path, MODULE);
    await connectTo(w.ns, { reconcilerKind: 'module', reconcilerModulePath: path });
    await waitUntil(() => w.l.session?.list(w.c.resourceId).length === 3, 'the widgets cached');
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const warningsSince = async (mark: number) => (await api()).shownSince(mark).filter((t) => t.kind === 'warning').map((t) => t.text);
  const step = async (name: string) => ok(await run<{ step: StepResult }>('reconcileLab.stepReconcile', { key: `${w.ns}/${name}`, resource: w.c.resourceId, force: true })).step;

  it('a rejection it did not await is said as the module\'s, once, and the loop goes on', async () => {
    const a = await api();
    const mark = a.shownMark();
    const first = await step('late');
    assert.ok(first.kind === 'reconciled' && first.outcome.kind === 'success', JSON.stringify(first));
    const said = `an error escaped every reconcile of the reconciler module ${path} (a promise it did not await, or a timer or event callback that threw), so no reconcile reports it: late boom from the module`;
    await waitUntil(async () => (await warningsSince(mark)).includes(said), 'the warning naming the module');
    await step('late');
    await new Promise((r) => setTimeout(r, 300)); // the second rejection has happened (10 ms after its reconcile)
    assert.equal((await warningsSince(mark)).filter((t) => t === said).length, 1, 'said once');
    const calm = await step('calm');
    assert.ok(calm.kind === 'reconciled' && calm.outcome.kind === 'success', 'the loop goes on');
  });

  it('a client call it did not await (no frame of the module in its stack) is the module\'s too', async () => {
    const mark = (await api()).shownMark();
    await step('unawaited');
    await waitUntil(async () => (await warningsSince(mark)).some((t) => t.startsWith(`an error escaped every reconcile of the reconciler module ${path}`) && /no-such-widget-anywhere/.test(t)), 'the warning for the unawaited call');
  });

  it('another extension\'s unhandled rejection is not claimed as the module\'s', async () => {
    const mark = (await api()).shownMark();
    // Code outside Reconcile Lab and the module (no frame of either in its stack): as another extension's would be.
    const foreign = new Error('someone else\'s failure');
    foreign.stack = 'Error: someone else\'s failure\n    at other (/somewhere/else/extension.js:1:1)';
    void Promise.reject(foreign);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual((await warningsSince(mark)).filter((t) => t.includes('someone else')), []);
  });
});
