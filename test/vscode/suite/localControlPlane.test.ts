// Start Local Control Plane: the command starts etcd + kube-apiserver on this machine, connects to it, and the
// connection owns it: disconnecting stops every process and removes its files.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import type { ReconcileLab } from '../../../src/host/reconcileLab.ts';
import { lab, labCluster, ok, run, waitUntil } from './support/lab.ts';

function refused(server: string): Promise<boolean> {
  const u = new URL(server);
  return new Promise((resolve) => {
    const s = netConnect({ host: u.hostname, port: Number(u.port) });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

describe('Start Local Control Plane', function () {
  this.timeout(180_000);
  let l: ReconcileLab;

  before(async () => {
    l = await lab();
  });

  it('starts a private control plane, connects to it, and stops it on disconnect', async () => {
    const r = ok(await run<{ kubeconfig: string; server: string; context: string }>('reconcileLab.startLocalControlPlane', { controllerManager: false, resources: ['configmaps'] }));
    assert.notEqual(r.server, labCluster().transport.server, 'a new control plane, not the test cluster');
    assert.ok(existsSync(r.kubeconfig));
    assert.equal(l.session?.server, r.server);
    assert.ok(l.session?.owned, 'the connection owns the control plane');
    assert.deepEqual(l.session?.resources.map((x) => x.id), ['configmaps']);
    ok(await run('reconcileLab.disconnect'));
    await waitUntil(() => refused(r.server), 'the local kube-apiserver is gone');
    assert.equal(existsSync(r.kubeconfig), false, 'its files are removed');
  });
});
