// Edit as YAML → Apply to Cluster: what the person is told after an apply, and that status edits are not applied
// where status is a subresource (the update of the object ignores it). The server is a fake here; the real
// kube-apiserver's behaviour is in test/integration/editObject.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEdit, describeApplied, editableYaml, STATUS_NOTE } from '../../../src/core/actions/editObject.ts';
import type { KubeClient } from '../../../src/core/k8s/client.ts';
import type { GroupVersionResource, KubeObject } from '../../../src/core/k8s/objects.ts';

const GADGETS: GroupVersionResource = { group: 'lab.example.com', version: 'v1', resource: 'gadgets' };

/** A server whose update writes the object but keeps the stored status (a status subresource), or takes it too. */
function fakeServer(stored: KubeObject, o: { statusSubresource: boolean }): KubeClient {
  let current = structuredClone(stored);
  return {
    update: async (_gvr: GroupVersionResource, obj: KubeObject) => {
      const next = structuredClone(obj) as KubeObject & { status?: unknown };
      if (o.statusSubresource) next.status = structuredClone((current as { status?: unknown }).status);
      const changed = JSON.stringify({ ...next, metadata: { ...next.metadata, resourceVersion: '' } }) !== JSON.stringify({ ...current, metadata: { ...current.metadata, resourceVersion: '' } });
      current = { ...next, metadata: { ...next.metadata, resourceVersion: changed ? String(Number(current.metadata.resourceVersion) + 1) : current.metadata.resourceVersion } } as KubeObject;
      return structuredClone(current);
    },
  } as unknown as KubeClient;
}

const gadget = (): KubeObject => ({
  apiVersion: 'lab.example.com/v1',
  kind: 'Gadget',
  metadata: { name: 'g', namespace: 'ns', resourceVersion: '41' },
  spec: { color: 'blue' },
  status: { phase: 'Ready' },
} as KubeObject);

test('editableYaml says up front that status is for reference, only when the object has one', () => {
  assert.ok(editableYaml(gadget()).split('\n').includes(STATUS_NOTE));
  const { status: _ignored, ...noStatus } = gadget() as KubeObject & { status?: unknown };
  assert.ok(!editableYaml(noStatus as KubeObject).includes(STATUS_NOTE));
  assert.ok(!editableYaml({ ...noStatus, status: {} } as KubeObject).includes(STATUS_NOTE));
});

test('describeApplied names the object and its new resourceVersion; an unchanged text says nothing was written', async () => {
  const base = gadget();
  const client = fakeServer(base, { statusSubresource: true });
  const r = await applyEdit({ client, gvr: GADGETS, base, text: editableYaml(base).replace('color: blue', 'color: green') });
  assert.equal(r.kind, 'applied');
  assert.ok(r.kind === 'applied');
  assert.equal(r.statusNotApplied, undefined);
  assert.deepEqual(describeApplied(r, r.object), { level: 'info', message: 'Applied to Gadget ns/g: now at resourceVersion 42 (was 41).' });

  const same = await applyEdit({ client, gvr: GADGETS, base: r.object, text: editableYaml(r.object) });
  assert.deepEqual(same, { kind: 'unchanged' });
  assert.deepEqual(describeApplied(same, r.object), { level: 'info', message: 'Nothing changed: your text is Gadget ns/g as opened (resourceVersion 42), so nothing was written.' });
  assert.equal(describeApplied({ kind: 'gone', message: 'x' }, base), undefined);
});

test('a status edit that the update ignores (status subresource) is reported, with or without other changes; a status the server takes is not', async () => {
  // Status only: the server stores nothing new.
  const base = gadget();
  const only = await applyEdit({ client: fakeServer(base, { statusSubresource: true }), gvr: GADGETS, base, text: editableYaml(base).replace('phase: Ready', 'phase: Broken') });
  assert.ok(only.kind === 'applied');
  assert.equal(only.statusNotApplied, true);
  assert.deepEqual((only.object as { status?: unknown }).status, { phase: 'Ready' });
  const said = describeApplied(only, only.object)!;
  assert.equal(said.level, 'warning');
  assert.equal(
    said.message,
    "Applied to Gadget ns/g, but the server stored nothing new: still resourceVersion 41. Your status edits were not applied: status is a subresource of Gadget, written through /status (by its controller), and an update of the object ignores it. The editor shows the server's status.",
  );

  // Spec and status: the spec is applied, the status edit is reported as ignored.
  const both = await applyEdit({ client: fakeServer(base, { statusSubresource: true }), gvr: GADGETS, base, text: editableYaml(base).replace('color: blue', 'color: green').replace('phase: Ready', 'phase: Broken') });
  assert.ok(both.kind === 'applied');
  assert.equal(both.statusNotApplied, true);
  assert.match(describeApplied(both, both.object)!.message, /^Applied to Gadget ns\/g: now at resourceVersion 42 \(was 41\)\. Your status edits were not applied: status is a subresource of Gadget/);

  // Removing the status block is a status edit too.
  const removed = await applyEdit({ client: fakeServer(base, { statusSubresource: true }), gvr: GADGETS, base, text: editableYaml(base).replace('status:\n  phase: Ready\n', '') });
  assert.ok(removed.kind === 'applied' && removed.statusNotApplied === true, JSON.stringify(removed));

  // No status subresource (status is part of the object): the edit is stored, nothing to warn about.
  const taken = await applyEdit({ client: fakeServer(base, { statusSubresource: false }), gvr: GADGETS, base, text: editableYaml(base).replace('phase: Ready', 'phase: Broken') });
  assert.ok(taken.kind === 'applied');
  assert.equal(taken.statusNotApplied, undefined);
  assert.equal(describeApplied(taken, taken.object)!.level, 'info');
});
