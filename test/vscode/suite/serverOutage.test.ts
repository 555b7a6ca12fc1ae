// The API server going away and coming back while the editor is connected: the status bar says "server unreachable"
// (warning colour) while it is, and stops saying it once the server answers; both moments are written to the output
// once. The outage is a loopback TCP proxy in front of the test cluster that stops listening (connection refused)
// and listens again on the same port, so the shared cluster is not disturbed.
import * as assert from 'node:assert/strict';
import { KubeConfig } from '@kubernetes/client-node';
import { TcpProxy, kubeconfigThrough } from '../../integration/support/tcpProxy.ts';
import { lab, labCluster, ok, run, testNamespace, waitUntil, widgetCrd } from './support/lab.ts';

describe('the API server goes away and comes back', function () {
  this.timeout(120_000);

  it('the status bar says so while it is away, and no longer once it answers', async () => {
    const ns = await testNamespace('ext-outage');
    const c = await widgetCrd();
    const kc = new KubeConfig();
    kc.loadFromFile(labCluster().kubeconfigPath);
    const target = new URL(kc.getCurrentCluster()!.server);
    let proxy = await TcpProxy.start(target.hostname, Number(target.port));
    const through = kubeconfigThrough(labCluster().kubeconfigPath, proxy.port);
    const l = await lab();
    try {
      ok(await run('reconcileLab.connect', { kubeconfig: through.path, namespaces: [ns], resources: [c.resourceId, 'configmaps'], reconcilerResource: c.resourceId, reconcilerKind: 'lab' }));
      assert.doesNotMatch(l.statusBar.text, /server unreachable/);
      const port = proxy.port;
      await proxy.close();
      await waitUntil(() => /server unreachable/.test(l.statusBar.text), 'the status bar says the server is unreachable', 60_000);
      proxy = await TcpProxy.start(target.hostname, Number(target.port), port);
      await waitUntil(() => !/server unreachable/.test(l.statusBar.text), 'the status bar no longer says it once the server answers', 90_000);
      assert.ok(l.session?.resources.every((r) => r.synced), 'the informers are synced again');
    } finally {
      await l.disconnect();
      await proxy.close();
      through.dispose();
    }
  });
});
