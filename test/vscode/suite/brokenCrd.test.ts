// A cluster where one custom resource cannot be listed (its conversion webhook is down: a common leftover of an
// uninstalled operator). Watching every custom resource (the default), the connect must not wait for that informer,
// and the loop must start and reconcile its own resource; the broken resource shows as not synced.
import * as assert from 'node:assert/strict';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { installCrd, uniqueName } from '../../integration/support/cluster.ts';
import { lab, labCluster, ok, run, testNamespace, waitUntil, widget, widgetCrd } from './support/lab.ts';

describe('a custom resource the server cannot list', function () {
  this.timeout(120_000);
  let ns = '';
  const group = `${uniqueName('broken')}.example.org`;
  const crdName = `gadgets.${group}`;

  before(async () => {
    ns = await testNamespace('ext-broken');
    const c = await widgetCrd();
    const { transport, client } = labCluster();
    const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } };
    // v1 stores, v2 is served and preferred: reading v2 needs the webhook, which nothing answers.
    await installCrd(transport, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: crdName },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
        versions: [
          { name: 'v1', served: true, storage: true, schema },
          { name: 'v2', served: true, storage: false, schema },
        ],
        conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://127.0.0.1:1/convert' } } },
      },
    } as KubeObject);
    await transport.json({ method: 'POST', path: `/apis/${group}/v1/namespaces/${ns}/gadgets`, body: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'g' }, spec: { size: 1 } } });
    // The premise: the server cannot list the preferred version.
    await assert.rejects(transport.json({ method: 'GET', path: `/apis/${group}/v2/namespaces/${ns}/gadgets` }), /conversion|webhook/i);
    await client.create(c.gvr, widget(c, ns, 'w'));
  });
  after(async () => {
    await (await lab()).disconnect();
    await labCluster().transport.json({ method: 'DELETE', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}` }).catch(() => undefined);
  });

  it('watching every custom resource, the loop starts and reconciles; the broken resource is shown not synced', async () => {
    const c = await widgetCrd();
    // No resources listed: every custom resource is watched, the broken one too.
    const r = ok(await run<{ resources: string[]; loop: string; loopProblem?: string }>('reconcileLab.connect', {
      kubeconfig: labCluster().kubeconfigPath, namespaces: [ns], resources: [], reconcilerResource: c.resourceId, reconcilerKind: 'lab',
    }));
    assert.ok(r.resources.includes(`gadgets.${group}`), `the broken resource is watched: ${r.resources.join(', ')}`);
    assert.equal(r.loopProblem, undefined);
    assert.equal(r.loop, 'paused', 'the loop started (paused), not stopped after a cache-sync timeout');
    const s = (await lab()).session!;
    const gadgets = s.resources.find((x) => x.id === `gadgets.${group}`)!;
    assert.equal(gadgets.synced, false, 'the broken resource has not synced');
    assert.equal(s.resources.find((x) => x.id === c.resourceId)!.synced, true);
    const step = ok(await run<{ step: { kind: string } }>('reconcileLab.stepReconcile', { key: `${ns}/w`, resource: c.resourceId, force: true }));
    assert.equal(step.step.kind, 'reconciled');
    await waitUntil(async () => (await labCluster().transport.json({ method: 'GET', path: `/api/v1/namespaces/${ns}/configmaps/w-config` }).then(() => true, () => false)), 'the child ConfigMap written');
    // The server streams nothing for the broken resource; after 10 s a one-item LIST names why, for the view.
    let state: unknown;
    await waitUntil(() => {
      state = s.resources.find((x) => x.id === `gadgets.${group}`)!.state;
      const st = state as { phase: string; stalled?: { listError: string } };
      return st.phase === 'backoff' || st.stalled !== undefined;
    }, 'the broken resource diagnosed', 40_000);
    assert.match(JSON.stringify(state), /conversion webhook/, JSON.stringify(state));
  });
});
