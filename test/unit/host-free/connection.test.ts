import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectChoices, withSettingHint, CONNECT_BROWSE, CONNECT_LOCAL, resolveKubeconfigSource, shouldAutoConnect, shouldShowViewsOnStart } from '../../../src/host/connection/kubeconfigSource.ts';
import { listKubeContexts } from '../../../src/host/connection/kubeContexts.ts';
import { defaultKubeconfigFiles, KubeConfigError } from '../../../src/core/k8s/kubeconfig.ts';

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
  it('a kubeconfig chosen earlier (remembered across reloads) comes after RECONCILE_LAB_KUBECONFIG and before the kubectl default', () => {
    assert.equal(resolveKubeconfigSource(undefined, '', env, '~', '/chosen').origin, 'env', 'a launch that names its cluster wins');
    assert.deepEqual(resolveKubeconfigSource(undefined, '', { KUBECONFIG: '/a' }, '~', '/chosen'), { path: '/chosen', origin: 'remembered', description: '/chosen (chosen earlier)' });
    assert.equal(resolveKubeconfigSource(undefined, '/y', {}, '~', '/chosen').path, '/y', 'the setting wins');
    assert.equal(resolveKubeconfigSource(undefined, '', {}, '~', undefined).origin, 'default');
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

describe('Connect picker without a kubeconfig', () => {
  it('lists no phantom context when no kubeconfig file exists (client-node would invent loaded-context @ localhost:8080)', () => {
    const home = mkdtempSync(join(tmpdir(), 'rl-nokc-'));
    const saved = { HOME: process.env.HOME, KUBECONFIG: process.env.KUBECONFIG };
    try {
      process.env.HOME = home;
      delete process.env.KUBECONFIG;
      assert.deepEqual(defaultKubeconfigFiles(process.env), []);
      assert.deepEqual(listKubeContexts(undefined), []);
      process.env.KUBECONFIG = join(home, 'missing-a') + ':' + join(home, 'missing-b');
      assert.deepEqual(listKubeContexts(undefined), [], 'KUBECONFIG naming files that do not exist');
      writeFileSync(join(home, 'real'), 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://x:6443"}}]\ncontexts: [{name: real, context: {cluster: c, user: u}}]\ncurrent-context: real\nusers: [{name: u, user: {}}]\n');
      process.env.KUBECONFIG += ':' + join(home, 'real');
      assert.deepEqual(listKubeContexts(undefined).map((c) => c.name), ['real']);
    } finally {
      if (saved.HOME === undefined) delete process.env.HOME;
      else process.env.HOME = saved.HOME;
      if (saved.KUBECONFIG === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved.KUBECONFIG;
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('with no contexts: says so, and offers exactly "Choose a Kubeconfig File…" and "Start Local Control Plane"', () => {
    const m = connectChoices([], { origin: 'default', description: '/home/me/.kube/config' });
    assert.equal(m.empty, true);
    assert.equal(m.message, 'No kubeconfig contexts found: /home/me/.kube/config does not exist. Choose a kubeconfig file, or start a local control plane.');
    assert.deepEqual(m.items.map((i) => i.value), [CONNECT_LOCAL, CONNECT_BROWSE]);
    assert.doesNotMatch(m.message + JSON.stringify(m.items), /localhost:8080|loaded-context|--kubeconfig/);
  });

  it('a missing file named by the setting: says it does not exist and that the setting names it', () => {
    const m = connectChoices([], { origin: 'setting', path: '/tmp/gone.yaml', description: '/tmp/gone.yaml' }, true);
    assert.equal(m.empty, true);
    assert.equal(
      m.message,
      'No kubeconfig contexts found: /tmp/gone.yaml (the setting reconcileLab.connection.kubeconfig) does not exist. Choose a kubeconfig file, change or clear the setting reconcileLab.connection.kubeconfig, or start a local control plane.',
    );
    assert.match(connectChoices([], { origin: 'remembered', path: '/k', description: '/k (chosen earlier)' }).message, /\/k \(chosen earlier\) has no contexts\. Choose a kubeconfig file, or start a local control plane\.$/);
  });

  it('withSettingHint: names the setting of the file, or of the context; keeps the problem; leaves other errors alone', () => {
    const fromSetting = { origin: 'setting', path: '/x', description: '/x' } as const;
    const a = withSettingHint(new KubeConfigError('The kubeconfig file /x does not exist.', { problem: 'noKubeconfig' }), fromSetting) as KubeConfigError;
    assert.equal(a.message, 'The kubeconfig file /x does not exist. The file is the setting reconcileLab.connection.kubeconfig: change or clear it.');
    assert.equal(a.problem, 'noKubeconfig');
    const b = withSettingHint(new KubeConfigError('… choose one of them.', { problem: 'noContext' }), { origin: 'argument', path: '/x', description: '/x' }) as KubeConfigError;
    assert.equal(b.message, '… choose one of them. Connect lists them; the setting reconcileLab.connection.context keeps the one to use.');
    assert.equal(b.problem, 'noContext');
    const other = new Error('boom');
    assert.equal(withSettingHint(other, fromSetting), other);
    const plain = new KubeConfigError('The kubeconfig file /x does not exist.', { problem: 'noKubeconfig' });
    assert.equal(withSettingHint(plain, { origin: 'argument', path: '/x', description: '/x' }), plain);
  });

  it('with contexts: real ones only, the current one first, then the two actions', () => {
    const m = connectChoices(
      [
        { name: 'b', current: false, server: 'https://b:6443', user: 'u' },
        { name: 'a', current: true, server: 'https://a:6443', user: 'u', execCommand: 'kubelogin' },
      ],
      { origin: 'remembered', path: '/k', description: '/k (chosen earlier)' },
    );
    assert.equal(m.empty, false);
    assert.equal(m.title, 'Connect: contexts of /k (chosen earlier)');
    assert.deepEqual(m.items.map((i) => i.value), ['a', 'b', '', CONNECT_LOCAL, CONNECT_BROWSE]);
    assert.match(m.items[0]!.detail!, /exec plugin: kubelogin/);
  });
});

describe('shouldShowViewsOnStart', () => {
  it('only when npm run lab asks for it (RECONCILE_LAB_SHOW_VIEWS=1)', () => {
    assert.equal(shouldShowViewsOnStart({}), false);
    assert.equal(shouldShowViewsOnStart({ RECONCILE_LAB_SHOW_VIEWS: '0' }), false);
    assert.equal(shouldShowViewsOnStart({ RECONCILE_LAB_SHOW_VIEWS: '1' }), true);
  });
});
