import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { getTestCluster, type TestCluster } from './support/cluster.ts';
import { client as makeClient } from './reconcilers.support.ts';
import type { DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import { CONFIGMAPS, createScratchNamespace, SCRATCH_LABEL, type HarnessEnv } from '../../src/core/checks/harness.ts';
import { cleanupLeftovers, localProcessProbe, ownerAnnotation, SCRATCH_OWNER_ANNOTATION, type ScratchOwner } from '../../src/core/checks/leftovers.ts';
import type { KubeObject } from '../../src/core/k8s/objects.ts';

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };
const FINALIZER = 'lab.reconcile.dev/test-hold';

/** A pid that existed and is gone: a child process started and killed. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], { stdio: 'ignore' });
  const pid = child.pid!;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  return pid;
}

describe('check: scratch namespaces left by a killed check are removed by a later one (never a live run\'s)', () => {
  let cluster: TestCluster;
  let c: DynamicKubeClient;
  const made: string[] = [];

  before(async () => {
    cluster = await getTestCluster();
    c = makeClient(cluster.transport);
  });

  after(async () => {
    for (const ns of made) {
      for (const cm of (await c.list(CONFIGMAPS, ns).catch(() => ({ items: [] as KubeObject[] }))).items) {
        if (cm.metadata.finalizers?.length) await c.patch(CONFIGMAPS, ns, cm.metadata.name!, 'merge', { metadata: { finalizers: null } }).catch(() => {});
      }
      await c.delete(NAMESPACES, undefined, ns).catch(() => {});
    }
  });

  /** A scratch namespace as a check makes it, owned by `owner`, holding a ConfigMap with a finalizer. */
  async function scratchOf(tag: string, owner: ScratchOwner | string): Promise<string> {
    const name = `rl-check-t${tag}-${randomBytes(3).toString('hex')}`;
    made.push(name);
    const annotation = typeof owner === 'string' ? owner : JSON.stringify(owner);
    await c.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [SCRATCH_LABEL]: 'true' }, annotations: { [SCRATCH_OWNER_ANNOTATION]: annotation } } });
    await c.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: name, finalizers: [FINALIZER] }, data: { a: '1' } });
    return name;
  }

  test('a dead owner on this machine (and a reused pid) is cleaned: finalizers stripped, objects and namespace deleted; a live owner and another machine\'s are kept', async () => {
    const self = localProcessProbe.self();
    const stale = await scratchOf('dead', { host: self.host, pid: await deadPid(), start: self.start });
    const live = await scratchOf('live', ownerAnnotation());
    const elsewhere = await scratchOf('other', { host: `not-${self.host}`, pid: await deadPid(), start: 'proc:1' });
    // This pid is alive, but started at another time: a reused pid, not the owner. Only knowable with /proc.
    const reused = existsSync('/proc/self/stat') ? await scratchOf('reused', { host: self.host, pid: process.pid, start: 'proc:1' }) : undefined;

    const r = await cleanupLeftovers({ client: c, primary: { ...CONFIGMAPS }, resources: [CONFIGMAPS] });

    assert.ok(r.removed.includes(stale), `removed ${r.removed.join(', ')}`);
    if (reused) assert.ok(r.removed.includes(reused), `removed ${r.removed.join(', ')}`);
    assert.ok(!r.removed.includes(live), 'a live run is never touched');
    assert.ok(!r.removed.includes(elsewhere), "another machine's run is never touched (it may be alive)");
    assert.deepEqual(r.notes, []);
    assert.match(r.message ?? '', new RegExp(`^Removed \\d+ scratch namespace\\(s\\) \\([^)]*${stale}[^)]*\\) left by an earlier check on this machine that was killed before it could clean up\\.$`));

    for (const ns of [stale, ...(reused ? [reused] : [])]) {
      await assert.rejects(c.get(CONFIGMAPS, ns, 'held'), (e: { code?: number }) => e.code === 404, `the held ConfigMap in ${ns} is deleted (its finalizer stripped)`);
      const gone = await c.get(NAMESPACES, undefined, ns).then((n) => n.metadata.deletionTimestamp !== undefined, (e: { code?: number }) => e.code === 404);
      assert.ok(gone, `${ns} is deleted or being deleted`);
    }
    for (const ns of [live, elsewhere]) {
      const cm = await c.get(CONFIGMAPS, ns, 'held');
      assert.deepEqual(cm.metadata.finalizers, [FINALIZER], `${ns}: untouched`);
      assert.equal((await c.get(NAMESPACES, undefined, ns)).metadata.deletionTimestamp, undefined);
    }

    // Nothing of ours is left over any more: a second pass removes nothing it had not (and says nothing of ours).
    const again = await cleanupLeftovers({ client: c, primary: { ...CONFIGMAPS }, resources: [CONFIGMAPS] });
    assert.ok(!again.removed.some((n) => [live, elsewhere, stale].includes(n)));
  });

  test('a check records its process on every scratch namespace it makes, so a later check can tell', async () => {
    const ns = await createScratchNamespace({ client: c, signal: AbortSignal.timeout(10_000) } as unknown as HarnessEnv, 'test');
    made.push(ns);
    const got = await c.get(NAMESPACES, undefined, ns);
    assert.equal(got.metadata.labels?.[SCRATCH_LABEL], 'true');
    const owner = JSON.parse(got.metadata.annotations?.[SCRATCH_OWNER_ANNOTATION] ?? '{}') as ScratchOwner;
    assert.deepEqual(owner, localProcessProbe.self());
    assert.equal(localProcessProbe.isAlive(owner.pid, owner.start), true);
    const r = await cleanupLeftovers({ client: c, primary: { ...CONFIGMAPS }, resources: [CONFIGMAPS] });
    assert.ok(!r.removed.includes(ns), 'the running check\'s own namespace is kept');
  });
});
