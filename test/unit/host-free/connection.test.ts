import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveKubeconfigSource, shouldAutoConnect } from '../../../src/host/connection/kubeconfigSource.ts';

describe('resolveKubeconfigSource', () => {
  const env = { RECONCILE_LAB_KUBECONFIG: '/tmp/lab.kubeconfig', KUBECONFIG: '/a:/b' };
  it('prefers an explicit argument, then the setting, then RECONCILE_LAB_KUBECONFIG, then the kubectl default', () => {
    assert.equal(resolveKubeconfigSource('/x', '/y', env).path, '/x');
    assert.deepEqual(resolveKubeconfigSource(undefined, '/y', env), { path: '/y', origin: 'setting', description: '/y' });
    assert.equal(resolveKubeconfigSource('  ', '', env).origin, 'env');
    assert.equal(resolveKubeconfigSource(undefined, '', env).path, '/tmp/lab.kubeconfig');
    const d = resolveKubeconfigSource(undefined, '', { KUBECONFIG: '/a:/b' });
    assert.equal(d.path, undefined);
    assert.equal(d.origin, 'default');
    assert.equal(d.description, 'KUBECONFIG=/a:/b');
  });
  it('expands ~/ in paths given by people', () => {
    assert.equal(resolveKubeconfigSource(undefined, '~/k/config', {}, '/home/me').path, '/home/me/k/config');
    assert.equal(resolveKubeconfigSource(undefined, '', {}, '/home/me').description, '/home/me/.kube/config');
  });
});

describe('shouldAutoConnect', () => {
  it('connects when the setting asks or RECONCILE_LAB_KUBECONFIG is set', () => {
    assert.equal(shouldAutoConnect(false, {}), false);
    assert.equal(shouldAutoConnect(true, {}), true);
    assert.equal(shouldAutoConnect(false, { RECONCILE_LAB_KUBECONFIG: '/k' }), true);
    assert.equal(shouldAutoConnect(false, { RECONCILE_LAB_KUBECONFIG: ' ' }), false);
  });
});
