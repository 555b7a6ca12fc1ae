// UI test: the escape hatch never clobbers a change made while its confirmation is open, and says what to do next.
//
// Setup: a CRD of a new user's own (Bucket, group storage.walk.example, with a status subresource; not the lab's
// Widget), a namespace of this test's own, and one Bucket deleted while it carries the finalizer
// storage.walk.example/cleanup of a controller that is not running: it stays Terminating.
// Checks: Strip Finalizers… from the Bucket's row asks in a modal naming the object, the finalizer and the
// resourceVersion it read; the object is changed (another client's write) while the modal is open; confirming then
// removes nothing, and the warning says so and offers Strip Finalizers Again… ("refresh and retry" named nothing to
// click in the editor), which reads the object afresh: its modal names the new resourceVersion, and confirming that
// one releases the Bucket.
// Screenshot: test-output/screenshots/strip-race.png.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { clusterClient, writeWorkspaceSettings } from './support/cluster.mjs';
import { activityTab, contextMenu, eventually, openViewContainer, openViewPane, openWorkbench, resizeSideBar, treeItem, viewTree } from './support/workbench.mjs';

const GROUP = 'storage.walk.example';
const VERSION = 'v1alpha1';
const FINALIZER = `${GROUP}/cleanup`;

export default async function stripFinalizersRaceUi(t) {
  const { page } = t;
  const ns = `sr-${randomBytes(3).toString('hex')}`;
  const name = 'stuck-bucket';
  const kube = await clusterClient(t);
  const path = `/apis/${GROUP}/${VERSION}/namespaces/${ns}/buckets/${name}`;
  const dialog = page.locator('.monaco-dialog-box');
  const toast = page.locator('.notification-toast', { hasText: 'changed since it was read' });

  await t.step('setup: a Bucket CRD of its own and a Bucket stuck Terminating on a finalizer nobody removes', async () => {
    try {
      await kube.json({
        method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: {
          apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `buckets.${GROUP}` },
          spec: {
            group: GROUP, scope: 'Namespaced', names: { plural: 'buckets', singular: 'bucket', kind: 'Bucket' },
            versions: [{ name: VERSION, served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
          },
        },
      });
    } catch (e) {
      if (e.code !== 409) throw e;
    }
    await eventually('the Bucket CRD to be established', () => kube.json({ method: 'GET', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/buckets.${GROUP}` }),
      (c) => (c.status?.conditions ?? []).some((x) => x.type === 'Established' && x.status === 'True'));
    await kube.json({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
    await kube.json({
      method: 'POST', path: `/apis/${GROUP}/${VERSION}/namespaces/${ns}/buckets`,
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Bucket', metadata: { name, namespace: ns, finalizers: [FINALIZER] }, spec: { region: 'eu-west-1' } },
    });
    await kube.json({ method: 'DELETE', path });
    writeWorkspaceSettings(t, { 'reconcileLab.namespaces': [ns], 'reconcileLab.resources': [`buckets.${GROUP}`] });
  });

  try {
    let tree;
    await t.step('the Resources view shows the Bucket', async () => {
      await openWorkbench(page, t.url);
      await activityTab(page, 'Reconcile Lab').waitFor({ state: 'visible', timeout: 120_000 });
      const container = await openViewContainer(page, 'reconcileLab', 'Reconcile Lab');
      tree = viewTree(await openViewPane(container, 'Resources'));
      await tree.waitFor({ state: 'visible', timeout: 180_000 });
      await resizeSideBar(page, 560);
      await eventually('the Bucket row', async () => {
        for (const item of await tree.locator('[role="treeitem"][aria-expanded="false"]').all()) await item.locator('.monaco-tl-twistie').click().catch(() => {});
        return tree.locator('.label-name', { hasText: name }).count();
      }, (n) => n > 0, { timeoutMs: 120_000, intervalMs: 1000 });
    });

    await t.step('a change made while the confirmation is open is not overwritten; the warning offers Strip Finalizers Again…', async () => {
      const seen = await kube.json({ method: 'GET', path });
      await contextMenu(await treeItem(tree, name), 'Strip Finalizers…');
      await dialog.waitFor({ state: 'visible' });
      const asked = await eventually('the modal', () => dialog.textContent(), (s) => (s ?? '').includes(FINALIZER));
      assert.ok(asked.includes(`Bucket ${ns}/${name}`), asked);
      assert.ok(asked.includes(`resourceVersion ${seen.metadata.resourceVersion}`), asked);
      // Another client writes the object while the person reads the dialog.
      await kube.json({ method: 'PATCH', path, contentType: 'application/merge-patch+json', body: { metadata: { annotations: { 'storage.walk.example/touched': 'meanwhile' } } } });
      await dialog.getByRole('button', { name: 'Remove Finalizer' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await toast.waitFor({ state: 'visible' });
      await t.screenshot('strip-race');
      const now = await kube.json({ method: 'GET', path });
      assert.deepEqual(now.metadata.finalizers, [FINALIZER], 'nothing was removed');
      assert.equal(now.metadata.annotations?.['storage.walk.example/touched'], 'meanwhile', 'the concurrent change stands');
      assert.match(await toast.textContent(), /nothing was removed/);
      await toast.getByRole('button', { name: 'Strip Finalizers Again…' }).waitFor({ state: 'visible' });
    });

    await t.step('Strip Finalizers Again… reads the object afresh and asks with its new resourceVersion; confirming releases it', async () => {
      const current = await kube.json({ method: 'GET', path });
      await toast.getByRole('button', { name: 'Strip Finalizers Again…' }).click();
      await dialog.waitFor({ state: 'visible' });
      const asked = await eventually('the modal', () => dialog.textContent(), (s) => (s ?? '').includes(FINALIZER));
      assert.ok(asked.includes(`resourceVersion ${current.metadata.resourceVersion}`), asked);
      await dialog.getByRole('button', { name: 'Remove Finalizer' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await eventually('the Bucket to be gone', () => kube.json({ method: 'GET', path }).then(() => 'still there', (e) => e.code), (c) => c === 404);
    });
  } finally {
    await kube.json({ method: 'PATCH', path, contentType: 'application/merge-patch+json', body: { metadata: { finalizers: null } } }).catch(() => {});
    await kube.json({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  }
}
